package entrypoint

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
)

type testConfig struct {
	config.Common
	Port int `env:"TEST_PORT" envDefault:"1"`
}

func common(c *testConfig) *config.Common { return &c.Common }

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		env      map[string]string
		runErr   error
		want     int
		wantText string
	}{
		{name: "clean stop", env: map[string]string{}, want: ExitOK, wantText: `"msg":"stopped"`},
		{name: "run fails", env: map[string]string{}, runErr: errors.New("listen tcp: address in use"), want: ExitFailed, wantText: "address in use"},
		{name: "bad variable", env: map[string]string{"TEST_PORT": "x"}, want: ExitConfig, wantText: "TEST_PORT"},
		{name: "bad log level", env: map[string]string{"LOG_LEVEL": "loud"}, want: ExitConfig, wantText: "LOG_LEVEL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			ran := false
			got := Run(context.Background(), "svc", config.MapLookup(tt.env), &stderr, common,
				func(_ context.Context, cfg testConfig, _ *slog.Logger) error {
					ran = true
					if cfg.Port != 1 {
						t.Errorf("Port = %d, want default 1", cfg.Port)
					}
					return tt.runErr
				})
			if got != tt.want {
				t.Errorf("Run() = %d, want %d; stderr:\n%s", got, tt.want, stderr.String())
			}
			if !strings.Contains(stderr.String(), tt.wantText) {
				t.Errorf("stderr = %q, want it to mention %q", stderr.String(), tt.wantText)
			}
			if tt.want == ExitConfig && ran {
				t.Error("service ran despite a configuration error")
			}
		})
	}
}

func TestHealthcheck(t *testing.T) {
	ok := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(200) }))
	defer ok.Close()
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(503) }))
	defer bad.Close()
	var stderr bytes.Buffer
	if got := Healthcheck(ok.URL, &stderr); got != ExitOK {
		t.Errorf("Healthcheck(200) = %d, want %d", got, ExitOK)
	}
	if got := Healthcheck(bad.URL, &stderr); got != ExitFailed || !strings.Contains(stderr.String(), "503") {
		t.Errorf("Healthcheck(503) = %d (stderr %q), want %d naming the status", got, stderr.String(), ExitFailed)
	}
}

// TestHealthcheckAgainstAdminPort probes a real server's admin /readyz: 0
// while it serves, non-zero within the timeout when a port accepts but
// never answers, and non-zero when nothing listens.
func TestHealthcheckAgainstAdminPort(t *testing.T) {
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0", AdminAddr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- srv.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	<-srv.Ready()

	// A listener that accepts connections and never writes a byte.
	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 16)
	go func() {
		defer close(accepted)
		for {
			c, err := silent.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		_ = silent.Close()
		for c := range accepted {
			_ = c.Close()
		}
	})
	closed, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closedAddr := closed.Addr().String()
	_ = closed.Close()

	const timeout = 300 * time.Millisecond
	tests := []struct {
		name string
		url  string
		want int
	}{
		{"ready admin port", "http://" + srv.AdminAddr().String() + "/readyz", ExitOK},
		{"port that never answers", "http://" + silent.Addr().String() + "/readyz", ExitFailed},
		{"nothing listening", "http://" + closedAddr + "/readyz", ExitFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stderr bytes.Buffer
			start := time.Now()
			got := healthcheck(tt.url, timeout, &stderr)
			if got != tt.want {
				t.Errorf("healthcheck(%s) = %d, want %d; stderr %q", tt.url, got, tt.want, stderr.String())
			}
			if took := time.Since(start); took > timeout+2*time.Second {
				t.Errorf("healthcheck took %v, want it bounded by its %v timeout", took, timeout)
			}
		})
	}
}

type helpConfig struct {
	config.Common
	Sources int    `env:"GROUNDING_MAX_SOURCES" envDefault:"3"`
	Key     string `env:"GEMINI_API_KEY" secret:"true"`
}

