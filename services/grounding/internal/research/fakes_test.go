package research

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// memStore is an in-memory Store with a job list the tests drain by hand.
// It deep-copies through JSON, as a database would, so tests see what was
// committed and nothing else.
type memStore struct {
	mu        sync.Mutex
	runs      map[string][]byte
	approvals map[string][]byte
	order     []string // approval ids in creation order
	reports   map[string]*ReportRecord
	jobs      []Job
}

func newMemStore() *memStore {
	return &memStore{runs: map[string][]byte{}, approvals: map[string][]byte{}, reports: map[string]*ReportRecord{}}
}

var _ Store = (*memStore)(nil)

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

func decode[T any](b []byte) *T {
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		panic(err)
	}
	return v
}

func (m *memStore) CreateRun(_ context.Context, run *Run, jobs []Job) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.runs[run.ID] = mustJSON(run)
	m.jobs = append(m.jobs, jobs...)
	return nil
}

func (m *memStore) GetRun(_ context.Context, id string) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.runs[id]
	if !ok {
		return nil, ErrNotFound
	}
	return decode[Run](b), nil
}

func (m *memStore) ListRuns(context.Context, string, Page) ([]*Run, string, error) {
	return nil, "", fmt.Errorf("memStore does not list runs: no domain test needs it (researchstore tests listing)")
}

func (m *memStore) GetApproval(_ context.Context, id string) (*Approval, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.approvals[id]
	if !ok {
		return nil, ErrNotFound
	}
	return decode[Approval](b), nil
}

func (m *memStore) ListApprovals(_ context.Context, f ApprovalFilter, _ Page) ([]*Approval, string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Approval
	for _, id := range slices.Backward(m.order) {
		a := decode[Approval](m.approvals[id])
		if (f.Status == "" || a.Status == f.Status) && (f.RunID == "" || a.RunID == f.RunID) {
			out = append(out, a)
		}
	}
	return out, "", nil
}

func (m *memStore) GetReport(_ context.Context, runID string) (*ReportRecord, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.reports[runID]
	if !ok {
		return nil, ErrNotFound
	}
	return r, nil
}

func (m *memStore) Update(_ context.Context, runID string, fn func(*Change) error) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.runs[runID]
	if !ok {
		return ErrNotFound
	}
	c := &Change{Run: decode[Run](b)}
	for _, id := range m.order {
		if a := decode[Approval](m.approvals[id]); a.RunID == runID {
			c.Approvals = append(c.Approvals, a)
		}
	}
	if err := fn(c); err != nil {
		if err == ErrNoChange {
			return nil
		}
		return err
	}
	m.runs[runID] = mustJSON(c.Run)
	for _, a := range c.Approvals {
		if _, ok := m.approvals[a.ID]; !ok {
			m.order = append(m.order, a.ID)
		}
		m.approvals[a.ID] = mustJSON(a)
	}
	if c.Report != nil {
		m.reports[runID] = c.Report
	}
	m.jobs = append(m.jobs, c.Jobs...)
	return nil
}

// takeJob removes and returns the first job due at now.
func (m *memStore) takeJob(now time.Time) (Job, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, j := range m.jobs {
		if j.NotBefore.IsZero() || !j.NotBefore.After(now) {
			m.jobs = slices.Delete(m.jobs, i, i+1)
			return j, true
		}
	}
	return Job{}, false
}

func (m *memStore) pending() []Job {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.jobs)
}

// drain runs due jobs until none is left, as a queue with one worker
// would, failing the test on a job error. It bounds the number of jobs so a
// loop that never ends fails instead of hanging.
func drain(t *testing.T, svc *Service, st *memStore, clk *fakeClock) {
	t.Helper()
	for n := 0; ; n++ {
		if n > 200 {
			t.Fatal("more than 200 jobs: the run does not terminate")
		}
		job, ok := st.takeJob(clk.Now())
		if !ok {
			return
		}
		job.Attempt, job.MaxAttempts = 1, 3
		if err := svc.HandleJob(t.Context(), job); err != nil {
			t.Fatalf("HandleJob(%+v): %v", job, err)
		}
	}
}

type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = t
}

// fakeSearch answers every query with results keyed on its words: each
// query gets perQuery hits on hosts drawn from a fixed set, so URLs repeat
// across queries and must be de-duplicated.
type fakeSearch struct {
	mu      sync.Mutex
	queries []string
	fn      func(query string, n int) ([]Evidence, error)
}

func (f *fakeSearch) Search(_ context.Context, query string, n int) ([]Evidence, error) {
	f.mu.Lock()
	f.queries = append(f.queries, query)
	f.mu.Unlock()
	return f.fn(query, n)
}

type fakeNotifier struct {
	mu   sync.Mutex
	sent []Message
	err  error
}

func (f *fakeNotifier) Send(_ context.Context, m Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	f.sent = append(f.sent, m)
	return fmt.Sprintf("msg-%d", len(f.sent)), nil
}

func (f *fakeNotifier) messages() []Message {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.sent)
}

// richEvidence returns passages that address every angle of the offline
// planner, from several domains, so a run reaches a high score.
func richEvidence(query string, n int) ([]Evidence, error) {
	subject := "kubernetes operators"
	passages := []Evidence{
		{Title: "Kubernetes operators explained", URL: "https://kubernetes.io/docs/operators", Snippet: "Kubernetes operators are controllers that work by watching custom resources; the architecture is a reconcile loop."},
		{Title: "Benefits of Kubernetes operators", URL: "https://redhat.com/operators/benefits", Snippet: "Kubernetes operators improve reliability and reduce toil; a key benefit is automated upgrades."},
		{Title: "Operator risks", URL: "https://cncf.io/blog/operator-risks", Snippet: "Kubernetes operators carry risks: a buggy operator can fail and cause outages; the limitation is complexity."},
		{Title: "Operator best practices", URL: "https://sdk.operatorframework.io/best-practices", Snippet: "Best practice: kubernetes operators should be idempotent; we recommend one controller per resource."},
		{Title: "How operators work", URL: "https://blog.example.org/how-operators-work", Snippet: "How kubernetes operators work: the process watches state and the design drives it to the desired state."},
		{Title: "Operator pitfalls", URL: "https://engineering.example.com/operator-pitfalls", Snippet: "Kubernetes operators have problems with upgrades; however the benefit of automation is large, and the process is a loop."},
		{Title: "Operator patterns", URL: "https://www.kubernetes.io/docs/operators/", Snippet: "A duplicate of the first page under another spelling of its URL, about " + subject + "."},
		{Title: "Kubernetes operators, the long page", URL: "https://long.example.net/page", Snippet: "Kubernetes operators " + strings.Repeat("recommend practice ", 200)},
	}
	// Rotate by query so each sub-question sees a different first hit.
	k := len(query) % len(passages)
	out := append(slices.Clone(passages[k:]), passages[:k]...)
	return out[:min(n, len(out))], nil
}
