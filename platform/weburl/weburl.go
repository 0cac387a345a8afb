// Package weburl parses web addresses as the web has them: http and https
// URLs and IRIs, with non-ASCII host names (IDNA) and non-ASCII paths,
// queries and fragments. It gives each address two forms:
//
//   - Canonical, for storage and comparison: pure ASCII, the host in
//     lower-case punycode (UTS #46 lookup mapping, as browsers do), the
//     default port dropped, every other character outside RFC 3986 percent-
//     encoded as UTF-8 with upper-case hex, percent-escapes of unreserved
//     characters decoded, dot segments removed and an empty path made "/".
//     The IRI https://bücher.example/Überwachung and its encoded form
//     https://xn--bcher-kva.example/%C3%9Cberwachung have the same canonical
//     form.
//   - Readable, for people: the canonical form with the host in Unicode and
//     percent-escapes that spell printable non-ASCII characters decoded.
//
// Parsing is strict about what is not a web address at all: schemes other
// than http and https, a missing host, whitespace, control and bidi
// formatting characters, backslashes, malformed percent-escapes, and hosts
// IDNA refuses. Pattern is the same syntax as a regular expression for
// validators that run before Go code (protovalidate CEL rules).
package weburl

import (
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

// Pattern is an RE2 regular expression (Go regexp and CEL matches())
// accepting the syntax Parse accepts: an http or https scheme, "//", an
// optional user info, a host (IP literal or name in any script, with
// percent-escapes), an optional port, then path, query and fragment
// without whitespace, control or format characters or backslashes, and
// every "%" starting an escape. Host names that pass Pattern can still be
// refused by Parse's IDNA check.
const Pattern = `^(?i:https?)://(?:(?:[^\s\p{Z}\p{Cc}\p{Cf}/?#@\[\]\\%]|%[0-9A-Fa-f]{2})*@)?` +
	`(?:\[[0-9A-Fa-f:.]+\]|(?:[^\s\p{Z}\p{Cc}\p{Cf}/?#@:\[\]\\%]|%[0-9A-Fa-f]{2})+)` +
	`(?::[0-9]*)?(?:[/?#](?:[^\s\p{Z}\p{Cc}\p{Cf}\\%]|%[0-9A-Fa-f]{2})*)?$`

// MaxLength is the longest address accepted, in bytes of its canonical
// form.
const MaxLength = 8192

// profile maps host names the way browsers do (WHATWG URL: UTS #46 lookup,
// non-transitional, hyphens and ASCII characters not restricted), so that
// real hosts such as "r3---sn-abc.example" and "my_host.example" pass.
var profile = idna.New(
	idna.MapForLookup(),
	idna.Transitional(false),
	idna.CheckHyphens(false),
	idna.StrictDomainName(false),
	idna.BidiRule(),
)

// Error says why an address was refused.
type Error struct {
	// Reason is a short explanation without the address itself.
	Reason string
}

func (e *Error) Error() string { return "invalid web address: " + e.Reason }

func fail(format string, args ...any) error {
	return &Error{Reason: fmt.Sprintf(format, args...)}
}

// URL is a parsed web address in canonical form.
type URL struct {
	// Scheme is "http" or "https".
	Scheme string
	// User is the percent-encoded user info without "@", or "".
	User string
	// Host is the ASCII host: a lower-case (punycode) name without a
	// trailing dot, a dotted IPv4 address or a bracketed IPv6 address.
	Host string
	// Port is the port, "" when absent or the scheme's default.
	Port string
	// Path is the percent-encoded path, starting with "/".
	Path string
	// Query is the percent-encoded query without "?"; HasQuery tells an
	// empty query ("…?") from none.
	Query    string
	HasQuery bool
	// Fragment is the percent-encoded fragment without "#"; HasFragment
	// reports that it is not empty.
	Fragment    string
	HasFragment bool
}

// String returns the canonical form.
func (u *URL) String() string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteString("://")
	if u.User != "" {
		b.WriteString(u.User)
		b.WriteByte('@')
	}
	b.WriteString(u.Host)
	if u.Port != "" {
		b.WriteByte(':')
		b.WriteString(u.Port)
	}
	b.WriteString(u.Path)
	if u.HasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if u.HasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// Hostname returns Host without the brackets of an IPv6 literal.
func (u *URL) Hostname() string {
	return strings.TrimSuffix(strings.TrimPrefix(u.Host, "["), "]")
}

// Parse parses an absolute http or https URL or IRI and returns it in
// canonical form. Errors are *Error.
func Parse(raw string) (*URL, error) {
	if !utf8.ValidString(raw) {
		return nil, fail("not valid UTF-8")
	}
	for _, r := range raw {
		if forbidden(r) {
			return nil, fail("contains %s", describe(r))
		}
	}
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return nil, fail("not an absolute http or https address")
	}
	scheme = strings.ToLower(scheme)
	if scheme != "http" && scheme != "https" {
		return nil, fail("scheme must be http or https")
	}
	u := &URL{Scheme: scheme}

	authority := rest
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		authority, rest = rest[:i], rest[i:]
	} else {
		rest = ""
	}
	if i := strings.IndexByte(authority, '@'); i >= 0 {
		user, err := canonicalUserinfo(authority[:i])
		if err != nil {
			return nil, err
		}
		u.User, authority = user, authority[i+1:]
	}
	host, port, err := splitPort(authority)
	if err != nil {
		return nil, err
	}
	if (scheme == "http" && port == "80") || (scheme == "https" && port == "443") {
		port = ""
	}
	u.Port = port
	if u.Host, err = canonicalHost(host); err != nil {
		return nil, err
	}

	if i := strings.IndexByte(rest, '#'); i >= 0 {
		frag, err := encode(rest[i+1:], fragmentSafe)
		if err != nil {
			return nil, err
		}
		// An empty fragment is no fragment (net/url drops it too).
		u.Fragment, u.HasFragment, rest = frag, frag != "", rest[:i]
	}
	if i := strings.IndexByte(rest, '?'); i >= 0 {
		q, err := encode(rest[i+1:], querySafe)
		if err != nil {
			return nil, err
		}
		u.Query, u.HasQuery, rest = q, true, rest[:i]
	}
	p, err := encode(rest, pathSafe)
	if err != nil {
		return nil, err
	}
	u.Path = removeDotSegments(p)
	if u.Path == "" {
		u.Path = "/"
	}
	if n := len(u.String()); n > MaxLength {
		return nil, fail("is %d bytes long encoded; the limit is %d", n, MaxLength)
	}
	return u, nil
}

