// Package outbound sends the notifier's messages that are not alerts
// (SendMessage): research summaries, approval requests with buttons.
//
// Delivery is synchronous: Send stores the message, delivers it through the
// same Transport (Telegram, or the delivery log offline) and pacing as
// alerts, and returns where it went, all within the caller's deadline. The
// caller (the research service) needs the outcome — an approval request
// that never reached the chat must not wait five minutes for a press — and
// retries a failed send itself; so there is no background job and a failed
// send is recorded as FAILED and returned as an error.
//
// Idempotency: a request with an idempotency key is stored under that key
// before it is sent. A retry with the same key and the same message returns
// the stored delivery with Duplicate set instead of sending again; the same
// key with a different message is ErrKeyReused. Retries of a send that
// failed, or that a crash interrupted, send again, so the only window for
// a second Telegram message is a crash between Telegram's answer and the
// update of the row. Sends with one key are serialised in this process.
package outbound

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/groundcrew/groundcrew/services/notifier/internal/approval"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
	"github.com/groundcrew/groundcrew/services/notifier/internal/message"
)

// Button is an inline keyboard button; pressing it sends CallbackData to
// the bot's webhook.
type Button = message.Button

// Request is a message to send, as the caller gave it.
type Request struct {
	Text           string // plain text
	ChatID         string // "" means the transport's default chat
	Buttons        []Button
	IdempotencyKey string // "" means none
	Sender         string // who sends it, for the log (self-declared)
	Actor          string // the authenticated caller (platform/actor), "" when none
}

// Message is a rendered message for a Transport.
type Message struct {
	ID      string   // the stored message's id
	ChatID  string   // "" means the default chat
	Text    string   // MarkdownV2, every reserved character escaped
	Plain   string   // the same text unformatted, for a fallback
	Buttons []Button // one row under the message
}

// Receipt says where a message went.
type Receipt struct {
	Destination string // a Telegram chat id, or "log"
	MessageID   string // the Telegram message id, or a log id
}

// Transport delivers one message. Errors may implement Permanent() bool,
// RetryAfter() time.Duration and Public() string, as for alerts.
type Transport interface {
	SendMessage(ctx context.Context, m Message) (Receipt, error)
}

// Status is where a stored message stands.
type Status = message.Status

// Statuses of a stored message.
const (
	StatusSending   = message.StatusSending
	StatusDelivered = message.StatusDelivered
	StatusFailed    = message.StatusFailed
)

// Record is a stored message.
type Record = message.Record

// Store keeps messages.
type Store interface {
	// ClaimMessage inserts r, or, when r's idempotency key is already
	// stored, inserts nothing and returns the stored record.
	ClaimMessage(ctx context.Context, r *Record) (*Record, error)
	// SaveMessage writes r's status, attempts, error and delivery.
	SaveMessage(ctx context.Context, r *Record) error
}

// ErrKeyReused is returned when an idempotency key comes back with a
// different message.
var ErrKeyReused = errors.New("idempotency key already used for a different message")

// Result is a send's outcome.
type Result struct {
	Record *Record
	// Duplicate is set when an earlier send with the key delivered it.
	Duplicate bool
}

// Service sends messages.
type Service struct {
	store     Store
	transport Transport
	logger    *slog.Logger
	now       func() time.Time
	keys      keyLocks
}

// New returns a Service.
func New(store Store, transport Transport, logger *slog.Logger) *Service {
	return &Service{store: store, transport: transport, logger: logger, now: time.Now}
}

