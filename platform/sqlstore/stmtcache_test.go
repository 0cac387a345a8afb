package sqlstore

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"path/filepath"
	"sync"
	"testing"

	"modernc.org/sqlite"
)

// counting sits between the cache and modernc's connections and counts
// prepares and statement closes by SQL.
type counting struct {
	base driver.Connector

	mu       sync.Mutex
	prepares map[string]int
	closes   map[string]int
}

func (c *counting) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &countingConn{Conn: conn, c: c}, nil
}

func (c *counting) Driver() driver.Driver { return c.base.Driver() }

func (c *counting) counts(query string) (prepares, closes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.prepares[query], c.closes[query]
}

type countingConn struct {
	driver.Conn
	c *counting
}

func (cc *countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	st, err := cc.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cc.c.mu.Lock()
	cc.c.prepares[query]++
	cc.c.mu.Unlock()
	return &countingStmt{Stmt: st, query: query, c: cc.c}, nil
}

func (cc *countingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	return cc.Conn.(driver.QueryerContext).QueryContext(ctx, query, args)
}

func (cc *countingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	return cc.Conn.(driver.ExecerContext).ExecContext(ctx, query, args)
}

func (cc *countingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	return cc.Conn.(driver.ConnBeginTx).BeginTx(ctx, opts)
}

type countingStmt struct {
	driver.Stmt
	query string
	c     *counting
}

func (s *countingStmt) Close() error {
	s.c.mu.Lock()
	s.c.closes[s.query]++
	s.c.mu.Unlock()
	return s.Stmt.Close()
}

func (s *countingStmt) QueryContext(ctx context.Context, args []driver.NamedValue) (driver.Rows, error) {
	return s.Stmt.(driver.StmtQueryContext).QueryContext(ctx, args)
}

func (s *countingStmt) ExecContext(ctx context.Context, args []driver.NamedValue) (driver.Result, error) {
	return s.Stmt.(driver.StmtExecContext).ExecContext(ctx, args)
}

// openCounted opens a one-connection SQLite database behind a cache of
// size statements.
func openCounted(t testing.TB, size int) (*sql.DB, *counting) {
	t.Helper()
	base, err := sqlite.NewConnector(filepath.Join(t.TempDir(), "cache.db") + "?_pragma=journal_mode(WAL)")
	if err != nil {
		t.Fatal(err)
	}
	c := &counting{base: base, prepares: map[string]int{}, closes: map[string]int{}}
	db := sql.OpenDB(&cachingConnector{base: c, size: size})
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { _ = db.Close() })
	if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
		t.Fatal(err)
	}
	return db, c
}

const (
	insertT = "INSERT INTO t (v) VALUES (?)"
	selectT = "SELECT id, v FROM t ORDER BY id"
	countT  = "SELECT count(*) FROM t WHERE v = ?"
)

func TestStmtCachePreparesOnce(t *testing.T) {
	db, c := openCounted(t, 8)
	for i := range 50 {
		if _, err := db.Exec(insertT, string(rune('a'+i%26))); err != nil {
			t.Fatal(err)
		}
	}
	for range 20 {
		var n int
		if err := db.QueryRow(countT, "a").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n != 2 {
			t.Fatalf("count = %d, want 2", n)
		}
	}
	if p, _ := c.counts(insertT); p != 1 {
		t.Errorf("insert prepared %d times for 50 runs, want 1", p)
	}
	if p, _ := c.counts(countT); p != 1 {
		t.Errorf("count prepared %d times for 20 runs, want 1", p)
	}
}

