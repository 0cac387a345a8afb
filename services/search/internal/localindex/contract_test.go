package localindex_test

import (
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/search/internal/indextest"
	"github.com/groundcrew/groundcrew/services/search/internal/localindex"
)

// TestContract runs the local index contract on the bleve index.
func TestContract(t *testing.T) {
	indextest.Run(t, func(t *testing.T, now func() time.Time) indextest.Index {
		ix, err := localindex.Open(t.TempDir(), localindex.Options{Now: now})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = ix.Close() })
		return ix
	})
}
