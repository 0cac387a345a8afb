package oncall

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"sync"
	"testing"
	"time"
)

// memStore is an in-memory Store with the SQL store's compare-and-set.
type memStore struct {
	mu        sync.Mutex
	schedules map[string]*Schedule
	policies  []Policy
	escs      map[string]*Escalation
}

func (m *memStore) Schedule(_ context.Context, id string) (*Schedule, error) {
	if s, ok := m.schedules[id]; ok {
		return s, nil
	}
	return nil, ErrNotFound
}
func (m *memStore) Policies(context.Context) ([]Policy, error) { return m.policies, nil }
func (m *memStore) Policy(_ context.Context, id string) (Policy, error) {
	for _, p := range m.policies {
		if p.ID == id {
			return p, nil
		}
	}
	return Policy{}, ErrNotFound
}
func (m *memStore) CreateEscalation(_ context.Context, e *Escalation) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.escs[e.GroupID]; ok {
		return false, nil
	}
	c := *e
	m.escs[e.GroupID] = &c
	return true, nil
}
func (m *memStore) Escalation(_ context.Context, id string) (*Escalation, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.escs[id]
	if !ok {
		return nil, ErrNotFound
	}
	c := *e
	c.Timeline = slices.Clone(e.Timeline)
	return &c, nil
}
func (m *memStore) Advance(_ context.Context, id string, from, to Position, nextAt time.Time) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.escs[id]
	if e == nil || e.State != Escalating || e.Pos != from {
		return false, nil
	}
	e.Pos, e.NextAt = to, nextAt
	return true, nil
}
func (m *memStore) Stop(_ context.Context, id string, state State, ev Event) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e := m.escs[id]
	if e == nil || e.State != Escalating {
		return false, nil
	}
	e.State = state
	e.Timeline = append(e.Timeline, ev)
	return true, nil
}
func (m *memStore) AppendEvents(_ context.Context, id string, evs ...Event) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.escs[id].Timeline = append(m.escs[id].Timeline, evs...)
	return nil
}

type fakeGroups struct {
	mu sync.Mutex
	g  Group
}

func (f *fakeGroups) EscalationGroup(context.Context, string) (Group, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.g, nil
}

type page struct {
	channel string
	who     Participant
}

type fakePager struct {
	mu      sync.Mutex
	pages   []page
	blocked map[int64]bool // users who never started the bot
}

func (f *fakePager) Mention(_ context.Context, _ Group, people []Participant, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, p := range people {
		f.pages = append(f.pages, page{ChannelChat, p})
	}
	return nil
}

func (f *fakePager) Direct(_ context.Context, _ Group, p Participant, _ string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.blocked[p.UserID] {
		return errors.New("Forbidden: bot can't initiate conversation with a user")
	}
	f.pages = append(f.pages, page{ChannelDirect, p})
	return nil
}

type timer struct {
	groupID string
	pos     Position
	at      time.Time
}

type fakeTimer struct {
	mu   sync.Mutex
	jobs []timer
}

func (f *fakeTimer) ScheduleStep(_ context.Context, g string, pos Position, at time.Time) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.jobs {
		if j.groupID == g && j.pos == pos {
			return nil // unique, as River's ByArgs insert
		}
	}
	f.jobs = append(f.jobs, timer{g, pos, at})
	return nil
}

func (f *fakeTimer) last() timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.jobs[len(f.jobs)-1]
}

type harness struct {
	esc    *Escalator
	store  *memStore
	groups *fakeGroups
	pager  *fakePager
	timer  *fakeTimer
	now    time.Time
}

func newHarness(t *testing.T) *harness {
	t.Helper()
	start := at(time.UTC, "2026-11-02 21:00")
	sched := &Schedule{ID: "primary", Location: time.UTC, Layers: []Layer{{Name: "p", Participants: []Participant{ann},
		Rotation: Rotation{Length: Weekly, Start: at(time.UTC, "2026-11-02 09:00")}}}}
	h := &harness{
		store: &memStore{
			schedules: map[string]*Schedule{"primary": sched},
			policies: []Policy{{ID: "db", Match: map[string]string{"team": "db"}, Repeat: 0, Steps: []Step{
				{ScheduleID: "primary", Wait: 5 * time.Minute},
				{Users: []Participant{ben}, Wait: 10 * time.Minute},
			}}},
			escs: map[string]*Escalation{},
		},
		groups: &fakeGroups{g: Group{ID: "g1", Title: "PostgresDown", Chat: "-100", RootMessageID: "7", Labels: map[string]string{"team": "db"}}},
		pager:  &fakePager{blocked: map[int64]bool{}},
		timer:  &fakeTimer{},
		now:    start,
	}
	h.esc = &Escalator{Store: h.store, Groups: h.groups, Pager: h.pager, Timer: h.timer,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: func() time.Time { return h.now }}
	return h
}

