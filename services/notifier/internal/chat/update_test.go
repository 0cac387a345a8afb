package chat

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"testing"
	"time"
)

// refusedError is a send error Telegram gives for good (as the adapter's
// *telegram.Error says through Permanent).
type refusedError struct{ permanent bool }

func (e refusedError) Error() string {
	return "telegram: 400 Bad Request: not enough rights to send text messages to the chat"
}
func (e refusedError) Permanent() bool { return e.permanent }

type failingReplier struct {
	err   error
	calls int
}

func (r *failingReplier) Reply(context.Context, int64, int64, string) (int64, error) {
	r.calls++
	return 0, r.err
}

// TestRefusedReplyIsNotRetried: a reply Telegram refuses for good records
// the update as unsent, so that Telegram does not send it again and hold
// the chat's later updates behind it; a transient failure is still an
// error, and the update is left for Telegram's retry.
func TestRefusedReplyIsNotRetried(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tt := range []struct {
		name    string
		err     error
		want    string
		wantErr bool
	}{
		{"refused for good", refusedError{permanent: true}, Unsent, false},
		{"transient", refusedError{permanent: false}, "", true},
		{"network", errors.New("connection reset"), "", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
			rep := &failingReplier{err: tt.err}
			counts := &kindCounts{}
			s := New(Config{BotID: 42, AllowedChats: []int64{5}, Updates: counts}, st, &echoConverser{}, rep, logger)
			u := privateMessage(9, 5, 1)
			u.Kind = KindMessage
			got, err := s.Handle(context.Background(), u)
			if got != tt.want || (err != nil) != tt.wantErr {
				t.Fatalf("Handle = %q, %v; want %q, error %v", got, err, tt.want, tt.wantErr)
			}
			_, recorded := st.updates[UpdateKey{BotID: 42, ChatID: 5, UpdateID: 9}]
			if recorded == tt.wantErr {
				t.Errorf("recorded %v; want recorded only when not retried", recorded)
			}
			wantCount := tt.want
			if tt.wantErr {
				wantCount = OutcomeError
			}
			if len(counts.got) != 1 || counts.got[0] != KindMessage+"/"+wantCount {
				t.Errorf("counted %v, want %s/%s", counts.got, KindMessage, wantCount)
			}
		})
	}
}

type kindCounts struct{ got []string }

func (c *kindCounts) Count(kind, outcome string) { c.got = append(c.got, kind+"/"+outcome) }

type fakeMigrations map[string]string

func (f fakeMigrations) MigratedChat(_ context.Context, chat string) (string, bool, error) {
	to, ok := f[chat]
	return to, ok, nil
}

func (f fakeMigrations) RecordChatMigration(_ context.Context, from, to string, _ time.Time) error {
	f[from] = to
	return nil
}

// TestMigrationServiceMessages: the service messages of a group's upgrade
// record the move (from either side) for a group the agent works in, after
// which the supergroup is allowed; a group it does not work in records
// nothing.
func TestMigrationServiceMessages(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	oldGroup := Chat{ID: -4001, Type: "group", Title: "Infra war room"}
	newGroup := Chat{ID: -1004001, Type: "supergroup", Title: "Infra war room"}
	for _, tt := range []struct {
		name    string
		in      *Incoming
		allowed int64
		want    string
		record  map[string]string
	}{
		{"migrate_to in the old group", &Incoming{MessageID: 3, Chat: oldGroup, MigrateTo: -1004001}, -4001, Noted, map[string]string{"-4001": "-1004001"}},
		{"migrate_from in the supergroup", &Incoming{MessageID: 1, Chat: newGroup, MigrateFrom: -4001}, -4001, Noted, map[string]string{"-4001": "-1004001"}},
		{"not an allowed group", &Incoming{MessageID: 3, Chat: oldGroup, MigrateTo: -1004001}, -100123, Refused, map[string]string{}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
			m := fakeMigrations{}
			s := New(Config{BotID: 42, AllowedChats: []int64{tt.allowed}, Migrations: m}, st, &echoConverser{}, &recordingReplier{}, logger)
			if got, err := s.Handle(context.Background(), Update{ID: 5, Kind: KindMessage, Message: tt.in}); err != nil || got != tt.want {
				t.Fatalf("Handle = %q, %v; want %q", got, err, tt.want)
			}
			if len(m) != len(tt.record) || m["-4001"] != tt.record["-4001"] {
				t.Errorf("recorded %v, want %v", m, tt.record)
			}
			if tt.want == Noted && !s.isAllowed(context.Background(), -1004001) {
				t.Error("the supergroup is not allowed after the move")
			}
		})
	}
}

// TestMigratedGroupStaysAllowed: when an allowed group became a
// supergroup (a new chat id the configuration does not name), the agent
// works in the supergroup.
func TestMigratedGroupStaysAllowed(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	msg := func(id int64) Update {
		return Update{ID: id, Kind: KindMessage, Message: &Incoming{MessageID: id, From: &User{ID: 7, FirstName: "Jonas"},
			Chat: Chat{ID: -1004001, Type: "supergroup"}, Text: "db-1 is back"}}
	}
	for _, tt := range []struct {
		name       string
		migrations Migrations
		want       string
	}{
		{"followed", fakeMigrations{"-4001": "-1004001"}, Stored},
		{"elsewhere", fakeMigrations{"-4001": "-1009999"}, Refused},
		{"no migrations", nil, Refused},
	} {
		t.Run(tt.name, func(t *testing.T) {
			st := &memStore{msgs: map[int64]Message{}, updates: map[UpdateKey]string{}}
			s := New(Config{BotID: 42, AllowedChats: []int64{-4001}, Migrations: tt.migrations}, st, &echoConverser{}, &recordingReplier{}, logger)
			for i := int64(1); i <= 2; i++ {
				if got, err := s.Handle(context.Background(), msg(i)); err != nil || got != tt.want {
					t.Errorf("message %d: %q, %v; want %q", i, got, err, tt.want)
				}
			}
		})
	}
}
