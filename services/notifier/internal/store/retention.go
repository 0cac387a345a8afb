package store

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

// DefaultAlertRetention is how long alerts that are done with (delivered,
// failed, or recorded as repeats) are kept: NOTIFIER_ALERT_RETENTION.
const DefaultAlertRetention = 90 * 24 * time.Hour

// purgeBatch bounds the rows one statement deletes, so that a first purge
// of a large backlog does not hold the database for long.
const purgeBatch = 500

// Purged counts what PurgeAlerts deleted.
type Purged struct {
	// Alerts and Groups are the alerts done with and the groups left
	// without alerts (with their notifications and escalation).
	Alerts, Groups int
	// Messages are SendMessage records that are done with (DELIVERED or
	// FAILED).
	Messages int
	// ChatMessages are the chat agent's stored conversation lines.
	ChatMessages int
	// Updates are the records of handled Telegram updates (kept so that a
	// redelivered update is answered once; Telegram redelivers for hours,
	// not months).
	Updates int
}

// Total is the number of rows deleted.
func (p Purged) Total() int {
	return p.Alerts + p.Groups + p.Messages + p.ChatMessages + p.Updates
}

// PurgeAlerts deletes what is past cutoff and done with: the alerts
// received before it that are DELIVERED, FAILED or DUPLICATE (alerts still
// on their way are kept whatever their age), then the groups left without
// alerts whose last change is before it, with their notifications and
// escalation; SendMessage records created before it that are DELIVERED or
// FAILED; the chat history sent before it; and the records of Telegram
// updates handled before it.
func (s *Store) PurgeAlerts(ctx context.Context, cutoff time.Time) (Purged, error) {
	var done Purged
	at := sqlstore.Micros(cutoff)
	var err error
	if done.Alerts, err = s.purgeBatched(ctx, "alerts", `DELETE FROM notifier_alerts WHERE id IN (
		SELECT id FROM notifier_alerts WHERE received_at < $1 AND status IN ($2, $3, $4)
		ORDER BY received_at LIMIT $5)`,
		at, string(alert.StatusDelivered), string(alert.StatusFailed), string(alert.StatusDuplicate)); err != nil {
		return done, err
	}
	for {
		n, err := s.purgeGroups(ctx, at)
		done.Groups += n
		if err != nil {
			return done, err
		}
		if n < purgeBatch {
			break
		}
	}
	if done.Messages, err = s.purgeBatched(ctx, "messages", `DELETE FROM notifier_messages WHERE id IN (
		SELECT id FROM notifier_messages WHERE created_at < $1 AND status IN ($2, $3)
		ORDER BY created_at LIMIT $4)`,
		at, string(message.StatusDelivered), string(message.StatusFailed)); err != nil {
		return done, err
	}
	if done.ChatMessages, err = s.purgeBatched(ctx, "chat history", `DELETE FROM notifier_chat_messages WHERE (chat_id, message_id) IN (
		SELECT chat_id, message_id FROM notifier_chat_messages WHERE sent_at < $1
		ORDER BY sent_at LIMIT $2)`, at); err != nil {
		return done, err
	}
	done.Updates, err = s.purgeBatched(ctx, "handled Telegram updates", `DELETE FROM notifier_telegram_handled WHERE (bot_id, chat_id, update_id) IN (
		SELECT bot_id, chat_id, update_id FROM notifier_telegram_handled WHERE handled_at < $1
		ORDER BY handled_at LIMIT $2)`, at)
	return done, err
}

// purgeBatched runs query (a DELETE whose last parameter is the batch
// size) until a run deletes fewer than purgeBatch rows, and returns how
// many it deleted.
func (s *Store) purgeBatched(ctx context.Context, what, query string, args ...any) (int, error) {
	args = append(args, purgeBatch)
	total := 0
	for {
		res, err := s.db.ExecContext(ctx, query, args...)
		if err != nil {
			return total, fmt.Errorf("purging %s: %w", what, err)
		}
		n, err := res.RowsAffected()
		if err != nil {
			return total, fmt.Errorf("purging %s: %w", what, err)
		}
		total += int(n)
		if n < purgeBatch {
			return total, nil
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
		for _, table := range []string{"notifier_group_notifications", "notifier_escalation_events", "notifier_escalations"} {
			// table is one of the constants above, never input.
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE group_id = $1`, id); err != nil {
				return 0, fmt.Errorf("purging %s of alert group %s: %w", table, id, err)
			}
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
			r.Logger.WarnContext(ctx, "alert retention failed; the next run retries", "error", err, "purged", n.Total())
		case n.Total() > 0:
			r.Logger.InfoContext(ctx, "alert retention purged old records", "alerts", n.Alerts, "groups", n.Groups,
				"messages", n.Messages, "chat_messages", n.ChatMessages, "telegram_updates", n.Updates, "retention", r.MaxAge.String())
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
