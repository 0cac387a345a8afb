package store_test

import (
	"errors"
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

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func message(id string, at time.Time, st grounding.Status, domains ...string) *grounding.Message {
	conf := 0.75
	m := &grounding.Message{
		ID: id, Text: "Postgres refuses connections [1].", Summary: "Postgres refuses connections.",
		Confidence: &conf, Status: st, InputText: "alert", Model: "extractive", Engine: grounding.EngineLocal,
		CreatedBy: "notifier", CreateTime: at,
		Context: grounding.GroundedContext{Query: "postgres connections", Timestamp: at, Results: []grounding.SearchResult{
			{Title: "Docs", Snippet: "too many", URL: "https://a.example/x", SourceDomain: "a.example", Score: 1.5},
		}},
	}
	for i, d := range domains {
		m.Citations = append(m.Citations, grounding.Citation{
			URL: "https://" + d + "/p", Domain: d, Title: "T", Snippet: "s", StartIndex: 0, EndIndex: 5,
			ConfidenceScore: 0.5, FetchTime: at, SourceIndex: i + 1,
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
	raw, err := os.ReadFile(m.ArtifactPath)
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
	rev := grounding.Review{ReviewerID: "alice", Notes: "checked", ReviewTime: t0.Add(time.Hour), PreviousStatus: grounding.StatusNeedsReview}
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
		if err := s.Create(t.Context(), m, []byte(`{}`)); err != nil {
			t.Fatal(err)
		}
	}
	r := &store.Retention{Store: s, Now: func() time.Time { return now }, Logger: discard}
	n, err := r.RunOnce(t.Context())
	if err != nil || n != 1 {
		t.Fatalf("RunOnce = %d, %v; want 1, nil", n, err)
	}
	if _, err := os.Stat(old.ArtifactPath); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("old artifact still there: %v", err)
	}
	if _, err := os.Stat(fresh.ArtifactPath); err != nil {
		t.Errorf("fresh artifact: %v", err)
	}
	got, err := s.Get(t.Context(), "old")
	if err != nil || got.ArtifactPath != "" || len(got.Citations) != 1 || got.Text != old.Text {
		t.Errorf("old message after retention: %+v, %v; want metadata kept and no artifact path", got, err)
	}
	if n, err := r.RunOnce(t.Context()); err != nil || n != 0 {
		t.Errorf("second RunOnce = %d, %v; want 0, nil", n, err)
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
	}
	for _, tt := range tests {
		if got := store.Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
