package store

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
)

// DefaultRetention is the raw-data period: how long raw artifacts and page
// HTML are kept as written before they are archived.
const DefaultRetention = 180 * 24 * time.Hour

// retentionBatch bounds the rows handled per query.
const retentionBatch = 500

// Retention runs the two retention rules:
//
//   - after MaxAge (the raw-data period) a message's raw artifact and its
//     citations' page HTML are archived as Mode says (compressed into
//     DATA_DIR/archive, or desensitised in place), not deleted; the
//     message, citations and reviews are kept;
//   - after MessageMaxAge, when set, the message's bodies are purged too:
//     text, summary, input text, evidence and snippets are emptied and
//     every artifact (raw, archived, page HTML) is deleted; ids, status,
//     URLs, domains, times and reviews are kept.
type Retention struct {
	Store *Store
	// MaxAge is the raw-data period (DefaultRetention when 0).
	MaxAge time.Duration
	// Mode is how artifacts are archived (ArchiveCompress when empty).
	Mode ArchiveMode
	// MessageMaxAge purges message bodies older than it; 0 keeps them.
	MessageMaxAge time.Duration
	// Interval is the period of Run (1 hour when 0).
	Interval time.Duration
	// Now is the clock (time.Now when nil); tests inject one.
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOnce archives every artifact past the raw-data period and purges every
// message past the message retention, and returns how many artifacts it
// archived and messages it purged.
func (r *Retention) RunOnce(ctx context.Context) (int, error) {
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	maxAge := r.MaxAge
	if maxAge <= 0 {
		maxAge = DefaultRetention
	}
	mode := r.Mode
	if mode == "" {
		mode = ArchiveCompress
	}
	done := 0
	if r.MessageMaxAge > 0 {
		n, err := r.purge(ctx, now().Add(-r.MessageMaxAge))
		done += n
		if err != nil {
			return done, err
		}
	}
	n, err := r.archive(ctx, now().Add(-maxAge), mode)
	return done + n, err
}

// archive archives the artifacts of messages created before cutoff.
func (r *Retention) archive(ctx context.Context, cutoff time.Time, mode ArchiveMode) (int, error) {
	s, done := r.Store, 0
	for {
		items, err := s.unarchived(ctx, cutoff, retentionBatch)
		if err != nil {
			return done, err
		}
		var errs []error
		for _, it := range items {
			to, err := s.artifacts.Archive(it.path, mode)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if err := s.markArchived(ctx, it, to); err != nil {
				errs = append(errs, err)
				continue
			}
			done++
		}
		if len(errs) > 0 {
			// Stop rather than spin on the same rows; the next run retries.
			return done, errors.Join(errs...)
		}
		if len(items) < retentionBatch {
			return done, nil
		}
	}
}

// purge empties the bodies of messages created before cutoff and deletes
// their artifacts.
func (r *Retention) purge(ctx context.Context, cutoff time.Time) (int, error) {
	s, done := r.Store, 0
	for {
		ids, err := s.unpurged(ctx, cutoff, retentionBatch)
		if err != nil {
			return done, err
		}
		var errs []error
		for _, id := range ids {
			if err := s.purgeMessage(ctx, id); err != nil {
				errs = append(errs, err)
				continue
			}
			done++
		}
		if len(errs) > 0 {
			return done, errors.Join(errs...)
		}
		if len(ids) < retentionBatch {
			return done, nil
		}
	}
}

// Run runs the rules at start and then every Interval until ctx is done.
func (r *Retention) Run(ctx context.Context) {
	interval := r.Interval
	if interval <= 0 {
		interval = time.Hour
	}
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		n, err := r.RunOnce(ctx)
		switch {
		case err != nil && ctx.Err() == nil:
			r.Logger.WarnContext(ctx, "retention failed", "error", err, "done", n)
		case n > 0:
			r.Logger.InfoContext(ctx, "retention archived artifacts or purged messages", "done", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// archiveItem is an artifact to archive: a message's raw artifact
// (position < 0) or a citation's page HTML.
type archiveItem struct {
	messageID string
	position  int
	path      string
}

// unarchived lists up to limit artifacts of messages created before
// cutoff that are not archived yet.
func (s *Store) unarchived(ctx context.Context, cutoff time.Time, limit int) ([]archiveItem, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id, -1, artifact_path, created_at FROM annotated_messages
		WHERE created_at < $1 AND artifact_path <> '' AND NOT artifact_archived
		UNION ALL
		SELECT c.message_id, c.position, c.raw_html_path, m.created_at FROM citations c
		JOIN annotated_messages m ON m.id = c.message_id
		WHERE m.created_at < $1 AND c.raw_html_path <> '' AND NOT c.raw_html_archived
		ORDER BY 4 LIMIT $2`, sqlstore.Micros(cutoff), limit)
	if err != nil {
		return nil, fmt.Errorf("finding artifacts to archive: %w", err)
	}
	defer rows.Close()
	var items []archiveItem
	for rows.Next() {
		var (
			it archiveItem
			at int64
		)
		if err := rows.Scan(&it.messageID, &it.position, &it.path, &at); err != nil {
			return nil, fmt.Errorf("finding artifacts to archive: %w", err)
		}
		items = append(items, it)
	}
	return items, rows.Err()
}

// markArchived records that it was archived to path (empty when the file
// was already gone).
func (s *Store) markArchived(ctx context.Context, it archiveItem, path string) error {
	var err error
	if it.position < 0 {
		_, err = s.db.ExecContext(ctx, `UPDATE annotated_messages SET artifact_path = $1, artifact_archived = TRUE
			WHERE id = $2 AND artifact_path = $3`, path, it.messageID, it.path)
	} else {
		_, err = s.db.ExecContext(ctx, `UPDATE citations SET raw_html_path = $1, raw_html_archived = TRUE
			WHERE message_id = $2 AND position = $3 AND raw_html_path = $4`, path, it.messageID, it.position, it.path)
	}
	if err != nil {
		return fmt.Errorf("recording archived artifact of %s: %w", it.messageID, err)
	}
	return nil
}

// unpurged lists up to limit messages created before cutoff whose bodies
// are still kept.
func (s *Store) unpurged(ctx context.Context, cutoff time.Time, limit int) ([]string, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM annotated_messages WHERE NOT purged AND created_at < $1
		ORDER BY created_at LIMIT $2`, sqlstore.Micros(cutoff), limit)
	if err != nil {
		return nil, fmt.Errorf("finding messages to purge: %w", err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("finding messages to purge: %w", err)
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// purgeMessage deletes a message's artifacts and empties its bodies. The
// files go first: should the update then fail, the next run finds the
// message again and the missing files are no error.
func (s *Store) purgeMessage(ctx context.Context, id string) error {
	var paths []string
	var artifact string
	if err := s.db.QueryRowContext(ctx, `SELECT artifact_path FROM annotated_messages WHERE id = $1`, id).Scan(&artifact); err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	if artifact != "" {
		paths = append(paths, artifact)
	}
	rows, err := s.db.QueryContext(ctx, `SELECT raw_html_path FROM citations WHERE message_id = $1 AND raw_html_path <> ''`, id)
	if err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	for rows.Next() {
		var p string
		if err := rows.Scan(&p); err != nil {
			rows.Close()
			return fmt.Errorf("purging message %s: %w", id, err)
		}
		paths = append(paths, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	for _, p := range paths {
		if err := s.artifacts.Remove(p); err != nil {
			return fmt.Errorf("purging message %s: %w", id, err)
		}
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `UPDATE annotated_messages SET text = '', summary = '', input_text = '',
		evidence = '[]', query = '', artifact_path = '', purged = TRUE WHERE id = $1`, id); err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE citations SET snippet = '', raw_html_path = '' WHERE message_id = $1`, id); err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("purging message %s: %w", id, err)
	}
	return nil
}
