package deploycheck

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestHealthcheckCommandRunsTheImagesBinary checks each image's
// HEALTHCHECK command, not only its port: it must run the image's own
// binary with the `healthcheck` subcommand against the admin /readyz, and
// that binary must be built on platform/entrypoint, which implements the
// subcommand. (The gateway's once was not: its health check started a
// second gateway, which could never report healthy.) e2e runs every
// binary's subcommand for real.
func TestHealthcheckCommandRunsTheImagesBinary(t *testing.T) {
	healthcheck := regexp.MustCompile(`(?m)^HEALTHCHECK\b(?:[^\n]*\\\n)*[^\n]*?\bCMD\s+(\[[^\n]*\])`)
	entrypoint := regexp.MustCompile(`(?m)^ENTRYPOINT\s+(\[[^\n]*\])`)
	adminEnv := regexp.MustCompile(`\b[A-Z]+_ADMIN_ADDR=:(\d+)\b`)
	for name, pkgDir := range wantServices {
		t.Run(name, func(t *testing.T) {
			df := filepath.Join(repoRoot, pkgDir, "Dockerfile")
			data, err := os.ReadFile(df)
			if err != nil {
				t.Fatal(err)
			}
			text := string(data)
			m := healthcheck.FindStringSubmatch(text)
			if m == nil {
				t.Fatalf("%s: no HEALTHCHECK ... CMD [...] in exec form", df)
			}
			var cmd, entry []string
			if err := json.Unmarshal([]byte(m[1]), &cmd); err != nil {
				t.Fatalf("%s: HEALTHCHECK CMD %s is not a JSON array: %v", df, m[1], err)
			}
			e := entrypoint.FindStringSubmatch(text)
			if e == nil || json.Unmarshal([]byte(e[1]), &entry) != nil || len(entry) == 0 {
				t.Fatalf("%s: no ENTRYPOINT in exec form", df)
			}
			if len(cmd) != 3 || cmd[0] != entry[0] || cmd[1] != "healthcheck" {
				t.Fatalf("%s: HEALTHCHECK CMD = %q, want [%q healthcheck http://127.0.0.1:<admin port>/readyz]", df, cmd, entry[0])
			}
			if !strings.Contains(text, "/usr/local/bin/"+filepath.Base(entry[0])) {
				t.Errorf("%s: the image does not install %s", df, entry[0])
			}
			port := adminEnv.FindStringSubmatch(text)
			if port == nil || cmd[2] != "http://127.0.0.1:"+port[1]+"/readyz" {
				t.Errorf("%s: HEALTHCHECK probes %q, want the admin port's /readyz (%v)", df, cmd[2], port)
			}
			main, err := os.ReadFile(filepath.Join(repoRoot, pkgDir, "main.go"))
			if err != nil || !strings.Contains(string(main), "entrypoint.Main(") {
				t.Errorf("%s/main.go does not run through entrypoint.Main, so `%s healthcheck` would start the service instead", pkgDir, filepath.Base(entry[0]))
			}
		})
	}
}

// TestComposeRequiresAuth checks the compose file's security defaults: the
// gateway, which listens on every interface in a container, has API keys;
// every service has the shared gRPC token and no reflection.
func TestComposeRequiresAuth(t *testing.T) {
	p := loadProject(t)
	for name := range wantServices {
		svc, err := p.GetService(name)
		if err != nil {
			t.Fatal(err)
		}
		env := func(k string) string {
			if v := svc.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if env("GRPC_SHARED_TOKEN") == "" {
			t.Errorf("%s: GRPC_SHARED_TOKEN is empty with no environment set", name)
		}
		if env("GRPC_REFLECTION") != "false" {
			t.Errorf("%s: GRPC_REFLECTION = %q, want false", name, env("GRPC_REFLECTION"))
		}
		if env("ADMIN_PPROF") == "true" {
			t.Errorf("%s: ADMIN_PPROF is on", name)
		}
		if name == "gateway" && env("GATEWAY_API_KEYS") == "" {
			t.Error("gateway: GATEWAY_API_KEYS is empty with no environment set; the gateway would refuse to start off loopback")
		}
	}
}
