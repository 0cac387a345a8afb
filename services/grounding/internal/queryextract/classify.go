package queryextract

import (
	"regexp"
	"strings"
	"unicode"
)

var (
	reNumber   = regexp.MustCompile(`^[-+]?\d+(?:[.,]\d+)*$`)
	reQuantity = regexp.MustCompile(`^[-+]?\d+(?:[.,]\d+)?(?:%|ms|us|µs|ns|s|m|h|d|w|y|b|kb|mb|gb|tb|kib|mib|gib|tib|k|g|t|x|rps|qps|ops|req/s|bps|mbps|gbps|th|st|nd|rd)$`)
	// Kubernetes pod names: <deployment>-<replicaset hash>-<5 chars>,
	// <daemonset or job>-<5 chars>, <statefulset>-<ordinal>.
	rePodDeployment = regexp.MustCompile(`^(.+)-[0-9a-f]{6,10}-[a-z0-9]{5}$`)
	rePodShort      = regexp.MustCompile(`^(.+)-([a-z0-9]{5})$`)
	reOrdinal       = regexp.MustCompile(`^(.+?)(?:-\d+)+$`)
	reDomain        = regexp.MustCompile(`^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)+$`)
	reFileName      = regexp.MustCompile(`\.(java|go|py|js|mjs|cjs|ts|rb|php|cs|rs|c|cc|cpp|h|yml|yaml|json|toml|ini|conf|cfg|properties|xml|log|sh|sql|txt|csv|jar|war|so|dll|exe|pem|crt|key)$`)
	reErrorIdent    = regexp.MustCompile(`^(?:[A-Z][A-Za-z0-9]*)?(?:Exception|Error|Errors|Fault|Failure|Panic|Timeout|TimedOut|Refused|Exceeded|Exhausted|Unavailable|Killed|Denied|Rejected|BackOff|Overflow|Underflow|NotFound)$`)
	reVersioned     = regexp.MustCompile(`^[a-z]{2,}\d$`)
)

func isNumber(s string) bool { return reNumber.MatchString(s) }

// isQuantity reports numbers with units: 5m, 10%, 500ms, 15.2GB, 3rd.
func isQuantity(lower string) bool { return reQuantity.MatchString(lower) }

// isErrorIdent reports identifiers that name an error: NullPointerException,
// ConnectionError, DeadlineExceeded, OOMKilled. A bare "Error" is too vague
// to count.
func isErrorIdent(tok string) bool {
	if tok == "Error" || tok == "Exception" || tok == "Errors" || tok == "Failure" || tok == "Timeout" {
		return false
	}
	return reErrorIdent.MatchString(tok)
}

func hasDigit(s string) bool { return strings.IndexFunc(s, unicode.IsDigit) >= 0 }

func hasLetter(s string) bool { return strings.IndexFunc(s, unicode.IsLetter) >= 0 }

// isVersionedWord reports a word followed by one version digit: ext4,
// python3, http2. Longer digit runs (web03, node12) are numbered hosts.
func isVersionedWord(lower string) bool {
	return techTokens[lower] || reVersioned.MatchString(lower)
}

// isCamel reports an identifier with an upper-case letter after a
// lower-case one (KubePodCrashLooping, HikariPool, afterConnect).
func isCamel(s string) bool {
	var prev rune
	for i, r := range s {
		if i > 0 && unicode.IsLower(prev) && unicode.IsUpper(r) {
			return true
		}
		prev = r
	}
	return false
}

func isAllCaps(s string) bool {
	return hasLetter(s) && strings.IndexFunc(s, unicode.IsLower) < 0
}

func isDomain(lower string) bool {
	if !reDomain.MatchString(lower) {
		return false
	}
	tld := lower[strings.LastIndexByte(lower, '.')+1:]
	return publicTLDs[tld] || internalTLDs[tld]
}

// isPublicHost reports host names on the public internet whose name says
// something (api.stripe.com); internal names and numbered hosts do not.
func isPublicHost(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if !isDomain(host) {
		return false
	}
	labels := strings.Split(host, ".")
	if !publicTLDs[labels[len(labels)-1]] {
		return false
	}
	for _, l := range labels {
		if hasDigit(l) || l == "internal" || l == "local" || l == "svc" || l == "corp" || l == "lan" {
			return false
		}
	}
	// example.com and friends are documentation placeholders.
	return !strings.HasSuffix(host, "example.com") && !strings.HasSuffix(host, "example.org")
}

func isFileName(lower string) bool { return reFileName.MatchString(lower) }

// stripWorkloadSuffix removes the generated parts of a Kubernetes pod name.
// A five-character suffix only counts as generated when it has a digit or
// lacks vowels, so "user-login" keeps its second word.
func stripWorkloadSuffix(lower string) string {
	if m := rePodDeployment.FindStringSubmatch(lower); m != nil && hasDigit(lower[len(m[1]):]) {
		return m[1]
	}
	if m := rePodShort.FindStringSubmatch(lower); m != nil && (hasDigit(m[2]) || !strings.ContainsAny(m[2], "aeiouy")) {
		return m[1]
	}
	if m := reOrdinal.FindStringSubmatch(lower); m != nil {
		return m[1]
	}
	return lower
}

func isWordByte(b byte) bool {
	return b == '_' || b == '-' || (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || b >= 0x80
}

func asciiLower(b []byte) []byte {
	out := make([]byte, len(b))
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			c += 'a' - 'A'
		}
		out[i] = c
	}
	return out
}
