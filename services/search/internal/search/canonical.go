package search

import (
	"errors"
	"fmt"
	"mime"
	"net"
	"net/url"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/platform/weburl"
)

// trackingParams are query parameters that only identify a campaign or a
// click and never change the page. Keys are compared case-insensitively;
// every key starting with "utm_" is tracking too.
var trackingParams = map[string]bool{
	"gclid": true, "gclsrc": true, "dclid": true, "gbraid": true, "wbraid": true,
	"fbclid": true, "msclkid": true, "yclid": true, "twclid": true, "ttclid": true,
	"li_fat_id": true, "igshid": true, "mc_cid": true, "mc_eid": true,
	"_ga": true, "_gl": true, "_hsenc": true, "_hsmi": true, "mkt_tok": true,
	"oly_anon_id": true, "oly_enc_id": true, "vero_id": true, "srsltid": true,
}

// IsTrackingParam reports whether the query parameter key only tracks a
// click or campaign (utm_*, gclid, fbclid, …).
func IsTrackingParam(key string) bool {
	k := strings.ToLower(key)
	return strings.HasPrefix(k, "utm_") || trackingParams[k]
}

// CleanURL returns raw, an http or https URL or IRI, in ASCII (see
// platform/weburl: punycode host, percent-encoded UTF-8 path), with the
// scheme and host lower-cased, a trailing dot and the default port removed
// from the host, user info and fragment removed, and tracking parameters
// dropped; the path and the order of the remaining parameters are kept, so
// the result is safe to show and to fetch. It fails for other schemes, a
// missing host, whitespace or control characters.
func CleanURL(raw string) (string, error) {
	u, kept, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	setQuery(u, kept)
	return u.String(), nil
}

// CanonicalURL returns the key under which two URLs count as the same page:
// CleanURL plus a trailing slash removed from the path and the remaining
// query parameters sorted. An IRI and its percent-encoded form have the
// same key. It is used to de-duplicate results and as the local index's
// document id.
func CanonicalURL(raw string) (string, error) {
	u, kept, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	slices.Sort(kept)
	setQuery(u, kept)
	u.Path = strings.TrimRight(u.Path, "/")
	return u.String(), nil
}

// DisplayURL returns the form of an http or https URL to show people: the
// host in Unicode and percent-escapes of non-ASCII characters decoded. A
// URL that does not parse is returned unchanged.
func DisplayURL(raw string) string { return weburl.Readable(raw) }

// Domain returns the lower-case host of an http or https URL without a
// leading "www." and without port.
func Domain(raw string) (string, error) {
	u, _, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	return strings.TrimPrefix(u.Hostname(), "www."), nil
}

// NormalizeDomain turns a domain filter entry into the form compared with
// Result.SourceDomain: lower-case, no "www.", "*." or leading dot, no
// trailing dot. A full URL is accepted and reduced to its host. It fails for
// entries that are not a host name.
func NormalizeDomain(d string) (string, error) {
	s := strings.ToLower(strings.TrimSpace(d))
	if i := strings.Index(s, "://"); i >= 0 {
		u, err := url.Parse(s)
		if err != nil {
			return "", fmt.Errorf("domain %q: %w", d, err)
		}
		s = u.Hostname()
	} else if h, _, err := net.SplitHostPort(s); err == nil {
		s = h
	}
	s = strings.TrimPrefix(s, "*.")
	s = strings.Trim(s, ".")
	s = strings.TrimPrefix(s, "www.")
	if s == "" {
		return "", fmt.Errorf("domain %q is empty", d)
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return "", fmt.Errorf("domain %q is not a host name", d)
		}
	}
	if strings.ContainsAny(s, " \t\r\n/\\?#@:*%,;\"'<>") {
		return "", fmt.Errorf("domain %q is not a host name", d)
	}
	// Internationalised names compare in their punycode form, as
	// SourceDomain carries them.
	u, err := weburl.Parse("http://" + s + "/")
	if err != nil {
		return "", fmt.Errorf("domain %q is not a host name", d)
	}
	return strings.TrimPrefix(u.Hostname(), "www."), nil
}

// DomainMatches reports whether host (a SourceDomain) is domain or one of
// its subdomains. Both must already be normalised.
func DomainMatches(host, domain string) bool {
	return host == domain || (strings.HasSuffix(host, domain) && host[len(host)-len(domain)-1] == '.')
}

func matchesAny(host string, domains []string) bool {
	for _, d := range domains {
		if DomainMatches(host, d) {
			return true
		}
	}
	return false
}

// parseHTTP parses and cleans raw, returning the URL without its query and
// the raw query pairs that are not tracking parameters.
func parseHTTP(raw string) (*weburl.URL, []string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil, errors.New("empty URL")
	}
	u, err := weburl.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	u.User = ""
	u.Fragment, u.HasFragment = "", false

	var kept []string
	for pair := range strings.SplitSeq(u.Query, "&") {
		if pair == "" {
			continue
		}
		key, _, _ := strings.Cut(pair, "=")
		if k, err := url.QueryUnescape(key); err == nil {
			key = k
		}
		if IsTrackingParam(key) {
			continue
		}
		kept = append(kept, pair)
	}
	u.Query, u.HasQuery = "", false
	return u, kept, nil
}

func setQuery(u *weburl.URL, pairs []string) {
	u.Query, u.HasQuery = strings.Join(pairs, "&"), len(pairs) > 0
}

// CleanMimeType returns the media type of a Content-Type-like value in
// lower case without parameters ("text/html; charset=utf-8" becomes
// "text/html"), or "" when it is not one.
func CleanMimeType(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	mt, _, err := mime.ParseMediaType(s)
	if err != nil || !strings.Contains(mt, "/") || len(mt) > 255 {
		return ""
	}
	return mt
}

// CleanIconURL returns an icon address in the form of CleanURL, resolved
// against page when relative ("/favicon.ico"); "" when it is not an http
// or https address. Data URLs are dropped: they are not links.
func CleanIconURL(icon, page string) string {
	icon = strings.TrimSpace(icon)
	if icon == "" {
		return ""
	}
	if !strings.Contains(icon, "://") || strings.HasPrefix(icon, "//") {
		base, err := url.Parse(page)
		if err != nil {
			return ""
		}
		// The icon may be an IRI reference: encode it the way the page's
		// address was before resolving.
		ref, err := url.Parse(icon)
		if err != nil {
			return ""
		}
		icon = base.ResolveReference(ref).String()
	}
	u, err := CleanURL(icon)
	if err != nil {
		return ""
	}
	return u
}
