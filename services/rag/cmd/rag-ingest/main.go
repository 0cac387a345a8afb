// Command rag-ingest ingests documents into a rag collection over gRPC:
// files, folders (walked recursively) and URL-list files.
//
//	rag-ingest [-addr 127.0.0.1:50053] -collection gospec [-url https://go.dev/ref/spec] FILE|DIR...
//	rag-ingest -collection runbooks -urls urls.txt
//
// Markdown (.md, .markdown), HTML (.html, .htm) and text (.txt) files are
// read. A file's document URL is -url when a single file is given, else
// -base-url joined with its path relative to the folder given. A URL list
// has one http(s) URL a line (blank lines and # comments skipped); each is
// fetched and read as HTML, Markdown or text by its content type and
// extension. Documents are sent in batches of at most -batch documents
// and about -batch-bytes bytes, with a progress line after each batch.
// Ingesting a URL again replaces its chunks, so re-running is safe.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	ragv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/rag/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	code := entrypoint.ExitCode(err)
	if code == entrypoint.ExitFailed {
		fmt.Fprintf(os.Stderr, "rag-ingest: %v\n", err)
	}
	os.Exit(code)
}

// about is the first line of --help.
const about = "ingests documents (files, folders, URL lists) into a collection of groundcrew's rag service over gRPC"

// variables are the environment variables rag-ingest reads, for --help.
type variables struct {
	Addr string `env:"RAG_ADDR" envDefault:"127.0.0.1:50053"`
	config.Transport
}

// options is the command line.
type options struct {
	addr, collection, url, baseURL, title, urls string
	batch, batchBytes                           int
	timeout                                     time.Duration
	paths                                       []string
}

func parse(args []string, stdout, stderr io.Writer) (options, error) {
	var o options
	fl := flag.NewFlagSet("rag-ingest", flag.ContinueOnError)
	fl.StringVar(&o.addr, "addr", envOr("RAG_ADDR", "127.0.0.1:50053"), "rag service gRPC address")
	fl.StringVar(&o.collection, "collection", "", "collection to ingest into (created if needed)")
	fl.StringVar(&o.url, "url", "", "document URL, when a single file is given")
	fl.StringVar(&o.baseURL, "base-url", "https://docs.local/", "URL prefix for files, joined with their path relative to the folder")
	fl.StringVar(&o.title, "title", "", "document title, when a single file is given (default: from the content)")
	fl.StringVar(&o.urls, "urls", "", "file listing URLs to fetch and ingest, one per line")
	fl.IntVar(&o.batch, "batch", 50, "documents per IngestDocuments call (at most 500)")
	fl.IntVar(&o.batchBytes, "batch-bytes", 8<<20, "approximate bytes per IngestDocuments call")
	fl.DurationVar(&o.timeout, "timeout", 5*time.Minute, "deadline for each call")
	if err := entrypoint.ParseFlags(fl, about, variables{}, args, stdout, stderr); err != nil {
		return o, err
	}
	o.paths = fl.Args()
	switch {
	case o.collection == "":
		return o, errors.New("-collection is required")
	case len(o.paths) == 0 && o.urls == "":
		return o, errors.New("give files or folders to ingest, or -urls FILE")
	case o.url != "" && (len(o.paths) != 1 || o.urls != ""):
		return o, errors.New("-url names one document: give exactly one file")
	case o.batch < 1 || o.batch > 500:
		return o, errors.New("-batch must be 1..500")
	}
	return o, nil
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parse(args, stdout, stderr)
	if err != nil {
		return err
	}
	var docs []*ragv1.Document
	for _, p := range o.paths {
		d, err := loadPath(p, o)
		if err != nil {
			return err
		}
		docs = append(docs, d...)
	}
	if o.urls != "" {
		d, err := fetchList(ctx, o.urls, o.timeout)
		if err != nil {
			return err
		}
		docs = append(docs, d...)
	}
	if len(docs) == 0 {
		return errors.New("no .md, .markdown, .html, .htm or .txt documents found")
	}

	// The same GRPC_SHARED_TOKEN / GRPC_TLS_* settings the services read,
	// so ingesting works against a suite with service-to-service auth on.
	tp, err := config.Load[config.Transport](os.LookupEnv)
	if err != nil {
		return err
	}
	if err := tp.Validate(); err != nil {
		return err
	}
	conn, err := grpcclient.Dial(o.addr, nil, grpcclient.Secure(tp)...)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := ragv1.NewRagServiceClient(conn)
	start := time.Now()
	var done, chunks, replaced int
	var last *ragv1.Collection
	for len(docs) > 0 {
		n, size := 0, 0
		for n < len(docs) && n < o.batch && (n == 0 || size+docSize(docs[n]) <= o.batchBytes) {
			size += docSize(docs[n])
			n++
		}
		cctx, cancel := context.WithTimeout(ctx, o.timeout)
		resp, err := client.IngestDocuments(cctx, &ragv1.IngestDocumentsRequest{Collection: o.collection, Documents: docs[:n]})
		cancel()
		if err != nil {
			return fmt.Errorf("ingesting %s … at %s: %w", docs[0].GetUrl(), o.addr, err)
		}
		docs = docs[n:]
		done += int(resp.GetDocuments())
		chunks += int(resp.GetChunks())
		replaced += int(resp.GetReplacedChunks())
		last = resp.GetCollection()
		el := time.Since(start)
		fmt.Fprintf(stderr, "[%d/%d] documents, %d chunks, %.1fs (%.0f chunks/s)\n",
			done, done+len(docs), chunks, el.Seconds(), float64(chunks)/max(el.Seconds(), 1e-9))
	}
	fmt.Fprintf(stdout, "ingested %d documents (%d chunks, %d replaced) into %q: now %d documents, %d chunks\n",
		done, chunks, replaced, o.collection, last.GetDocumentCount(), last.GetChunkCount())
	return nil
}

