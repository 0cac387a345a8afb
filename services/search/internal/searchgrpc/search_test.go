package searchgrpc

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"testing"

	validate "buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"github.com/google/go-cmp/cmp"

	"google.golang.org/genproto/googleapis/rpc/errdetails"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/testing/protocmp"
	"google.golang.org/protobuf/types/known/structpb"

	groundingv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/grounding/v1"
	notifierv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/notifier/v1"
	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/actor"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/search/internal/localindex"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// failingEngine stands in for a web engine whose backend is down.
type failingEngine struct{ name string }

func (f failingEngine) Name() string { return f.name }
func (f failingEngine) Search(context.Context, search.Query) ([]search.Result, error) {
	return nil, errors.New("Post \"https://secret-mirror.internal/search\": connection refused")
}

func newClient(t *testing.T, extra ...search.Engine) searchv1.SearchServiceClient {
	t.Helper()
	return newClientLogging(t, io.Discard, extra...)
}

func newClientLogging(t *testing.T, log io.Writer, extra ...search.Engine) searchv1.SearchServiceClient {
	t.Helper()
	logger := slog.New(slog.NewTextHandler(log, nil))
	index, err := localindex.Open(t.TempDir(), localindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = index.Close() })
	svc, err := search.NewService(search.Config{Engines: append(extra, index), Indexer: index, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, logger)
	if err != nil {
		t.Fatal(err)
	}
	searchv1.RegisterSearchServiceServer(srv, NewSearchService(svc, index, logger))
	conn := grpcservertest.Dial(t, srv)
	return searchv1.NewSearchServiceClient(conn)
}

func doc(url, title, text string) *searchv1.Document {
	return &searchv1.Document{Url: url, Title: title, Content: &searchv1.Document_Text{Text: text}}
}

func TestIndexThenSearch(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	meta, _ := structpb.NewStruct(map[string]any{"team": "payments", "tier": 1})
	idx, err := c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		doc("https://runbooks.example.com/checkout", "Checkout API 5xx runbook",
			"When checkout-api returns 5xx errors, check the payments upstream first. Roll back the last deploy if errors started with it."),
		doc("https://runbooks.example.com/postgres", "Postgres connection exhaustion",
			"Too many connections: raise max_connections or add PgBouncer in front of the database."),
		{Url: "https://runbooks.example.com/kafka", Content: &searchv1.Document_Html{Html: "<html><head><title>Kafka consumer lag</title></head><body><nav>menu</nav><p>Consumer lag grows when consumers are slower than producers; scale the consumer group.</p></body></html>"}, Metadata: meta},
	}})
	if err != nil {
		t.Fatal(err)
	}
	if idx.GetIndexed() != 3 || idx.GetReplaced() != 0 || idx.GetTotalDocuments() != 3 {
		t.Errorf("IndexDocuments = %v, want 3 indexed, 0 replaced, 3 total", idx)
	}

	// Re-indexing a URL (in another spelling) replaces it.
	idx, err = c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		doc("HTTPS://runbooks.example.com:443/checkout/?utm_source=x#top", "Checkout API 5xx runbook",
			"When checkout-api returns 5xx errors, check the payments upstream first and the error budget."),
	}})
	if err != nil {
		t.Fatal(err)
	}
	if idx.GetReplaced() != 1 || idx.GetTotalDocuments() != 3 {
		t.Errorf("re-index = %v, want 1 replaced, 3 total", idx)
	}

	resp, err := c.Search(ctx, &searchv1.SearchRequest{Query: "checkout-api 5xx errors", Engine: searchv1.Engine_LOCAL})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetEngine() != searchv1.Engine_LOCAL || len(resp.GetResults()) == 0 {
		t.Fatalf("Search = %v, want local results", resp)
	}
	top := resp.GetResults()[0]
	if top.GetSourceDomain() != "runbooks.example.com" || !strings.Contains(top.GetUrl(), "/checkout") || !strings.Contains(strings.ToLower(top.GetSnippet()), "5xx") {
		t.Errorf("top result = %v, want the checkout runbook with a snippet that matches", top)
	}
	seen := map[string]bool{}
	for _, r := range resp.GetResults() {
		if seen[r.GetUrl()] {
			t.Errorf("duplicate url %s", r.GetUrl())
		}
		seen[r.GetUrl()] = true
	}

	// The HTML document was indexed by its readable text and <title>.
	resp, err = c.Search(ctx, &searchv1.SearchRequest{Query: "consumer lag", MaxResults: proto.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.GetResults()) != 1 || resp.GetResults()[0].GetTitle() != "Kafka consumer lag" || strings.Contains(resp.GetResults()[0].GetSnippet(), "menu") {
		t.Errorf("html search = %v, want the Kafka page without navigation text", resp.GetResults())
	}
}

