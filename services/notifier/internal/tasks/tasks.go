// Package tasks reads the task blocks a chat agent's reply may carry:
// fenced blocks opened by a line "```task" and closed by a line "```",
// holding "key: value" lines (or one JSON object) with a kind and its
// fields, for example
//
//	```task
//	kind: remind
//	in: 2h
//	text: Check that the db-1 backup finished
//	```
//
// Extract takes every block out of the reply, so that none is ever sent
// raw, and Parse turns a block into a Task: a Remind (send a message at a
// time at most MaxAhead from now; "at" an RFC 3339 time or "in" a
// duration such as 90m, 2h or 1d) or a Research (start a research run on
// a topic; the research service posts its summary, gated by approval as
// usual). Unknown kinds and malformed blocks are errors for the caller to
// log and drop.
package tasks

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// ModelNotes tells the model how to write task blocks (the chat agent
// passes it as Converse's model_notes when tasks are scheduled).
const ModelNotes = "You can schedule work by adding a task block at the end of your reply; it is removed before the reply is sent. " +
	"A block is a line ```task, then key: value lines, then a line ```. Kinds: " +
	"remind (fields: text, and in: a duration such as 30m, 2h or 1d, or at: an RFC 3339 time; at most 7 days ahead) sends the text to this chat at that time; " +
	"research (field: topic) starts a research run whose summary is posted here when it finishes. " +
	"Add a block only when the user asks for a reminder or for research, and say in words what you scheduled."

// Limits of a task.
const (
	// MaxAhead is how far ahead a reminder may be set.
	MaxAhead = 7 * 24 * time.Hour
	// MaxText bounds a reminder's text, in characters.
	MaxText = 1000
	// MaxTopic bounds a research topic, in characters (the research
	// service's own limit).
	MaxTopic = 500
	// MaxBlocks is how many blocks of one reply are scheduled; the rest
	// are dropped.
	MaxBlocks = 5
	// lateness is how far in the past an "at" may be and still count as
	// now: the model's clock is the request's, a moment ago.
	lateness = time.Minute
)

// Block is a task block as written: its fields by lower-case key.
type Block struct {
	Fields map[string]string
}

// Kind is the block's kind field.
func (b Block) Kind() string { return b.Fields["kind"] }

// Task is a parsed block: a Remind or a Research.
type Task interface{ isTask() }

// Remind sends Text to the chat at At.
type Remind struct {
	At   time.Time
	Text string
}

// Research starts a research run on Topic.
type Research struct {
	Topic string
}

func (Remind) isTask()   {}
func (Research) isTask() {}

// ErrMalformed is wrapped by every Parse error.
var ErrMalformed = errors.New("malformed task block")

// Extract returns the reply without its task blocks (blank lines left
// around them collapsed), the blocks in order, and one error for each block
// that could not be read at all (an unterminated fence, a line without a
// key). An unterminated block is removed to the end of the reply.
func Extract(reply string) (text string, blocks []Block, errs []error) {
	lines := strings.Split(reply, "\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		if !opens(lines[i]) {
			out = append(out, lines[i])
			continue
		}
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if strings.TrimSpace(lines[i]) == "```" {
				closed = true
				break
			}
			body = append(body, lines[i])
		}
		if !closed {
			errs = append(errs, fmt.Errorf("%w: unterminated block", ErrMalformed))
			break
		}
		b, err := readBlock(body)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		blocks = append(blocks, b)
	}
	return tidy(strings.Join(out, "\n")), blocks, errs
}

// opens reports whether line opens a task block ("```task", any case,
// surrounding spaces allowed).
func opens(line string) bool {
	return strings.EqualFold(strings.TrimSpace(line), "```task")
}