func TestEscalationWalksStepsUntilAcknowledged(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	if err := h.esc.Start(ctx, h.groups.g); err != nil {
		t.Fatal(err)
	}
	if j := h.timer.last(); j.pos != (Position{1, 1}) || !j.at.Equal(h.now) {
		t.Fatalf("first step scheduled %+v, want step 1 now", j)
	}
	// Step 1: the primary on call, in the chat and directly.
	if err := h.esc.RunStep(ctx, "g1", Position{1, 1}); err != nil {
		t.Fatal(err)
	}
	if want := []page{{ChannelChat, ann}, {ChannelDirect, ann}}; !slices.Equal(h.pager.pages, want) {
		t.Fatalf("step 1 paged %v, want %v", h.pager.pages, want)
	}
	if j := h.timer.last(); j.pos != (Position{1, 2}) || !j.at.Equal(h.now.Add(5*time.Minute)) {
		t.Fatalf("step 2 scheduled %+v, want in 5 minutes", j)
	}
	// The same step run again (a retry, another instance) pages nobody.
	if err := h.esc.RunStep(ctx, "g1", Position{1, 1}); err != nil || len(h.pager.pages) != 2 {
		t.Fatalf("re-running step 1 paged again: %v (%v)", h.pager.pages, err)
	}
	// Nobody acks: step 2 notifies the secondary.
	h.now = h.now.Add(5 * time.Minute)
	if err := h.esc.RunStep(ctx, "g1", Position{1, 2}); err != nil {
		t.Fatal(err)
	}
	if got := h.pager.pages[2:]; !slices.Equal(got, []page{{ChannelChat, ben}, {ChannelDirect, ben}}) {
		t.Fatalf("step 2 paged %v, want ben", got)
	}
	esc, _ := h.store.Escalation(ctx, "g1")
	if s := Status(esc, 2, time.UTC); s != "⏳ escalating: step 2 of 2, @ben notified 21:05 UTC" {
		t.Errorf("Status = %q", s)
	}
	// Ben acks six minutes in: escalation stops, the last timer is stale.
	h.now = h.now.Add(time.Minute)
	if err := h.esc.Acknowledge(ctx, "g1", "@ben", h.now); err != nil {
		t.Fatal(err)
	}
	h.now = h.now.Add(10 * time.Minute)
	if err := h.esc.RunStep(ctx, "g1", h.timer.last().pos); err != nil || len(h.pager.pages) != 4 {
		t.Fatalf("after the ack, paged %v (%v)", h.pager.pages, err)
	}
	esc, _ = h.store.Escalation(ctx, "g1")
	if esc.State != Acknowledged {
		t.Fatalf("state %s, want ACKNOWLEDGED", esc.State)
	}
	if s := Status(esc, 2, time.UTC); s != "👀 acked by @ben after 6 min" {
		t.Errorf("Status = %q", s)
	}
}

func TestEscalationStopsWhenResolvedOrExhausted(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	_ = h.esc.Start(ctx, h.groups.g)
	_ = h.esc.RunStep(ctx, "g1", Position{1, 1})
	h.groups.g.Resolved = true
	if err := h.esc.RunStep(ctx, "g1", Position{1, 2}); err != nil {
		t.Fatal(err)
	}
	if esc, _ := h.store.Escalation(ctx, "g1"); esc.State != Resolved || len(h.pager.pages) != 2 {
		t.Fatalf("state %s, pages %v; want RESOLVED and no second page", esc.State, h.pager.pages)
	}

	h = newHarness(t)
	_ = h.esc.Start(ctx, h.groups.g)
	for pos := (Position{1, 1}); ; {
		if err := h.esc.RunStep(ctx, "g1", pos); err != nil {
			t.Fatal(err)
		}
		esc, _ := h.store.Escalation(ctx, "g1")
		if esc.State != Escalating {
			if esc.State != Exhausted {
				t.Fatalf("ended %s, want EXHAUSTED", esc.State)
			}
			break
		}
		pos = esc.Pos
	}
	if len(h.pager.pages) != 4 {
		t.Errorf("paged %d times over two steps, want 4", len(h.pager.pages))
	}
}

func TestUnroutedGroupDoesNotEscalate(t *testing.T) {
	h := newHarness(t)
	h.groups.g.Labels = map[string]string{"team": "web"}
	if err := h.esc.Start(context.Background(), h.groups.g); err != nil {
		t.Fatal(err)
	}
	if len(h.timer.jobs) != 0 {
		t.Errorf("scheduled %v for a group no policy takes", h.timer.jobs)
	}
}

func TestDirectMessageFailureIsRecordedAndChatMentionStillGoesOut(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	h.pager.blocked[ann.UserID] = true
	_ = h.esc.Start(ctx, h.groups.g)
	if err := h.esc.RunStep(ctx, "g1", Position{1, 1}); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(h.pager.pages, []page{{ChannelChat, ann}}) {
		t.Fatalf("pages %v, want the chat mention only", h.pager.pages)
	}
	esc, _ := h.store.Escalation(ctx, "g1")
	var failed *Event
	for i, ev := range esc.Timeline {
		if ev.Kind == EventNotifyFailed {
			failed = &esc.Timeline[i]
		}
	}
	if failed == nil || failed.Channel != ChannelDirect || failed.Participant != ann {
		t.Fatalf("timeline %+v has no failed direct message to ann", esc.Timeline)
	}
}

func TestConcurrentInstancesNotifyOnce(t *testing.T) {
	ctx := context.Background()
	h := newHarness(t)
	_ = h.esc.Start(ctx, h.groups.g)
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = h.esc.RunStep(ctx, "g1", Position{1, 1})
		}()
	}
	wg.Wait()
	if len(h.pager.pages) != 2 {
		t.Errorf("8 runners of one step paged %d times, want 2 (chat and direct, once)", len(h.pager.pages))
	}
}
