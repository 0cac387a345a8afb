package relevance

import (
	"regexp"
	"strings"
	"unicode"
)

// stopWords carry no topic.
var stopWords = set(
	"a", "about", "above", "after", "again", "all", "also", "am", "an", "and", "any", "are", "as", "at",
	"be", "because", "been", "before", "being", "below", "between", "both", "but", "by", "can", "could",
	"did", "do", "does", "doing", "done", "due", "during", "each", "either", "etc", "for", "from", "further",
	"had", "has", "have", "having", "here", "how", "however", "if", "in", "into", "is", "it", "its",
	"just", "last", "may", "me", "might", "more", "most", "must", "my", "no", "not", "now", "of", "off",
	"on", "once", "one", "only", "or", "other", "our", "out", "over", "own", "per", "same", "should",
	"since", "so", "some", "such", "than", "that", "the", "their", "them", "then", "there", "these",
	"they", "this", "those", "through", "to", "too", "under", "until", "up", "us", "use", "used",
	"using", "very", "via", "was", "we", "were", "what", "when", "where", "whether", "which", "while",
	"who", "why", "will", "with", "within", "would", "yet", "you", "your", "get", "got", "let",
	"firing", "resolved", "alert", "alerts", "fire", "fires", "fired", "warning", "critical", "info",
	"severity", "page", "value", "runbook", "minute", "minutes", "hour", "hours", "second", "seconds",
	"day", "days", "ago", "utc", "now", "yet", "still", "currently", "instance", "http", "https",
	"www", "com", "example", "internal", "svc", "local", "prod", "production", "staging", "eu", "us",
	"west", "east", "ip", "id", "tell", "prevent", "explain", "compare", "compared", "versus", "vs",
	// How people talk in chat ("super slow again, like half the users").
	"like", "super", "really", "pretty", "kinda", "basically", "literally", "half", "anyone", "guys",
	"folks", "hey", "pls", "please", "asap", "help", "else", "someone", "everyone", "something",
	"anything", "everything", "see", "seeing", "seen", "saw",
	"went", "going", "gone", "seem", "seems", "today", "yesterday", "tonight",
	// The alerting tool that sent a line, not what it is about.
	"datadog", "zabbix", "nagios", "icinga", "pagerduty", "opsgenie", "cloudwatch", "newrelic",
	"triggered", "alarm", "alarms", "monitor", "notification",
	// A log line's level, and a time's unit ("since ~20 min"), say how
	// bad and when, not what.
	"warn", "debug", "trace", "notice", "min", "mins", "sec", "secs", "hr", "hrs", "msec",
	// A unit written apart from its number ("10 Gbps", "60 GB").
	"kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "kbps", "mbps", "gbps", "ms",
	// A log line's timestamp says when, not what.
	"mon", "tue", "wed", "thu", "fri", "sat", "sun", "jan", "feb", "mar", "apr", "jun", "jul", "aug",
	"sep", "oct", "nov", "dec",
)

// generic words say that something is wrong, or where, but not what: they
// count a third of a specific word on either side.
var generic = set(
	"high", "low", "rate", "error", "fail", "failure", "too", "many", "much", "detect", "grow",
	"increase", "large", "near", "almost", "over", "above", "spike", "abnormal", "unhealthy", "issue",
	"problem", "slow", "down", "up", "state", "status", "health", "check", "service", "server", "host",
	"system", "cluster", "namespace", "container", "node", "pod", "kubernetes", "app", "application",
	"api", "request", "response", "time", "total", "count", "level", "limit", "usage", "use", "percent",
	"ratio", "long", "new", "old", "run", "start", "stop", "expect", "predict", "left", "free", "full",
	"reach", "exceed", "more", "less", "than", "ready", "not", "stuck", "keep", "lost", "loss", "miss",
	"missing", "fast", "budget",
	// What a log line says went wrong, not what did.
	"unreachable", "unavailable", "offline", "degraded", "broken", "sick", "unhealthy", "healthy",
	"unable", "cannot", "call", "attempt", "try", "retry", "invalid", "bad", "unexpected", "exception",
	"fatal", "crit", "err",
	"rpc", "code", "desc", "errno",
	// The shell's plumbing a pasted command counts with ("`conntrack -L
	// | awk '{print $3}' | sort | uniq -c`"): every runbook's commands
	// use it, whatever they count.
	"awk", "sed", "grep", "sort", "uniq", "wc", "xargs", "print",
)

