package localindex

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/blevesearch/bleve/v2"
	"github.com/blevesearch/bleve/v2/mapping"
	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/services/search/internal/indexdoc"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// writeLegacyIndex writes docs into a new index at dir with the mapping
// indexes had before compound words (no parts field), as they wrote them.
func writeLegacyIndex(t *testing.T, dir string, docs ...search.Document) {
	t.Helper()
	m := newMapping().(*mapping.IndexMappingImpl)
	delete(m.DefaultMapping.Properties, fieldParts)
	idx, err := bleve.New(dir, m)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		p, err := indexdoc.Prepare(d, testNow)
		if err != nil {
			t.Fatal(err)
		}
		fields, err := indexFields(p, search.Provenance{IndexedBy: d.IndexedBy, IndexedAt: testNow, Revision: 1})
		if err != nil {
			t.Fatal(err)
		}
		delete(fields, fieldParts)
		if err := idx.Index(p.ID, fields); err != nil {
			t.Fatal(err)
		}
	}
	if hasField(idx, fieldParts) {
		t.Fatal("legacy mapping has the parts field")
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
}

var legacyDocs = []search.Document{
	{
		URL: "https://runbooks.example.com/namespace-quota", Title: "Namespace limits",
		Text:        "Pods fail to start when the ResourceQuota of the namespace is used up.",
		Metadata:    map[string]string{search.MetaCollection: "team"},
		PublishedAt: testNow.Add(-48 * time.Hour), IndexedBy: "alice",
	},
	{
		URL: "https://docs.example.org/capacity", Title: "Capacity planning",
		Text: "Plan each resource of the cluster before the quarter starts.", IndexedBy: "bob",
	},
}

// TestOpenRebuildsLegacyIndex opens an index written before compound
// words: it is rebuilt with them, and keeps its documents, their text,
// provenance, domains, collections and dates.
func TestOpenRebuildsLegacyIndex(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	writeLegacyIndex(t, dir, legacyDocs...)
	ix, err := Open(dir, Options{Now: func() time.Time { return testNow }})
	if err != nil {
		t.Fatalf("Open() error = %v", err)
	}
	if !hasField(ix.idx, fieldParts) {
		t.Fatal("mapping after Open has no parts field")
	}
	if n, err := ix.Count(t.Context()); err != nil || n != 2 {
		t.Errorf("Count() = %d, %v, want 2", n, err)
	}
	for _, leftover := range []string{dir + oldSuffix, dir + rebuildSuffix} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("%s left behind", leftover)
		}
	}
	search1 := func(q search.Query) []search.Result {
		t.Helper()
		q.MaxResults = 10
		got, err := ix.Search(t.Context(), q)
		if err != nil {
			t.Fatal(err)
		}
		return got
	}
	const quotaURL = "https://runbooks.example.com/namespace-quota"
	got := search1(search.Query{Text: "resource quota", IncludeText: true})
	if len(got) == 0 || got[0].URL != quotaURL {
		_ = ix.Close()
		t.Fatalf("Search(resource quota) = %v, want %s first", urls(got), quotaURL)
	}
	r := got[0]
	if r.Text != legacyDocs[0].Text || r.Provenance.IndexedBy != "alice" || r.Provenance.Revision != 1 ||
		!r.Provenance.IndexedAt.Equal(testNow) || !r.PublishedAt.Equal(legacyDocs[0].PublishedAt) {
		t.Errorf("rebuilt result = %+v, want the document as indexed", r)
	}
	for _, tc := range []struct {
		name string
		q    search.Query
		want []string
	}{
		{"collection excluded", search.Query{Text: "resource quota", ExcludeCollections: []string{"team"}}, []string{"https://docs.example.org/capacity"}},
		{"domain allowed", search.Query{Text: "resource quota", AllowedDomains: []string{"example.com"}}, []string{quotaURL}},
		// The quota runbook was published two days ago, the other indexed now.
		{"recency", search.Query{Text: "resource quota", MaxAge: 24 * time.Hour}, []string{"https://docs.example.org/capacity"}},
	} {
		if got := urls(search1(tc.q)); !equalStrings(got, tc.want) {
			t.Errorf("%s: Search() = %v, want %v", tc.name, got, tc.want)
		}
	}
	// Opening again finds the current mapping and rebuilds nothing.
	if err := ix.Close(); err != nil {
		t.Fatal(err)
	}
	again := openTest(t, dir)
	if n, err := again.Count(t.Context()); err != nil || n != 2 {
		t.Errorf("Count() after reopening = %d, %v, want 2", n, err)
	}
}

// TestOpenRecoversInterruptedRebuild finds the old index moved aside and
// no new one (a rebuild stopped between its renames): the old index is put
// back and rebuilt.
func TestOpenRecoversInterruptedRebuild(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	writeLegacyIndex(t, dir+oldSuffix, legacyDocs...)
	if err := os.MkdirAll(filepath.Join(dir+rebuildSuffix, "store"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir+rebuildSuffix, "index_meta.json"), []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	ix := openTest(t, dir)
	if n, err := ix.Count(t.Context()); err != nil || n != 2 {
		t.Errorf("Count() = %d, %v, want 2", n, err)
	}
	for _, leftover := range []string{dir + oldSuffix, dir + rebuildSuffix} {
		if _, err := os.Stat(leftover); err == nil {
			t.Errorf("%s left behind", leftover)
		}
	}
}

// TestOpenKeepsForeignSiblings leaves a directory named like a rebuild's
// that a person filled alone, and says so.
func TestOpenKeepsForeignSiblings(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.MkdirAll(dir+oldSuffix, 0o700); err != nil {
		t.Fatal(err)
	}
	notes := filepath.Join(dir+oldSuffix, "notes.txt")
	if err := os.WriteFile(notes, []byte("mine"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ix, err := Open(dir, Options{}); err == nil {
		_ = ix.Close()
		t.Fatal("Open() succeeded, want an error about the foreign directory")
	}
	if _, err := os.Stat(notes); err != nil {
		t.Errorf("foreign file removed: %v", err)
	}
}

func equalStrings(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestStoredFieldsDatesUndatedDocuments dates a document stored with
// neither a publication nor an indexing time (indexes older than
// provenance) at the rebuild's time, so recency filters keep it as they
// did, and reads the rest of what indexFields wrote.
func TestStoredFieldsDatesUndatedDocuments(t *testing.T) {
	now := testNow.Add(time.Hour)
	got := storedFields(map[string]any{
		fieldURL: "https://docs.example.com/a", fieldTitle: "Quota", fieldText: "The ResourceQuota is used up.",
		fieldMetadata: `{"collection":"team"}`,
	}, now)
	if d, _ := got[fieldDate].(time.Time); !d.Equal(now) {
		t.Errorf("date = %v, want %v", got[fieldDate], now)
	}
	if diff := cmp.Diff([]string{"docs.example.com", "example.com", "com", "collection:team"}, got[fieldDomains]); diff != "" {
		t.Errorf("domains (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"resource quota"}, got[fieldParts]); diff != "" {
		t.Errorf("parts (-want +got):\n%s", diff)
	}
}

// TestOpenLeavesABackupBeside keeps a person's copy of the index named
// like a backup ("index.old") when the index beside it is rebuilt.
func TestOpenLeavesABackupBeside(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "index")
	writeLegacyIndex(t, dir, legacyDocs...)
	writeLegacyIndex(t, dir+".old", legacyDocs...)
	openTest(t, dir)
	if _, err := os.Stat(filepath.Join(dir+".old", "index_meta.json")); err != nil {
		t.Errorf("backup beside the index removed: %v", err)
	}
}