func readBlock(body []string) (Block, error) {
	joined := strings.TrimSpace(strings.Join(body, "\n"))
	b := Block{Fields: map[string]string{}}
	if strings.HasPrefix(joined, "{") {
		var m map[string]any
		if err := json.Unmarshal([]byte(joined), &m); err != nil {
			return Block{}, fmt.Errorf("%w: invalid JSON", ErrMalformed)
		}
		for k, v := range m {
			switch v := v.(type) {
			case string:
				b.Fields[strings.ToLower(k)] = strings.TrimSpace(v)
			case float64:
				b.Fields[strings.ToLower(k)] = strconv.FormatFloat(v, 'f', -1, 64)
			default:
				return Block{}, fmt.Errorf("%w: field %q is not a string or number", ErrMalformed, k)
			}
		}
		return b, nil
	}
	for _, l := range body {
		if strings.TrimSpace(l) == "" {
			continue
		}
		k, v, ok := strings.Cut(l, ":")
		k = strings.ToLower(strings.TrimSpace(k))
		if !ok || k == "" || strings.ContainsAny(k, " \t") {
			return Block{}, fmt.Errorf("%w: a line is not \"key: value\"", ErrMalformed)
		}
		if _, dup := b.Fields[k]; dup {
			return Block{}, fmt.Errorf("%w: field %q given twice", ErrMalformed, k)
		}
		b.Fields[k] = strings.TrimSpace(v)
	}
	return b, nil
}

// tidy trims the reply and collapses the runs of blank lines a removed
// block leaves.
func tidy(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	out := lines[:0]
	blank := false
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			if blank {
				continue
			}
			blank = true
		} else {
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}

// Parse turns a block into a Task, relative to now.
func Parse(b Block, now time.Time) (Task, error) {
	switch b.Kind() {
	case "remind":
		return parseRemind(b, now)
	case "research":
		topic := strings.TrimSpace(b.Fields["topic"])
		if topic == "" || utf8.RuneCountInString(topic) > MaxTopic {
			return nil, fmt.Errorf("%w: research needs a topic of 1 to %d characters", ErrMalformed, MaxTopic)
		}
		return Research{Topic: topic}, nil
	case "":
		return nil, fmt.Errorf("%w: no kind", ErrMalformed)
	}
	return nil, fmt.Errorf("%w: unknown kind %q", ErrMalformed, truncate(b.Kind(), 32))
}

func parseRemind(b Block, now time.Time) (Task, error) {
	text := strings.TrimSpace(b.Fields["text"])
	if text == "" || utf8.RuneCountInString(text) > MaxText {
		return nil, fmt.Errorf("%w: remind needs a text of 1 to %d characters", ErrMalformed, MaxText)
	}
	at, in := b.Fields["at"], b.Fields["in"]
	var when time.Time
	switch {
	case at != "" && in != "":
		return nil, fmt.Errorf("%w: remind takes \"at\" or \"in\", not both", ErrMalformed)
	case at != "":
		t, err := time.Parse(time.RFC3339, at)
		if err != nil {
			return nil, fmt.Errorf("%w: \"at\" is not an RFC 3339 time", ErrMalformed)
		}
		if t.Before(now.Add(-lateness)) {
			return nil, fmt.Errorf("%w: \"at\" is in the past", ErrMalformed)
		}
		when = t
	case in != "":
		d, err := parseDuration(in)
		if err != nil || d <= 0 {
			return nil, fmt.Errorf("%w: \"in\" is not a positive duration such as 90m, 2h or 1d", ErrMalformed)
		}
		when = now.Add(d)
	default:
		return nil, fmt.Errorf("%w: remind needs \"at\" or \"in\"", ErrMalformed)
	}
	if when.After(now.Add(MaxAhead)) {
		return nil, fmt.Errorf("%w: reminders are at most %s ahead", ErrMalformed, MaxAhead)
	}
	if when.Before(now) {
		when = now
	}
	return Remind{At: when.UTC(), Text: text}, nil
}

// parseDuration reads Go durations plus whole days ("1d", "2d12h").
func parseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	days := time.Duration(0)
	if d, rest, ok := strings.Cut(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 7 {
			return 0, errors.New("bad days")
		}
		days, s = time.Duration(n)*24*time.Hour, rest
		if s == "" {
			return days, nil
		}
	}
	d, err := time.ParseDuration(s)
	return days + d, err
}

func truncate(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}
