package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

const messageColumns = `id, idempotency_key, request_hash, sender, chat_id, text, buttons, status, attempts,
	error, delivery_id, destination, created_at, updated_at, delivered_at, actor, approval_id`

// ClaimMessage inserts r; when r's idempotency key is already stored it
// inserts nothing and returns the stored record (nil after an insert).
func (s *Store) ClaimMessage(ctx context.Context, r *message.Record) (*message.Record, error) {
	buttons, err := json.Marshal(nonNilButtons(r.Buttons))
	if err != nil {
		return nil, fmt.Errorf("encoding buttons of message %s: %w", r.ID, err)
	}
	var key sql.NullString
	if r.IdempotencyKey != "" {
		key = sql.NullString{String: r.IdempotencyKey, Valid: true}
	}
	res, err := s.db.ExecContext(ctx, `INSERT INTO notifier_messages (`+messageColumns+`)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)
		ON CONFLICT (idempotency_key) DO NOTHING`,
		r.ID, key, r.RequestHash, r.Sender, r.ChatID, r.Text, string(buttons), string(r.Status), r.Attempts,
		r.Error, r.DeliveryID, r.Destination, sqlstore.Micros(r.CreatedAt), sqlstore.Micros(r.UpdatedAt), sqlstore.Micros(r.DeliveredAt), r.Actor, r.ApprovalID)
	if err != nil {
		return nil, fmt.Errorf("inserting message %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return nil, fmt.Errorf("inserting message %s: %w", r.ID, err)
	} else if n == 1 {
		return nil, nil
	}
	stored, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM notifier_messages WHERE idempotency_key = $1`, r.IdempotencyKey))
	if err != nil {
		return nil, fmt.Errorf("reading the message stored under an idempotency key: %w", err)
	}
	return stored, nil
}

// SaveMessage writes a message's status, attempts, error and delivery.
func (s *Store) SaveMessage(ctx context.Context, r *message.Record) error {
	res, err := s.db.ExecContext(ctx, `UPDATE notifier_messages SET
		status = $2, attempts = $3, error = $4, delivery_id = $5, destination = $6, updated_at = $7, delivered_at = $8
		WHERE id = $1`,
		r.ID, string(r.Status), r.Attempts, r.Error, r.DeliveryID, r.Destination, sqlstore.Micros(r.UpdatedAt), sqlstore.Micros(r.DeliveredAt))
	if err != nil {
		return fmt.Errorf("saving message %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err == nil && n == 0 {
		return fmt.Errorf("saving message %s: %w", r.ID, ErrNotFound)
	}
	return nil
}

// GetMessage returns the stored message with id, or ErrNotFound.
func (s *Store) GetMessage(ctx context.Context, id string) (*message.Record, error) {
	r, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM notifier_messages WHERE id = $1`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("message %q: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading message %q: %w", id, err)
	}
	return r, nil
}

// ApprovalMessage returns the message delivered to Telegram with an
// approval's buttons (the latest, should it have been sent twice); found
// is false when there is none (never sent, failed, or only logged
// offline).
func (s *Store) ApprovalMessage(ctx context.Context, approvalID string) (message.ApprovalSent, bool, error) {
	if approvalID == "" {
		return message.ApprovalSent{}, false, nil
	}
	r, err := scanMessage(s.db.QueryRowContext(ctx, `SELECT `+messageColumns+` FROM notifier_messages
		WHERE approval_id = $1 AND status = $2 ORDER BY delivered_at DESC LIMIT 1`, approvalID, string(message.StatusDelivered)))
	if errors.Is(err, sql.ErrNoRows) {
		return message.ApprovalSent{}, false, nil
	}
	if err != nil {
		return message.ApprovalSent{}, false, fmt.Errorf("reading the message of approval %s: %w", approvalID, err)
	}
	chatID, err1 := strconv.ParseInt(r.Destination, 10, 64)
	msgID, err2 := strconv.ParseInt(r.DeliveryID, 10, 64)
	if err1 != nil || err2 != nil {
		// Delivered to the log, or to an @channel name no callback names.
		return message.ApprovalSent{}, false, nil
	}
	return message.ApprovalSent{ChatID: chatID, MessageID: msgID, Text: r.Text}, true, nil
}

func scanMessage(row scanner) (*message.Record, error) {
	var (
		r                         message.Record
		key                       sql.NullString
		status, buttons           string
		created, updated, deliver int64
	)
	if err := row.Scan(&r.ID, &key, &r.RequestHash, &r.Sender, &r.ChatID, &r.Text, &buttons, &status, &r.Attempts,
		&r.Error, &r.DeliveryID, &r.Destination, &created, &updated, &deliver, &r.Actor, &r.ApprovalID); err != nil {
		return nil, err
	}
	r.IdempotencyKey, r.Status = key.String, message.Status(status)
	if err := json.Unmarshal([]byte(buttons), &r.Buttons); err != nil {
		return nil, fmt.Errorf("decoding buttons of message %s: %w", r.ID, err)
	}
	if len(r.Buttons) == 0 {
		r.Buttons = nil
	}
	r.CreatedAt, r.UpdatedAt, r.DeliveredAt = sqlstore.FromMicros(created), sqlstore.FromMicros(updated), sqlstore.FromMicros(deliver)
	return &r, nil
}

func nonNilButtons(b []message.Button) []message.Button {
	if b == nil {
		return []message.Button{}
	}
	return b
}