// Canonical returns the canonical form of raw (see the package comment).
func Canonical(raw string) (string, error) {
	u, err := Parse(raw)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// Validate reports whether raw is a web address Parse accepts.
func Validate(raw string) error {
	_, err := Parse(raw)
	return err
}

// Readable returns the form of raw to show people: the canonical form with
// a Unicode host and percent-escapes of printable non-ASCII characters
// decoded, e.g. https://de.wikipedia.org/wiki/Überwachung_(Informatik).
// Escapes of ASCII characters stay encoded, so the result parses back to
// the same canonical form. An address Parse refuses is returned unchanged.
func Readable(raw string) string {
	u, err := Parse(raw)
	if err != nil {
		return raw
	}
	return u.Readable()
}

// Readable returns u's form for people (see the function Readable).
func (u *URL) Readable() string {
	r := *u
	if !strings.HasPrefix(r.Host, "[") {
		r.Host = u.ReadableHost()
	}
	r.User = decodeReadable(r.User)
	r.Path = decodeReadable(r.Path)
	r.Query = decodeReadable(r.Query)
	r.Fragment = decodeReadable(r.Fragment)
	return r.String()
}

// ReadableHost returns the host as people read it: Unicode labels for
// punycode ones (bücher.example), IP addresses unchanged.
func (u *URL) ReadableHost() string {
	if !strings.HasPrefix(u.Host, "[") {
		if h, err := profile.ToUnicode(u.Host); err == nil && readableHost(h) {
			return h
		}
	}
	return u.Hostname()
}

// readableHost reports whether a Unicode host can be shown as is: it must
// parse back to the same ASCII host and hold nothing forbidden.
func readableHost(h string) bool {
	for _, r := range h {
		if forbidden(r) || strings.ContainsRune("/?#@:[]%", r) {
			return false
		}
	}
	return true
}

// forbidden reports characters no web address contains literally:
// whitespace, controls, format characters (bidi overrides, zero-width
// characters, which RFC 3987 section 4.1 excludes) and the backslash.
func forbidden(r rune) bool {
	return unicode.IsSpace(r) || unicode.Is(unicode.Z, r) || unicode.Is(unicode.Cc, r) ||
		unicode.Is(unicode.Cf, r) || r == '\\'
}

func describe(r rune) string {
	switch {
	case r == ' ':
		return "a space"
	case r == '\\':
		return "a backslash"
	case unicode.IsSpace(r) || unicode.Is(unicode.Z, r):
		return fmt.Sprintf("whitespace (U+%04X)", r)
	case unicode.Is(unicode.Cc, r):
		return fmt.Sprintf("a control character (U+%04X)", r)
	default:
		return fmt.Sprintf("a formatting character (U+%04X)", r)
	}
}

// splitPort splits "host[:port]"; an IPv6 literal keeps its brackets.
func splitPort(authority string) (host, port string, err error) {
	host = authority
	if strings.HasPrefix(authority, "[") {
		end := strings.IndexByte(authority, ']')
		if end < 0 {
			return "", "", fail("unclosed [ in host")
		}
		host, port = authority[:end+1], authority[end+1:]
		if port != "" && port[0] != ':' {
			return "", "", fail("unexpected text after the IPv6 address")
		}
	} else if i := strings.LastIndexByte(authority, ':'); i >= 0 {
		host, port = authority[:i], authority[i:]
	}
	port = strings.TrimPrefix(port, ":")
	if port == "" {
		return host, "", nil
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || strings.TrimLeft(port, "0123456789") != "" {
		return "", "", fail("port must be a number from 0 to 65535")
	}
	return host, strconv.FormatUint(n, 10), nil
}

// canonicalHost returns the ASCII form of a host.
func canonicalHost(host string) (string, error) {
	if host == "" {
		return "", fail("no host")
	}
	if strings.HasPrefix(host, "[") {
		a, err := netip.ParseAddr(host[1 : len(host)-1])
		if err != nil || !a.Is6() || a.Zone() != "" {
			return "", fail("host is not a valid IPv6 address")
		}
		return "[" + a.String() + "]", nil
	}
	if strings.ContainsAny(host, "[]@") {
		return "", fail("host contains [, ] or @")
	}
	if strings.Contains(host, "%") {
		dec, err := unescape(host)
		if err != nil {
			return "", err
		}
		if !utf8.ValidString(dec) {
			return "", fail("host escapes are not UTF-8")
		}
		for _, r := range dec {
			if forbidden(r) {
				return "", fail("host contains %s", describe(r))
			}
		}
		host = dec
	}
	if a, err := netip.ParseAddr(host); err == nil && a.Is4() {
		return a.String(), nil
	}
	ascii, err := profile.ToASCII(host)
	if err != nil {
		return "", fail("host is not a valid domain name (IDNA)")
	}
	ascii = strings.TrimSuffix(ascii, ".")
	if ascii == "" || len(ascii) > 253 {
		return "", fail("host is empty or longer than 253 characters")
	}
	for label := range strings.SplitSeq(ascii, ".") {
		if label == "" || len(label) > 63 {
			return "", fail("host has an empty label or one longer than 63 characters")
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return "", fail("host contains %q", c)
			}
		}
	}
	return ascii, nil
}

// Character classes of RFC 3986 that stay literal in each component;
// everything else is percent-encoded.
const (
	unreservedMarks = "-._~"
	subDelims       = "!$&'()*+,;="
	// userLiteral is what net/url leaves unescaped in a user name or
	// password (RFC 3986 allows more; net/url escapes !'()* there).
	userLiteral  = unreservedMarks + "$&+,;="
	pathSafe     = unreservedMarks + subDelims + ":@/"
	querySafe    = pathSafe + "?"
	fragmentSafe = querySafe
)

const upperHex = "0123456789ABCDEF"

func isAlnum(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}

// encode percent-encodes s for a component whose literal characters are
// the ASCII letters and digits plus safe: existing escapes are kept with
// upper-case hex, or decoded when they spell an unreserved character.
func encode(s, safe string) (string, error) {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '%':
			if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
				return "", fail("%% not followed by two hex digits")
			}
			d := unhex(s[i+1])<<4 | unhex(s[i+2])
			if isAlnum(d) || strings.IndexByte(unreservedMarks, d) >= 0 {
				b.WriteByte(d)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[d>>4])
				b.WriteByte(upperHex[d&15])
			}
			i += 2
		case isAlnum(c) || strings.IndexByte(safe, c) >= 0:
			b.WriteByte(c)
		default:
			b.WriteByte('%')
			b.WriteByte(upperHex[c>>4])
			b.WriteByte(upperHex[c&15])
		}
	}
	return b.String(), nil
}

