package queryextract

import (
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Patterns for the passes of generic, which runs them in an order that
// matters (URLs before hosts and paths, timestamps before numbers).
var (
	reURL       = regexp.MustCompile(`(?i)\b[a-z][a-z0-9+.-]*://[^\s<>"'\x60]+`)
	reEmail     = regexp.MustCompile(`(?i)\b[a-z0-9._%+-]+@[a-z0-9.-]+\.[a-z]{2,}\b`)
	reTimestamp = regexp.MustCompile(`(?i)\b\d{4}[-/.]\d{2}[-/.]\d{2}(?:[T ]\d{1,2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:z|[+-]\d{2}:?\d{2})?)?\b|\b\d{1,2}:\d{2}:\d{2}(?:[.,]\d+)?(?:z|[+-]\d{2}:?\d{2})?|\b(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?\s+\d{1,2}(?:,\s*\d{4})?\b`)
	reUUID      = regexp.MustCompile(`(?i)\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b`)
	reIPv4      = regexp.MustCompile(`\b(?:\d{1,3}\.){3}\d{1,3}(?::\d+)?\b`)
	reIPv6      = regexp.MustCompile(`(?i)\[?\b(?:[0-9a-f]{1,4}:){2,7}(?::|[0-9a-f]{1,4})\b\]?(?::\d+)?`)
	reHex       = regexp.MustCompile(`(?i)\b0x[0-9a-f]+\b|\b[0-9a-f]{7,}\b`)
	rePath      = regexp.MustCompile(`(?:^|[\s("'=])((?:~|\.{1,2})?(?:/[\w.@%+~-]+){2,}/?)`)
	rePlacehold = regexp.MustCompile(`<[^<>\s]{1,40}>|<[^<>\n]{0,120} at 0x[0-9a-fA-F]+>`)
	// "request id req_8GhT2kLm", "trace 4bf92f35…": an id and the word
	// that introduces it.
	reNamedID = regexp.MustCompile(`(?i)\b(?:request|req|trace|span|correlation|transaction|event|order|user|customer|job|session)(?:[ _-]?id)?(?:[ \t]*[:=#][ \t]*|[ \t]+)[\w-]*\d[\w-]{5,}`)
	// "k8s-namespace/pod-name-7d9f8b6c5-x2x9z": the namespace in front of
	// a generated pod name.
	reNamespaced = regexp.MustCompile(`\b[a-z0-9][a-z0-9-]*/([a-z0-9][a-z0-9-]*)`)
	// "web-03:9100", "redis:6379".
	reHostPort = regexp.MustCompile(`(?i)\b[a-z0-9][a-z0-9-]*(?:\.[a-z0-9-]+)*:\d{2,5}\b`)

	// Alertmanager's default title "[FIRING:2] AlertName (label values)".
	reAMTitle = regexp.MustCompile(`(?im)^\s*\[(?:firing|resolved)(?::\d+)?\]\s*([A-Za-z_][\w:.-]*)?[ \t]*(?:\(([^)\n]*)\))?`)
	// Grafana's legacy title "[Alerting] Rule name" and unified alerting's
	// "**Firing**" heading.
	reGrafanaTitle = regexp.MustCompile(`(?im)^\s*\[(?:alerting|ok|no data|pending|normal|firing|resolved)\]\s*|^\*\*(?:firing|resolved)\*\*[ \t]*$`)
	// nginx error log prefix "2024/03/05 14:22:10 [error] 31#31: *1234 ".
	reNginx = regexp.MustCompile(`(?m)^\d{4}/\d{2}/\d{2} \d{2}:\d{2}:\d{2} \[(?:emerg|alert|crit|error|warn|notice|info|debug)\] \d+#\d+: (?:\*\d+ )?`)
	// A log line starts with a timestamp or is logfmt.
	reLogLine = regexp.MustCompile(`(?im)^\s*(?:\d{4}[-/.]\d{2}[-/.]\d{2}|[a-z]{3}\.?\s+\d{1,2}\s+\d{2}:\d{2}|\d{2}:\d{2}:\d{2}|\[?\d{10,13}\]?\s)|\b(?:level|lvl|ts|time)=`)
	// Log prefixes: a level in brackets and a thread name in brackets.
	reBracketed = regexp.MustCompile(`\[(?:[\w.-]*\d[\w.-]*|main|[A-Z]+)\]`)

	// " - key = value" lines of the Alertmanager and Grafana label lists,
	// where the value runs to the end of the line.
	reListPair = regexp.MustCompile(`(?m)^[ \t]*[-*•][ \t]*([A-Za-z_][\w.]*)[ \t]*(=)[ \t]*(.*)$`)
	// A key left without its value once a URL was removed.
	reDangling = regexp.MustCompile(`(?m)\b[A-Za-z_][\w.]*[ \t]*[=:][ \t]*$`)
	// "total-vm:8123456kB": a field and a number.
	reNumField = regexp.MustCompile(`\b[A-Za-z_][\w.-]*:\d[\w.]*`)
	// key=value pairs as Prometheus, Grafana and logfmt print them.
	rePair = regexp.MustCompile(`\b([A-Za-z_][\w.]*)[ \t]*(=~|!~|!=|==|=)[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[^\s,;{}()\[\]]+)`)
	// "key: value" for a few keys that only ever label locations (nginx and
	// HTTP logs).
	reColonPair = regexp.MustCompile(`(?i)\b(client|server|host|upstream|request|referrer|instance|pod|namespace|node|severity|pid|user|trace_id|request_id|cluster|ip|port|runbook_url|runbook|dashboard|generatorurl|source|url|value)\b:[ \t]+("[^"\n]*"|\S+)`)

	// Numbered things worth keeping as they are: "exit code 137",
	// "HTTP 503", "502 Bad Gateway".
	reExitCode   = regexp.MustCompile(`(?i)\b(exit(?:ed)?(?: with)? (?:code|status)|status code|http(?: status)?|returned|response code)[ :=]+([1-5]\d\d|\d{1,3})\b`)
	reHTTPPhrase = regexp.MustCompile(`(?i)\b([45]\d\d)[ :-]+(bad gateway|service unavailable|gateway timeout|internal server error|too many requests|not found|unauthorized|forbidden|bad request|request timeout|conflict|payload too large)\b`)
	// "not ready", "no healthy upstream", "unable to connect".
	reNegation = regexp.MustCompile(`(?i)\b(not|no|unable to|failed to|cannot|can't|couldn't|could not)[ \t]+(?:be[ \t]+|yet[ \t]+|a[ \t]+|an[ \t]+|the[ \t]+)?([a-z][a-z-]{2,})\b`)

	// Tokens: words with the inner punctuation identifiers use.
	reToken = regexp.MustCompile(`[\p{L}\p{N}_$][\p{L}\p{N}\p{M}_$.\-']*(?:\(\))?`)
)

// extractor holds a working copy of the alert in which every consumed span
// is overwritten with spaces, so later passes see only what is left and
// byte offsets keep their meaning for ordering.
type extractor struct {
	src     string
	buf     []byte
	terms   []term
	dropped map[string]int
}

func newExtractor(text string) *extractor {
	return &extractor{src: text, buf: []byte(text), dropped: map[string]int{}}
}

func (e *extractor) blank(i, j int) {
	for k := i; k < j; k++ {
		if e.buf[k] != '\n' {
			e.buf[k] = ' '
		}
	}
}

func (e *extractor) add(text string, pos, prio int) {
	text = strings.TrimSpace(text)
	if text == "" || utf8.RuneCountInString(text) > maxTermChars {
		return
	}
	e.terms = append(e.terms, term{text: text, pos: pos, prio: prio})
}

func (e *extractor) drop(kind string) { e.dropped[kind]++ }

// run detects the input format, extracts candidate terms and returns the
// format's name.
func (e *extractor) run() string {
	if f := e.stackTrace(); f != "" {
		return f
	}
	format := "plain text"
	if m := reAMTitle.FindSubmatchIndex(e.buf); m != nil {
		format = "alertmanager"
		if m[2] >= 0 {
			e.add(string(e.buf[m[2]:m[3]]), m[2], prioName)
		}
		if m[4] >= 0 {
			e.titleLabels(m[4], m[5])
		}
		e.blank(m[0], m[1])
	} else if m := reGrafanaTitle.FindIndex(e.buf); m != nil {
		format = "grafana"
		e.blank(m[0], m[1])
	} else if m := reNginx.FindIndex(e.buf); m != nil {
		format = "nginx error log"
		e.add("nginx", m[0], prioProduct)
		e.blank(m[0], m[1])
	} else if reLogLine.Match(e.buf) {
		format = "log line"
	}
	e.generic(0, len(e.buf))
	return format
}

// titleLabels handles the values in Alertmanager's title parentheses. They
// are the alert's distinguishing label values without their names; only
// those that look like product or workload names are worth keeping.
func (e *extractor) titleLabels(i, j int) {
	off := i
	for _, f := range strings.Fields(string(e.buf[i:j])) {
		at := off + strings.Index(string(e.buf[off:j]), f)
		off = at + len(f)
		lf := strings.ToLower(f)
		switch {
		case products[lf] != "":
			e.add(products[lf], at, prioProduct)
		case strings.Contains(f, "-") && !reIPv4.MatchString(f) && !strings.Contains(f, "/"):
			e.token(f, at)
		default:
			e.drop("label")
		}
	}
	e.blank(i, j)
}

// generic extracts terms from buf[i:j] after the format-specific passes.
func (e *extractor) generic(i, j int) {
	e.listPairs(i, j)
	e.removeURLs(i, j)
	e.remove(reDangling, "label", i, j)
	e.remove(reEmail, "email", i, j)
	e.remove(reUUID, "id", i, j)
	e.remove(reNamedID, "id", i, j)
	e.remove(reTimestamp, "timestamp", i, j)
	e.remove(reIPv6, "ip", i, j)
	e.remove(reIPv4, "ip", i, j)
	e.removePaths(i, j)
	e.remove(rePlacehold, "placeholder", i, j)
	e.pairs(i, j)
	e.remove(reNumField, "number", i, j)
	e.namespaced(i, j)
	e.remove(reBracketed, "log prefix", i, j)
	e.numbered(i, j)
	e.phrases(i, j)
	e.remove(reHostPort, "host", i, j)
	e.removeHex(i, j)
	e.negations(i, j)
	for _, m := range reToken.FindAllIndex(e.buf[i:j], -1) {
		e.token(string(e.buf[i+m[0]:i+m[1]]), i+m[0])
	}
}

func (e *extractor) remove(re *regexp.Regexp, kind string, i, j int) {
	for _, m := range re.FindAllIndex(e.buf[i:j], -1) {
		e.blank(i+m[0], i+m[1])
		e.drop(kind)
	}
}

// removeHex drops hexadecimal ids (addresses, hashes, trace ids) that stand
// alone; a hash inside a hyphenated name is left for the workload rules,
// which know how to strip it.
func (e *extractor) removeHex(i, j int) {
	for _, m := range reHex.FindAllIndex(e.buf[i:j], -1) {
		s, t := i+m[0], i+m[1]
		if !hasDigit(string(e.buf[s:t])) || (s > 0 && strings.IndexByte("-.", e.buf[s-1]) >= 0) ||
			(t < len(e.buf) && strings.IndexByte("-.", e.buf[t]) >= 0) {
			continue
		}
		e.blank(s, t)
		e.drop("hex")
	}
}

// removeURLs drops URLs but keeps a public host as a hint: "api.stripe.com"
// says which dependency failed, "grafana.internal" says nothing.
func (e *extractor) removeURLs(i, j int) {
	for _, m := range reURL.FindAllIndex(e.buf[i:j], -1) {
		u := strings.TrimRight(string(e.buf[i+m[0]:i+m[1]]), ".,;:)]}'\"")
		host := u[strings.Index(u, "://")+3:]
		if k := strings.IndexAny(host, "/?#"); k >= 0 {
			host = host[:k]
		}
		if k := strings.LastIndex(host, "@"); k >= 0 {
			host = host[k+1:]
		}
		if k := strings.LastIndex(host, ":"); k >= 0 {
			host = host[:k]
		}
		if isPublicHost(host) {
			e.add(strings.ToLower(host), i+m[0], prioHint)
		}
		e.blank(i+m[0], i+m[1])
		e.drop("url")
	}
}

// removePaths drops file system and URL paths, which name files on one
// machine, not a problem.
func (e *extractor) removePaths(i, j int) {
	for _, m := range rePath.FindAllSubmatchIndex(e.buf[i:j], -1) {
		e.blank(i+m[2], i+m[3])
		e.drop("path")
	}
}

// listPairs handles " - key = value" list lines; see pairs.
func (e *extractor) listPairs(i, j int) {
	for _, m := range reListPair.FindAllSubmatchIndex(e.buf[i:j], -1) {
		e.pair(i+m[0], i+m[1], i+m[2], i+m[3], i+m[4], i+m[5], i+m[6], i+m[7], false)
	}
}

// namespaced drops the namespace in front of a generated pod name
// (default/payments-api-7d9f8b6c5-x2x9z); the pod name itself is left for the
// workload rules.
func (e *extractor) namespaced(i, j int) {
	for _, m := range reNamespaced.FindAllSubmatchIndex(e.buf[i:j], -1) {
		name := string(e.buf[i+m[2] : i+m[3]])
		if stripWorkloadSuffix(name) != name {
			e.blank(i+m[0], i+m[2])
			e.drop("label")
		}
	}
}

// pairs handles key=value labels: the key decides whether the value names
// the failure (alertname, reason), the failing component (service, job),
// free text to process (msg, description) or a location to drop (pod, host).
func (e *extractor) pairs(i, j int) {
	for _, m := range rePair.FindAllSubmatchIndex(e.buf[i:j], -1) {
		v := string(e.buf[i+m[6] : i+m[7]])
		quoted := len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0]
		e.pair(i+m[0], i+m[1], i+m[2], i+m[3], i+m[4], i+m[5], i+m[6], i+m[7], quoted)
	}
	for _, m := range reColonPair.FindAllSubmatchIndex(e.buf[i:j], -1) {
		e.blank(i+m[0], i+m[1])
		e.drop("label")
	}
}

