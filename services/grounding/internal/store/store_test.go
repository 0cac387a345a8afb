package store_test

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/grounding"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

var discard = slog.New(slog.DiscardHandler)

func newStore(t *testing.T) *store.Store {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.URL(t, "grounding_store"), dir, "grounding", discard)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	arts, err := store.NewArtifacts(filepath.Join(dir, "artifacts"), "AIzaSECRETSECRET")
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, arts)
}

var (
	t0   = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	yes  = true
	five = 5
)

func message(id string, at time.Time, st grounding.Status, domains ...string) *grounding.Message {
	conf := 0.75
	m := &grounding.Message{
		ID: id, Text: "Postgres refuses connections [1].", Summary: "Postgres refuses connections.",
		Confidence: &conf, Status: st, InputText: "alert", Model: "extractive", Engine: grounding.EngineLocal,
		CreatedBy: "notifier", CreateTime: at, RequestID: "req-" + id,
		Round: grounding.RoundConfig{
			ID: "round-" + id, EnableSearch: &yes, MaxResults: &five, Engine: grounding.EngineLocal,
			ContextScale: grounding.ScaleHigh, Timeout: 30 * time.Second, BudgetTokens: 2000,
		},
		Parsed: map[string]any{"method": "markers", "markers": []any{map[string]any{"start": 0.0, "end": 5.0}}, "dropped": []any{}},
		Context: grounding.GroundedContext{Query: "postgres connections", Timestamp: at, Results: []grounding.SearchResult{
			{Title: "Docs", Snippet: "too many", URL: "https://a.example/x", SourceDomain: "a.example", Score: 1.5},
		}},
	}
	for i, d := range domains {
		m.Citations = append(m.Citations, grounding.Citation{
			URL: "https://" + d + "/p", Domain: d, Title: "T", Snippet: "s", StartIndex: 0, EndIndex: 5,
			ConfidenceScore: 0.5, FetchTime: at, SourceIndex: i + 1,
			ID: fmt.Sprintf("cit-%s-%d", id, i), CreateTime: at, CreatedBy: "ci-key", MimeType: "text/html",
		})
	}
	return m
}

