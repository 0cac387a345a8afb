package chat

import (
	"fmt"
	"strings"
)

// Media is one non-text item of a Telegram message, with what the update
// says about it (Telegram sends no content, only these facts).
type Media struct {
	// Kind is photo, sticker, voice, audio, video, video_note, animation,
	// document, location, venue, contact, poll or dice; anything else is
	// rendered as a placeholder.
	Kind     string
	UniqueID string

	Width, Height, Duration int
	Size                    int64
	MimeType, FileName      string
	Performer, Title        string // audio; Title is also a venue's name

	Emoji, SetName         string // sticker; Emoji also for dice
	Animated, VideoSticker bool

	Latitude, Longitude float64
	Address             string // venue
	Name                string // contact
	Question            string // poll
	Value               int    // dice
}

func (m Media) kind() string {
	if m.Kind == "" {
		return "unknown"
	}
	return m.Kind
}

// Render describes media in a short bracketed text for the model, e.g.
// "[photo 1280×960]" or "[voice message, 7 s]". Contacts show the name
// only, never the phone number.
func Render(m Media) string {
	switch m.Kind {
	case "photo":
		return "[photo" + dims(m) + "]"
	case "sticker":
		kind := "sticker"
		switch {
		case m.VideoSticker:
			kind = "video sticker"
		case m.Animated:
			kind = "animated sticker"
		}
		s := "[" + kind
		if m.Emoji != "" {
			s += " " + m.Emoji
		}
		if m.SetName != "" {
			s += " from set " + m.SetName
		}
		return s + "]"
	case "voice":
		return "[voice message" + secs(m) + "]"
	case "audio":
		name := strings.Trim(strings.TrimSpace(m.Performer+" – "+m.Title), "– ")
		if name == "" {
			name = m.FileName
		}
		if name != "" {
			name = ": " + name
		}
		return "[audio" + name + secs(m) + "]"
	case "video":
		return "[video" + dims(m) + secs(m) + "]"
	case "video_note":
		return "[round video message" + secs(m) + "]"
	case "animation":
		return "[GIF" + dims(m) + secs(m) + "]"
	case "document":
		s := "[document"
		if m.FileName != "" {
			s += " " + m.FileName
		}
		var facts []string
		if m.MimeType != "" {
			facts = append(facts, m.MimeType)
		}
		if m.Size > 0 {
			facts = append(facts, size(m.Size))
		}
		if len(facts) > 0 {
			s += " (" + strings.Join(facts, ", ") + ")"
		}
		return s + "]"
	case "location":
		return fmt.Sprintf("[location %.5f, %.5f]", m.Latitude, m.Longitude)
	case "venue":
		return "[venue: " + strings.Trim(m.Title+", "+m.Address, ", ") + "]"
	case "contact":
		if m.Name == "" {
			return "[contact]"
		}
		return "[contact: " + m.Name + "]"
	case "poll":
		return "[poll: " + m.Question + "]"
	case "dice":
		return fmt.Sprintf("[dice %s rolled %d]", m.Emoji, m.Value)
	}
	if m.Kind == "" {
		return "[unsupported media]"
	}
	return "[" + m.Kind + "]"
}

func dims(m Media) string {
	if m.Width > 0 && m.Height > 0 {
		return fmt.Sprintf(" %d×%d", m.Width, m.Height)
	}
	return ""
}

func secs(m Media) string {
	if m.Duration > 0 {
		return fmt.Sprintf(", %d s", m.Duration)
	}
	return ""
}

func size(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%d KB", n/(1<<10))
	}
	return fmt.Sprintf("%d B", n)
}
