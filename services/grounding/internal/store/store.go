// Package store persists grounding's annotated messages in SQL (SQLite or
// PostgreSQL through platform/sqlstore) and their raw provider responses as
// redacted artifact files, and runs the artifact retention job.
//
// Tables: annotated_messages (one row per message; times are Unix
// microseconds, UTC), citations (foreign key to the message, indexed by
// message id, url, domain and fetch time; snippets capped at 1024
// characters with a truncation flag) and message_reviews (every review, the
// latest shown on the message).
package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/grounding/internal/extractive"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
)

//go:embed migrations/*.sql
var migrations embed.FS

// Migrate applies the store's migrations to db.
func Migrate(ctx context.Context, db *sqlstore.DB) error {
	return sqlstore.Migrate(ctx, db, migrations, "migrations")
}

// Store implements grounding.Store.
type Store struct {
	db        *sqlstore.DB
	artifacts *Artifacts
}

var _ grounding.Store = (*Store)(nil)

// New returns a Store over a migrated db, writing artifacts to artifacts.
func New(db *sqlstore.DB, artifacts *Artifacts) *Store {
	return &Store{db: db, artifacts: artifacts}
}

// Artifacts returns the store's artifact directory.
func (s *Store) Artifacts() *Artifacts { return s.artifacts }

func micros(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMicro()
}

func fromMicros(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMicro(v).UTC()
}

