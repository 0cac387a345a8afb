// Package store persists grounding's annotated messages in SQL (SQLite or
// PostgreSQL through platform/sqlstore), their raw provider responses and
// fetched page HTML as redacted artifact files, and runs the retention job
// (archiving raw data, purging old message bodies).
//
// Tables: annotated_messages (one row per message with its effective round
// as JSON, request id and parsed metadata; times are Unix microseconds,
// UTC), citations (foreign key to the message, indexed by message id, url,
// domain, fetch time and citation id; snippets capped at 1024 characters
// with a truncation flag; the page HTML's artifact path) and
// message_reviews (every review with its actor, newest first on the
// message). Input text, the query, evidence and snippets are stored
// redacted like the artifacts.
package store

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
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

// Create implements grounding.Store. The input text, the evidence and the
// citation snippets are stored redacted (like the raw artifact), and m is
// updated to what was stored; a citation's page HTML is written as a
// restricted artifact and dropped from m.
func (s *Store) Create(ctx context.Context, m *grounding.Message, raw []byte) (err error) {
	var written []string
	defer func() {
		if err != nil {
			for _, p := range written {
				_ = s.artifacts.Remove(p)
			}
			m.ArtifactPath = ""
		}
	}()
	if raw != nil {
		path, err := s.artifacts.Write(m.ID, m.CreateTime, raw)
		if err != nil {
			return err
		}
		m.ArtifactPath = path
		written = append(written, path)
	}
	m.InputText, m.Context.Query = s.artifacts.Redact(m.InputText), s.artifacts.Redact(m.Context.Query)
	// The answer may restate the input (offline with search off it is the
	// input's own sentences, and a model may echo it).
	s.redactText(m)
	m.Summary = s.artifacts.Redact(m.Summary)
	for i := range m.Context.Results {
		r := &m.Context.Results[i]
		r.Title, r.Snippet = s.artifacts.Redact(r.Title), s.artifacts.Redact(r.Snippet)
	}
	htmlPaths := make([]string, len(m.Citations))
	for i := range m.Citations {
		c := &m.Citations[i]
		c.Snippet = s.artifacts.Redact(c.Snippet)
		if c.ID == "" {
			c.ID = uuid.Must(uuid.NewV7()).String()
		}
		if c.RawHTML != "" {
			p, err := s.artifacts.WriteHTML(m.ID, c.ID, m.CreateTime, c.RawHTML)
			if err != nil {
				return err
			}
			written = append(written, p)
			htmlPaths[i] = p
			c.RawHTML, c.HasRawHTML = "", true
		}
	}
	evidence, err := json.Marshal(m.Context.Results)
	if err != nil {
		return fmt.Errorf("encoding evidence: %w", err)
	}
	round, err := json.Marshal(fromRound(m.Round))
	if err != nil {
		return fmt.Errorf("encoding round: %w", err)
	}
	parsed := []byte{}
	if m.Parsed != nil {
		if parsed, err = json.Marshal(m.Parsed); err != nil {
			return fmt.Errorf("encoding parsed metadata: %w", err)
		}
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
	created := sqlstore.Micros(m.CreateTime)
	_, err = tx.ExecContext(ctx, `INSERT INTO annotated_messages
		(id, text, summary, confidence, status, query, evidence, evidence_time, input_text, artifact_path,
		 model, engine, error, created_by, created_at, updated_at, round_id, round_config, request_id, parsed_metadata)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, $16, $17, $18, $19)`,
		m.ID, m.Text, m.Summary, conf, m.Status.String(), m.Context.Query, string(evidence),
		sqlstore.Micros(m.Context.Timestamp), m.InputText, m.ArtifactPath, m.Model, m.Engine.String(), m.Error,
		m.CreatedBy, created, m.Round.ID, string(round), m.RequestID, string(parsed))
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
			 confidence_score, fetch_time, mime_type, favicon_url, source_index, id, create_time, created_by,
			 raw_html_path)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18)`,
			m.ID, i, c.URL, c.Domain, c.Title, c.Snippet, c.SnippetTruncated, c.StartIndex, c.EndIndex,
			c.ConfidenceScore, sqlstore.Micros(c.FetchTime), c.MimeType, c.FaviconURL, c.SourceIndex, c.ID,
			sqlstore.Micros(c.CreateTime), c.CreatedBy, htmlPaths[i])
		if err != nil {
			return fmt.Errorf("storing citation %d: %w", i, err)
		}
	}
	if err = tx.Commit(); err != nil {
		return fmt.Errorf("storing message: %w", err)
	}
	return nil
}

// redactText redacts m.Text keeping every offset into it true: the text
// is cut at each citation boundary and each offset the parsed metadata
// records, the pieces are redacted one by one, and the offsets are moved
// to where their piece now starts. A secret is never split by a boundary
// in practice: boundaries fall at sentence ends and citation markers.
func (s *Store) redactText(m *grounding.Message) {
	if s.artifacts.Redact(m.Text) == m.Text {
		return
	}
	runes := []rune(m.Text)
	cuts := map[int]bool{0: true, len(runes): true}
	for _, c := range m.Citations {
		cuts[c.StartIndex], cuts[c.EndIndex] = true, true
	}
	forEachOffset(m.Parsed, func(v int) int { cuts[v] = true; return v })
	var bounds []int
	for c := range cuts {
		if c >= 0 && c <= len(runes) {
			bounds = append(bounds, c)
		}
	}
	slices.Sort(bounds)
	moved := make(map[int]int, len(bounds))
	var out strings.Builder
	pos := 0
	for i, b := range bounds {
		moved[b] = pos
		if i+1 < len(bounds) {
			piece := s.artifacts.Redact(string(runes[b:bounds[i+1]]))
			out.WriteString(piece)
			pos += utf8.RuneCountInString(piece)
		}
	}
	m.Text = out.String()
	move := func(v int) int {
		if n, ok := moved[v]; ok {
			return n
		}
		return v
	}
	for i := range m.Citations {
		c := &m.Citations[i]
		c.StartIndex, c.EndIndex = move(c.StartIndex), move(c.EndIndex)
	}
	forEachOffset(m.Parsed, move)
}

// forEachOffset replaces each offset ("offset", "start", "end") of the
// parsed metadata's markers and dropped markers by f's result.
func forEachOffset(parsed map[string]any, f func(int) int) {
	for _, list := range []string{"markers", "dropped"} {
		items, _ := parsed[list].([]any)
		for _, it := range items {
			mk, _ := it.(map[string]any)
			for _, k := range []string{"offset", "start", "end"} {
				switch v := mk[k].(type) {
				case float64:
					mk[k] = float64(f(int(v)))
				case int:
					mk[k] = f(v)
				}
			}
		}
	}
}

const messageColumns = `m.id, m.text, m.summary, m.confidence, m.status, m.query, m.evidence, m.evidence_time,
	m.input_text, m.artifact_path, m.model, m.engine, m.error, m.created_by, m.created_at, m.round_id,
	m.round_config, m.request_id, m.parsed_metadata, m.artifact_archived, m.purged`

// roundJSON is the stored form of a message's effective round.
type roundJSON struct {
	ID           string `json:"id"`
	EnableSearch bool   `json:"enable_search"`
	Engine       string `json:"engine"`
	MaxResults   int    `json:"max_results"`
	ContextScale string `json:"context_scale"`
	TimeoutMS    int64  `json:"timeout_ms"`
	BudgetTokens int    `json:"budget_tokens"`
}

var scaleNames = map[grounding.ContextScale]string{
	grounding.ScaleLow: "low", grounding.ScaleMedium: "medium", grounding.ScaleHigh: "high",
}

func fromRound(rc grounding.RoundConfig) roundJSON {
	r := roundJSON{
		ID: rc.ID, EnableSearch: rc.EnableSearch == nil || *rc.EnableSearch, Engine: rc.Engine.String(),
		MaxResults: grounding.DefaultMaxResults, ContextScale: scaleNames[rc.ContextScale],
		TimeoutMS: rc.Timeout.Milliseconds(), BudgetTokens: rc.BudgetTokens,
	}
	if rc.MaxResults != nil {
		r.MaxResults = *rc.MaxResults
	}
	return r
}

func (r roundJSON) toRound() grounding.RoundConfig {
	search, n := r.EnableSearch, r.MaxResults
	rc := grounding.RoundConfig{
		ID: r.ID, EnableSearch: &search, Engine: grounding.ParseEngine(r.Engine), MaxResults: &n,
		Timeout: time.Duration(r.TimeoutMS) * time.Millisecond, BudgetTokens: r.BudgetTokens,
	}
	for s, name := range scaleNames {
		if name == r.ContextScale {
			rc.ContextScale = s
		}
	}
	return rc
}

type scanner interface{ Scan(dest ...any) error }

func scanMessage(row scanner) (*grounding.Message, error) {
	var (
		m                      grounding.Message
		conf                   sql.NullFloat64
		status, engine, evJSON string
		roundJS, parsedJS      string
		evTime, created        int64
	)
	if err := row.Scan(&m.ID, &m.Text, &m.Summary, &conf, &status, &m.Context.Query, &evJSON, &evTime,
		&m.InputText, &m.ArtifactPath, &m.Model, &engine, &m.Error, &m.CreatedBy, &created, &m.Round.ID,
		&roundJS, &m.RequestID, &parsedJS, &m.ArtifactArchived, &m.Purged); err != nil {
		return nil, err
	}
	if roundJS != "" {
		var r roundJSON
		if err := json.Unmarshal([]byte(roundJS), &r); err != nil {
			return nil, fmt.Errorf("decoding round of %s: %w", m.ID, err)
		}
		m.Round = r.toRound()
	}
	if parsedJS != "" {
		if err := json.Unmarshal([]byte(parsedJS), &m.Parsed); err != nil {
			return nil, fmt.Errorf("decoding parsed metadata of %s: %w", m.ID, err)
		}
	}
	if conf.Valid {
		m.Confidence = &conf.Float64
	}
	m.Status = grounding.ParseStatus(status)
	m.Engine = grounding.ParseEngine(engine)
	m.Context.Timestamp = sqlstore.FromMicros(evTime)
	m.CreateTime = sqlstore.FromMicros(created)
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
	m.ArtifactPath = s.artifacts.Display(m.ArtifactPath)
	if err := s.fill(ctx, []*grounding.Message{m}); err != nil {
		return nil, err
	}
	return m, nil
}

// legacyCitationID is the stable id of a citation stored before citations
// had ids: a name-based UUID of its message and position.
func legacyCitationID(messageID string, position int) string {
	return uuid.NewSHA1(uuid.NameSpaceURL, []byte("groundcrew:citation:"+messageID+"/"+strconv.Itoa(position))).String()
}

// fill loads the citations and reviews of msgs.
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
		start_index, end_index, confidence_score, fetch_time, mime_type, favicon_url, source_index,
		position, id, create_time, created_by, raw_html_path
		FROM citations WHERE message_id IN (`+in+`) ORDER BY message_id, position`, args...)
	if err != nil {
		return fmt.Errorf("reading citations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var (
			id, html  string
			c         grounding.Citation
			fetch, at int64
			position  int
		)
		if err := rows.Scan(&id, &c.URL, &c.Domain, &c.Title, &c.Snippet, &c.SnippetTruncated, &c.StartIndex,
			&c.EndIndex, &c.ConfidenceScore, &fetch, &c.MimeType, &c.FaviconURL, &c.SourceIndex,
			&position, &c.ID, &at, &c.CreatedBy, &html); err != nil {
			return fmt.Errorf("reading citations: %w", err)
		}
		c.FetchTime, c.CreateTime, c.HasRawHTML = sqlstore.FromMicros(fetch), sqlstore.FromMicros(at), html != ""
		if c.ID == "" {
			c.ID = legacyCitationID(id, position)
		}
		byID[id].Citations = append(byID[id].Citations, c)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("reading citations: %w", err)
	}
	rrows, err := s.db.QueryContext(ctx, `SELECT message_id, reviewer_id, notes, previous_status, new_status,
		review_time, actor FROM message_reviews WHERE message_id IN (`+in+`) ORDER BY review_time DESC, id DESC`, args...)
	if err != nil {
		return fmt.Errorf("reading reviews: %w", err)
	}
	defer rrows.Close()
	for rrows.Next() {
		var (
			id, prev, next string
			r              grounding.Review
			at             int64
		)
		if err := rrows.Scan(&id, &r.ReviewerID, &r.Notes, &prev, &next, &at, &r.Actor); err != nil {
			return fmt.Errorf("reading reviews: %w", err)
		}
		r.PreviousStatus, r.NewStatus = grounding.ParseStatus(prev), grounding.ParseStatus(next)
		r.ReviewTime = sqlstore.FromMicros(at)
		byID[id].Reviews = append(byID[id].Reviews, r) // newest first
	}
	if err := rrows.Err(); err != nil {
		return fmt.Errorf("reading reviews: %w", err)
	}
	for _, m := range msgs {
		if len(m.Reviews) > 0 {
			latest := m.Reviews[0]
			m.Review = &latest
		}
	}
	return nil
}