// synonyms map the words operators use for one thing to one term.
var synonyms = map[string]string{
	"postgresql": "postgres", "pg": "postgres", "psql": "postgres", "pgbouncer": "pgbouncer",
	"k8s": "kubernetes", "kube": "kubernetes", "kubelet": "kubelet",
	"filesystem": "disk", "fs": "disk", "filesystems": "disk", "disks": "disk", "storage": "disk",
	"certificate": "certificate", "cert": "certificate", "certs": "certificate", "x509": "certificate",
	"ssl": "tls", "mtls": "tls", "https": "tls",
	"oomkilled": "oom", "outofmemory": "oom", "outofmemoryerror": "oom", "oomkill": "oom",
	"mem": "memory", "ram": "memory",
	"500": "5xx", "502": "5xx", "503": "5xx", "504": "5xx", "5xx": "5xx", "500s": "5xx", "502s": "5xx", "503s": "5xx", "504s": "5xx", "5xxs": "5xx",
	"latency": "latency", "latencies": "latency", "p99": "latency", "p95": "latency", "slowness": "latency",
	"replica": "replica", "replicas": "replica", "replication": "replica", "replicate": "replica",
	"replicat": "replica", "secondary": "replica", "standby": "replica",
	"db": "database", "databases": "database",
	"lookup": "dns", "lookups": "dns", "resolv": "dns", "resolve": "dns", "resolution": "dns", "coredns": "dns", "nxdomain": "dns", "servfail": "dns",
	"evict": "evict", "eviction": "evict", "evictions": "evict", "evicted": "evict", "evicting": "evict",
	"conn": "connection", "conns": "connection", "connections": "connection",
	"lagging": "lag", "lags": "lag", "behind": "lag",
	"timed": "timeout", "timeouts": "timeout",
	"fdatasync": "fsync",
	"expire":    "expir", "expiry": "expir", "expiration": "expir", "expires": "expir", "expiring": "expir", "expired": "expir",
	"throttle": "throttl", "throttling": "throttl", "throttled": "throttl",
	"saturation": "saturat", "saturated": "saturat",
	"inodes": "inode",
	"hpa":    "autoscaler", "horizontalpodautoscaler": "autoscaler", "autoscaling": "autoscaler",
	"pvc": "volume", "persistentvolumeclaim": "volume", "persistentvolume": "volume", "pv": "volume", "volumes": "volume",
	"restarting": "restart", "restarts": "restart", "restarted": "restart",
	"crashloopbackoff": "restart", "crashlooping": "restart", "crashloop": "restart",
	"consumergroup": "consumer", "consumergroups": "consumer",
	"gc": "garbage", "jvm": "jvm", "java": "jvm", "heap": "heap",
	"ntp": "clock", "chrony": "clock", "chronyd": "clock", "chronyc": "clock", "ntpd": "clock", "timesyncd": "clock", "time": "time", "skew": "skew", "skewed": "skew",
	"cron": "cronjob", "cronjobs": "cronjob",
	"deploy": "deployment", "deployments": "deployment", "rollout": "rollout", "rollouts": "rollout",
	"ingress": "ingress", "nginx": "ingress",
	"nic": "interface", "nics": "interface", "iops": "io", "iowait": "io",
	"fds": "descriptor", "fd": "descriptor", "descriptors": "descriptor",
	"deadlock": "lock", "deadlocks": "lock",
	"max": "limit", "maximum": "limit", "approaching": "near", "approach": "near",
	"drift": "skew", "drifting": "skew", "drifted": "skew", "offset": "skew",
	"issuer": "ca", "issuing": "ca", "authority": "ca", "authorities": "ca",
	"unschedulable": "pending", "failedscheduling": "pending",
	"iuse": "inode", "iused": "inode", "ifree": "inode",
	// systemd's own tools.
	"systemctl": "systemd", "journalctl": "systemd",
}

