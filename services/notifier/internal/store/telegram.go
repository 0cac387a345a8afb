package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
)

// MigratedChat is the chat id that Telegram chat moved to when its group
// became a supergroup, following later moves too; ok is false when it
// never moved.
func (s *Store) MigratedChat(ctx context.Context, chat string) (to string, ok bool, err error) {
	to = chat
	// A supergroup does not move again, but a record is followed a few
	// hops in case one was recorded against an intermediate id.
	for range 3 {
		var next string
		err := s.db.QueryRowContext(ctx, `SELECT to_chat FROM notifier_telegram_chat_migrations WHERE from_chat = $1`, to).Scan(&next)
		if errors.Is(err, sql.ErrNoRows) {
			break
		}
		if err != nil {
			return "", false, fmt.Errorf("reading the migration of chat %s: %w", chat, err)
		}
		to, ok = next, true
	}
	return to, ok, nil
}

// RecordChatMigration keeps that chat from became chat to (the latest
// record for from wins), and moves the alert groups of chat from to chat
// to, so that their next notifications, edits and button presses belong to
// the chat the group now is.
func (s *Store) RecordChatMigration(ctx context.Context, from, to string, at time.Time) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("recording the migration of chat %s to %s: %w", from, to, err)
	}
	defer func() { _ = tx.Rollback() }()
	if _, err := tx.ExecContext(ctx, `INSERT INTO notifier_telegram_chat_migrations (from_chat, to_chat, migrated_at) VALUES ($1, $2, $3)
		ON CONFLICT (from_chat) DO UPDATE SET to_chat = excluded.to_chat, migrated_at = excluded.migrated_at`,
		from, to, sqlstore.Micros(at)); err != nil {
		return fmt.Errorf("recording the migration of chat %s to %s: %w", from, to, err)
	}
	// A group of the same key may already exist in the new chat (made
	// after the move by another instance): that one stays, the old one
	// keeps its chat.
	if _, err := tx.ExecContext(ctx, `UPDATE notifier_alert_groups SET destination = $2, updated_at = $3 WHERE destination = $1
		AND NOT EXISTS (SELECT 1 FROM notifier_alert_groups n WHERE n.destination = $2 AND n.source = notifier_alert_groups.source AND n.group_key = notifier_alert_groups.group_key)`,
		from, to, sqlstore.Micros(at)); err != nil {
		return fmt.Errorf("moving the alert groups of chat %s to %s: %w", from, to, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("recording the migration of chat %s to %s: %w", from, to, err)
	}
	return nil
}

// SetGroupRoot records a new root message for a group (the old one could
// no longer be edited and a new one was sent in its place).
func (s *Store) SetGroupRoot(ctx context.Context, groupID, messageID string, at time.Time) error {
	if _, err := s.db.ExecContext(ctx, `UPDATE notifier_alert_groups SET root_message_id = $2, updated_at = $3 WHERE id = $1`,
		groupID, messageID, sqlstore.Micros(at)); err != nil {
		return fmt.Errorf("recording the new root of alert group %s: %w", groupID, err)
	}
	return nil
}