func TestMaxResults(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	var docs []*searchv1.Document
	for i := range 8 {
		docs = append(docs, doc("https://example.com/"+string(rune('a'+i)), "Disk full "+string(rune('A'+i)), "The disk is full on the host; free space by rotating logs."))
	}
	if _, err := c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: docs}); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		max  *int32
		want int
	}{{nil, DefaultMaxResults}, {proto.Int32(0), 0}, {proto.Int32(2), 2}, {proto.Int32(10), 8}} {
		resp, err := c.Search(ctx, &searchv1.SearchRequest{Query: "disk full", MaxResults: tt.max})
		if err != nil {
			t.Fatal(err)
		}
		if len(resp.GetResults()) != tt.want {
			t.Errorf("max_results %v: %d results, want %d", tt.max, len(resp.GetResults()), tt.want)
		}
	}
}

func TestBadInput(t *testing.T) {
	c := newClient(t)
	ctx := context.Background()
	tests := []struct {
		name  string
		req   *searchv1.SearchRequest
		code  codes.Code
		field string
		text  string
	}{
		{"empty", &searchv1.SearchRequest{}, codes.InvalidArgument, "query", ""},
		{"blank", &searchv1.SearchRequest{Query: " \t\n"}, codes.InvalidArgument, "query", "blank"},
		{"too long", &searchv1.SearchRequest{Query: strings.Repeat("a", 1001)}, codes.InvalidArgument, "query", "1000"},
		{"max results 11", &searchv1.SearchRequest{Query: "q", MaxResults: proto.Int32(11)}, codes.InvalidArgument, "max_results", ""},
		{"engine not configured", &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_EXA}, codes.FailedPrecondition, "", "EXA_API_KEY"},
		{"searxng not configured", &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_SEARXNG}, codes.FailedPrecondition, "", "SEARXNG_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.Search(ctx, tt.req)
			st := status.Convert(err)
			if st.Code() != tt.code {
				t.Fatalf("code = %v (%s), want %v", st.Code(), st.Message(), tt.code)
			}
			if !strings.Contains(st.Message(), tt.text) {
				t.Errorf("message %q does not mention %q", st.Message(), tt.text)
			}
			if tt.code == codes.FailedPrecondition {
				// The refusal is the server's configuration: said as a
				// PreconditionFailure naming the engine, not a field.
				var got []string
				for _, d := range st.Details() {
					if pf, ok := d.(*errdetails.PreconditionFailure); ok {
						for _, v := range pf.GetViolations() {
							got = append(got, v.GetType()+" "+v.GetSubject())
						}
					}
				}
				want := "ENGINE_NOT_CONFIGURED engines/" + strings.ToLower(tt.req.GetEngine().String())
				if len(got) != 1 || got[0] != want {
					t.Errorf("precondition violations = %q, want [%q]", got, want)
				}
			}
			if tt.field == "" {
				return
			}
			found := false
			for _, d := range st.Details() {
				if br, ok := d.(*errdetails.BadRequest); ok {
					for _, v := range br.GetFieldViolations() {
						found = found || v.GetField() == tt.field
					}
				}
			}
			if !found {
				t.Errorf("no field violation for %q in %v", tt.field, st.Details())
			}
		})
	}
}

