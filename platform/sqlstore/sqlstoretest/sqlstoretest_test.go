package sqlstoretest_test

import (
	"database/sql"
	"net/url"
	"os"
	"testing"

	"github.com/groundcrew/groundcrew/platform/sqlstore/sqlstoretest"
)

func TestPostgresURLIsolatesAndCleansUp(t *testing.T) {
	if os.Getenv(sqlstoretest.EnvVar) == "" {
		t.Skip(sqlstoretest.EnvVar + " is not set")
	}
	var schema string
	t.Run("use", func(t *testing.T) {
		u := sqlstoretest.PostgresURL(t, "sqlstoretest")
		parsed, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		schema = parsed.Query().Get("search_path")
		db, err := sql.Open("pgx", u)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		if _, err := db.ExecContext(t.Context(), "CREATE TABLE widgets (id int)"); err != nil {
			t.Fatal(err)
		}
		var got string
		if err := db.QueryRowContext(t.Context(), "SELECT table_schema FROM information_schema.tables WHERE table_name = 'widgets' AND table_schema = $1", schema).Scan(&got); err != nil {
			t.Fatalf("the table is not in schema %s: %v", schema, err)
		}
	})
	admin, err := sql.Open("pgx", os.Getenv(sqlstoretest.EnvVar))
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	var n int
	if err := admin.QueryRowContext(t.Context(), "SELECT count(*) FROM information_schema.schemata WHERE schema_name = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if schema == "" || n != 0 {
		t.Errorf("schema %q still exists after the test (%d)", schema, n)
	}
}

func TestURLFollowsDATABASE_URL(t *testing.T) {
	t.Run("unset means SQLite", func(t *testing.T) {
		t.Setenv(sqlstoretest.ServiceEnvVar, "")
		if got := sqlstoretest.URL(t, "sqlstoretest"); got != "" {
			t.Errorf("URL = %q with DATABASE_URL unset, want empty (SQLite)", got)
		}
		if sqlstoretest.OnPostgres() {
			t.Error("OnPostgres with DATABASE_URL unset")
		}
	})
	t.Run("set means a schema of its own", func(t *testing.T) {
		base := os.Getenv(sqlstoretest.EnvVar)
		if base == "" {
			t.Skip(sqlstoretest.EnvVar + " is not set")
		}
		t.Setenv(sqlstoretest.ServiceEnvVar, base)
		a, b := sqlstoretest.URL(t, "sqlstoretest"), sqlstoretest.URL(t, "sqlstoretest")
		pa, err := url.Parse(a)
		if err != nil {
			t.Fatal(err)
		}
		pb, err := url.Parse(b)
		if err != nil {
			t.Fatal(err)
		}
		sa, sb := pa.Query().Get("search_path"), pb.Query().Get("search_path")
		if sa == "" || sa == sb {
			t.Errorf("two calls gave search_path %q and %q, want two distinct schemas", sa, sb)
		}
		if !sqlstoretest.OnPostgres() {
			t.Error("OnPostgres is false with DATABASE_URL set")
		}
	})
}