func testCreateGetRoundTrip(t *testing.T, s *store.Store) {
	m := message("m1", t0, grounding.StatusProcessed, "a.example", "b.example")
	m.Citations[0].Snippet = strings.Repeat("word ", 400) // 2000 characters
	if err := s.Create(t.Context(), m, []byte(`{"contact":"ops@example.com","auth":"Bearer abcdefghijk","k":"AIzaSECRETSECRET"}`)); err != nil {
		t.Fatalf("Create: %v", err)
	}
	if m.ArtifactPath == "" {
		t.Fatal("ArtifactPath not set")
	}
	if filepath.IsAbs(m.ArtifactPath) || !strings.HasPrefix(m.ArtifactPath, "artifacts/") {
		t.Errorf("ArtifactPath = %q, want a path relative to DATA_DIR under artifacts/", m.ArtifactPath)
	}
	raw, err := s.Artifacts().Read(m.ArtifactPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, leak := range []string{"ops@example.com", "abcdefghijk", "AIzaSECRETSECRET"} {
		if strings.Contains(string(raw), leak) {
			t.Errorf("artifact %s contains %q", raw, leak)
		}
	}
	got, err := s.Get(t.Context(), "m1")
	if err != nil {
		t.Fatalf("Get: %v", err)
	}
	if n := len([]rune(got.Citations[0].Snippet)); n > grounding.MaxSnippetChars || !got.Citations[0].SnippetTruncated {
		t.Errorf("snippet: %d characters, truncated=%v; want ≤ %d and true", n, got.Citations[0].SnippetTruncated, grounding.MaxSnippetChars)
	}
	if diff := cmp.Diff(m, got); diff != "" {
		t.Errorf("Get mismatch (-stored +got):\n%s", diff)
	}
	if got.Citations[0].ID != "cit-m1-0" || got.Round.ID != "round-m1" || got.RequestID != "req-m1" {
		t.Errorf("ids: citation %q round %q request %q; want them as stored", got.Citations[0].ID, got.Round.ID, got.RequestID)
	}

	noConf := message("m2", t0, grounding.StatusFailed)
	noConf.Confidence = nil
	if err := s.Create(t.Context(), noConf, nil); err != nil {
		t.Fatal(err)
	}
	got, err = s.Get(t.Context(), "m2")
	if err != nil || got.Confidence != nil || got.ArtifactPath != "" {
		t.Errorf("Get(m2) = %+v, %v; want no confidence and no artifact", got, err)
	}
	if _, err := s.Get(t.Context(), "nope"); !errors.Is(err, grounding.ErrNotFound) {
		t.Errorf("Get(nope) error = %v, want ErrNotFound", err)
	}
}

// storeTests run against SQLite always and against PostgreSQL when
// TEST_DATABASE_URL is set.
var storeTests = map[string]func(*testing.T, *store.Store){
	"CreateGetRoundTrip": testCreateGetRoundTrip,
	"List":               testList,
	"SetReview":          testSetReview,
	"Retention":          testRetention,
	"Redaction":          testRedactionAtRest,
	"RawHTML":            testRawHTML,
	"ReviewHistory":      testReviewHistory,
	"MessageRetention":   testMessageRetention,
	"RetentionDesensitize": func(t *testing.T, s *store.Store) {
		testArchive(t, s, store.ArchiveDesensitize)
	},
	"RetentionCompress": func(t *testing.T, s *store.Store) {
		testArchive(t, s, store.ArchiveCompress)
	},
}

func TestSQLite(t *testing.T) {
	for name, test := range storeTests {
		t.Run(name, func(t *testing.T) { test(t, newStore(t)) })
	}
}

// TestPostgres runs storeTests in a schema of their own, dropped
// afterwards.
func TestPostgres(t *testing.T) {
	if os.Getenv(sqlstoretest.EnvVar) == "" {
		t.Skip(sqlstoretest.EnvVar + " is not set; set it to a postgres:// URL to run the PostgreSQL tests")
	}
	for name, test := range storeTests {
		t.Run(name, func(t *testing.T) { test(t, newPostgresStore(t)) })
	}
}

func newPostgresStore(t *testing.T) *store.Store {
	t.Helper()
	db, err := sqlstore.Open(t.Context(), sqlstoretest.PostgresURL(t, "grounding_store_test"), "", "grounding", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	arts, err := store.NewArtifacts(filepath.Join(t.TempDir(), "artifacts"), "AIzaSECRETSECRET")
	if err != nil {
		t.Fatal(err)
	}
	return store.New(db, arts)
}

func ids(ms []*grounding.Message) []string {
	out := []string{}
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

func testList(t *testing.T, s *store.Store) {
	for i, spec := range []struct {
		id     string
		st     grounding.Status
		domain string
	}{
		{"a", grounding.StatusProcessed, "a.example"},
		{"b", grounding.StatusNeedsReview, "b.example"},
		{"c", grounding.StatusProcessed, "b.example"},
		{"d", grounding.StatusProcessed, "a.example"},
		{"e", grounding.StatusFailed, ""},
	} {
		var m *grounding.Message
		if spec.domain == "" {
			m = message(spec.id, t0.Add(time.Duration(i)*time.Hour), spec.st)
		} else {
			m = message(spec.id, t0.Add(time.Duration(i)*time.Hour), spec.st, spec.domain)
		}
		if err := s.Create(t.Context(), m, nil); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name string
		f    grounding.ListFilter
		want []string
	}{
		{"all", grounding.ListFilter{PageSize: 10}, []string{"e", "d", "c", "b", "a"}},
		{"status", grounding.ListFilter{PageSize: 10, Status: grounding.StatusProcessed}, []string{"d", "c", "a"}},
		{"domain", grounding.ListFilter{PageSize: 10, Domain: "B.example"}, []string{"c", "b"}},
		{"time", grounding.ListFilter{PageSize: 10, CreatedAfter: t0.Add(time.Hour), CreatedBefore: t0.Add(3 * time.Hour)}, []string{"c", "b"}},
		{"combined", grounding.ListFilter{PageSize: 10, Status: grounding.StatusProcessed, Domain: "a.example"}, []string{"d", "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, next, err := s.List(t.Context(), tt.f)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, ids(got)); diff != "" || next != "" {
				t.Errorf("List ids (-want +got):\n%s next=%q", diff, next)
			}
		})
	}

	t.Run("pages", func(t *testing.T) {
		f := grounding.ListFilter{PageSize: 2}
		var all []string
		for range 5 {
			got, next, err := s.List(t.Context(), f)
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, ids(got)...)
			if next == "" {
				break
			}
			f.PageToken = next
		}
		if diff := cmp.Diff([]string{"e", "d", "c", "b", "a"}, all); diff != "" {
			t.Errorf("paged ids (-want +got):\n%s", diff)
		}
	})
	t.Run("bad tokens", func(t *testing.T) {
		_, next, err := s.List(t.Context(), grounding.ListFilter{PageSize: 1})
		if err != nil || next == "" {
			t.Fatalf("first page: %q, %v", next, err)
		}
		for _, f := range []grounding.ListFilter{
			{PageSize: 1, PageToken: "not base64!"},
			{PageSize: 1, PageToken: next, Status: grounding.StatusFailed},
		} {
			if _, _, err := s.List(t.Context(), f); !errors.Is(err, grounding.ErrInvalidPageToken) {
				t.Errorf("List(%+v) error = %v, want ErrInvalidPageToken", f, err)
			}
		}
	})
}

func testSetReview(t *testing.T, s *store.Store) {
	if err := s.Create(t.Context(), message("m", t0, grounding.StatusNeedsReview, "a.example"), nil); err != nil {
		t.Fatal(err)
	}
	rev := grounding.Review{
		ReviewerID: "alice", Notes: "checked", ReviewTime: t0.Add(time.Hour), PreviousStatus: grounding.StatusNeedsReview,
		NewStatus: grounding.StatusApproved, Actor: "console",
	}
	if err := s.SetReview(t.Context(), "m", grounding.StatusApproved, rev); err != nil {
		t.Fatalf("SetReview: %v", err)
	}
	got, err := s.Get(t.Context(), "m")
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != grounding.StatusApproved || got.Review == nil || *got.Review != rev {
		t.Errorf("after review: status %v review %+v; want approved, %+v", got.Status, got.Review, rev)
	}
	// A second reviewer working from the old status loses.
	if err := s.SetReview(t.Context(), "m", grounding.StatusRejected, rev); !errors.Is(err, grounding.ErrConflict) {
		t.Errorf("stale SetReview error = %v, want ErrConflict", err)
	}
	if err := s.SetReview(t.Context(), "nope", grounding.StatusRejected, rev); !errors.Is(err, grounding.ErrNotFound) {
		t.Errorf("SetReview(nope) error = %v, want ErrNotFound", err)
	}
}

func testRetention(t *testing.T, s *store.Store) {
	now := t0.Add(400 * 24 * time.Hour)
	old := message("old", now.Add(-181*24*time.Hour), grounding.StatusProcessed, "a.example")
	fresh := message("fresh", now.Add(-179*24*time.Hour), grounding.StatusProcessed, "a.example")
	for _, m := range []*grounding.Message{old, fresh} {
		if err := s.Create(t.Context(), m, []byte(`{"answer":"kept"}`)); err != nil {
			t.Fatal(err)
		}
	}
	r := &store.Retention{Store: s, Now: func() time.Time { return now }, Logger: discard}
	n, err := r.RunOnce(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("RunOnce = %d, %v; want 1, nil", n, err)
	}
	root := filepath.Dir(s.Artifacts().Dir())
	if _, err := os.Stat(filepath.Join(root, old.ArtifactPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old artifact still in place: %v", err)
	}
	if _, err := os.Stat(filepath.Join(root, fresh.ArtifactPath)); err != nil {
		t.Errorf("fresh artifact: %v", err)
	}
	got, err := s.Get(t.Context(), "old")
	if err != nil || !got.ArtifactArchived || !strings.HasPrefix(got.ArtifactPath, "archive/") || len(got.Citations) != 1 || got.Text != old.Text {
		t.Errorf("old message after retention: %+v, %v; want metadata kept and the artifact archived", got, err)
	}
	if n, err := r.RunOnce(t.Context()); err != nil || n != 0 {
		t.Errorf("second RunOnce = %d, %v; want 0, nil", n, err)
	}
}

// testArchive ages a message with a raw artifact and a page's HTML past
// the raw-data period and reads their archived forms.
func testArchive(t *testing.T, s *store.Store, mode store.ArchiveMode) {
	now := t0.Add(400 * 24 * time.Hour)
	m := message("aged", now.Add(-200*24*time.Hour), grounding.StatusProcessed, "a.example")
	m.Citations[0].RawHTML = `<html><head><title>Runbook</title></head><body><p class="x">Restart the pool.</p></body></html>`
	if err := s.Create(t.Context(), m, []byte(`{"candidates":[{"text":"Restart the pool."}],"usage":{"tokens":12}}`)); err != nil {
		t.Fatal(err)
	}
	r := &store.Retention{Store: s, Mode: mode, Now: func() time.Time { return now }, Logger: discard}
	if n, err := r.RunOnce(t.Context()); err != nil || n != 2 {
		t.Fatalf("RunOnce = %d, %v; want 2 (artifact and page), nil", n, err)
	}
	got, err := s.Get(t.Context(), "aged")
	if err != nil {
		t.Fatal(err)
	}
	if !got.ArtifactArchived || got.Text != m.Text || len(got.Citations) != 1 || !got.Citations[0].HasRawHTML {
		t.Fatalf("after archiving: %+v; want the metadata kept and the artifact archived", got)
	}
	raw, err := s.Artifacts().Read(got.ArtifactPath)
	if err != nil {
		t.Fatalf("reading the archived artifact %q: %v", got.ArtifactPath, err)
	}
	page, err := s.RawHTML(t.Context(), "aged", got.Citations[0].ID)
	if err != nil {
		t.Fatalf("RawHTML: %v", err)
	}
	if !page.Archived {
		t.Errorf("RawHTML archived = false, want true")
	}
	switch mode {
	case store.ArchiveCompress:
		if !strings.HasPrefix(got.ArtifactPath, "archive/") || !strings.HasSuffix(got.ArtifactPath, ".json.gz") {
			t.Errorf("ArtifactPath = %q, want archive/….json.gz", got.ArtifactPath)
		}
		if string(raw) != `{"candidates":[{"text":"Restart the pool."}],"usage":{"tokens":12}}` {
			t.Errorf("archived artifact = %s, want the original", raw)
		}
		if !strings.Contains(page.HTML, "Restart the pool.") {
			t.Errorf("archived page = %s, want the original", page.HTML)
		}
	case store.ArchiveDesensitize:
		if !strings.HasPrefix(got.ArtifactPath, "artifacts/") {
			t.Errorf("ArtifactPath = %q, want it in place", got.ArtifactPath)
		}
		want := "{\n  \"candidates\": [\n    {\n      \"text\": \"[REMOVED]\"\n    }\n  ],\n  \"usage\": {\n    \"tokens\": 12\n  }\n}"
		if string(raw) != want {
			t.Errorf("desensitised artifact = %s, want %s", raw, want)
		}
		if want := `<html><head><title>[REMOVED]</title></head><body><p class="">[REMOVED]</p></body></html>`; page.HTML != want {
			t.Errorf("desensitised page = %s, want %s", page.HTML, want)
		}
	}
	if n, err := r.RunOnce(t.Context()); err != nil || n != 0 {
		t.Errorf("second RunOnce = %d, %v; want 0, nil", n, err)
	}
}

// testMessageRetention: past GROUNDING_MESSAGE_RETENTION the bodies and
// evidence go, with every artifact; the metadata stays.
func testMessageRetention(t *testing.T, s *store.Store) {
	now := t0.Add(100 * 24 * time.Hour)
	old := message("old", now.Add(-31*24*time.Hour), grounding.StatusProcessed, "a.example")
	old.Citations[0].RawHTML = "<p>page</p>"
	fresh := message("fresh", now.Add(-29*24*time.Hour), grounding.StatusProcessed, "a.example")
	for _, m := range []*grounding.Message{old, fresh} {
		if err := s.Create(t.Context(), m, []byte(`{"answer":"x"}`)); err != nil {
			t.Fatal(err)
		}
	}
	r := &store.Retention{Store: s, MessageMaxAge: 30 * 24 * time.Hour, Now: func() time.Time { return now }, Logger: discard}
	if n, err := r.RunOnce(t.Context()); err != nil || n != 1 {
		t.Fatalf("RunOnce = %d, %v; want 1 purged, nil", n, err)
	}
	got, err := s.Get(t.Context(), "old")
	if err != nil {
		t.Fatal(err)
	}
	if !got.Purged || got.Text != "" || got.Summary != "" || got.InputText != "" || len(got.Context.Results) != 0 ||
		got.ArtifactPath != "" || got.Citations[0].Snippet != "" || got.Citations[0].HasRawHTML {
		t.Errorf("purged message = %+v; want every body empty", got)
	}
	if got.Citations[0].URL != old.Citations[0].URL || got.Status != old.Status || got.Round.ID != old.Round.ID {
		t.Errorf("purged message = %+v; want its metadata kept", got)
	}
	root := filepath.Dir(s.Artifacts().Dir())
	if _, err := os.Stat(filepath.Join(root, old.ArtifactPath)); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("purged artifact still there: %v", err)
	}
	if f, err := s.Get(t.Context(), "fresh"); err != nil || f.Purged || f.Text == "" {
		t.Errorf("fresh message = %+v, %v; want it kept", f, err)
	}
}

// testRedactionAtRest: input text, evidence and snippets are stored
// redacted, like raw responses; files are private to the service's user.
func testRedactionAtRest(t *testing.T, s *store.Store) {
	m := message("r", t0, grounding.StatusProcessed, "a.example")
	m.InputText = "db down; password=hunter2hunter2 contact ops@example.com"
	m.Context.Query = "db down password=hunter2hunter2"
	m.Context.Results[0].Snippet = "set api_key=abcdef123456 and mail root@example.org"
	m.Citations[0].Snippet = "Authorization: Bearer abcdefghijkl"
	if err := s.Create(t.Context(), m, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(t.Context(), "r")
	if err != nil {
		t.Fatal(err)
	}
	stored := got.InputText + got.Context.Query + got.Context.Results[0].Snippet + got.Citations[0].Snippet
	for _, leak := range []string{"hunter2hunter2", "ops@example.com", "abcdef123456", "root@example.org", "abcdefghijkl"} {
		if strings.Contains(stored, leak) {
			t.Errorf("stored message holds %q: %q", leak, stored)
		}
	}
	if !strings.Contains(got.InputText, "db down") {
		t.Errorf("InputText = %q, want the rest kept", got.InputText)
	}
	root := filepath.Dir(s.Artifacts().Dir())
	path := filepath.Join(root, got.ArtifactPath)
	for p := path; p != root; p = filepath.Dir(p) {
		fi, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want := os.FileMode(0o700)
		if p == path {
			want = 0o600
		}
		if fi.Mode().Perm() != want {
			t.Errorf("%s: mode %v, want %v", p, fi.Mode().Perm(), want)
		}
	}
}

func testRawHTML(t *testing.T, s *store.Store) {
	m := message("h", t0, grounding.StatusProcessed, "a.example", "b.example")
	m.Citations[0].RawHTML = `<p>write to ops@example.com, token=abcdefghijkl</p>`
	if err := s.Create(t.Context(), m, nil); err != nil {
		t.Fatal(err)
	}
	if m.Citations[0].RawHTML != "" || !m.Citations[0].HasRawHTML || m.Citations[1].HasRawHTML {
		t.Errorf("after Create: %+v; want the HTML kept only as an artifact", m.Citations)
	}
	got, err := s.Get(t.Context(), "h")
	if err != nil {
		t.Fatal(err)
	}
	if got.Citations[0].RawHTML != "" || !got.Citations[0].HasRawHTML {
		t.Errorf("Get citation = %+v; want HasRawHTML and no HTML", got.Citations[0])
	}
	page, err := s.RawHTML(t.Context(), "h", got.Citations[0].ID)
	if err != nil {
		t.Fatalf("RawHTML: %v", err)
	}
	if want := `<p>write to [REDACTED], token=[REDACTED]</p>`; page.HTML != want || page.URL != m.Citations[0].URL || page.Archived {
		t.Errorf("RawHTML = %+v, want %q from %s", page, want, m.Citations[0].URL)
	}
	for _, tt := range []struct {
		msg, cit string
		want     error
	}{
		{"h", got.Citations[1].ID, grounding.ErrNoRawHTML},
		{"h", "nope", grounding.ErrNotFound},
		{"nope", got.Citations[0].ID, grounding.ErrNotFound},
	} {
		if _, err := s.RawHTML(t.Context(), tt.msg, tt.cit); !errors.Is(err, tt.want) {
			t.Errorf("RawHTML(%s, %s) error = %v, want %v", tt.msg, tt.cit, err, tt.want)
		}
	}
}

func testReviewHistory(t *testing.T, s *store.Store) {
	if err := s.Create(t.Context(), message("m", t0, grounding.StatusNeedsReview, "a.example"), nil); err != nil {
		t.Fatal(err)
	}
	steps := []grounding.Review{
		{ReviewerID: "alice", ReviewTime: t0.Add(time.Hour), PreviousStatus: grounding.StatusNeedsReview, NewStatus: grounding.StatusApproved, Actor: "console"},
		{ReviewerID: "bob", Notes: "source is stale", ReviewTime: t0.Add(2 * time.Hour), PreviousStatus: grounding.StatusApproved, NewStatus: grounding.StatusRejected, Actor: "ops"},
	}
	for _, r := range steps {
		if err := s.SetReview(t.Context(), "m", r.NewStatus, r); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Get(t.Context(), "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []grounding.Review{steps[1], steps[0]}
	if diff := cmp.Diff(want, got.Reviews); diff != "" {
		t.Errorf("reviews, newest first (-want +got):\n%s", diff)
	}
	if got.Review == nil || *got.Review != steps[1] {
		t.Errorf("latest review = %+v, want %+v", got.Review, steps[1])
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"mail ops.team+x@mail.example.com now", "mail [REDACTED] now"},
		{"Authorization: Bearer eyJhbGciOi.abc", "Authorization: Bearer [REDACTED]"},
		{`{"api_key": "abcdef123456"}`, `{"api_key": "[REDACTED]"}`},
		{"https://x.example/?key=AIzaSyA1234567890123456789012345678901&q=1", "https://x.example/?key=[REDACTED]&q=1"},
		{"token=ghp_abcdefghijklmnopqrstuvwxyz", "token=[REDACTED]"},
		{`"promptTokenCount": 12`, `"promptTokenCount": 12`},
		{"nothing secret here", "nothing secret here"},
		{"DATABASE_PASSWORD=hunter2hunter2 x-api-key: abcdef123456", "DATABASE_PASSWORD=[REDACTED] x-api-key: [REDACTED]"},
		{"the monkey = banana", "the monkey = banana"},
	}
	for _, tt := range tests {
		if got := store.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
