package grounding_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/relevance"
	"github.com/groundcrew/groundcrew/services/grounding/internal/runbooktest"
)

// ask sends text to the agent as one person's message and returns the
// reply.
func ask(t *testing.T, svc *grounding.Service, text string) *grounding.ConverseReply {
	t.Helper()
	reply, err := svc.Converse(t.Context(), grounding.ConverseRequest{
		History:  []grounding.ChatMsg{{ID: "1", Speaker: "Ana", SpeakerID: "84211", Parts: []grounding.ChatPart{{Text: text}}}},
		TargetID: "1",
	})
	if err != nil {
		t.Fatal(err)
	}
	return reply
}

// searchResult is rb as the search service returns it for query: as its
// snippet, the passage of whole sentences (at most 300 characters) that
// holds the most of the query's words, its whole text for a request that
// asks for it.
func searchResult(rb runbooktest.Doc, query string) grounding.SearchResult {
	var words []string
	for _, w := range strings.Fields(strings.ToLower(query)) {
		if len(w) > 2 {
			words = append(words, w)
		}
	}
	sentences := strings.Split(strings.ReplaceAll(rb.Text, ". ", ".\n"), "\n")
	var best string
	most := -1
	for i := range sentences {
		passage := sentences[i]
		for j := i + 1; j < len(sentences) && len(passage)+1+len(sentences[j]) <= 300; j++ {
			passage += " " + sentences[j]
		}
		n := 0
		for _, w := range words {
			if strings.Contains(strings.ToLower(passage), w) {
				n++
			}
		}
		if n > most {
			best, most = passage, n
		}
	}
	if r := []rune(best); len(r) > 300 {
		best = string(r[:299]) + "…"
	}
	host := strings.Split(strings.TrimPrefix(rb.URL, "https://"), "/")[0]
	return grounding.SearchResult{Title: rb.Title, URL: rb.URL, SourceDomain: host, Snippet: best, Text: rb.Text}
}

// sourcesListed are the URLs of a reply's "Sources:" list.
func sourcesListed(reply *grounding.ConverseReply) []string {
	_, list, _ := strings.Cut(reply.Text, "\n\nSources:\n")
	var urls []string
	for line := range strings.SplitSeq(list, "\n") {
		if i := strings.LastIndex(line, " — "); i >= 0 {
			urls = append(urls, line[i+len(" — "):])
		}
	}
	return urls
}

// checkReplyCitations: every citation's span of the reply is its snippet,
// its source is in the Sources list, its confidence in [0,1]; the list
// names only cited sources.
func checkReplyCitations(t *testing.T, reply *grounding.ConverseReply) {
	t.Helper()
	runes := []rune(reply.Text)
	listed := sourcesListed(reply)
	var cited []string
	for _, c := range reply.Citations {
		if c.StartIndex < 0 || c.EndIndex > len(runes) || c.StartIndex >= c.EndIndex {
			t.Errorf("citation span [%d,%d) outside a reply of %d characters", c.StartIndex, c.EndIndex, len(runes))
			continue
		}
		if got := string(runes[c.StartIndex:c.EndIndex]); got != c.Snippet {
			t.Errorf("reply[%d:%d] = %q, want the snippet %q", c.StartIndex, c.EndIndex, got, c.Snippet)
		}
		if c.ConfidenceScore < 0 || c.ConfidenceScore > 1 {
			t.Errorf("citation confidence %v outside [0,1]", c.ConfidenceScore)
		}
		if !slices.Contains(cited, c.URL) {
			cited = append(cited, c.URL)
		}
	}
	slices.Sort(cited)
	slices.Sort(listed)
	if !slices.Equal(cited, listed) {
		t.Errorf("Sources lists %v, the reply cites %v:\n%s", listed, cited, reply.Text)
	}
}

