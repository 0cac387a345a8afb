package config_test

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/groundcrew/groundcrew/platform/config"
)

type groundingConfig struct {
	config.Common
	Addr          string        `env:"GROUNDING_ADDR" envDefault:"127.0.0.1:50052"`
	AdminAddr     string        `env:"GROUNDING_ADMIN_ADDR" envDefault:"127.0.0.1:9092"`
	MaxSources    int           `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`
	GeminiAPIKey  string        `env:"GEMINI_API_KEY" secret:"true"`
	GroqAPIKey    string        `env:"GROQ_API_KEY" secret:"true"`
	DatabaseURL   string        `env:"DATABASE_URL"`
	Timeout       time.Duration `env:"GROUNDING_TIMEOUT" envDefault:"30s"`
	Origins       []string      `env:"GATEWAY_CORS_ORIGINS"`
	Search        searchDial    `envPrefix:"SEARCH_"`
	unexportedVar string
}

type searchDial struct {
	Addr string `env:"ADDR" envDefault:"127.0.0.1:50051"`
}

func TestLoadDefaults(t *testing.T) {
	got, err := config.Load[groundingConfig](config.MapLookup(nil))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	want := groundingConfig{
		Common: config.Common{
			DataDir: "./.groundcrew", LogLevel: "info", LogFormat: "json", GracePeriod: 10 * time.Second,
			Transport: config.Transport{Reflection: true},
		},
		Addr: "127.0.0.1:50052", AdminAddr: "127.0.0.1:9092", MaxSources: 3, Timeout: 30 * time.Second,
		Search: searchDial{Addr: "127.0.0.1:50051"},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(groundingConfig{})); diff != "" {
		t.Errorf("Load() mismatch (-want +got):\n%s", diff)
	}
}

