package e2e_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/e2e/faultinject"
	"github.com/groundcrew/groundcrew/e2e/providerfake"
)

// TestEnrichmentIsMarkedWhenMissing posts alerts through the gateway with
// Gemini stand-ins behind grounding (issue 19): an alert the fake web knows
// gets the enrichment block with its sources; a Gemini answer without
// grounding is replaced by the plain-words note; with Gemini failing every
// request the note says the model is unavailable, with Gemini slower than
// NOTIFIER_ENRICH_TIMEOUT that the search timed out; offline (no model, an
// empty local index) it says no sources were found. The alert's
// enrichmentError says the same words.
func TestEnrichmentIsMarkedWhenMissing(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	web := loadWeb(t)
	healthy := httptest.NewServer(&providerfake.Gemini{Web: web, APIKey: "gemini-key"})
	t.Cleanup(healthy.Close)
	uncited := httptest.NewServer(http.HandlerFunc(ungroundedGemini))
	t.Cleanup(uncited.Close)
	_, failing := faulty(t, &providerfake.Gemini{Web: web, APIKey: "gemini-key"}, faultinject.Config{
		Rate: 1, Faults: []faultinject.Fault{faultinject.Error}, Seed: 7, Body: providerfake.GeminiErrorBody,
	})
	_, slow := faulty(t, &providerfake.Gemini{Web: web, APIKey: "gemini-key"}, faultinject.Config{
		Rate: 1, Faults: []faultinject.Fault{faultinject.Slow}, Delay: 20 * time.Second, Seed: 8,
	})
	gemini := func(url string) map[string]string {
		return map[string]string{"GEMINI_API_KEY": "gemini-key", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": url}
	}
	type alertCase struct {
		text     string
		enriched bool   // the enrichment block with sources
		reason   string // otherwise the note's reason
	}
	tests := []struct {
		name   string
		env    map[string]string
		alerts []alertCase
	}{
		{
			name:   "gemini",
			env:    gemini(healthy.URL),
			alerts: []alertCase{{text: "Disk almost full on the database volume", enriched: true}},
		},
		{
			name:   "gemini answering without grounding",
			env:    gemini(uncited.URL),
			alerts: []alertCase{{text: "Disk almost full on the database volume", reason: "no sources found"}},
		},
		{
			name:   "gemini failing",
			env:    gemini(failing),
			alerts: []alertCase{{text: "Disk almost full on the database volume", reason: "model unavailable"}},
		},
		{
			name: "gemini too slow",
			env: func() map[string]string {
				env := gemini(slow)
				env["NOTIFIER_ENRICH_TIMEOUT"] = "1s"
				return env
			}(),
			alerts: []alertCase{{text: "Disk almost full on the database volume", reason: "search timed out"}},
		},
		{
			name:   "offline",
			env:    map[string]string{},
			alerts: []alertCase{{text: "Disk almost full on the database volume", reason: "no sources found"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.env["NOTIFIER_POLL_INTERVAL"] = "50ms"
			s := startStack(t, tt.env, "")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			for _, ac := range tt.alerts {
				var created struct{ Alert alertView }
				if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{"text": ac.text}, &created); err != nil {
					t.Fatal(err)
				}
				var got struct {
					Alert struct {
						alertView
						EnrichmentError string `json:"enrichmentError"`
					}
				}
				eventually(t, 45*time.Second, "the alert to be DELIVERED", func() bool {
					_, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+created.Alert.ID, nil, &got)
					return err == nil && (got.Alert.Status == "DELIVERED" || got.Alert.Status == "FAILED")
				})
				text := got.Alert.Message.Text
				if ac.enriched {
					if !strings.Contains(text, `\-\-\- Enriched Context \-\-\-`) || !strings.Contains(text, "Sources:") || got.Alert.EnrichmentError != "" {
						t.Errorf("%q: want the enrichment block with sources, got error %q and\n%s", ac.text, got.Alert.EnrichmentError, text)
					}
					continue
				}
				if strings.Contains(text, "Enriched Context") || strings.Contains(text, "Summary:") {
					t.Errorf("%q: an enrichment block without sources went out:\n%s", ac.text, text)
				}
				note := fmt.Sprintf("_Enrichment unavailable: %s_", ac.reason)
				if !strings.Contains(text, note) || got.Alert.EnrichmentError != ac.reason {
					t.Errorf("%q: want the note %q and enrichmentError %q, got %q and\n%s", ac.text, note, ac.reason, got.Alert.EnrichmentError, text)
				}
			}
		})
	}
}

// ungroundedGemini answers every generateContent as Gemini does when its
// search found nothing to ground on: a plausible text and no
// groundingMetadata.
func ungroundedGemini(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, `{"candidates":[{"content":{"role":"model","parts":[{"text":"Disks usually fill up because of logs; delete old ones."}]},`+
		`"finishReason":"STOP"}],"usageMetadata":{"promptTokenCount":12,"candidatesTokenCount":12,"totalTokenCount":24},"modelVersion":"gemini-test"}`)
}

