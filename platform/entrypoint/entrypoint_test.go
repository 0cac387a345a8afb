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
