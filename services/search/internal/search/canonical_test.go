package search

import "testing"

func TestCanonicalURL(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://example.com/a", "https://example.com/a"},
		{"HTTPS://Example.COM/a", "https://example.com/a"},
		{"https://example.com/Path/Case", "https://example.com/Path/Case"},
		{"https://example.com:443/a", "https://example.com/a"},
		{"http://example.com:80/a", "http://example.com/a"},
		{"https://example.com:8443/a", "https://example.com:8443/a"},
		{"http://example.com:443/a", "http://example.com:443/a"},
		{"https://example.com/a/", "https://example.com/a"},
		{"https://example.com/a//", "https://example.com/a"},
		{"https://example.com/", "https://example.com"},
		{"https://example.com", "https://example.com"},
		{"https://example.com/a#section-2", "https://example.com/a"},
		{"https://example.com/a?", "https://example.com/a"},
		{"https://example.com/a?utm_source=x&utm_medium=y&id=3", "https://example.com/a?id=3"},
		{"https://example.com/a?UTM_Campaign=x", "https://example.com/a"},
		{"https://example.com/a?gclid=1&fbclid=2&msclkid=3", "https://example.com/a"},
		{"https://example.com/a?b=2&a=1", "https://example.com/a?a=1&b=2"},
		{"https://example.com/a?q=x&utm_source=news#top", "https://example.com/a?q=x"},
		{"https://example.com./a", "https://example.com/a"},
		{"https://user:pw@example.com/a", "https://example.com/a"},
		{"  https://example.com/a  ", "https://example.com/a"},
		{"https://[2001:DB8::1]:443/a", "https://[2001:db8::1]/a"},
		{"https://[2001:db8::1]:8080/a", "https://[2001:db8::1]:8080/a"},
		{"https://example.com/caf%C3%A9/", "https://example.com/caf%C3%A9"},
		{"https://example.com/a%2Fb/", "https://example.com/a%2Fb"},
		{"https://www.example.com/a", "https://www.example.com/a"},
		// IRIs: the IRI and its encoded form are one key.
		{"https://de.wikipedia.org/wiki/Überwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"},
		{"https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)"},
		{"https://de.wikipedia.org/wiki/%c3%9cberwachung_%28Informatik%29", "https://de.wikipedia.org/wiki/%C3%9Cberwachung_%28Informatik%29"},
		{"https://bücher.example/", "https://xn--bcher-kva.example"},
		{"https://BÜCHER.example/Küche/?q=é", "https://xn--bcher-kva.example/K%C3%BCche?q=%C3%A9"},
		{"https://xn--bcher-kva.example/K%C3%BCche?q=%C3%A9", "https://xn--bcher-kva.example/K%C3%BCche?q=%C3%A9"},
	}
	for _, tt := range tests {
		got, err := CanonicalURL(tt.in)
		if err != nil {
			t.Errorf("CanonicalURL(%q) error = %v", tt.in, err)
			continue
		}
		if got != tt.want {
			t.Errorf("CanonicalURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanURLKeepsPathAndOrder(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://Example.com/docs/?b=2&utm_source=x&a=1#frag", "https://example.com/docs/?b=2&a=1"},
		{"https://example.com/", "https://example.com/"},
		{"http://example.com:80", "http://example.com/"},
	}
	for _, tt := range tests {
		got, err := CleanURL(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("CleanURL(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestURLErrors(t *testing.T) {
	for _, in := range []string{
		"", "   ", "example.com/a", "/relative/path", "ftp://example.com/a",
		"javascript:alert(1)", "mailto:a@example.com", "https://", "https:///path",
		"http://[::1", "data:text/html,hi", "https:opaque",
		"https://example.com/a b", "https://example.com/\x00", "https://exa\u200bmple.com/",
		"https://xn--a.example/",
	} {
		if got, err := CanonicalURL(in); err == nil {
			t.Errorf("CanonicalURL(%q) = %q, want an error", in, got)
		}
		if got, err := Domain(in); err == nil {
			t.Errorf("Domain(%q) = %q, want an error", in, got)
		}
	}
}

func TestDomain(t *testing.T) {
	tests := []struct {
		in, want string
	}{
		{"https://www.Example.com/a", "example.com"},
		{"https://WWW.example.com:8443/a", "example.com"},
		{"https://docs.example.com/a", "docs.example.com"},
		{"https://www2.example.com/a", "www2.example.com"},
		{"https://www.co.uk/", "co.uk"},
		{"http://example.com./", "example.com"},
		{"https://[2001:db8::1]/", "2001:db8::1"},
		{"https://www.bücher.example/", "xn--bcher-kva.example"},
	}
	for _, tt := range tests {
		got, err := Domain(tt.in)
		if err != nil || got != tt.want {
			t.Errorf("Domain(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestNormalizeDomain(t *testing.T) {
	tests := []struct {
		in, want string
		wantErr  bool
	}{
		{"example.com", "example.com", false},
		{" Example.COM ", "example.com", false},
		{"www.example.com", "example.com", false},
		{"*.example.com", "example.com", false},
		{".example.com", "example.com", false},
		{"example.com.", "example.com", false},
		{"https://www.example.com/path?q=1", "example.com", false},
		{"example.com:8080", "example.com", false},
		{"localhost", "localhost", false},
		{"Bücher.example", "xn--bcher-kva.example", false},
		{"xn--bcher-kva.example", "xn--bcher-kva.example", false},
		{"", "", true},
		{"  ", "", true},
		{"*.", "", true},
		{"exa mple.com", "", true},
		{"example..com", "", true},
		{"example.com/path", "", true},
		{"a@example.com", "", true},
	}
	for _, tt := range tests {
		got, err := NormalizeDomain(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("NormalizeDomain(%q) = %q, %v; want %q, error %v", tt.in, got, err, tt.want, tt.wantErr)
		}
	}
}

func TestDomainMatches(t *testing.T) {
	tests := []struct {
		host, domain string
		want         bool
	}{
		{"example.com", "example.com", true},
		{"docs.example.com", "example.com", true},
		{"a.b.example.com", "example.com", true},
		{"badexample.com", "example.com", false},
		{"example.com", "docs.example.com", false},
		{"example.com.evil.net", "example.com", false},
		{"com", "example.com", false},
	}
	for _, tt := range tests {
		if got := DomainMatches(tt.host, tt.domain); got != tt.want {
			t.Errorf("DomainMatches(%q, %q) = %v, want %v", tt.host, tt.domain, got, tt.want)
		}
	}
}

func TestIsTrackingParam(t *testing.T) {
	for _, k := range []string{"utm_source", "UTM_TERM", "utm_anything", "gclid", "fbclid", "msclkid", "_ga", "mc_eid"} {
		if !IsTrackingParam(k) {
			t.Errorf("IsTrackingParam(%q) = false, want true", k)
		}
	}
	for _, k := range []string{"q", "id", "page", "utm", "ref", "source"} {
		if IsTrackingParam(k) {
			t.Errorf("IsTrackingParam(%q) = true, want false", k)
		}
	}
}

func TestTruncate(t *testing.T) {
	tests := []struct {
		in    string
		limit int
		want  string
	}{
		{"short", 10, "short"},
		{"exactly ten", 11, "exactly ten"},
		{"the quick brown fox jumps", 16, "the quick brown…"},
		{"the quick brown, fox jumps", 17, "the quick brown…"},
		{"unbrokenwordthatgoeson", 10, "unbrokenw…"},
		{"héllo wörld ünïcode", 13, "héllo wörld…"},
		{"abc", 1, "…"},
		{"abc", 0, ""},
	}
	for _, tt := range tests {
		if got := Truncate(tt.in, tt.limit); got != tt.want {
			t.Errorf("Truncate(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
		}
	}
}

func TestDisplayURL(t *testing.T) {
	tests := []struct{ in, want string }{
		{"https://de.wikipedia.org/wiki/%C3%9Cberwachung_(Informatik)", "https://de.wikipedia.org/wiki/Überwachung_(Informatik)"},
		{"https://xn--bcher-kva.example/", "https://bücher.example/"},
		{"https://example.com/a%20b", "https://example.com/a%20b"},
	}
	for _, tt := range tests {
		if got := DisplayURL(tt.in); got != tt.want {
			t.Errorf("DisplayURL(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanMimeType(t *testing.T) {
	tests := []struct{ in, want string }{
		{"text/html; charset=UTF-8", "text/html"},
		{" Application/PDF ", "application/pdf"},
		{"", ""},
		{"pdf", ""},
		{"text/html; charset", ""},
	}
	for _, tt := range tests {
		if got := CleanMimeType(tt.in); got != tt.want {
			t.Errorf("CleanMimeType(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestCleanIconURL(t *testing.T) {
	page := "https://xn--bcher-kva.example/wiki/K%C3%BCche"
	tests := []struct{ icon, want string }{
		{"/favicon.ico", "https://xn--bcher-kva.example/favicon.ico"},
		{"icons/i.png", "https://xn--bcher-kva.example/wiki/icons/i.png"},
		{"//cdn.example/i.png?utm_source=x", "https://cdn.example/i.png"},
		{"https://bücher.example/ï.png", "https://xn--bcher-kva.example/%C3%AF.png"},
		{"data:image/png;base64,AAAA", ""},
		{"javascript:alert(1)", ""},
		{"", ""},
	}
	for _, tt := range tests {
		if got := CleanIconURL(tt.icon, page); got != tt.want {
			t.Errorf("CleanIconURL(%q, %q) = %q, want %q", tt.icon, page, got, tt.want)
		}
	}
}
