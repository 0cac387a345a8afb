package grounding

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/groundcrew/groundcrew/services/grounding/internal/extractive"
)

// ChatType says where a conversation happens.
type ChatType int

// Chat types; the zero value is ChatPrivate.
const (
	// ChatPrivate is one person and the agent.
	ChatPrivate ChatType = iota
	// ChatGroup is a group chat.
	ChatGroup
)

// ConverseRequest asks the agent to reply to a target message.
type ConverseRequest struct {
	Persona    string
	ModelNotes string
	ChatType   ChatType
	// CurrentTime is the time the agent sees; zero means now.
	CurrentTime time.Time
	// History is the conversation in any order.
	History []ChatMsg
	// TargetID names the message to reply to; it must be in History.
	TargetID string
	// HistorySize caps the messages sent (0 means DefaultHistorySize).
	HistorySize    int
	ConversationID string
}

// ChatMsg is one message of a conversation.
type ChatMsg struct {
	ID, Speaker, SpeakerID string
	IsAgent                bool
	SendTime               time.Time
	Parts                  []ChatPart
	ReplyToID              string
}

// ChatPart is text or, when Media is set, media.
type ChatPart struct {
	Text  string
	Media *Media
}

// Media is a non-text part described in text.
type Media struct {
	Kind, RenderedText, UniqueID string
}

// ConverseReply is the agent's reply.
type ConverseReply struct {
	Text      string
	Citations []Citation
	Model     string
	ReplyToID string
}

// DefaultPersona is the system instruction's persona when none is given.
const DefaultPersona = "You are groundcrew, a helpful assistant for an operations team. Answer briefly and accurately."

// knownMedia are the media kinds rendered by name; any other kind is kept
// as a placeholder so the model knows something was there.
var knownMedia = map[string]bool{
	"photo": true, "sticker": true, "voice": true, "audio": true, "video": true, "video_note": true,
	"document": true, "animation": true, "location": true, "venue": true, "contact": true, "poll": true, "dice": true,
}

// BuildChatPrompt builds the model request for a Converse call (DESIGN flow
// 5):
//
//   - the system instruction holds the persona, the model notes, the
//     current time and the chat type; no turn is a system turn;
//   - contents are user turns (everyone but the agent) and model turns
//     (the agent's own messages);
//   - messages are sorted by send time (ties keep their given order); the
//     most recent HistorySize−1 messages other than the target are kept
//     and the target is appended last, even when it is an earlier message
//     (a reply in a group);
//   - each message is ordered parts: text as is, media as "[kind: rendered
//     text]", unknown kinds as "[unsupported media: kind]";
//   - a message that is not the agent's starts with a speaker header part,
//     "[Name (id speaker_id) · 2006-01-02 15:04 UTC]", with "replying to
//     <id>" when it answers another message;
//   - consecutive turns of the same role are merged into one (Gemini wants
//     alternating roles), and if the first turn is the agent's a short user
//     part saying earlier messages are not shown is put before it.
func BuildChatPrompt(req ConverseRequest, now time.Time) (Prompt, error) {
	idx := slices.IndexFunc(req.History, func(m ChatMsg) bool { return m.ID == req.TargetID })
	if idx < 0 {
		return Prompt{}, ErrTargetNotFound
	}
	target := req.History[idx]
	if target.IsAgent {
		return Prompt{}, ErrTargetIsAgent
	}
	size := req.HistorySize
	if size <= 0 {
		size = DefaultHistorySize
	}
	others := make([]ChatMsg, 0, len(req.History))
	for i, m := range req.History {
		if i != idx {
			others = append(others, m)
		}
	}
	slices.SortStableFunc(others, func(a, b ChatMsg) int { return a.SendTime.Compare(b.SendTime) })
	if keep := size - 1; len(others) > keep {
		others = others[len(others)-keep:]
	}
	msgs := append(others, target)

	current := req.CurrentTime
	if current.IsZero() {
		current = now
	}
	var turns []Turn
	for _, m := range msgs {
		role := RoleUser
		var parts []string
		if m.IsAgent {
			role = RoleModel
		} else {
			parts = append(parts, speakerHeader(m))
		}
		for _, p := range m.Parts {
			if s := renderPart(p); s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) == 0 {
			continue
		}
		if n := len(turns); n > 0 && turns[n-1].Role == role {
			turns[n-1].Parts = append(turns[n-1].Parts, parts...)
			continue
		}
		turns = append(turns, Turn{Role: role, Parts: parts})
	}
	if len(turns) > 0 && turns[0].Role == RoleModel {
		turns = append([]Turn{{Role: RoleUser, Parts: []string{"[earlier messages not shown]"}}}, turns...)
	}
	return Prompt{System: systemInstruction(req, current), Turns: turns}, nil
}

