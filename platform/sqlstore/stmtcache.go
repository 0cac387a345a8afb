package sqlstore

import (
	"container/list"
	"context"
	"database/sql/driver"
	"errors"
	"reflect"
)

// DefaultStmtCacheSize is how many prepared statements each SQLite
// connection keeps.
const DefaultStmtCacheSize = 256

// cachingConnector wraps a database/sql connector so that every
// connection keeps the statements it prepares, keyed by their SQL.
//
// modernc.org/sqlite parses a query's SQL every time it runs unless the
// caller prepares it once and reuses the statement, and River's SQLite
// driver (like most code on database/sql) never does. Profiles of the
// notifier under load showed a third of its CPU in SQLite's parser,
// re-parsing the same few dozen statements. PostgreSQL needs no such
// wrapper: pgx caches statements itself.
type cachingConnector struct {
	base driver.Connector
	size int
}

var _ driver.Connector = (*cachingConnector)(nil)

// Connect implements driver.Connector.
func (c *cachingConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.base.Connect(ctx)
	if err != nil {
		return nil, err
	}
	prep, ok := conn.(driver.ConnPrepareContext)
	if !ok {
		return conn, nil
	}
	return &cachingConn{Conn: conn, prep: prep, size: c.size, stmts: map[string]*list.Element{}, lru: list.New()}, nil
}

// Driver implements driver.Connector.
func (c *cachingConnector) Driver() driver.Driver { return c.base.Driver() }

// cachingConn is a connection with a least-recently-used cache of
// prepared statements. database/sql never uses a connection from two
// goroutines at once (Rows.Close included), so it needs no lock.
type cachingConn struct {
	driver.Conn
	prep  driver.ConnPrepareContext
	size  int
	stmts map[string]*list.Element // of *cachedStmt
	lru   *list.List               // front: most recently used
}

// cachedStmt is one prepared statement. While rows read from it are open
// it is busy: running the same SQL again then goes uncached, because
// re-running a statement resets the rows still being read.
type cachedStmt struct {
	query   string
	stmt    driver.Stmt
	busy    bool
	evicted bool // close once the rows reading from it close
}

var (
	_ driver.QueryerContext     = (*cachingConn)(nil)
	_ driver.ExecerContext      = (*cachingConn)(nil)
	_ driver.ConnPrepareContext = (*cachingConn)(nil)
	_ driver.ConnBeginTx        = (*cachingConn)(nil)
	_ driver.SessionResetter    = (*cachingConn)(nil)
	_ driver.Validator          = (*cachingConn)(nil)
	_ driver.Pinger             = (*cachingConn)(nil)
)

// stmt returns the cached statement for query, preparing it on a miss; nil
// (and no error) when the cached one is busy.
func (c *cachingConn) stmt(ctx context.Context, query string) (*cachedStmt, error) {
	if el, ok := c.stmts[query]; ok {
		cs := el.Value.(*cachedStmt)
		if cs.busy {
			return nil, nil
		}
		c.lru.MoveToFront(el)
		return cs, nil
	}
	st, err := c.prep.PrepareContext(ctx, query)
	if err != nil {
		return nil, err
	}
	cs := &cachedStmt{query: query, stmt: st}
	c.stmts[query] = c.lru.PushFront(cs)
	for c.lru.Len() > c.size {
		old := c.lru.Remove(c.lru.Back()).(*cachedStmt)
		delete(c.stmts, old.query)
		if old.busy {
			old.evicted = true
		} else {
			_ = old.stmt.Close()
		}
	}
	return cs, nil
}

