package raggrpc

import (
	"fmt"
	"io"
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

// TestGroqInventedCitations: a model inventing citation markers never
// reaches a client with a marker that has no source, over Ask and over
// AskStream. What it cites becomes the sources, renumbered in order of
// first use; an answer citing nothing retrieved has no sources and is
// marked for review.
func TestGroqInventedCitations(t *testing.T) {
	const q = "How do I fix too many Postgres connections?"
	tests := []struct {
		name   string
		reply  string
		answer string
		urls   []string
		review bool
		drops  int32
	}{
		{"out of range and zero", "VERDICT: IN_SCOPE; PRIMARY: 1\n\nPut PgBouncer in front [7][0]. Raise max_connections [1].",
			"Put PgBouncer in front. Raise max_connections [1].", []string{"https://runbooks.example.com/postgres"}, false, 2},
		{"repeated", "VERDICT: IN_SCOPE; PRIMARY: 1\n\nPut PgBouncer in front [1][1].",
			"Put PgBouncer in front [1].", []string{"https://runbooks.example.com/postgres"}, false, 1},
		{"code is not a citation", "VERDICT: IN_SCOPE; PRIMARY: 1\n\nSet it:\n```\nmax_connections[2]\n```\nSee the runbook [1].",
			"Set it:\n```\nmax_connections[2]\n```\nSee the runbook [1].", []string{"https://runbooks.example.com/postgres"}, false, 0},
		{"nothing valid", "VERDICT: IN_SCOPE; PRIMARY: 1\n\nPut PgBouncer in front [7].",
			"Put PgBouncer in front.", nil, true, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if strings.Contains(readAll(r), `"stream":true`) {
					w.Header().Set("Content-Type", "text/event-stream")
					// One character per event: markers arrive in pieces.
					for _, c := range tt.reply {
						fmt.Fprintf(w, "data: {\"id\":\"c\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"m\",\"choices\":[{\"index\":0,\"delta\":{\"content\":%q}}]}\n\n", string(c))
					}
					fmt.Fprint(w, "data: [DONE]\n\n")
					return
				}
				w.Header().Set("Content-Type", "application/json")
				fmt.Fprintf(w, `{"id":"c","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"finish_reason":"stop","message":{"role":"assistant","content":%q}}]}`, tt.reply)
			}))
			t.Cleanup(llm.Close)
			gen, err := groq.New(groq.Config{APIKey: "k", Model: "llama-test", BaseURL: llm.URL, HTTPClient: llm.Client()})
			if err != nil {
				t.Fatal(err)
			}
			f := newFixture(t, fixtureOptions{generator: gen})
			f.ingest(t, "ops", runbooks...)
			resp, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: q})
			if err != nil {
				t.Fatal(err)
			}
			_, deltas, streamed := collect(t, f.client, &ragv1.AskStreamRequest{Collection: "ops", Query: q})
			if got := strings.Join(deltas, ""); got != tt.answer {
				t.Errorf("streamed deltas add up to %q, want %q", got, tt.answer)
			}
			for name, r := range map[string]*ragv1.AgentResponse{"Ask": resp.GetResponse(), "AskStream": streamed} {
				if r.GetAnswer() != tt.answer {
					t.Errorf("%s answer = %q, want %q", name, r.GetAnswer(), tt.answer)
				}
				var urls []string
				for _, s := range r.GetSources() {
					urls = append(urls, s.GetUrl())
				}
				if diff := cmp.Diff(tt.urls, urls); diff != "" {
					t.Errorf("%s sources (-want +got):\n%s", name, diff)
				}
				if r.GetNeedsReview() != tt.review || (r.GetReviewReason() != "") != tt.review || r.GetDroppedCitations() != tt.drops {
					t.Errorf("%s needs_review %v (%q), dropped %d; want %v, %d", name, r.GetNeedsReview(), r.GetReviewReason(), r.GetDroppedCitations(), tt.review, tt.drops)
				}
				if tt.review && (r.GetPrimarySource() != "" || r.GetPrimary() != nil) {
					t.Errorf("%s: an uncited answer names a primary source: %q", name, r.GetPrimarySource())
				}
				if !tt.review && !strings.HasPrefix(r.GetPrimarySource(), "Source: Document 1: [Postgres connections]") {
					t.Errorf("%s primary = %q", name, r.GetPrimarySource())
				}
				if !r.GetSuccess() || r.GetState() != ragv1.AgentResponse_COMPLETED {
					t.Errorf("%s: success %v, state %v", name, r.GetSuccess(), r.GetState())
				}
			}
		})
	}
}

// readAll reads a request body for the stand-in to look at.
func readAll(r *http.Request) string {
	b, _ := io.ReadAll(r.Body)
	return string(b)
}

// TestGroqKeyNeverLogged: a provider echoing the request's path and
// headers in its errors leaves the key in no log line and no response
// field; the extractive writer answers instead.
func TestGroqKeyNeverLogged(t *testing.T) {
	const key = "gsk_LOGTESTkey0123456789abcdefghijklmnopqrstuvwx"
	llm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprintf(w, `{"error":{"message":"bad key %s sent to %s as Authorization: %s","type":"invalid_request_error","code":"invalid_api_key"}}`,
			key, r.URL.Path, r.Header.Get("Authorization"))
	}))
	t.Cleanup(llm.Close)
	gen, err := groq.New(groq.Config{APIKey: key, Model: "llama-test", BaseURL: llm.URL, HTTPClient: llm.Client(), MaxRetries: -1})
	if err != nil {
		t.Fatal(err)
	}
	f := newFixture(t, fixtureOptions{generator: gen})
	f.ingest(t, "ops", runbooks...)
	resp, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: "How do I fix too many Postgres connections?"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetResponse().GetModel() != "extractive" {
		t.Errorf("model = %q, want the extractive fallback", resp.GetResponse().GetModel())
	}
	logs := f.logs.String()
	if !strings.Contains(logs, "answering extractively") || !strings.Contains(logs, "invalid_api_key") {
		t.Errorf("the writer's failure is not logged with its reason:\n%s", logs)
	}
	for _, secret := range []string{key, "LOGTESTkey"} {
		if strings.Contains(logs, secret) || strings.Contains(fmt.Sprint(resp), secret) {
			t.Errorf("the key reached the log or the response:\n%s", logs)
		}
	}
}
