package sqlstore

import (
	"log/slog"
	"os"
	"path/filepath"
	"testing"
)

// TestSQLiteFilesPrivate: a new DATA_DIR is 0700 and the database and its
// WAL files are 0600.
func TestSQLiteFilesPrivate(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	db, err := Open(t.Context(), "", dir, "perm", slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.ExecContext(t.Context(), `CREATE TABLE t (x INTEGER)`); err != nil {
		t.Fatal(err)
	}
	want := map[string]os.FileMode{dir: 0o700, filepath.Join(dir, "perm.db"): 0o600, filepath.Join(dir, "perm.db-wal"): 0o600}
	for p, mode := range want {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().Perm() != mode {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), mode)
		}
	}
}