// Send stores and delivers req (see the package comment). A delivery error
// is returned as the transport gave it, after the record is saved as
// FAILED.
func (s *Service) Send(ctx context.Context, req Request) (Result, error) {
	if req.IdempotencyKey != "" {
		unlock := s.keys.lock(req.IdempotencyKey)
		defer unlock()
	}
	id, err := uuid.NewV7()
	if err != nil {
		return Result{}, fmt.Errorf("making a message id: %w", err)
	}
	now := s.now().UTC().Truncate(time.Microsecond)
	rec := &Record{
		ID: id.String(), IdempotencyKey: req.IdempotencyKey, RequestHash: requestHash(req),
		Sender: req.Sender, Actor: req.Actor, ChatID: req.ChatID, Text: req.Text, Buttons: req.Buttons,
		ApprovalID: approvalID(req.Buttons), Status: StatusSending, CreatedAt: now, UpdatedAt: now,
	}
	stored, err := s.store.ClaimMessage(ctx, rec)
	if err != nil {
		return Result{}, err
	}
	if stored != nil {
		if stored.RequestHash != rec.RequestHash {
			return Result{}, ErrKeyReused
		}
		if stored.Status == StatusDelivered {
			return Result{Record: stored, Duplicate: true}, nil
		}
		// An earlier try failed or was cut short: send it again.
		rec = stored
	}
	return Result{Record: rec}, s.deliver(ctx, rec)
}

func (s *Service) deliver(ctx context.Context, rec *Record) error {
	log := s.logger.With("message_id", rec.ID, "sender", rec.Sender, "actor", rec.Actor)
	rec.Attempts++
	rec.UpdatedAt = s.now().UTC()
	if err := s.store.SaveMessage(ctx, rec); err != nil {
		return err
	}
	receipt, err := s.transport.SendMessage(ctx, Message{
		ID: rec.ID, ChatID: rec.ChatID, Text: markdownv2.Escape(rec.Text), Plain: rec.Text, Buttons: rec.Buttons,
	})
	rec.UpdatedAt = s.now().UTC()
	// The outcome is recorded even when the caller's deadline has passed.
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err != nil {
		rec.Status, rec.Error = StatusFailed, PublicError(err)
		log.WarnContext(ctx, "message not delivered", "attempts", rec.Attempts, "error", err)
		if serr := s.store.SaveMessage(sctx, rec); serr != nil {
			log.ErrorContext(ctx, "recording a failed message", "error", serr)
		}
		return err
	}
	rec.Status, rec.Error = StatusDelivered, ""
	rec.Destination, rec.DeliveryID, rec.DeliveredAt = receipt.Destination, receipt.MessageID, rec.UpdatedAt
	if err := s.store.SaveMessage(sctx, rec); err != nil {
		// It was delivered; the caller needs that more than the row. A retry
		// with the key may send it again.
		log.ErrorContext(ctx, "recording a delivered message", "error", err)
	}
	log.InfoContext(ctx, "message delivered", "destination", receipt.Destination, "delivery_id", receipt.MessageID)
	return nil
}

// PublicError is a description of a delivery error safe to store and show.
func PublicError(err error) string {
	var pub interface{ Public() string }
	if errors.As(err, &pub) {
		return pub.Public()
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return "delivery timed out"
	}
	return "delivery failed"
}

// approvalID is the approval whose buttons the message carries.
func approvalID(buttons []Button) string {
	for _, b := range buttons {
		if id := approval.ID(b.CallbackData); id != "" {
			return id
		}
	}
	return ""
}

// requestHash identifies the message a key stands for: chat, text and
// buttons (the sender is only a label).
func requestHash(r Request) string {
	b, _ := json.Marshal(struct {
		ChatID  string   `json:"chat_id"`
		Text    string   `json:"text"`
		Buttons []Button `json:"buttons"`
	}{r.ChatID, r.Text, r.Buttons})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// keyLocks serialises sends that share an idempotency key.
type keyLocks struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	mu   sync.Mutex
	refs int
}

func (k *keyLocks) lock(key string) (unlock func()) {
	k.mu.Lock()
	if k.locks == nil {
		k.locks = make(map[string]*keyLock)
	}
	l, ok := k.locks[key]
	if !ok {
		l = &keyLock{}
		k.locks[key] = l
	}
	l.refs++
	k.mu.Unlock()
	l.mu.Lock()
	return func() {
		l.mu.Unlock()
		k.mu.Lock()
		if l.refs--; l.refs == 0 {
			delete(k.locks, key)
		}
		k.mu.Unlock()
	}
}
