package main

import (
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// TestEvalSets runs the evaluation on the tuning sets and on the held-out
// set (written after tuning) and checks the measured figures reported in
// BENCHMARKS.md: in-scope questions answered, unrelated ones (most
// sharing a word with the spec) flagged, and hit@1, hit@5 and MRR@10 per
// retriever. The evaluation is deterministic (local hashing embedder,
// seeded calibration), so a change in any figure fails here and must be
// measured and reported anew.
func TestEvalSets(t *testing.T) {
	spec := filepath.Join(runtime.GOROOT(), "doc", "go_spec.html")
	if _, err := os.Stat(spec); err != nil {
		t.Skipf("the Go specification is not at %s: %v", spec, err)
	}
	type figures struct{ hit1, hit5, mrr float64 }
	tests := []struct {
		questions         string
		answered, flagged float64
		// embedder, bm25, hybrid, and hybrid for the question with the
		// vocabulary's words (answer.Expand), as answers are written
		dense, bm25, hybrid, vocab figures
		// correct is the share of answers containing their labelled
		// fact, lead the share leading with it (sets with facts only).
		correct, lead float64
		// hybridTrails is set where hybrid retrieval loses to BM25 at
		// hit@5 (measured; see BENCHMARKS.md).
		hybridTrails bool
		// scopeMissed is set where the scope check misses a target
		// (measured; see BENCHMARKS.md).
		scopeMissed bool
	}{
		// Tuning sets: 67/67 answered, 44/45 flagged; 40/40, 42/42;
		// 40/40, 45/45.
		{"../../testdata/gospec_questions.json", 67.0 / 67, 44.0 / 45,
			figures{0.552, 0.851, 0.679}, figures{0.522, 0.896, 0.680}, figures{0.672, 0.896, 0.764}, figures{0.821, 0.970, 0.887}, 56.0 / 67, 37.0 / 67, false, false},
		{"../../testdata/gospec_heldout.json", 40.0 / 40, 42.0 / 42,
			figures{0.625, 0.950, 0.755}, figures{0.675, 1.000, 0.797}, figures{0.700, 1.000, 0.828}, figures{0.675, 1.000, 0.809}, 0, 0, false, false},
		{"../../testdata/gospec_heldout2.json", 40.0 / 40, 45.0 / 45,
			figures{0.675, 0.925, 0.789}, figures{0.725, 0.950, 0.811}, figures{0.750, 0.975, 0.843}, figures{0.750, 0.975, 0.839}, 0, 0, false, false},
		// Held out (round 3): 44/44 answered, 52/54 flagged (96.3 %).
		// Hybrid ties BM25 at hit@5 but trails it at hit@1 and MRR.
		{"../../testdata/gospec_heldout3.json", 44.0 / 44, 52.0 / 54,
			figures{0.614, 0.909, 0.738}, figures{0.750, 0.955, 0.856}, figures{0.705, 0.955, 0.820}, figures{0.727, 1.000, 0.842},
			// Answer facts: 31/44 at its one blind run (round 4), 32/44
			// after the second tuning, 39/44 after the fourth (which used
			// it); see BENCHMARKS.md.
			39.0 / 44, 28.0 / 44, false, false},
		// Held out at the second tuning (28/36 answers with their fact
		// at its one blind run), tuning material for the fourth: 36/36
		// answered, 12/12 flagged; hybrid trails BM25 at hit@5 here.
		{"../../testdata/gospec_heldout4.json", 36.0 / 36, 12.0 / 12,
			figures{0.611, 0.917, 0.738}, figures{0.750, 0.972, 0.842}, figures{0.750, 0.944, 0.844}, figures{0.806, 0.972, 0.877},
			31.0 / 36, 20.0 / 36, true, false},
		// Held out at the third tuning (19/48 answers with their fact,
		// 45/48 answered at its one blind run), tuning material for the
		// fourth: 46/48 answered, 12/12 flagged; see BENCHMARKS.md.
		{"../../testdata/gospec_heldout5.json", 46.0 / 48, 12.0 / 12,
			figures{0.479, 0.750, 0.591}, figures{0.521, 0.771, 0.642}, figures{0.562, 0.792, 0.670}, figures{0.604, 0.917, 0.733},
			31.0 / 48, 13.0 / 48, false, false},
		// Held out at the fourth tuning (written by another engineer
		// while it ran, run once after it: 32/50 answers with their
		// fact), tuning material for the fifth, which dropped "len" →
		// "length" from the vocabulary: 34/50; 35/50 after the sixth
		// (a rule and its opposite are not the same fact); 49/50
		// answered, 11/12 flagged (91.7 %, below the 0.95 target); see
		// BENCHMARKS.md.
		{"../../testdata/gospec_heldout6.json", 49.0 / 50, 11.0 / 12,
			figures{0.420, 0.820, 0.584}, figures{0.740, 0.900, 0.818}, figures{0.580, 0.940, 0.729}, figures{0.640, 0.960, 0.766},
			35.0 / 50, 24.0 / 50, false, true},
		// Held out at the fifth tuning (written by another engineer
		// while it ran, run once after its last commit: 36/40 answered,
		// 24/40 answers with their fact), tuning material for the sixth:
		// 38/40 answered (four words of the collection together cover a
		// question), 10/10 flagged, 25/40 with their fact (0.625, below
		// the 0.8 target); hybrid trails BM25 at hit@5. See
		// BENCHMARKS.md.
		{"../../testdata/gospec_heldout7.json", 38.0 / 40, 10.0 / 10,
			figures{0.500, 0.675, 0.582}, figures{0.625, 0.925, 0.765}, figures{0.600, 0.800, 0.699}, figures{0.625, 0.800, 0.704},
			25.0 / 40, 14.0 / 40, true, false},
		// Held out (written blind by another engineer while the sixth
		// tuning ran, committed in f12e408, run once after its last
		// tuning commit 06bd2d9): 50/50 answered, 10/10 flagged,
		// answers with their fact 26/50 (0.52), below the 0.8 target
		// (the fifth tuning's answerer, run afterwards for comparison,
		// also 26/50); hybrid trails BM25 at hit@5. See BENCHMARKS.md.
		{"../../testdata/gospec_heldout8.json", 50.0 / 50, 10.0 / 10,
			figures{0.420, 0.740, 0.561}, figures{0.660, 0.860, 0.737}, figures{0.620, 0.820, 0.704}, figures{0.600, 0.860, 0.706},
			26.0 / 50, 17.0 / 50, true, false},
		// Held out (written blind by another engineer while the seventh
		// tuning ran, committed in 2e49ce2, run once after its last
		// tuning commit 62e0e35, whose word vectors were then taken out
		// again: 14/50 with their fact there, 6/50 leading with it).
		// The answerer as it is now, measured after that run: 48/50
		// answered, 10/10 flagged, answers with their fact 15/50 (0.30),
		// leading with it 7/50; hybrid trails BM25 at hit@5. See
		// BENCHMARKS.md.
		{"../../testdata/gospec_heldout9.json", 48.0 / 50, 10.0 / 10,
			figures{0.380, 0.660, 0.503}, figures{0.520, 0.800, 0.619}, figures{0.500, 0.740, 0.608}, figures{0.520, 0.740, 0.607},
			15.0 / 50, 7.0 / 50, true, false},
	}
	near := func(got, want float64) bool { return math.Abs(got-want) < 0.0005 }
	for _, tt := range tests {
		t.Run(filepath.Base(tt.questions), func(t *testing.T) {
			// The answer target is not met yet (BENCHMARKS.md); the
			// figure itself is held below.
			cfg := config{specPath: spec, questionsPath: tt.questions, dir: t.TempDir(), minAnswered: 0.95, minFlagged: 0.95, minCorrect: 0}
			rep, err := evaluate(t.Context(), cfg, io.Discard)
			if err != nil && !errors.Is(err, errTargets) {
				t.Fatal(err)
			}
			if missed := err != nil; missed != tt.scopeMissed {
				t.Errorf("scope targets missed: %v (answered %.3f, flagged %.3f, targets 0.95 both); measured missed: %v", missed, rep.Answered, rep.Flagged, tt.scopeMissed)
			}
			if !near(rep.Answered, tt.answered) || !near(rep.Flagged, tt.flagged) {
				t.Errorf("answered %.3f, flagged %.3f; measured %.3f, %.3f", rep.Answered, rep.Flagged, tt.answered, tt.flagged)
			}
			for mode, want := range map[string]figures{"embedder": tt.dense, "bm25": tt.bm25, "hybrid": tt.hybrid, "hybrid+vocabulary": tt.vocab} {
				got := figures{rep.Hit1[mode], rep.Hit5[mode], rep.MRR[mode]}
				if !near(got.hit1, want.hit1) || !near(got.hit5, want.hit5) || !near(got.mrr, want.mrr) {
					t.Errorf("%s: hit@1 %.3f, hit@5 %.3f, MRR %.3f; measured %.3f, %.3f, %.3f", mode, got.hit1, got.hit5, got.mrr, want.hit1, want.hit5, want.mrr)
				}
			}
			if !near(rep.Correct, tt.correct) || !near(rep.Lead, tt.lead) {
				t.Errorf("answers with their fact %.3f, leading with it %.3f; measured %.3f, %.3f", rep.Correct, rep.Lead, tt.correct, tt.lead)
			}
			// The extractive writer checks its answer with the same
			// measure, as a reader splits it, and never repeats itself.
			if rep.Repeats > 0 {
				t.Errorf("%.3f of answers state a sentence twice", rep.Repeats)
			}
			if trails := rep.Hit5["hybrid"] < rep.Hit5["bm25"]; trails != tt.hybridTrails {
				t.Errorf("hybrid hit@5 %.3f, bm25 hit@5 %.3f; measured hybrid trailing: %v", rep.Hit5["hybrid"], rep.Hit5["bm25"], tt.hybridTrails)
			}
		})
	}
}
