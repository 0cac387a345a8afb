package e2e_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/entrypoint"
)

// tools maps the command-line tools beside the five binaries to their
// main packages.
var tools = map[string]string{
	"search-index": "github.com/groundcrew/groundcrew/services/search/cmd/search-index",
	"rag-ingest":   "github.com/groundcrew/groundcrew/services/rag/cmd/rag-ingest",
}

// TestEveryBinaryCommandLine builds the five binaries and the two tools
// and holds what each answers before it starts anything: -h and --help
// print what it is and every variable it reads with its default and a
// meaning from the configuration reference, and exit 0; --version prints
// the version and commit; a service's --print-config prints its whole
// configuration; an unknown flag exits 2. None of these creates a
// file under DATA_DIR or stays running (each must exit within the
// command's deadline; a service that started would listen until killed).
func TestEveryBinaryCommandLine(t *testing.T) {
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	all := map[string]string{}
	for name, pkg := range binaries {
		all[name] = pkg
	}
	for name, pkg := range tools {
		all[name] = pkg
	}
	for _, pkg := range all {
		args = append(args, pkg)
	}
	build := exec.CommandContext(t.Context(), "go", args...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}

	variableLine := regexp.MustCompile(`^  ([A-Z][A-Z0-9_]+) \(default: .+\)$`)
	for name := range all {
		t.Run(name, func(t *testing.T) {
			for _, flag := range []string{"-h", "--help"} {
				out, code := runBinary(t, filepath.Join(bin, name), flag)
				if code != entrypoint.ExitOK {
					t.Errorf("%s %s exited %d, want 0:\n%s", name, flag, code, out)
				}
				if !strings.HasPrefix(out, name+" — ") {
					t.Errorf("%s %s does not start with what it is (%q):\n%s", name, flag, name+" — ", out)
				}
				lines := strings.Split(out, "\n")
				vars := 0
				for i, line := range lines {
					m := variableLine.FindStringSubmatch(line)
					if m == nil {
						continue
					}
					vars++
					if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "      ") || strings.Contains(lines[i+1], "not in the configuration reference") {
						t.Errorf("%s --help: %s has no meaning; add it to docs/configuration.md and platform/config/variables.md", name, m[1])
					}
				}
				if vars == 0 {
					t.Errorf("%s %s lists no environment variables:\n%s", name, flag, out)
				}
			}

			out, code := runBinary(t, filepath.Join(bin, name), "--version")
			if code != entrypoint.ExitOK || !strings.HasPrefix(out, name+" ") || !strings.Contains(out, "(commit ") {
				t.Errorf("%s --version = %d, %q; want 0 and the version and commit", name, code, out)
			}

			if _, service := binaries[name]; service {
				out, code := runBinary(t, filepath.Join(bin, name), "--print-config")
				if code != entrypoint.ExitOK || !strings.Contains(out, "GRACE_PERIOD=10s\n") {
					t.Errorf("%s --print-config = %d, want 0 and every variable:\n%s", name, code, out)
				}
			}

			out, code = runBinary(t, filepath.Join(bin, name), "--no-such-flag")
			if code != entrypoint.ExitConfig {
				t.Errorf("%s --no-such-flag exited %d, want 2:\n%s", name, code, out)
			}
			if !strings.Contains(out, "--help") {
				t.Errorf("%s --no-such-flag does not point at --help:\n%s", name, out)
			}
		})
	}
}

// runBinary runs path with one argument and a fresh, empty DATA_DIR, and
// returns its combined output and exit code. It fails the test when the
// binary wrote anything under DATA_DIR or did not exit within 20 s.
func runBinary(t *testing.T, path, arg string) (string, int) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, path, arg)
	cmd.Env = append(os.Environ(), "DATA_DIR="+data, "LOG_FORMAT=text")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s did not exit (it started?):\n%s", filepath.Base(path), arg, out.String())
	}
	code := 0
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		code = exit.ExitCode()
	case err != nil:
		t.Fatalf("running %s %s: %v", filepath.Base(path), arg, err)
	}
	if entries, err := os.ReadDir(data); err != nil || len(entries) > 0 {
		t.Errorf("%s %s created %v under DATA_DIR (err %v)", filepath.Base(path), arg, entries, err)
	}
	return out.String(), code
}