// pair handles one key=value label at buf[ms:me] with the key at [ks:ke],
// the operator at [os:oe] and the value at [vs:ve].
func (e *extractor) pair(ms, me, ks, ke, os, oe, vs, ve int, quoted bool) {
	key := strings.ToLower(string(e.buf[ks:ke]))
	op := string(e.buf[os:oe])
	val := strings.TrimSpace(string(e.buf[vs:ve]))
	if quoted {
		val = val[1 : len(val)-1]
	}
	switch {
	case op != "=" && op != "==":
		// A matcher (status=~"5..") selects series; it is not a fact
		// about this alert.
		e.blank(ms, me)
		e.drop("label")
	case textKeys[key]:
		// Keep the text where it is; drop the key and quotes.
		e.blank(ms, vs)
		if quoted {
			e.blank(vs, vs+1)
			e.blank(ve-1, ve)
		}
	case errorKeys[key]:
		e.blank(ms, me)
		if key == "alertname" {
			e.add(val, vs, prioName)
		} else if isNumber(val) {
			e.drop("number")
		} else {
			e.add(val, vs, prioError)
		}
	case componentKeys[key]:
		e.blank(ms, me)
		for _, t := range reToken.FindAllString(val, -1) {
			e.token(t, vs)
		}
	case dropKeys[key] || strings.HasPrefix(key, "__"):
		e.blank(ms, me)
		e.drop("label")
	case isNumber(strings.TrimRight(val, "%kKmMgGtTbBiIsS")):
		// cpu_usage_idle=5 or used_memory=15.2GB: the metric name
		// says what is measured, the value is noise.
		e.blank(ms, me)
		if strings.Contains(key, "_") {
			e.add(key, ks, prioIdent)
		} else {
			e.drop("number")
		}
	default:
		// An unknown label: its value may be meaningful (type=mysql);
		// let the token rules judge it.
		e.blank(ms, vs)
		if quoted {
			e.blank(vs, vs+1)
			e.blank(ve-1, ve)
		}
	}
}

