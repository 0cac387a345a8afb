package localindex

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

var testNow = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

func openTest(t testing.TB, dir string) *Index {
	t.Helper()
	ix, err := Open(dir, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	t.Cleanup(func() { _ = ix.Close() })
	return ix
}

func upsert(t *testing.T, ix *Index, docs ...search.Document) search.IndexResult {
	t.Helper()
	res, err := ix.Upsert(t.Context(), docs)
	if err != nil {
		t.Fatalf("Upsert() error = %v", err)
	}
	return res
}

func urls(rs []search.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URL)
	}
	return out
}

var corpus = []search.Document{
	{
		URL:   "https://runbooks.example.com/disk-full",
		Title: "Disk full on database hosts",
		Text:  "When the disk is full, PostgreSQL stops accepting writes.\nFree space by rotating logs and removing old WAL segments.",
	},
	{
		URL:   "https://blog.example.org/kubernetes/crashloop",
		Title: "Debugging pods",
		Text:  "A pod in CrashLoopBackOff restarts again and again. The disk may be full, or the config may be wrong.",
	},
	{
		URL:  "https://wiki.example.net/networking",
		HTML: `<html><head><title>Network latency</title></head><body><nav>Home</nav><h1>Latency</h1><p>High latency between regions is often caused by routing changes.</p><script>evil()</script></body></html>`,
	},
	{
		URL:   "https://www.example.com/full-disk-words",
		Title: "Storage notes",
		Text:  "Full backups every night. The root disk of the builder was replaced.",
	},
}

func TestSearchRanksTitleAndPhrase(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix, corpus...)

	got, err := ix.Search(t.Context(), search.Query{Text: "disk full", MaxResults: 10})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []string{
		// title and text phrase match
		"https://runbooks.example.com/disk-full",
		// phrase "disk ... full" in text ("disk may be full" is not a phrase,
		// but both words are there)
		"https://blog.example.org/kubernetes/crashloop",
		"https://www.example.com/full-disk-words",
	}
	if diff := cmp.Diff(want[0], urls(got)[0]); diff != "" {
		t.Errorf("top result mismatch (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(len(want), len(got)); diff != "" {
		t.Errorf("result count mismatch (-want +got):\n%s", diff)
	}
	for _, r := range got {
		if r.Title == "" || r.Snippet == "" || r.SourceDomain == "" || r.Score <= 0 {
			t.Errorf("incomplete result %+v", r)
		}
	}
}

func TestSearchExtractsHTML(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix, corpus...)

	got, err := ix.Search(t.Context(), search.Query{Text: "routing latency", MaxResults: 5})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	want := []search.Result{{
		Title:        "Network latency",
		Snippet:      "Latency High latency between regions is often caused by routing changes.",
		URL:          "https://wiki.example.net/networking",
		SourceDomain: "wiki.example.net",
		MimeType:     "text/html",
		Provenance:   &search.Provenance{IndexedAt: testNow, Revision: 1},
	}}
	if diff := cmp.Diff(want, got, cmpIgnoreScore); diff != "" {
		t.Errorf("Search() mismatch (-want +got):\n%s", diff)
	}
	if r, _ := ix.Search(t.Context(), search.Query{Text: "evil home", MaxResults: 5}); len(r) != 0 {
		t.Errorf("script or nav text was indexed: %v", urls(r))
	}
}

var cmpIgnoreScore = cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Score" }, cmp.Ignore())

