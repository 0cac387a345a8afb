package codec

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
)

// nestedMetadata returns an alert nested levels deep: objects {"a":…}
// around a number as its metadata.
func nestedMetadata(levels int) string {
	// The alert object itself is level 1, its metadata level 2.
	inner := levels - 1
	return `{"text":"x","metadata":` + strings.Repeat(`{"a":`, inner) + `1` + strings.Repeat(`}`, inner) + `}`
}

func TestDepth(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want int
	}{
		{"empty input", ``, 0},
		{"scalar", `42`, 0},
		{"string", `"x"`, 0},
		{"empty object", `{}`, 1},
		{"empty array", `[]`, 1},
		{"siblings do not add up", `[[],[],{}]`, 2},
		{"object in array in object", `{"a":[{"b":1}]}`, 3},
		{"brackets in a string", `{"a":"[[[{{{"}`, 1},
		{"brackets in a key", `{"[[[":1}`, 1},
		{"escaped quote keeps the string open", `{"a":"\"[[[\""}`, 1},
		{"escaped backslash closes the string", `{"a":"\\","b":[[1]]}`, 3},
		{"backslash then escaped quote", `["\\\"[[", []]`, 2},
		{"unicode escape", `{"a":"\u005b\u007b","b":[]}`, 2},
		{"multi-byte text", `{"ключ":["значение ✓"]}`, 2},
		{"whitespace", " [ \n\t[ ] ] ", 2},
		{"unbalanced closers do not hide nesting", `]]]][[`, 2},
		{"unterminated string swallows the rest", `["abc[[[[`, 1},
		{"trailing backslash", `["\`, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := depth([]byte(tt.in), math.MaxInt); got != tt.want {
				t.Errorf("depth(%q) = %d, want %d", tt.in, got, tt.want)
			}
		})
	}
}

func TestDepthStopsPastLimit(t *testing.T) {
	// A limit bounds the work as well as the answer: the scan stops at the
	// first level past it.
	if got := depth([]byte(strings.Repeat("[", 1000)), 64); got != 65 {
		t.Errorf("depth(1000 × '[', limit 64) = %d, want 65", got)
	}
}

func TestUnmarshalDepthLimit(t *testing.T) {
	const limit = 16
	tests := []struct {
		name      string
		in        string
		wantDeep  bool
		wantAlert *notifierv1.IngestAlertRequest
	}{
		{
			name:     "100,000 arrays",
			in:       strings.Repeat("[", 100_000),
			wantDeep: true,
		},
		{
			name:     "deep metadata",
			in:       nestedMetadata(100_000),
			wantDeep: true,
		},
		{
			name:     "one level past the limit",
			in:       nestedMetadata(limit + 1),
			wantDeep: true,
		},
		{
			// protojson counts the scalar Value at the bottom as one more
			// message level; its recursion limit must still let this through.
			name:      "exactly at the limit",
			in:        nestedMetadata(limit),
			wantAlert: &notifierv1.IngestAlertRequest{Text: "x", Metadata: nestedStruct(limit - 1)},
		},
		{
			name: "ordinary alert with nested metadata",
			in:   `{"text":"disk full","metadata":{"host":"web-1","labels":{"team":"ops","tags":["a","[b]"]},"note":"say \"{{hi}}\""}}`,
			wantAlert: &notifierv1.IngestAlertRequest{Text: "disk full", Metadata: mustStruct(t, map[string]any{
				"host":   "web-1",
				"labels": map[string]any{"team": "ops", "tags": []any{"a", "[b]"}},
				"note":   `say "{{hi}}"`,
			})},
		},
		{
			// Takes the normalising second pass (unknown field), which must
			// accept the same depth.
			name:      "at the limit through the second pass",
			in:        strings.Replace(nestedMetadata(limit), `{"text":"x"`, `{"text":"x","newField":[1]`, 1),
			wantAlert: &notifierv1.IngestAlertRequest{Text: "x", Metadata: nestedStruct(limit - 1)},
		},
		{
			name:      "brackets in strings are not nesting",
			in:        `{"text":"` + strings.Repeat(`[{\"`, 1000) + `"}`,
			wantAlert: &notifierv1.IngestAlertRequest{Text: strings.Repeat(`[{"`, 1000)},
		},
	}
	j := NewJSON(limit)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := &notifierv1.IngestAlertRequest{}
			err := j.NewDecoder(strings.NewReader(tt.in)).Decode(got)
			if tt.wantDeep {
				var de *DepthError
				if !errors.As(err, &de) || de.Limit != limit {
					t.Fatalf("Decode() error = %v, want a *DepthError with limit %d", err, limit)
				}
				if want := "request body: JSON nested deeper than 16 levels"; err.Error() != want {
					t.Errorf("Decode() error = %q, want %q", err, want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Decode() error = %v", err)
			}
			if diff := cmp.Diff(tt.wantAlert, got, protocmp.Transform()); diff != "" {
				t.Errorf("Decode() mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUnmarshalTooDeepIsCheap(t *testing.T) {
	// Refusing a deep body must not build anything: the error is the only
	// allocation, however deep the input.
	j := NewJSON(DefaultMaxDepth)
	in := []byte(nestedMetadata(100_000))
	msg := &notifierv1.IngestAlertRequest{}
	allocs := testing.AllocsPerRun(10, func() {
		if err := j.Unmarshal(in, msg); err == nil {
			t.Fatal("Unmarshal() accepted 100,000 levels")
		}
	})
	if allocs > 1 {
		t.Errorf("Unmarshal() of a too-deep body allocated %v times, want at most 1", allocs)
	}
}

func TestNewJSONDefaultDepth(t *testing.T) {
	j := NewJSON(0)
	var de *DepthError
	err := j.Unmarshal([]byte(nestedMetadata(DefaultMaxDepth+1)), &notifierv1.IngestAlertRequest{})
	if !errors.As(err, &de) || de.Limit != DefaultMaxDepth {
		t.Errorf("NewJSON(0).Unmarshal(%d levels) error = %v, want a *DepthError with limit %d", DefaultMaxDepth+1, err, DefaultMaxDepth)
	}
	if err := j.Unmarshal([]byte(nestedMetadata(DefaultMaxDepth)), &notifierv1.IngestAlertRequest{}); err != nil {
		t.Errorf("NewJSON(0).Unmarshal(%d levels) error = %v, want nil", DefaultMaxDepth, err)
	}
}

// FuzzDepth checks the byte scan against encoding/json's tokenizer on valid
// JSON, and that it never panics or disagrees with itself on anything else.
func FuzzDepth(f *testing.F) {
	for _, seed := range []string{
		``, `0`, `"x"`, `{}`, `[]`, `[[],{}]`, `{"a":[{"b":null}]}`,
		`{"a":"[{"}`, `{"a":"\"[{\""}`, `["\\",[[]]]`, `["\\\"]",[]]`, `{"\u005b":"\u007b"}`,
		`{"text":"x","metadata":{"a":{"b":{"c":[1,2,{"d":true}]}}}}`,
		`]]][[[`, `["unterminated[[`, `["\`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := depth(data, math.MaxInt)
		for _, limit := range []int{0, 1, 3, 64} {
			// Stopping early changes the answer only past the limit.
			early := depth(data, limit)
			if (early > limit) != (got > limit) || (got <= limit && early != got) {
				t.Fatalf("depth(%q, %d) = %d, but depth without a limit = %d", data, limit, early, got)
			}
		}
		want, ok := tokenDepth(data)
		if !ok {
			return
		}
		if got != want {
			t.Errorf("depth(%q) = %d, want %d (from encoding/json tokens)", data, got, want)
		}
	})
}

// tokenDepth is the reference for depth: the deepest nesting encoding/json's
// tokenizer reports, for valid JSON only.
func tokenDepth(data []byte) (int, bool) {
	if !json.Valid(data) {
		return 0, false
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	level, deepest := 0, 0
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			return deepest, true
		}
		if err != nil {
			return 0, false
		}
		switch tok {
		case json.Delim('{'), json.Delim('['):
			level++
			deepest = max(deepest, level)
		case json.Delim('}'), json.Delim(']'):
			level--
		}
	}
}

// nestedStruct is the metadata of nestedMetadata(levels+1): levels objects
// {"a":…} around the number 1.
func nestedStruct(levels int) *structpb.Struct {
	var v *structpb.Value = structpb.NewNumberValue(1)
	for range levels - 1 {
		v = structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"a": v}})
	}
	return &structpb.Struct{Fields: map[string]*structpb.Value{"a": v}}
}

func mustStruct(t *testing.T, m map[string]any) *structpb.Struct {
	t.Helper()
	s, err := structpb.NewStruct(m)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