// TestStmtCacheSameQueryWhileRowsOpen runs a query again while its first
// rows are still being read: the second run must not reset the first.
func TestStmtCacheSameQueryWhileRowsOpen(t *testing.T) {
	db, _ := openCounted(t, 8)
	for _, v := range []string{"x", "y", "z"} {
		if _, err := db.Exec(insertT, v); err != nil {
			t.Fatal(err)
		}
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	outer, err := tx.Query(selectT)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for outer.Next() {
		var id int
		var v string
		if err := outer.Scan(&id, &v); err != nil {
			t.Fatal(err)
		}
		// The same SQL, nested, on the same connection.
		inner, err := tx.Query(selectT)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for inner.Next() {
			n++
		}
		if err := inner.Close(); err != nil {
			t.Fatal(err)
		}
		if n != 3 {
			t.Errorf("nested query read %d rows, want 3", n)
		}
		got = append(got, v)
		if len(got) > 3 {
			// A nested run that resets the outer statement restarts it
			// from the first row, forever.
			t.Fatalf("outer rows %v: the nested run restarted them", got)
		}
	}
	if err := outer.Err(); err != nil {
		t.Fatal(err)
	}
	outer.Close()
	if len(got) != 3 || got[0] != "x" || got[2] != "z" {
		t.Errorf("outer rows = %v, want [x y z]: the nested run disturbed them", got)
	}
}

func TestStmtCacheEvictsLeastRecentlyUsed(t *testing.T) {
	db, c := openCounted(t, 2)
	q1, q2, q3 := "SELECT 1", "SELECT 2", "SELECT 3"
	for _, q := range []string{q1, q2, q1, q3} { // q2 is now the least recently used
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	if _, closes := c.counts(q2); closes != 1 {
		t.Errorf("q2 closed %d times, want 1 (evicted)", closes)
	}
	if _, closes := c.counts(q1); closes != 0 {
		t.Errorf("q1 closed %d times, want 0 (recently used)", closes)
	}
	if _, err := db.Exec(q2); err != nil {
		t.Fatal(err)
	}
	if p, _ := c.counts(q2); p != 2 {
		t.Errorf("q2 prepared %d times, want 2 (once more after eviction)", p)
	}
}

func TestStmtCacheEvictedWhileBusyClosesAfterRows(t *testing.T) {
	db, c := openCounted(t, 1)
	if _, err := db.Exec(insertT, "x"); err != nil { // insertT is cached, then CREATE… is gone
		t.Fatal(err)
	}
	tx, err := db.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.Query(selectT)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(insertT, "y"); err != nil { // evicts the busy select
		t.Fatal(err)
	}
	if _, closes := c.counts(selectT); closes != 0 {
		t.Fatalf("the select was closed while its rows were open")
	}
	n := 0
	for rows.Next() {
		n++
	}
	if err := rows.Close(); err != nil {
		t.Fatal(err)
	}
	if n < 1 {
		t.Errorf("read %d rows from the evicted statement", n)
	}
	if _, closes := c.counts(selectT); closes != 1 {
		t.Errorf("the evicted select was closed %d times after its rows closed, want 1", closes)
	}
}

func TestStmtCacheCloseClosesStatements(t *testing.T) {
	db, c := openCounted(t, 8)
	if _, err := db.Exec(insertT, "x"); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if p, closes := c.counts(insertT); p != 1 || closes != 1 {
		t.Errorf("insert prepared %d, closed %d times; want 1 and 1", p, closes)
	}
}

func TestStmtCacheErrorsPassThrough(t *testing.T) {
	db, _ := openCounted(t, 8)
	if _, err := db.Exec("INSERT INTO nope VALUES (1)"); err == nil {
		t.Error("insert into a missing table: error = nil")
	}
	if _, err := db.Exec("INSERT INTO t (id, v) VALUES (1, 'a')"); err != nil {
		t.Fatal(err)
	}
	// A constraint error from a cached statement leaves it usable.
	const dup = "INSERT INTO t (id, v) VALUES (?, 'b')"
	if _, err := db.Exec(dup, 1); err == nil {
		t.Error("duplicate key: error = nil")
	}
	if _, err := db.Exec(dup, 2); err != nil {
		t.Errorf("the statement after a failed run: %v", err)
	}
}

// BenchmarkSQLiteStatements runs a River-sized insert with and without the
// statement cache.
func BenchmarkSQLiteStatements(b *testing.B) {
	const insert = `INSERT INTO t (v) SELECT ? WHERE NOT EXISTS (SELECT 1 FROM t WHERE v = ? AND id > (SELECT coalesce(max(id), 0) - 100 FROM t)) RETURNING id, v`
	for _, tc := range []struct {
		name string
		size int
	}{{"uncached", 0}, {"cached", DefaultStmtCacheSize}} {
		b.Run(tc.name, func(b *testing.B) {
			base, err := sqlite.NewConnector(filepath.Join(b.TempDir(), "bench.db") + "?_pragma=journal_mode(WAL)&_pragma=synchronous(NORMAL)")
			if err != nil {
				b.Fatal(err)
			}
			var db *sql.DB
			if tc.size == 0 {
				db = sql.OpenDB(base)
			} else {
				db = sql.OpenDB(&cachingConnector{base: base, size: tc.size})
			}
			defer db.Close()
			if _, err := db.Exec("CREATE TABLE t (id INTEGER PRIMARY KEY, v TEXT)"); err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				var id int
				var v string
				if err := db.QueryRow(insert, i, i).Scan(&id, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
