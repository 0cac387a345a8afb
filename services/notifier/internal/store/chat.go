package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

// SaveChatMessage stores m, replacing an earlier copy (an edit) with the
// same chat and message id.
func (s *Store) SaveChatMessage(ctx context.Context, m message.ChatMessage) error {
	return s.saveChatMessage(ctx, m, `DO UPDATE SET
		chat_type = excluded.chat_type, speaker = excluded.speaker, speaker_id = excluded.speaker_id,
		is_agent = excluded.is_agent, reply_to_id = excluded.reply_to_id, parts = excluded.parts`)
}

// SaveChatMessageIfAbsent stores m unless the chat already has a message
// with its id (used for the replied-to message an update carries, which is
// older than what is stored).
func (s *Store) SaveChatMessageIfAbsent(ctx context.Context, m message.ChatMessage) error {
	return s.saveChatMessage(ctx, m, `DO NOTHING`)
}

// saveChatMessage inserts m; onConflict is what a stored message with its
// chat and id does instead (a constant of the callers, never input).
func (s *Store) saveChatMessage(ctx context.Context, m message.ChatMessage, onConflict string) error {
	parts, err := json.Marshal(m.Parts)
	if err != nil {
		return fmt.Errorf("encoding parts of message %d in chat %d: %w", m.MessageID, m.ChatID, err)
	}
	_, err = s.db.ExecContext(ctx, `INSERT INTO notifier_chat_messages
		(chat_id, message_id, chat_type, speaker, speaker_id, is_agent, reply_to_id, parts, sent_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (chat_id, message_id) `+onConflict,
		m.ChatID, m.MessageID, m.ChatType, m.Speaker, m.SpeakerID, m.IsAgent, m.ReplyToID, string(parts), sqlstore.Micros(m.SentAt))
	if err != nil {
		return fmt.Errorf("saving message %d in chat %d: %w", m.MessageID, m.ChatID, err)
	}
	return nil
}

// ChatHistory returns the last limit messages of a chat, oldest first.
func (s *Store) ChatHistory(ctx context.Context, chatID int64, limit int) ([]message.ChatMessage, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT chat_id, message_id, chat_type, speaker, speaker_id, is_agent, reply_to_id, parts, sent_at
		FROM notifier_chat_messages WHERE chat_id = $1 ORDER BY sent_at DESC, message_id DESC LIMIT $2`, chatID, limit)
	if err != nil {
		return nil, fmt.Errorf("reading history of chat %d: %w", chatID, err)
	}
	defer rows.Close()
	var out []message.ChatMessage
	for rows.Next() {
		var (
			m     message.ChatMessage
			parts string
			sent  int64
		)
		if err := rows.Scan(&m.ChatID, &m.MessageID, &m.ChatType, &m.Speaker, &m.SpeakerID, &m.IsAgent, &m.ReplyToID, &parts, &sent); err != nil {
			return nil, fmt.Errorf("reading history of chat %d: %w", chatID, err)
		}
		if err := json.Unmarshal([]byte(parts), &m.Parts); err != nil {
			return nil, fmt.Errorf("decoding message %d of chat %d: %w", m.MessageID, chatID, err)
		}
		m.SentAt = sqlstore.FromMicros(sent)
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading history of chat %d: %w", chatID, err)
	}
	// Newest were read first so that LIMIT keeps the latest; hand them back
	// chronologically.
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return out, nil
}

// UpdateOutcome returns what was done with a handled Telegram update, and
// false when it has not been handled.
func (s *Store) UpdateOutcome(ctx context.Context, k message.UpdateKey) (string, bool, error) {
	var outcome string
	err := s.db.QueryRowContext(ctx, `SELECT outcome FROM notifier_telegram_handled
		WHERE bot_id = $1 AND chat_id = $2 AND update_id = $3`, k.BotID, k.ChatID, k.UpdateID).Scan(&outcome)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("reading update %d of chat %d: %w", k.UpdateID, k.ChatID, err)
	}
	return outcome, true, nil
}

// RecordUpdate marks a Telegram update handled with its outcome. It reports
// false when the update was already recorded (by a concurrent delivery).
func (s *Store) RecordUpdate(ctx context.Context, k message.UpdateKey, outcome string, at time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO notifier_telegram_handled (bot_id, chat_id, update_id, outcome, handled_at)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT (bot_id, chat_id, update_id) DO NOTHING`,
		k.BotID, k.ChatID, k.UpdateID, outcome, sqlstore.Micros(at))
	if err != nil {
		return false, fmt.Errorf("recording update %d of chat %d: %w", k.UpdateID, k.ChatID, err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return false, fmt.Errorf("recording update %d of chat %d: %w", k.UpdateID, k.ChatID, err)
	}
	return n == 1, nil
}
