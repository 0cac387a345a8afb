package chat

import "time"

// Part is one part of a message: text, or media rendered to a short text
// description (MediaKind set).
type Part struct {
	Text      string `json:"text,omitempty"`
	MediaKind string `json:"media_kind,omitempty"`
	// UniqueID is Telegram's stable file id of the media, if any.
	UniqueID string `json:"unique_id,omitempty"`
}

// Message is one stored message of a conversation.
type Message struct {
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
