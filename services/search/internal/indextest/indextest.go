// Package indextest is the contract of the local index: one suite of tests
// that the bleve index (internal/localindex) and the PostgreSQL index
// (internal/pgindex) both pass, so either can serve engine "local" with
// the same behaviour: canonical-URL identity and replacement, rejections
// and limits, filters, ranking that puts the page about the query first,
// compound identifiers matched by their words both ways (ResourceQuota and
// "resource quota"), scores in [0,1], snippets that are the matching
// passage, provenance.
package indextest

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/indexdoc"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// Index is what a local index offers.
type Index interface {
	search.Engine
	search.HealthChecker
	search.DocumentIndexer
	search.DocumentReader
	// Delete removes documents by URL (any spelling of the canonical
	// one) and returns how many were there.
	Delete(ctx context.Context, urls []string) (int, error)
	// Count returns the number of documents.
	Count(ctx context.Context) (uint64, error)
}

// Opener returns a new, empty index whose clock is now; the index is
// closed when the test ends.
type Opener func(t *testing.T, now func() time.Time) Index

// Now is the clock the suite gives the indexes.
var Now = time.Date(2025, 6, 1, 12, 0, 0, 0, time.UTC)

// MaxSnippetChars bounds every snippet.
const MaxSnippetChars = 300

// Corpus is a small set of documents in the shapes callers send.
var Corpus = []search.Document{
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

// Run runs the contract against indexes from open.
func Run(t *testing.T, open Opener) {
	clock := func() time.Time { return Now }
	tests := []struct {
		name string
		fn   func(t *testing.T, ix Index)
	}{
		{"RanksTitleFirst", ranksTitleFirst},
		{"ExtractsHTML", extractsHTML},
		{"ReplacesByCanonicalURL", replacesByCanonicalURL},
		{"RejectsBadDocuments", rejectsBadDocuments},
		{"Filters", filters},
		{"Delete", deleteDocs},
		{"HonoursContext", honoursContext},
		{"SnippetIsThePassage", snippetIsThePassage},
		{"ScoresInUnitInterval", scoresInUnitInterval},
		{"NonEnglishText", nonEnglishText},
		{"MediaTypeAndIcon", mediaTypeAndIcon},
		{"IRIDocuments", iriDocuments},
		{"Provenance", provenance},
		{"QuerySyntaxIsPlainWords", querySyntaxIsPlainWords},
		{"MaxResults", maxResults},
		{"CollectionsAndText", collectionsAndText},
		{"DocumentsByKey", documentsByKey},
		{"CompoundIdentifiers", compoundIdentifiers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ix := open(t, clock)
			if err := ix.Healthy(t.Context()); err != nil {
				t.Fatalf("Healthy() = %v", err)
			}
			tt.fn(t, ix)
		})
	}
}

func upsert(t *testing.T, ix Index, docs ...search.Document) search.IndexResult {
	t.Helper()
	res, err := ix.Upsert(t.Context(), docs)
	if err != nil {
		t.Fatalf("Upsert() error = %v", err)
	}
	return res
}

func find(t *testing.T, ix Index, q search.Query) []search.Result {
	t.Helper()
	got, err := ix.Search(t.Context(), q)
	if err != nil {
		t.Fatalf("Search(%q) error = %v", q.Text, err)
	}
	return got
}

// URLs lists the results' URLs in order.
func URLs(rs []search.Result) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.URL)
	}
	return out
}

func ranksTitleFirst(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	got := find(t, ix, search.Query{Text: "disk full", MaxResults: 10})
	want := []string{"https://blog.example.org/kubernetes/crashloop", "https://runbooks.example.com/disk-full", "https://www.example.com/full-disk-words"}
	gotSorted := slices.Sorted(slices.Values(URLs(got)))
	if diff := cmp.Diff(want, gotSorted); diff != "" {
		t.Errorf("results mismatch (-want +got):\n%s", diff)
	}
	if len(got) > 0 && got[0].URL != "https://runbooks.example.com/disk-full" {
		t.Errorf("top result = %s, want the page titled with the query", got[0].URL)
	}
	for _, r := range got {
		if r.Title == "" || r.Snippet == "" || r.SourceDomain == "" || r.Score <= 0 {
			t.Errorf("incomplete result %+v", r)
		}
	}
}

