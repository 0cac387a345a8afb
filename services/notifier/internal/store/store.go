// Package store keeps the notifier's state in SQL (SQLite by default,
// PostgreSQL with DATABASE_URL, through platform/sqlstore): alerts with
// every pipeline step's result, and the Telegram chat agent's conversation
// history and handled updates. The schema is in migrations/ (goose); times
// are stored as Unix microseconds, JSON as text, so one set of statements
// serves both databases.
package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

//go:embed migrations/*.sql
var migrations embed.FS

// ErrNotFound is returned for an alert id that is not stored.
var ErrNotFound = errors.New("not found")

// ErrBadPageToken is returned for a page token this store did not issue.
var ErrBadPageToken = errors.New("invalid page token")

// Migrate applies the notifier's schema migrations to db.
func Migrate(ctx context.Context, db *sqlstore.DB) error {
	return sqlstore.Migrate(ctx, db, migrations, "migrations")
}

// Querier is what both *sql.DB and *sql.Tx offer, so the intake can write
// an alert in the transaction that also inserts its job.
type Querier interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Store reads and writes the notifier's tables.
type Store struct {
	db      *sqlstore.DB
	changes changes
}

// New returns a Store over db, which must be migrated.
func New(db *sqlstore.DB) *Store {
	return &Store{db: db}
}

// DB is the underlying database, for transactions that span the store and
// the job queue.
func (s *Store) DB() *sqlstore.DB { return s.db }

const alertColumns = `id, source, text, text_truncated, metadata, labels, alert_status, fingerprint,
	status, attempts, error, message_text, message_plain, message_parse_mode, message_disable_preview,
	duplicate_of, grounding_message_id, enrichment_error, delivery_ids, destination,
	received_at, updated_at, delivered_at, group_id, digest_id`

// progressValues are a's delivery ids as stored (JSON) and its rendered
// message (empty when none), which inserts and progress updates write.
func progressValues(a *alert.Alert) (string, alert.Message, error) {
	ids, err := json.Marshal(nonNilSlice(a.DeliveryIDs))
	if err != nil {
		return "", alert.Message{}, fmt.Errorf("encoding delivery ids of alert %s: %w", a.ID, err)
	}
	var m alert.Message
	if a.Message != nil {
		m = *a.Message
	}
	return string(ids), m, nil
}

// queryAlerts reads the alerts query selects (alertColumns) through q;
// what names them in errors.
func queryAlerts(ctx context.Context, q Querier, what, query string, args ...any) ([]*alert.Alert, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	defer rows.Close()
	var out []*alert.Alert
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", what, err)
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading %s: %w", what, err)
	}
	return out, nil
}

// InsertAlert stores a new alert through q.
func (s *Store) InsertAlert(ctx context.Context, q Querier, a *alert.Alert) error {
	md, err := json.Marshal(nonNilMap(a.Metadata))
	if err != nil {
		return fmt.Errorf("encoding metadata of alert %s: %w", a.ID, err)
	}
	labels, err := json.Marshal(nonNilLabels(a.Labels))
	if err != nil {
		return fmt.Errorf("encoding labels of alert %s: %w", a.ID, err)
	}
	ids, m, err := progressValues(a)
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO notifier_alerts (`+alertColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24, $25)`,
		a.ID, a.Source, a.Text, a.TextTruncated, string(md), string(labels), a.AlertStatus, a.Fingerprint,
		string(a.Status), a.Attempts, a.Error, m.Text, m.Plain, m.ParseMode, m.DisableWebPagePreview,
		a.DuplicateOf, a.GroundingMessageID, a.EnrichmentError, ids, a.Destination,
		sqlstore.Micros(a.ReceivedAt), sqlstore.Micros(a.UpdatedAt), sqlstore.Micros(a.DeliveredAt), a.GroupID, a.DigestID)
	if err != nil {
		return fmt.Errorf("inserting alert %s: %w", a.ID, err)
	}
	s.alertsChanged()
	return nil
}

// FindOriginal returns the id of the earliest alert received at or after
// since with a's dedup key that is itself no duplicate and did not fail, or
// "" when there is none.
func (s *Store) FindOriginal(ctx context.Context, q Querier, a *alert.Alert, since time.Time) (string, error) {
	var id string
	err := q.QueryRowContext(ctx, `SELECT id FROM notifier_alerts
		WHERE fingerprint = $1 AND source = $2 AND alert_status = $3 AND received_at >= $4
		  AND status <> $5 AND status <> $6
		ORDER BY received_at, id LIMIT 1`,
		a.Fingerprint, a.Source, a.AlertStatus, sqlstore.Micros(since), string(alert.StatusDuplicate), string(alert.StatusFailed)).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("looking for an earlier copy of alert %s: %w", a.ID, err)
	}
	return id, nil
}