// numbered keeps numbers that are part of a well-known error: exit codes
// and HTTP statuses.
func (e *extractor) numbered(i, j int) {
	for _, m := range reHTTPPhrase.FindAllSubmatchIndex(e.buf[i:j], -1) {
		e.add(string(e.buf[i+m[2]:i+m[3]])+" "+strings.ToLower(string(e.buf[i+m[4]:i+m[5]])), i+m[0], prioError)
		e.blank(i+m[0], i+m[1])
	}
	for _, m := range reExitCode.FindAllSubmatchIndex(e.buf[i:j], -1) {
		lead := strings.ToLower(string(e.buf[i+m[2] : i+m[3]]))
		code := string(e.buf[i+m[4] : i+m[5]])
		switch {
		case strings.HasPrefix(lead, "exit"):
			e.add("exit code "+code, i+m[0], prioError)
		case code[0] >= '4' && len(code) == 3:
			e.add("HTTP "+code, i+m[0], prioError)
		default:
			continue
		}
		e.blank(i+m[0], i+m[1])
	}
}

// phrases finds the known error phrases, longest first.
func (e *extractor) phrases(i, j int) {
	lower := []byte(strings.ToLower(string(e.buf[i:j])))
	if len(lower) != j-i {
		// Lower-casing changed byte lengths (rare non-ASCII case folds):
		// fall back to ASCII-only folding so offsets stay aligned.
		lower = asciiLower(e.buf[i:j])
	}
	for _, p := range phrases {
		from := 0
		for {
			k := strings.Index(string(lower[from:]), p)
			if k < 0 {
				break
			}
			s := from + k
			end := s + len(p)
			from = end
			if (s > 0 && isWordByte(lower[s-1])) || (end < len(lower) && isWordByte(lower[end])) {
				continue
			}
			e.add(p, i+s, prioError)
			e.blank(i+s, i+end)
			for k := s; k < end; k++ {
				lower[k] = ' '
			}
		}
	}
}