// phrases are what operators' tools print for one thing in several words
// ("no such host" is a DNS failure, "Bad Gateway" a 5xx): each is read as
// the term it means, wherever it is written (alert, title or runbook).
var phrases = []struct {
	re   *regexp.Regexp
	term string
}{
	{regexp.MustCompile(`(?i)\bno such host\b|\bserver misbehaving\b|\blookup \S+ on \S+:53\b|\bname or service not known\b|\bname resolution\b|\bcould not resolve\b|\bfailed to resolve\b`), "dns"},
	{regexp.MustCompile(`(?i)\bbad gateway\b|\bgateway time-?out\b|\bservice unavailable\b|\binternal server error\b`), "5xx"},
	{regexp.MustCompile(`(?i)\btoo many open files\b`), "descriptor"},
	// A client that cannot verify the peer's certificate fails the TLS
	// handshake: what curl, OpenSSL and Go print for it (an unknown
	// issuer, or names that do not match: Go's "certificate is valid for
	// a, not b", "relies on legacy Common Name field", "doesn't contain
	// any IP SANs").
	{regexp.MustCompile(`(?i)\bunable to get local issuer certificate\b|\bself[- ]signed certificate in certificate chain\b|\bcertificate verify failed\b|\bsigned by unknown authority\b|\bSSL certificate problem\b|\btls: (?:handshake failure|bad certificate)\b|\bcertificate is valid for \S+,? not \S+|\brelies on legacy Common Name field\b|\bdoesn't contain any IP SANs\b|\bnot valid for any names\b`), "handshake"},
	// What chronyd and ntpd print of a clock that is off (`chronyc
	// tracking`: "Leap status : Not synchronised").
	{regexp.MustCompile(`(?i)\bclock (?:is )?wrong by\b|\bclock (?:is )?(?:not|un)synchroni[sz]ed\b|\btime (?:is )?(?:not|un)synchroni[sz]ed\b|\bleap status\s*:\s*not synchroni[sz]ed\b`), "skew"},
	{regexp.MustCompile(`(?i)\bout of memory\b`), "oom"},
	{regexp.MustCompile(`(?i)\bdf -i\b`), "inode"},
	// Input/output, however written ("disk I/O"; "IO", "IOPS" and
	// "iowait" are words of their own).
	{regexp.MustCompile(`(?i)\bI/O\b`), "io"},
	// What the tools print of a node's resources at their limit: vmstat's
	// si/so columns are pages swapped in and out, a link at half duplex
	// is a failed negotiation (a network interface fault), and a CPU at
	// 90% or more is saturated.
	{swapRe, "swap"},
	{duplexRe, "interface errors"},
	{cpuLimitRe, "cpu saturated"},
	// iostat's %util near 100 is a device saturated with I/O ("at 100%
	// util", "%util 98.4").
	{utilRe, "io saturated"},
	// What Kubernetes prints for a state, read as the state it names (the
	// name runbooks are titled by).
	{regexp.MustCompile(`(?i)\bback-?off restarting failed container\b`), "CrashLoopBackOff"},
	{regexp.MustCompile(`(?i)\bback-?off pulling image\b|\bfailed to pull image\b|\bErrImagePull\b`), "ImagePullBackOff"},
	{regexp.MustCompile(`(?i)\bFailedScheduling\b|\b\d+/\d+ nodes are available\b|\binsufficient (?:cpu|memory|ephemeral-storage)\b|\bhad untolerated taint\b`), "unschedulable"},
	// `kubectl get hpa` prints a target it cannot read as "<unknown>/70%":
	// the HPA's metrics are unavailable.
	{regexp.MustCompile(`<unknown>\s*/\s*\d+%`), "metrics unavailable"},
	{regexp.MustCompile(`(?i)\bNodeNotReady\b|\bkubelet stopped posting node status\b|\bnode\.kubernetes\.io/not-ready\b`), "NotReady"},
	{regexp.MustCompile(`(?i)\bthe node was low on resource\b`), "evicted"},
	{regexp.MustCompile(`(?i)\bBackoffLimitExceeded\b|\bjob has reached the specified backoff limit\b`), "Job failed"},
	{regexp.MustCompile(`(?i)\bFailedMount\b|\bunable to attach or mount volumes\b|\bMountVolume\.\w+ failed\b`), "volume mount"},
	// What Linux, the kernel and systemd print.
	{regexp.MustCompile(`(?i)\binvoked oom-killer\b|\bkilled process \d+\b|\bmemory cgroup out of memory\b`), "oom"},
	{regexp.MustCompile(`(?i)\bcannot allocate memory\b|\bENOMEM\b`), "memory"},
	// A task waiting on an NFS server: what the kernel prints for it.
	{regexp.MustCompile(`(?i)\brpc_wait_bit_killable\b|\bnfs: server \S+ not responding\b`), "NFS"},
	// Memory that is itself broken is a hardware memory error, what
	// EDAC counts as ECC errors ("bad RAM", "a faulty DIMM").
	{regexp.MustCompile(`(?i)\b(?:bad|faulty|failing|defective|broken)\s+(?:ram|memory|dimms?|memory modules?)\b`), "ECC"},
	{regexp.MustCompile(`\bENOSPC\b`), "No space left on device"},
	{regexp.MustCompile(`\bEMFILE\b|\bENFILE\b`), "descriptor"},
	{regexp.MustCompile(`(?i)\bfork: (?:retry: )?resource temporarily unavailable\b|\bfork rejected by pids controller\b|\bpids\.max\b`), "process IDs"},
	// A unit that failed, as the journal and `systemctl status` print it
	// ("Main PID: 812 (code=exited, status=203/EXEC)").
	{regexp.MustCompile(`(?i)\bmain process exited, code=|\bfailed with result '|\bentered failed state\b|\bstart request repeated too quickly\b|\bsystemd\[\d+\]: failed to start\b|\.service: failed\b|\bstatus=[1-9]\d*/[A-Z]+\b`), "systemd unit failed"},
	// A share of a resource used, at 80% or more ("Root disk usage >
	// 90%", "/ is 96% used", "memory at 95%"): the resource is near full.
	{almostFullRe, "almost full"},
	{inodesFullRe, "filesystem out of inodes"},
}