func docSize(d *ragv1.Document) int {
	return len(d.GetText()) + len(d.GetHtml()) + len(d.GetMarkdown()) + len(d.GetUrl()) + len(d.GetTitle())
}

// loadPath reads one file or every readable file under a folder.
func loadPath(p string, o options) ([]*ragv1.Document, error) {
	info, err := os.Stat(p)
	if err != nil {
		return nil, err
	}
	if !info.IsDir() {
		u := o.url
		if u == "" {
			u = joinURL(o.baseURL, filepath.Base(p))
		}
		d, err := loadFile(p, u)
		if err != nil {
			return nil, err
		}
		if d == nil {
			return nil, fmt.Errorf("%s: not a .md, .markdown, .html, .htm or .txt file", p)
		}
		if o.title != "" {
			d.Title = o.title
		}
		return []*ragv1.Document{d}, nil
	}
	var docs []*ragv1.Document
	err = filepath.WalkDir(p, func(file string, e fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if e.IsDir() {
			if file != p && strings.HasPrefix(e.Name(), ".") {
				return filepath.SkipDir
			}
			return nil
		}
		rel, err := filepath.Rel(p, file)
		if err != nil {
			return err
		}
		d, err := loadFile(file, joinURL(o.baseURL, filepath.ToSlash(rel)))
		if d != nil {
			docs = append(docs, d)
		}
		return err
	})
	return docs, err
}

func joinURL(base, rel string) string {
	u, err := url.Parse(base)
	if err != nil {
		return strings.TrimSuffix(base, "/") + "/" + rel
	}
	u.Path = path.Join("/", u.Path, rel)
	return u.String()
}

// loadFile reads a file as a document, or returns nil for other kinds.
func loadFile(file, u string) (*ragv1.Document, error) {
	kind := kindOf(file, "")
	if kind == "" {
		return nil, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	return newDocument(u, kind, string(b)), nil
}

// kindOf says how to read a file or a fetched page: "html", "markdown",
// "text", or "" for neither.
func kindOf(name, contentType string) string {
	ct := strings.ToLower(contentType)
	switch {
	case strings.Contains(ct, "html"):
		return "html"
	case strings.Contains(ct, "markdown"):
		return "markdown"
	}
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm":
		return "html"
	case ".md", ".markdown":
		return "markdown"
	case ".txt":
		return "text"
	}
	if strings.HasPrefix(ct, "text/") {
		return "text"
	}
	return ""
}

// goDocTitle reads the title of go.dev's HTML sources (such as
// $GOROOT/doc/go_spec.html), which carry it in a leading JSON comment
// instead of a <title>.
var goDocTitle = regexp.MustCompile(`^\s*<!--\{[^}]*"Title"\s*:\s*"([^"]+)"`)

func newDocument(u, kind, content string) *ragv1.Document {
	d := &ragv1.Document{Url: u}
	switch kind {
	case "html":
		d.Content = &ragv1.Document_Html{Html: content}
		if m := goDocTitle.FindStringSubmatch(content); m != nil {
			d.Title = m[1]
		}
	case "markdown":
		d.Content = &ragv1.Document_Markdown{Markdown: content}
	default:
		d.Content = &ragv1.Document_Text{Text: content}
	}
	return d
}

// maxFetch bounds one fetched page, like the service's document limit.
const maxFetch = 20 << 20

// fetchList fetches every URL of a list file.
func fetchList(ctx context.Context, list string, timeout time.Duration) ([]*ragv1.Document, error) {
	f, err := os.Open(list)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var docs []*ragv1.Document
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		u := strings.TrimSpace(sc.Text())
		if u == "" || strings.HasPrefix(u, "#") {
			continue
		}
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return nil, fmt.Errorf("%s:%d: %q is not an http(s) URL", list, line, u)
		}
		d, err := fetch(ctx, u, timeout)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", list, line, err)
		}
		docs = append(docs, d)
	}
	return docs, sc.Err()
}

func fetch(ctx context.Context, u string, timeout time.Duration) (*ragv1.Document, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetching %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetching %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxFetch+1))
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", u, err)
	}
	if len(b) > maxFetch {
		return nil, fmt.Errorf("%s is larger than %d bytes", u, maxFetch)
	}
	pu, _ := url.Parse(u)
	kind := kindOf(pu.Path, resp.Header.Get("Content-Type"))
	if kind == "" {
		return nil, fmt.Errorf("%s: cannot read content type %q", u, resp.Header.Get("Content-Type"))
	}
	return newDocument(u, kind, string(b)), nil
}