// canonicalUserinfo writes user info as net/url does, so the canonical
// form is a fixed point of url.Parse and URL.String: name and password
// (split at the first ':') are decoded, then every byte but the letters,
// digits and userLiteral is escaped, ':' in either part included.
func canonicalUserinfo(s string) (string, error) {
	if strings.ContainsAny(s, "[]") {
		// Brackets belong to IPv6 hosts; Pattern refuses them here too.
		return "", fail("user info holds [ or ]")
	}
	name, pass, hasPass := strings.Cut(s, ":")
	parts := []string{name}
	if hasPass {
		parts = append(parts, pass)
	}
	var b strings.Builder
	for i, part := range parts {
		raw, err := unescape(part)
		if err != nil {
			return "", err
		}
		if i == 1 {
			b.WriteByte(':')
		}
		for j := 0; j < len(raw); j++ {
			if c := raw[j]; isAlnum(c) || strings.IndexByte(userLiteral, c) >= 0 {
				b.WriteByte(c)
			} else {
				b.WriteByte('%')
				b.WriteByte(upperHex[c>>4])
				b.WriteByte(upperHex[c&15])
			}
		}
	}
	return b.String(), nil
}

// unescape decodes every percent-escape of s.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) || !isHex(s[i+1]) || !isHex(s[i+2]) {
			return "", fail("%% not followed by two hex digits")
		}
		b.WriteByte(unhex(s[i+1])<<4 | unhex(s[i+2]))
		i += 2
	}
	return b.String(), nil
}

