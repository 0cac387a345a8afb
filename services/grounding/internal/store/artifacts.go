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
	// tokenREs are token formats, each with a lower-case substring that
	// any match contains ("" when there is none).
	tokenREs = []struct {
		hint string
		re   *regexp.Regexp
	}{
		{"aiza", regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{30,}`)},                                    // Google API keys
		{"sk-", regexp.MustCompile(`\bsk-[A-Za-z0-9_-]{16,}`)},                                      // OpenAI-style keys
		{"gsk_", regexp.MustCompile(`\bgsk_[A-Za-z0-9]{16,}`)},                                      // Groq keys
		{"_", regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{20,}`)},                                   // GitHub tokens
		{"xox", regexp.MustCompile(`\bxox[abprs]-[A-Za-z0-9-]{10,}`)},                               // Slack tokens
		{"eyj", regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}`)}, // JWTs
		{":", regexp.MustCompile(`\b\d{6,12}:[A-Za-z0-9_-]{30,}`)},                                  // Telegram bot tokens
		{"", regexp.MustCompile(`(?i)\b(?:AKIA|ASIA)[A-Z0-9]{16}\b`)},                               // AWS access key ids
		{"private key", regexp.MustCompile(`(?i)-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----`)},
	}
	assignRE = regexp.MustCompile(`(?i)\b((?:api[_-]?key|apikey|access[_-]?token|auth[_-]?token|refresh[_-]?token|client[_-]?secret|token|secret|password|passwd|pwd|key)["']?\s*[:=]\s*["']?)([^"'\s&,;}<>]{6,})`)
)

// Redact removes e-mail addresses, bearer and basic credentials, well-known
// API token formats and the values of key=value or "key": "value" pairs
// whose key names a secret (api_key, token, password, …). Each pattern runs
// only when a cheap substring test says it could match.
func Redact(s string) string {
	if strings.Contains(s, "@") {
		s = emailRE.ReplaceAllString(s, redacted)
	}
	lower := strings.ToLower(s)
	if strings.Contains(lower, "bearer") || strings.Contains(lower, "basic") {
		s = bearerRE.ReplaceAllString(s, "$1 "+redacted)
	}
	for _, tr := range tokenREs {
		if tr.hint == "" || strings.Contains(lower, tr.hint) {
			s = tr.re.ReplaceAllString(s, redacted)
		}
	}
	for _, k := range []string{"key", "token", "secret", "passw", "pwd"} {
		if strings.Contains(lower, k) {
			return assignRE.ReplaceAllString(s, "${1}"+redacted)
		}
	}
	return s
}