// TestUnknownEngineNamesTheField calls the handler without the validation
// interceptor (which refuses undefined enum values first), so the handler's
// own guard is what answers: InvalidArgument with a violation on engine
// that lists the values a client may send.
func TestUnknownEngineNamesTheField(t *testing.T) {
	logger := slog.New(slog.NewTextHandler(io.Discard, nil))
	index, err := localindex.Open(t.TempDir(), localindex.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = index.Close() })
	svc, err := search.NewService(search.Config{Engines: []search.Engine{index}, Indexer: index, Logger: logger})
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSearchService(svc, index, logger).Search(context.Background(), &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine(99)})
	st := status.Convert(err)
	if st.Code() != codes.InvalidArgument {
		t.Fatalf("code = %v (%s), want InvalidArgument", st.Code(), st.Message())
	}
	var got []*errdetails.BadRequest_FieldViolation
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			got = append(got, br.GetFieldViolations()...)
		}
	}
	if len(got) != 1 || got[0].GetField() != "engine" {
		t.Fatalf("violations = %v, want one on engine", got)
	}
	want := "is not a known engine; use one of AUTO, LOCAL, SEARXNG, EXA, TAVILY, BRAVE"
	if got[0].GetDescription() != want {
		t.Errorf("description = %q, want %q", got[0].GetDescription(), want)
	}
}

func TestEngineOutageNamesEngineNotItsError(t *testing.T) {
	c := newClient(t, failingEngine{name: search.EngineExa})
	_, err := c.Search(context.Background(), &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_EXA})
	st := status.Convert(err)
	if st.Code() != codes.Unavailable || !strings.Contains(st.Message(), "exa") || !strings.Contains(st.Message(), "no fallback") {
		t.Errorf("got %v %q, want Unavailable naming exa and that no fallback was tried", st.Code(), st.Message())
	}
	if strings.Contains(st.Message(), "secret-mirror") {
		t.Errorf("message leaks the engine's error: %q", st.Message())
	}

	// Auto falls back to the local index and says so.
	resp, err := c.Search(context.Background(), &searchv1.SearchRequest{Query: "q"})
	if err != nil {
		t.Fatal(err)
	}
	if resp.GetEngine() != searchv1.Engine_LOCAL || len(resp.GetFallbackFrom()) != 1 || resp.GetFallbackFrom()[0] != searchv1.Engine_EXA {
		t.Errorf("auto = engine %v fallback_from %v, want LOCAL after EXA", resp.GetEngine(), resp.GetFallbackFrom())
	}
}

func TestListEngines(t *testing.T) {
	c := newClient(t)
	resp, err := c.ListEngines(context.Background(), &searchv1.ListEnginesRequest{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[searchv1.Engine]*searchv1.EngineStatus{}
	for _, e := range resp.GetEngines() {
		got[e.GetEngine()] = e
	}
	if len(got) != 5 {
		t.Fatalf("engines = %v, want all five", resp.GetEngines())
	}
	if !got[searchv1.Engine_LOCAL].GetConfigured() || !got[searchv1.Engine_LOCAL].GetHealthy() {
		t.Errorf("local = %v, want configured and healthy", got[searchv1.Engine_LOCAL])
	}
	if e := got[searchv1.Engine_BRAVE]; e.GetConfigured() || e.GetConfigVariable() != "BRAVE_API_KEY" {
		t.Errorf("brave = %v, want unconfigured naming BRAVE_API_KEY", e)
	}
}

// TestIRIDocumentsIndexAndSearch is issue 17's done-means through the real
// gRPC server and its validation interceptor: the Wikipedia IRI indexes,
// a search finds it in ASCII with its readable form beside it, and the
// percent-encoded spelling replaces the same document.
func TestIRIDocumentsIndexAndSearch(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	const (
		iri     = "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"
		encoded = "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"
	)
	idx, err := c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		{Url: iri, Content: &searchv1.Document_Html{Html: `<html><head><title>Überwachung (Informatik)</title>` +
			`<link rel="icon" href="/static/favicon/wikipedia.ico"></head><body><p>Die Überwachung von Rechnersystemen und Netzwerken.</p></body></html>`}},
		doc("https://bücher.example/", "Bücher", "Ein Laden für Kochbücher."),
	}})
	if err != nil {
		t.Fatalf("IndexDocuments(IRI) error = %v", err)
	}
	if idx.GetIndexed() != 2 || len(idx.GetRejected()) != 0 {
		t.Fatalf("IndexDocuments(IRI) = %v, want 2 indexed", idx)
	}
	idx, err = c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		{Url: encoded, Content: &searchv1.Document_Html{Html: `<html><head><title>Überwachung (Informatik)</title>` +
			`<link rel="icon" href="/static/favicon/wikipedia.ico"></head><body><p>Die Überwachung von Rechnersystemen und Netzwerken.</p></body></html>`}},
	}})
	if err != nil || idx.GetReplaced() != 1 || idx.GetTotalDocuments() != 2 {
		t.Fatalf("IndexDocuments(encoded form) = %v, %v; want it to replace the IRI's document", idx, err)
	}

	resp, err := c.Search(ctx, &searchv1.SearchRequest{Query: "Überwachung Rechnersystemen", Engine: searchv1.Engine_LOCAL})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if len(resp.GetResults()) != 1 {
		t.Fatalf("Search() = %v, want one result", resp.GetResults())
	}
	got := resp.GetResults()[0]
	want := &searchv1.SearchResult{
		Title: "Überwachung (Informatik)", Url: encoded, DisplayUrl: iri, SourceDomain: "de.wikipedia.org",
		MimeType: "text/html", FaviconUrl: "https://de.wikipedia.org/static/favicon/wikipedia.ico",
	}
	if diff := cmp.Diff(want, got, protocmp.Transform(), protocmp.IgnoreFields(&searchv1.SearchResult{}, "score", "snippet", "provenance")); diff != "" {
		t.Errorf("result mismatch (-want +got):\n%s", diff)
	}

	resp, err = c.Search(ctx, &searchv1.SearchRequest{Query: "Kochbücher", Engine: searchv1.Engine_LOCAL})
	if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetDisplayUrl() != "https://bücher.example/" ||
		resp.GetResults()[0].GetUrl() != "https://xn--bcher-kva.example/" {
		t.Errorf("Search(IDN host) = %v, %v; want url in punycode and display_url in Unicode", resp.GetResults(), err)
	}
}

