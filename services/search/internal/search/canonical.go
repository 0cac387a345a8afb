package search

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
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

// CleanURL returns raw as an absolute http or https URL with the scheme and
// host lower-cased, a trailing dot and the default port removed from the
// host, user info and fragment removed, and tracking parameters dropped;
// the path and the order of the remaining parameters are kept, so the result
// is safe to show and to fetch. It fails for other schemes or a missing
// host.
func CleanURL(raw string) (string, error) {
	u, kept, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	u.RawQuery = strings.Join(kept, "&")
	return u.String(), nil
}

// CanonicalURL returns the key under which two URLs count as the same page:
// CleanURL plus a trailing slash removed from the path and the remaining
// query parameters sorted. It is used to de-duplicate results and as the
// local index's document id.
func CanonicalURL(raw string) (string, error) {
	u, kept, err := parseHTTP(raw)
	if err != nil {
		return "", err
	}
	slices.Sort(kept)
	u.RawQuery = strings.Join(kept, "&")
	if p := u.EscapedPath(); strings.HasSuffix(p, "/") {
		p = strings.TrimRight(p, "/")
		if err := setEscapedPath(u, p); err != nil {
			return "", err
		}
	}
	return u.String(), nil
}

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
	return s, nil
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
func parseHTTP(raw string) (*url.URL, []string, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" {
		return nil, nil, errors.New("empty URL")
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, nil, err
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, nil, fmt.Errorf("URL %q is not http or https", raw)
	}
	host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
	if host == "" || u.Opaque != "" {
		return nil, nil, fmt.Errorf("URL %q has no host", raw)
	}
	port := u.Port()
	if (u.Scheme == "http" && port == "80") || (u.Scheme == "https" && port == "443") {
		port = ""
	}
	switch {
	case port != "":
		u.Host = net.JoinHostPort(host, port)
	case strings.Contains(host, ":"):
		u.Host = "[" + host + "]"
	default:
		u.Host = host
	}
	u.User = nil
	u.Fragment, u.RawFragment = "", ""
	u.ForceQuery = false

	var kept []string
	for pair := range strings.SplitSeq(u.RawQuery, "&") {
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
	u.RawQuery = ""
	return u, kept, nil
}

func setEscapedPath(u *url.URL, escaped string) error {
	p, err := url.PathUnescape(escaped)
	if err != nil {
		return err
	}
	u.Path, u.RawPath = p, escaped
	if u.EscapedPath() != escaped {
		u.RawPath = ""
	}
	return nil
}
