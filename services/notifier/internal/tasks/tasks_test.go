package tasks

import (
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var now = time.Date(2026, 11, 25, 9, 0, 0, 0, time.UTC)

func TestExtract(t *testing.T) {
	tests := []struct {
		name       string
		reply      string
		wantText   string
		wantBlocks []Block
		wantErrs   int
	}{
		{
			name:     "no blocks",
			reply:    "The disk is full.\n\nDelete old logs.",
			wantText: "The disk is full.\n\nDelete old logs.",
		},
		{
			name:       "one block in the middle",
			reply:      "I will remind you.\n\n```task\nkind: remind\nin: 2h\ntext: Check: the backup\n```\n\nAnything else?",
			wantText:   "I will remind you.\n\nAnything else?",
			wantBlocks: []Block{{Fields: map[string]string{"kind": "remind", "in": "2h", "text": "Check: the backup"}}},
		},
		{
			name:       "JSON block, fence in any case",
			reply:      "On it.\n ```TASK \n{\"kind\": \"research\", \"topic\": \"why db-1 fills up\"}\n```",
			wantText:   "On it.",
			wantBlocks: []Block{{Fields: map[string]string{"kind": "research", "topic": "why db-1 fills up"}}},
		},
		{
			name:     "unterminated block is removed to the end",
			reply:    "Sure.\n```task\nkind: remind\ntext: never closed",
			wantText: "Sure.",
			wantErrs: 1,
		},
		{
			name:     "a line without a key is malformed, and still removed",
			reply:    "Sure.\n```task\njust some words\n```\nBye.",
			wantText: "Sure.\nBye.",
			wantErrs: 1,
		},
		{
			name:     "other fences stay",
			reply:    "Run:\n```sh\ndf -h\n```",
			wantText: "Run:\n```sh\ndf -h\n```",
		},
		{
			name:       "only a block",
			reply:      "```task\nkind: research\ntopic: x\n```",
			wantText:   "",
			wantBlocks: []Block{{Fields: map[string]string{"kind": "research", "topic": "x"}}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			text, blocks, errs := Extract(tt.reply)
			if text != tt.wantText {
				t.Errorf("text = %q, want %q", text, tt.wantText)
			}
			if diff := cmp.Diff(tt.wantBlocks, blocks); diff != "" {
				t.Errorf("blocks (-want +got):\n%s", diff)
			}
			if len(errs) != tt.wantErrs {
				t.Errorf("errors %v, want %d", errs, tt.wantErrs)
			}
			for _, err := range errs {
				if !errors.Is(err, ErrMalformed) {
					t.Errorf("error %v is not ErrMalformed", err)
				}
			}
		})
	}
}

func TestParse(t *testing.T) {
	block := func(kv ...string) Block {
		b := Block{Fields: map[string]string{}}
		for i := 0; i < len(kv); i += 2 {
			b.Fields[kv[i]] = kv[i+1]
		}
		return b
	}
	tests := []struct {
		name string
		b    Block
		want Task // nil: an error
	}{
		{"remind in", block("kind", "remind", "in", "90m", "text", "check"), Remind{At: now.Add(90 * time.Minute), Text: "check"}},
		{"remind in days", block("kind", "remind", "in", "1d12h", "text", "check"), Remind{At: now.Add(36 * time.Hour), Text: "check"}},
		{"remind at", block("kind", "remind", "at", "2026-11-26T08:30:00+01:00", "text", "standup"), Remind{At: time.Date(2026, 11, 26, 7, 30, 0, 0, time.UTC), Text: "standup"}},
		{"remind exactly 7 days", block("kind", "remind", "in", "7d", "text", "x"), Remind{At: now.Add(MaxAhead), Text: "x"}},
		{"remind a moment ago is now", block("kind", "remind", "at", "2026-11-25T08:59:30Z", "text", "x"), Remind{At: now, Text: "x"}},
		{"remind too far", block("kind", "remind", "in", "7d1h", "text", "x"), nil},
		{"remind at too far", block("kind", "remind", "at", "2026-12-03T09:00:00Z", "text", "x"), nil},
		{"remind in the past", block("kind", "remind", "at", "2026-11-24T09:00:00Z", "text", "x"), nil},
		{"remind without time", block("kind", "remind", "text", "x"), nil},
		{"remind with both", block("kind", "remind", "in", "1h", "at", "2026-11-25T10:00:00Z", "text", "x"), nil},
		{"remind without text", block("kind", "remind", "in", "1h"), nil},
		{"remind bad duration", block("kind", "remind", "in", "soon", "text", "x"), nil},
		{"remind negative", block("kind", "remind", "in", "-1h", "text", "x"), nil},
		{"research", block("kind", "research", "topic", " why db-1 fills up "), Research{Topic: "why db-1 fills up"}},
		{"research without topic", block("kind", "research"), nil},
		{"unknown kind", block("kind", "deploy", "service", "api"), nil},
		{"no kind", block("text", "x"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse(tt.b, now)
			if tt.want == nil {
				if err == nil || !errors.Is(err, ErrMalformed) {
					t.Fatalf("Parse = %+v, %v; want ErrMalformed", got, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("task (-want +got):\n%s", diff)
			}
		})
	}
}