// filterKey is the query a page token is scoped to (sqlstore's scoped
// cursor), so a token is not reused with other filters.
func filterKey(f grounding.ListFilter) string {
	return fmt.Sprintf("%s|%s|%d|%d", f.Status, f.Domain, sqlstore.Micros(f.CreatedAfter), sqlstore.Micros(f.CreatedBefore))
}

// parsePageToken reads a token written by List for the same filters.
func parsePageToken(tok string, f grounding.ListFilter) (sqlstore.Cursor, error) {
	c, err := sqlstore.ParseScopedCursor(tok, filterKey(f))
	switch {
	case errors.Is(err, sqlstore.ErrCursorScope):
		return c, fmt.Errorf("%w: it belongs to a query with other filters", grounding.ErrInvalidPageToken)
	case err != nil:
		return c, grounding.ErrInvalidPageToken
	}
	return c, nil
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
		where = append(where, "m.created_at >= "+arg(sqlstore.Micros(f.CreatedAfter)))
	}
	if !f.CreatedBefore.IsZero() {
		where = append(where, "m.created_at < "+arg(sqlstore.Micros(f.CreatedBefore)))
	}
	if f.PageToken != "" {
		c, err := parsePageToken(f.PageToken, f)
		if err != nil {
			return nil, "", err
		}
		ta, ia := arg(c.At), arg(c.ID)
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
		m.ArtifactPath = s.artifacts.Display(m.ArtifactPath)
		msgs = append(msgs, m)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("listing messages: %w", err)
	}
	next := ""
	if len(msgs) > f.PageSize {
		msgs = msgs[:f.PageSize]
		last := msgs[len(msgs)-1]
		next = sqlstore.CursorAfter(last.CreateTime, last.ID).ScopedToken(filterKey(f))
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
	at := sqlstore.Micros(r.ReviewTime)
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
	_, err = tx.ExecContext(ctx, `INSERT INTO message_reviews (id, message_id, reviewer_id, notes, previous_status, new_status, review_time, actor)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		uuid.Must(uuid.NewV7()).String(), id, r.ReviewerID, r.Notes, r.PreviousStatus.String(), to.String(), at, r.Actor)
	if err != nil {
		return fmt.Errorf("recording review: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("reviewing message: %w", err)
	}
	return nil
}

// RawHTML implements grounding.Store.
func (s *Store) RawHTML(ctx context.Context, messageID, citationID string) (*grounding.RawHTML, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT position, id, url, fetch_time, raw_html_path, raw_html_archived
		FROM citations WHERE message_id = $1 ORDER BY position`, messageID)
	if err != nil {
		return nil, fmt.Errorf("reading citations of %s: %w", messageID, err)
	}
	defer rows.Close()
	var (
		found bool
		out   grounding.RawHTML
		path  string
	)
	for rows.Next() {
		var (
			position int
			id       string
			fetch    int64
			archived bool
			u, p     string
		)
		if err := rows.Scan(&position, &id, &u, &fetch, &p, &archived); err != nil {
			return nil, fmt.Errorf("reading citations of %s: %w", messageID, err)
		}
		if id == "" {
			id = legacyCitationID(messageID, position)
		}
		if id == citationID {
			found, path = true, p
			out = grounding.RawHTML{URL: u, FetchTime: sqlstore.FromMicros(fetch), Archived: archived}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading citations of %s: %w", messageID, err)
	}
	if !found {
		return nil, grounding.ErrNotFound
	}
	if path == "" {
		return nil, grounding.ErrNoRawHTML
	}
	b, err := s.artifacts.Read(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, grounding.ErrNoRawHTML
	}
	if err != nil {
		return nil, err
	}
	out.HTML = string(b)
	return &out, nil
}
