// Command rag-eval measures the offline rag stack on a question set: it
// ingests a document (by default the Go language specification shipped
// with Go) into a temporary embedded store, then reports retrieval quality
// (hit@1, hit@5, MRR) for the local embedder alone, BM25 alone and the
// hybrid fusion, and how well the scope check separates in-scope from
// unrelated questions (those sharing a word with the document reported
// apart as well).
//
//	go run ./cmd/rag-eval [-spec go_spec.html] [-questions testdata/gospec_questions.json[,more.json]] [-v]
//
// The question sets: testdata/gospec_questions.json,
// testdata/gospec_heldout.json and testdata/gospec_heldout2.json tuned the
// scope check; testdata/gospec_heldout3.json was written afterwards and is
// the held-out measure (BENCHMARKS.md).
//
// Question sets whose in-scope questions carry "facts" (phrases of the
// document that answer them) also measure the answers: the share
// containing their fact, and the share stating a sentence twice.
// gospec_questions.json tuned the extractive answerer first;
// gospec_heldout3.json's facts were written before that and run once,
// then joined the tuning of the second round; gospec_heldout4.json was
// written before the second round, run once, then measured the third
// (which kept no change); gospec_heldout5.json was written before the
// third round and run once; gospec_heldout6.json was written during the
// fourth and run once after it; gospec_heldout7.json was written during
// the fifth and run once after it; gospec_heldout8.json was written
// during the sixth and run once after it; gospec_heldout9.json was
// written during the seventh, run once after it, and is the held-out
// measure (BENCHMARKS.md, "rag — offline answers"). The answers of sets
// with facts are also counted by whether their first sentence has the
// fact.
//
// It exits 2 when a target is missed: at least 95 % of in-scope
// questions answered, at least 95 % of unrelated ones flagged, and (sets
// with facts) at least 80 % of answers containing their fact.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
)

// config is the command line.
type config struct {
	specPath      string
	questionsPath string
	dir           string
	verbose       bool
	// explain prints, for each answer without its fact, the sentences
	// the extractive writer ranked highest.
	explain     bool
	minAnswered float64
	minFlagged  float64
	minCorrect  float64
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "rag-eval:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, cfg, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("rag-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.specPath, "spec", "", "HTML document to ingest (default: $(go env GOROOT)/doc/go_spec.html)")
	fs.StringVar(&cfg.questionsPath, "questions", "testdata/gospec_questions.json", "question sets (JSON), comma-separated")
	fs.StringVar(&cfg.dir, "dir", "", "store directory (default: a temporary directory, removed afterwards)")
	fs.BoolVar(&cfg.verbose, "v", false, "print every question that misses")
	fs.BoolVar(&cfg.explain, "explain", false, "with -v, print the best-scored sentences of each answer without its fact")
	fs.Float64Var(&cfg.minAnswered, "min-answered", 0.95, "share of in-scope questions that must be answered")
	fs.Float64Var(&cfg.minFlagged, "min-flagged", 0.95, "share of unrelated questions that must be flagged out of scope")
	fs.Float64Var(&cfg.minCorrect, "min-correct", 0.8, "share of answers (of questions labelled with facts) that must contain their fact")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if cfg.specPath == "" {
		out, err := exec.Command("go", "env", "GOROOT").Output()
		if err != nil {
			return cfg, fmt.Errorf("finding GOROOT with `go env GOROOT` (pass -spec instead): %w", err)
		}
		cfg.specPath = filepath.Join(strings.TrimSpace(string(out)), "doc", "go_spec.html")
	}
	return cfg, nil
}
