// Package logrecord reads structured log records in alert text as what
// they say. Services log JSON objects (MongoDB, Kubernetes components in
// JSON mode, most Node.js and Java loggers) or logfmt lines (Go services,
// Grafana, Loki, Prometheus): a record's message is buried among keys,
// quotes, braces and timestamps that no runbook shares. [Flatten] rewrites
// each such line as its messages (msg, error, reason…) in plain words and
// its other fields as key=value labels, so query derivation and relevance
// judge a record as they judge any other log line.
package logrecord

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/go-logfmt/logfmt"
)

// messageKeys are the fields that say what happened, in the order they
// are written out. A nested field counts by its last key ("attr.error",
// "error.message").
var messageKeys = []string{"msg", "message", "error", "err", "errmsg", "exception", "reason", "cause", "detail", "description", "summary", "event"}

// dropKeys are fields that never say what is wrong: when it happened.
var dropKeys = map[string]bool{
	"t": true, "ts": true, "time": true, "timestamp": true, "@timestamp": true, "date": true, "$date": true,
	"source": true, "logger": true, "thread": true, "id": true, "v": true, "hostname": true, "pid": true,
}

// callerKey is the field naming the source line that logged the record
// ("etcdserver/util.go:170"): its package says which part of the program
// spoke (etcdserver, wal), its file and line nothing.
const callerKey = "caller"

// component is the package of a caller's source line: its directory, or
// the file's name without its extension and line when it has none
// ("etcdserver/util.go:170" → "etcdserver", "resolver.go:88" →
// "resolver").
func component(caller string) string {
	file, _, _ := strings.Cut(caller, ":")
	if i := strings.LastIndexByte(file, '/'); i >= 0 {
		dir := file[:i]
		return dir[strings.LastIndexByte(dir, '/')+1:]
	}
	name, _, _ := strings.Cut(file, ".")
	return name
}

// Flatten returns text with every JSON-object line (possibly after a
// prefix such as a timestamp and host) and every logfmt line rewritten as
// its messages, one per line, then a line of its other fields as
// key=value pairs. Other lines are kept as they are; text without a
// structured record is returned unchanged.
//
// Text that is only records (one per line) is about its most severe one:
// the records are written most severe first ("Sync source candidate
// chosen" at info before "too stale to use candidate" at warning would
// make the first, which says nothing wrong, the summary).
func Flatten(text string) string {
	lines := strings.Split(text, "\n")
	type record struct {
		lines    []string
		severity int
	}
	var recs []record
	onlyRecords := true
	for _, line := range lines {
		if flat, sev, ok := flattenLine(line); ok {
			recs = append(recs, record{flat, sev})
			continue
		}
		if strings.TrimSpace(line) != "" {
			onlyRecords = false
		}
		recs = append(recs, record{[]string{line}, -1})
	}
	if !slices.ContainsFunc(recs, func(r record) bool { return r.severity >= 0 }) {
		return text
	}
	if onlyRecords {
		// Only blank lines are no records here.
		recs = slices.DeleteFunc(recs, func(r record) bool { return r.severity < 0 })
		slices.SortStableFunc(recs, func(a, b record) int { return b.severity - a.severity })
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.lines...)
	}
	return strings.Join(out, "\n")
}

// severities rank a record's level; a record without one ranks as info.
var severities = map[string]int{
	"trace": 0, "debug": 0, "d": 0, "d1": 0, "d2": 0, "info": 1, "i": 1, "notice": 1, "n": 1,
	"warn": 2, "warning": 2, "w": 2, "error": 3, "err": 3, "e": 3, "fatal": 4, "f": 4, "critical": 4, "crit": 4,
	"panic": 4, "emerg": 4, "alert": 4,
}

// severityKeys name a record's level (MongoDB writes "s").
var severityKeys = map[string]bool{"level": true, "lvl": true, "severity": true, "s": true, "loglevel": true}

func severityOf(fields []field) int {
	for _, f := range fields {
		if severityKeys[f.key] {
			if v, ok := severities[strings.ToLower(f.value)]; ok {
				return v
			}
		}
	}
	return 1
}

// field is one key and its value, in the record's order.
type field struct{ key, value string }

