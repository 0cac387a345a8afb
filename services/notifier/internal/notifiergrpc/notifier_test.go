package notifiergrpc

import (
	"context"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/test/bufconn"

	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	"github.com/groundcrew/groundcrew/services/notifier/internal/markdownv2"
)

func newClient(t *testing.T) notifierv1.NotifierServiceClient {
	t.Helper()
	lis := bufconn.Listen(1 << 20)
	srv := grpc.NewServer()
	notifierv1.RegisterNotifierServiceServer(srv, NewNotifierService(slog.New(slog.NewTextHandler(io.Discard, nil)), Deps{}))
	go func() { _ = srv.Serve(lis) }()
	t.Cleanup(srv.Stop)
	conn, err := grpc.NewClient("passthrough:///bufnet",
		grpc.WithContextDialer(func(context.Context, string) (net.Conn, error) { return lis.Dial() }),
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
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
