package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/groundcrew/groundcrew/services/rag/internal/answer"
	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
	"github.com/groundcrew/groundcrew/services/rag/internal/vectorindex"
)

// questionSet is the JSON question file.
type questionSet struct {
	Document struct {
		URL   string `json:"url"`
		Title string `json:"title"`
	} `json:"document"`
	InScope []struct {
		Question string   `json:"question"`
		Expected []string `json:"expected"`
		// Facts are phrases of the document that answer the question;
		// an answer is right when it contains one of them.
		Facts []string `json:"facts"`
	} `json:"in_scope"`
	OutOfScope []string `json:"out_of_scope"`
	// SharedWord questions are unrelated too but share a word with the
	// document; they count as unrelated for the target.
	SharedWord []string `json:"shared_word"`
	NearScope  []string `json:"near_scope"`
}

const collection = "eval"

// rankDepth is how deep MRR looks.
const rankDepth = 10

// report holds the measured figures.
type report struct {
	// Hit1, Hit5 and MRR are per ranking mode ("embedder", "bm25",
	// "hybrid", "hybrid+vocabulary").
	Hit1, Hit5, MRR map[string]float64
	// Answered is the share of in-scope questions answered, Flagged the
	// share of unrelated ones (including shared-word ones) flagged.
	Answered, Flagged float64
	// Facts counts the in-scope questions labelled with answer facts;
	// Correct the share of them whose answer contains one, Repeats the
	// share of answers stating a sentence twice (near-duplicates), Lead
	// the share whose first sentence contains one.
	Facts                  int
	Correct, Repeats, Lead float64
}

// run evaluates each question set of cfg.questionsPath (comma-separated)
// in turn; the exit code is the worst one's.
func run(ctx context.Context, cfg config, stdout, stderr io.Writer) int {
	code := 0
	sets := strings.Split(cfg.questionsPath, ",")
	for i, path := range sets {
		one := cfg
		one.questionsPath = strings.TrimSpace(path)
		if len(sets) > 1 {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			fmt.Fprintf(stdout, "=== %s\n", one.questionsPath)
		}
		if _, err := evaluate(ctx, one, stdout); err != nil {
			if errors.Is(err, errTargets) {
				code = max(code, 2)
				continue
			}
			fmt.Fprintln(stderr, "rag-eval:", err)
			return 1
		}
	}
	return code
}

// errTargets reports that the scope check missed its targets; the report
// has been printed.
var errTargets = errors.New("targets missed")

func evaluate(ctx context.Context, cfg config, out io.Writer) (report, error) {
	rep := report{Hit1: map[string]float64{}, Hit5: map[string]float64{}, MRR: map[string]float64{}}
	err := evaluateInto(ctx, cfg, out, &rep)
	return rep, err
}