// What the tools print of a resource at its limit, read as the failure
// it shows (phrases): a share of a resource used at 80% or more, `df -i`
// or IUse% at 90% or more (a filesystem out of inodes), iostat's %util
// at 90 or more, vmstat's si/so, a link at half duplex, a CPU at 90% or
// more.
var (
	swapRe       = regexp.MustCompile(`(?i)\bsi/so\b`)
	duplexRe     = regexp.MustCompile(`(?i)\bduplex:?\s*half\b|\bhalf[- ]duplex\b`)
	cpuLimitRe   = regexp.MustCompile(`(?i)\b(?:9\d|100)(?:\.\d+)?\s?%\s?cpu\b|\bcpu\b(?: usage| utili[sz]ation| util| load)?(?: is)?(?: at| above| over)?\s+(?:9\d|100)(?:\.\d+)?\s?%`)
	utilRe       = regexp.MustCompile(`(?i)\b(?:9\d|100)(?:\.\d+)?\s?%\s?util\b|%util\b\s*[=:]?\s*(?:9\d|100)\b`)
	inodesFullRe = regexp.MustCompile(`(?i)\bdf -i\b[^.;\n]{0,30}?\b(?:9\d|100)\s?%|\biuse%?\s*[=:]?\s*(?:9\d|100)\s?%`)
	almostFullRe = regexp.MustCompile(`(?i)\b(?:usage|used|utili[sz]ation|util|full|(?:disk|filesystem|partition|volume|memory|mem|ram|swap|inodes?|storage|heap) (?:is )?at)\b\s*(?:[>=≥]+|is|of|above|over|at)?\s*(?:[89]\d|100)(?:\.\d+)?\s?%|\b(?:[89]\d|100)(?:\.\d+)?\s?%\s*(?:used|full|utili[sz]ed)\b`)
)

