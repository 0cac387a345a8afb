package raggrpc

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/services/rag/internal/groq"
)

// TestAskStreamWithGroq runs AskStream with the Groq writer against a
// local server streaming OpenAI chat-completion chunks: the model's text
// arrives as deltas, without its verdict line, and the primary source is
// the chunk the model named.
func TestAskStreamWithGroq(t *testing.T) {
	pieces := []string{"VERDICT: IN_SCOPE; PRIMARY: 1\n\n", "Put PgBouncer in front ", "of Postgres [1]."}
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		for _, p := range pieces {
			fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", p)
		}
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	t.Cleanup(llm.Close)
	gen, err := groq.New(groq.Config{APIKey: "k", Model: "llama-test", BaseURL: llm.URL, HTTPClient: llm.Client()})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{generator: gen})
	f.ingest(t, "ops", runbooks...)
	states, deltas, final := collect(t, f.client, &ragv1.AskStreamRequest{Collection: "ops", Query: "How do I fix too many Postgres connections?"})
	if diff := cmp.Diff([]string{"Put PgBouncer in front", " of Postgres [1]."}, deltas); diff != "" {
		t.Errorf("deltas (-want +got):\n%s", diff)
	}
	if final.GetAnswer() != strings.Join(deltas, "") || final.GetModel() != "llama-test" || final.GetState() != ragv1.AgentResponse_COMPLETED ||
		!strings.HasPrefix(final.GetPrimarySource(), "Source: Document 1: [Postgres connections]") {
		t.Errorf("final = %v", final)
	}
	if len(states) != 5 {
		t.Errorf("states = %v", states)
	}
}