func systemInstruction(req ConverseRequest, now time.Time) string {
	var b strings.Builder
	b.WriteString(cmp.Or(strings.TrimSpace(req.Persona), DefaultPersona))
	if notes := strings.TrimSpace(req.ModelNotes); notes != "" {
		b.WriteString("\n\n")
		b.WriteString(notes)
	}
	now = now.UTC()
	fmt.Fprintf(&b, "\n\nCurrent time: %s (%s).", now.Format(time.RFC3339), now.Weekday())
	if req.ChatType == ChatGroup {
		b.WriteString("\nChat: a group chat. Several people write; each of their messages starts with a header naming the sender.")
	} else {
		b.WriteString("\nChat: a private chat with one person. Their messages start with a header naming them.")
	}
	b.WriteString("\nReply to the last message of the conversation. Write only the reply, without a header.")
	return b.String()
}

func speakerHeader(m ChatMsg) string {
	var b strings.Builder
	b.WriteByte('[')
	b.WriteString(cmp.Or(strings.TrimSpace(m.Speaker), "someone"))
	if m.SpeakerID != "" {
		b.WriteString(" (id " + m.SpeakerID + ")")
	}
	if !m.SendTime.IsZero() {
		b.WriteString(" · " + m.SendTime.UTC().Format("2006-01-02 15:04 UTC"))
	}
	if m.ReplyToID != "" {
		b.WriteString(" · replying to " + m.ReplyToID)
	}
	b.WriteByte(']')
	return b.String()
}

func renderPart(p ChatPart) string {
	if p.Media == nil {
		return p.Text
	}
	kind := strings.ToLower(strings.TrimSpace(p.Media.Kind))
	desc := strings.Join(strings.Fields(p.Media.RenderedText), " ")
	switch {
	case !knownMedia[kind]:
		return "[unsupported media: " + kind + "]"
	case desc == "":
		return "[" + kind + "]"
	default:
		return "[" + kind + ": " + desc + "]"
	}
}

// Converse writes the agent's reply to the target message. With a model it
// sends the prompt of BuildChatPrompt; offline it searches for the target
// message's text and answers extractively from the evidence, saying so.
func (s *Service) Converse(ctx context.Context, req ConverseRequest) (*ConverseReply, error) {
	p, err := BuildChatPrompt(req, s.now())
	if err != nil {
		return nil, err
	}
	reply := &ConverseReply{Model: s.Method(), ReplyToID: req.TargetID}
	if s.model != nil {
		gen, err := s.model.Generate(ctx, p)
		if err != nil {
			return nil, err
		}
		reply.Text = strings.TrimSpace(gen.Text)
		return reply, nil
	}
	return s.converseOffline(ctx, req, reply)
}

// OfflineLabel starts every offline reply, so nobody mistakes it for a
// model's answer.
const OfflineLabel = "(No language model is configured; this answer is extracted from search results.)"

func (s *Service) converseOffline(ctx context.Context, req ConverseRequest, reply *ConverseReply) (*ConverseReply, error) {
	var text []string
	for _, m := range req.History {
		if m.ID != req.TargetID {
			continue
		}
		for _, p := range m.Parts {
			if p.Media == nil {
				text = append(text, p.Text)
			} else if p.Media.RenderedText != "" {
				text = append(text, p.Media.RenderedText)
			}
		}
	}
	question := strings.Join(text, "\n")
	query := deriveOffline(question).Query
	var evidence []SearchResult
	if query != "" {
		resp, err := s.search.Search(ctx, SearchRequest{Query: query, MaxResults: DefaultMaxResults, Engine: EngineAuto})
		if err != nil {
			s.logger.WarnContext(ctx, "search failed for offline reply", "error", err)
		} else {
			evidence = resp.Results[:min(len(resp.Results), s.maxSources)]
		}
	}
	sources := make([]extractive.Source, len(evidence))
	for i, r := range evidence {
		sources[i] = extractive.Source{ID: i + 1, URL: r.URL, Title: r.Title, Text: r.Snippet}
	}
	res := extractive.Summarize(query, sources, extractive.Options{})
	if len(res.Citations) == 0 {
		reply.Text = OfflineLabel + "\nI found nothing in the search results about that."
		return reply, nil
	}
	now := s.clock()
	var b strings.Builder
	b.WriteString(OfflineLabel + "\n")
	offset := len([]rune(b.String()))
	b.WriteString(res.Text)
	b.WriteString("\n\nSources:")
	for i, r := range evidence {
		fmt.Fprintf(&b, "\n[%d] %s — %s", i+1, r.Title, r.URL)
	}
	reply.Text = b.String()
	for _, c := range res.Citations {
		r := evidence[c.SourceID-1]
		snip, trunc := capSnippet(c.Snippet)
		reply.Citations = append(reply.Citations, Citation{
			URL: r.URL, Domain: domainOf(r), Title: r.Title, Snippet: snip, SnippetTruncated: trunc,
			StartIndex: offset + c.StartIndex, EndIndex: offset + c.EndIndex, ConfidenceScore: c.Confidence,
			FetchTime: now, SourceIndex: c.SourceID,
		})
	}
	return reply, nil
}