// decodeReadable decodes the escapes of an encoded component that form
// printable non-ASCII characters; all other escapes stay.
func decodeReadable(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		if s[i] != '%' || i+2 >= len(s) || unhex(s[i+1])<<4|unhex(s[i+2]) < 0x80 {
			b.WriteByte(s[i])
			i++
			continue
		}
		// Collect the run of escaped non-ASCII bytes and decode the
		// characters in it that can be shown.
		var raw []byte
		j := i
		for j+2 < len(s) && s[j] == '%' && unhex(s[j+1])<<4|unhex(s[j+2]) >= 0x80 {
			raw = append(raw, unhex(s[j+1])<<4|unhex(s[j+2]))
			j += 3
		}
		for k := 0; k < len(raw); {
			r, size := utf8.DecodeRune(raw[k:])
			if r != utf8.RuneError && unicode.IsPrint(r) && !forbidden(r) {
				b.WriteString(string(r))
			} else {
				for _, c := range raw[k : k+size] {
					b.WriteByte('%')
					b.WriteByte(upperHex[c>>4])
					b.WriteByte(upperHex[c&15])
				}
			}
			k += size
		}
		i = j
	}
	return b.String()
}

// removeDotSegments applies RFC 3986 section 5.2.4 to an encoded path.
func removeDotSegments(p string) string {
	if !strings.Contains(p, ".") {
		return p
	}
	var out []string
	segs := strings.Split(p, "/")
	for i, seg := range segs {
		last := i == len(segs)-1
		switch seg {
		case ".":
			if last {
				out = append(out, "")
			}
		case "..":
			if len(out) > 1 {
				out = out[:len(out)-1]
			}
			if last {
				out = append(out, "")
			}
		default:
			out = append(out, seg)
		}
	}
	return strings.Join(out, "/")
}

// IsError reports whether err came from Parse.
func IsError(err error) bool {
	var e *Error
	return errors.As(err, &e)
}