func TestUpsertReplacesByCanonicalURL(t *testing.T) {
	ix := openTest(t, t.TempDir())
	first := upsert(t, ix, corpus...)
	if diff := cmp.Diff(search.IndexResult{Indexed: 4}, first); diff != "" {
		t.Errorf("first Upsert() mismatch (-want +got):\n%s", diff)
	}

	res := upsert(t, ix,
		search.Document{URL: "HTTPS://Runbooks.example.com/disk-full/?utm_source=chat#top", Title: "Disk full (v2)", Text: "Use the cleanup script."},
		search.Document{URL: "https://new.example.com/a", Text: "first"},
		search.Document{URL: "https://new.example.com/a/", Text: "second wins"},
	)
	again := search.Provenance{IndexedAt: testNow, Revision: 2, PreviousIndexedAt: testNow}
	wantRes := search.IndexResult{Indexed: 3, Replaced: 2, Replacements: []search.Replacement{
		{Index: 0, URL: "https://runbooks.example.com/disk-full", Provenance: again},
		{Index: 2, URL: "https://new.example.com/a", Provenance: again},
	}}
	if diff := cmp.Diff(wantRes, res); diff != "" {
		t.Errorf("second Upsert() mismatch (-want +got):\n%s", diff)
	}
	if n, _ := ix.Count(t.Context()); n != 5 {
		t.Errorf("Count() = %d, want 5", n)
	}
	got, _ := ix.Search(t.Context(), search.Query{Text: "cleanup script", MaxResults: 5})
	if len(got) != 1 || got[0].Title != "Disk full (v2)" || got[0].URL != "https://runbooks.example.com/disk-full/" {
		t.Errorf("Search(cleanup script) = %+v, want the replaced document", got)
	}
	if got, _ := ix.Search(t.Context(), search.Query{Text: "WAL segments", MaxResults: 5}); len(got) != 0 {
		t.Errorf("old version still found: %v", urls(got))
	}
	if got, _ := ix.Search(t.Context(), search.Query{Text: "second wins", MaxResults: 5}); len(got) != 1 || got[0].Title != "second wins" {
		t.Errorf("Search(second wins) = %+v, want the later duplicate with a title from its text", got)
	}
}