func extractsHTML(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	got := find(t, ix, search.Query{Text: "routing latency", MaxResults: 5})
	if len(got) != 1 {
		t.Fatalf("Search() = %v, want the networking page", URLs(got))
	}
	r := got[0]
	if r.Title != "Network latency" || r.URL != "https://wiki.example.net/networking" || r.SourceDomain != "wiki.example.net" ||
		r.MimeType != "text/html" || !strings.Contains(r.Snippet, "caused by routing changes") {
		t.Errorf("result = %+v", r)
	}
	if got := find(t, ix, search.Query{Text: "evil home", MaxResults: 5}); len(got) != 0 {
		t.Errorf("script or nav text was indexed: %v", URLs(got))
	}
}

func replacesByCanonicalURL(t *testing.T, ix Index) {
	first := upsert(t, ix, Corpus...)
	if diff := cmp.Diff(search.IndexResult{Indexed: 4}, first); diff != "" {
		t.Errorf("first Upsert() mismatch (-want +got):\n%s", diff)
	}
	res := upsert(t, ix,
		search.Document{URL: "HTTPS://Runbooks.example.com/disk-full/?utm_source=chat#top", Title: "Disk full (v2)", Text: "Use the cleanup script."},
		search.Document{URL: "https://new.example.com/a", Text: "first"},
		search.Document{URL: "https://new.example.com/a/", Text: "second wins"},
	)
	again := search.Provenance{IndexedAt: Now, Revision: 2, PreviousIndexedAt: Now}
	want := search.IndexResult{Indexed: 3, Replaced: 2, Replacements: []search.Replacement{
		{Index: 0, URL: "https://runbooks.example.com/disk-full", Provenance: again},
		{Index: 2, URL: "https://new.example.com/a", Provenance: again},
	}}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("second Upsert() mismatch (-want +got):\n%s", diff)
	}
	if n, err := ix.Count(t.Context()); err != nil || n != 5 {
		t.Errorf("Count() = %d, %v; want 5", n, err)
	}
	got := find(t, ix, search.Query{Text: "cleanup script", MaxResults: 5})
	if len(got) != 1 || got[0].Title != "Disk full (v2)" || got[0].URL != "https://runbooks.example.com/disk-full/" {
		t.Errorf("Search(new text) = %+v, want the replaced page under its latest URL", got)
	}
	if got := find(t, ix, search.Query{Text: "PostgreSQL writes", MaxResults: 5}); len(got) != 0 {
		t.Errorf("old text still found: %v", URLs(got))
	}
	if got := find(t, ix, search.Query{Text: "second wins", MaxResults: 5}); len(got) != 1 {
		t.Errorf("the later of two spellings in one call did not win: %v", URLs(got))
	}
}

