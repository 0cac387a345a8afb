// Package logtest collects a service's log output in tests.
package logtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"
)

// Buffer is an io.Writer that many goroutines may write to at once (a
// service's handlers and workers, a child process's output copier), read
// back whole with String or, for slog's JSON handler, as records.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// Records returns the JSON records written so far, one per line as slog's
// JSON handler writes them, failing t on a line that is not JSON.
func (b *Buffer) Records(t testing.TB) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(b.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var rec map[string]any
		if err := json.Unmarshal(sc.Bytes(), &rec); err != nil {
			t.Fatalf("log line %q is not JSON: %v", sc.Text(), err)
		}
		out = append(out, rec)
	}
	return out
}

// Named returns the JSON records whose msg is msg, in the order written.
func (b *Buffer) Named(t testing.TB, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, rec := range b.Records(t) {
		if rec["msg"] == msg {
			out = append(out, rec)
		}
	}
	return out
}
