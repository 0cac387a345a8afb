package searchgrpc

import (
	"context"
	"testing"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
)

// TestGetDocuments: documents are found by any spelling of their canonical
// URL, whatever their text says, in the request's order; URLs not in the
// index are left out.
func TestGetDocuments(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	_, err := c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		doc("https://runbooks.example.com/checkout", "Checkout API 5xx runbook",
			"Diagnose.\nCheck the payments upstream first.\nMitigate.\nRoll back the last deploy."),
		doc("https://runbooks.example.com/postgres", "Postgres connection exhaustion",
			"Too many connections: raise max_connections or add PgBouncer in front of the database."),
	}})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.GetDocuments(ctx, &searchv1.GetDocumentsRequest{Urls: []string{
		"https://runbooks.example.com/postgres/?utm_source=alert",
		"https://grafana.example.com/d/abc",
		"HTTPS://RUNBOOKS.example.com:443/checkout#top",
		"https://runbooks.example.com/postgres",
	}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, d := range resp.GetDocuments() {
		got = append(got, d.GetUrl())
	}
	want := []string{"https://runbooks.example.com/postgres", "https://runbooks.example.com/checkout"}
	if len(got) != len(want) || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("GetDocuments URLs = %q, want %q", got, want)
	}
	d := resp.GetDocuments()[1]
	if d.GetTitle() != "Checkout API 5xx runbook" || d.GetText() == "" || d.GetSnippet() == "" || d.GetSourceDomain() != "runbooks.example.com" {
		t.Errorf("GetDocuments checkout = %v, want its title, text, snippet and domain", d)
	}
}

func TestGetDocumentsBadInput(t *testing.T) {
	c := newClient(t)
	for name, req := range map[string]*searchv1.GetDocumentsRequest{
		"no urls":   {},
		"not a url": {Urls: []string{"runbooks/disk"}},
		"ftp":       {Urls: []string{"ftp://runbooks.example.com/disk"}},
		"eleven":    {Urls: []string{"https://a.example/1", "https://a.example/2", "https://a.example/3", "https://a.example/4", "https://a.example/5", "https://a.example/6", "https://a.example/7", "https://a.example/8", "https://a.example/9", "https://a.example/10", "https://a.example/11"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := c.GetDocuments(context.Background(), req)
			if code := status.Code(err); code != codes.InvalidArgument {
				t.Errorf("GetDocuments(%v) code = %v (%v), want InvalidArgument", req, code, err)
			}
		})
	}
}