// TestConverseOfflineRelevantUnquoted: offline, a message relevance finds
// a runbook about, but whose opening the summariser cannot quote (the
// message is a log line the runbook quotes only after its overview), is
// answered with the runbook's own first diagnostic step and mitigation,
// cited to it with its relevance score, as Ground answers such an alert;
// not with "nothing found". A source about something else is neither
// quoted nor listed, and with only such sources the reply says nothing
// was found and what to do.
func TestConverseOfflineRelevantUnquoted(t *testing.T) {
	for _, tt := range unquotedRunbookCases {
		t.Run(tt.name, func(t *testing.T) {
			rb := runbooktest.ReadFile(t, filepath.Join("testdata", "runbooks", tt.runbook))
			f := newFixture(t, nil)
			q := f.svc.DeriveQuery(t.Context(), tt.input)
			f.search.results = []grounding.SearchResult{unrelatedResult, searchResult(rb, q.Query)}
			reply := ask(t, f.svc, tt.input)
			t.Logf("reply:\n%s", reply.Text)
			if !strings.HasPrefix(reply.Text, grounding.OfflineLabel+"\n") || reply.Model != grounding.MethodExtractive {
				t.Errorf("reply %q (model %q) is not labelled offline", reply.Text, reply.Model)
			}
			if len(reply.Citations) != 1 {
				t.Fatalf("%d citations %+v; want one, to %s", len(reply.Citations), reply.Citations, rb.URL)
			}
			c := reply.Citations[0]
			if c.URL != rb.URL || c.Title != rb.Title || c.Domain != "wiki.example.com" || c.SourceIndex != 1 {
				t.Errorf("citation %+v; want %s (%q, wiki.example.com), source 1", c, rb.URL, rb.Title)
			}
			if c.ConfidenceScore < relevance.Bar {
				t.Errorf("citation confidence %v; want the runbook's relevance, at least %v", c.ConfidenceScore, relevance.Bar)
			}
			wantInOrder(t, "reply", reply.Text, tt.want)
			wantRunbookWords(t, c.Snippet, rb.Text)
			if strings.Contains(reply.Text, "Bananas") || strings.Contains(reply.Text, unrelatedResult.URL) {
				t.Errorf("the reply quotes or lists a source relevance dropped:\n%s", reply.Text)
			}
			checkReplyCitations(t, reply)

			// Nothing about the message: no citation, and the reply says
			// what to do.
			f.search.results = []grounding.SearchResult{unrelatedResult}
			reply = ask(t, f.svc, tt.input)
			if want := grounding.OfflineLabel + "\n" + grounding.NothingFoundReply; reply.Text != want || len(reply.Citations) != 0 {
				t.Errorf("with no relevant source: reply %q, citations %+v; want %q and none", reply.Text, reply.Citations, want)
			}
		})
	}
}