func TestLoadValues(t *testing.T) {
	got, err := config.Load[groundingConfig](config.MapLookup(map[string]string{
		"GROUNDING_MAX_SOURCES": "5",
		"GRACE_PERIOD":          "2s",
		"SEARCH_ADDR":           "search:50051",
		"GATEWAY_CORS_ORIGINS":  "https://a.example,https://b.example",
		"LOG_FORMAT":            "text",
	}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got.MaxSources != 5 || got.GracePeriod != 2*time.Second || got.Search.Addr != "search:50051" ||
		len(got.Origins) != 2 || got.LogFormat != "text" {
		t.Errorf("Load() = %+v, want the values from the environment", got)
	}
}

func TestLoadEmptyValueTakesDefault(t *testing.T) {
	// docker-compose and Kubernetes often pass "VAR=" for unset values.
	got, err := config.Load[groundingConfig](config.MapLookup(map[string]string{"LOG_FORMAT": "", "GRACE_PERIOD": ""}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	if got.LogFormat != "json" || got.GracePeriod != 10*time.Second {
		t.Errorf("Load() = %+v, want defaults for empty values", got.Common)
	}
}

func TestLoadErrorsAreActionable(t *testing.T) {
	tests := []struct {
		name string
		env  map[string]string
		want []string
	}{
		{
			name: "integer",
			env:  map[string]string{"GROUNDING_MAX_SOURCES": "x"},
			want: []string{`GROUNDING_MAX_SOURCES: must be an integer, got "x"`},
		},
		{
			name: "duration and integer together",
			env:  map[string]string{"GRACE_PERIOD": "10", "GROUNDING_MAX_SOURCES": "three"},
			want: []string{
				`GRACE_PERIOD: must be a duration such as "10s" or "1m30s", got "10"`,
				`GROUNDING_MAX_SOURCES: must be an integer, got "three"`,
			},
		},
		{
			name: "out of range",
			env:  map[string]string{"GROUNDING_MAX_SOURCES": "99999999999999999999"},
			want: []string{`GROUNDING_MAX_SOURCES: "99999999999999999999" is out of range for an integer`},
		},
		{
			name: "validated enums",
			env:  map[string]string{"LOG_FORMAT": "xml", "LOG_LEVEL": "loud"},
			want: []string{
				`LOG_LEVEL: must be debug, info, warn or error, got "loud"`,
				`LOG_FORMAT: must be json or text, got "xml"`,
			},
		},
		{
			name: "otlp endpoint without scheme",
			env:  map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "localhost:4317"},
			want: []string{`OTEL_EXPORTER_OTLP_ENDPOINT: must be a URL such as http://localhost:4317, got "localhost:4317"`},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := config.Load[groundingConfig](config.MapLookup(tt.env))
			if err == nil {
				t.Fatal("Load() error = nil, want an error")
			}
			got := strings.Split(err.Error(), "\n")
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("Load() error lines mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

type secretInt struct {
	Token int `env:"TOKEN" secret:"true"`
}

func TestLoadErrorDoesNotEchoSecret(t *testing.T) {
	_, err := config.Load[secretInt](config.MapLookup(map[string]string{"TOKEN": "hunter2"}))
	if err == nil {
		t.Fatal("Load() error = nil, want an error")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Errorf("Load() error %q echoes the secret value", err)
	}
	if !strings.Contains(err.Error(), "TOKEN: must be an integer") {
		t.Errorf("Load() error %q does not name the variable", err)
	}
}

type required struct {
	Token string `env:"TOKEN,required"`
	Name  string `env:"NAME,notEmpty"`
}

func TestLoadRequired(t *testing.T) {
	_, err := config.Load[required](config.MapLookup(map[string]string{"NAME": ""}))
	want := "TOKEN: required but not set\nNAME: must not be empty"
	if err == nil || err.Error() != want {
		t.Errorf("Load() error = %v, want %q", err, want)
	}
}

func TestLoadNotAStruct(t *testing.T) {
	if _, err := config.Load[int](config.MapLookup(nil)); err == nil {
		t.Error("Load[int]() error = nil, want an error")
	}
}

func TestAttrsMasksSecrets(t *testing.T) {
	cfg, err := config.Load[groundingConfig](config.MapLookup(map[string]string{
		"GEMINI_API_KEY": "AIza-very-secret",
		"DATABASE_URL":   "postgres://app:pa55word@db:5432/groundcrew",
	}))
	if err != nil {
		t.Fatalf("Load: %v", err)
	}
	got := map[string]string{}
	for _, a := range config.Attrs(&cfg) {
		got[a.Key] = a.Value.String()
	}
	want := map[string]string{
		"DATA_DIR":                    "./.groundcrew",
		"LOG_LEVEL":                   "info",
		"LOG_FORMAT":                  "json",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "",
		"OTEL_SERVICE_NAME":           "",
		"GRACE_PERIOD":                "10s",
		"GROUNDING_ADDR":              "127.0.0.1:50052",
		"GROUNDING_ADMIN_ADDR":        "127.0.0.1:9092",
		"GROUNDING_MAX_SOURCES":       "3",
		"GEMINI_API_KEY":              config.Masked,
		"GROQ_API_KEY":                config.Unset,
		"DATABASE_URL":                "postgres://app:xxxxx@db:5432/groundcrew",
		"GROUNDING_TIMEOUT":           "30s",
		"GATEWAY_CORS_ORIGINS":        "[]",
		"SEARCH_ADDR":                 "127.0.0.1:50051",
		"GRPC_SHARED_TOKEN":           config.Unset,
		"GRPC_TLS_CERT":               "",
		"GRPC_TLS_KEY":                "",
		"GRPC_TLS_CA":                 "",
		"GRPC_REFLECTION":             "true",
		"ADMIN_PPROF":                 "false",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Attrs() mismatch (-want +got):\n%s", diff)
	}

	var buf bytes.Buffer
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("starting", "config", config.LogValue(cfg))
	for _, secret := range []string{"AIza-very-secret", "pa55word"} {
		if strings.Contains(buf.String(), secret) {
			t.Errorf("log line %s contains secret %q", buf.String(), secret)
		}
	}
	// The start-up line names what differs from the defaults, nothing else.
	for _, want := range []string{`"GEMINI_API_KEY":"set (masked)"`, `"DATABASE_URL":"postgres://app:xxxxx@db:5432/groundcrew"`} {
		if !strings.Contains(buf.String(), want) {
			t.Errorf("log line %s lacks %s", buf.String(), want)
		}
	}
	if strings.Contains(buf.String(), "GRACE_PERIOD") {
		t.Errorf("log line %s names GRACE_PERIOD, which has its default", buf.String())
	}
	buf.Reset()
	slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug})).Debug("configuration", "config", config.FullLogValue(cfg))
	if !strings.Contains(buf.String(), `"GRACE_PERIOD":"10s"`) || strings.Contains(buf.String(), "pa55word") {
		t.Errorf("full configuration %s lacks GRACE_PERIOD or shows a secret", buf.String())
	}
}

func TestCommonServiceName(t *testing.T) {
	if got := (config.Common{}).ServiceName("search"); got != "search" {
		t.Errorf("ServiceName = %q, want %q", got, "search")
	}
	if got := (config.Common{OTelServiceName: "s2"}).ServiceName("search"); got != "s2" {
		t.Errorf("ServiceName = %q, want %q", got, "s2")
	}
}
