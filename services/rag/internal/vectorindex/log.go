package vectorindex

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"math"
	"os"
	"slices"

	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// On-disk format, one file per collection ("<name>.rag"):
//
//	magic "RAGLOG1\n"
//	frame*: u32 payload length | u32 CRC-32C of payload | payload
//	payload: op byte, then op-specific fields (uvarint lengths, strings as
//	         length+bytes, float32 little-endian)
//
// Every change is one appended frame, fsynced before the call returns, so
// a crash loses nothing acknowledged; a torn last frame (length or CRC
// wrong at the end of the file) is cut off on open. When more than half of
// the file is superseded records, the live state is rewritten to a new
// file that atomically replaces the old one.
//
// Why not bbolt or gob: the whole index lives in memory anyway (BM25
// postings and the vector matrix are rebuilt on load), so the file only
// needs fast sequential replay and cheap appends; a page-based B-tree would
// add write amplification and a dependency for nothing. Vectors are stored
// already quantised to int8, as they are held in memory, so a reopened
// store returns bit-for-bit the results it returned before closing.
const logMagic = "RAGLOG1\n"

const (
	opSettings byte = 1
	opUpsert   byte = 2
	opDelete   byte = 3
)

// maxFrame bounds a frame so that a corrupt length cannot make replay
// allocate gigabytes.
const maxFrame = 1 << 30

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// settingsRecord is the persisted form of a collection's settings.
type settingsRecord struct {
	rag.Settings
	Dimensions int `json:"dimensions"`
}

// storedChunk is a chunk as persisted and held in memory.
type storedChunk struct {
	index    int
	headings []string
	text     string
	scale    float32
	vec      []int8
}

type upsertRecord struct {
	url, title string
	meta       map[string]string
	chunks     []storedChunk
}

// encoder builds one frame payload.
type encoder struct{ buf []byte }

func (e *encoder) byte(b byte)     { e.buf = append(e.buf, b) }
func (e *encoder) uvarint(v int)   { e.buf = binary.AppendUvarint(e.buf, uint64(v)) }
func (e *encoder) string(s string) { e.uvarint(len(s)); e.buf = append(e.buf, s...) }
func (e *encoder) float32(f float32) {
	e.buf = binary.LittleEndian.AppendUint32(e.buf, math.Float32bits(f))
}

func encodeSettings(r settingsRecord) ([]byte, error) {
	js, err := json.Marshal(r)
	if err != nil {
		return nil, err
	}
	e := encoder{buf: make([]byte, 0, len(js)+8)}
	e.byte(opSettings)
	e.string(string(js))
	return e.buf, nil
}

func encodeUpsert(r *upsertRecord) []byte {
	size := 64 + len(r.url) + len(r.title)
	for _, c := range r.chunks {
		size += len(c.text) + len(c.vec) + 32
	}
	e := encoder{buf: make([]byte, 0, size)}
	e.byte(opUpsert)
	e.string(r.url)
	e.string(r.title)
	e.uvarint(len(r.meta))
	for _, k := range slices.Sorted(maps.Keys(r.meta)) {
		e.string(k)
		e.string(r.meta[k])
	}
	e.uvarint(len(r.chunks))
	for _, c := range r.chunks {
		e.uvarint(c.index)
		e.uvarint(len(c.headings))
		for _, h := range c.headings {
			e.string(h)
		}
		e.string(c.text)
		e.float32(c.scale)
		e.uvarint(len(c.vec))
		for _, x := range c.vec {
			e.buf = append(e.buf, byte(x))
		}
	}
	return e.buf
}

func encodeDelete(url string) []byte {
	e := encoder{}
	e.byte(opDelete)
	e.string(url)
	return e.buf
}

// decoder reads one frame payload; the first error sticks.
type decoder struct {
	buf []byte
	err error
}

func (d *decoder) fail() {
	if d.err == nil {
		d.err = errors.New("truncated record")
	}
}

