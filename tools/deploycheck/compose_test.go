package deploycheck

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
)

const repoRoot = "../.."

// wantServices maps each groundcrew service in the compose file to the Go
// package directory its image must build.
var wantServices = map[string]string{
	"search":    "services/search",
	"grounding": "services/grounding",
	"rag":       "services/rag",
	"notifier":  "services/notifier",
	"gateway":   "gateway",
}

func loadProject(t *testing.T) *types.Project {
	t.Helper()
	opts, err := cli.NewProjectOptions(
		[]string{filepath.Join(repoRoot, "docker-compose.yml")},
		cli.WithWorkingDirectory(repoRoot),
		// Interpolate with an empty environment: the file must work with
		// no keys set.
		cli.WithEnv([]string{}),
		cli.WithName("groundcrew"),
	)
	if err != nil {
		t.Fatal(err)
	}
	p, err := opts.LoadProject(context.Background())
	if err != nil {
		t.Fatalf("docker-compose.yml does not load: %v", err)
	}
	return p
}

func TestComposeFileLoads(t *testing.T) {
	p := loadProject(t)
	for _, name := range []string{"search", "grounding", "rag", "notifier", "gateway", "qdrant", "postgres"} {
		if _, err := p.GetService(name); err != nil {
			t.Errorf("compose file lacks service %q: %v", name, err)
		}
	}
	gw, err := p.GetService("gateway")
	if err != nil {
		t.Fatal(err)
	}
	published := false
	for _, port := range gw.Ports {
		if port.Target == 8080 && port.Published == "8080" {
			published = true
		}
	}
	if !published {
		t.Errorf("gateway does not publish 8080: %+v", gw.Ports)
	}
	for name := range wantServices {
		svc, _ := p.GetService(name)
		if name != "gateway" && len(svc.Ports) > 0 {
			t.Errorf("%s publishes ports %v; only the gateway should face clients", name, svc.Ports)
		}
		// A service told to use PostgreSQL (search, grounding and the
		// notifier read DATABASE_URL; rag and the gateway have no
		// database) starts once it is healthy, not in a crash loop.
		if url := svc.Environment["DATABASE_URL"]; name != "rag" && name != "gateway" && url != nil && strings.Contains(*url, "@postgres:") {
			if dep, ok := svc.DependsOn["postgres"]; !ok || dep.Condition != "service_healthy" {
				t.Errorf("%s uses DATABASE_URL on the postgres service but does not depend on it being healthy", name)
			}
		}
	}
}

func TestEveryServiceHasAWorkingDockerfile(t *testing.T) {
	p := loadProject(t)
	from := regexp.MustCompile(`(?m)^FROM\s+\S+(\s+AS\s+(\S+))?`)
	for name, pkgDir := range wantServices {
		t.Run(name, func(t *testing.T) {
			svc, err := p.GetService(name)
			if err != nil {
				t.Fatal(err)
			}
			if svc.Build == nil {
				t.Fatalf("%s has no build section", name)
			}
			root, _ := filepath.Abs(repoRoot)
			if filepath.Clean(svc.Build.Context) != root {
				t.Errorf("build context = %s, want the repository root %s (the module needs gen/ and platform/)", svc.Build.Context, root)
			}
			df := svc.Build.Dockerfile
			if !filepath.IsAbs(df) {
				df = filepath.Join(svc.Build.Context, df)
			}
			data, err := os.ReadFile(df)
			if err != nil {
				t.Fatalf("Dockerfile %s: %v", df, err)
			}
			text := string(data)
			if got := len(from.FindAllString(text, -1)); got < 2 {
				t.Errorf("%s: %d FROM lines, want a multi-stage build", df, got)
			}
			if !strings.Contains(text, "WORKDIR /src/"+pkgDir+"\n") {
				t.Errorf("%s does not build in /src/%s", df, pkgDir)
			}
			for _, want := range []string{
				"COPY " + pkgDir + "/ " + pkgDir + "/", "COPY gen/ gen/", "COPY platform/ platform/",
				"CGO_ENABLED=0", "GOWORK=off", "USER nonroot", "HEALTHCHECK",
				// --version in the image says what was built (build args).
				"ARG VERSION=", "ARG COMMIT=",
				"platform/entrypoint.Version=${VERSION}", "platform/entrypoint.Commit=${COMMIT}",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("%s lacks %q", df, want)
				}
			}
			// The package it builds is a main package.
			main, err := os.ReadFile(filepath.Join(repoRoot, pkgDir, "main.go"))
			if err != nil || !strings.Contains(string(main), "package main") {
				t.Errorf("%s/main.go is not a main package: %v", pkgDir, err)
			}
			// The healthcheck probes the admin port the image configures.
			port := regexp.MustCompile(`127\.0\.0\.1:(\d+)/readyz`).FindStringSubmatch(text)
			if port == nil || !strings.Contains(text, "_ADMIN_ADDR=:"+port[1]) {
				t.Errorf("%s: healthcheck port and *_ADMIN_ADDR disagree", df)
			}
		})
	}
}