// PrintsLimit reports whether text prints a resource at its limit, as
// the tools print it ("at 100% util", "si/so in the thousands", "Duplex:
// Half", "at 100% cpu", "/ is 96% used"): a failure measured, not only
// named.
func PrintsLimit(text string) bool {
	for _, re := range []*regexp.Regexp{swapRe, duplexRe, cpuLimitRe, utilRe, almostFullRe, inodesFullRe} {
		if re.MatchString(text) {
			return true
		}
	}
	return false
}

// unitNumber is a number with a unit ("14820112kb", "250ms").
var unitNumber = regexp.MustCompile(`^\d+(?:\.\d+)?[a-z]{0,3}$`)

// withPhrases adds, after each phrase of phrases in s, the term it means.
func withPhrases(s string) string {
	for _, p := range phrases {
		s = p.re.ReplaceAllStringFunc(s, func(m string) string { return m + " " + p.term })
	}
	return s
}

// canonical are the synonym groups' own terms, which are not stemmed
// ("postgres", "kubernetes").
var canonical = func() map[string]bool {
	m := map[string]bool{}
	for _, v := range synonyms {
		m[v] = true
	}
	return m
}()

func set(words ...string) map[string]bool {
	m := make(map[string]bool, len(words))
	for _, w := range words {
		m[w] = true
	}
	return m
}

// words splits text into lower-case words of letters and digits, splitting
// snake_case and kebab-case, and adds a camelCase word's parts after it:
// "KubePodCrashLooping" gives "kubepodcrashlooping", "kube", "pod",
// "crash", "looping".
func words(s string) []string { return splitWords(withPhrases(s), true) }

