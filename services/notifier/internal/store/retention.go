package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
)

// DefaultAlertRetention is how long alerts that are done with (delivered,
// failed, or recorded as repeats) are kept: NOTIFIER_ALERT_RETENTION.
const DefaultAlertRetention = 90 * 24 * time.Hour

// purgeBatch bounds the rows one statement deletes, so that a first purge
// of a large backlog does not hold the database for long.
const purgeBatch = 500

// Purged counts what PurgeAlerts deleted.
type Purged struct {
	Alerts, Groups int
}

// PurgeAlerts deletes the alerts received before cutoff that are done with
// (DELIVERED, FAILED or DUPLICATE; alerts still on their way are kept
// whatever their age), then the groups left without alerts whose last
// change is before cutoff, with their notifications.
func (s *Store) PurgeAlerts(ctx context.Context, cutoff time.Time) (Purged, error) {
	var done Purged
	at := sqlstore.Micros(cutoff)
	for {
		res, err := s.db.ExecContext(ctx, `DELETE FROM notifier_alerts WHERE id IN (
			SELECT id FROM notifier_alerts WHERE received_at < $1 AND status IN ($2, $3, $4)
			ORDER BY received_at LIMIT $5)`,
			at, string(alert.StatusDelivered), string(alert.StatusFailed), string(alert.StatusDuplicate), purgeBatch)
		if err != nil {
			return done, fmt.Errorf("purging alerts received before %s: %w", cutoff.Format(time.RFC3339), err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return done, fmt.Errorf("purging alerts: %w", err)
		}
		done.Alerts += int(n)
		if n < purgeBatch {
			break
		}
	}
	for {
		n, err := s.purgeGroups(ctx, at)
		done.Groups += n
		if err != nil {
			return done, err
		}
		if n < purgeBatch {
			return done, nil
		}
	}
}

// purgeGroups deletes up to purgeBatch groups unchanged since cutoff that
// have no alert left, and their notifications, in one transaction.
func (s *Store) purgeGroups(ctx context.Context, cutoff int64) (int, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return 0, fmt.Errorf("purging alert groups: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	rows, err := tx.QueryContext(ctx, `SELECT id FROM notifier_alert_groups g WHERE g.updated_at < $1
		AND NOT EXISTS (SELECT 1 FROM notifier_alerts a WHERE a.group_id = g.id)
		ORDER BY g.updated_at LIMIT $2`, cutoff, purgeBatch)
	if err != nil {
		return 0, fmt.Errorf("finding alert groups to purge: %w", err)
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, fmt.Errorf("finding alert groups to purge: %w", err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, fmt.Errorf("finding alert groups to purge: %w", err)
	}
	for _, id := range ids {
		if _, err := tx.ExecContext(ctx, `DELETE FROM notifier_group_notifications WHERE group_id = $1`, id); err != nil {
			return 0, fmt.Errorf("purging the notifications of alert group %s: %w", id, err)
		}
		// Checked again in the statement: an alert that arrived for the
		// group since the query above keeps it.
		if _, err := tx.ExecContext(ctx, `DELETE FROM notifier_alert_groups WHERE id = $1
			AND NOT EXISTS (SELECT 1 FROM notifier_alerts a WHERE a.group_id = $1)`, id); err != nil {
			return 0, fmt.Errorf("purging alert group %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return 0, fmt.Errorf("purging alert groups: %w", err)
	}
	return len(ids), nil
}

// Retention purges alerts past their retention period, at start and then
// every Interval.
type Retention struct {
	Store *Store
	// MaxAge is NOTIFIER_ALERT_RETENTION; 0 keeps alerts for ever.
	MaxAge time.Duration
	// Interval is the period of Run (1 hour when 0).
	Interval time.Duration
	// Now is the clock (time.Now when nil); tests inject one.
	Now    func() time.Time
	Logger *slog.Logger
}

// RunOnce purges what is past MaxAge now.
func (r *Retention) RunOnce(ctx context.Context) (Purged, error) {
	if r.MaxAge <= 0 {
		return Purged{}, nil
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	return r.Store.PurgeAlerts(ctx, now().Add(-r.MaxAge))
}

// Run runs RunOnce at start and then every Interval until ctx is done.
func (r *Retention) Run(ctx context.Context) {
	if r.MaxAge <= 0 {
		return
	}
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
			r.Logger.WarnContext(ctx, "alert retention failed; the next run retries", "error", err, "alerts", n.Alerts, "groups", n.Groups)
		case n.Alerts > 0 || n.Groups > 0:
			r.Logger.InfoContext(ctx, "alert retention purged old alerts", "alerts", n.Alerts, "groups", n.Groups, "retention", r.MaxAge.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
