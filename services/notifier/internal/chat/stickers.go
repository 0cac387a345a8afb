package chat

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Sticker is a curated sticker the agent may answer with
// (TELEGRAM_STICKERS): the model sees its emoji, set and description and
// may choose it; the notifier sends it by FileID.
type Sticker struct {
	FileID      string
	Emoji       string
	Set         string
	Description string
}

// Reply is the agent's reply: text (task blocks included, taken out before
// sending) and, optionally, a sticker chosen from ConverseRequest.Stickers.
// Text may be empty when a sticker is chosen.
type Reply struct {
	Text    string
	Sticker *Sticker
}

// ReplyConverser is a Converser that can also answer with a sticker; the
// Service uses it when the converser implements it.
type ReplyConverser interface {
	ConverseReply(ctx context.Context, req ConverseRequest) (Reply, error)
}

// StickerSender sends a sticker to a chat as a reply to a message
// (sendSticker) and returns the sent message's id (0 when it made none,
// e.g. offline). A Replier that implements it sends the agent's stickers;
// with one that does not, a chosen sticker is logged and dropped.
type StickerSender interface {
	SendSticker(ctx context.Context, chatID, replyTo int64, fileID string) (int64, error)
}

// Limits of the sticker list, as grounding's ConverseRequest accepts it.
const (
	MaxStickers           = 50
	maxStickerFileID      = 256
	maxStickerEmoji       = 16
	maxStickerSet         = 64
	maxStickerDescription = 200
)

// fileIDPattern is what Telegram's file ids are made of (URL-safe base64).
var fileIDPattern = regexp.MustCompile(`^[A-Za-z0-9_-]+$`)

// ParseStickers reads TELEGRAM_STICKERS: entries separated by ';', each
// "file_id|emoji|set|description" (emoji, set and description may be
// empty, the description may contain '|' but not ';'), e.g.
//
//	CAACAgIAAxkBAAE1|👍|groundcrew_pack|thumbs up: done, agreed;CAACAgIAAxkBAAE2|🔥||something is on fire
//
// Empty entries are skipped; an empty spec is no stickers.
func ParseStickers(spec string) ([]Sticker, error) {
	var out []Sticker
	seen := map[string]int{}
	n := 0
	for entry := range strings.SplitSeq(spec, ";") {
		if strings.TrimSpace(entry) == "" {
			continue
		}
		n++
		fields := strings.SplitN(entry, "|", 4)
		for len(fields) < 4 {
			fields = append(fields, "")
		}
		s := Sticker{
			FileID: strings.TrimSpace(fields[0]), Emoji: strings.TrimSpace(fields[1]),
			Set: strings.TrimSpace(fields[2]), Description: strings.TrimSpace(fields[3]),
		}
		where := fmt.Sprintf("entry %d", n)
		switch {
		case s.FileID == "":
			return nil, fmt.Errorf("%s: no file id; write entries as file_id|emoji|set|description separated by ';'", where)
		case len(s.FileID) > maxStickerFileID || !fileIDPattern.MatchString(s.FileID):
			return nil, fmt.Errorf("%s: file id %q is not a Telegram file id (up to %d characters A-Z, a-z, 0-9, _ and -; the file_id of a sticker the bot received)",
				where, cutRunes(s.FileID, 40), maxStickerFileID)
		case utf8.RuneCountInString(s.Emoji) > maxStickerEmoji:
			return nil, fmt.Errorf("%s (%s): the emoji is longer than %d characters", where, s.FileID, maxStickerEmoji)
		case utf8.RuneCountInString(s.Set) > maxStickerSet:
			return nil, fmt.Errorf("%s (%s): the set name is longer than %d characters", where, s.FileID, maxStickerSet)
		case utf8.RuneCountInString(s.Description) > maxStickerDescription:
			return nil, fmt.Errorf("%s (%s): the description is longer than %d characters", where, s.FileID, maxStickerDescription)
		case s.Emoji == "" && s.Description == "":
			return nil, fmt.Errorf("%s (%s): give an emoji or a description, so the model knows what the sticker means", where, s.FileID)
		}
		if prev, ok := seen[s.FileID]; ok {
			return nil, fmt.Errorf("%s: file id %s is already entry %d", where, s.FileID, prev)
		}
		seen[s.FileID] = n
		out = append(out, s)
	}
	if len(out) > MaxStickers {
		return nil, fmt.Errorf("%d stickers; at most %d", len(out), MaxStickers)
	}
	return out, nil
}

// stickerText is how a sticker the agent sent is kept in the history,
// like a received sticker is rendered.
func stickerText(s Sticker) string {
	return Render(Media{Kind: "sticker", Emoji: s.Emoji, SetName: s.Set})
}

// curated returns the configured sticker with the chosen one's file id;
// false when the reply chose one that was not offered.
func (s *Service) curated(chosen *Sticker) (Sticker, bool) {
	for _, st := range s.cfg.Stickers {
		if st.FileID == chosen.FileID {
			return st, true
		}
	}
	return Sticker{}, false
}
