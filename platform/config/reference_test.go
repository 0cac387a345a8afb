package config_test

import (
	"bytes"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/config"
)

// TestReferenceMatchesDocs holds the embedded table and
// docs/configuration.md to one text, so --help and the documentation say
// the same.
func TestReferenceMatchesDocs(t *testing.T) {
	docs, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	var table []string
	for _, line := range strings.Split(string(docs), "\n") {
		if strings.HasPrefix(line, "|") {
			table = append(table, line)
		}
	}
	got := strings.Join(table, "\n") + "\n"
	if diff := cmp.Diff(got, config.VariablesTable()); diff != "" {
		t.Errorf("docs/configuration.md's table differs from platform/config/variables.md, which --help prints; copy the table over (-docs +embedded):\n%s", diff)
	}
}

type helpConfig struct {
	config.Common
	Sources  int           `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`
	Database string        `env:"DATABASE_URL"`
	Delay    time.Duration `env:"NOTIFIER_RETRY_BASE_DELAY" envDefault:"1s"`
	MaxDelay time.Duration `env:"NOTIFIER_RETRY_MAX_DELAY" envDefault:"10m"`
	Stickers string        `env:"TELEGRAM_STICKERS"`
	Listen   string        `env:"SEARCH_LISTEN_ADDR"`
	Admin    string        `env:"GATEWAY_ADMIN_ADDR"`
	Unknown  string        `env:"NOT_DOCUMENTED_ANYWHERE"`
	Key      string        `env:"GEMINI_API_KEY" secret:"true"`
}

func TestVariables(t *testing.T) {
	byName := map[string]config.Variable{}
	var names []string
	for _, v := range config.Variables(helpConfig{}) {
		byName[v.Name] = v
		names = append(names, v.Name)
	}
	if names[0] != "DATA_DIR" || names[len(names)-1] != "GEMINI_API_KEY" {
		t.Errorf("variables in order %v, want declaration order from DATA_DIR to GEMINI_API_KEY", names)
	}
	tests := []struct {
		name, def, meaningHas string
	}{
		{"DATA_DIR", "./.groundcrew", "embedded stores"},
		{"LOG_FORMAT", "json", "json or text"},
		{"GROUNDING_MAX_SOURCES", "3", "sources kept per answer"},
		// No envDefault: the reference says what unset means.
		{"DATABASE_URL", "– (SQLite under DATA_DIR)", "postgres://"},
		{"NOTIFIER_RETRY_MAX_DELAY", "10m", "base·2^(n-1)"},
		// A meaning with an escaped pipe keeps it.
		{"TELEGRAM_STICKERS", "– (none)", "file_id|emoji|set|description"},
		// <SVC>_LISTEN_ADDR covers each service's variable.
		{"SEARCH_LISTEN_ADDR", "= <SVC>_ADDR", "listen elsewhere"},
		// Its own row wins over <SVC>_ADMIN_ADDR.
		{"GATEWAY_ADMIN_ADDR", "127.0.0.1:9090", "/debug/pprof/"},
		{"NOT_DOCUMENTED_ANYWHERE", "–", ""},
		{"GRPC_REFLECTION", "true", "reflection"},
	}
	for _, tt := range tests {
		v, ok := byName[tt.name]
		if !ok {
			t.Errorf("%s not listed", tt.name)
			continue
		}
		if v.Default != tt.def {
			t.Errorf("%s default = %q, want %q", tt.name, v.Default, tt.def)
		}
		if !strings.Contains(v.Meaning, tt.meaningHas) || (tt.meaningHas == "" && v.Meaning != "") {
			t.Errorf("%s meaning = %q, want it to hold %q", tt.name, v.Meaning, tt.meaningHas)
		}
		if strings.ContainsAny(v.Meaning, "`*") {
			t.Errorf("%s meaning %q keeps Markdown", tt.name, v.Meaning)
		}
	}
	if !byName["GEMINI_API_KEY"].Secret {
		t.Error("GEMINI_API_KEY is not marked secret")
	}

	var out bytes.Buffer
	config.WriteVariables(&out, helpConfig{})
	for _, want := range []string{
		"  GROUNDING_MAX_SOURCES (default: 3)\n      sources kept per answer",
		"  NOT_DOCUMENTED_ANYWHERE (default: –)\n      (not in the configuration reference)\n",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("help text lacks %q:\n%s", want, out.String())
		}
	}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		if len([]rune(line)) > 80 && strings.Contains(strings.TrimSpace(line), " ") {
			t.Errorf("help line longer than 80 characters: %q", line)
		}
	}
}

// TestReferenceRowsParse checks every row of the table names at least one
// variable and explains it.
func TestReferenceRowsParse(t *testing.T) {
	rows := 0
	for _, line := range strings.Split(config.VariablesTable(), "\n")[2:] {
		if line == "" {
			continue
		}
		rows++
		if !strings.HasPrefix(line, "| `") || strings.Count(line, "|")-strings.Count(line, `\|`) != 5 {
			t.Errorf("row %q: want | `VARIABLE` | default | read by | meaning |", line)
		}
	}
	if rows < 50 {
		t.Errorf("the table has %d rows, want the whole reference", rows)
	}
}

func TestChanged(t *testing.T) {
	cfg, err := config.Load[helpConfig](config.MapLookup(map[string]string{
		"GROUNDING_MAX_SOURCES": "5",
		"GEMINI_API_KEY":        "AIza-secret",
		"LOG_LEVEL":             "info", // set, but to its default
	}))
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, a := range config.Changed(cfg) {
		got[a.Key] = a.Value.String()
	}
	want := map[string]string{"GROUNDING_MAX_SOURCES": "5", "GEMINI_API_KEY": config.Masked}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Changed() (-want +got):\n%s", diff)
	}

	defaults, err := config.Load[helpConfig](config.MapLookup(nil))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	slog.New(slog.NewTextHandler(&buf, nil)).Info("starting", "config", config.LogValue(defaults))
	if !strings.Contains(buf.String(), "config=defaults") {
		t.Errorf("start-up line with every default = %q, want config=defaults", buf.String())
	}
}