func (d *decoder) uvarint() int {
	v, n := binary.Uvarint(d.buf)
	if n <= 0 || v > maxFrame {
		d.fail()
		return 0
	}
	d.buf = d.buf[n:]
	return int(v)
}

func (d *decoder) bytes(n int) []byte {
	if len(d.buf) < n {
		d.fail()
		return nil
	}
	b := d.buf[:n:n]
	d.buf = d.buf[n:]
	return b
}

func (d *decoder) string() string { return string(d.bytes(d.uvarint())) }

func (d *decoder) float32() float32 {
	b := d.bytes(4)
	if b == nil {
		return 0
	}
	return math.Float32frombits(binary.LittleEndian.Uint32(b))
}

func decodeSettings(d *decoder) (settingsRecord, error) {
	var r settingsRecord
	js := d.bytes(d.uvarint())
	if d.err != nil {
		return r, d.err
	}
	err := json.Unmarshal(js, &r)
	return r, err
}

func decodeUpsert(d *decoder) (*upsertRecord, error) {
	r := &upsertRecord{url: d.string(), title: d.string()}
	if n := d.uvarint(); n > 0 && d.err == nil {
		r.meta = make(map[string]string, n)
		for range n {
			k := d.string()
			r.meta[k] = d.string()
		}
	}
	n := d.uvarint()
	if d.err != nil {
		return nil, d.err
	}
	r.chunks = make([]storedChunk, 0, min(n, 1<<16))
	for range n {
		c := storedChunk{index: d.uvarint()}
		if nh := d.uvarint(); nh > 0 && d.err == nil {
			c.headings = make([]string, min(nh, 64))[:0]
			for range nh {
				c.headings = append(c.headings, d.string())
			}
		}
		c.text = d.string()
		c.scale = d.float32()
		raw := d.bytes(d.uvarint())
		if d.err != nil {
			return nil, d.err
		}
		c.vec = make([]int8, len(raw))
		for i, b := range raw {
			c.vec[i] = int8(b)
		}
		r.chunks = append(r.chunks, c)
	}
	return r, d.err
}

// appendFrame writes one framed payload and reports the bytes written.
func appendFrame(w io.Writer, payload []byte) (int64, error) {
	var hdr [8]byte
	binary.LittleEndian.PutUint32(hdr[0:4], uint32(len(payload)))
	binary.LittleEndian.PutUint32(hdr[4:8], crc32.Checksum(payload, crcTable))
	if _, err := w.Write(hdr[:]); err != nil {
		return 0, err
	}
	if _, err := w.Write(payload); err != nil {
		return 0, err
	}
	return int64(len(hdr) + len(payload)), nil
}

// replay reads every frame of the log at path and hands its payload to
// apply. It returns the offset just past the last good frame; a frame that
// is torn at the very end of the file ends the replay without error, so
// the caller truncates it away. Damage before the end is an error: data
// after it would be silently lost otherwise.
func replay(path string, apply func(payload []byte) error) (int64, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return 0, err
	}
	size := st.Size()
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(logMagic))
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != logMagic {
		return 0, fmt.Errorf("%s: not a collection log", path)
	}
	off := int64(len(logMagic))
	var hdr [8]byte
	var payload []byte
	for {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return off, nil
			}
			return off, nil // a partial header can only be a torn tail
		}
		n := int64(binary.LittleEndian.Uint32(hdr[0:4]))
		sum := binary.LittleEndian.Uint32(hdr[4:8])
		end := off + 8 + n
		if n > maxFrame || end > size {
			return off, nil
		}
		if cap(payload) < int(n) {
			payload = make([]byte, n)
		}
		payload = payload[:n]
		if _, err := io.ReadFull(r, payload); err != nil {
			return off, nil
		}
		if crc32.Checksum(payload, crcTable) != sum {
			if end == size {
				return off, nil
			}
			return off, fmt.Errorf("%s: corrupt record at offset %d", path, off)
		}
		if err := apply(payload); err != nil {
			return off, fmt.Errorf("%s: record at offset %d: %w", path, off, err)
		}
		off = end
	}
}
