package raggrpc

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// TestAskStructured checks issue 19's RAG rules over gRPC: primary is the
// source primary_source names, at primary_index in sources; every source
// has a title (a plain-text document without one takes its first line);
// the request's metadata comes back with received_time, on Ask and on
// AskStream, and in scope or not; matched chunks carry metadata.
func TestAskStructured(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	untitled := textDoc("https://runbooks.example.com/disk/full.txt", "", "Disk full on a node\n\nWhen a node's disk is full, delete old container images and rotate the logs.")
	f.ingest(t, "ops", append([]*ragv1.Document{untitled}, runbooks...)...)
	meta := map[string]string{"ticket": "OPS-42", "channel": "#oncall"}
	before := time.Now().Add(-time.Second)

	ask, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: "The disk of a node is full, what do I delete?", Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	stream := func() *ragv1.AgentResponse {
		_, _, final := collect(t, f.client, &ragv1.AskStreamRequest{Collection: "ops", Query: "The disk of a node is full, what do I delete?", Metadata: meta})
		return final
	}
	for name, r := range map[string]*ragv1.AgentResponse{"Ask": ask.GetResponse(), "AskStream": stream()} {
		t.Run(name, func(t *testing.T) {
			if r.GetIsOutOfScope() || len(r.GetSources()) == 0 {
				t.Fatalf("%s = %v, want an in-scope answer with sources", name, r)
			}
			i := r.GetPrimaryIndex()
			if i < 0 || int(i) >= len(r.GetSources()) || !proto.Equal(r.GetPrimary(), r.GetSources()[i]) {
				t.Fatalf("primary %v at %d, sources %v: want primary == sources[primary_index]", r.GetPrimary(), i, r.GetSources())
			}
			p := r.GetPrimary()
			if want := fmt.Sprintf("Source: Document %d: [%s] (%s)", i+1, p.GetTitle(), p.GetUrl()); r.GetPrimarySource() != want {
				t.Errorf("primary_source = %q, want %q", r.GetPrimarySource(), want)
			}
			if p.GetUrl() != untitled.GetUrl() || p.GetTitle() != "Disk full on a node" {
				t.Errorf("primary = %v, want the disk runbook titled by its first line", p)
			}
			for _, s := range r.GetSources() {
				if strings.TrimSpace(s.GetTitle()) == "" {
					t.Errorf("source %v has no title", s)
				}
			}
			for _, c := range r.GetMatchedChunks() {
				if c.GetSource().GetTitle() == "" || c.GetMetadata() == nil {
					t.Errorf("matched chunk %v lacks a title or metadata", c)
				}
			}
			if len(r.GetMetadata()) != 2 || r.GetMetadata()["ticket"] != "OPS-42" || r.GetMetadata()["channel"] != "#oncall" {
				t.Errorf("metadata = %v, want %v echoed", r.GetMetadata(), meta)
			}
			if rt := r.GetReceivedTime().AsTime(); rt.Before(before) || rt.After(time.Now()) {
				t.Errorf("received_time = %v, want the time of the request", rt)
			}
		})
	}

	out, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: "How do I bake sourdough bread?", Metadata: meta})
	if err != nil {
		t.Fatal(err)
	}
	r := out.GetResponse()
	if !r.GetIsOutOfScope() || r.GetPrimary() != nil || r.GetPrimarySource() != "" || r.GetMetadata()["ticket"] != "OPS-42" || r.GetReceivedTime() == nil {
		t.Errorf("out of scope Ask = %v, want no primary, metadata and received_time echoed", r)
	}
}

// TestAskMetadataBounds checks that request metadata is bounded by the
// proto's rules: 20 pairs, keys 1..64, values up to 512 characters.
func TestAskMetadataBounds(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	f.ingest(t, "ops", runbooks...)
	many := map[string]string{}
	for i := range 21 {
		many[fmt.Sprintf("k%d", i)] = "v"
	}
	tests := []struct {
		name string
		meta map[string]string
		code codes.Code
	}{
		{"twenty pairs", map[string]string{"a": strings.Repeat("v", 512)}, codes.OK},
		{"too many pairs", many, codes.InvalidArgument},
		{"empty key", map[string]string{"": "v"}, codes.InvalidArgument},
		{"long key", map[string]string{strings.Repeat("k", 65): "v"}, codes.InvalidArgument},
		{"long value", map[string]string{"k": strings.Repeat("v", 513)}, codes.InvalidArgument},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "ops", Query: "postgres connections", Metadata: tt.meta})
			if got := status.Code(err); got != tt.code {
				t.Errorf("Ask with %d pairs: code %v (%v), want %v", len(tt.meta), got, err, tt.code)
			}
		})
	}
}