// negations keeps "not ready", "unable to connect" and the like together:
// the negation is the meaning, and a stop-word filter would drop it.
func (e *extractor) negations(i, j int) {
	for _, m := range reNegation.FindAllSubmatchIndex(e.buf[i:j], -1) {
		w := strings.ToLower(string(e.buf[i+m[4] : i+m[5]]))
		if stopWords[w] {
			continue
		}
		neg := strings.ToLower(string(e.buf[i+m[2] : i+m[3]]))
		if neg == "could not" || neg == "couldn't" || neg == "can't" {
			neg = "cannot"
		}
		e.add(neg+" "+w, i+m[0], prioWord)
		e.blank(i+m[0], i+m[1])
	}
}

// token classifies one token and adds it as a term or counts it as dropped.
func (e *extractor) token(tok string, pos int) {
	if strings.HasSuffix(tok, "-") && !strings.HasSuffix(tok, "--") {
		// A name that ran into a removed id or date (logs-2024.03.05).
		e.drop("id")
		return
	}
	tok = strings.Trim(tok, ".-'_$")
	tok = strings.TrimSuffix(tok, "'s")
	if tok == "" {
		return
	}
	lower := strings.ToLower(tok)
	switch {
	case stopWords[lower]:
		e.drop("stop word")
		return
	case logLevels[tok]:
		e.drop("log level")
		return
	case httpMethods[tok]:
		e.drop("stop word")
		return
	case errorNames[tok]:
		e.add(tok, pos, prioError)
		return
	case products[lower] != "":
		e.add(products[lower], pos, prioProduct)
		return
	case techTokens[lower]:
		e.add(lower, pos, prioIdent)
		return
	case isNumber(tok) || isQuantity(lower):
		e.drop("number")
		return
	case isErrorIdent(tok):
		e.add(tok, pos, prioError)
		return
	}
	if strings.Contains(tok, ".") {
		e.dotted(tok, pos)
		return
	}
	if strings.Contains(tok, "-") {
		e.hyphenated(tok, pos)
		return
	}
	if hasDigit(tok) {
		// Letters and digits mixed: an id (x2x9z, web03, a1b2c3) unless
		// it is a word with a version digit (ext4, python3).
		if !isVersionedWord(lower) {
			e.drop("id")
			return
		}
		e.add(lower, pos, prioWord)
		return
	}
	if utf8.RuneCountInString(tok) < 2 {
		e.drop("stop word")
		return
	}
	switch {
	case strings.Contains(tok, "_"):
		e.add(tok, pos, prioIdent) // a metric or identifier
	case isCamel(tok):
		e.add(tok, pos, prioIdent)
	case isAllCaps(tok):
		e.add(tok, pos, prioWord) // CPU, DNS, TLS
	default:
		e.add(lower, pos, prioWord)
	}
}

