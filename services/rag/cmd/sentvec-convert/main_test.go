package main

import (
	"bufio"
	"compress/gzip"
	"encoding/binary"
	"encoding/json"
	"io"
	"math"
	"os"
	"path/filepath"
	"testing"
)

// writePackage writes a TensorFlow.js model directory shaped like the npm
// package's, with every tensor the converter reads (small shapes, values
// from a simple formula) split over two shards, and a vocabulary.
func writePackage(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	type weight struct {
		Name  string `json:"name"`
		Shape []int  `json:"shape"`
		Dtype string `json:"dtype"`
	}
	var weights []weight
	values := map[string][]float32{}
	var buf []byte
	for i, s := range specs() {
		shape := []int{3, 4}
		if s.enc == encFloat32 {
			shape = []int{1, 4}
		}
		n := shape[0] * shape[1]
		data := make([]float32, n)
		for j := range data {
			data[j] = float32(math.Sin(float64(i*31+j))) * float32(j%3+1)
			buf = binary.LittleEndian.AppendUint32(buf, math.Float32bits(data[j]))
		}
		values[s.graph] = data
		weights = append(weights, weight{Name: s.graph, Shape: shape, Dtype: "float32"})
		// An int32 constant of the graph sits between the float weights.
		if i == 2 {
			weights = append(weights, weight{Name: "some/int/const", Shape: []int{2}, Dtype: "int32"})
			buf = binary.LittleEndian.AppendUint32(buf, 7)
			buf = binary.LittleEndian.AppendUint32(buf, 9)
		}
	}
	half := len(buf) / 2
	manifest := map[string]any{
		"modelTopology": map[string]any{},
		"weightsManifest": []any{map[string]any{
			"paths":   []string{"group1-shard1of2", "group1-shard2of2"},
			"weights": weights,
		}},
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{
		"model.json":       raw,
		"group1-shard1of2": buf[:half],
		"group1-shard2of2": buf[half:],
		"vocab.json":       []byte(`[["<unk>", 0], ["▁the", -3.5], ["s", -3.25]]`),
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return values
}

func TestConvert(t *testing.T) {
	dir := t.TempDir()
	values := writePackage(t, dir)
	out := filepath.Join(dir, "model.bin.gz")
	if err := convert(dir, out); err != nil {
		t.Fatalf("convert: %v", err)
	}
	f, err := os.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(zr)
	head := make([]byte, len(magic))
	mustRead(t, r, head)
	if string(head) != magic {
		t.Fatalf("file starts %q, want %q", head, magic)
	}
	wantVocab := []piece{{"<unk>", 0}, {"▁the", -3.5}, {"s", -3.25}}
	if n := readU32(t, r); int(n) != len(wantVocab) {
		t.Fatalf("vocabulary of %d pieces, want %d", n, len(wantVocab))
	}
	for _, want := range wantVocab {
		p := make([]byte, readU32(t, r))
		mustRead(t, r, p)
		var score float64
		if err := binary.Read(r, binary.LittleEndian, &score); err != nil {
			t.Fatal(err)
		}
		if string(p) != want.piece || score != want.score {
			t.Errorf("vocabulary entry %q %v, want %q %v", p, score, want.piece, want.score)
		}
	}
	all := specs()
	if n := readU32(t, r); int(n) != len(all) {
		t.Fatalf("%d tensors, want %d", n, len(all))
	}
	for _, s := range all {
		name := make([]byte, readU32(t, r))
		mustRead(t, r, name)
		enc, _ := r.ReadByte()
		if string(name) != s.name || enc != s.enc {
			t.Fatalf("tensor %q encoding %d, want %q %d", name, enc, s.name, s.enc)
		}
		shape := make([]int, readU32(t, r))
		n := 1
		for i := range shape {
			shape[i] = int(readU32(t, r))
			n *= shape[i]
		}
		want := values[s.graph]
		if n != len(want) {
			t.Fatalf("tensor %s has %d values, want %d", s.name, n, len(want))
		}
		got := make([]float32, n)
		switch enc {
		case encFloat32:
			if len(shape) != 1 {
				t.Errorf("vector %s has shape %v, want its leading 1 dropped", s.name, shape)
			}
			if err := binary.Read(r, binary.LittleEndian, got); err != nil {
				t.Fatal(err)
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("%s[%d] = %v, want %v exactly", s.name, i, got[i], want[i])
				}
			}
		default:
			rows, cols := shape[0], shape[1]
			scales := make([]float32, cols)
			if enc == encInt8Rows {
				scales = make([]float32, rows)
			}
			if err := binary.Read(r, binary.LittleEndian, scales); err != nil {
				t.Fatal(err)
			}
			q := make([]byte, n)
			mustRead(t, r, q)
			for i := range rows {
				for j := range cols {
					k := j
					if enc == encInt8Rows {
						k = i
					}
					sc := scales[k]
					v := float32(int8(q[i*cols+j])) * sc
					// Symmetric rounding: off by at most half a step.
					if d := math.Abs(float64(v - want[i*cols+j])); d > float64(sc)/2+1e-7 {
						t.Errorf("%s[%d,%d] = %v, want %v ± %v", s.name, i, j, v, want[i*cols+j], sc/2)
					}
				}
			}
		}
	}
	if _, err := r.ReadByte(); err != io.EOF {
		t.Errorf("bytes after the last tensor (err %v)", err)
	}
}

func TestConvertReportsAMissingTensor(t *testing.T) {
	dir := t.TempDir()
	writePackage(t, dir)
	raw, err := os.ReadFile(filepath.Join(dir, "model.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	group := m["weightsManifest"].([]any)[0].(map[string]any)
	ws := group["weights"].([]any)
	// Renaming the embedding table keeps the shards' layout valid.
	ws[0].(map[string]any)["name"] = "renamed"
	raw, _ = json.Marshal(m)
	if err := os.WriteFile(filepath.Join(dir, "model.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := convert(dir, filepath.Join(dir, "out.gz")); err == nil {
		t.Error("convert succeeded without the embedding table")
	}
}

func mustRead(t *testing.T, r io.Reader, b []byte) {
	t.Helper()
	if _, err := io.ReadFull(r, b); err != nil {
		t.Fatal(err)
	}
}

func readU32(t *testing.T, r io.Reader) uint32 {
	t.Helper()
	var b [4]byte
	mustRead(t, r, b[:])
	return binary.LittleEndian.Uint32(b[:])
}