// TestQuotasOverGRPC checks that a write past a quota is
// RESOURCE_EXHAUSTED with a message naming the limit (issue 13).
func TestQuotasOverGRPC(t *testing.T) {
	f := newFixture(t, fixtureOptions{limits: rag.Limits{MaxCollections: 1, MaxDocuments: 2, MaxChunks: 100}})
	f.ingest(t, "ops", runbooks[0], runbooks[1])
	tests := []struct {
		name string
		call func() error
		want string
	}{
		{"documents", func() error {
			_, err := f.client.IngestDocuments(t.Context(), &ragv1.IngestDocumentsRequest{Collection: "ops", Documents: runbooks[2:]})
			return err
		}, "at most 2 documents"},
		{"collections by ingest", func() error {
			_, err := f.client.IngestDocuments(t.Context(), &ragv1.IngestDocumentsRequest{Collection: "other", Documents: runbooks[:1]})
			return err
		}, "at most 1 collections"},
		{"collections by create", func() error {
			_, err := f.client.CreateCollection(t.Context(), &ragv1.CreateCollectionRequest{Collection: &ragv1.Collection{Name: "other"}})
			return err
		}, "at most 1 collections"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.call()
			if status.Code(err) != codes.ResourceExhausted || !strings.Contains(status.Convert(err).Message(), tt.want) {
				t.Errorf("error %v, want RESOURCE_EXHAUSTED saying %q", err, tt.want)
			}
		})
	}
}

// TestIRIDocuments checks issue 17's IRIs in rag: a document ingested
// under an IRI and again under its percent-encoded form is one document,
// its source URL is the canonical (ASCII) form, and the primary-source
// line shows the readable one.
func TestIRIDocuments(t *testing.T) {
	f := newFixture(t, fixtureOptions{})
	const (
		iri       = "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"
		encoded   = "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"
		idn       = "https://bücher.example/Überblick"
		idnCanon  = "https://xn--bcher-kva.example/%C3%9Cberblick"
		monitorTx = "Überwachung in der Informatik: Monitoring beobachtet Systeme und meldet Ausfälle."
	)
	f.ingest(t, "wiki", textDoc(iri, "Überwachung (Informatik)", monitorTx))
	resp := f.ingest(t, "wiki", textDoc(encoded, "Überwachung (Informatik)", monitorTx), textDoc(idn, "Bücher", "Ein Überblick über Bücher und Bibliotheken."))
	if got := resp.GetCollection().GetDocumentCount(); got != 2 || resp.GetReplacedChunks() != 1 {
		t.Fatalf("after re-ingesting the encoded form: %d documents, %d replaced chunks; want 2 and 1", got, resp.GetReplacedChunks())
	}
	ask, err := f.client.Ask(t.Context(), &ragv1.AskRequest{Collection: "wiki", Query: "Was beobachtet Monitoring in der Informatik?"})
	if err != nil {
		t.Fatal(err)
	}
	r := ask.GetResponse()
	if r.GetIsOutOfScope() {
		t.Fatalf("Ask = %v, want an answer", r)
	}
	if r.GetPrimary().GetUrl() != encoded {
		t.Errorf("primary url = %q, want the canonical %q", r.GetPrimary().GetUrl(), encoded)
	}
	if want := "(" + iri + ")"; !strings.HasSuffix(r.GetPrimarySource(), want) {
		t.Errorf("primary_source = %q, want it to end with the readable %q", r.GetPrimarySource(), want)
	}
	ret, err := f.client.Retrieve(t.Context(), &ragv1.RetrieveRequest{Collection: "wiki", Query: "Bücher Bibliotheken"})
	if err != nil {
		t.Fatal(err)
	}
	if len(ret.GetChunks()) == 0 || ret.GetChunks()[0].GetSource().GetUrl() != idnCanon {
		t.Errorf("Retrieve = %v, want the IDN document first under %q", ret.GetChunks(), idnCanon)
	}
}
