// Command enrich-eval measures alert enrichment and research on the
// labelled evaluation sets (docs/evaluation.md): it runs the search and
// grounding services in-process and offline, indexes examples/runbooks
// (the team's runbooks) and docs/runbooks (groundcrew's own, in their own
// collection), then asks grounding about every alert as the notifier does
// and runs a research workflow on every topic.
//
//	go run ./cmd/enrich-eval [-alerts eval/enrichment-tuning.json,...] [-topics eval/research-tuning.json,...] [-runbooks examples/runbooks,DIR...] [-v]
//
// It prints citation precision, recall and abstention per alert set and
// the research figures per topic set; -v adds every outcome and miss.
// With -min-precision, -min-recall or -min-abstention it exits 2 when a
// set misses them.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"

	"github.com/groundcrew/groundcrew/e2e/enricheval"
)

type config struct {
	alerts, topics          []string
	runbooks                []string
	groundcrew              string
	verbose                 bool
	minPrecision, minRecall float64
	minAbstention           float64
}

func main() {
	cfg, err := parseFlags(os.Args[1:], os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "enrich-eval:", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, cfg, os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	root := enricheval.Root()
	in := func(p string) string { return filepath.Join(root, p) }
	var cfg config
	var alerts, topics, runbooks string
	fs := flag.NewFlagSet("enrich-eval", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&alerts, "alerts", in("eval/enrichment-tuning.json")+","+in("eval/enrichment-heldout.json")+","+in("eval/enrichment-heldout2.json")+","+in("eval/enrichment-heldout3.json"), "alert sets (comma-separated JSON files)")
	fs.StringVar(&topics, "topics", in("eval/research-tuning.json")+","+in("eval/research-heldout.json"), "research topic sets (comma-separated; empty: none)")
	fs.StringVar(&runbooks, "runbooks", in("examples/runbooks"), "the team's runbooks (comma-separated directories, indexed together)")
	fs.StringVar(&cfg.groundcrew, "groundcrew-runbooks", in("docs/runbooks"), "groundcrew's own runbooks (indexed in their own collection)")
	fs.BoolVar(&cfg.verbose, "v", false, "print every outcome and miss")
	fs.Float64Var(&cfg.minPrecision, "min-precision", 0, "exit 2 when a set's precision is below this")
	fs.Float64Var(&cfg.minRecall, "min-recall", 0, "exit 2 when a set's recall is below this")
	fs.Float64Var(&cfg.minAbstention, "min-abstention", 0, "exit 2 when a set's abstention is below this")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	cfg.alerts, cfg.topics, cfg.runbooks = split(alerts), split(topics), split(runbooks)
	if len(cfg.runbooks) == 0 {
		return cfg, fmt.Errorf("-runbooks names no directory")
	}
	return cfg, nil
}

func split(s string) []string {
	var out []string
	for p := range strings.SplitSeq(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func run(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	corpus, err := enricheval.LoadCorpus(cfg.runbooks, cfg.groundcrew)
	if err != nil {
		fmt.Fprintln(stderr, "enrich-eval:", err)
		return 1
	}
	dir, err := os.MkdirTemp("", "enrich-eval-")
	if err != nil {
		fmt.Fprintln(stderr, "enrich-eval:", err)
		return 1
	}
	defer os.RemoveAll(dir)
	env, err := enricheval.Start(ctx, dir, corpus, nil)
	if err != nil {
		fmt.Fprintln(stderr, "enrich-eval:", err)
		return 1
	}
	defer env.Close()
	fmt.Fprintf(stdout, "corpus: %d runbooks (%s, and %s in collection %q), offline search and grounding\n",
		len(corpus.Docs), strings.Join(cfg.runbooks, " + "), cfg.groundcrew, enricheval.GroundcrewCollection)

	code := 0
	for _, path := range cfg.alerts {
		set, err := enricheval.LoadAlerts(path)
		if err != nil {
			fmt.Fprintln(stderr, "enrich-eval:", err)
			return 1
		}
		var outs []enricheval.Outcome
		for _, a := range set.Alerts {
			o, err := env.Enrich(ctx, a)
			if err != nil {
				fmt.Fprintln(stderr, "enrich-eval:", err)
				return 1
			}
			if cfg.verbose {
				fmt.Fprintln(stdout, " ", enricheval.Describe(o))
			}
			outs = append(outs, o)
		}
		f := enricheval.ScoreAlerts(outs)
		enricheval.PrintAlerts(stdout, set.Part, f, cfg.verbose)
		if f.Precision() < cfg.minPrecision || f.Recall() < cfg.minRecall || f.Abstention() < cfg.minAbstention {
			code = 2
		}
	}
	for _, path := range cfg.topics {
		set, err := enricheval.LoadTopics(path)
		if err != nil {
			fmt.Fprintln(stderr, "enrich-eval:", err)
			return 1
		}
		var outs []enricheval.TopicOutcome
		for _, t := range set.Topics {
			o, err := env.Research(ctx, t)
			if err != nil {
				fmt.Fprintln(stderr, "enrich-eval:", err)
				return 1
			}
			if cfg.verbose {
				fmt.Fprintf(stdout, "  %s %s cites %v, %d/%d sections answered; plan %q\n", t.ID, o.Status, o.Cited, o.Answered, o.Sections, o.Plan)
			}
			outs = append(outs, o)
		}
		enricheval.PrintTopics(stdout, set.Part, enricheval.ScoreTopics(outs), cfg.verbose)
	}
	return code
}