// FiringDelivery returns the destination and first delivery id of the
// latest DELIVERED firing alert with a's source and fingerprint, delivered
// on its own (not in a group), or "" when there is none: a resolution
// replies to it.
func (s *Store) FiringDelivery(ctx context.Context, a *alert.Alert) (destination, deliveryID string, err error) {
	var ids string
	err = s.db.QueryRowContext(ctx, `SELECT destination, delivery_ids FROM notifier_alerts
		WHERE fingerprint = $1 AND source = $2 AND alert_status = $3 AND status = $4 AND group_id = ''
		ORDER BY received_at DESC, id DESC LIMIT 1`,
		a.Fingerprint, a.Source, alert.Firing, string(alert.StatusDelivered)).Scan(&destination, &ids)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", nil
	}
	if err != nil {
		return "", "", fmt.Errorf("looking for the firing alert of %s: %w", a.ID, err)
	}
	var list []string
	if err := json.Unmarshal([]byte(ids), &list); err != nil || len(list) == 0 {
		return "", "", nil
	}
	return destination, list[0], nil
}

// LockForDedup makes intake transactions that could be repeats of each
// other take turns, so that the later one finds the earlier as its
// original instead of both finding nothing. keys are the alerts'
// alert.Alert.DedupKey. On PostgreSQL it takes a
// transaction-scoped advisory lock per key, in sorted order so that two
// batches cannot deadlock; on SQLite, whose intake transactions already
// hold the database's write lock from BEGIN, it does nothing.
func (s *Store) LockForDedup(ctx context.Context, tx Querier, keys []string) error {
	if s.db.Dialect != sqlstore.Postgres || len(keys) == 0 {
		return nil
	}
	keys = slices.Clone(keys)
	slices.Sort(keys)
	for _, k := range slices.Compact(keys) {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, "notifier/dedup/"+k); err != nil {
			return fmt.Errorf("locking intake for deduplication: %w", err)
		}
	}
	return nil
}