func TestUpsertRejectsBadDocuments(t *testing.T) {
	ix := openTest(t, t.TempDir())
	res := upsert(t, ix,
		search.Document{URL: "ftp://example.com/a", Text: "x"},
		search.Document{URL: "https://example.com/ok", Text: "fine"},
		search.Document{URL: "https://example.com/empty", Text: "  \n "},
		search.Document{URL: "https://example.com/empty-html", HTML: "<script>only()</script>"},
		search.Document{URL: "", Text: "no url"},
		search.Document{URL: "https://example.com/huge", Text: strings.Repeat("a", MaxDocumentBytes+1)},
	)
	want := search.IndexResult{Indexed: 1, Rejected: []search.Rejection{
		{Index: 0, URL: "ftp://example.com/a", Reason: "url: invalid web address: scheme must be http or https"},
		{Index: 2, URL: "https://example.com/empty", Reason: "document has no text (set text or html)"},
		{Index: 3, URL: "https://example.com/empty-html", Reason: "document has no text (set text or html)"},
		{Index: 4, URL: "", Reason: "url: empty URL"},
		{Index: 5, URL: "https://example.com/huge", Reason: "document is 8388609 bytes; the limit is 8388608"},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("Upsert() mismatch (-want +got):\n%s", diff)
	}
}

func TestSearchFilters(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix,
		search.Document{URL: "https://docs.example.com/a", Text: "alpha guide", PublishedAt: testNow.AddDate(0, 0, -2)},
		search.Document{URL: "https://www.example.com/b", Text: "alpha news", PublishedAt: testNow.AddDate(-1, 0, 0)},
		search.Document{URL: "https://other.org/c", Text: "alpha other"},
		search.Document{URL: "https://notexample.com/d", Text: "alpha lookalike"},
	)
	tests := []struct {
		name string
		q    search.Query
		want []string
	}{
		{"allowed includes subdomains", search.Query{AllowedDomains: []string{"example.com"}},
			[]string{"https://docs.example.com/a", "https://www.example.com/b"}},
		{"blocked", search.Query{BlockedDomains: []string{"example.com", "other.org"}},
			[]string{"https://notexample.com/d"}},
		{"allowed and blocked", search.Query{AllowedDomains: []string{"example.com"}, BlockedDomains: []string{"docs.example.com"}},
			[]string{"https://www.example.com/b"}},
		// Documents without a publication date count from their indexing time.
		{"recency", search.Query{MaxAge: 7 * 24 * time.Hour},
			[]string{"https://docs.example.com/a", "https://notexample.com/d", "https://other.org/c"}},
		{"recency and domain", search.Query{MaxAge: 7 * 24 * time.Hour, AllowedDomains: []string{"example.com"}},
			[]string{"https://docs.example.com/a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			q := tt.q
			q.Text, q.MaxResults = "alpha", 10
			got, err := ix.Search(t.Context(), q)
			if err != nil {
				t.Fatalf("Search() error = %v", err)
			}
			gotURLs := urls(got)
			slices.Sort(gotURLs)
			if diff := cmp.Diff(tt.want, gotURLs); diff != "" {
				t.Errorf("Search() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got, _ := ix.Search(t.Context(), search.Query{Text: "guide", MaxResults: 1})
	if len(got) != 1 || !got[0].PublishedAt.Equal(testNow.AddDate(0, 0, -2)) {
		t.Errorf("Search(guide) = %+v, want PublishedAt %v", got, testNow.AddDate(0, 0, -2))
	}
}

func TestIndexPersistsAcrossReopen(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "nested", "index.bleve")
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	if _, err := ix.Upsert(t.Context(), corpus); err != nil {
		t.Fatalf("Upsert() error = %v", err)
	}
	if err := ix.Close(); err != nil {
		t.Fatalf("Close() error = %v", err)
	}

	re := openTest(t, dir)
	if n, err := re.Count(t.Context()); err != nil || n != uint64(len(corpus)) {
		t.Errorf("Count() after reopen = %d, %v; want %d", n, err, len(corpus))
	}
	if got, _ := re.Search(t.Context(), search.Query{Text: "latency", MaxResults: 3}); len(got) != 1 {
		t.Errorf("Search() after reopen found %d results, want 1", len(got))
	}
	if err := re.Healthy(t.Context()); err != nil {
		t.Errorf("Healthy() = %v", err)
	}
	if m, ok := re.idx.Mapping().(*mapping.IndexMappingImpl); !ok || m.ScoringModel != "bm25" {
		t.Errorf("scoring model after reopen = %+v, want bm25", re.idx.Mapping())
	}
}

func TestDelete(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix, corpus...)
	n, err := ix.Delete(t.Context(), []string{"https://runbooks.example.com/disk-full/", "https://missing.example/", "not a url"})
	if err != nil || n != 1 {
		t.Fatalf("Delete() = %d, %v; want 1", n, err)
	}
	if c, _ := ix.Count(t.Context()); c != uint64(len(corpus)-1) {
		t.Errorf("Count() = %d, want %d", c, len(corpus)-1)
	}
}

func TestSearchHonoursContext(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix, corpus...)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ix.Search(ctx, search.Query{Text: "disk", MaxResults: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search(cancelled) error = %v, want context.Canceled", err)
	}
}

func TestSnippetFromBestPassage(t *testing.T) {
	intro := strings.Repeat("This introduction talks about the company history and nothing relevant. ", 8)
	middle := "Unrelated filler about lunch menus appears here. To recover from a full disk on the database host, stop the writer, then rotate logs and vacuum the tables. "
	outro := strings.Repeat("The appendix lists office locations and phone numbers for each region. ", 8)
	ix := openTest(t, t.TempDir())
	upsert(t, ix, search.Document{URL: "https://example.com/long", Title: "Handbook", Text: intro + middle + outro})

	got, err := ix.Search(t.Context(), search.Query{Text: "full disk database rotate", MaxResults: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("Search() = %v, %v; want one result", got, err)
	}
	s := got[0].Snippet
	for _, w := range []string{"full disk", "database", "rotate"} {
		if !strings.Contains(s, w) {
			t.Errorf("snippet %q does not contain %q", s, w)
		}
	}
	if !strings.HasPrefix(s, "… To recover") {
		t.Errorf("snippet %q does not start at the sentence with the matches", s)
	}
	if strings.ContainsAny(s, "<>") || utf8.RuneCountInString(s) > MaxSnippetChars {
		t.Errorf("snippet %q has markup or is longer than %d characters", s, MaxSnippetChars)
	}
}

// TestSnippetIsThePassageNotTheDocument indexes a runbook-sized document
// (about 900 characters, which earlier snippets held whole) and checks
// that the snippet is the passage about the query, within 300 characters.
func TestSnippetIsThePassageNotTheDocument(t *testing.T) {
	runbook := "# Redis memory\n\n" +
		"## Symptoms\n\nClients see OOM command not allowed errors and latency rises while the instance swaps. " +
		"Dashboards show used_memory close to maxmemory for several minutes before the alert fires.\n\n" +
		"## Diagnosis\n\nRun INFO memory and compare used_memory_rss with used_memory to spot fragmentation. " +
		"List the biggest keys with redis-cli --bigkeys during a quiet period, because the scan adds load.\n\n" +
		"## Mitigation\n\nRaise maxmemory only when the host has headroom. Otherwise set an eviction policy such as allkeys-lru, " +
		"expire stale session keys, and move large sorted sets to their own instance. Restarting a replica to defragment is a last resort.\n"
	ix := openTest(t, t.TempDir())
	upsert(t, ix, search.Document{URL: "https://runbooks.example.com/redis-memory", Title: "Redis memory", Text: runbook})

	got, err := ix.Search(t.Context(), search.Query{Text: "eviction policy allkeys-lru", MaxResults: 1})
	if err != nil || len(got) != 1 {
		t.Fatalf("Search() = %v, %v; want one result", got, err)
	}
	s := got[0].Snippet
	if n := utf8.RuneCountInString(s); n > MaxSnippetChars {
		t.Errorf("snippet is %d characters, want at most %d: %q", n, MaxSnippetChars, s)
	}
	if !strings.Contains(s, "eviction policy such as allkeys-lru") {
		t.Errorf("snippet %q is not the passage about the eviction policy", s)
	}
	if strings.Contains(s, "Clients see OOM") {
		t.Errorf("snippet %q starts at the document's beginning instead of the passage", s)
	}
}

func TestSnippet(t *testing.T) {
	text := "Alpha beta gamma. Delta epsilon zeta eta theta. Iota kappa lambda mu nu xi omicron pi rho sigma tau."
	at := func(word, term string) span {
		i := strings.Index(text, word)
		return span{i, i + len(word), term}
	}
	tests := []struct {
		name  string
		spans []span
		size  int
		want  string
	}{
		{"short text whole", nil, 500, text},
		{"no matches: beginning", nil, 30, "Alpha beta gamma. Delta …"},
		{"word boundaries", []span{at("zeta", "zeta")}, 30, "… epsilon zeta eta theta. Iota …"},
		{"sentence start", []span{at("zeta", "zeta")}, 50, "… Delta epsilon zeta eta theta. Iota kappa lambda …"},
		{"distinct terms win", []span{at("Alpha", "alpha"), at("lambda", "lambda"), at("mu", "mu")}, 50, "… Iota kappa lambda mu nu xi omicron pi rho sigma …"},
		{"word boundary start", []span{at("sigma", "sigma")}, 20, "… rho sigma tau."},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := snippet(text, tt.spans, tt.size); got != tt.want {
				t.Errorf("snippet() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestWithService(t *testing.T) {
	ix := openTest(t, t.TempDir())
	svc, err := search.NewService(search.Config{Engines: []search.Engine{ix}, Indexer: ix})
	if err != nil {
		t.Fatal(err)
	}
	res, err := svc.IndexDocuments(t.Context(), corpus)
	if err != nil || res.Indexed != len(corpus) {
		t.Fatalf("IndexDocuments() = %+v, %v", res, err)
	}
	got, err := svc.Search(t.Context(), search.Query{Text: "disk full", MaxResults: 2, BlockedDomains: []string{"example.org"}})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	if got.Engine != "local" || len(got.Results) != 2 || got.Results[0].URL != "https://runbooks.example.com/disk-full" || got.Results[1].SourceDomain != "example.com" {
		t.Errorf("Search() = %+v", got)
	}
}

// TestMediaTypeAndIcon checks where results' mime_type and favicon_url come
// from: the document's metadata first, then its HTML and content kind.
func TestMediaTypeAndIcon(t *testing.T) {
	ix := openTest(t, t.TempDir())
	upsert(t, ix,
		search.Document{URL: "https://docs.example.com/guide", Title: "Zebra guide",
			HTML: `<html><head><title>Zebra guide</title><link rel="icon" href="/img/fav.png"></head><body><p>zebra stripes html</p></body></html>`},
		search.Document{URL: "https://files.example.com/report", Title: "Zebra report", Text: "zebra stripes pdf",
			Metadata: map[string]string{"content_type": "application/PDF; version=1.7", "favicon": "https://files.example.com/favicon.ico", "team": "x"}},
		search.Document{URL: "https://notes.example.com/plain", Title: "Zebra notes", Text: "zebra stripes notes"},
		search.Document{URL: "https://notes.example.com/md", Text: "# Zebra markdown\n\nzebra stripes in markdown\n\n## More\n\ntext"},
	)
	got, err := ix.Search(t.Context(), search.Query{Text: "zebra stripes", MaxResults: 10})
	if err != nil {
		t.Fatalf("Search() error = %v", err)
	}
	type meta struct{ Mime, Icon string }
	gotMeta := map[string]meta{}
	for _, r := range got {
		gotMeta[r.URL] = meta{r.MimeType, r.FaviconURL}
	}
	want := map[string]meta{
		"https://docs.example.com/guide":   {"text/html", "https://docs.example.com/img/fav.png"},
		"https://files.example.com/report": {"application/pdf", "https://files.example.com/favicon.ico"},
		"https://notes.example.com/plain":  {"text/plain", ""},
		"https://notes.example.com/md":     {"text/markdown", ""},
	}
	if diff := cmp.Diff(want, gotMeta); diff != "" {
		t.Errorf("media types and icons mismatch (-want +got):\n%s", diff)
	}
}

// TestIRIDocuments checks that an IRI and its percent-encoded form are one
// document, stored and returned in ASCII.
func TestIRIDocuments(t *testing.T) {
	ix := openTest(t, t.TempDir())
	res, err := ix.Upsert(t.Context(), []search.Document{
		{URL: "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", Title: "Überwachung (Informatik)", Text: "Überwachung bezeichnet die Beobachtung von Systemen."},
		{URL: "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", Title: "Überwachung (Informatik)", Text: "Überwachung bezeichnet die Beobachtung von Systemen und Diensten."},
		{URL: "https://bücher.example/küche", Title: "Küche", Text: "Kochbücher für die Küche."},
	})
	if err != nil || res.Indexed != 3 || res.Replaced != 1 || len(res.Rejected) != 0 {
		t.Fatalf("Upsert() = %+v, %v; want 3 indexed, 1 replaced", res, err)
	}
	if n, _ := ix.Count(t.Context()); n != 2 {
		t.Errorf("Count() = %d, want 2", n)
	}
	got, err := ix.Search(t.Context(), search.Query{Text: "Beobachtung Diensten", MaxResults: 5})
	if err != nil || len(got) != 1 {
		t.Fatalf("Search() = %v, %v; want one result", urls(got), err)
	}
	if want := "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"; got[0].URL != want {
		t.Errorf("URL = %q, want %q", got[0].URL, want)
	}
	got, err = ix.Search(t.Context(), search.Query{Text: "Kochbücher", MaxResults: 5, AllowedDomains: []string{"xn--bcher-kva.example"}})
	if err != nil || len(got) != 1 || got[0].URL != "https://xn--bcher-kva.example/k%C3%BCche" {
		t.Errorf("Search(IDN domain) = %v, %v; want the Küche page", urls(got), err)
	}
	if n, err := ix.Delete(t.Context(), []string{"https://de.wikipedia.org/wiki/Überwachung_%28Informatik%29", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"}); err != nil || n != 1 {
		t.Errorf("Delete() = %d, %v; want 1", n, err)
	}
}

// TestIndexFilesOwnerOnly checks that everything the index writes under
// DATA_DIR is 0600 (files) or 0700 (directories), also after writes and
// for an index that an earlier version left readable by others.
func TestIndexFilesOwnerOnly(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "search-index")
	ix, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	upsert(t, ix, corpus...)
	check := func(when string) {
		t.Helper()
		n := 0
		err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			want := fs.FileMode(0o600)
			if d.IsDir() {
				want = 0o700
			}
			if got := info.Mode().Perm(); got != want {
				t.Errorf("%s: %s has mode %v, want %v", when, path, got, want)
			}
			n++
			return nil
		})
		if err != nil || n < 3 {
			t.Fatalf("%s: walked %d entries, err %v", when, n, err)
		}
	}
	check("after indexing")
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(dir, "index_meta.json"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	openTest(t, dir)
	check("after reopening a loosened index")
}
