// Package embedder provides the offline text embedder of the rag service
// and the term analysis it shares with the lexical index.
//
// The local embedder is a feature-hashing model: no weights to download, no
// network, identical output on every machine. It is much weaker than a
// neural embedder at synonyms, but it is a real similarity model: texts
// that share words, word pairs or word fragments get a high cosine.
package embedder

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
)

// DefaultDimensions is the vector size of [NewHashing] when none is given.
// 384 keeps hash collisions rare for chunk-sized texts (a 1,000-character
// chunk has about 600 distinct features) while a 100,000-chunk collection
// still fits in 40 MB as int8.
const DefaultDimensions = 384

// Feature groups and their weights in the final vector. Each group is
// normalised on its own before weighting, so the many character trigrams
// of a text cannot drown its words: words carry the topic, word pairs
// carry phrases ("closed channel"), trigrams catch inflections and
// compounds the stemmer misses ("chan" in "channel", "goroutine" in
// "goroutines").
const (
	groupWord    = 1
	groupBigram  = 2
	groupTrigram = 3

	weightWord    = 1.0
	weightBigram  = 0.6
	weightTrigram = 0.5
)

// Hashing is the local embedder: it hashes word unigrams, bigrams of
// adjacent content words and character trigrams of content words into a
// fixed number of signed buckets, weights each feature by sublinear term
// frequency (1 + ln tf) and L2-normalises the result.
//
// It needs no corpus statistics (no IDF), so a chunk's vector never changes
// when other documents are added; stop words are dropped instead. It is
// deterministic and safe for concurrent use.
type Hashing struct {
	dims int
	pool sync.Pool // of *scratch
}

// scratch holds per-call buffers so that embedding a batch allocates only
// the output vectors.
type scratch struct {
	feats [4][]uint64
	acc   []float64
	words []string
	buf   []byte
}

// NewHashing returns a local embedder producing vectors of dims
// dimensions; dims <= 0 selects [DefaultDimensions].
func NewHashing(dims int) *Hashing {
	if dims <= 0 {
		dims = DefaultDimensions
	}
	h := &Hashing{dims: dims}
	h.pool.New = func() any {
		return &scratch{acc: make([]float64, dims)}
	}
	return h
}

// Name identifies the model and its dimension. Collections record it, so
// vectors made by a different model are never compared with these.
func (h *Hashing) Name() string { return fmt.Sprintf("local-hash-v1-%d", h.dims) }

// Dimensions returns the length of every vector Embed returns.
func (h *Hashing) Dimensions() int { return h.dims }

// Embed returns one L2-normalised vector per text. A text without any
// content word yields the zero vector, which has cosine 0 with everything.
func (h *Hashing) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	// One backing array for the whole batch: fewer allocations, and the
	// vectors of a batch are used together anyway.
	backing := make([]float32, len(texts)*h.dims)
	s := h.pool.Get().(*scratch)
	defer h.pool.Put(s)
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		v := backing[i*h.dims : (i+1)*h.dims : (i+1)*h.dims]
		h.embedOne(s, t, v)
		out[i] = v
	}
	return out, nil
}

// EmbedText embeds a single text; a convenience for callers that hold no
// context, such as tests and benchmarks.
func (h *Hashing) EmbedText(text string) []float32 {
	v := make([]float32, h.dims)
	s := h.pool.Get().(*scratch)
	h.embedOne(s, text, v)
	h.pool.Put(s)
	return v
}

func (h *Hashing) embedOne(s *scratch, text string, v []float32) {
	for g := range s.feats {
		s.feats[g] = s.feats[g][:0]
	}
	s.words = s.words[:0]
	eachWord(text, func(w string) {
		if !IsStopWord(w) {
			s.words = append(s.words, w)
		}
	})
	var prev uint64
	for i, w := range s.words {
		st := stem(w)
		hw := hashString(offset64, st)
		s.feats[groupWord] = append(s.feats[groupWord], mix(hw, groupWord))
		if i > 0 {
			s.feats[groupBigram] = append(s.feats[groupBigram], mix(prev*prime64^hw, groupBigram))
		}
		prev = hw
		// Trigrams of the word with boundary markers, so that short words
		// still contribute ("go" -> "^go", "go$").
		s.buf = append(append(append(s.buf[:0], '^'), w...), '$')
		for j := 0; j+3 <= len(s.buf); j++ {
			s.feats[groupTrigram] = append(s.feats[groupTrigram], mix(hashBytes(offset64, s.buf[j:j+3]), groupTrigram))
		}
	}

	for i := range v {
		v[i] = 0
	}
	weights := [4]float64{groupWord: weightWord, groupBigram: weightBigram, groupTrigram: weightTrigram}

	for g := groupWord; g <= groupTrigram; g++ {
		acc := s.acc
		clear(acc)
		// Sorting groups equal features for term counting and fixes the
		// summation order, which keeps the output bit-for-bit reproducible.
		feats := s.feats[g]
		slices.Sort(feats)
		for i := 0; i < len(feats); {
			f := feats[i]
			j := i + 1
			for j < len(feats) && feats[j] == f {
				j++
			}
			w := 1 + math.Log(float64(j-i))
			i = j
			idx := int((f >> 32) * uint64(h.dims) >> 32)
			if f&1 == 1 {
				w = -w
			}
			acc[idx] += w
		}
		var norm float64
		for _, x := range acc {
			norm += x * x
		}
		if norm == 0 {
			continue
		}
		scale := weights[g] / math.Sqrt(norm)
		for i, x := range acc {
			v[i] += float32(x * scale)
		}
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range v {
		v[i] *= inv
	}
}

// FNV-1a constants; FNV is fast on short strings and fixed forever, which a
// stored-vector format needs (hash/maphash is seeded per process).
const (
	offset64 = 14695981039346656037
	prime64  = 1099511628211
)

func hashString(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime64
	}
	return h
}

func hashBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= prime64
	}
	return h
}

// mix finalises a feature hash with its group id (so the word "abc" and the
// trigram "abc" land in different buckets) and spreads the bits, since FNV's
// high bits are weak for short inputs and the bucket index uses them.
func mix(h uint64, group uint64) uint64 {
	h ^= group * 0x9e3779b97f4a7c15
	h ^= h >> 33
	h *= 0xff51afd7ed558ccd
	h ^= h >> 33
	h *= 0xc4ceb9fe1a85ec53
	h ^= h >> 33
	return h
}
