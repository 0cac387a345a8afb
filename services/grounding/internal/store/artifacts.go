package store

import (
	"bytes"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Artifacts keeps raw provider responses and fetched page HTML as files
// under one directory, <dir>/YYYY/MM/DD/<message id>.json and
// <message id>.<citation id>.html, redacted before they are written. dir
// is DATA_DIR/artifacts: paths are recorded and returned relative to its
// parent (DATA_DIR), never as absolute server paths, and archived
// artifacts go to DATA_DIR/archive. Directories are created 0700 and
// files 0600: they are readable by the service's user only.
type Artifacts struct {
	dir, root string
	secrets   []string
	made      sync.Map // directories known to exist
}

// File and directory modes under DATA_DIR.
const (
	fileMode = 0o600
	dirMode  = 0o700
)

// NewArtifacts returns the artifact directory dir (created on first
// write). secrets are literal values (API keys) that are redacted wherever
// they appear, besides the patterns of Redact.
func NewArtifacts(dir string, secrets ...string) (*Artifacts, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact directory %q: %w", dir, err)
	}
	a := &Artifacts{dir: abs, root: filepath.Dir(abs)}
	for _, s := range secrets {
		if len(s) >= 6 {
			a.secrets = append(a.secrets, s)
		}
	}
	return a, nil
}

// Dir is the absolute artifact directory.
func (a *Artifacts) Dir() string { return a.dir }

// ArchiveDir is the absolute directory of compressed archived artifacts.
func (a *Artifacts) ArchiveDir() string { return filepath.Join(a.root, "archive") }

// Redact is the package's Redact plus the artifact directory's literal
// secrets.
func (a *Artifacts) Redact(s string) string {
	s = Redact(s)
	for _, sec := range a.secrets {
		s = strings.ReplaceAll(s, sec, redacted)
	}
	return s
}

// Write stores raw, redacted, as the artifact of message id created at t
// and returns its path relative to DATA_DIR. Ids are unique, so the file
// is created exclusively and written in place: a crash mid-write can
// leave a partial file, but never one that a stored message points to, as
// the message row is written after it.
func (a *Artifacts) Write(id string, t time.Time, raw []byte) (string, error) {
	return a.write(id+".json", t, raw)
}

// WriteHTML stores a fetched page's HTML, redacted, as the restricted
// artifact of a citation and returns its path relative to DATA_DIR.
func (a *Artifacts) WriteHTML(messageID, citationID string, t time.Time, html string) (string, error) {
	if !fileName(citationID) {
		return "", fmt.Errorf("citation id %q: not a file name", citationID)
	}
	return a.write(messageID+"."+citationID+".html", t, []byte(html))
}