func evaluateInto(ctx context.Context, cfg config, out io.Writer, rep *report) error {
	var qs questionSet
	raw, err := os.ReadFile(cfg.questionsPath)
	if err != nil {
		return fmt.Errorf("reading questions (run from services/rag or pass -questions): %w", err)
	}
	if err := json.Unmarshal(raw, &qs); err != nil {
		return fmt.Errorf("parsing %s: %w", cfg.questionsPath, err)
	}
	spec, err := os.ReadFile(cfg.specPath)
	if err != nil {
		return fmt.Errorf("reading the document: %w", err)
	}

	dir := cfg.dir
	if dir == "" {
		if dir, err = os.MkdirTemp("", "rag-eval-*"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	emb := embedder.NewHashing(0)
	store, err := vectorindex.Open(dir, emb, vectorindex.Options{})
	if err != nil {
		return err
	}
	defer store.Close()

	// Ingest: chunking, embedding and the durable write, as the service
	// does it.
	start := time.Now()
	chunks, err := chunker.HTML(string(spec), chunker.Options{})
	if err != nil {
		return err
	}
	title := qs.Document.Title
	if title == "" {
		title = chunker.HTMLTitle(string(spec))
	}
	res, err := store.Upsert(ctx, collection, rag.Document{URL: qs.Document.URL, Title: title, Chunks: chunks})
	if err != nil {
		return err
	}
	ingest := time.Since(start)
	start = time.Now()
	cal, err := answer.Calibrate(ctx, store, collection)
	if err != nil {
		return err
	}
	if err := store.PutSettings(collection, rag.Settings{CalibratedThreshold: cal.Threshold, CalibratedChunks: res.Chunks}); err != nil {
		return err
	}
	calTime := time.Since(start)
	fmt.Fprintf(out, "document: %s (%d bytes) -> %d chunks, ingested in %v (%.0f chunks/s); embedder %s\n",
		cfg.specPath, len(spec), res.Chunks, ingest.Round(time.Millisecond), float64(res.Chunks)/ingest.Seconds(), emb.Name())
	fmt.Fprintf(out, "scope calibration: %d pseudo-questions in %v, p10 %.3f, median %.3f -> threshold %.3f\n\n",
		cal.Questions, calTime.Round(time.Millisecond), cal.P10, cal.Median, cal.Threshold)

	// Retrieval quality per mode.
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "mode\thit@1\thit@5\tMRR@%d\tp50 latency\t\n", rankDepth)
	var misses []string
	for _, m := range []struct {
		name string
		mode rag.Mode
		// vocab searches for the question with the collection's words
		// for its phrases (answer.Expand), as the Asker does for the
		// chunks it answers from.
		vocab bool
	}{{"embedder", rag.ModeDense, false}, {"bm25", rag.ModeBM25, false}, {"hybrid", rag.ModeHybrid, false}, {"hybrid+vocabulary", rag.ModeHybrid, true}} {
		var hit1, hit5 int
		var mrr float64
		var lat []time.Duration
		for _, q := range qs.InScope {
			t := time.Now()
			text := q.Question
			if more := answer.Expand(q.Question); m.vocab && more != "" {
				text += "\n" + more
			}
			hits, err := store.Search(ctx, collection, rag.Query{Text: text, TopK: rankDepth, Mode: m.mode})
			lat = append(lat, time.Since(t))
			if err != nil {
				return err
			}
			rank := firstMatch(hits, q.Expected)
			switch {
			case rank == 1:
				hit1++
				hit5++
			case rank > 1 && rank <= 5:
				hit5++
			}
			if rank > 0 {
				mrr += 1 / float64(rank)
			}
			if cfg.verbose && m.mode == rag.ModeHybrid && !m.vocab && rank != 1 {
				misses = append(misses, fmt.Sprintf("  rank %2d  %q want %v, got %s", rank, q.Question, q.Expected, top3(hits)))
			}
		}
		n := float64(len(qs.InScope))
		slices.Sort(lat)
		rep.Hit1[m.name], rep.Hit5[m.name], rep.MRR[m.name] = float64(hit1)/n, float64(hit5)/n, mrr/n
		fmt.Fprintf(tw, "%s\t%.3f\t%.3f\t%.3f\t%v\t\n", m.name, float64(hit1)/n, float64(hit5)/n, mrr/n, lat[len(lat)/2].Round(time.Microsecond))
	}
	tw.Flush()
	fmt.Fprintf(out, "(%d in-scope questions; a hit is a chunk whose deepest heading is an expected one)\n", len(qs.InScope))
	if len(misses) > 0 {
		fmt.Fprintln(out, "\nhybrid questions not answered by the first chunk:")
		fmt.Fprintln(out, strings.Join(misses, "\n"))
	}

	// Scope check and answers.
	asker := answer.NewAsker(store, answer.Options{})
	answered, primaryRight, correct, repeats, lead := 0, 0, 0, 0, 0
	var wrong, wrongFacts []string
	for _, q := range qs.InScope {
		r, err := asker.Ask(ctx, answer.Request{Collection: collection, Question: q.Question})
		if err != nil {
			return err
		}
		if len(q.Facts) > 0 {
			rep.Facts++
			// The extractive writer leads with the sentence it ranks
			// first.
			if !r.IsOutOfScope {
				if ranked := (&answer.Extractive{}).Rank(q.Question, r.MatchedChunks); len(ranked) > 0 && containsFact(ranked[0].Text, q.Facts) {
					lead++
				}
			}
			switch {
			case !r.IsOutOfScope && containsFact(r.Answer, q.Facts):
				correct++
			default:
				wrongFacts = append(wrongFacts, fmt.Sprintf("  %q want one of %q (in matched chunks %v)\n    got %q", q.Question, q.Facts, factRanks(r.MatchedChunks, q.Facts), r.Answer))
				if cfg.explain && !r.IsOutOfScope {
					for i, s := range (&answer.Extractive{}).Rank(q.Question, r.MatchedChunks) {
						if i == 8 {
							break
						}
						mark := " "
						if containsFact(s.Text, q.Facts) {
							mark = "*"
						}
						wrongFacts = append(wrongFacts, fmt.Sprintf("     %s %.3f c%d.%d %.160s", mark, s.Score, s.Chunk+1, s.Pos, s.Text))
					}
				}
			}
		}
		if r.IsOutOfScope {
			wrong = append(wrong, fmt.Sprintf("  rejected in-scope %q: %s", q.Question, r.OutOfScopeReason))
			continue
		}
		if answer.HasRepeats(r.Answer) {
			repeats++
			wrong = append(wrong, fmt.Sprintf("  repeats itself %q: %q", q.Question, r.Answer))
		}
		answered++
		if firstMatch(primaryChunk(r), q.Expected) == 1 {
			primaryRight++
		}
	}
	flagged := func(list []string, kind string) (int, error) {
		n := 0
		for _, q := range list {
			r, err := asker.Ask(ctx, answer.Request{Collection: collection, Question: q})
			if err != nil {
				return 0, err
			}
			if r.IsOutOfScope {
				n++
			} else {
				wrong = append(wrong, fmt.Sprintf("  answered %s %q (best similarity %.3f)", kind, q, bestScore(r.MatchedChunks)))
			}
		}
		return n, nil
	}
	out1, err := flagged(qs.OutOfScope, "unrelated")
	if err != nil {
		return err
	}
	shared, err := flagged(qs.SharedWord, "shared-word")
	if err != nil {
		return err
	}
	near, err := flagged(qs.NearScope, "near-scope")
	if err != nil {
		return err
	}
	inRate := float64(answered) / float64(len(qs.InScope))
	unrelated := len(qs.OutOfScope) + len(qs.SharedWord)
	outRate := float64(out1+shared) / float64(unrelated)
	rep.Answered, rep.Flagged = inRate, outRate
	fmt.Fprintf(out, "\nscope check (hybrid, top 5, threshold %.3f):\n", cal.Threshold)
	fmt.Fprintf(out, "  in-scope answered        %3d/%-3d %5.1f %%  (target >= %.0f %%)\n", answered, len(qs.InScope), 100*inRate, 100*cfg.minAnswered)
	fmt.Fprintf(out, "  unrelated flagged        %3d/%-3d %5.1f %%  (target >= %.0f %%)\n", out1+shared, unrelated, 100*outRate, 100*cfg.minFlagged)
	if len(qs.SharedWord) > 0 {
		fmt.Fprintf(out, "    of which sharing a word %3d/%-3d %5.1f %%\n", shared, len(qs.SharedWord), 100*float64(shared)/float64(len(qs.SharedWord)))
	}
	if len(qs.NearScope) > 0 {
		fmt.Fprintf(out, "  near-scope flagged       %3d/%-3d %5.1f %%  (programming, not Go; no target)\n", near, len(qs.NearScope), 100*float64(near)/float64(len(qs.NearScope)))
	}
	fmt.Fprintf(out, "  primary source in an expected section: %d/%d answered\n", primaryRight, answered)
	if answered > 0 {
		rep.Repeats = float64(repeats) / float64(answered)
	}
	if rep.Facts > 0 {
		rep.Correct = float64(correct) / float64(rep.Facts)
		rep.Lead = float64(lead) / float64(rep.Facts)
		fmt.Fprintf(out, "\nanswers (extractive):\n")
		fmt.Fprintf(out, "  containing the labelled fact %3d/%-3d %5.1f %%  (target >= %.0f %%)\n", correct, rep.Facts, 100*rep.Correct, 100*cfg.minCorrect)
		fmt.Fprintf(out, "  leading with it              %3d/%-3d %5.1f %%\n", lead, rep.Facts, 100*rep.Lead)
		fmt.Fprintf(out, "  stating a sentence twice     %3d/%-3d %5.1f %%\n", repeats, answered, 100*rep.Repeats)
		if cfg.verbose && len(wrongFacts) > 0 {
			fmt.Fprintln(out, "  answers without their fact:")
			fmt.Fprintln(out, strings.Join(wrongFacts, "\n"))
		}
	}
	if cfg.verbose && len(wrong) > 0 {
		fmt.Fprintln(out, strings.Join(wrong, "\n"))
	}

	fmt.Fprintln(out, "\nexamples:")
	for _, q := range []string{"What happens when you send on a closed channel?", "How do I bake sourdough bread?"} {
		r, err := asker.Ask(ctx, answer.Request{Collection: collection, Question: q})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "Q: %s\n", q)
		if r.IsOutOfScope {
			fmt.Fprintf(out, "A: %s\n   (out of scope: %s)\n", r.Answer, r.OutOfScopeReason)
			continue
		}
		fmt.Fprintf(out, "A: %s\n   %s, from %s\n   matched: %s\n", r.Answer, r.PrimarySource, headingOf(primaryChunk(r)), top3(r.MatchedChunks))
	}

	if inRate < cfg.minAnswered || outRate < cfg.minFlagged {
		fmt.Fprintln(out, "\nFAIL: scope targets missed")
		return errTargets
	}
	if rep.Facts > 0 && rep.Correct < cfg.minCorrect {
		fmt.Fprintln(out, "\nFAIL: answer accuracy target missed")
		return errTargets
	}
	return nil
}

