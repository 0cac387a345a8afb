package store

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"
)

// Artifacts keeps raw provider responses as files under one directory,
// <dir>/YYYY/MM/DD/<message id>.json, redacted before they are written.
type Artifacts struct {
	dir     string
	secrets []string
	made    sync.Map // directories known to exist
}

// NewArtifacts returns the artifact directory dir (created on first
// write). secrets are literal values (API keys) that are redacted wherever
// they appear, besides the patterns of Redact.
func NewArtifacts(dir string, secrets ...string) (*Artifacts, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("artifact directory %q: %w", dir, err)
	}
	a := &Artifacts{dir: abs}
	for _, s := range secrets {
		if len(s) >= 6 {
			a.secrets = append(a.secrets, s)
		}
	}
	return a, nil
}

// Dir is the absolute artifact directory.
func (a *Artifacts) Dir() string { return a.dir }

// Write stores raw, redacted, as the artifact of message id created at t
// and returns its path. Ids are unique, so the file is created exclusively
// and written in place: a crash mid-write can leave a partial file, but
// never one that a stored message points to, as the message row is written
// after it.
func (a *Artifacts) Write(id string, t time.Time, raw []byte) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return "", fmt.Errorf("artifact id %q: not a file name", id)
	}
	t = t.UTC()
	dir := filepath.Join(a.dir, t.Format("2006"), t.Format("01"), t.Format("02"))
	if _, ok := a.made.Load(dir); !ok {
		if err := os.MkdirAll(dir, 0o750); err != nil {
			return "", fmt.Errorf("creating artifact directory: %w", err)
		}
		a.made.Store(dir, true)
	}
	body := Redact(string(raw))
	for _, s := range a.secrets {
		body = strings.ReplaceAll(body, s, redacted)
	}
	path := filepath.Join(dir, id+".json")
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o640)
	if err != nil {
		return "", fmt.Errorf("writing artifact: %w", err)
	}
	_, werr := f.WriteString(body)
	if err := errors.Join(werr, f.Close()); err != nil {
		_ = os.Remove(path)
		return "", fmt.Errorf("writing artifact: %w", err)
	}
	return path, nil
}

// Remove deletes the artifact at path. A missing file is not an error; a
// path outside the artifact directory is refused.
func (a *Artifacts) Remove(path string) error {
	rel, err := filepath.Rel(a.dir, path)
	if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.IsAbs(rel) {
		return fmt.Errorf("artifact path %q is outside %s", path, a.dir)
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("removing artifact: %w", err)
	}
	return nil
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
	assignRE = regexp.MustCompile(`(?i)\b((?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|token|secret|password|passwd|pwd|key)["']?\s*[:=]\s*["']?)([^"'\s&,;}<>]{6,})`)
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
