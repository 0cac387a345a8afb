package chat

import "github.com/groundcrew/groundcrew/services/notifier/internal/message"

// Part is one part of a message: text, or media rendered to a short text
// description (MediaKind set).
type Part = message.Part

// Message is one stored message of a conversation.
type Message = message.ChatMessage