// TestDocumentURLValidation checks that what is not a web address is
// refused with InvalidArgument naming the field: by the proto's rule in
// the validation interceptor (scheme, spaces, control characters) or by the
// handler's IDNA check.
func TestDocumentURLValidation(t *testing.T) {
	c := newClient(t)
	tests := []struct {
		name, url string
	}{
		{"ftp scheme", "ftp://example.com/file"},
		{"javascript", "javascript:alert(1)"},
		{"space in path", "https://example.com/a b"},
		{"leading space", " https://example.com/"},
		{"space in IRI path", "https://de.wikipedia.org/wiki/Überwachung (Informatik)"},
		{"tab", "https://example.com/a\tb"},
		{"newline", "https://example.com/a\nb"},
		{"NUL", "https://example.com/a\x00b"},
		{"DEL", "https://example.com/a\x7fb"},
		{"C1 control", "https://example.com/a\u0085b"},
		{"bidi override", "https://example.com/\u202etxt.exe"},
		{"no-break space", "https://bücher\u00a0example/"},
		{"backslash", `https://example.com\@evil.example/`},
		{"bad escape", "https://example.com/%zz"},
		{"no host", "https:///wiki"},
		{"invalid punycode host", "https://xn--a.example/"},
		{"empty label", "https://a..example/"},
		{"empty", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := c.IndexDocuments(t.Context(), &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
				doc("https://example.com/fine", "Fine", "A fine document."),
				doc(tt.url, "Bad", "A document with a bad address."),
			}})
			st := status.Convert(err)
			if st.Code() != codes.InvalidArgument {
				t.Fatalf("IndexDocuments(%q) code = %v (%s), want InvalidArgument", tt.url, st.Code(), st.Message())
			}
			if fields := violationFields(st); !slices.Contains(fields, "documents[1].url") {
				t.Errorf("IndexDocuments(%q) violations on %v, want documents[1].url", tt.url, fields)
			}
		})
	}
}

func violationFields(st *status.Status) []string {
	var out []string
	for _, d := range st.Details() {
		if br, ok := d.(*errdetails.BadRequest); ok {
			for _, v := range br.GetFieldViolations() {
				out = append(out, v.GetField())
			}
		}
	}
	return out
}

