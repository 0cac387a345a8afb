package pgindex

import (
	"fmt"
	"io"
	"log/slog"
	"testing"
	"testing/fstest"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

// TestOpenFillsCompoundWordsOfEarlierRows upgrades an index written before
// compound words existed (migration 00001 only): Open computes the rows'
// words, so "resource quota" finds the runbook that writes ResourceQuota.
func TestOpenFillsCompoundWordsOfEarlierRows(t *testing.T) {
	ctx := t.Context()
	db, err := sqlstore.Open(ctx, sqlstoretest.PostgresURL(t, "search_upgrade"), "", "search", slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	first, err := migrations.ReadFile("migrations/00001_documents.sql")
	if err != nil {
		t.Fatal(err)
	}
	if err := sqlstore.Migrate(ctx, db, fstest.MapFS{"m/00001_documents.sql": {Data: first}}, "m"); err != nil {
		t.Fatal(err)
	}
	// fillBatch+1 rows, so that the fill takes two batches.
	for i := range fillBatch + 1 {
		text := "Capacity notes, page filler."
		if i == 0 {
			text = "Pods fail to start when the ResourceQuota of the namespace is used up."
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO search_documents (id, url, title, body, lang, domains, date_at, indexed_at)
VALUES ($1, $1, $2, $3, 'english', '{example.com}', now(), now())`,
			fmt.Sprintf("https://example.com/doc/%d", i), "Namespace limits", text); err != nil {
			t.Fatal(err)
		}
	}
	ix, err := Open(ctx, db, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var pending int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM search_documents WHERE parts IS NULL").Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d rows without compound words after Open, want 0", pending)
	}
	got, err := ix.Search(ctx, search.Query{Text: "resource quota", MaxResults: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].URL != "https://example.com/doc/0" {
		t.Errorf("Search(resource quota) = %+v, want the row that writes ResourceQuota", got)
	}
}
