package vectorindex

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/groundcrew/groundcrew/services/rag/internal/chunker"
	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// specPath is the Go specification shipped with the toolchain.
func specPath() string {
	return filepath.Join(runtime.GOROOT(), "doc", "go_spec.html")
}

func loadSpec(tb testing.TB) string {
	tb.Helper()
	b, err := os.ReadFile(specPath())
	if err != nil {
		tb.Skipf("Go specification not available: %v", err)
	}
	return string(b)
}

// BenchmarkIngest measures the whole ingest path of the service with the
// local embedder: HTML to chunks, embedding, the durable (fsynced) append
// and indexing. One op ingests the Go specification as one document.
func BenchmarkIngest(b *testing.B) {
	spec := loadSpec(b)
	ctx := context.Background()
	st, err := Open(b.TempDir(), embedder.NewHashing(0), Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	chunks := 0
	for i := 0; b.Loop(); i++ {
		cs, err := chunker.HTML(spec, chunker.Options{})
		if err != nil {
			b.Fatal(err)
		}
		// A new URL each time, so the index grows as in a real ingest.
		res, err := st.Upsert(ctx, "bench", rag.Document{URL: fmt.Sprintf("https://go.dev/ref/spec/%d", i), Title: "spec", Chunks: cs})
		if err != nil {
			b.Fatal(err)
		}
		chunks += res.Chunks
	}
	b.ReportMetric(float64(chunks)/b.Elapsed().Seconds(), "chunks/s")
}

// corpus100k is a 100,000-chunk collection generated from the Go
// specification's vocabulary, built once per test binary because it takes
// seconds.
var corpus100k struct {
	once     sync.Once
	store    *Store
	heapMB   float64
	build    time.Duration
	err      error
	dir      string
	queries  []string
	headings [][]string
}

const bigCorpusChunks = 100_000

// buildCorpus100k generates chunks with a word-bigram Markov chain
// trained on the specification: the vocabulary, word frequencies and
// local word order of the real text, so postings lengths and vector
// statistics are realistic, but with 370 times more chunks.
func buildCorpus100k(tb testing.TB) *Store {
	tb.Helper()
	c := &corpus100k
	c.once.Do(func() {
		spec := loadSpec(tb)
		cs, err := chunker.HTML(spec, chunker.Options{})
		if err != nil {
			c.err = err
			return
		}
		next := map[string][]string{}
		var words []string
		for _, ch := range cs {
			ws := strings.Fields(ch.Text)
			words = append(words, ws...)
			for i := 0; i+1 < len(ws); i++ {
				next[ws[i]] = append(next[ws[i]], ws[i+1])
			}
			c.headings = append(c.headings, ch.HeadingPath)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		gen := func(n int) string {
			var b strings.Builder
			w := words[rng.IntN(len(words))]
			for i := range n {
				if i > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(w)
				if f := next[w]; len(f) > 0 && rng.IntN(8) != 0 {
					w = f[rng.IntN(len(f))]
				} else {
					w = words[rng.IntN(len(words))]
				}
			}
			return b.String()
		}

		runtime.GC()
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		start := time.Now()
		c.dir, c.err = os.MkdirTemp("", "vectorindex-bench-*")
		if c.err != nil {
			return
		}
		st, err := Open(c.dir, embedder.NewHashing(0), Options{NoSync: true})
		if err != nil {
			c.err = err
			return
		}
		const perDoc = 100
		ctx := context.Background()
		for d := 0; d < bigCorpusChunks/perDoc; d++ {
			doc := rag.Document{URL: fmt.Sprintf("https://example.com/doc/%d", d), Title: fmt.Sprintf("Document %d", d)}
			for i := range perDoc {
				doc.Chunks = append(doc.Chunks, chunker.Chunk{
					Text:        gen(70 + rng.IntN(80)),
					HeadingPath: c.headings[rng.IntN(len(c.headings))],
					Index:       i,
				})
			}
			if _, err := st.Upsert(ctx, "big", doc); err != nil {
				c.err = err
				return
			}
		}
		c.build = time.Since(start)
		runtime.GC()
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		c.heapMB = float64(after.HeapInuse-before.HeapInuse) / (1 << 20)
		c.store = st

		raw, err := os.ReadFile("../../testdata/gospec_questions.json")
		if err != nil {
			c.err = err
			return
		}
		var qs struct {
			InScope []struct{ Question string } `json:"in_scope"`
		}
		if c.err = json.Unmarshal(raw, &qs); c.err != nil {
			return
		}
		for _, q := range qs.InScope {
			c.queries = append(c.queries, q.Question)
		}
	})
	if c.err != nil {
		tb.Fatal(c.err)
	}
	return c.store
}

func TestMain(m *testing.M) {
	code := m.Run()
	if corpus100k.store != nil {
		corpus100k.store.Close()
		os.RemoveAll(corpus100k.dir)
	}
	os.Exit(code)
}

// denseFloat ranks every row by the float dot product of qv and its
// dequantised vector: the reference for denseTop.
func (c *collection) denseFloat(qv []float32, n int) []scored {
	top := &topK{k: n}
	for id := range c.rows {
		if c.alive[id] {
			top.offer(int32(id), c.cosine(qv, int32(id)))
		}
	}
	return top.sorted()
}

// BenchmarkRetrieve100k measures hybrid retrieval (top 5) over 100,000
// chunks, one query per op, and reports latency percentiles and the heap
// the collection holds. The corpus is built once (about 10 s); run with
// -benchtime=200x.
func BenchmarkRetrieve100k(b *testing.B) {
	for _, mode := range []rag.Mode{rag.ModeHybrid, rag.ModeDense, rag.ModeBM25} {
		b.Run(mode.String(), func(b *testing.B) {
			st := buildCorpus100k(b)
			qs := corpus100k.queries
			ctx := context.Background()
			var lat []time.Duration
			i := 0
			for b.Loop() {
				t := time.Now()
				if _, err := st.Search(ctx, "big", rag.Query{Text: qs[i%len(qs)], TopK: 5, Mode: mode}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t))
				i++
			}
			slices.Sort(lat)
			pct := func(p float64) float64 {
				return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000
			}
			b.ReportMetric(pct(0.50), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(corpus100k.heapMB, "heap-MB")
			b.ReportMetric(corpus100k.build.Seconds(), "build-s")
			if mode == rag.ModeDense {
				b.ReportMetric(denseRecall(b, st, "big", qs, 10), "recall@10")
			}
		})
	}
}

// denseRecall is the share of the float32 brute-force top n that the
// quantised search (int8 rows, int16 query) also returns.
func denseRecall(tb testing.TB, st *Store, name string, queries []string, n int) float64 {
	tb.Helper()
	h, err := st.get(name)
	if err != nil {
		tb.Fatal(err)
	}
	emb := embedder.NewHashing(0)
	found, total := 0, 0
	for _, q := range queries {
		qv := emb.EmbedText(q)
		exact := h.col.denseFloat(qv, n)
		got := map[int32]bool{}
		for _, s := range h.col.denseTop(qv, n, nil) {
			got[s.row] = true
		}
		for _, s := range exact {
			total++
			if got[s.row] {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}