// SaveProgress writes the fields the pipeline changes: status, attempts,
// error, message, enrichment and delivery results, and the update and
// delivery times.
func (s *Store) SaveProgress(ctx context.Context, a *alert.Alert) error {
	ids, m, err := progressValues(a)
	if err != nil {
		return err
	}
	res, err := s.db.ExecContext(ctx, `UPDATE notifier_alerts SET
		status = $2, attempts = $3, error = $4, message_text = $5, message_plain = $6,
		message_parse_mode = $7, message_disable_preview = $8, grounding_message_id = $9,
		enrichment_error = $10, delivery_ids = $11, destination = $12, updated_at = $13, delivered_at = $14
		WHERE id = $1`,
		a.ID, string(a.Status), a.Attempts, a.Error, m.Text, m.Plain, m.ParseMode, m.DisableWebPagePreview,
		a.GroundingMessageID, a.EnrichmentError, ids, a.Destination, sqlstore.Micros(a.UpdatedAt), sqlstore.Micros(a.DeliveredAt))
	if err != nil {
		return fmt.Errorf("saving alert %s: %w", a.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("saving alert %s: %w", a.ID, ErrNotFound)
	}
	s.alertsChanged()
	return nil
}

// GetAlert returns the alert with id, or ErrNotFound.
func (s *Store) GetAlert(ctx context.Context, id string) (*alert.Alert, error) {
	row := s.db.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM notifier_alerts WHERE id = $1`, id)
	a, err := scanAlert(row)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("alert %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading alert %q: %w", id, err)
	}
	return a, nil
}

// ListQuery filters and pages ListAlerts.
type ListQuery struct {
	Status        alert.Status // empty: any
	ReceivedAfter time.Time    // zero: any
	GroupID       string       // empty: any
	PageSize      int          // 1..100
	PageToken     string       // from the previous page
}

// MaxPageBytes bounds one page of a list in bytes, as stored (text,
// metadata, labels, rendered message): well under gRPC's default 4 MiB
// message limit, so that no writer can make a page too large to answer.
const MaxPageBytes = 2 << 20

// Page is one page of a list, newest first.
type Page[T any] struct {
	Items []T
	// Next is the token of the next page, "" on the last.
	Next string
	// SizeLimited says the page stopped before its page size because its
	// items reached MaxPageBytes; Next continues it.
	SizeLimited bool
}

// ListAlerts returns one page of alerts, newest first.
func (s *Store) ListAlerts(ctx context.Context, q ListQuery) (Page[*alert.Alert], error) {
	return listNewest(ctx, s, keyset[*alert.Alert]{
		what: "alerts", table: "notifier_alerts", columns: alertColumns, timeColumn: "received_at",
		filters: func(arg func(any) string) (where []string) {
			if q.Status != "" {
				where = append(where, "status = "+arg(string(q.Status)))
			}
			if !q.ReceivedAfter.IsZero() {
				where = append(where, "received_at >= "+arg(sqlstore.Micros(q.ReceivedAfter)))
			}
			if q.GroupID != "" {
				where = append(where, "group_id = "+arg(q.GroupID))
			}
			return where
		},
		scan: scanAlert,
		key:  func(a *alert.Alert) (time.Time, string) { return a.ReceivedAt, a.ID },
		size: alertSize,
	}, q.PageSize, q.PageToken)
}

// alertSize is about what an alert weighs in a response: its text fields
// and its metadata and labels as stored.
func alertSize(a *alert.Alert) int {
	n := len(a.Text) + len(a.Error) + len(a.EnrichmentError) + 256
	if a.Message != nil {
		n += len(a.Message.Text) + len(a.Message.Plain)
	}
	if md, err := json.Marshal(a.Metadata); err == nil {
		n += len(md)
	}
	for k, v := range a.Labels {
		n += len(k) + len(v)
	}
	return n
}

// keyset says how to list one table newest first, keyed by (timeColumn, id).
type keyset[T any] struct {
	what, table, columns, timeColumn string
	// filters returns the WHERE conditions, binding values with arg.
	filters func(arg func(any) string) []string
	scan    func(scanner) (T, error)
	key     func(T) (time.Time, string)
	// size is about how many bytes a row weighs in a response.
	size func(T) int
}

// listNewest returns one page of k's rows, newest first: at most pageSize
// rows, fewer when they reach MaxPageBytes (always at least one).
func listNewest[T any](ctx context.Context, s *Store, k keyset[T], pageSize int, pageToken string) (Page[T], error) {
	var args []any
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	where := k.filters(arg)
	if pageToken != "" {
		c, err := sqlstore.ParseCursor(pageToken)
		if err != nil {
			return Page[T]{}, ErrBadPageToken
		}
		a1, a2, a3 := arg(c.At), arg(c.At), arg(c.ID)
		where = append(where, "("+k.timeColumn+" < "+a1+" OR ("+k.timeColumn+" = "+a2+" AND id < "+a3+"))")
	}
	query := `SELECT ` + k.columns + ` FROM ` + k.table
	if len(where) > 0 {
		query += " WHERE " + strings.Join(where, " AND ")
	}
	query += " ORDER BY " + k.timeColumn + " DESC, id DESC LIMIT " + arg(pageSize+1)
	rows, err := s.db.QueryContext(ctx, query, args...)
	if err != nil {
		return Page[T]{}, fmt.Errorf("listing %s: %w", k.what, err)
	}
	defer rows.Close()
	var (
		page  Page[T]
		bytes int
		more  bool
	)
	for rows.Next() {
		v, err := k.scan(rows)
		if err != nil {
			return Page[T]{}, fmt.Errorf("listing %s: %w", k.what, err)
		}
		if len(page.Items) == pageSize {
			more = true
			break
		}
		if n := k.size(v); len(page.Items) > 0 && bytes+n > MaxPageBytes {
			// The page stops here rather than fail: the client reads
			// on with the token.
			more, page.SizeLimited = true, true
			break
		} else {
			bytes += n
		}
		page.Items = append(page.Items, v)
	}
	if err := rows.Err(); err != nil {
		return Page[T]{}, fmt.Errorf("listing %s: %w", k.what, err)
	}
	if more {
		at, id := k.key(page.Items[len(page.Items)-1])
		page.Next = sqlstore.CursorAfter(at, id).Token()
	}
	return page, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanAlert(r scanner) (*alert.Alert, error) {
	var (
		a                        alert.Alert
		m                        alert.Message
		status, md, labels, ids  string
		received, updated, deliv int64
	)
	if err := r.Scan(&a.ID, &a.Source, &a.Text, &a.TextTruncated, &md, &labels, &a.AlertStatus, &a.Fingerprint,
		&status, &a.Attempts, &a.Error, &m.Text, &m.Plain, &m.ParseMode, &m.DisableWebPagePreview,
		&a.DuplicateOf, &a.GroundingMessageID, &a.EnrichmentError, &ids, &a.Destination,
		&received, &updated, &deliv, &a.GroupID, &a.DigestID); err != nil {
		return nil, err
	}
	a.Status = alert.Status(status)
	if err := json.Unmarshal([]byte(md), &a.Metadata); err != nil {
		return nil, fmt.Errorf("decoding metadata of alert %s: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(labels), &a.Labels); err != nil {
		return nil, fmt.Errorf("decoding labels of alert %s: %w", a.ID, err)
	}
	if err := json.Unmarshal([]byte(ids), &a.DeliveryIDs); err != nil {
		return nil, fmt.Errorf("decoding delivery ids of alert %s: %w", a.ID, err)
	}
	if m.Text != "" {
		a.Message = &m
	}
	a.ReceivedAt, a.UpdatedAt, a.DeliveredAt = sqlstore.FromMicros(received), sqlstore.FromMicros(updated), sqlstore.FromMicros(deliv)
	return &a, nil
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

func nonNilLabels(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

func nonNilSlice(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
