package oncallbot

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/notifier/internal/alert"
	"github.com/groundcrew/groundcrew/services/notifier/internal/oncall"
	"github.com/groundcrew/groundcrew/services/notifier/internal/outbound"
)

type sent struct {
	chat, replyTo string
	msg           alert.Message
	buttons       []outbound.Button
}

type fakeSender struct{ sent []sent }

func (f *fakeSender) SendGroupMessage(_ context.Context, chat string, m alert.Message, replyTo string, b []outbound.Button) (string, error) {
	if chat == "999" {
		return "", errors.New("Forbidden: bot can't initiate conversation with a user")
	}
	f.sent = append(f.sent, sent{chat, replyTo, m, b})
	return "1", nil
}

type fakeGroups struct {
	g     *alert.Group
	acked string
}

var errNotFound = errors.New("not found")

func (f *fakeGroups) GetGroup(_ context.Context, id string) (*alert.Group, []*alert.Alert, error) {
	if f.g == nil || id != f.g.ID {
		return nil, nil, errNotFound
	}
	return f.g, nil, nil
}

func (f *fakeGroups) Ack(_ context.Context, id, actor, _ string) (*alert.Group, error) {
	f.acked = actor
	f.g.Ack = &alert.Ack{Actor: actor, At: time.Unix(1800000000, 0)}
	return f.g, nil
}

type fakeEscalations map[string]*oncall.Escalation

func (f fakeEscalations) Escalation(_ context.Context, id string) (*oncall.Escalation, error) {
	if e, ok := f[id]; ok {
		return e, nil
	}
	return nil, oncall.ErrNotFound
}

func group() *alert.Group {
	return &alert.Group{ID: "g1", Destination: "-1001", RootMessageID: "42", ExternalURL: "http://am:9093",
		GroupLabels: map[string]string{"alertname": "PostgresDown", "cluster": "eu-1"}, CommonLabels: map[string]string{"team": "db"}}
}

func TestPagerMentionsAndMessages(t *testing.T) {
	ctx := context.Background()
	s := &fakeSender{}
	p := &Pager{Sender: s, Groups: &fakeGroups{g: group()}, ErrNotFound: errNotFound}
	g, err := p.EscalationGroup(ctx, "g1")
	if err != nil {
		t.Fatal(err)
	}
	if g.Title != "PostgresDown (cluster=eu-1)" || g.Labels["team"] != "db" || g.Chat != "-1001" || g.RootMessageID != "42" {
		t.Fatalf("group %+v", g)
	}
	if _, err := p.EscalationGroup(ctx, "nope"); !errors.Is(err, oncall.ErrNotFound) {
		t.Errorf("missing group: %v", err)
	}
	people := []oncall.Participant{{UserID: 1, Username: "ann_sre"}, {UserID: 3, Name: "Cat (DBA)"}}
	if err := p.Mention(ctx, g, people, "🚨 PostgresDown needs an acknowledgement (step 1 of 2)"); err != nil {
		t.Fatal(err)
	}
	m := s.sent[0]
	if m.chat != "-1001" || m.replyTo != "42" || m.msg.ParseMode != "MarkdownV2" {
		t.Errorf("mention went to %s replying to %s (%s)", m.chat, m.replyTo, m.msg.ParseMode)
	}
	if want := "@ann\\_sre [Cat \\(DBA\\)](tg://user?id=3)"; !strings.HasSuffix(m.msg.Text, want) {
		t.Errorf("mention text %q, want it to end %q", m.msg.Text, want)
	}
	if err := p.Direct(ctx, g, people[0], "page"); err != nil {
		t.Fatal(err)
	}
	d := s.sent[1]
	if d.chat != "1" || len(d.buttons) != 1 || d.buttons[0].CallbackData != "esc:g1" || !strings.Contains(d.msg.Plain, "http://am:9093") {
		t.Errorf("direct message %+v", d)
	}
	if err := p.Direct(ctx, g, oncall.Participant{Username: "nobody_id"}, "page"); err == nil {
		t.Error("a person without an id was messaged directly")
	}
	if err := p.Direct(ctx, g, oncall.Participant{UserID: 999}, "page"); err == nil {
		t.Error("Telegram's 403 was not returned")
	}
}