// factRanks lists the 1-based ranks of the matched chunks holding a
// fact, to tell retrieval misses from answer-writing ones.
func factRanks(hits []rag.Hit, facts []string) []int {
	var out []int
	for i, h := range hits {
		if containsFact(h.Text, facts) {
			out = append(out, i+1)
		}
	}
	return out
}

// containsFact says whether an answer states one of the facts: it
// contains the phrase, letter case and white space aside.
func containsFact(answer string, facts []string) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	a := norm(answer)
	for _, f := range facts {
		if strings.Contains(a, norm(f)) {
			return true
		}
	}
	return false
}

// firstMatch returns the 1-based rank of the first hit whose deepest
// heading is expected, or 0.
func firstMatch(hits []rag.Hit, expected []string) int {
	for i, h := range hits {
		if len(h.HeadingPath) > 0 && slices.Contains(expected, h.HeadingPath[len(h.HeadingPath)-1]) {
			return i + 1
		}
	}
	return 0
}

// primaryChunk returns the matched chunk an answer relies on most, as a
// one-element list, or nothing when out of scope.
func primaryChunk(r answer.Result) []rag.Hit {
	if r.IsOutOfScope || len(r.Sources) == 0 {
		return nil
	}
	p := r.Sources[r.Primary]
	for _, h := range r.MatchedChunks {
		if h.URL == p.URL && h.ChunkIndex == p.ChunkIndex {
			return []rag.Hit{h}
		}
	}
	return nil
}

func headingOf(hits []rag.Hit) string {
	if len(hits) == 0 {
		return "?"
	}
	return strings.Join(hits[0].HeadingPath, " > ")
}

func top3(hits []rag.Hit) string {
	var parts []string
	for _, h := range hits[:min(3, len(hits))] {
		parts = append(parts, fmt.Sprintf("%s (%.2f)", strings.Join(h.HeadingPath, " > "), h.Score))
	}
	return strings.Join(parts, "; ")
}

func bestScore(hits []rag.Hit) float64 {
	best := 0.0
	for _, h := range hits {
		best = max(best, h.Score)
	}
	return best
}
