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
	plan, err := OfflinePlanner{}.Plan(t.Context(), topic)
	if err != nil {
		t.Fatalf("Plan(%q): %v", topic, err)
	}
	return assess(topic, plan, sources)
}