// splitWords is words, with camelCase parts when parts is set.
func splitWords(s string, parts bool) []string {
	var out []string
	for _, tok := range strings.FieldsFunc(s, func(r rune) bool {
		return !(unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-' || r == '.')
	}) {
		tok = strings.Trim(tok, "._-")
		if tok == "" {
			continue
		}
		for _, p := range strings.FieldsFunc(tok, func(r rune) bool { return r == '_' || r == '-' || r == '.' }) {
			rs := []rune(p)
			lower := strings.ToLower(p)
			camel := splitCamel(rs)
			if glued := gluedParts(lower); len(camel) == 1 && glued != nil && synonyms[lower] == "" {
				// Glued words are their parts on either side: the alert's
				// "etcdserver" is the runbook's "etcd server" (a tool
				// named as its own thing, "journalctl", is a synonym).
				out = append(out, glued...)
				continue
			}
			out = append(out, lower)
			if parts && len(camel) > 1 {
				out = append(out, camel...)
			}
		}
	}
	return out
}

// gluedSuffixes are the words programs glue to a component's name for
// its server, client or command-line tool ("etcdserver", "zkclient",
// "etcdctl").
var gluedSuffixes = []string{"server", "client", "ctl"}

// gluedParts are the component and the suffix of a word glued from a
// component's name and one of gluedSuffixes ("etcdserver" → "etcd",
// "server"), or nil.
func gluedParts(w string) []string {
	for _, suf := range gluedSuffixes {
		// A generic base ("apiserver") is no component's name: the word
		// stays whole.
		if base, ok := strings.CutSuffix(w, suf); ok && len(base) >= 3 && !strings.ContainsFunc(base, unicode.IsDigit) && !generic[base] && !stopWords[base] {
			return []string{base, suf}
		}
	}
	return nil
}

// splitCamel splits at each lower-to-upper change and before the last
// capital of an upper-case run followed by lower case ("OOMKilled" →
// "oom", "killed"), lower-cased.
func splitCamel(w []rune) []string {
	var out []string
	start := 0
	for i := 1; i < len(w); i++ {
		lowerToUpper := (unicode.IsLower(w[i-1]) || unicode.IsDigit(w[i-1])) && unicode.IsUpper(w[i])
		// An acronym's plural is one word: "OSDs", "PVCs", "NICs".
		plural := i+2 == len(w) && w[i+1] == 's'
		acronymEnd := i+1 < len(w) && unicode.IsUpper(w[i-1]) && unicode.IsUpper(w[i]) && unicode.IsLower(w[i+1]) && !plural
		if lowerToUpper || acronymEnd {
			out = append(out, strings.ToLower(string(w[start:i])))
			start = i
		}
	}
	return append(out, strings.ToLower(string(w[start:])))
}

// term is a word's index form ("" for a word that carries no topic): a
// synonym's canonical word, or the word stemmed.
func term(w string) string {
	if s, ok := synonyms[w]; ok {
		return s
	}
	if canonical[w] {
		return w
	}
	if stopWords[w] || len([]rune(w)) < 2 || isNumber(w) {
		return ""
	}
	st := stem(w)
	if s, ok := synonyms[st]; ok {
		return s
	}
	if canonical[st] {
		return st
	}
	st = dropE(st)
	if s, ok := synonyms[st]; ok {
		return s
	}
	if stopWords[st] {
		return ""
	}
	return st
}

// dropE drops the final e of a verb in -ise, -ize or -ate, whose
// inflections the stemmer leaves without it ("synchronise" and
// "synchronised", "rotate" and "rotated" are one term).
func dropE(st string) string {
	if len(st) > 5 && (strings.HasSuffix(st, "ise") || strings.HasSuffix(st, "ize") || strings.HasSuffix(st, "ate")) {
		return st[:len(st)-1]
	}
	return st
}

// terms are the index forms of the words of s, in order, without empties.
func terms(s string) []string { return withImplied(indexForms(words(s))) }

// runTerms are the index forms of the words of s as written (a camelCase
// word as one term, without its parts), for word runs: phrases and
// quotes.
func runTerms(s string) []string { return indexForms(splitWords(withPhrases(s), false)) }

func indexForms(ws []string) []string {
	var out []string
	for _, w := range ws {
		t := term(w)
		// "x509: certificate" is one term, not the same term twice.
		if t == "" || len(out) > 0 && out[len(out)-1] == t {
			continue
		}
		out = append(out, t)
	}
	return out
}

// withImplied adds after each term the term it implies, if any.
func withImplied(ts []string) []string {
	out := make([]string, 0, len(ts))
	for _, t := range ts {
		out = append(out, t)
		if i, ok := implies[t]; ok {
			out = append(out, i)
		}
	}
	return out
}

// implies adds the broader thing a specific term is always about: a
// certificate error is a TLS problem, an OOM kill a memory one, an inode
// shortage a disk one, PgBouncer is Postgres's.
var implies = map[string]string{
	"certificate": "tls",
}

func isNumber(w string) bool {
	if unitNumber.MatchString(w) {
		// "0kb", "12ms", "3x": a quantity with its unit.
		return true
	}
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	// "95", "10s", "1.2m", "v2": mostly digits.
	return digits > 0 && digits*2 >= len(w)
}

// stem strips the commonest English inflections, conservatively; a
// doubled final consonant left behind goes too ("logging", "log").
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 4 && strings.HasSuffix(w, "sses"):
		return w[:n-2]
	case n > 5 && strings.HasSuffix(w, "ing"):
		return undouble(w[:n-3])
	case n > 4 && strings.HasSuffix(w, "ed") && !strings.HasSuffix(w, "eed"):
		return undouble(w[:n-2])
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") &&
		!strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:n-1]
	}
	return w
}

// weightOf is a term's weight: generic terms a third.
func weightOf(t string) float64 {
	if generic[t] {
		return genericWeight
	}
	return 1
}

// undouble drops one of a doubled final consonant other than l, s or z
// ("logg" → "log", "stopp" → "stop"; "fill", "pass" stay).
func undouble(w string) string {
	n := len(w)
	if n < 3 || w[n-1] != w[n-2] || strings.IndexByte("aeioulsz", w[n-1]) >= 0 {
		return w
	}
	return w[:n-1]
}
