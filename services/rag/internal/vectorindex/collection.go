package vectorindex

import (
	"math"
	"slices"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// doc is one ingested document (one URL) of a collection.
type doc struct {
	url, title string
	meta       map[string]string
	rows       []int32
	frameSize  int64 // bytes its upsert frame takes in the log
}

// row is one chunk as held in memory.
type row struct {
	doc        *doc
	chunkIndex int32
	length     int32 // BM25 document length in terms
	headings   []string
	text       string
}

// collection is the in-memory index of one collection. Rows are appended;
// deleting a document marks its rows dead, and compact drops dead rows
// once they make up a quarter of the index, so replacing documents keeps
// neither stale results (dead rows are never returned) nor unbounded
// garbage.
type collection struct {
	name     string
	settings rag.Settings
	dims     int

	docs  map[string]*doc
	rows  []row
	alive []bool
	live  int

	// Dense view: row-major int8 vectors, each with the scale that makes
	// it a unit vector.
	vecs   []int8
	scales []float32

	// Lexical view (BM25): postings pack row<<8 | min(tf, 255).
	postings map[string][]uint32
	df       map[string]int32
	totalLen int64
}

func newCollection(name string, s rag.Settings, dims int) *collection {
	return &collection{
		name:     name,
		settings: s,
		dims:     dims,
		docs:     map[string]*doc{},
		postings: map[string][]uint32{},
		df:       map[string]int32{},
	}
}

// quantize converts a vector to int8 with the scale that turns the int8
// vector back into a unit vector. The largest component maps to ±127; the
// error in a cosine is below 0.01, far under the gap between relevant and
// irrelevant chunks.
func quantize(v []float32) ([]int8, float32) {
	var maxAbs float32
	for _, x := range v {
		maxAbs = max(maxAbs, x, -x)
	}
	q := make([]int8, len(v))
	if maxAbs == 0 {
		return q, 0
	}
	k := 127 / maxAbs
	var norm float64
	for i, x := range v {
		r := int8(math.Round(float64(x * k)))
		q[i] = r
		norm += float64(r) * float64(r)
	}
	if norm == 0 {
		return q, 0
	}
	return q, float32(1 / math.Sqrt(norm))
}

// add appends a document's chunks; the caller has removed any previous
// version of the URL.
func (c *collection) add(r *upsertRecord, frameSize int64) {
	if len(r.chunks) == 0 {
		return
	}
	d := &doc{url: r.url, title: r.title, meta: r.meta, frameSize: frameSize}
	c.docs[r.url] = d
	for _, ch := range r.chunks {
		id := int32(len(c.rows))
		d.rows = append(d.rows, id)
		terms := embedder.Analyze(rag.IndexText(ch.headings, ch.text))
		c.rows = append(c.rows, row{doc: d, chunkIndex: int32(ch.index), length: int32(len(terms)), headings: ch.headings, text: ch.text})
		c.alive = append(c.alive, true)
		c.live++
		c.totalLen += int64(len(terms))

		c.vecs = append(c.vecs, ch.vec...)
		c.scales = append(c.scales, ch.scale)

		slices.Sort(terms)
		for i := 0; i < len(terms); {
			j := i + 1
			for j < len(terms) && terms[j] == terms[i] {
				j++
			}
			tf := min(j-i, 255)
			c.postings[terms[i]] = append(c.postings[terms[i]], uint32(id)<<8|uint32(tf))
			c.df[terms[i]]++
			i = j
		}
	}
}

// remove marks a document's rows dead and forgets the document.
func (c *collection) remove(url string) bool {
	d, ok := c.docs[url]
	if !ok {
		return false
	}
	for _, id := range d.rows {
		if !c.alive[id] {
			continue
		}
		c.alive[id] = false
		c.live--
		r := &c.rows[id]
		c.totalLen -= int64(r.length)
		terms := embedder.Analyze(rag.IndexText(r.headings, r.text))
		slices.Sort(terms)
		for i, t := range terms {
			if i > 0 && terms[i-1] == t {
				continue
			}
			if c.df[t]--; c.df[t] <= 0 {
				delete(c.df, t)
			}
		}
	}
	delete(c.docs, url)
	c.maybeCompact()
	return true
}

// maybeCompact rewrites the in-memory index without dead rows once they
// are a quarter of all rows. It renumbers rows and filters postings; no
// text is re-analysed.
func (c *collection) maybeCompact() {
	dead := len(c.rows) - c.live
	if dead == 0 || dead*4 < len(c.rows) {
		return
	}
	newID := make([]int32, len(c.rows))
	n := 0
	for id := range c.rows {
		if !c.alive[id] {
			newID[id] = -1
			continue
		}
		newID[id] = int32(n)
		c.rows[n] = c.rows[id]
		copy(c.vecs[n*c.dims:(n+1)*c.dims], c.vecs[id*c.dims:(id+1)*c.dims])
		c.scales[n] = c.scales[id]
		n++
	}
	clear(c.rows[n:])
	c.rows = slices.Clip(c.rows[:n])
	c.alive = c.alive[:n]
	for i := range c.alive {
		c.alive[i] = true
	}
	c.vecs = slices.Clip(c.vecs[:n*c.dims])
	c.scales = slices.Clip(c.scales[:n])
	for _, d := range c.docs {
		for i, id := range d.rows {
			d.rows[i] = newID[id]
		}
	}
	for t, ps := range c.postings {
		out := ps[:0]
		for _, p := range ps {
			if id := newID[p>>8]; id >= 0 {
				out = append(out, uint32(id)<<8|p&0xff)
			}
		}
		if len(out) == 0 {
			delete(c.postings, t)
			continue
		}
		c.postings[t] = slices.Clip(out)
	}
}

// liveBytes is the size the log would have if rewritten now.
func (c *collection) liveBytes() int64 {
	var n int64
	for _, d := range c.docs {
		n += d.frameSize
	}
	return n
}