func TestCommand(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		env      map[string]string
		wantCode int
		wantDone bool
		stdout   []string // each must appear
		stderr   string
	}{
		{name: "no arguments starts", args: nil, wantCode: ExitOK, wantDone: false},
		{name: "--help", args: []string{"--help"}, wantCode: ExitOK, wantDone: true, stdout: []string{
			"svc — a test service\n",
			"  GROUNDING_MAX_SOURCES (default: 3)\n      sources kept per answer",
			"  DATA_DIR (default: ./.groundcrew)\n",
			"  GEMINI_API_KEY (default: –)\n      Gemini; unset means the extractive summariser",
			"docs/configuration.md",
		}},
		{name: "-h", args: []string{"-h"}, wantCode: ExitOK, wantDone: true, stdout: []string{"GROUNDING_MAX_SOURCES"}},
		{name: "--version", args: []string{"--version"}, wantCode: ExitOK, wantDone: true, stdout: []string{"svc dev (commit unknown, go"}},
		{name: "--print-config", args: []string{"--print-config"}, env: map[string]string{"GEMINI_API_KEY": "AIza-secret", "GROUNDING_MAX_SOURCES": "5"},
			wantCode: ExitOK, wantDone: true, stdout: []string{"GEMINI_API_KEY=set (masked)\n", "GROUNDING_MAX_SOURCES=5\n", "GRACE_PERIOD=10s\n"}},
		{name: "--print-config with a bad variable", args: []string{"--print-config"}, env: map[string]string{"GROUNDING_MAX_SOURCES": "x"},
			wantCode: ExitConfig, wantDone: true, stderr: "GROUNDING_MAX_SOURCES: must be an integer"},
		{name: "unknown flag", args: []string{"--port=1"}, wantCode: ExitConfig, wantDone: true, stderr: `unknown flag "--port=1"`},
		{name: "unknown argument", args: []string{"serve"}, wantCode: ExitConfig, wantDone: true, stderr: `unknown argument "serve"`},
		{name: "help with more", args: []string{"--help", "x"}, wantCode: ExitConfig, wantDone: true, stderr: "see svc --help"},
		{name: "healthcheck without URL", args: []string{"healthcheck"}, wantCode: ExitConfig, wantDone: true, stderr: "usage: svc healthcheck URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code, done := Command[helpConfig]("svc", "a test service", tt.args, config.MapLookup(tt.env), &stdout, &stderr)
			if code != tt.wantCode || done != tt.wantDone {
				t.Errorf("Command(%q) = %d, %v, want %d, %v; stderr:\n%s", tt.args, code, done, tt.wantCode, tt.wantDone, stderr.String())
			}
			for _, want := range tt.stdout {
				if !strings.Contains(stdout.String(), want) {
					t.Errorf("stdout lacks %q:\n%s", want, stdout.String())
				}
			}
			if !strings.Contains(stderr.String(), tt.stderr) {
				t.Errorf("stderr = %q, want it to hold %q", stderr.String(), tt.stderr)
			}
			if strings.Contains(stdout.String(), "AIza-secret") {
				t.Error("a secret was printed")
			}
		})
	}
}

func TestVersionLineFromBuild(t *testing.T) {
	Version, Commit = "v1.2.3", "abc1234"
	t.Cleanup(func() { Version, Commit = "", "" })
	if got := VersionLine("gateway"); !strings.HasPrefix(got, "gateway v1.2.3 (commit abc1234, go") {
		t.Errorf("VersionLine = %q", got)
	}
}

func TestRunLogsFullConfigAtDebug(t *testing.T) {
	var stderr bytes.Buffer
	env := map[string]string{"LOG_LEVEL": "debug", "GEMINI_API_KEY": "AIza-secret"}
	got := Run(context.Background(), "svc", config.MapLookup(env), &stderr, func(c *helpConfig) *config.Common { return &c.Common },
		func(_ context.Context, _ helpConfig, logger *slog.Logger) error { return nil })
	if got != ExitOK {
		t.Fatalf("Run() = %d; stderr:\n%s", got, stderr.String())
	}
	if !strings.Contains(stderr.String(), `"GRACE_PERIOD":"10s"`) || strings.Contains(stderr.String(), "AIza-secret") {
		t.Errorf("debug log lacks the full configuration or shows a secret:\n%s", stderr.String())
	}
}