// dotted handles tokens with dots: domain names, Java class names, files.
func (e *extractor) dotted(tok string, pos int) {
	lower := strings.ToLower(tok)
	segs := strings.Split(tok, ".")
	last := segs[len(segs)-1]
	if p := products[strings.ToLower(segs[0])]; p != "" && !isDomain(lower) {
		// nginx.service, kafka.consumer: the product is the point.
		e.add(p, pos, prioProduct)
		return
	}
	switch {
	case isDomain(lower):
		if isPublicHost(lower) {
			e.add(lower, pos, prioHint)
			return
		}
		// An internal host (redis-master.cache.svc.cluster.local) may
		// still say which product it runs.
		for _, l := range strings.Split(lower, ".") {
			for _, part := range strings.Split(l, "-") {
				if p := products[part]; p != "" {
					e.add(p, pos, prioProduct)
					return
				}
			}
		}
		e.drop("host")
	case isFileName(lower):
		e.drop("path")
	case isCamel(last) || (len(last) > 0 && unicode.IsUpper(rune(last[0])) && !isAllCaps(last)):
		// com.acme.OrderService or o.h.e.SqlExceptionHelper: the class
		// name is the searchable part.
		e.add(last, pos, prioIdent)
	case len(segs) >= 2 && isCamel(segs[len(segs)-2]):
		// Class.method
		e.add(segs[len(segs)-2]+"."+last, pos, prioIdent)
	case hasDigit(tok) && !hasLetter(strings.ReplaceAll(lower, "v", "")):
		e.drop("number") // a version such as 1.2.3 or v1.2.3
	default:
		e.add(tok, pos, prioIdent)
	}
}