// Create implements grounding.Store.
func (s *Store) Create(ctx context.Context, m *grounding.Message, raw []byte) (err error) {
	if raw != nil {
		path, err := s.artifacts.Write(m.ID, m.CreateTime, raw)
		if err != nil {
			return err
		}
		m.ArtifactPath = path
		defer func() {
			if err != nil {
				_ = s.artifacts.Remove(path)
				m.ArtifactPath = ""
			}
		}()
	}
	evidence, err := json.Marshal(m.Context.Results)
	if err != nil {
		return fmt.Errorf("encoding evidence: %w", err)
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("storing message: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	var conf sql.NullFloat64
	if m.Confidence != nil {
		conf = sql.NullFloat64{Float64: *m.Confidence, Valid: true}
	}
	created := micros(m.CreateTime)
	_, err = tx.ExecContext(ctx, `INSERT INTO annotated_messages
		(id, text, summary, confidence, status, query, evidence, evidence_time, input_text, artifact_path,
		 model, engine, error, created_by, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15)`,
		m.ID, m.Text, m.Summary, conf, m.Status.String(), m.Context.Query, string(evidence),
		micros(m.Context.Timestamp), m.InputText, m.ArtifactPath, m.Model, m.Engine.String(), m.Error,
		m.CreatedBy, created)
	if err != nil {
		return fmt.Errorf("storing message: %w", err)
	}
	for i := range m.Citations {
		c := &m.Citations[i]
		if utf8.RuneCountInString(c.Snippet) > grounding.MaxSnippetChars {
			c.Snippet = extractive.TrimSummary(c.Snippet, grounding.MaxSnippetChars, 0)
			c.SnippetTruncated = true
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO citations
			(message_id, position, url, domain, title, snippet, snippet_truncated, start_index, end_index,
			 confidence_score, fetch_time, mime_type, favicon_url, source_index)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)`,
			m.ID, i, c.URL, c.Domain, c.Title, c.Snippet, c.SnippetTruncated, c.StartIndex, c.EndIndex,
			c.ConfidenceScore, micros(c.FetchTime), c.MimeType, c.FaviconURL, c.SourceIndex)
		if err != nil {
			return fmt.Errorf("storing citation %d: %w", i, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("storing message: %w", err)
	}
	return nil
}

const messageColumns = `m.id, m.text, m.summary, m.confidence, m.status, m.query, m.evidence, m.evidence_time,
	m.input_text, m.artifact_path, m.model, m.engine, m.error, m.created_by, m.created_at`

type scanner interface{ Scan(dest ...any) error }

func scanMessage(row scanner) (*grounding.Message, error) {
	var (
		m                      grounding.Message
		conf                   sql.NullFloat64
		status, engine, evJSON string
		evTime, created        int64
	)
	if err := row.Scan(&m.ID, &m.Text, &m.Summary, &conf, &status, &m.Context.Query, &evJSON, &evTime,
		&m.InputText, &m.ArtifactPath, &m.Model, &engine, &m.Error, &m.CreatedBy, &created); err != nil {
		return nil, err
	}
	if conf.Valid {
		m.Confidence = &conf.Float64
	}
	m.Status = grounding.ParseStatus(status)
	m.Engine = grounding.ParseEngine(engine)
	m.Context.Timestamp = fromMicros(evTime)
	m.CreateTime = fromMicros(created)
	if err := json.Unmarshal([]byte(evJSON), &m.Context.Results); err != nil {
		return nil, fmt.Errorf("decoding evidence of %s: %w", m.ID, err)
	}
	return &m, nil
}

// Get implements grounding.Store.
func (s *Store) Get(ctx context.Context, id string) (*grounding.Message, error) {
	m, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM annotated_messages m WHERE m.id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, grounding.ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("reading message %s: %w", id, err)
	}
	if err := s.fill(ctx, []*grounding.Message{m}); err != nil {
		return nil, err
	}
	return m, nil
}

// fill loads the citations and latest review of msgs.
func (s *Store) fill(ctx context.Context, msgs []*grounding.Message) error {
	if len(msgs) == 0 {
		return nil
	}
	byID := make(map[string]*grounding.Message, len(msgs))
	args := make([]any, len(msgs))
	ph := make([]string, len(msgs))
	for i, m := range msgs {
		byID[m.ID] = m
		args[i] = m.ID
		ph[i] = "$" + strconv.Itoa(i+1)
	}
	in := strings.Join(ph, ", ")
	rows, err := s.db.QueryContext(ctx, `SELECT message_id, url, domain, title, snippet, snippet_truncated,
		start_index, end_index, confidence_score, fetch_time, mime_type, favicon_url, source_index
		FROM citations WHERE message_id IN (`+in+`) ORDER BY message_id, position`, args...)
	if err != nil {
		return fmt.Errorf("reading citations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id    string
			c     grounding.Citation
			fetch int64
		)
		if err := rows.Scan(&id, &c.URL, &c.Domain, &c.Title, &c.Snippet, &c.SnippetTruncated, &c.StartIndex,
			&c.EndIndex, &c.ConfidenceScore, &fetch, &c.MimeType, &c.FaviconURL, &c.SourceIndex); err != nil {
			return fmt.Errorf("reading citations: %w", err)
		}
		c.FetchTime = fromMicros(fetch)
		byID[id].Citations = append(byID[id].Citations, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading citations: %w", err)
	}
	rrows, err := s.db.QueryContext(ctx, `SELECT message_id, reviewer_id, notes, previous_status, review_time
		FROM message_reviews WHERE message_id IN (`+in+`) ORDER BY review_time, id`, args...)
	if err != nil {
		return fmt.Errorf("reading reviews: %w", err)
	}
	defer rrows.Close()
	for rrows.Next() {
		var (
			id, prev string
			r        grounding.Review
			at       int64
		)
		if err := rrows.Scan(&id, &r.ReviewerID, &r.Notes, &prev, &at); err != nil {
			return fmt.Errorf("reading reviews: %w", err)
		}
		r.PreviousStatus = grounding.ParseStatus(prev)
		r.ReviewTime = fromMicros(at)
		byID[id].Review = &r // ordered by time: the last one wins
	}
	if err := rrows.Err(); err != nil {
		return fmt.Errorf("reading reviews: %w", err)
	}
	return nil
}

// pageToken is the position after the last message of a page, with a
// fingerprint of the filters so a token is not reused with other filters.
type pageToken struct {
	CreatedAt int64  `json:"t"`
	ID        string `json:"i"`
	Filter    string `json:"f"`
}

func filterKey(f grounding.ListFilter) string {
	return fmt.Sprintf("%s|%s|%d|%d", f.Status, f.Domain, micros(f.CreatedAfter), micros(f.CreatedBefore))
}

func encodeToken(t pageToken) string {
	b, _ := json.Marshal(t)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeToken(s string, f grounding.ListFilter) (pageToken, error) {
	var t pageToken
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &t) != nil || t.ID == "" {
		return t, grounding.ErrInvalidPageToken
	}
	if t.Filter != filterKey(f) {
		return t, fmt.Errorf("%w: it belongs to a query with other filters", grounding.ErrInvalidPageToken)
	}
	return t, nil
}

// List implements grounding.Store: newest first, by (created_at, id).
func (s *Store) List(ctx context.Context, f grounding.ListFilter) ([]*grounding.Message, string, error) {
	var (
		where []string
		args  []any
	)
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	if f.Status != grounding.StatusUnspecified {
		where = append(where, "m.status = "+arg(f.Status.String()))
	}
	if f.Domain != "" {
		where = append(where, "EXISTS (SELECT 1 FROM citations c WHERE c.message_id = m.id AND c.domain = "+arg(strings.ToLower(f.Domain))+")")
	}
	if !f.CreatedAfter.IsZero() {
		where = append(where, "m.created_at >= "+arg(micros(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "m.created_at < "+arg(micros(f.CreatedBefore)))
	}
	if f.PageToken != "" {
		t, err := decodeToken(f.PageToken, f)
		if err != nil {
			return nil, "", err
		}
		ta, ia := arg(t.CreatedAt), arg(t.ID)
		where = append(where, "(m.created_at < "+ta+" OR (m.created_at = "+ta+" AND m.id < "+ia+"))")
	}
	q := `SELECT ` + messageColumns + ` FROM annotated_messages m`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY m.created_at DESC, m.id DESC LIMIT " + arg(f.PageSize+1)
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("listing messages: %w", err)
	}
	defer rows.Close()
	var msgs []*grounding.Message
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, "", fmt.Errorf("listing messages: %w", err)
		}
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("listing messages: %w", err)
	}
	next := ""
	if len(msgs) > f.PageSize {
		msgs = msgs[:f.PageSize]
		last := msgs[len(msgs)-1]
		next = encodeToken(pageToken{CreatedAt: micros(last.CreateTime), ID: last.ID, Filter: filterKey(f)})
	}
	if err := s.fill(ctx, msgs); err != nil {
		return nil, "", err
	}
	return msgs, next, nil
}

// SetReview implements grounding.Store.
func (s *Store) SetReview(ctx context.Context, id string, to grounding.Status, r grounding.Review) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("reviewing message: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	at := micros(r.ReviewTime)
	res, err := tx.ExecContext(ctx, `UPDATE annotated_messages SET status = $1, updated_at = $2 WHERE id = $3 AND status = $4`,
		to.String(), at, id, r.PreviousStatus.String())
	if err != nil {
		return fmt.Errorf("reviewing message: %w", err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("reviewing message: %w", err)
	} else if n == 0 {
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM annotated_messages WHERE id = $1`, id).Scan(&one)
		if errors.Is(err, sql.ErrNoRows) {
			return grounding.ErrNotFound
		}
		return grounding.ErrConflict
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO message_reviews (id, message_id, reviewer_id, notes, previous_status, new_status, review_time)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		uuid.Must(uuid.NewV7()).String(), id, r.ReviewerID, r.Notes, r.PreviousStatus.String(), to.String(), at)
	if err != nil {
		return fmt.Errorf("recording review: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reviewing message: %w", err)
	}
	return nil
}

// expired lists up to limit messages created before cutoff that still
// have an artifact.
func (s *Store) expired(ctx context.Context, cutoff time.Time, limit int) (ids, paths []string, err error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, artifact_path FROM annotated_messages
		WHERE created_at < $1 AND artifact_path <> '' ORDER BY created_at LIMIT $2`, micros(cutoff), limit)
	if err != nil {
		return nil, nil, fmt.Errorf("finding expired artifacts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var id, p string
		if err := rows.Scan(&id, &p); err != nil {
			return nil, nil, fmt.Errorf("finding expired artifacts: %w", err)
		}
		ids, paths = append(ids, id), append(paths, p)
	}
	return ids, paths, rows.Err()
}

func (s *Store) clearArtifact(ctx context.Context, id, path string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE annotated_messages SET artifact_path = '' WHERE id = $1 AND artifact_path = $2`, id, path)
	if err != nil {
		return fmt.Errorf("clearing artifact path of %s: %w", id, err)
	}
	return nil
}
