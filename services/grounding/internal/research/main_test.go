package research

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a test leaves a goroutine behind: the
// research step fans lookups out to goroutines, and none may outlive it.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// assessed plans topic as the offline planner does and judges sources
// against the plan: which it admits, for which sections.
func assessed(t *testing.T, topic string, sources []Source) assessment {
	t.Helper()
	return assess(topic, offlinePlan(t, topic), sources)
}

// offlinePlan is the offline planner's plan for topic.
func offlinePlan(t *testing.T, topic string) []string {
	t.Helper()
	plan, err := OfflinePlanner{}.Plan(t.Context(), topic)
	if err != nil {
		t.Fatalf("Plan(%q): %v", topic, err)
	}
	return plan
}

// admitsAll fails t unless every one of sources is admitted for topic.
func admitsAll(t *testing.T, topic string, sources ...Source) {
	t.Helper()
	a := assessed(t, topic, sources)
	for i, src := range sources {
		if !a.onTopic[i] {
			t.Errorf("%q: %s not admitted", topic, src.Title)
		}
	}
}
