package store_test

import (
	"database/sql"
	"slices"
	"testing"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
	"github.com/groundcrew/groundcrew/services/grounding/internal/store"
)

// schema is what the migrated database must hold: every specified column,
// the indexes on message id, url, domain and fetch time, and the foreign
// keys from citations and reviews to their message.
var (
	wantColumns = map[string][]string{
		"annotated_messages": {
			"id", "text", "summary", "confidence", "status", "query", "evidence", "evidence_time", "input_text",
			"artifact_path", "model", "engine", "error", "created_by", "created_at", "updated_at", "round_id",
			"round_config", "request_id", "parsed_metadata", "artifact_archived", "purged",
		},
		"citations": {
			"message_id", "position", "url", "domain", "title", "snippet", "snippet_truncated", "start_index",
			"end_index", "confidence_score", "fetch_time", "mime_type", "favicon_url", "source_index", "id",
			"create_time", "created_by", "raw_html_path", "raw_html_archived",
		},
		"message_reviews": {
			"id", "message_id", "reviewer_id", "notes", "previous_status", "new_status", "review_time", "actor",
		},
	}
	// wantIndexes maps a table to the leading column of each index it
	// needs.
	wantIndexes = map[string][]string{
		"annotated_messages": {"created_at", "status", "round_id", "request_id"},
		"citations":          {"message_id", "url", "domain", "fetch_time", "id"},
		"message_reviews":    {"message_id"},
	}
	wantForeignKeys = map[string]string{"citations": "message_id", "message_reviews": "message_id"}
)

func TestSchemaSQLite(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), "", t.TempDir(), "grounding", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	checkSchema(t, db)
}

func TestSchemaPostgres(t *testing.T) {
	db, err := sqlstore.Open(t.Context(), sqlstoretest.PostgresURL(t, "grounding_schema"), "", "grounding", discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	checkSchema(t, db)
}

func checkSchema(t *testing.T, db *sqlstore.DB) {
	t.Helper()
	if err := store.Migrate(t.Context(), db); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	for table, cols := range wantColumns {
		got := queryStrings(t, db, columnsQuery(db, table), table)
		for _, c := range cols {
			if !slices.Contains(got, c) {
				t.Errorf("%s has no column %s (has %v)", table, c, got)
			}
		}
	}
	for table, leads := range wantIndexes {
		got := indexLeads(t, db, table)
		for _, c := range leads {
			if !slices.Contains(got, c) {
				t.Errorf("%s has no index on %s (indexes lead with %v)", table, c, got)
			}
		}
	}
	for table, col := range wantForeignKeys {
		if got := foreignKey(t, db, table); got != col+"->annotated_messages.id" {
			t.Errorf("%s foreign key = %q, want %s->annotated_messages.id", table, got, col)
		}
	}
}

func columnsQuery(db *sqlstore.DB, table string) string {
	if db.Dialect == sqlstore.Postgres {
		return `SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1`
	}
	return `SELECT name FROM pragma_table_info($1)`
}

func queryStrings(t *testing.T, db *sqlstore.DB, q string, args ...any) []string {
	t.Helper()
	rows, err := db.QueryContext(t.Context(), q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		out = append(out, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// indexLeads lists the first column of each index of table (primary keys
// included).
func indexLeads(t *testing.T, db *sqlstore.DB, table string) []string {
	t.Helper()
	if db.Dialect == sqlstore.Postgres {
		return queryStrings(t, db, `SELECT a.attname FROM pg_index i
			JOIN pg_class c ON c.oid = i.indrelid
			JOIN pg_namespace n ON n.oid = c.relnamespace
			JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = i.indkey[0]
			WHERE n.nspname = current_schema() AND c.relname = $1`, table)
	}
	return queryStrings(t, db, `SELECT ii.name FROM pragma_index_list($1) il, pragma_index_info(il.name) ii WHERE ii.seqno = 0`, table)
}

// foreignKey is table's foreign key as "column->table.column".
func foreignKey(t *testing.T, db *sqlstore.DB, table string) string {
	t.Helper()
	var from, to, toCol string
	var row *sql.Row
	if db.Dialect == sqlstore.Postgres {
		row = db.QueryRowContext(t.Context(), `SELECT kcu.column_name, ccu.table_name, ccu.column_name
			FROM information_schema.table_constraints tc
			JOIN information_schema.key_column_usage kcu ON kcu.constraint_name = tc.constraint_name AND kcu.table_schema = tc.table_schema
			JOIN information_schema.constraint_column_usage ccu ON ccu.constraint_name = tc.constraint_name AND ccu.table_schema = tc.table_schema
			WHERE tc.constraint_type = 'FOREIGN KEY' AND tc.table_schema = current_schema() AND tc.table_name = $1`, table)
	} else {
		row = db.QueryRowContext(t.Context(), `SELECT "from", "table", "to" FROM pragma_foreign_key_list($1)`, table)
	}
	if err := row.Scan(&from, &to, &toCol); err != nil {
		t.Fatalf("foreign key of %s: %v", table, err)
	}
	return from + "->" + to + "." + toCol
}
