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