// hyphenated handles names such as payments-api-7d9f8b6c5-x2x9z: it strips
// Kubernetes pod suffixes and ordinals and keeps the workload name.
func (e *extractor) hyphenated(tok string, pos int) {
	lower := strings.ToLower(tok)
	base := stripWorkloadSuffix(lower)
	if base != lower {
		e.drop("id")
	}
	if orig := tok[:min(len(base), len(tok))]; len(lower) == len(tok) && isCamel(orig) && !strings.Contains(orig, "-") {
		// HikariPool-1: a camel-case identifier with an instance number.
		e.add(orig, pos, prioIdent)
		return
	}
	parts := strings.Split(base, "-")
	for _, p := range parts {
		if p == "" || isNumber(p) || (hasDigit(p) && !isVersionedWord(p)) {
			e.drop("id")
			return
		}
	}
	if len(parts) == 1 {
		// Only a prefix survived (web-03 → web): a host name, unless it
		// is a product (kafka-0 → kafka).
		if p := products[base]; p != "" {
			e.add(p, pos, prioProduct)
		} else {
			e.drop("host")
		}
		return
	}
	if p := products[base]; p != "" {
		e.add(p, pos, prioProduct)
		return
	}
	// A product inside a workload name (postgres-primary, redis-cache) is
	// what the web knows; the full name is what local runbooks know.
	for _, part := range parts {
		if p := products[part]; p != "" {
			e.add(p, pos, prioProduct)
			break
		}
	}
	if isCamel(tok) {
		e.add(tok, pos, prioIdent)
		return
	}
	e.add(base, pos, prioComponent)
}