func fileName(id string) bool {
	return id != "" && !strings.ContainsAny(id, `/\`) && id != "." && id != ".."
}

func (a *Artifacts) write(name string, t time.Time, raw []byte) (string, error) {
	if !fileName(strings.SplitN(name, ".", 2)[0]) || !fileName(name) {
		return "", fmt.Errorf("artifact name %q: not a file name", name)
	}
	t = t.UTC()
	dir := filepath.Join(a.dir, t.Format("2006"), t.Format("01"), t.Format("02"))
	if err := a.mkdir(dir); err != nil {
		return "", err
	}
	path := filepath.Join(dir, name)
	if err := writeExclusive(path, []byte(a.Redact(string(raw)))); err != nil {
		return "", fmt.Errorf("writing artifact: %w", err)
	}
	return a.rel(path), nil
}

func (a *Artifacts) mkdir(dir string) error {
	if _, ok := a.made.Load(dir); ok {
		return nil
	}
	if err := os.MkdirAll(dir, dirMode); err != nil {
		return fmt.Errorf("creating artifact directory: %w", err)
	}
	a.made.Store(dir, true)
	return nil
}

func writeExclusive(path string, body []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, fileMode)
	if err != nil {
		return err
	}
	_, werr := f.Write(body)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(path)
		return err
	}
	return nil
}

// rel is path relative to DATA_DIR, with forward slashes.
func (a *Artifacts) rel(path string) string {
	r, err := filepath.Rel(a.root, path)
	if err != nil {
		return ""
	}
	return filepath.ToSlash(r)
}

// Display is a recorded path as clients see it: relative to DATA_DIR.
// Rows written before paths were relative hold absolute paths; those
// inside DATA_DIR are shown relative, any other as its file name only.
func (a *Artifacts) Display(path string) string {
	if path == "" || !filepath.IsAbs(path) {
		return path
	}
	if r, err := a.resolve(path); err == nil {
		return a.rel(r)
	}
	return filepath.Base(path)
}

// resolve turns a recorded path (relative to DATA_DIR, or absolute from
// older rows) into an absolute one inside DATA_DIR/artifacts or
// DATA_DIR/archive; anything else is refused.
func (a *Artifacts) resolve(path string) (string, error) {
	abs := path
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(a.root, filepath.FromSlash(path))
	}
	abs = filepath.Clean(abs)
	for _, base := range []string{a.dir, a.ArchiveDir()} {
		rel, err := filepath.Rel(base, abs)
		if err == nil && rel != "." && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
			return abs, nil
		}
	}
	return "", fmt.Errorf("artifact path %q is outside %s", path, a.root)
}

// Read returns an artifact's content, decompressing an archived one.
func (a *Artifacts) Read(path string) ([]byte, error) {
	abs, err := a.resolve(path)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(abs)
	if err != nil {
		return nil, fmt.Errorf("reading artifact: %w", err)
	}
	if !strings.HasSuffix(abs, ".gz") {
		return b, nil
	}
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("reading archived artifact: %w", err)
	}
	defer func() { _ = zr.Close() }()
	out, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("reading archived artifact: %w", err)
	}
	return out, nil
}

// Remove deletes the artifact at path. A missing file is not an error; a
// path outside the artifact and archive directories is refused.
func (a *Artifacts) Remove(path string) error {
	abs, err := a.resolve(path)
	if err != nil {
		return err
	}
	if err := os.Remove(abs); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing artifact: %w", err)
	}
	return nil
}

// ArchiveMode is how retention archives raw artifacts.
type ArchiveMode string

// Archive modes.
const (
	// ArchiveCompress moves the artifact, gzip-compressed, to
	// DATA_DIR/archive (same dated layout, ".gz" added).
	ArchiveCompress ArchiveMode = "compress"
	// ArchiveDesensitize rewrites the artifact in place keeping only its
	// shape: JSON keys, numbers and booleans; HTML tags without text or
	// attribute values.
	ArchiveDesensitize ArchiveMode = "desensitize"
)

// ParseArchiveMode reads GROUNDING_ARCHIVE_MODE.
func ParseArchiveMode(s string) (ArchiveMode, error) {
	switch m := ArchiveMode(strings.ToLower(strings.TrimSpace(s))); m {
	case ArchiveCompress, ArchiveDesensitize:
		return m, nil
	case "desensitise":
		return ArchiveDesensitize, nil
	}
	return "", fmt.Errorf("must be compress or desensitize, got %q", s)
}

// Archive archives the artifact at path and returns its new path. A
// missing file is archived as nothing (the returned path is "").
func (a *Artifacts) Archive(path string, mode ArchiveMode) (string, error) {
	abs, err := a.resolve(path)
	if err != nil {
		return "", err
	}
	b, err := os.ReadFile(abs)
	if errors.Is(err, fs.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("archiving artifact: %w", err)
	}
	if mode == ArchiveDesensitize {
		tmp := abs + ".tmp"
		_ = os.Remove(tmp)
		if err := writeExclusive(tmp, Desensitize(b)); err != nil {
			return "", fmt.Errorf("archiving artifact: %w", err)
		}
		if err := os.Rename(tmp, abs); err != nil {
			_ = os.Remove(tmp)
			return "", fmt.Errorf("archiving artifact: %w", err)
		}
		return a.rel(abs), nil
	}
	sub, err := filepath.Rel(a.dir, abs)
	if err != nil || strings.HasPrefix(sub, "..") {
		return "", fmt.Errorf("artifact path %q is not in %s", path, a.dir)
	}
	dst := filepath.Join(a.ArchiveDir(), sub+".gz")
	if err := a.mkdir(filepath.Dir(dst)); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, werr := zw.Write(b)
	if err := errors.Join(werr, zw.Close()); err != nil {
		return "", fmt.Errorf("archiving artifact: %w", err)
	}
	_ = os.Remove(dst) // a previous attempt that failed before updating the row
	if err := writeExclusive(dst, buf.Bytes()); err != nil {
		return "", fmt.Errorf("archiving artifact: %w", err)
	}
	if err := os.Remove(abs); err != nil {
		return "", fmt.Errorf("archiving artifact: %w", err)
	}
	return a.rel(dst), nil
}

var (
	htmlTextRE = regexp.MustCompile(`>[^<]*[^<\s][^<]*<`)
	htmlAttrRE = regexp.MustCompile(`(\s[A-Za-z_:][-A-Za-z0-9_:.]*\s*=\s*)("[^"]*"|'[^']*'|[^\s"'>]+)`)
)

// Desensitize keeps only the shape of an artifact: of JSON its keys,
// numbers, booleans and nulls (every string becomes "[REMOVED]"); of
// anything else, taken as HTML, its tags without text or attribute values.
func Desensitize(b []byte) []byte {
	var v any
	if json.Unmarshal(b, &v) == nil {
		out, err := json.MarshalIndent(scrub(v), "", "  ")
		if err == nil {
			return out
		}
	}
	s := htmlTextRE.ReplaceAllString(string(b), ">[REMOVED]<")
	s = htmlAttrRE.ReplaceAllString(s, `${1}""`)
	// Text before the first tag and after the last goes too.
	first, last := strings.IndexByte(s, '<'), strings.LastIndexByte(s, '>')
	if first < 0 || last < first {
		return []byte("[REMOVED]")
	}
	s = s[first : last+1]
	return []byte(s)
}

func scrub(v any) any {
	switch t := v.(type) {
	case string:
		return "[REMOVED]"
	case []any:
		for i := range t {
			t[i] = scrub(t[i])
		}
		return t
	case map[string]any:
		for k := range t {
			t[k] = scrub(t[k])
		}
		return t
	default:
		return v
	}
}

const redacted = "[REDACTED]"

var (
	emailRE  = regexp.MustCompile(`[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}`)
	bearerRE = regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=-]{8,}`)
	// tokenREs are token formats, each with a cheap test that every match
	// passes, so the regexp (slow over a whole artifact) runs only where
	// it could match.
	tokenREs = []struct {
		could func(t text) bool
		re    *regexp.Regexp
	}{
		{wordStart("AIza"), regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`)},                                     // Google API keys
		{wordStart("sk-"), regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)},                                       // OpenAI-style keys
		{wordStart("gsk_"), regexp.MustCompile(`\bgsk_[A-Za-z0-9]{16,}`)},                                       // Groq keys
		{wordStart("ghp_", "gho_", "ghu_", "ghs_", "ghr_"), regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`)}, // GitHub tokens
		{wordStart("xox"), regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},                                // Slack tokens
		{wordStart("eyJ"), regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)},  // JWTs
		{telegramToken, regexp.MustCompile(`\b\d{6,12}:[A-Za-z0-9_-]{30,}`)},                                    // Telegram bot tokens
		{containsFold("akia", "asia"), regexp.MustCompile(`(?i)\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},                 // AWS access key ids
		{containsFold("private key"), regexp.MustCompile(`(?i)-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)},
	}
	// A key may carry a prefix: DATABASE_PASSWORD, x-api-key, db.token.
	assignRE = regexp.MustCompile(`(?i)\b((?:[a-z0-9]+[_.-])*(?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|token|secret|password|passwd|pwd|key)["']?\s*[:=]\s*["']?)([^"'\s&,;}<>]{6,})`)
	// assignKeys are the words every alternative of assignRE's key ends
	// with.
	assignKeys = []string{"key", "token", "secret", "password", "passwd", "pwd"}
	// credentialScheme is bearerRE's test.
	credentialScheme = containsFold("bearer", "basic")
)

// text is a string being redacted with its lower-case form, for the
// case-insensitive patterns' tests.
type text struct {
	s, lower string
	// oddFold: s holds ſ (U+017F), which case-insensitive regexps match as
	// "s" but strings.ToLower keeps; such text always goes to the regexp.
	oddFold bool
}

func newText(s string) text {
	return text{s: s, lower: strings.ToLower(s), oddFold: strings.ContainsRune(s, 'ſ')}
}

// wordStart tests s (case-sensitively) for any of words at the start of a
// word, as a pattern beginning with \b and a word character needs: "sk-" in
// "disk-full" does not count. regexp's \b is ASCII, and so is this.
func wordStart(words ...string) func(text) bool {
	return func(t text) bool {
		for _, w := range words {
			for from := 0; ; {
				i := strings.Index(t.s[from:], w)
				if i < 0 {
					break
				}
				if at := from + i; at == 0 || !isWordChar(t.s[at-1]) {
					return true
				}
				from += i + 1
			}
		}
		return false
	}
}

func isWordChar(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_'
}

// containsFold tests s case-insensitively for any of words (lower-case).
func containsFold(words ...string) func(text) bool {
	return func(t text) bool {
		if t.oddFold {
			return true
		}
		for _, w := range words {
			if strings.Contains(t.lower, w) {
				return true
			}
		}
		return false
	}
}

// telegramToken tests for what a bot token needs: a digit, a colon, then
// 30 token characters.
func telegramToken(t text) bool {
	s := t.s
	for i := strings.IndexByte(s, ':'); i >= 0; {
		if i > 0 && s[i-1] >= '0' && s[i-1] <= '9' && len(s)-i > 30 && allTokenChars(s[i+1:i+31]) {
			return true
		}
		next := strings.IndexByte(s[i+1:], ':')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return false
}

func allTokenChars(s string) bool {
	for i := range len(s) {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// assignment tests for what assignRE needs: a key word followed by an
// optional quote, optional white space and ':' or '='.
func assignment(t text) bool {
	if t.oddFold {
		return true
	}
	l := t.lower
	for _, k := range assignKeys {
		for from := 0; ; {
			i := strings.Index(l[from:], k)
			if i < 0 {
				break
			}
			j := from + i + len(k)
			if j < len(l) && (l[j] == '"' || l[j] == '\'') {
				j++
			}
			for j < len(l) && isSpace(l[j]) {
				j++
			}
			if j < len(l) && (l[j] == ':' || l[j] == '=') {
				return true
			}
			from += i + 1
		}
	}
	return false
}

// isSpace is regexp's \s: ASCII white space.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\f' || c == '\r'
}

// Redact removes e-mail addresses, bearer and basic credentials, well-known
// API token formats and the values of key=value or "key": "value" pairs
// whose key names a secret (api_key, token, password, …). Each pattern runs
// only when a cheap test that all its matches pass says it could match:
// running them all over every artifact took a third of grounding's CPU
// under load.
func Redact(s string) string {
	if strings.Contains(s, "@") {
		s = emailRE.ReplaceAllString(s, redacted)
	}
	t := newText(s)
	if credentialScheme(t) {
		s = bearerRE.ReplaceAllString(s, "$1 "+redacted)
		t = newText(s)
	}
	for _, tr := range tokenREs {
		if tr.could(t) {
			if r := tr.re.ReplaceAllString(s, redacted); r != s {
				s, t = r, newText(r)
			}
		}
	}
	if assignment(t) {
		s = assignRE.ReplaceAllString(s, "${1}"+redacted)
	}
	return s
}