// TestConverseEvidence: the chat agent's evidence is chosen as
// enrichment's is — relevance judges each runbook's whole document, not
// the passage the search service returns, and when nothing the derived
// query found is about the message it searches again with the message's
// own keywords. The offline reply cites and lists only that evidence.
func TestConverseEvidence(t *testing.T) {
	books := map[string]runbooktest.Doc{}
	for _, rb := range runbooktest.Load(t) {
		books[rb.URL[strings.LastIndex(rb.URL, "/")+1:]] = rb
	}
	istio := grounding.SearchResult{Title: "Istio / Envoy: 503s with upstream reset or connection failure flags", URL: "https://runbooks.example.com/istio",
		Snippet: "When a caller sees a 503 that the application never logged, the sidecar produced it.",
		Text: "When a caller sees a 503 that the application never logged, the sidecar produced it: Envoy writes the reason into the access log as response flags.\n" +
			"The alert that usually pages is IstioHighRequestFailures (5xx ratio from istio_requests_total above 5%).\nWhere to look first\nRead the caller's sidecar log.\nFixes by flag\nUC: set the idle timeout below the app's keep-alive."}
	checkout := grounding.SearchResult{Title: "Checkout — 5xx error rate high", URL: "https://runbooks.example.com/checkout-5xx",
		Snippet: "Alert: CheckoutErrorRateHigh fires when more than 2% of checkout requests return 5xx.",
		Text:    "Alert: CheckoutErrorRateHigh fires when more than 2% of checkout requests return 5xx.\nDiagnose\nRead the checkout logs.\nMitigate\nRoll back the last deploy."}
	tests := []struct {
		name    string
		message string
		found   []string // runbooks (by URL's last element) the search service returns
		// passages are snippets the local index returned for a runbook
		// of found (by name), instead of searchResult's.
		passages map[string]string
		byQuery  map[string][]grounding.SearchResult
		cites    []string // URLs the reply must cite; none: nothing found
	}{
		{
			// The passage the local index returns passes for a Postgres
			// outage; the runbook as a whole is about backups.
			name: "a database down is not a stale backup",
			message: "[FIRING] PostgresqlNotHealthy (critical): Postgresql down (instance reports-db)\n" +
				"Postgresql instance is down.\ninstance=reports-db",
			found: []string{"database-backup-stale"},
			passages: map[string]string{"database-backup-stale": "… newest successful database backup is older than 26 hours; " +
				"BackupJobFailed when the backup job reported a failure. Diagnose. Check the backup tool's log (pgBackRest info, WAL-G " +
				"backup-list, or the CronJob's pod logs) for the last successful backup and the error of the latest run. Common causes: …"},
		},
		{
			name:    "Redis memory is not PgBouncer",
			message: "Redis memory usage at 95% on cache-3 (maxmemory 4gb), what should I do?",
			found:   []string{"postgres-too-many-connections", "redis-memory-high"},
			cites:   []string{"https://runbooks.groundcrew.example/redis-memory-high"},
		},
		{
			name: "found by the message's keywords",
			message: "[FIRING] IstioHighRequestFailures (warning): High 5xx rate from cart to inventory\n" +
				"7.4% of requests from cart to inventory return 503 (response_flags UC) over 5 minutes.",
			byQuery: map[string][]grounding.SearchResult{"istio high request failures 5xx cart inventory return": {istio, checkout}},
			cites:   []string{istio.URL},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, nil)
			q := f.svc.DeriveQuery(t.Context(), tt.message)
			f.search.results = []grounding.SearchResult{checkout}
			if tt.found != nil {
				f.search.results = nil
				for _, name := range tt.found {
					rb, ok := books[name]
					if !ok {
						t.Fatalf("no example runbook %s", name)
					}
					r := searchResult(rb, q.Query)
					if p, ok := tt.passages[name]; ok {
						r.Snippet = p
					}
					f.search.results = append(f.search.results, r)
				}
			}
			f.search.byQuery = tt.byQuery
			reply := ask(t, f.svc, tt.message)
			t.Logf("reply:\n%s", reply.Text)
			var cited []string
			for _, c := range reply.Citations {
				if !slices.Contains(cited, c.URL) {
					cited = append(cited, c.URL)
				}
			}
			if !slices.Equal(cited, tt.cites) {
				t.Errorf("cites %v, want %v:\n%s", cited, tt.cites, reply.Text)
			}
			if len(tt.cites) == 0 && reply.Text != grounding.OfflineLabel+"\n"+grounding.NothingFoundReply {
				t.Errorf("reply %q; want the nothing-found reply", reply.Text)
			}
			checkReplyCitations(t, reply)
		})
	}
}

// TestConverseSearchesAsGround: the chat agent asks the search service
// for whole documents, and for groundcrew's own runbooks only when the
// message is one of groundcrew's alerts, as Ground does.
func TestConverseSearchesAsGround(t *testing.T) {
	tests := []struct {
		message string
		exclude bool
	}{
		{"[FIRING] GroundcrewServiceDown (critical): grounding is down\njob=grounding", false},
		{"The notifier is down again, what now?\njob=notifier service=groundcrew", false},
		{"Disk almost full on db-1: / at 96% used, what should I do?", true},
	}
	for _, tt := range tests {
		f := newFixture(t, nil)
		ask(t, f.svc, tt.message)
		if len(f.search.requests) == 0 {
			t.Fatalf("%q: no search", tt.message)
		}
		got := f.search.requests[0]
		if excluded := slices.Contains(got.ExcludeCollections, grounding.GroundcrewCollection); excluded != tt.exclude || !got.IncludeText {
			t.Errorf("%q: search %+v; want groundcrew's collection excluded %v and whole documents", tt.message, got, tt.exclude)
		}
	}
}

// TestConverseOfflineSearchFailed: when the search service fails, the
// offline reply says search is unavailable (not that nothing is about the
// message, which would send the person rephrasing), and leaks no error
// text.
func TestConverseOfflineSearchFailed(t *testing.T) {
	f := newFixture(t, nil)
	f.search.err = errors.New("rpc error: code = Unavailable desc = connection refused to 10.0.0.7:50051")
	reply := ask(t, f.svc, "Why does Postgres say too many clients already?")
	if want := grounding.OfflineLabel + "\n" + grounding.SearchFailedReply; reply.Text != want || len(reply.Citations) != 0 {
		t.Errorf("reply %q, citations %+v; want %q and none", reply.Text, reply.Citations, want)
	}
}
