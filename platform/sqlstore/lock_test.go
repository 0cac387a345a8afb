package sqlstore_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

func TestWithLockOnSQLiteRunsFn(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), "", t.TempDir(), "locks", discard)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	want := errors.New("from fn")
	if err := db.WithLock(t.Context(), "x", func(context.Context) error { return want }); !errors.Is(err, want) {
		t.Errorf("WithLock = %v, want fn's error", err)
	}
}

// TestWithLockExcludes holds the lock in one process-like pool and checks,
// through pg_locks rather than timing, that another pool's WithLock is
// waiting and has not run its fn; it runs once the first is done.
func TestWithLockExcludes(t *testing.T) {
	url := sqlstoretest.PostgresURL(t, "sqlstore_lock")
	open := func(name string) *sqlstore.DB {
		db, err := sqlstore.Open(t.Context(), url, "", name, discard)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		return db
	}
	a, b := open("a"), open("b")
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()

	release := make(chan struct{})
	aIn := make(chan struct{})
	aDone := make(chan error, 1)
	go func() {
		aDone <- a.WithLock(ctx, "shared", func(context.Context) error {
			close(aIn)
			<-release
			return nil
		})
	}()
	<-aIn
	bRan := make(chan struct{})
	bDone := make(chan error, 1)
	go func() {
		bDone <- b.WithLock(ctx, "shared", func(context.Context) error { close(bRan); return nil })
	}()
	// Wait until PostgreSQL shows b's session waiting for an advisory lock.
	for {
		var waiting int
		if err := a.QueryRowContext(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted").Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		select {
		case <-bRan:
			t.Fatal("the second holder ran while the first held the lock")
		case <-ctx.Done():
			t.Fatal("the second WithLock never waited for the lock")
		case <-time.After(10 * time.Millisecond):
		}
	}
	select {
	case <-bRan:
		t.Fatal("the second holder ran while the first held the lock")
	default:
	}
	close(release)
	if err := <-aDone; err != nil {
		t.Fatalf("first WithLock: %v", err)
	}
	if err := <-bDone; err != nil {
		t.Fatalf("second WithLock: %v", err)
	}
	// A different name does not wait for "shared".
	if err := a.WithLock(ctx, "other", func(context.Context) error { return nil }); err != nil {
		t.Fatal(err)
	}
}
