// Command search-index adds a folder of documents to the search service's
// local index over gRPC:
//
//	search-index [-addr 127.0.0.1:50051] [-base-url https://docs.example/] DIR
//
// Markdown (.md), text (.txt) and HTML (.html, .htm) files are indexed.
// A Markdown or text file may start with front matter naming its title and
// URL:
//
//	---
//	title: Checkout API — high 5xx error rate
//	url: https://runbooks.example.com/checkout-api-5xx
//	---
//
// Without a url, the document's URL is -base-url joined with the file's
// path relative to DIR. Re-running replaces documents with the same URL.
//
// -collection NAME indexes every document in that collection (metadata
// "collection"): searches may leave a collection out, as grounding leaves
// out groundcrew's own runbooks (collection "groundcrew", which `make run`
// indexes docs/runbooks in) for every alert that is not groundcrew's.
package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	searchv1 "github.com/groundcrew/groundcrew/gen/go/groundcrew/search/v1"
	"github.com/groundcrew/groundcrew/platform/config"
	"github.com/groundcrew/groundcrew/platform/entrypoint"
	"github.com/groundcrew/groundcrew/platform/grpcclient"
)

func main() {
	err := run(os.Args[1:], os.Stdout, os.Stderr)
	code := entrypoint.ExitCode(err)
	if code == entrypoint.ExitFailed {
		fmt.Fprintf(os.Stderr, "search-index: %v\n", err)
	}
	os.Exit(code)
}

// about is the first line of --help.
const about = "adds a folder of documents (Markdown, text, HTML) to the local index of groundcrew's search service over gRPC: search-index [flags] DIR"

// variables are the environment variables search-index reads, for --help.
type variables struct {
	Addr string `env:"SEARCH_ADDR" envDefault:"127.0.0.1:50051"`
	config.Transport
}

func run(args []string, out, stderr io.Writer) error {
	fl := flag.NewFlagSet("search-index", flag.ContinueOnError)
	addr := fl.String("addr", envOr("SEARCH_ADDR", "127.0.0.1:50051"), "search service gRPC address")
	baseURL := fl.String("base-url", "https://docs.groundcrew.example/", "URL prefix for files without a url in their front matter")
	batch := fl.Int("batch", 100, "documents per IndexDocuments call")
	timeout := fl.Duration("timeout", time.Minute, "deadline for each call")
	collection := fl.String("collection", "", `index the documents in this collection (metadata "collection"), e.g. "groundcrew" for groundcrew's own runbooks`)
	if err := entrypoint.ParseFlags(fl, about, variables{}, args, out, stderr); err != nil {
		return err
	}
	if fl.NArg() != 1 {
		return errors.New("usage: search-index [flags] DIR")
	}
	docs, err := LoadDir(fl.Arg(0), *baseURL)
	if err != nil {
		return err
	}
	if len(docs) == 0 {
		return fmt.Errorf("no .md, .txt or .html files in %s", fl.Arg(0))
	}
	SetCollection(docs, *collection)
	// The same GRPC_SHARED_TOKEN / GRPC_TLS_* settings the services read,
	// so indexing works against a suite with service-to-service auth on.
	tp, err := config.Load[config.Transport](os.LookupEnv)
	if err != nil {
		return err
	}
	if err := tp.Validate(); err != nil {
		return err
	}
	conn, err := grpcclient.Dial(*addr, nil, grpcclient.Secure(tp)...)
	if err != nil {
		return err
	}
	defer conn.Close()
	client := searchv1.NewSearchServiceClient(conn)
	var indexed, replaced int32
	var total int64
	for start := 0; start < len(docs); start += *batch {
		end := min(start+*batch, len(docs))
		ctx, cancel := context.WithTimeout(context.Background(), *timeout)
		resp, err := client.IndexDocuments(ctx, &searchv1.IndexDocumentsRequest{Documents: docs[start:end]})
		cancel()
		if err != nil {
			return fmt.Errorf("indexing documents %d..%d at %s: %w", start, end-1, *addr, err)
		}
		for _, r := range resp.GetRejected() {
			fmt.Fprintf(out, "rejected %s: %s\n", r.GetUrl(), r.GetReason())
		}
		indexed += resp.GetIndexed()
		replaced += resp.GetReplaced()
		total = resp.GetTotalDocuments()
	}
	fmt.Fprintf(out, "indexed %d new and %d replaced documents from %s; the index holds %d\n", indexed, replaced, fl.Arg(0), total)
	return nil
}

// SetCollection puts every document in collection name (nothing when name
// is empty).
func SetCollection(docs []*searchv1.Document, name string) {
	if name = strings.TrimSpace(name); name == "" {
		return
	}
	for _, d := range docs {
		if d.Metadata == nil {
			d.Metadata = &structpb.Struct{Fields: map[string]*structpb.Value{}}
		}
		d.Metadata.Fields["collection"] = structpb.NewStringValue(name)
	}
}

// LoadDir reads every indexable file under dir.
func LoadDir(dir, baseURL string) ([]*searchv1.Document, error) {
	base, err := url.Parse(baseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") {
		return nil, fmt.Errorf("-base-url %q: want an http or https URL", baseURL)
	}
	var docs []*searchv1.Document
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		ext := strings.ToLower(filepath.Ext(p))
		if ext != ".md" && ext != ".txt" && ext != ".html" && ext != ".htm" {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		u := *base
		u.Path = path.Join(u.Path, filepath.ToSlash(rel))
		doc := &searchv1.Document{Url: u.String()}
		if ext == ".html" || ext == ".htm" {
			doc.Content = &searchv1.Document_Html{Html: string(data)}
		} else {
			fm, body := SplitFrontMatter(string(data))
			if fm["url"] != "" {
				doc.Url = fm["url"]
			}
			doc.Title = fm["title"]
			doc.Content = &searchv1.Document_Text{Text: body}
		}
		docs = append(docs, doc)
		return nil
	})
	return docs, err
}

// SplitFrontMatter separates a leading "---" block of "key: value" lines
// from the body. Without one, the whole text is the body.
func SplitFrontMatter(s string) (map[string]string, string) {
	fm := map[string]string{}
	if !strings.HasPrefix(s, "---\n") {
		return fm, s
	}
	rest := s[len("---\n"):]
	end := strings.Index(rest, "\n---\n")
	if end < 0 {
		return fm, s
	}
	sc := bufio.NewScanner(strings.NewReader(rest[:end]))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok {
			fm[strings.TrimSpace(strings.ToLower(k))] = strings.TrimSpace(v)
		}
	}
	return fm, strings.TrimLeft(rest[end+len("\n---\n"):], "\n")
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}
