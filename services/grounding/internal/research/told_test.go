package research

import (
	"path/filepath"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// TestToldFloor: a source a part of the topic selects (a side, a quoted
// line, the setting) is evidence only when it is also about the topic as
// told, at toldFloor: the backlog runbook its side "rabbitmq federation"
// finds does not answer which of federation or shovel to run, nor
// nginx's worker connections a gunicorn WORKER TIMEOUT; the runbooks of
// two causes offered for a story stay when the story is about them
// (TestAlternativeSides).
func TestToldFloor(t *testing.T) {
	eval := filepath.Join(runbooktest.Dir(), "..", "..", "eval")
	rabbit := readRunbook(t, filepath.Join(runbooktest.Dir(), "rabbitmq-backlog.md"))
	nginx := readRunbook(t, filepath.Join(eval, "heldout4", "runbooks", "nginx-worker-connections.md"))
	for topic, src := range map[string]Source{
		"rabbitmq federation or shovel for copying the order events exchange from the eu cluster to the us cluster? which one survives a WAN outage better":                                                                                                                        rabbit,
		"gunicorn: `[CRITICAL] WORKER TIMEOUT (pid:4121)` every few minutes on the django reports pods (sync workers, --timeout 30, 4 workers per pod). the workers it kills were all waiting on the partner api. more workers, gthread/gevent workers, or just a bigger timeout?": nginx,
	} {
		plan, _ := OfflinePlanner{}.Plan(t.Context(), topic)
		if a := assess(topic, plan, []Source{src}); a.onTopic[0] {
			t.Errorf("%q: %s admitted", topic, src.Title)
		}
	}
}
