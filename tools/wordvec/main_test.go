package main

import (
	"bytes"
	"encoding/binary"
	"os"
	"path/filepath"
	"testing"
)

// TestRun writes the vectors of a small package file: the most frequent
// words made of letters, plus the extra file's words, each quantised with
// its largest component as ±127.
func TestRun(t *testing.T) {
	dir := t.TempDir()
	in := filepath.Join(dir, "in.json")
	extra := filepath.Join(dir, "extra.txt")
	out := filepath.Join(dir, "out.bin")
	pkg := `{"dimensions":2,"words":["the",",","go","iota","rare"],"vectors":{
		"the":[0.5,-1,1,0],",":[1,1,1,1],"go":[2,1,1,2],"iota":[0,-0.25,1,3],"rare":[1,1,1,4]}}`
	if err := os.WriteFile(in, []byte(pkg), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(extra, []byte("<p>The <code>iota</code> identifier</p>"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(in, out, extra, 2); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte("WV8\x01")
	want = binary.LittleEndian.AppendUint32(want, 3)
	want = binary.LittleEndian.AppendUint16(want, 2)
	want = append(want, 3, 't', 'h', 'e', 2, 'g', 'o', 4, 'i', 'o', 't', 'a')
	want = append(want, 64, 0x81, 127, 64, 0, 0x81) // (0.5,-1), (2,1), (0,-0.25)
	if !bytes.Equal(got, want) {
		t.Errorf("wrote % x\nwant      % x", got, want)
	}
}
