package main

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/grpcserver"
	"github.com/groundcrew/groundcrew/platform/grpcserver/grpcservertest"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/library"
	"github.com/groundcrew/groundcrew/services/rag/internal/raggrpc"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

// startRag runs the rag service in-process on a :0 listener.
func startRag(t *testing.T) (string, ragv1.RagServiceClient) {
	t.Helper()
	store, err := vectorindex.Open(t.TempDir(), embedder.NewHashing(0), vectorindex.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	lib := library.New(store, library.Options{})
	t.Cleanup(func() { lib.Close(); _ = store.Close() })
	srv, err := grpcserver.New(grpcserver.Config{GRPCAddr: "127.0.0.1:0"}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ragv1.RegisterRagServiceServer(srv, raggrpc.NewRagService(lib, store, raggrpc.Options{}))
	conn := grpcservertest.Dial(t, srv)
	addr := srv.GRPCAddr().String()
	return addr, ragv1.NewRagServiceClient(conn)
}

func write(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestIngestFolderAndURLs(t *testing.T) {
	addr, client := startRag(t)
	dir := t.TempDir()
	write(t, dir, "a.md", "# Deploys\n\nRoll back a bad deploy with the deploy tool.")
	write(t, dir, "sub/b.html", "<html><head><title>Queues</title></head><body><p>Scale consumers when lag grows.</p></body></html>")
	write(t, dir, "c.txt", "Rotate credentials every ninety days.")
	write(t, dir, "logo.png", "\x89PNG")
	write(t, dir, ".git/d.md", "# not a document")

	web := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/page":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, "<title>Paging</title><p>Page the on-call engineer for customer-facing outages.</p>")
		case "/notes.md":
			w.Header().Set("Content-Type", "text/plain")
			fmt.Fprint(w, "# Notes\n\nKeep runbooks short.")
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(web.Close)
	list := write(t, t.TempDir(), "urls.txt", "# runbooks\n"+web.URL+"/page\n\n"+web.URL+"/notes.md\n")

	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"-addr", addr, "-collection", "ops", "-batch", "2", "-base-url", "https://wiki.example.com/ops", "-urls", list, dir}, &stdout, &stderr)
	if err != nil {
		t.Fatalf("run: %v\n%s", err, stderr.String())
	}
	// Five documents in batches of two: three progress lines.
	if got := strings.Count(stderr.String(), "documents, "); got != 3 || !strings.Contains(stderr.String(), "[5/5] documents") {
		t.Errorf("progress:\n%s\nwant 3 lines ending at [5/5]", stderr.String())
	}
	if !strings.Contains(stdout.String(), `ingested 5 documents`) {
		t.Errorf("stdout = %q", stdout.String())
	}
	resp, err := client.Retrieve(t.Context(), &ragv1.RetrieveRequest{Collection: "ops", Query: "deploy lag credentials on-call runbooks", TopK: new(int32(50))})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, c := range resp.GetChunks() {
		got[c.GetSource().GetUrl()] = c.GetSource().GetTitle()
	}
	want := map[string]string{
		"https://wiki.example.com/ops/a.md":       "Deploys",
		"https://wiki.example.com/ops/sub/b.html": "Queues",
		// Plain text takes its first line as its title (issue 19).
		"https://wiki.example.com/ops/c.txt": "Rotate credentials every ninety days.",
		web.URL + "/page":                    "Paging",
		web.URL + "/notes.md":                "Notes",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("documents (-want +got):\n%s", diff)
	}
}

// TestIngestGoSpec runs the README command's equivalent.
func TestIngestGoSpec(t *testing.T) {
	addr, client := startRag(t)
	spec := filepath.Join(goroot(t), "doc", "go_spec.html")
	var stdout strings.Builder
	if err := run(t.Context(), []string{"-addr", addr, "-collection", "gospec", "-url", "https://go.dev/ref/spec", spec}, &stdout, io.Discard); err != nil {
		t.Fatal(err)
	}
	resp, err := client.Ask(t.Context(), &ragv1.AskRequest{Collection: "gospec", Query: "What happens when you send on a closed channel?"})
	if err != nil {
		t.Fatal(err)
	}
	const want = "Source: Document 1: [The Go Programming Language Specification] (https://go.dev/ref/spec)"
	if got := resp.GetResponse().GetPrimarySource(); got != want {
		t.Errorf("primary source = %q, want %q (title from the Go doc comment)", got, want)
	}
}

func goroot(t *testing.T) string {
	t.Helper()
	root := runtime.GOROOT()
	if _, err := os.Stat(filepath.Join(root, "doc", "go_spec.html")); err != nil {
		t.Skipf("no Go specification under %s/doc: %v", root, err)
	}
	return root
}

func TestUsageErrors(t *testing.T) {
	for _, args := range [][]string{
		{},
		{"-collection", "x"},
		{"-collection", "x", "-url", "https://a", "f1", "f2"},
		{"-collection", "x", "-batch", "0", "f"},
	} {
		if err := run(t.Context(), args, io.Discard, io.Discard); err == nil {
			t.Errorf("run(%q) succeeded", args)
		}
	}
}