// TestGeminiEnrichmentCitesTheRunbooks: with Gemini configured, an alert
// about a topic of the indexed runbooks is grounded on the search
// service's evidence found with the query DeriveQuery gave (not Gemini's
// own search) and delivered citing the runbook; without indexed runbooks
// Gemini's own search grounds it, and the redirect links its chunks carry
// are resolved: the alert cites the runbook's address, never a redirect
// link.
func TestGeminiEnrichmentCitesTheRunbooks(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the whole stack")
	}
	web := loadWeb(t)
	const text = "Disk almost full on the database volume"
	var runbook string
	for _, d := range web.Docs() {
		if strings.Contains(d.URL, "disk-full") {
			runbook = d.URL
		}
	}
	if runbook == "" {
		t.Fatal("no disk-full runbook in examples/runbooks")
	}
	for _, indexed := range []bool{true, false} {
		t.Run(map[bool]string{true: "indexed runbooks", false: "gemini search"}[indexed], func(t *testing.T) {
			gemini := &providerfake.Gemini{Web: web, APIKey: "gemini-key"}
			srv := httptest.NewServer(gemini)
			t.Cleanup(srv.Close)
			s := startStack(t, map[string]string{
				"GEMINI_API_KEY": "gemini-key", "GEMINI_MODEL": "gemini-test", "GOOGLE_GEMINI_BASE_URL": srv.URL,
				"NOTIFIER_POLL_INTERVAL": "50ms",
			}, "")
			ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
			defer cancel()
			if indexed {
				if _, err := call(ctx, "POST", s.GatewayURL+"/v1/search/documents", map[string]any{"documents": runbookDocs(t)}, nil); err != nil {
					t.Fatal(err)
				}
			}
			var derived struct{ Query string }
			if _, err := call(ctx, "POST", s.GatewayURL+"/v1/ground:query", map[string]any{"text": text}, &derived); err != nil || derived.Query == "" {
				t.Fatalf("DeriveQuery: %+v, %v", derived, err)
			}
			var created struct{ Alert alertView }
			if _, err := call(ctx, "POST", s.GatewayURL+"/v1/alerts", map[string]any{"text": text}, &created); err != nil {
				t.Fatal(err)
			}
			var got struct {
				Alert struct {
					alertView
					GroundingMessageID string `json:"groundingMessageId"`
					EnrichmentError    string `json:"enrichmentError"`
				}
			}
			eventually(t, 45*time.Second, "the alert to be DELIVERED", func() bool {
				_, err := call(ctx, "GET", s.GatewayURL+"/v1/alerts/"+created.Alert.ID, nil, &got)
				return err == nil && (got.Alert.Status == "DELIVERED" || got.Alert.Status == "FAILED")
			})
			msg := got.Alert.Message.Text
			if got.Alert.EnrichmentError != "" || !strings.Contains(msg, "Sources:") {
				t.Fatalf("not enriched (%q):\n%s", got.Alert.EnrichmentError, msg)
			}
			// MarkdownV2 escapes the URL's dots and hyphens.
			if plain := strings.ReplaceAll(msg, `\`, ""); !strings.Contains(plain, runbook) || strings.Contains(plain, "grounding-api-redirect") {
				t.Errorf("the message does not cite %s, or shows a redirect link:\n%s", runbook, msg)
			}
			var m struct {
				Engine          string `json:"engine"`
				GroundedContext struct {
					Query   string           `json:"query"`
					Results []map[string]any `json:"results"`
				} `json:"groundedContext"`
				Citations []struct{ URL, Title, Domain string } `json:"citations"`
			}
			if _, err := call(ctx, "GET", s.GatewayURL+"/v1/messages/"+got.Alert.GroundingMessageID, nil, &m); err != nil {
				t.Fatal(err)
			}
			for _, c := range m.Citations {
				if strings.Contains(c.URL, "grounding-api-redirect") || c.Domain != "runbooks.groundcrew.example" {
					t.Errorf("citation %+v names a redirect link or the wrong domain", c)
				}
			}
			if indexed {
				// The search service was asked with the derived query, and
				// its local index answered.
				if m.GroundedContext.Query != derived.Query || m.Engine == "NATIVE" || len(m.GroundedContext.Results) == 0 {
					t.Errorf("engine %s query %q (%d results); want the search service asked with %q", m.Engine, m.GroundedContext.Query, len(m.GroundedContext.Results), derived.Query)
				}
				if gemini.Calls() < 3 {
					t.Errorf("Gemini answered %d requests; want the query, the test's query and the grounded answer", gemini.Calls())
				}
			} else if m.Engine != "NATIVE" {
				t.Errorf("engine %s; want NATIVE when the search service has nothing", m.Engine)
			}
		})
	}
}