func TestAckerAcceptsOnlyPagedPeopleInTheirOwnChat(t *testing.T) {
	ctx := context.Background()
	paged := &oncall.Escalation{GroupID: "g1", Timeline: []oncall.Event{
		{Kind: oncall.EventNotified, Participant: oncall.Participant{UserID: 7, Username: "ben_dba"}, Channel: oncall.ChannelDirect},
	}}
	newAcker := func(actionUsers bool) (*Acker, *fakeGroups) {
		g := &fakeGroups{g: group()}
		return &Acker{Groups: g, Escalations: fakeEscalations{"g1": paged},
			ActionUser: func(int64, string) bool { return actionUsers }}, g
	}
	a, g := newAcker(false)
	if _, err := a.Press(ctx, "grp:g1:ack", 7, "ben_dba", 7); !errors.Is(err, ErrNotMine) {
		t.Errorf("another button: %v", err)
	}
	if _, err := a.Press(ctx, "esc:g1", 7, "ben_dba", -1001); !errors.Is(err, ErrNotDirect) {
		t.Errorf("pressed outside the private chat: %v", err)
	}
	if _, err := a.Press(ctx, "esc:g1", 8, "eve", 8); !errors.Is(err, ErrNotPaged) || g.acked != "" {
		t.Errorf("someone not paged: %v (acked %q)", err, g.acked)
	}
	text, err := a.Press(ctx, "esc:g1", 7, "ben_dba", 7)
	if err != nil || g.acked != "@ben_dba" || text != "👀 Acked by @ben_dba" {
		t.Errorf("the paged person: %q, %v (acked %q)", text, err, g.acked)
	}
	a, g = newAcker(true)
	if _, err := a.Press(ctx, "esc:g1", 8, "", 8); err != nil || g.acked != "telegram:8" {
		t.Errorf("an action user: %v (acked %q)", err, g.acked)
	}
}

type fakeSchedules []*oncall.Schedule

func (f fakeSchedules) Schedules(context.Context) ([]*oncall.Schedule, error) { return f, nil }

type fakeRoots map[string]string

func (f fakeRoots) GroupByRoot(_ context.Context, chat, msg string) (string, error) {
	if id, ok := f[chat+"/"+msg]; ok {
		return id, nil
	}
	return "", oncall.ErrNotFound
}

func TestCommands(t *testing.T) {
	ctx := context.Background()
	sched := &oncall.Schedule{ID: "db", Name: "DB primary", Location: time.UTC, Layers: []oncall.Layer{{Name: "p",
		Participants: []oncall.Participant{{UserID: 1, Username: "ann_sre"}, {UserID: 2, Username: "ben_dba"}},
		Rotation:     oncall.Rotation{Length: oncall.Daily, Start: time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)}}}}
	g := &fakeGroups{g: group()}
	c := &Commands{Schedules: fakeSchedules{sched}, Roots: fakeRoots{"-1001/42": "g1"},
		Acker: &Acker{Groups: g, Escalations: fakeEscalations{}, ActionUser: func(int64, string) bool { return true }},
		Now:   func() time.Time { return time.Date(2026, 11, 2, 12, 0, 0, 0, time.UTC) }}
	if !c.Handles("/oncall@gc_bot", "gc_bot") || c.Handles("/oncall@other_bot", "gc_bot") || c.Handles("hello", "gc_bot") || !c.Handles("/ACK", "gc_bot") {
		t.Error("Handles recognises the wrong commands")
	}
	got, err := c.Answer(ctx, Command{Text: "/oncall", ChatID: -1001, BotUsername: "gc_bot"})
	if err != nil || got != "📟 On call now\n• DB primary: @ann_sre — next @ben_dba at Tue 09:00 UTC" {
		t.Errorf("/oncall = %q, %v", got, err)
	}
	got, _ = c.Answer(ctx, Command{Text: "/ack", ChatID: -1001, UserID: 2, Username: "ben_dba"})
	if !strings.HasPrefix(got, "Reply /ack") {
		t.Errorf("/ack without a reply = %q", got)
	}
	got, _ = c.Answer(ctx, Command{Text: "/ack", ChatID: -1001, UserID: 2, Username: "ben_dba", ReplyTo: 41})
	if !strings.HasPrefix(got, "That message is not") {
		t.Errorf("/ack to another message = %q", got)
	}
	got, err = c.Answer(ctx, Command{Text: "/ack", ChatID: -1001, UserID: 2, Username: "ben_dba", ReplyTo: 42})
	if err != nil || got != "👀 Acked by @ben_dba" || g.acked != "@ben_dba" {
		t.Errorf("/ack to the root = %q, %v", got, err)
	}
}
