package notifiergrpc

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/notifier/internal/format"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

func newClient(t *testing.T) notifierv1.NotifierServiceClient {
	t.Helper()
	return newClientWith(t, Deps{})
}

func newClientWith(t *testing.T, deps Deps) notifierv1.NotifierServiceClient {
	t.Helper()
	conn := grpcservertest.Serve(t, func(srv *grpc.Server) {
		notifierv1.RegisterNotifierServiceServer(srv, NewNotifierService(slog.New(slog.NewTextHandler(io.Discard, nil)), deps))
	})
	return notifierv1.NewNotifierServiceClient(conn)
}

func TestFormatMessageFollowsTheContract(t *testing.T) {
	c := newClient(t)
	conf := 0.8
	resp, err := c.FormatMessage(context.Background(), &notifierv1.FormatMessageRequest{
		Alert: &notifierv1.AlertInput{Text: "High error rate on checkout-api: 5xx > 10% for 5m"},
		Enrichment: &notifierv1.Enrichment{
			Summary:    "Check the upstream payment gateway (v2.1).",
			Confidence: &conf,
			Citations: []*notifierv1.EnrichmentCitation{
				{Title: "Checkout runbook", Snippet: "5xx spikes usually mean the payments upstream is down.", Url: "https://runbooks.example.com/checkout"},
				{Title: "Status page", Url: "https://status.example.com/"},
				{Title: "c", Url: "https://c.example.com/"},
				{Title: "d", Url: "https://d.example.com/"},
			},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := resp.GetMessage()
	if m.GetParseMode() != "MarkdownV2" || !m.GetDisableWebPagePreview() {
		t.Errorf("parse mode %q, preview off %v; want MarkdownV2 and true", m.GetParseMode(), m.GetDisableWebPagePreview())
	}
	plain, _, err := markdownv2.Parse(m.GetText())
	if err != nil {
		t.Fatalf("rendered text is not valid MarkdownV2: %v\n%s", err, m.GetText())
	}
	want := "High error rate on checkout-api: 5xx > 10% for 5m\n\n--- Enriched Context ---\n" +
		"Summary: Check the upstream payment gateway (v2.1).\nSources:\n" +
		"- Checkout runbook — 5xx spikes usually mean the payments upstream is down. — https://runbooks.example.com/checkout\n" +
		"- Status page — https://status.example.com/\n" +
		"- c — https://c.example.com/"
	if plain != want {
		t.Errorf("after entity parsing got\n%q\nwant\n%q", plain, want)
	}
	if resp.GetDroppedSources() != 1 {
		t.Errorf("dropped sources = %d, want 1 (only 3 are shown)", resp.GetDroppedSources())
	}
	if !strings.Contains(m.GetText(), `\-\-\- Enriched Context \-\-\-`) {
		t.Errorf("separator not escaped: %s", m.GetText())
	}
}

// TestFormatMessageMaxSources: max_sources, or else the configured limit,
// bounds the sources shown; within it nothing is dropped.
func TestFormatMessageMaxSources(t *testing.T) {
	var citations []*notifierv1.EnrichmentCitation
	for i := range 5 {
		citations = append(citations, &notifierv1.EnrichmentCitation{Title: fmt.Sprintf("S%d", i+1), Url: fmt.Sprintf("https://s%d.example.com/", i+1)})
	}
	tests := []struct {
		name        string
		configured  int
		requested   *int32
		wantShown   int
		wantDropped int32
	}{
		{"requested 5", 0, proto.Int32(5), 5, 0},
		{"configured 5", 5, nil, 5, 0},
		{"requested 2 over configured 5", 5, proto.Int32(2), 2, 3},
		{"default", 0, nil, 3, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newClientWith(t, Deps{Format: format.Options{MaxSources: tt.configured}})
			resp, err := c.FormatMessage(context.Background(), &notifierv1.FormatMessageRequest{
				Alert:      &notifierv1.AlertInput{Text: "disk full"},
				Enrichment: &notifierv1.Enrichment{Summary: "Five sources agree.", Citations: citations},
				MaxSources: tt.requested,
			})
			if err != nil {
				t.Fatal(err)
			}
			plain, _, err := markdownv2.Parse(resp.GetMessage().GetText())
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Count(plain, "\n- S"); got != tt.wantShown {
				t.Errorf("%d sources shown, want %d:\n%s", got, tt.wantShown, plain)
			}
			if resp.GetDroppedSources() != tt.wantDropped {
				t.Errorf("dropped %d, want %d", resp.GetDroppedSources(), tt.wantDropped)
			}
			if tt.wantDropped == 0 && len(resp.GetTruncations()) > 0 {
				t.Errorf("truncations %q, want none", resp.GetTruncations())
			}
		})
	}
}

// TestFormatMessageWithoutSources: an enrichment with no usable source is
// the note, never an uncited summary under the enrichment header.
func TestFormatMessageWithoutSources(t *testing.T) {
	resp, err := newClient(t).FormatMessage(context.Background(), &notifierv1.FormatMessageRequest{
		Alert:      &notifierv1.AlertInput{Text: "disk full"},
		Enrichment: &notifierv1.Enrichment{Summary: "Probably a log file."},
	})
	if err != nil {
		t.Fatal(err)
	}
	plain, _, err := markdownv2.Parse(resp.GetMessage().GetText())
	if err != nil {
		t.Fatal(err)
	}
	if want := "disk full\n\nEnrichment unavailable: no sources found"; plain != want {
		t.Errorf("got %q, want %q", plain, want)
	}
}
