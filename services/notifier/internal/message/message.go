// Package message holds the plain types of the notifier's stored messages
// that are not alerts: the chat agent's conversation, the handled updates,
// the messages sent through SendMessage and the approvals they carry. They
// are types only, so that internal/store can keep them without importing
// the packages that act on them (chat, outbound, approval), which alias
// them under their own names.
package message

import "time"

// Part is one part of a chat message: text, or media rendered to a short
// text description (MediaKind set).
type Part struct {
	Text      string `json:"text,omitempty"`
	MediaKind string `json:"media_kind,omitempty"`
	// UniqueID is Telegram's stable file id of the media, if any.
	UniqueID string `json:"unique_id,omitempty"`
}

// ChatMessage is one stored message of a conversation.
type ChatMessage struct {
	ChatID    int64
	ChatType  string // Telegram's: private, group, supergroup, channel
	MessageID int64
	Speaker   string // display name
	SpeakerID string // stable sender id
	IsAgent   bool   // sent by the agent itself
	ReplyToID int64  // 0: not a reply
	Parts     []Part
	SentAt    time.Time
}

// UpdateKey identifies a handled update: update ids are the bot's own
// sequence, and a forged or replayed id must not burn the id of a real
// update in another chat.
type UpdateKey struct {
	BotID, ChatID, UpdateID int64
}

// Button is an inline keyboard button; pressing it sends CallbackData to
// the bot's webhook.
type Button struct {
	Text         string `json:"text"`
	CallbackData string `json:"callback_data"`
}

// Status is where a stored message stands.
type Status string

// Statuses of a stored message.
const (
	StatusSending   Status = "SENDING"
	StatusDelivered Status = "DELIVERED"
	StatusFailed    Status = "FAILED"
)

// Record is a stored message sent through SendMessage.
type Record struct {
	ID             string
	IdempotencyKey string
	RequestHash    string
	Sender         string
	Actor          string // the authenticated caller who sent it
	ApprovalID     string // the approval whose buttons it carries, if any
	ChatID         string
	Text           string // plain, as requested
	Buttons        []Button
	Status         Status
	Attempts       int
	Error          string // public description of the last failure
	DeliveryID     string
	Destination    string
	CreatedAt      time.Time
	UpdatedAt      time.Time
	DeliveredAt    time.Time
}

// ApprovalSent is the message that carried an approval's buttons, as
// stored when it was sent.
type ApprovalSent struct {
	ChatID    int64  // the Telegram chat it went to
	MessageID int64  // its Telegram message id
	Text      string // its plain text
}