// flattenLine rewrites a record (see [render]) and says how severe it is.
func flattenLine(line string) ([]string, int, bool) {
	trimmed := strings.TrimSpace(line)
	if i := strings.IndexByte(trimmed, '{'); i >= 0 && strings.HasSuffix(trimmed, "}") {
		if fields, ok := jsonFields(trimmed[i:]); ok {
			out, ok := render(strings.TrimSpace(trimmed[:i]), fields)
			return out, severityOf(fields), ok
		}
	}
	if fields, ok := logfmtFields(trimmed); ok {
		out, ok := render("", fields)
		return out, severityOf(fields), ok
	}
	return nil, 0, false
}

// jsonFields reads a JSON object's scalar fields, nested objects' under
// dotted keys.
func jsonFields(s string) ([]field, bool) {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var obj map[string]any
	if err := dec.Decode(&obj); err != nil || dec.More() {
		return nil, false
	}
	// Map order is random; the record's own order is its keys' order in
	// the text, which is what a reader sees.
	var fields []field
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, sub := range x {
				walk(join(prefix, k), sub)
			}
		case []any:
			for _, sub := range x {
				if _, isObj := sub.(map[string]any); !isObj {
					walk(prefix, sub)
				}
			}
		case nil:
		default:
			fields = append(fields, field{prefix, fmt.Sprint(x)})
		}
	}
	walk("", obj)
	slices.SortStableFunc(fields, func(a, b field) int {
		return keyAt(s, a.key) - keyAt(s, b.key)
	})
	return fields, len(fields) > 0
}

// keyAt is where key's last part is written as a key in the JSON text s.
func keyAt(s, key string) int {
	k := `"` + last(key) + `"`
	for from := 0; ; {
		i := strings.Index(s[from:], k)
		if i < 0 {
			return len(s)
		}
		rest := strings.TrimLeft(s[from+i+len(k):], " \t")
		if strings.HasPrefix(rest, ":") {
			return from + i
		}
		from += i + len(k)
	}
}

// logfmtFields reads a logfmt line: at least two key=value pairs, one of
// them a message or a level (a line of Prometheus labels is not a log
// record and is left to the readers that know labels).
func logfmtFields(s string) ([]field, bool) {
	if strings.Count(s, "=") < 2 {
		return nil, false
	}
	dec := logfmt.NewDecoder(bytes.NewReader([]byte(s)))
	var fields []field
	record := false
	for dec.ScanRecord() {
		for dec.ScanKeyval() {
			k, v := string(dec.Key()), string(dec.Value())
			if v == "" {
				// A bare word: not logfmt after all.
				return nil, false
			}
			fields = append(fields, field{k, v})
			if k == "level" || k == "lvl" || slices.Contains(messageKeys, last(k)) {
				record = true
			}
		}
	}
	if dec.Err() != nil || !record || len(fields) < 2 {
		return nil, false
	}
	return fields, true
}

// render writes a record: prefix and first message on one line, the other
// messages on their own, the rest as one line of key=value labels.
func render(prefix string, fields []field) ([]string, bool) {
	var msgs, labels []string
	for _, f := range fields {
		k := last(f.key)
		switch {
		case dropKeys[k] || dropKeys[f.key]:
		case f.key == callerKey:
			if c := component(f.value); c != "" {
				labels = append(labels, callerKey+"="+c)
			}
		case slices.Contains(messageKeys, k):
			if !slices.Contains(msgs, f.value) {
				msgs = append(msgs, f.value)
			}
		case strings.ContainsAny(f.value, " \t"):
			// A value with spaces is running text, not a label.
			msgs = append(msgs, f.value)
		default:
			labels = append(labels, labelKey(f.key)+"="+f.value)
		}
	}
	if len(msgs) == 0 {
		return nil, false
	}
	first := strings.TrimSpace(prefix + " " + msgs[0])
	out := append([]string{first}, msgs[1:]...)
	if len(labels) > 0 {
		out = append(out, strings.Join(labels, " "))
	}
	return out, true
}

func join(prefix, k string) string {
	if prefix == "" {
		return k
	}
	return prefix + "." + k
}

// last is a dotted key's last part.
func last(k string) string {
	if i := strings.LastIndexByte(k, '.'); i >= 0 {
		return k[i+1:]
	}
	return k
}

// labelKey makes a dotted or dashed key a label name
// (attr.durationMillis → attr_durationMillis, expected-duration →
// expected_duration).
func labelKey(k string) string {
	return strings.NewReplacer(".", "_", "-", "_", "$", "", "@", "").Replace(k)
}
