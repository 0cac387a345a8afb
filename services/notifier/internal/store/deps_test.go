package store

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/chat"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
)

// The store implements the interfaces its consumers declare.
var (
	_ outbound.Store    = (*Store)(nil)
	_ approval.Messages = (*Store)(nil)
	_ chat.Store        = (*Store)(nil)
)

// TestStoreImportsNoDomainLogic holds the layering: the store sits below
// the domain, so of the notifier's own packages it imports only the
// types-only ones (alert, message); chat, approval, outbound, pipeline,
// format, telegram and oncall* declare what they need of it instead.
func TestStoreImportsNoDomainLogic(t *testing.T) {
	const own = "github.com/groundcrew/groundcrew/services/notifier/"
	allowed := []string{own + "internal/alert", own + "internal/message"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(fset, name, nil, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			if strings.HasPrefix(path, own) && !slices.Contains(allowed, path) {
				t.Errorf("%s imports %s; the store may import only %v of the notifier's packages", name, path, allowed)
			}
		}
	}
	if checked == 0 {
		t.Fatal("no source file checked")
	}
}