func rejectsBadDocuments(t *testing.T, ix Index) {
	res := upsert(t, ix,
		search.Document{URL: "ftp://example.com/a", Text: "x"},
		search.Document{URL: "https://example.com/ok", Text: "fine"},
		search.Document{URL: "https://example.com/empty", Text: "  \n "},
		search.Document{URL: "https://example.com/empty-html", HTML: "<script>only()</script>"},
		search.Document{URL: "", Text: "no url"},
		search.Document{URL: "https://example.com/huge", Text: strings.Repeat("a", indexdoc.MaxDocumentBytes+1)},
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
	if n, _ := ix.Count(t.Context()); n != 1 {
		t.Errorf("Count() = %d, want 1", n)
	}
}

func filters(t *testing.T, ix Index) {
	upsert(t, ix,
		search.Document{URL: "https://docs.example.com/a", Text: "alpha guide", PublishedAt: Now.AddDate(0, 0, -2)},
		search.Document{URL: "https://www.example.com/b", Text: "alpha news", PublishedAt: Now.AddDate(-1, 0, 0)},
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
			got := URLs(find(t, ix, q))
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Search() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	got := find(t, ix, search.Query{Text: "guide", MaxResults: 1})
	if len(got) != 1 || !got[0].PublishedAt.Equal(Now.AddDate(0, 0, -2)) {
		t.Errorf("Search(guide) = %+v, want PublishedAt %v", got, Now.AddDate(0, 0, -2))
	}
}

func deleteDocs(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	n, err := ix.Delete(t.Context(), []string{"https://runbooks.example.com/disk-full/", "https://missing.example/", "not a url"})
	if err != nil || n != 1 {
		t.Fatalf("Delete() = %d, %v; want 1", n, err)
	}
	if c, _ := ix.Count(t.Context()); c != uint64(len(Corpus)-1) {
		t.Errorf("Count() = %d, want %d", c, len(Corpus)-1)
	}
	if got := find(t, ix, search.Query{Text: "WAL segments", MaxResults: 5}); len(got) != 0 {
		t.Errorf("deleted document still found: %v", URLs(got))
	}
}

func honoursContext(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := ix.Search(ctx, search.Query{Text: "disk", MaxResults: 3}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search(cancelled) error = %v, want context.Canceled", err)
	}
	if _, err := ix.Upsert(ctx, Corpus); !errors.Is(err, context.Canceled) {
		t.Errorf("Upsert(cancelled) error = %v, want context.Canceled", err)
	}
}

// Runbook is a runbook-sized Markdown document (about 900 characters).
const Runbook = "# Redis memory\n\n" +
	"## Symptoms\n\nClients see OOM command not allowed errors and latency rises while the instance swaps. " +
	"Dashboards show used_memory close to maxmemory for several minutes before the alert fires.\n\n" +
	"## Diagnosis\n\nRun INFO memory and compare used_memory_rss with used_memory to spot fragmentation. " +
	"List the biggest keys with redis-cli --bigkeys during a quiet period, because the scan adds load.\n\n" +
	"## Mitigation\n\nRaise maxmemory only when the host has headroom. Otherwise set an eviction policy such as allkeys-lru, " +
	"expire stale session keys, and move large sorted sets to their own instance. Restarting a replica to defragment is a last resort.\n"

func snippetIsThePassage(t *testing.T, ix Index) {
	intro := strings.Repeat("This introduction talks about the company history and nothing relevant. ", 8)
	upsert(t, ix,
		search.Document{URL: "https://runbooks.example.com/redis-memory", Title: "Redis memory", Text: Runbook},
		search.Document{URL: "https://example.com/handbook", Title: "Handbook",
			Text: intro + "To recover from a full disk on the database host, stop the writer, then rotate logs and vacuum the tables. " + intro},
	)
	for _, tc := range []struct{ query, passage, notStart string }{
		{"eviction policy allkeys-lru", "allkeys-lru", "Clients see OOM"},
		{"full disk database rotate", "rotate logs", "This introduction"},
	} {
		got := find(t, ix, search.Query{Text: tc.query, MaxResults: 1})
		if len(got) != 1 {
			t.Fatalf("Search(%q) = %v, want one result", tc.query, URLs(got))
		}
		s := got[0].Snippet
		if n := utf8.RuneCountInString(s); n > MaxSnippetChars {
			t.Errorf("snippet is %d characters, want at most %d: %q", n, MaxSnippetChars, s)
		}
		if !strings.Contains(s, tc.passage) || strings.HasPrefix(s, tc.notStart) || strings.ContainsAny(s, "<>\n") {
			t.Errorf("Search(%q) snippet %q is not the passage about %q", tc.query, s, tc.passage)
		}
	}
}

func scoresInUnitInterval(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	upsert(t, ix, search.Document{URL: "https://runbooks.example.com/redis-memory", Title: "Redis memory", Text: Runbook})
	for _, q := range []string{"disk full", "disk", "redis memory eviction maxmemory used_memory", "latency"} {
		got := find(t, ix, search.Query{Text: q, MaxResults: 10})
		if len(got) == 0 {
			t.Errorf("Search(%q) found nothing", q)
		}
		for i, r := range got {
			if r.Score <= 0 || r.Score > 1 {
				t.Errorf("Search(%q) score %v of %s is outside (0,1]", q, r.Score, r.URL)
			}
			if i > 0 && r.Score > got[i-1].Score {
				t.Errorf("Search(%q) scores not descending: %v after %v", q, r.Score, got[i-1].Score)
			}
		}
	}
}

func nonEnglishText(t *testing.T, ix Index) {
	upsert(t, ix,
		search.Document{URL: "https://wiki.example.de/platte-voll", Title: "Festplatte voll",
			Text: "Wenn die Festplatte voll ist, nimmt PostgreSQL keine Schreibzugriffe mehr an. Alte WAL-Segmente entfernen."},
		search.Document{URL: "https://wiki.example.jp/disk", Title: "ディスク容量",
			Text: "ディスク 容量 不足 の 場合 は ログ を 削除 します。"},
		search.Document{URL: "https://wiki.example.de/speicher", Title: "Arbeitsspeicher", Text: "Der Speicher des Knotens ist erschöpft.",
			Metadata: map[string]string{"language": "de"}},
	)
	for q, want := range map[string]string{
		"Festplatte voll":    "https://wiki.example.de/platte-voll",
		"Schreibzugriffe":    "https://wiki.example.de/platte-voll",
		"ディスク":               "https://wiki.example.jp/disk",
		"Speicher erschöpft": "https://wiki.example.de/speicher",
	} {
		got := find(t, ix, search.Query{Text: q, MaxResults: 3})
		if len(got) == 0 || got[0].URL != want {
			t.Errorf("Search(%q) = %v, want %s first", q, URLs(got), want)
		}
	}
}

func mediaTypeAndIcon(t *testing.T, ix Index) {
	upsert(t, ix,
		search.Document{URL: "https://docs.example.com/guide", Title: "Zebra guide",
			HTML: `<html><head><title>Zebra guide</title><link rel="icon" href="/img/fav.png"></head><body><p>zebra stripes html</p></body></html>`},
		search.Document{URL: "https://files.example.com/report", Title: "Zebra report", Text: "zebra stripes pdf",
			Metadata: map[string]string{"content_type": "application/PDF; version=1.7", "favicon": "https://files.example.com/favicon.ico", "team": "x"}},
		search.Document{URL: "https://notes.example.com/plain", Title: "Zebra notes", Text: "zebra stripes notes"},
		search.Document{URL: "https://notes.example.com/md", Text: "# Zebra markdown\n\nzebra stripes in markdown\n\n## More\n\ntext"},
	)
	type meta struct{ Mime, Icon string }
	got := map[string]meta{}
	for _, r := range find(t, ix, search.Query{Text: "zebra stripes", MaxResults: 10}) {
		got[r.URL] = meta{r.MimeType, r.FaviconURL}
	}
	want := map[string]meta{
		"https://docs.example.com/guide":   {"text/html", "https://docs.example.com/img/fav.png"},
		"https://files.example.com/report": {"application/pdf", "https://files.example.com/favicon.ico"},
		"https://notes.example.com/plain":  {"text/plain", ""},
		"https://notes.example.com/md":     {"text/markdown", ""},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("media types and icons mismatch (-want +got):\n%s", diff)
	}
}

func iriDocuments(t *testing.T, ix Index) {
	res := upsert(t, ix,
		search.Document{URL: "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", Title: "Überwachung (Informatik)", Text: "Überwachung bezeichnet die Beobachtung von Systemen."},
		search.Document{URL: "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", Title: "Überwachung (Informatik)", Text: "Überwachung bezeichnet die Beobachtung von Systemen und Diensten."},
		search.Document{URL: "https://bücher.example/küche", Title: "Küche", Text: "Kochbücher für die Küche."},
	)
	if res.Indexed != 3 || res.Replaced != 1 || len(res.Rejected) != 0 {
		t.Fatalf("Upsert() = %+v; want 3 indexed, 1 replaced", res)
	}
	if n, _ := ix.Count(t.Context()); n != 2 {
		t.Errorf("Count() = %d, want 2", n)
	}
	got := find(t, ix, search.Query{Text: "Beobachtung Diensten", MaxResults: 5})
	if want := "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"; len(got) != 1 || got[0].URL != want {
		t.Errorf("Search() = %v, want [%s]", URLs(got), want)
	}
	got = find(t, ix, search.Query{Text: "Kochbücher", MaxResults: 5, AllowedDomains: []string{"xn--bcher-kva.example"}})
	if len(got) != 1 || got[0].URL != "https://xn--bcher-kva.example/k%C3%BCche" {
		t.Errorf("Search(IDN domain) = %v; want the Küche page", URLs(got))
	}
	if n, err := ix.Delete(t.Context(), []string{"https://de.wikipedia.org/wiki/Überwachung_%28Informatik%29", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"}); err != nil || n != 1 {
		t.Errorf("Delete() = %d, %v; want 1", n, err)
	}
}

func provenance(t *testing.T, ix Index) {
	upsert(t, ix, search.Document{URL: "https://runbooks.example.com/checkout", Title: "Checkout 5xx", Text: "Roll back the last deploy.", IndexedBy: "ops"})
	got := find(t, ix, search.Query{Text: "roll back deploy", MaxResults: 1})
	if len(got) != 1 || got[0].Provenance == nil {
		t.Fatalf("Search() = %+v, want one result with provenance", got)
	}
	if diff := cmp.Diff(search.Provenance{IndexedBy: "ops", IndexedAt: Now, Revision: 1}, *got[0].Provenance); diff != "" {
		t.Errorf("first version's provenance (-want +got):\n%s", diff)
	}
	res := upsert(t, ix, search.Document{URL: "https://runbooks.example.com/checkout", Title: "Checkout 5xx",
		Text: "Roll back the last deploy and page the payments team.", IndexedBy: "alertmanager-webhook",
		Metadata: map[string]string{indexdoc.ReservedMetaPrefix + "indexed_by": "ops"}})
	want := search.Provenance{IndexedBy: "alertmanager-webhook", IndexedAt: Now, Revision: 2, PreviousIndexedBy: "ops", PreviousIndexedAt: Now}
	if len(res.Replacements) != 1 {
		t.Fatalf("replacements = %+v, want one", res.Replacements)
	}
	if diff := cmp.Diff(want, res.Replacements[0].Provenance); diff != "" {
		t.Errorf("replacement provenance (-want +got):\n%s", diff)
	}
	got = find(t, ix, search.Query{Text: "payments team", MaxResults: 1})
	if len(got) != 1 || got[0].Provenance == nil {
		t.Fatalf("Search() = %+v, want one result with provenance", got)
	}
	if diff := cmp.Diff(want, *got[0].Provenance); diff != "" {
		t.Errorf("replaced version's provenance (-want +got):\n%s", diff)
	}
	res = upsert(t, ix, search.Document{URL: "https://runbooks.example.com/checkout", Text: "Third version.", IndexedBy: "ci"})
	if len(res.Replacements) != 1 || res.Replacements[0].Provenance.Revision != 3 || res.Replacements[0].Provenance.PreviousIndexedBy != "alertmanager-webhook" {
		t.Errorf("third version = %+v, want revision 3 replacing alertmanager-webhook's", res.Replacements)
	}
}

func querySyntaxIsPlainWords(t *testing.T, ix Index) {
	upsert(t, ix, Corpus...)
	for _, q := range []string{`"disk full" -nothing`, `disk OR full`, `-disk`, `"unterminated disk`, `disk & full | !x`, `(disk) <-> full:*`} {
		got := find(t, ix, search.Query{Text: q, MaxResults: 10})
		if len(got) == 0 || !slices.Contains(URLs(got), "https://runbooks.example.com/disk-full") {
			t.Errorf("Search(%q) = %v, want the disk runbook among the results", q, URLs(got))
		}
	}
	if got := find(t, ix, search.Query{Text: `" " - or`, MaxResults: 10}); len(got) != 0 {
		t.Errorf("Search of no words = %v, want none", URLs(got))
	}
}

func maxResults(t *testing.T, ix Index) {
	var docs []search.Document
	for i := range 30 {
		docs = append(docs, search.Document{URL: "https://example.com/page/" + string(rune('a'+i%26)) + strings.Repeat("x", i/26),
			Title: "Page", Text: "common words in every page"})
	}
	upsert(t, ix, docs...)
	got := find(t, ix, search.Query{Text: "common words", MaxResults: 7})
	if len(got) != 7 {
		t.Errorf("Search() returned %d results, want 7", len(got))
	}
	if got := find(t, ix, search.Query{Text: "common", MaxResults: 0}); len(got) != 0 {
		t.Errorf("MaxResults 0 returned %d results", len(got))
	}
}

// collectionsAndText: a query can leave out the documents of a collection
// (groundcrew's own runbooks, for the team's alerts), documents without
// one are always searched, and the whole text comes back only when asked
// for. (A collection's term never passes as a domain filter: the service
// accepts only host names there.)
func collectionsAndText(t *testing.T, ix Index) {
	body := "Disk almost full. " + strings.Repeat("Rotate and compress the logs. ", 30) + "Expand the volume."
	upsert(t, ix,
		search.Document{URL: "https://runbooks.example.com/disk", Title: "Disk almost full", Text: body},
		search.Document{URL: "https://github.com/groundcrew/groundcrew/blob/main/docs/runbooks/disk.md", Title: "Disk of groundcrew",
			Text: "Disk almost full on the groundcrew data volume.", Metadata: map[string]string{search.MetaCollection: "groundcrew"}},
		search.Document{URL: "https://runbooks.example.com/payments-disk", Title: "Payments disk", Text: "Disk almost full on payments.",
			Metadata: map[string]string{search.MetaCollection: "payments"}},
	)
	all := URLs(find(t, ix, search.Query{Text: "disk full", MaxResults: 10}))
	slices.Sort(all)
	if len(all) != 3 {
		t.Errorf("Search(disk full) = %v, want every collection", all)
	}
	got := find(t, ix, search.Query{Text: "disk full", MaxResults: 10, ExcludeCollections: []string{"groundcrew"}})
	urls := URLs(got)
	slices.Sort(urls)
	if diff := cmp.Diff([]string{"https://runbooks.example.com/disk", "https://runbooks.example.com/payments-disk"}, urls); diff != "" {
		t.Errorf("Search() excluding groundcrew (-want +got):\n%s", diff)
	}
	for _, r := range got {
		if r.Text != "" {
			t.Errorf("%s: text %q without IncludeText", r.URL, r.Text)
		}
	}
	got = find(t, ix, search.Query{Text: "rotate logs", MaxResults: 1, IncludeText: true})
	if len(got) != 1 || !strings.HasPrefix(got[0].Text, "Disk almost full.") || !strings.HasSuffix(got[0].Text, "Expand the volume.") {
		t.Fatalf("Search(IncludeText) = %+v, want the whole text", got)
	}
	if utf8.RuneCountInString(got[0].Snippet) >= utf8.RuneCountInString(got[0].Text) {
		t.Errorf("snippet %q is not a passage of the text", got[0].Snippet)
	}
}

// documentsByKey: a lookup by canonical URL returns the indexed documents
// with their whole text and their beginning as snippet, whatever the text
// says, and leaves out unknown keys and excluded collections.
func documentsByKey(t *testing.T, ix Index) {
	long := strings.Repeat("Check the replica's WAL receiver first. ", 20)
	upsert(t, ix,
		search.Document{URL: "https://runbooks.example.com/replica-lag/", Title: "Replica lag", Text: long},
		search.Document{URL: "https://runbooks.example.com/own", Title: "groundcrew provider errors",
			Text: "Raise the round timeout.", Metadata: map[string]string{search.MetaCollection: "groundcrew"}},
	)
	ids := []string{"https://runbooks.example.com/replica-lag", "https://runbooks.example.com/own", "https://runbooks.example.com/absent"}
	got, err := ix.Documents(t.Context(), ids, nil)
	if err != nil {
		t.Fatalf("Documents() error = %v", err)
	}
	var urls []string
	for _, r := range got {
		urls = append(urls, r.URL)
	}
	slices.Sort(urls)
	if want := []string{"https://runbooks.example.com/own", "https://runbooks.example.com/replica-lag/"}; !slices.Equal(urls, want) {
		t.Fatalf("Documents() URLs = %q, want %q", urls, want)
	}
	for _, r := range got {
		if r.Title != "Replica lag" {
			continue
		}
		if r.Text != strings.TrimSpace(long) && r.Text != long {
			t.Errorf("Documents() text = %q, want the whole document", r.Text)
		}
		if n := utf8.RuneCountInString(r.Snippet); n == 0 || n > MaxSnippetChars || !strings.HasPrefix(r.Snippet, "Check the replica") {
			t.Errorf("Documents() snippet = %q (%d characters), want the document's beginning within %d", r.Snippet, n, MaxSnippetChars)
		}
		if r.Provenance == nil || r.Provenance.Revision != 1 {
			t.Errorf("Documents() provenance = %+v, want revision 1", r.Provenance)
		}
	}
	got, err = ix.Documents(t.Context(), ids, []string{"groundcrew"})
	if err != nil {
		t.Fatalf("Documents(excluding groundcrew) error = %v", err)
	}
	if len(got) != 1 || got[0].Title != "Replica lag" {
		t.Errorf("Documents(excluding groundcrew) = %+v, want only the replica-lag runbook", got)
	}
}

// Documents for compoundIdentifiers: one writes the identifier, one its
// words apart, one only one of its words (twice).
const (
	identifierURL = "https://runbooks.example.com/namespace-quota"
	wordsURL      = "https://wiki.example.com/quotas"
	oneWordURL    = "https://www.example.org/planning"
	crashURL      = "https://runbooks.example.com/pods-restarting"
	oomURL        = "https://runbooks.example.com/container-memory"
)

var identifierText = "Pods fail to start when the ResourceQuota of the namespace is used up.\nRaise the hard limits or free requests."

func compoundIdentifiers(t *testing.T, ix Index) {
	upsert(t, ix,
		search.Document{URL: identifierURL, Title: "Namespace quota used up", Text: identifierText},
		search.Document{URL: wordsURL, Title: "Limits per namespace", Text: "A resource quota caps the total requests of a namespace."},
		search.Document{URL: oneWordURL, Title: "Capacity planning", Text: "Plan each resource of the cluster before the quarter starts; every resource has an owner."},
		search.Document{URL: crashURL, Title: "Pods restarting", Text: "A container in CrashLoopBackOff exits soon after it starts."},
		search.Document{URL: oomURL, Title: "Container memory", Text: "The kernel OOMKilled the container: its memory limit is too low."},
	)
	rank := func(rs []search.Result, url string) int {
		if i := slices.Index(URLs(rs), url); i >= 0 {
			return i
		}
		return len(rs)
	}
	for _, tc := range []struct {
		query string
		want  []string // found, each above oneWordURL when that is found
	}{
		// The words find the identifier…
		{"resource quota", []string{identifierURL, wordsURL}},
		{"Kube Resource Quota Exceeded", []string{identifierURL, wordsURL}},
		{"crash loop back off", []string{crashURL}},
		{"OOM killed", []string{oomURL}},
		// … and the identifier its words written apart.
		{"ResourceQuota", []string{identifierURL, wordsURL}},
		{"KubeResourceQuotaExceeded", []string{identifierURL}},
	} {
		got := find(t, ix, search.Query{Text: tc.query, MaxResults: 10})
		for _, url := range tc.want {
			i := rank(got, url)
			if i == len(got) {
				t.Errorf("Search(%q) = %v, want %s among them", tc.query, URLs(got), url)
			} else if i > rank(got, oneWordURL) {
				t.Errorf("Search(%q) = %v: %s, which only says \"resource\", ranks above %s", tc.query, URLs(got), oneWordURL, url)
			}
		}
	}
	// The identifier itself matches best where it is written as asked.
	if got := find(t, ix, search.Query{Text: "ResourceQuota", MaxResults: 10}); len(got) == 0 || got[0].URL != identifierURL {
		t.Errorf("Search(ResourceQuota) = %v, want %s first", URLs(got), identifierURL)
	}
	// Splitting adds to what is matched, not to what is stored or shown.
	got := find(t, ix, search.Query{Text: "resource quota", MaxResults: 10, IncludeText: true})
	for _, r := range got {
		if r.URL != identifierURL {
			continue
		}
		if r.Text != identifierText {
			t.Errorf("text = %q, want it as indexed: %q", r.Text, identifierText)
		}
		if !strings.Contains(r.Snippet, "ResourceQuota") || strings.Contains(strings.ToLower(r.Snippet), "resource quota") {
			t.Errorf("snippet = %q, want the text's own words (ResourceQuota)", r.Snippet)
		}
	}
}