// TestURLRulesMatchWeburl checks that every URL field with the url.iri rule,
// in every service's protos, carries exactly weburl.Pattern, so the proto
// validators and the Go normaliser agree on what a web address is.
func TestURLRulesMatchWeburl(t *testing.T) {
	want := "!this.matches('^(?i)https?://') || this.matches(r'" + weburl.Pattern + "')"
	fields := map[string]protoreflect.FieldDescriptor{
		"search Document.url":             (&searchv1.Document{}).ProtoReflect().Descriptor().Fields().ByName("url"),
		"search SearchResult.url":         (&searchv1.SearchResult{}).ProtoReflect().Descriptor().Fields().ByName("url"),
		"rag Document.url":                (&ragv1.Document{}).ProtoReflect().Descriptor().Fields().ByName("url"),
		"grounding Citation.url":          (&groundingv1.Citation{}).ProtoReflect().Descriptor().Fields().ByName("url"),
		"notifier EnrichmentCitation.url": (&notifierv1.EnrichmentCitation{}).ProtoReflect().Descriptor().Fields().ByName("url"),
	}
	for name, fd := range fields {
		rules, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
		var got []string
		for _, r := range rules.GetCel() {
			if r.GetId() == "url.iri" {
				got = append(got, r.GetExpression())
			}
		}
		if len(got) != 1 || got[0] != want {
			t.Errorf("%s url.iri rules = %q, want one with weburl.Pattern", name, got)
		}
		if rules.GetString().GetUri() {
			t.Errorf("%s still has string.uri, which refuses IRIs", name)
		}
	}
}

// TestURLRulesAcrossProtos runs protovalidate on every message with a web
// address field: IRIs pass, what is not a web address is refused on the
// url field.
func TestURLRulesAcrossProtos(t *testing.T) {
	msgs := map[string]func(url string) proto.Message{
		"search.Document": func(u string) proto.Message { return doc(u, "t", "x") },
		"rag.Document": func(u string) proto.Message {
			return &ragv1.Document{Url: u, Content: &ragv1.Document_Text{Text: "x"}}
		},
		"grounding.Citation":          func(u string) proto.Message { return &groundingv1.Citation{Url: u} },
		"notifier.EnrichmentCitation": func(u string) proto.Message { return &notifierv1.EnrichmentCitation{Url: u} },
	}
	good := []string{
		"https://de.wikipedia.org/wiki/Überwachung_(Informatik)",
		"https://bücher.example/",
		"https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)",
		"http://[2001:db8::1]:8080/x?q=é#frag",
	}
	bad := []string{"ftp://example.com/x", "https://example.com/a b", "https://example.com/\x01", "https://example.com/\u202e", "https:///x", "https://example.com/%zz", ""}
	for name, build := range msgs {
		for _, u := range good {
			if err := protovalidate.Validate(build(u)); err != nil {
				t.Errorf("%s with url %q: %v, want valid", name, u, err)
			}
		}
		for _, u := range bad {
			err := protovalidate.Validate(build(u))
			var verr *protovalidate.ValidationError
			if !errors.As(err, &verr) {
				t.Errorf("%s with url %q: %v, want a validation error", name, u, err)
				continue
			}
			onURL := false
			for _, v := range verr.Violations {
				onURL = onURL || protovalidate.FieldPathString(v.Proto.GetField()) == "url"
			}
			if !onURL {
				t.Errorf("%s with url %q: violations %v, want one on url", name, u, verr)
			}
		}
	}
}

