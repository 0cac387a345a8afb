package e2e_test

import (
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/platform/entrypoint"
)

// binaries maps each of the five binaries to its main package.
var binaries = map[string]string{
	"search":    "github.com/groundcrew/groundcrew/services/search",
	"grounding": "github.com/groundcrew/groundcrew/services/grounding",
	"rag":       "github.com/groundcrew/groundcrew/services/rag",
	"notifier":  "github.com/groundcrew/groundcrew/services/notifier",
	"gateway":   "github.com/groundcrew/groundcrew/gateway",
}

// TestEveryBinaryHealthcheck builds the five binaries and runs each one's
// `healthcheck` subcommand, as its image's HEALTHCHECK does: exit 0 against
// its service's ready admin port (the stack runs in this process), non-zero
// within the timeout against a port that never answers and against one
// nothing listens on. The gateway's once started a second gateway instead.
func TestEveryBinaryHealthcheck(t *testing.T) {
	bin := t.TempDir()
	args := []string{"build", "-o", bin + string(filepath.Separator)}
	for _, pkg := range binaries {
		args = append(args, pkg)
	}
	build := exec.CommandContext(t.Context(), "go", args...)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go %v: %v\n%s", args, err, out)
	}

	s := startStack(t, map[string]string{}, "")

	silent, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 64)
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

	for name := range binaries {
		tests := []struct {
			target string
			addr   string
			want   int
		}{
			{"ready admin port", s.AdminAddrs[name], entrypoint.ExitOK},
			{"port that never answers", silent.Addr().String(), entrypoint.ExitFailed},
			{"nothing listening", closedAddr, entrypoint.ExitFailed},
		}
		for _, tt := range tests {
			t.Run(name+"/"+tt.target, func(t *testing.T) {
				cmd := exec.CommandContext(t.Context(), filepath.Join(bin, name), "healthcheck", "http://"+tt.addr+"/readyz")
				// The probe must not read the service's configuration.
				cmd.Env = append(os.Environ(), "GATEWAY_ADDR=0.0.0.0:1", "LOG_LEVEL=nonsense")
				start := time.Now()
				out, err := cmd.CombinedOutput()
				took := time.Since(start)
				code := 0
				if exitErr, ok := errors.AsType[*exec.ExitError](err); ok {
					code = exitErr.ExitCode()
				} else if err != nil {
					t.Fatalf("running %s healthcheck: %v", name, err)
				}
				if code != tt.want {
					t.Errorf("%s healthcheck against %s: exit %d, want %d; output:\n%s", name, tt.target, code, tt.want, out)
				}
				if took > entrypoint.HealthcheckTimeout+5*time.Second {
					t.Errorf("%s healthcheck took %v, want it bounded by its %v timeout", name, took, entrypoint.HealthcheckTimeout)
				}
			})
		}
	}
}