// QueryContext implements driver.QueryerContext through the cache.
func (c *cachingConn) QueryContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Rows, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs != nil {
		if sq, ok := cs.stmt.(driver.StmtQueryContext); ok {
			cs.busy = true
			rows, err := sq.QueryContext(ctx, args)
			if err != nil {
				c.release(cs)
				return nil, err
			}
			return &cachedRows{Rows: rows, conn: c, stmt: cs}, nil
		}
	}
	if q, ok := c.Conn.(driver.QueryerContext); ok {
		return q.QueryContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

// ExecContext implements driver.ExecerContext through the cache.
func (c *cachingConn) ExecContext(ctx context.Context, query string, args []driver.NamedValue) (driver.Result, error) {
	cs, err := c.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	if cs != nil {
		if se, ok := cs.stmt.(driver.StmtExecContext); ok {
			cs.busy = true
			defer c.release(cs)
			return se.ExecContext(ctx, args)
		}
	}
	if ex, ok := c.Conn.(driver.ExecerContext); ok {
		return ex.ExecContext(ctx, query, args)
	}
	return nil, driver.ErrSkip
}

// release marks cs free again, closing it when it was evicted meanwhile.
func (c *cachingConn) release(cs *cachedStmt) {
	cs.busy = false
	if cs.evicted {
		_ = cs.stmt.Close()
	}
}

// PrepareContext implements driver.ConnPrepareContext. Statements the
// caller prepares are the caller's to close, so they bypass the cache.
func (c *cachingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	return c.prep.PrepareContext(ctx, query)
}

// BeginTx implements driver.ConnBeginTx.
func (c *cachingConn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if b, ok := c.Conn.(driver.ConnBeginTx); ok {
		return b.BeginTx(ctx, opts)
	}
	return c.Conn.Begin() //nolint:staticcheck // only for drivers without BeginTx
}

// ResetSession implements driver.SessionResetter.
func (c *cachingConn) ResetSession(ctx context.Context) error {
	if r, ok := c.Conn.(driver.SessionResetter); ok {
		return r.ResetSession(ctx)
	}
	return nil
}

// IsValid implements driver.Validator.
func (c *cachingConn) IsValid() bool {
	if v, ok := c.Conn.(driver.Validator); ok {
		return v.IsValid()
	}
	return true
}

// Ping implements driver.Pinger.
func (c *cachingConn) Ping(ctx context.Context) error {
	if p, ok := c.Conn.(driver.Pinger); ok {
		return p.Ping(ctx)
	}
	return nil
}

// Close closes the cached statements, then the connection.
func (c *cachingConn) Close() error {
	var errs []error
	for el := c.lru.Front(); el != nil; el = el.Next() {
		errs = append(errs, el.Value.(*cachedStmt).stmt.Close())
	}
	c.lru.Init()
	clear(c.stmts)
	return errors.Join(append(errs, c.Conn.Close())...)
}

// cachedRows gives its statement back to the cache when closed.
type cachedRows struct {
	driver.Rows
	conn   *cachingConn
	stmt   *cachedStmt
	closed bool
}

// Close implements driver.Rows.
func (r *cachedRows) Close() error {
	err := r.Rows.Close()
	if !r.closed {
		r.closed = true
		r.conn.release(r.stmt)
	}
	return err
}

// The column-type interfaces modernc's rows implement, passed through so
// that sql.Rows.ColumnTypes reports the same with the cache as without.
var (
	_ driver.RowsColumnTypeDatabaseTypeName = (*cachedRows)(nil)
	_ driver.RowsColumnTypeLength           = (*cachedRows)(nil)
	_ driver.RowsColumnTypeNullable         = (*cachedRows)(nil)
	_ driver.RowsColumnTypePrecisionScale   = (*cachedRows)(nil)
	_ driver.RowsColumnTypeScanType         = (*cachedRows)(nil)
)

// ColumnTypeDatabaseTypeName implements driver.RowsColumnTypeDatabaseTypeName.
func (r *cachedRows) ColumnTypeDatabaseTypeName(i int) string {
	if t, ok := r.Rows.(driver.RowsColumnTypeDatabaseTypeName); ok {
		return t.ColumnTypeDatabaseTypeName(i)
	}
	return ""
}

// ColumnTypeLength implements driver.RowsColumnTypeLength.
func (r *cachedRows) ColumnTypeLength(i int) (int64, bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeLength); ok {
		return t.ColumnTypeLength(i)
	}
	return 0, false
}

// ColumnTypeNullable implements driver.RowsColumnTypeNullable.
func (r *cachedRows) ColumnTypeNullable(i int) (nullable, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypeNullable); ok {
		return t.ColumnTypeNullable(i)
	}
	return false, false
}

// ColumnTypePrecisionScale implements driver.RowsColumnTypePrecisionScale.
func (r *cachedRows) ColumnTypePrecisionScale(i int) (precision, scale int64, ok bool) {
	if t, ok := r.Rows.(driver.RowsColumnTypePrecisionScale); ok {
		return t.ColumnTypePrecisionScale(i)
	}
	return 0, 0, false
}

// ColumnTypeScanType implements driver.RowsColumnTypeScanType.
func (r *cachedRows) ColumnTypeScanType(i int) reflect.Type {
	if t, ok := r.Rows.(driver.RowsColumnTypeScanType); ok {
		return t.ColumnTypeScanType(i)
	}
	return reflect.TypeFor[any]()
}
