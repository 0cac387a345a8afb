package senderr

import (
	"errors"
	"fmt"
	"testing"
	"time"
)

// said is a transport error that says what it is through the methods
// Classify reads (the Telegram adapter's *telegram.Error has them all; its
// recorded Bot API answers are classified in internal/telegram).
type said struct {
	wait      time.Duration
	migrated  string
	gone      bool
	permanent bool
}

func (s said) Error() string             { return "send failed" }
func (s said) RetryAfter() time.Duration { return s.wait }
func (s said) MigratedTo() string        { return s.migrated }
func (s said) MessageGone() bool         { return s.gone }
func (s said) Permanent() bool           { return s.permanent }

// permanentOnly is an error that says only whether it is final (outbound's
// and the chat agent's transports may return such).
type permanentOnly bool

func (p permanentOnly) Error() string   { return "refused" }
func (p permanentOnly) Permanent() bool { return bool(p) }

func TestClassify(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Verdict
	}{
		{"no error", nil, Verdict{Action: Retry}},
		{"plain error", errors.New("connection reset"), Verdict{Action: Retry}},
		{"rate limited, wrapped", fmt.Errorf("sending: %w", said{wait: 35 * time.Second, permanent: false}), Verdict{Action: RetryAfter, Wait: 35 * time.Second}},
		{"a zero wait is no rate limit", said{}, Verdict{Action: Retry}},
		{"migrated beats permanent", said{migrated: "-1001987654321", permanent: true}, Verdict{Action: Migrate, MigrateTo: "-1001987654321"}},
		{"message gone beats permanent", said{gone: true, permanent: true}, Verdict{Action: SendNew}},
		{"permanent", said{permanent: true}, Verdict{Action: GiveUp}},
		{"permanent only", permanentOnly(true), Verdict{Action: GiveUp}},
		{"not permanent", permanentOnly(false), Verdict{Action: Retry}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.err); got != tt.want {
				t.Errorf("Classify(%v) = %+v, want %+v", tt.err, got, tt.want)
			}
		})
	}
}

func TestActionNames(t *testing.T) {
	for a, want := range map[Action]string{Retry: "retry", RetryAfter: "retry_after", SendNew: "send_new", Migrate: "migrate", GiveUp: "give_up", Action(99): "unknown"} {
		if got := a.String(); got != want {
			t.Errorf("Action(%d) = %q, want %q", a, got, want)
		}
	}
}