// TestInternationalisedDomainFilters checks that domain filters take IDN
// host names in Unicode or punycode, and still refuse what is not a host.
func TestInternationalisedDomainFilters(t *testing.T) {
	c := newClient(t)
	ctx := t.Context()
	if _, err := c.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		doc("https://bücher.example/küche", "Küche", "Kochbücher für die Küche."),
		doc("https://other.example/küche", "Küche", "Kochbücher anderswo."),
	}}); err != nil {
		t.Fatal(err)
	}
	for _, domain := range []string{"bücher.example", "XN--BCHER-KVA.example", "www.bücher.example."} {
		resp, err := c.Search(ctx, &searchv1.SearchRequest{Query: "Kochbücher", Engine: searchv1.Engine_LOCAL, AllowedDomains: []string{domain}})
		if err != nil || len(resp.GetResults()) != 1 || resp.GetResults()[0].GetSourceDomain() != "xn--bcher-kva.example" {
			t.Errorf("Search(allowed %q) = %v, %v; want the bücher.example page only", domain, resp.GetResults(), err)
		}
	}
	// Whether the proto's rule or the handler's IDNA check refuses it,
	// the violation names the entry.
	for _, domain := range []string{"bad domain", "a/b", "xn--a.example", "example..com"} {
		_, err := c.Search(ctx, &searchv1.SearchRequest{Query: "q", Engine: searchv1.Engine_LOCAL, BlockedDomains: []string{"example.org", domain}})
		st := status.Convert(err)
		if st.Code() != codes.InvalidArgument || !slices.Equal(violationFields(st), []string{"blocked_domains[1]"}) {
			t.Errorf("Search(blocked %q) = %v %v, want InvalidArgument on blocked_domains[1]", domain, st.Code(), violationFields(st))
		}
	}
}

// syncBuffer is a log sink safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestReplacementRecordsTheActor indexes a runbook as one key and replaces
// it as another: the response, the search result and the log name who
// replaced it and whose version it replaced, and a name in the body's
// metadata does not count.
func TestReplacementRecordsTheActor(t *testing.T) {
	var log syncBuffer
	c := newClientLogging(t, &log)
	as := func(name string) context.Context {
		return metadata.NewOutgoingContext(context.Background(), metadata.Pairs(actor.MetadataKey, name))
	}
	if _, err := c.IndexDocuments(as("ops"), &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{
		doc("https://runbooks.example.com/checkout", "Checkout API 5xx runbook", "Roll back the last deploy when checkout-api returns 5xx."),
	}}); err != nil {
		t.Fatal(err)
	}
	forged, _ := structpb.NewStruct(map[string]any{"groundcrew.indexed_by": "ops", "team": "payments"})
	replaced := doc("https://runbooks.example.com/checkout/", "Checkout API 5xx runbook", "Delete the namespace when checkout-api returns 5xx.")
	replaced.Metadata = forged
	idx, err := c.IndexDocuments(as("alertmanager-webhook"), &searchv1.IndexDocumentsRequest{Documents: []*searchv1.Document{replaced}})
	if err != nil {
		t.Fatal(err)
	}
	if len(idx.GetReplacements()) != 1 {
		t.Fatalf("replacements = %v, want one", idx.GetReplacements())
	}
	rep := idx.GetReplacements()[0]
	want := &searchv1.DocumentProvenance{IndexedBy: "alertmanager-webhook", Revision: 2, PreviousIndexedBy: "ops"}
	opts := []cmp.Option{protocmp.Transform(), protocmp.IgnoreFields(&searchv1.DocumentProvenance{}, "index_time", "previous_index_time")}
	if diff := cmp.Diff(want, rep.GetProvenance(), opts...); diff != "" || rep.GetUrl() != "https://runbooks.example.com/checkout" {
		t.Errorf("replacement %v (-want +got):\n%s", rep, diff)
	}
	if !rep.GetProvenance().GetIndexTime().IsValid() || !rep.GetProvenance().GetPreviousIndexTime().IsValid() {
		t.Errorf("replacement times missing: %v", rep.GetProvenance())
	}

	resp, err := c.Search(context.Background(), &searchv1.SearchRequest{Query: "checkout-api 5xx", Engine: searchv1.Engine_LOCAL})
	if err != nil || len(resp.GetResults()) != 1 {
		t.Fatalf("Search = %v, %v; want one result", resp, err)
	}
	if diff := cmp.Diff(want, resp.GetResults()[0].GetProvenance(), opts...); diff != "" {
		t.Errorf("result provenance (-want +got):\n%s", diff)
	}

	line := ""
	for l := range strings.SplitSeq(log.String(), "\n") {
		if strings.Contains(l, "indexed document replaced") {
			line = l
		}
	}
	for _, part := range []string{"url=https://runbooks.example.com/checkout", "by=alertmanager-webhook", "revision=2", "previous_by=ops"} {
		if !strings.Contains(line, part) {
			t.Errorf("log line %q lacks %q", line, part)
		}
	}
}
