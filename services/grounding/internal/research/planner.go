package research

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/services/grounding/internal/relevance"
)

// questionKind is one angle on a topic: the cue words that show a passage
// addresses it (none: any passage about the subject does).
type questionKind struct {
	name string
	cues []string
}

// The angles a plan covers. A report that answers them tells an on-call
// engineer what the thing is, why it happens, how to tell, and what to do.
var (
	kindOverview   = questionKind{name: "overview"}
	kindCause      = questionKind{name: "cause", cues: []string{"cause", "because", "mean", "usual", "usually", "common", "often", "when", "leak", "exceed", "hit", "grow", "fill", "run", "fail", "reason", "result", "due", "why", "break", "happen", "without", "too", "more", "less"}}
	kindDiagnosis  = questionKind{name: "diagnosis", cues: []string{"check", "show", "find", "look", "log", "dashboard", "metric", "describe", "list", "compare", "inspect", "read", "status", "see", "tell", "confirm", "query", "count", "graph", "trace", "says", "mean"}}
	kindPrevention = questionKind{name: "prevention", cues: []string{"prevent", "avoid", "set", "limit", "raise", "lower", "scale", "add", "fix", "renew", "rotate", "configure", "keep", "stop", "restart", "roll", "expand", "enable", "move", "drop", "delete", "reduce", "increase", "recommend", "should", "mitigat"}}
	kindComparison = questionKind{name: "comparison"}
)

// form is what a topic asks, read from its own words: its subject (a noun
// phrase such as "Postgres connection pooling") or the situation it asks
// about (a clause such as "Kubernetes pods get OOM killed"), which angles
// it asks for explicitly, and for a comparison its two sides.
type form struct {
	// noun is the subject as a noun phrase; clause the situation, when
	// the topic is a question about one ("why do …", "how to tell if …").
	noun, clause string
	// aux is a why-question's auxiliary ("do", "does", "are"); its clause
	// has no finite verb of its own ("Kubernetes pods get OOM killed",
	// "pods stuck in Pending"), so the other questions "see" it.
	aux string
	// how marks a how-question about a situation ("how does MongoDB
	// elect a new primary"): its clause, with aux, is asked as such.
	how bool
	// action is a how-to topic's task ("recover a replica set member
	// that is too stale"): its questions ask how to do it.
	action string
	// asked are the angles the topic names, in its order.
	asked []questionKind
	// a and b are a comparison's sides; context what they are compared
	// for (" for session storage"), said once.
	a, b, context string
	// cause: the topic asks what causes its subject ("what causes etcd
	// leader elections"), so the subject is a problem whatever its words.
	cause bool
	// should: the topic asks whether to do its action ("should we alert
	// on CPU usage").
	should bool
	// yesNo: the topic asks a yes-or-no question ("does the kubelet
	// restart a container whose liveness probe fails", "is it normal
	// for etcd to log …"): aux is its auxiliary and clause the rest, asked
	// as written, then why and when.
	yesNo bool
	// wh is a question's lead when the topic asks one for a value, a
	// choice or a thing ("what should chrony on our EC2 nodes sync
	// against", "how many partitions should a new Kafka topic get"):
	// "what", "how many partitions". It is asked as written, with aux
	// and clause, as a yes-or-no question is; not "What does it mean
	// when What should chrony …?".
	wh string
	// apart: the topic asks how to tell its two sides apart ("a failing
	// disk from a busy one"): two problems, not two things to choose.
	apart bool
	// remedies: the two sides are what to do about the situation told
	// ("kill that one or raise max_connections?", "roll back right away,
	// or first find out which endpoints are failing?"), not two causes.
	remedies bool
	// doubt: the first side is a thing to do and the second another
	// cause ("raise the nofile limit, or is this a leak?", "replace the
	// disk, or something else to blame?").
	doubt bool
	// other is the second side of a doubt as written ("a leak"; the
	// sides lose their articles).
	other string
	// situation: the noun is a thing doing something ("a replica set
	// losing its primary", from "prevent a replica set from losing its
	// primary"), a problem whatever its head.
	situation bool
	// detail is what a colon set after the topic ("kernel I/O errors
	// versus high iowait", "rate limits explained"): not asked about,
	// but words a source on the topic may use.
	detail string
	// lead: the questions are asked of the name told before them
	// ("checkout SLO - do we freeze deploys until it recovers?"), so
	// each starts with it.
	lead bool
	// ask is a yes-or-no question asked of the situation told, as the
	// reader would ask it ("do you need more partitions", after "kafka
	// consumers fell behind overnight"): the first question.
	ask string
	// told: the subject or situation was told, not asked ("Our Java
	// service stops answering. How do I tell X from Y?"): a comparison
	// asked after it is the topic.
	told bool
	// setting is what was told beside the question asked: the situation
	// a comparison was asked after ("df -h says 30% free but writes
	// fail"), a problem told after a choice ("We hit 'sorry, too many
	// clients already' every time the app scales out"). Not asked about,
	// but what the sides are told apart or chosen for.
	setting string
	// name is the system a topic named before a colon ("Postgres: …"):
	// both sides of a comparison are its.
	name string
}

var (
	comparisonRe   = regexp.MustCompile(`(?i)^(?:compare\s+)?(.+?)\s+(?:vs\.?|versus|compared (?:with|to)|and|or)\s+(.+)$`)
	differenceRe   = regexp.MustCompile(`(?i)^(?:the\s+)?differences?\s+between\s+(.+?)\s+and\s+(.+)$`)
	partSplitRe    = regexp.MustCompile(`(?i)(?:,?\s+and\s+(?:how|why|what|when)|,\s+and\s+(?:where|which|should|can|could)|,\s+(?:how|why|what|when|where|which|should|can|could|any)|[.;]\s+(?:how|why|what|when|where|which|should|can|could|any)\b|[.;]\s+(?:do|does|did|is|are|was|were|will|would|must|has|have)\s|[.;]\s+(?:options|suggestions|ideas)$|[?!]\s+)`)
	tellFromRe     = regexp.MustCompile(`(?i)^how\s+(?:to|do\s+(?:i|you|we)|can\s+(?:i|you|we))\s+tell\s+(.+?)\s+(?:from|apart\s+from)\s+(.+)$`)
	fromGerundRe   = regexp.MustCompile(`(?i)^(.+?)\s+from\s+(\w+ing\b.*)$`)
	sentenceRe     = regexp.MustCompile(`[.?!]\s+`)
	quoteRe        = regexp.MustCompile("(?:^|[\\s(])(?:'[^']+'|\"[^\"]+\"|‘[^’]+’|“[^”]+”|`[^`]+`)")
	colonRe        = regexp.MustCompile(`:\s+|\s+[—–-]\s+`)
	meanXRe        = regexp.MustCompile(`(?i)^what\s+(?:does|do)\s+(.+?)\s+mean\b`)
	meanRe         = regexp.MustCompile(`(?i)^what\s+does\s+it\s+mean\s+(?:when|if|that)\s+(.+)$`)
	lookRe         = regexp.MustCompile(`(?i)^(?:(?:what|where)\s+(?:should|do|can|could|must)\s+(?:i|we|you)\s+(?:look|check|start|begin)|how\s+(?:do|can|should)\s+(?:i|we|you)\s+(?:debug|troubleshoot|investigate|diagnose)|where\s+(?:to|do\s+(?:i|we|you)|should\s+(?:i|we|you))\s+(?:start|look|begin)|what\s+to\s+(?:check|look\s+at|look\s+for)|(?:any\s+)?ideas$|any\s+(?:ideas|hints|pointers))\b`)
	remedyRe       = regexp.MustCompile(`(?i)^(?:options|suggestions|what\s+(?:should|can|could|do)\s+(?:i|we|you)\s+do|what\s+(?:are|is)\s+(?:our|my|your|the)\s+(?:options|choices|alternatives|next\s+steps?|fix|fixes)|what\s+(?:should|can|could|do)\s+(?:i|we|you)\s+(?:change|fix|try)|what\s+(?:now|next)|how\s+(?:do|can|should)\s+(?:i|we|you)\s+(?:fix|solve|resolve|handle|recover)|what(?:'s|\s+is)\s+the\s+(?:right|best|proper|correct|usual)\s+(?:way|fix))\b`)
	whyToldRe      = regexp.MustCompile(`(?i)^why\s+(\S+\s+\S+.*)$`)
	whyNotRe       = regexp.MustCompile(`(?i)^why\s+not\b`)
	whyRe          = regexp.MustCompile(`(?i)^why\s+(do|does|did|is|are|was|were|would|can|could|should|will)\s+(.+)$`)
	preventRe      = regexp.MustCompile(`(?i)^(?:how\s+(?:to|do\s+(?:i|you|we)|can\s+(?:i|you|we))\s+)?(?:prevent|avoid|stop|fix|reduce|mitigate)\s+(.+)$`)
	tellRe         = regexp.MustCompile(`(?i)^how\s+(?:to|do\s+(?:i|you|we)|can\s+(?:i|you|we))\s+(?:tell|know|detect|check|see|find out)\s+(?:(?:if|whether|that|when)\s+)?(.+)$`)
	whatRe         = regexp.MustCompile(`(?i)^(?:what\s+(?:is|are)|what's|(?:(?:can|could|would)\s+(?:someone|somebody|anyone|you)\s+(?:please\s+)?)?(?:explain|describe)(?:\s+to\s+me)?)\s+(.+?)(?:\s+to\s+me)?$`)
	explainedRe    = regexp.MustCompile(`(?i)^(.+?)\s+explained$`)
	howWorksRe     = regexp.MustCompile(`(?i)^how\s+(?:does|do)\s+(.+?)\s+(?:work|works|function)$`)
	howToRe        = regexp.MustCompile(`(?i)^how\s+(?:to|do\s+(?:i|you|we)|can\s+(?:i|you|we)|should\s+(?:i|you|we))\s+(.+)$`)
	howAuxRe       = regexp.MustCompile(`(?i)^how\s+(do|does|did|is|are|can|could|would|will)\s+(.+)$`)
	causeRe        = regexp.MustCompile(`(?i)^(?:what\s+(?:causes|leads\s+to|triggers)|(?:what\s+(?:are|is)\s+)?(?:the\s+)?(?:(?:usual|common|typical|main|likely|most\s+common)\s+)?(?:root\s+)?(?:causes?|reasons?)(?:\s+(?:of|for|why|behind|that))?)\s+(.+)$`)
	practiceRe     = regexp.MustCompile(`(?i)^(?:(?:best|good|recommended)\s+practices?|tips|recommendations|guidelines)\s+(?:for|on|with|when)\s+(.+)$`)
	shouldRe       = regexp.MustCompile(`(?i)^(?:should\s+(?:i|we|you)|when\s+should\s+(?:i|we|you)|is\s+it\s+(?:worth|wise|a\s+good\s+idea)(?:\s+to)?)\s+(.+)$`)
	contextRe      = regexp.MustCompile(`(?i)^(.+?)\s+((?:for|in|with|on|under)\s+.+)$`)
	versusRe       = regexp.MustCompile(`(?i)\s(?:vs\.?|versus|compared (?:with|to))\s`)
	questionLeadRe = regexp.MustCompile(`(?i)^(?:how|why|what|when|where|which|should|can|could|is|are|do|does)\b`)
	possessiveRe   = regexp.MustCompile(`(?i)\b(?:my|our)\b`)
	weRe           = regexp.MustCompile(`(?i)\bwe\b`)
	ourselvesRe    = regexp.MustCompile(`(?i)\bourselves\b`)
	// pronounSubjectRe is a subject a yes-or-no question may put after
	// its auxiliary ("is it", "can we").
	pronounSubjectRe = regexp.MustCompile(`(?i)^(?:it|this|that|there|they|we|you|i)$`)
	// whWordRe is a wh-question's own words, without what is asked for.
	whWordRe = regexp.MustCompile(`(?i)^(?:what|which|where|when|who|how\s+\w+)\b`)
	// whAskRe asks for a value, a choice or a thing: a wh-word, up to
	// four words of what is asked for, an auxiliary and the rest ("what
	// vm.swappiness should the mysql boxes run with", "which metric
	// would have warned us").
	whAskRe = regexp.MustCompile(`(?i)^(what|which|where|when|who|how\s+(?:many|much|big|large|long|often|far|high|low|small|fast))((?:\s+\S+){0,4}?)\s+(should|shall|do|does|did|can|could|would|will|must|is|are|was|were)\s+(\S.*)$`)
	// yesNoRe asks a yes-or-no question: an auxiliary, then the rest.
	yesNoRe = regexp.MustCompile(`(?i)^(do|does|did|can|could|will|would|is|are|was|were|must|has|have)\s+(\S.*)$`)
	// whichCauseRe asks which of two causes it is ("is it DNS or the
	// network").
	whichCauseRe = regexp.MustCompile(`(?i)^(?:is|was)\s+(?:it|this|that)\s+(.+?),?\s+or\s+(?:(?:is|was)\s+(?:it|this|that)\s+)?(.+)$`)
	// needToRe asks whether something must be done ("do we need to set
	// GOMAXPROCS ourselves"): whether to do it.
	needToRe = regexp.MustCompile(`(?i)^(?:do|does)\s+(?:we|i|you|they)\s+(?:really\s+)?(?:need|have)\s+to\s+(\S.*)$`)
	// judgedRe ends a question with a judgement of what it asks ("…, or
	// is that overkill?", "…, or not?"): no second thing to tell apart.
	judgedRe = regexp.MustCompile(`(?i),?\s+or\s+(?:not|(?:is|was|would|will)\s+(?:that|it|this)(?:\s+be)?\s+(?:overkill?|enough|fine|ok|okay|normal|expected|necessary|needed|required|safe|pointless|unnecessary|too\s+much|(?:a\s+)?(?:bad|good|terrible)\s+idea|asking\s+for\s+trouble|dangerous|risky|a\s+problem|bad))\W*$`)
	// orAuxRe joins a second yes-or-no question to the first ("…, or
	// does the runtime figure that out on its own"): the first is asked.
	orAuxRe = regexp.MustCompile(`(?i),?\s+or\s+(?:do|does|did|can|could|will|would|is|are|was|were|should|must)\s+\S.*$`)
	// yesOrNoRe ends a question asked to be answered yes or no.
	yesOrNoRe     = regexp.MustCompile(`(?i)[\s,;:–—-]*\byes\s*(?:or|/)\s*no$`)
	askedByRe     = regexp.MustCompile(`(?i),?\s+(?:as\s+)?(?:asked|requested|sent|posted)\s+by\s+.*$`)
	leadRe        = regexp.MustCompile(`(?i)^(?:research|tell me about|an overview of|overview of)\s+`)
	articleRe     = regexp.MustCompile(`(?i)^(?:a|an|the)\s+`)
	pronounRe     = regexp.MustCompile(`(?i)^(?:it|they|this|these|them|that|those)\b`)
	pronounWordRe = regexp.MustCompile(`\b(?:it|they)\b`)
	prepositionRe = regexp.MustCompile(`(?i)\s(?:in|of|for|on|with|at|between|under|from|to|when|while|during|inside|within|across|after|before|through|into|via)\s`)
)

// problemWords mark a subject that names a problem ("consumer lag",
// "certificate expiry"): its questions ask what causes it and how to
// prevent it, not what goes wrong with it.
var problemWords = map[string]bool{
	"lag": true, "expiry": true, "expiration": true, "exhaustion": true, "failure": true, "failures": true, "error": true,
	"errors": true, "pressure": true, "leak": true, "leaks": true, "outage": true, "throttling": true, "skew": true,
	"latency": true, "eviction": true, "evictions": true, "crash": true, "crashes": true, "timeout": true, "timeouts": true,
	"backlog": true, "contention": true, "deadlock": true, "deadlocks": true, "saturation": true, "drift": true,
	"loss": true, "kill": true, "kills": true, "killed": true, "full": true, "down": true, "slowness": true, "spike": true,
	"conflict": true, "conflicts": true, "bloat": true, "corruption": true, "stall": true, "stalls": true, "hang": true,
	"hangs": true, "flapping": true, "rejection": true, "rejections": true, "split-brain": true, "warning": true,
	"warnings": true, "brain": true, "zombie": true, "zombies": true, "poison": true, "poisoned": true, "starvation": true,
}

// parseForm reads a topic's form.
func parseForm(topic string) form {
	// Who asked is not what: "…, asked by jane@example.com" and
	// addresses say nothing about the subject.
	t := askedByRe.ReplaceAllString(notified(spelled(topic)), "")
	t = handleRe.ReplaceAllString(emailRe.ReplaceAllString(t, " "), "$1 ")
	t = strings.Join(strings.Fields(t), " ")
	t = strings.TrimRight(t, "?.!;:, ")
	// "just bump the breaker limit, yes or no?" asks whether to bump it:
	// "no" is no second thing to choose.
	t = strings.TrimRight(yesOrNoRe.ReplaceAllString(t, ""), "?.!;:, ")
	t = leadRe.ReplaceAllString(t, "")
	// A quoted message ("'nf_conntrack: table full, dropping packet'")
	// is one thing said, whatever colons, commas or question marks it
	// holds: it is set aside while the topic's parts are read.
	var quoted []string
	t = quoteRe.ReplaceAllStringFunc(t, func(q string) string {
		lead := q[:len(q)-len(strings.TrimLeft(q, " ("))]
		quoted = append(quoted, strings.TrimPrefix(q, lead))
		return fmt.Sprintf("%s«%d»", lead, len(quoted)-1)
	})
	unquote := func(s string) string {
		for i, q := range quoted {
			s = strings.Replace(s, fmt.Sprintf("«%d»", i), q, 1)
		}
		return s
	}
	// "Memcached vs Redis: why do they evict keys": the subject, then a
	// question about it; "How to tell X from Y: kernel errors versus
	// iowait": the topic, then detail the questions need not repeat.
	var detail, name, lead string
	// label is what a colon or dash set before the rest ("checkout
	// SLO - …"): a thing named, not a sentence told.
	var label string
	for _, loc := range colonRe.FindAllStringIndex(t, -1) {
		// "etcdserver: mvcc: database space exceeded — how do we …": the
		// separator before a question, wherever it is, starts a part.
		if questionLeadRe.MatchString(t[loc[1]:]) {
			if head, rest := t[:loc[0]], t[loc[1]:]; len(strings.Fields(head)) == 1 && !pronounWordRe.MatchString(rest) {
				// "Vault: how do we migrate from Shamir keys to
				// auto-unseal?": the question is about the name's own
				// thing ("Redis: why does it evict keys?" asks about
				// Redis itself).
				t, name = rest, head
				break
			}
			// "lowering fillfactor on a postgres table - does it help
			// with bloat?": a yes-or-no question after what it is about
			// is a sentence of its own, as after a full stop.
			sep := ", and "
			if yesNoRe.MatchString(t[loc[1]:]) {
				sep, label = ". ", t[:loc[0]]
			}
			t = t[:loc[0]] + sep + t[loc[1]:]
			break
		}
	}
	if loc := colonRe.FindStringIndex(t); loc != nil && name == "" {
		head, rest := t[:loc[0]], t[loc[1]:]
		switch {
		case len(strings.Fields(head)) > 1 && len(strings.Fields(head)) <= 4 && versusRe.MatchString(leading(rest)) && !versusRe.MatchString(head):
			// "nginx edge proxies: 'worker_connections are not enough'
			// vs 'Too many open files'": the comparison is the topic,
			// what it is seen on its setting — one said first, not a
			// "240k udp vs 9k tcp" later in a story told.
			t, lead = rest, head
		case len(strings.Fields(head)) == 1 && len(strings.Fields(rest)) >= 2:
			// "Postgres: WAL piling up on the primary": a name, then
			// what about it is asked; the name stays as its setting.
			t, name = head+" "+rest, head
		default:
			// The detail's first sentence is not asked; a question after
			// it is ("split brain: after a blip the VIP ends up on both.
			// why does that happen?").
			t, detail, label = head, rest, head
			if loc := sentenceRe.FindStringIndex(rest); loc != nil {
				t, detail = head+". "+rest[loc[1]:], rest[:loc[0]]
			}
		}
	}
	f := form{detail: detail, name: name, setting: lead}
	// "What is X and why does it Y", "Why do X and how to prevent it":
	// each part asks its own angle.
	var parts []string
	// toldAfter is what a choice is made for, told after the topic
	// ("PgBouncer in front, or raise max_connections? We hit 'sorry, too
	// many clients already'"): a part quoting a message or telling a
	// problem, kept for a comparison only.
	var toldAfter string
	tellAfter := func(p string) {
		if strings.Contains(p, "«") || problemToldRe.MatchString(p) {
			toldAfter = strings.TrimSpace(toldAfter + " " + p)
		}
	}
	askAt := -1
	for {
		loc := partSplitRe.FindStringIndex(t)
		if loc == nil {
			parts = append(parts, t)
			break
		}
		parts = append(parts, t[:loc[0]])
		t = strings.TrimSpace(strings.TrimPrefix(strings.TrimLeft(t[loc[0]:], ",.;?! "), "and "))
	}
	for i := 0; i < len(parts); i++ {
		p := askedOfAnyone(strings.TrimSpace(parts[i]))
		if loc := lastSentenceRe.FindStringSubmatchIndex(p); loc != nil && alternativeRe.MatchString(p[loc[2]:]) {
			// "…, they barely finish anything. stuck workers or a
			// rabbitmq problem?": the question is a part of its own.
			parts = slices.Insert(parts, i+1, p[loc[2]:])
			p = strings.TrimSpace(p[:loc[0]])
		}
		asked := p
		if i > 0 && f.noun != "" && f.clause == "" {
			// "What is X and why does it fill the disk": it is X.
			p = pronounWordRe.ReplaceAllString(p, f.noun)
		}
		switch {
		case meanXRe.MatchString(p) && !meanRe.MatchString(p):
			// "What does 'connect: cannot assign requested address'
			// mean": the message.
			f.asked = append(f.asked, kindOverview)
			if f.unset() {
				f.noun = meanXRe.FindStringSubmatch(p)[1]
			}
		case meanRe.MatchString(p):
			// "What does it mean when Vault is sealed": the situation.
			f.asked = append(f.asked, kindOverview)
			if f.unset() {
				f.clause = meanRe.FindStringSubmatch(p)[1]
			}
		case i > 0 && strings.EqualFold(p, "why"):
			// "…. Why, and what should we change?": why it happens.
			f.asked = append(f.asked, kindCause)
		case explainedRe.MatchString(p):
			// "Kafka consumer lag explained": what it is.
			f.asked = append(f.asked, kindOverview)
			if f.unset() {
				f.noun = explainedRe.FindStringSubmatch(p)[1]
			}
		case i > 0 && lookRe.MatchString(p):
			// "…, what should we look at": where to look.
			f.asked = append(f.asked, kindDiagnosis)
		case i > 0 && remedyRe.MatchString(p):
			// "…, what can we do": what to do.
			f.asked = append(f.asked, kindPrevention)
		case i == 0 && f.unset() && whyToldRe.MatchString(p) && !whyRe.MatchString(p) && !whyNotRe.MatchString(p):
			// "(does anyone know) why etcd logs 'apply request took too
			// long' during compaction": the situation told, asked why.
			f.asked = append(f.asked, kindCause)
			f.clause, f.told = whyToldRe.FindStringSubmatch(p)[1], true
		case whyRe.MatchString(p):
			m := whyRe.FindStringSubmatch(p)
			f.asked = append(f.asked, kindCause)
			// "why does that happen" asks about the topic already told.
			if f.clause == "" && !strings.EqualFold(m[2], "this") && !pronounRe.MatchString(m[2]) {
				f.aux, f.clause = strings.ToLower(m[1]), m[2]
			}
		case tellFromRe.MatchString(p) && (f.unset() || f.told):
			// "How to tell a failing disk from a busy one", also after
			// the situation that raised it (not after a question with its
			// own subject: "Why does HAProxy mark … DOWN, and how do I
			// tell a failing check from a dead server").
			m := tellFromRe.FindStringSubmatch(p)
			f.tellApart(m[1], m[2])
		case i == 1 && f.thingNamed(label) && !strings.Contains(strings.ToLower(judgedRe.ReplaceAllString(asked, "")), " or ") && asksOf(asked):
			// "lowering fillfactor on an update-heavy postgres table -
			// does it actually help with bloat?", "checkout SLO - do we
			// freeze deploys until it recovers?": the question asked of
			// the thing named first is the topic, and each question
			// starts with that thing, as the asker wrote it.
			f.asked = append(f.asked, kindOverview)
			if m := needToRe.FindStringSubmatch(asked); m != nil {
				f.action, f.should = withoutTail(m[1]), true
			} else {
				m := yesNoRe.FindStringSubmatch(withoutTail(asked))
				clause, _, _ := strings.Cut(m[2], ", ")
				f.yesNo, f.aux, f.clause = true, strings.ToLower(m[1]), clause
			}
			f.name, f.lead, f.noun, f.told = f.noun, true, "", false
		case f.told && f.a == "" && (!f.thingNamed(label) || offersRemedies(asked)) && alternativeRe.MatchString(asked) && !judgedRe.MatchString(asked) && !judgement(asked) && len(strings.Fields(asked)) <= 14:
			// "The queue keeps growing. Stuck workers or a RabbitMQ
			// problem?", "Was it the OOM killer or bad RAM?": two causes
			// of the situation told, to tell apart.
			m := alternativeRe.FindStringSubmatch(asked)
			a, b := offered(m[1]), offered(m[2])
			f.tellApart(a, b)
			// "…, or is it the node?" offers a cause, whatever follows.
			f.remedies = remedies(a, b) && !orIsRe.MatchString(asked)
			if f.doubt = !f.remedies && doing(a) && !moreRe.MatchString(a); f.doubt {
				f.other = b
			}
		case tellRe.MatchString(p):
			f.asked = append(f.asked, kindDiagnosis)
			if f.clause == "" && f.noun == "" {
				f.clause = tellRe.FindStringSubmatch(p)[1]
			}
		case preventRe.MatchString(p):
			f.asked = append(f.asked, kindPrevention)
			if s := preventRe.FindStringSubmatch(p)[1]; f.noun == "" && f.clause == "" && !pronounRe.MatchString(s) && !strings.EqualFold(s, "this") {
				f.noun = s
				if m := fromGerundRe.FindStringSubmatch(s); m != nil {
					// "prevent a replica set from losing its primary":
					// the problem is the replica set losing it.
					f.noun, f.situation = m[1]+" "+m[2], true
				}
			}
		case howWorksRe.MatchString(p):
			f.asked = append(f.asked, kindOverview)
			switch x := howWorksRe.FindStringSubmatch(p)[1]; {
			case f.noun == "":
				f.noun = x
			case f.told && f.a == "" && f.setting == "" && !pronounRe.MatchString(x):
				// "We still run Kafka on ZooKeeper. How does the
				// migration to KRaft work?": the question names the
				// topic, what was told is its setting.
				f.setting = f.toldText()
				f.noun, f.clause = x, ""
			}
		case howToRe.MatchString(p):
			// "How to recover a stale member": what to do, first.
			f.asked = append(f.asked, kindPrevention)
			if f.unset() {
				f.action = howToRe.FindStringSubmatch(p)[1]
			}
		case howAuxRe.MatchString(p):
			// "How does MongoDB elect a new primary": how it goes, first.
			m := howAuxRe.FindStringSubmatch(p)
			f.asked = append(f.asked, kindOverview)
			if f.unset() {
				f.how, f.aux, f.clause = true, strings.ToLower(m[1]), m[2]
			}
		case causeRe.MatchString(p):
			// "What causes etcd leader elections": why it happens, first.
			f.asked = append(f.asked, kindCause)
			switch s := causeRe.FindStringSubmatch(p)[1]; {
			case !f.unset():
			case statement(s):
				// "the usual reasons a systemd unit ends up failed": a
				// situation.
				f.clause = s
			default:
				f.noun, f.cause = s, true
			}
		case practiceRe.MatchString(p):
			f.asked = append(f.asked, kindPrevention)
			if f.unset() {
				f.noun = practiceRe.FindStringSubmatch(p)[1]
			}
		case shouldRe.MatchString(p):
			// "Should we alert on CPU usage": whether to, first.
			f.asked = append(f.asked, kindOverview)
			if f.unset() {
				f.action, f.should = shouldRe.FindStringSubmatch(p)[1], true
			}
		case i > 0 && goingOnRe.MatchString(p):
			// "…. What's going on?": what causes the situation told.
			f.asked = append(f.asked, kindCause)
		case whatRe.MatchString(p):
			f.asked = append(f.asked, kindOverview)
			// "Load is 38 but the CPU is idle. What is actually being
			// counted?": the situation told stays the topic.
			if f.noun == "" && f.clause == "" {
				f.noun = whatRe.FindStringSubmatch(p)[1]
			}
		case f.unset() && whichCauseRe.MatchString(p):
			// "Is it the OOM killer or bad RAM?" asked first: two causes
			// to tell apart, as after a situation told.
			m := whichCauseRe.FindStringSubmatch(p)
			f.tellApart(offered(m[1]), offered(m[2]))
		case f.unset() && needToRe.MatchString(p):
			// "do we need to set GOMAXPROCS ourselves …, or does the
			// runtime figure that out": whether to do it.
			f.asked = append(f.asked, kindOverview)
			f.action, f.should = withoutTail(needToRe.FindStringSubmatch(p)[1]), true
		case f.unset() && yesNo(p):
			// "does the kubelet restart a container whose liveness probe
			// fails?", "do we need tini there, or is that overkill?": asked
			// as written, not as a situation ("What does it mean when
			// does …"). One asked after the topic ("could that still be
			// throttling?") is about it, as before.
			f.asked = append(f.asked, kindOverview)
			m := yesNoRe.FindStringSubmatch(withoutTail(p))
			// "Is GOMEMLIMIT worth setting on our Go services, and to
			// what?": the question is the first.
			clause, _, _ := strings.Cut(m[2], ", ")
			f.yesNo, f.aux, f.clause = true, strings.ToLower(m[1]), clause
		case f.unset() && whAskRe.MatchString(withoutTail(p)):
			// "What should chrony on our EC2 nodes sync against?", "How
			// many partitions should a new topic get?": a question no
			// angle above reads, asked as written.
			f.asked = append(f.asked, kindOverview)
			m := whAskRe.FindStringSubmatch(withoutTail(p))
			clause, _, _ := strings.Cut(m[4], ", ")
			f.wh, f.aux, f.clause = strings.ToLower(m[1])+m[2], strings.ToLower(m[3]), clause
		case i > 0 && f.told && f.a == "" && f.ask == "" && len(strings.Fields(asked)) > 4 && asksOf(asked):
			// "kafka consumers fell behind overnight. do we need more
			// partitions?": the question asked of the situation told is
			// asked first, in its own words, then what the situation
			// means, why and what to do.
			// One of four words or fewer ("could that be it?") asks of
			// what was said just before it, not of the situation.
			// Kept too for a choice it may turn out to be asked of.
			askAt = len(f.asked)
			tellAfter(p)
			r, n := utf8.DecodeRuneInString(asked)
			f.ask = yours(string(unicode.ToLower(r)) + withoutTail(asked)[n:])
		default:
			switch {
			case !f.unset():
				tellAfter(p)
			case statement(p):
				// "Our Kafka consumers keep falling behind": a
				// situation told, not a subject named.
				f.clause, f.told = p, true
			default:
				f.noun, f.told = p, true
			}
		}
	}
	f.noun = strings.TrimSpace(f.noun)
	if f.noun != "" && !problemLeadRe.MatchString(f.noun) && situationRe.MatchString(f.noun) {
		// "Kafka consumers falling behind during peak hours": a thing
		// doing something, a problem whatever its head.
		f.situation = true
	}
	// A comparison: two subjects set side by side.
	if f.clause == "" && f.noun != "" {
		// Two sides told apart ("tell X from Y") were set as the topic
		// was read.
		if !f.apart {
			if m := differenceRe.FindStringSubmatch(f.noun); m != nil {
				f.a, f.b = m[1], m[2]
			} else if m := comparisonRe.FindStringSubmatch(f.noun); m != nil && (strings.HasPrefix(strings.ToLower(topic), "compare") || !strings.Contains(strings.ToLower(f.noun), " and ")) && (len(f.asked) == 0 || versusRe.MatchString(f.noun)) {
				// "and" and "or" join two sides only in a bare subject
				// ("Redis or Memcached"); a problem to prevent may have two
				// parts ("losing its primary or leaving a secondary stale").
				f.a, f.b = m[1], m[2]
			}
		}
		if f.a != "" {
			f.a, f.b = articleRe.ReplaceAllString(strings.Trim(f.a, ", "), ""), articleRe.ReplaceAllString(strings.Trim(f.b, ", "), "")
			if loc := colonRe.FindStringIndex(f.b); loc != nil {
				// "'A' vs 'B' — same problem or two limits": the sides
				// end at the dash.
				f.b = strings.TrimSpace(f.b[:loc[0]])
			}
			// "Redis vs Memcached for session storage": both are
			// compared for session storage.
			if m := contextRe.FindStringSubmatch(f.b); m != nil && !f.apart && !prepositionRe.MatchString(" "+f.a+" ") {
				f.b, f.context = m[1], " "+m[2]
			}
			f.asked = append([]questionKind{kindComparison}, f.asked...)
			f.situation = false
		}
	}
	if m := alertLeadRe.FindStringSubmatch(f.noun); m != nil && f.a == "" && alertName(m[1]) {
		// "etcdDatabaseQuotaLowSpace on prod-eu3": an alert that fired,
		// asked about as it fires ("What causes it when
		// etcdDatabaseQuotaLowSpace is firing on prod-eu3?"), not as a
		// thing with good practices.
		f.noun, f.clause, f.told = "", m[1]+" is firing"+m[2], true
		// Its clause has its own verb: a "why does …" asked after it
		// lends it no auxiliary ("Why does X is firing …").
		f.aux = ""
	} else if m := alertClauseRe.FindStringSubmatch(f.clause); m != nil && f.a == "" && alertName(m[1]) {
		// "NginxIngressHigh5xxRate on search-web since 14:10, …" and
		// "NodeCPUHighUsage firing on ci-vm-12 all afternoon": told as
		// the alert firing, as an alert named alone is.
		if m[2] != "" {
			f.clause = m[1] + " is " + m[2] + m[3]
		} else {
			f.clause = m[1] + " is firing " + m[4]
		}
		f.aux = ""
	}
	if f.ask != "" && (f.a != "" || f.action != "" || f.yesNo || f.wh != "") {
		// A question asked of a choice or a task is asked with it.
		f.ask = ""
	} else if f.ask != "" {
		f.asked = slices.Insert(f.asked, min(askAt, len(f.asked)), kindOverview)
	}
	if f.a != "" && toldAfter != "" {
		f.setting = strings.TrimSpace(f.setting + " " + toldAfter)
	}
	// The person's "my disk" is the reader's "your disk", and a subject
	// quoted inside a question starts in lower case unless it is a name.
	f.noun, f.clause, f.action = lowerLead(yours(f.noun)), lowerLead(yours(f.clause)), lowerLead(yours(f.action))
	f.context = yours(f.context)
	f.noun, f.clause, f.action, f.a, f.b, f.context, f.detail = unquote(f.noun), unquote(f.clause), unquote(f.action), unquote(f.a), unquote(f.b), unquote(f.context), unquote(f.detail)
	f.setting, f.ask = unquote(f.setting), unquote(f.ask)
	if f.unset() {
		f.noun = strings.TrimSpace(topic)
	}
	return f
}

// leading is s up to its first sentence's end.
func leading(s string) string {
	if loc := sentenceRe.FindStringIndex(s); loc != nil {
		return s[:loc[0]]
	}
	return s
}

// alertName reports whether the identifier w names an alert
// (relevance.AlertLike: KubeHpaMaxedOut, etcdDatabaseQuotaLowSpace), not
// a kind of object (PodDisruptionBudget, HorizontalPodAutoscaler) or an
// exception (OutOfMemoryError) written the same way.
func alertName(w string) bool {
	return relevance.AlertLike(w) && !kindRe.MatchString(w)
}

var kindRe = regexp.MustCompile(`(?:Error|Exception|Policy|Policies|Config|Configuration|Class|Set|Binding|Budget|Autoscaler|Claim|Definition|Request|Rule|Monitor|Entry|Issuer|Secret|Account|Quota|Service|Template|Controller|Operator|Group|Map|Status|Spec)s?$`)

// thrownRe is an error or exception named as a program throws it
// ("java.lang.OutOfMemoryError", "ConcurrentModificationException").
var thrownRe = regexp.MustCompile(`[a-z][A-Za-z]*(?:Error|Exception)\b`)

// alertClauseRe is a situation told by an alert's name without a verb:
// where, since when or again it fires, or its own "firing" or
// "flapping".
var alertClauseRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)\s+(?:(firing|flapping)\b(.*)|(` + alertWhere + `.*))$`)

// alertLeadRe is a subject that is an alert's name, alone or with where,
// since when or again it fires.
var alertLeadRe = regexp.MustCompile(`^([A-Za-z][A-Za-z0-9]*)((?:\s+` + alertWhere + `.*)?)$`)

// alertWhere leads where, since when or again an alert fires, after its
// name ("on search-web", "since 14:10", "again during the promo").
const alertWhere = `(?:on|for|in|at|since|from|across|during|again)\b`

// notified reads a topic led by an alert notification's title pasted
// whole, as Alertmanager and Grafana write it ("[FIRING:3]
// NodeConntrackTableFull (prod-eu1 w-12 w-13) - only the php nodes …"),
// as the alert firing: "NodeConntrackTableFull is firing (prod-eu1 w-12
// w-13) - only the php nodes …". The status in brackets is no word of
// the topic, and the label values in parentheses are an aside (they say
// where, not what): their colons and commas separate nothing asked.
func notified(topic string) string {
	m := notificationRe.FindStringSubmatchIndex(topic)
	if m == nil || !alertName(topic[m[4]:m[5]]) {
		return topic
	}
	status := " is firing"
	if strings.EqualFold(topic[m[2]:m[3]], "resolved") {
		status = " fired"
	}
	labels := ""
	if m[6] >= 0 {
		labels = " (" + strings.Join(strings.FieldsFunc(topic[m[6]:m[7]], func(r rune) bool { return r == ',' || r == ':' || r == ' ' || r == ';' }), " ") + ")"
	}
	// A dash after the title is spaced as written; a stop, comma or
	// colon follows the alert's words; words straight after it are its
	// detail, set off by a dash.
	rest := topic[m[1]:]
	switch first, _ := utf8.DecodeRuneInString(rest); {
	case rest == "":
	case strings.ContainsRune(",.;:?!", first):
		labels += rest
	case strings.ContainsRune("-–—", first):
		labels += " " + rest
	default:
		labels += " - " + rest
	}
	return topic[m[4]:m[5]] + status + labels
}

// notificationRe is a notification title's lead: its status and alert
// count in brackets, the alert's name, and the label values in
// parentheses after it; group label values after the name are not told
// apart from the words after them and stay in the rest.
var notificationRe = regexp.MustCompile(`(?i)^\s*\[(firing|resolved)(?::\s*\d+)?\]\s*([A-Za-z][A-Za-z0-9_]*)(?:\s*\(([^()]*)\))?\s*`)

// headingForm is the form a topic's questions and title are written
// from: the topic without its asides in parentheses. An aside
// ("etcdDatabaseQuotaLowSpace on prod-eu3 (the old cluster, quota still
// at the 2 GiB default): bump the quota?") adds to what was seen; pasted
// into every question it buries what is asked. What the topic is about
// is still judged with it (parseForm): "(QUIC)" or "(memory used ~91%)"
// says what of a system is meant.
func headingForm(topic string) form { return parseForm(withoutAsides(topic)) }

// withoutAsides is topic without its asides in parentheses, those
// outside a quoted message.
func withoutAsides(topic string) string {
	quoted := quoteRe.FindAllStringIndex(topic, -1)
	var b strings.Builder
	last := 0
	for _, loc := range asideRe.FindAllStringIndex(topic, -1) {
		// An aside holding or touching a quoted message stays: the
		// message is what was seen.
		if slices.ContainsFunc(quoted, func(q []int) bool { return loc[0] < q[1] && q[0] < loc[1] }) {
			continue
		}
		b.WriteString(topic[last:loc[0]])
		last = loc[1]
	}
	b.WriteString(topic[last:])
	return b.String()
}

// asideRe is an aside in parentheses after a word ("(the old cluster,
// db at 1.7 GB)"), not a call ("f(x)").
var asideRe = regexp.MustCompile(`\s+\([^()]*\)`)

// toldWords is how many words a subject told in a topic of its own has
// for it to be a situation rather than a thing named: "Postgres
// connection pooling" names one, "celery slow report tasks starving
// everything else on the default queue" tells one.
const toldWords = 8

// finiteVerbs are verbs that only ever act as a sentence's verb, so a
// topic holding one tells a situation ("the disk keeps filling up")
// rather than naming a subject ("disk usage"). Words that are nouns as
// often ("restarts", "fails over") are left out.
var finiteVerbs = map[string]bool{
	"is": true, "are": true, "was": true, "were": true, "keep": true, "keeps": true, "kept": true, "get": true,
	"gets": true, "got": true, "seem": true, "seems": true, "has": true, "have": true, "had": true, "went": true,
	"goes": true, "became": true, "becomes": true, "started": true, "stopped": true, "failed": true, "crashed": true,
	"stays": true, "stay": true, "stayed": true, "won't": true, "can't": true, "cannot": true, "don't": true,
	"doesn't": true, "isn't": true, "aren't": true, "wasn't": true, "didn't": true, "never": true, "ends": true,
	"ended": true, "happens": true, "happened": true, "see": true, "saw": true, "notice": true, "noticed": true,
	// Irregular past tenses that are no participle used as an adjective
	// ("kafka consumers fell behind overnight", "the heap grew to 6 GB"):
	// "broken", "stuck" and "hung" describe a thing as often.
	"fell": true, "grew": true, "broke": true, "froze": true, "rose": true, "ran": true, "began": true,
	"came": true, "took": true, "shrank": true, "blew": true, "died": true, "threw": true, "gave": true,
}

// statement reports whether s tells a situation: it has a finite verb
// after its first word (a subject comes first).
func statement(s string) bool {
	ws := strings.Fields(strings.ToLower(s))
	for _, w := range ws[min(1, len(ws)):] {
		if finiteVerbs[strings.Trim(w, ",.;:!?\"'")] {
			return true
		}
	}
	return false
}

// lowerLeadWords are sentence-starting words that are no names.
var lowerLeadWords = map[string]bool{
	"the": true, "a": true, "an": true, "this": true, "that": true, "these": true, "those": true, "too": true,
	"not": true, "some": true, "many": true, "much": true, "all": true, "every": true, "each": true, "no": true,
	"your": true, "their": true, "slow": true, "out": true, "lack": true, "high": true, "low": true,
	// A time told first: "What does it mean when since live chat went
	// out, …", not "when Since live chat …".
	"since": true, "after": true, "during": true, "before": true, "following": true, "until": true,
}

// askedOfAnyone is a question without the lead that asks it of the
// channel: "does anyone know why etcd logs …" asks why etcd logs …; "has
// anyone seen kubelet PLEG errors after …" is about those errors; "is
// there a way to drain a node …" asks how to; "can you explain how
// consumer group rebalancing works" asks how it works.
func askedOfAnyone(p string) string {
	for _, r := range askedOfAnyoneRes {
		if loc := r.re.FindStringSubmatchIndex(p); loc != nil {
			q := string(r.re.ExpandString(nil, r.with, p, loc)) + p[loc[1]:]
			if m := howItWorksRe.FindStringSubmatch(q); m != nil {
				// "how consumer group rebalancing works"
				q = "how does " + m[1] + " work"
			}
			return q
		}
	}
	return p
}

var howItWorksRe = regexp.MustCompile(`(?i)^how\s+(.+?)\s+works$`)

var askedOfAnyoneRes = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`(?i)^(?:does|do)\s+(?:anyone|anybody|someone|somebody)\s+(?:here\s+)?know\s+(?:if\s+|whether\s+)?`), ""},
	{regexp.MustCompile(`(?i)^(?:has|have)\s+(?:anyone|anybody|someone|somebody)\s+(?:here\s+)?(?:ever\s+)?(?:seen|had|hit|run\s+into|dealt\s+with|experienced)\s+`), ""},
	{regexp.MustCompile(`(?i)^is\s+there\s+(?:a|any)\s+(?:(?:good|clean|safe|sane|quick|easy|better|proper)\s+)?way\s+to\s+`), "how to "},
	{regexp.MustCompile(`(?i)^(?:can|could|would)\s+(?:someone|somebody|anyone|you)\s+(?:please\s+)?explain\s+(how|why|what|when)\b`), "$1"},
}

// thingNamed reports whether the topic so far named a thing, set off by a
// colon or a dash (label), briefly and with no problem in it
// ("ingress-nginx limit-rps annotation", "vault transit key rotation"),
// rather than told a situation or a problem: a question asked after it
// asks about the thing ("is the limit per controller replica or global?"
// offers no two causes to tell apart).
func (f form) thingNamed(label string) bool {
	n := f.noun
	return f.told && n != "" && strings.EqualFold(n, strings.TrimSpace(label)) && f.clause == "" && f.action == "" && len(strings.Fields(n)) < toldWords &&
		!strings.Contains(n, "«") && !versusRe.MatchString(n) && !problemToldRe.MatchString(n) &&
		!symptomRe.MatchString(n) && !situationRe.MatchString(n) && len(alertSearches(n)) == 0 && !f.problem()
}

// offersRemedies reports whether the question p offers two things to do
// ("reload or restart?", "set jit = off globally, or raise
// jit_above_cost?"), whatever was told before it.
func offersRemedies(p string) bool {
	m := alternativeRe.FindStringSubmatch(p)
	return m != nil && remedies(offered(m[1]), offered(m[2]))
}

// asksOf reports whether the question asked, put after what it is about
// (a thing named, a situation told), asks something of it: whether to do
// a thing, or a yes-or-no question whose own words, without the
// judgement of itself it may end with ("do we just bump the quota, or is
// that overkill?"), are no judgement. The two cases of parseForm that
// ask a question of what came before read it alike.
func asksOf(asked string) bool {
	return needToRe.MatchString(asked) || yesNo(asked) && !judgement(withoutTail(asked))
}

// judgementRe is an answer a question offers that judges rather than
// names a cause: "is that a problem or can we ignore it", "is that a bug
// in how we use it or expected", "is skipping that event ok, or are we
// asking for trouble"; so does one asking whether what was seen has one
// cause ("one cause or two", "related or two separate problems").
var judgementRe = regexp.MustCompile(`(?i)^(?:(?:a|an)\s+)?(?:real\s+|big\s+|known\s+)?(?:problem|issue|concern|bug|worry)\b|\b(?:ok|okay|fine|normal|expected|safe|overkill|asking\s+for\s+trouble)$|^(?:one|the\s+same|same|a\s+single|single)\s+(?:root\s+)?(?:cause|problem|issue|thing|fault)s?\b|^(?:related|connected|linked)$|^two\b`)

// judgement reports whether the question p offers a judgement as one of
// its answers (judgementRe), so it asks one thing, not two causes.
func judgement(p string) bool {
	m := alternativeRe.FindStringSubmatch(p)
	if m == nil {
		return judgementRe.MatchString(strings.Trim(yesNoRe.ReplaceAllString(p, "$2"), ",;:- "))
	}
	return judgementRe.MatchString(strings.Trim(m[1], ",;:- ")) || judgementRe.MatchString(strings.Trim(m[2], ",;:- "))
}

// yesNo reports whether p asks a yes-or-no question of one subject: not
// two things to pick between ("is it the OOM killer or bad RAM"), though
// it may end judging itself ("…, or is that overkill?") or asking the
// opposite ("…, or does the runtime figure that out on its own?").
func yesNo(p string) bool {
	q := withoutTail(p)
	return yesNoRe.MatchString(q) && !strings.Contains(strings.ToLower(q), " or ") && !versusRe.MatchString(q)
}

// withoutTail is a yes-or-no question without what it ends with: a
// judgement of itself ("…, or is that overkill?") or the opposite asked
// ("…, or does the runtime figure that out on its own?").
func withoutTail(q string) string {
	return orAuxRe.ReplaceAllString(judgedRe.ReplaceAllString(q, ""), "")
}

// whether is a yes-or-no question's statement, for "whether …", when
// its words allow one without changing a verb: "do zombie processes count
// against …" (zombie processes count against …), "is it normal …" (it is
// normal …), "can we run …" (you can run …); "" otherwise ("does the
// kubelet restart …" would need "restarts").
func (f form) whether() string {
	if !f.yesNo {
		return ""
	}
	switch f.aux {
	case "do":
		return yours(f.clause)
	case "does", "did":
		return ""
	}
	first, rest, _ := strings.Cut(f.clause, " ")
	if !pronounSubjectRe.MatchString(first) || rest == "" {
		return ""
	}
	return yours(first + " " + f.aux + " " + rest)
}

// lowerLead lowers s's first letter when its first word is a common
// word or a gerund ("The disk …", "Scaling Kafka consumers"), not a name
// ("Postgres", "TLS", "Spring Boot").
func lowerLead(s string) string {
	w, _, _ := strings.Cut(s, " ")
	lw := strings.ToLower(w)
	if len(w) < 2 || w == lw || w[1:] != lw[1:] {
		return s
	}
	if !lowerLeadWords[lw] && !gerund(lw) {
		return s
	}
	return lw + s[len(w):]
}

// gerund reports whether the lower-case word w is a verb's -ing form
// ("scaling", "running"); "spring" and "string" are not.
func gerund(w string) bool {
	return len(w) > 5 && strings.HasSuffix(w, "ing") && w != "spring" && w != "string"
}

// unset reports whether no part of the topic has yet said what it is
// about (its subject, situation or task): the first part that does wins.
func (f form) unset() bool { return f.noun == "" && f.clause == "" && f.action == "" }

// yours turns the asker's "my" and "our" into "your" and "we" into "you"
// (lower case: the subject is always quoted inside a question).
func yours(s string) string {
	return weRe.ReplaceAllString(possessiveRe.ReplaceAllString(ourselvesRe.ReplaceAllString(s, "yourselves"), "your"), "you")
}

// problem reports whether the noun names a problem: its head word does
// ("certificate expiry", "CPU throttling in Kubernetes"; not "error
// correction codes"), or the topic asks what causes it.
func (f form) problem() bool {
	return f.cause || f.situation || problemWords[strings.ToLower(f.head())] || problemLeadRe.MatchString(f.noun)
}

// tellsNoProblem reports whether the topic tells no problem at all — no
// failure, error or symptom in any of its words, no situation told ("Vault
// keeps coming back sealed"), no message quoted, no two problems to tell
// apart — but asks how to do, plan or choose
// something ("EKS 1.29 -> 1.31 upgrade", "JetStream capacity planning",
// "Redis Sentinel or Redis Cluster?", "Postgres connection pooling").
func (f form) tellsNoProblem(topic string) bool {
	// An alert named ("what should we do about etcdDatabaseQuotaLowSpace
	// on prod-eu1") fired: a problem is told.
	if f.problem() || f.apart || f.told && f.clause != "" || quoteRe.MatchString(topic) || problemToldRe.MatchString(topic) || symptomRe.MatchString(topic) || slices.ContainsFunc(alertNames(topic), alertName) || thrownRe.MatchString(topic) {
		return false
	}
	for _, w := range strings.FieldsFunc(strings.ToLower(topic), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '-'
	}) {
		if problemWords[w] {
			return false
		}
	}
	return true
}

// problemLeadRe marks a subject that is a problem by its first words
// whatever its head ("running out of inodes on build servers", "too many
// open files", "slow queries").
var problemLeadRe = regexp.MustCompile(`(?i)^(?:running\s+out|out\s+of|hitting|losing|leaking|failing|crashing|dropping|timing\s+out|exceeding|exhausting|filling\s+up|too\s+(?:many|much|few)|not\s+enough|lack\s+of|slow)\b`)

// situationRe marks a noun phrase that tells a thing doing something
// after its first word ("Kafka consumers falling behind", "WAL piling up
// on the primary", "notifications not arriving", "drain stuck"), not a
// thing ("connection pooling", "failing disks").
var situationRe = regexp.MustCompile(`(?i)^\S+.*?\s(?:piling|filling|falling|running|leaking|crashing|failing|dropping|growing|climbing|spiking|flapping|restarting|lagging|timing|hanging|stalling|erroring|losing|exceeding|backing|being|expiring|exhausting|rejecting|evicting|saturating|degrading|refusing|hitting|stuck|not\s+\w+ing)\b`)

// choice reports whether the topic sets two things side by side to pick
// one ("Kafka vs RabbitMQ for an event bus"), not two problems to tell
// apart, and asks nothing beyond what they are and how they differ.
func (f form) choice() bool {
	return f.things() && !slices.ContainsFunc(f.asked, func(k questionKind) bool {
		return k.name != kindComparison.name && k.name != kindOverview.name
	})
}

// things reports whether a comparison's sides are two things to choose
// between (Redis and Memcached), not two problems.
func (f form) things() bool {
	return f.a != "" && !f.apart && !problemSide(f.a) && !problemSide(f.b)
}

// problemSide reports whether a comparison's side names a problem: by its
// head ("consumer lag") or as a thing doing something ("Vault being
// sealed", "tokens expiring").
func problemSide(s string) bool {
	// A message quoted ("'accept4() failed (24: Too many open files)'")
	// is what went wrong somewhere.
	if loc := quoteRe.FindStringIndex(s); loc != nil && loc[0] == 0 {
		return true
	}
	return problemWords[strings.ToLower(headOf(s))] || situationRe.MatchString(s)
}

// side is a comparison's side as its questions name it, and the search
// query for it.
type side struct{ name, query string }

// sides are a comparison's sides, each searched for alone when it is
// specific enough to stand alone ("'accept4() failed (24: Too many open
// files)'"), else as told with the situation it was asked in ("full disk"
// with "writes fail with 'No space left on device'").
func (f form) sides() []side {
	if f.a == "" {
		return nil
	}
	var out []side
	for _, s := range []string{f.a, f.b} {
		q := s
		if relevance.Parse(s).Specific() < 2 {
			q += " " + f.setting
		}
		out = append(out, side{s, searchQuery(q)})
	}
	return out
}

// messageTerms is how many specific words a quoted message needs (as
// relevance counts a passage from three): a quoted command ("`ip -s
// link`"), setting ("`ndots:5`") or address and timeout ("'dial udp
// 10.96.0.10:53: i/o timeout'") is near every runbook that shares a word
// with it.
const messageTerms = 3

// quotedMessages are the messages a topic quotes — a pasted log or error
// line ("`PLEG is not healthy: pleg was last seen active 3m41s ago`"), of
// messageTerms specific words or more: what printed them is what the
// topic is about, whatever the story told around them.
func quotedMessages(topic string) []string {
	return quotedOf(topic, func(n int) bool { return n >= messageTerms })
}

// shortQuotes are the messages a topic quotes of one specific word fewer
// than messageTerms ("`SQLSTATE[HY000] [1040] Too many connections`",
// "`Duplex: Half`"): too short to be searched or judged as a pasted
// line is, they count only for a source they plainly select (see
// assess).
func shortQuotes(topic string) []string {
	return quotedOf(topic, func(n int) bool { return n == messageTerms-1 })
}

// quotedOf are the messages a topic quotes whose count of specific words
// keep accepts.
func quotedOf(topic string, keep func(int) bool) []string {
	var out []string
	for _, q := range quoteRe.FindAllString(topic, -1) {
		q = strings.TrimLeft(q, " \t\n(")
		_, size := utf8.DecodeRuneInString(q)
		_, last := utf8.DecodeLastRuneInString(q)
		m := strings.TrimSpace(q[size : len(q)-last])
		if keep(relevance.Parse(m).Specific()) && !slices.Contains(out, m) {
			out = append(out, m)
		}
	}
	return out
}

// observations are what a topic tells it saw, each searched on its own
// as enrichment searches an alert: the clauses of its statements ("iostat
// shows nvme1n1 at 100% util", "pg_stat_activity shows ~180 sessions
// waiting on a Lock"), of messageTerms specific words or more, in a topic
// of two sentences or more that tells a problem. Its questions are what
// it asks, searched as the plan's ("should we roll back first" is about
// no runbook); a topic of one sentence is its subject; and one that tells
// no problem (how to upgrade, size or choose) saw nothing: "We still run
// our legacy Kafka cluster on ZooKeeper" is its setting.
func (f form) observations(topic string) []string {
	if f.tellsNoProblem(topic) {
		return nil
	}
	var told []string
	n := 0
	for _, s := range splitSentences(topic) {
		n++
		if s.asks {
			continue
		}
		for _, c := range clauses(s.text) {
			c = strings.TrimSpace(c)
			if c != "" && !askRe.MatchString(c) && relevance.Parse(c).Specific() >= messageTerms && !slices.Contains(told, c) {
				told = append(told, c)
			}
		}
	}
	if n < 2 {
		return nil
	}
	return told
}

var (
	// sentenceEndRe ends a sentence: its stop or a semicolon. A dash
	// does not: "minio erasure set sizing — EC:4 vs EC:2" is one subject.
	sentenceEndRe = regexp.MustCompile(`[.?!]+(?:\s+|$)|;\s+`)
	// clauseRe separates the clauses of a sentence.
	clauseRe = regexp.MustCompile(`,\s+|\s+(?:and|but|while|then|so|because)\s+`)
	// askRe starts a question, with or without its question mark ("how
	// do i tell").
	askRe = regexp.MustCompile(`(?i)^(?:(?:and|but|or|also|so)\s+)?(?:how|what|whats|what's|why|which|when|where|who|should|shall|can|could|would|will|do|does|did|is|are|was|were|any|anyone)\b`)
)

// clauses splits a sentence into its clauses (clauseRe), not inside
// parentheses or a quoted message: "db-11 (bare metal, billing-pg
// replica)" is one, and so is "`lifetime watcher done, re-authenticating`".
func clauses(s string) []string {
	parens := append(parenRe.FindAllStringIndex(s, -1), quoteRe.FindAllStringIndex(s, -1)...)
	var out []string
	last := 0
	for _, loc := range clauseRe.FindAllStringIndex(s, -1) {
		// Only a separator wholly inside is kept: a quoted message's
		// match may start with the space before it, which the
		// separator before the message shares.
		if slices.ContainsFunc(parens, func(p []int) bool { return p[0] < loc[0] && loc[1] < p[1] }) {
			continue
		}
		out = append(out, s[last:loc[0]])
		last = loc[1]
	}
	return append(out, s[last:])
}

var parenRe = regexp.MustCompile(`\([^()]*\)`)

// misspelledRe is a question word as people mistype it in chat ("wich
// one and how do we tell?", "shoud we drain it?").
var misspelledRe = regexp.MustCompile(`(?i)\b(?:wich|whcih|shoud|shold|shuold)\b`)

// spelled is topic with its question words spelled as the planner reads
// them.
func spelled(topic string) string {
	return misspelledRe.ReplaceAllStringFunc(topic, func(w string) string {
		right := "which"
		if strings.HasPrefix(strings.ToLower(w), "sh") {
			right = "should"
		}
		if r, _ := utf8.DecodeRuneInString(w); unicode.IsUpper(r) {
			right = strings.ToUpper(right[:1]) + right[1:]
		}
		return right
	})
}

// sentence is one sentence of a topic, and whether it asks.
type sentence struct {
	text string
	asks bool
}

// splitSentences splits topic into its sentences.
func splitSentences(topic string) []sentence {
	topic = spelled(topic)
	var out []sentence
	add := func(s, end string) {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, sentence{s, strings.Contains(end, "?") || askRe.MatchString(s)})
		}
	}
	start := 0
	for _, m := range sentenceEndRe.FindAllStringIndex(topic, -1) {
		add(topic[start:m[0]], topic[m[0]:m[1]])
		start = m[1]
	}
	add(topic[start:], "")
	return out
}

// firstSentences returns f with each part it asks about cut to its
// first sentence, and whether any was cut.
func (f form) firstSentences() (form, bool) {
	cut := false
	for _, p := range []*string{&f.noun, &f.clause, &f.action, &f.a, &f.b, &f.setting} {
		if first := firstSentence(*p); first != *p {
			*p, cut = first, true
		}
	}
	return f, cut
}

// firstSentence returns s up to the end of its first sentence, outside
// quotes ("`consumer poll timeout has expired. This means …`" is one
// message) and abbreviations ("e.g. "), when at least three words come
// before it.
func firstSentence(s string) string {
	masked := []byte(s)
	for _, loc := range quoteRe.FindAllStringIndex(s, -1) {
		for i := loc[0] + 1; i < loc[1]-1; i++ {
			masked[i] = 'x'
		}
	}
	for _, loc := range sentenceRe.FindAllIndex(masked, -1) {
		head := strings.TrimSpace(s[:loc[0]])
		ws := strings.Fields(head)
		if len(ws) < 3 || abbreviations[strings.ToLower(ws[len(ws)-1])] {
			continue
		}
		return head
	}
	return s
}

// bare reports whether subject, set before a colon or a dash, names a
// thing in three words or fewer ("postgres 16", "Redis Cluster") and
// the detail after it tells what happened to it ("clients got
// `CLUSTERDOWN …`"), rather than saying what about it is asked.
func (f form) bare(subject string) bool {
	d := f.detail
	// statement reads a verb after the first word, the subject: the
	// detail's own first word may be its verb ("gets '503 SlowDown'").
	return d != "" && len(strings.Fields(subject)) <= 3 && (problemToldRe.MatchString(d) || statement("it "+d) && quoteRe.MatchString(d))
}

// toldText is what was told as the topic's subject or situation.
func (f form) toldText() string { return strings.TrimSpace(f.clause + " " + f.noun) }

// tellApart sets a and b as two problems to tell apart, asked how to tell
// them apart; what was told before them is their setting.
func (f *form) tellApart(a, b string) {
	f.asked = append(f.asked, kindDiagnosis)
	if f.told {
		f.setting = f.toldText()
	}
	f.a, f.b, f.apart = a, oneOf(a, b), true
	f.noun = f.a + " and " + f.b
}

// named is s as about the system the topic named before a colon
// ("Vault: how do we migrate to auto-unseal?"): s with the name before
// it unless s says it already.
func (f form) named(s string) string {
	if f.name == "" || strings.Contains(strings.ToLower(s), strings.ToLower(f.name)) {
		return s
	}
	return f.name + " " + s
}

// oneOf reads a second side told by "one" ("a failing disk from a busy
// one", "a pod that fails its probe from one in CrashLoopBackOff") as
// the first side's thing: "busy disk", "pod in CrashLoopBackOff".
func oneOf(a, b string) string {
	thing := articleRe.ReplaceAllString(a, "")
	if loc := relativeRe.FindStringIndex(" " + thing + " "); loc != nil {
		thing = thing[:max(loc[0]-1, 0)]
	}
	ws := strings.Fields(thing)
	if len(ws) == 0 {
		return b
	}
	thing = ws[len(ws)-1]
	if loc := oneRe.FindStringIndex(b); loc != nil && loc[0] == 0 {
		// "one in CrashLoopBackOff": a pod in it.
		thing = "a " + thing
	}
	return oneRe.ReplaceAllString(b, "${1}"+thing+"${2}")
}

var (
	relativeRe = regexp.MustCompile(`(?i)\s(?:that|which|who|whose|where|with|in|of|on|for|from|at|under)\s`)
	// symptomRe finds a symptom told in the words a runbook on it uses
	// ("the parent circuit breaker keeps tripping", "the volume crawls",
	// "nodes above 90% CPU"); only a topic with none tells no problem.
	symptomRe = regexp.MustCompile(`(?i)\b(?:trip(?:s|ped|ping)|crawl\w*|flap\w*|hang(?:s|ing)|hung|freez\w*|froze\w*|spik\w*|saturat\w*|exhaust\w*|throttl\w*|leak\w*|degrad\w*|oscillat\w*|starv\w*|unhealthy|unavailable|unreachable|(?:above|over)\s+\d+\s*%)`)
	// problemToldRe finds a problem in a sentence told beside a choice
	// ("We hit 'too many clients' every time", "the old one keeps
	// failing"), not context ("Everything is deployed with Argo CD"); a
	// cluster told by its health's colour ("still yellow", "went red")
	// or with shards left UNASSIGNED is one.
	problemToldRe = regexp.MustCompile(`(?i)\b(?:fail\w*|error\w*|crash\w*|time[sd]?\s+out|timeout\w*|refus\w*|reject\w*|exceed\w*|hit|hits|hitting|run(?:s|ning)?\s+out|down|stuck|slow\w*|drop\w*|lag\w*|full|outage\w*|broke\w*|OOM\w*|[45]\d\ds|[45]xx|(?:returns?|returned|gets?|got|with|throws?|throwing|answers?)\s+(?:an?\s+)?[45]\d\d|skew\w*|evict\w*|fill(?:s|ed|ing)?|pending|\w*full|not|never|\w+n't|cannot|no\s+longer|unassigned|(?:is|are|went|turned|goes|going|stays?|still)\s+(?:yellow|red))\b`)
	// goingOnRe asks what is behind a situation told ("what's going on",
	// "what happened", "what is wrong").
	goingOnRe = regexp.MustCompile(`(?i)^(?:what(?:'s|\s+is|\s+was)\s+(?:going\s+on|happening|wrong|up)|what\s+happened|what\s+could\s+(?:cause|explain)\s+(?:that|this|it))\b`)
	// doingRe starts what to do, as an on-call engineer offers it ("just
	// raise max_connections", "first find out which endpoints are
	// failing", "recreate the pod").
	doingRe = regexp.MustCompile(`(?i)^` + offerLead + `(?:kill|raise|lower|bump|increase|decrease|reduce|turn|roll|restart|reboot|recreate|rebuild|resize|grow|drop|delete|remove|add|scale|set|switch|move|upgrade|downgrade|wait|fail|drain|cordon|replace|swap|disable|enable|find|check|use|put|rollback|revert|reset|flush|expand|shrink|migrate|pin|cap|limit|freeze|pause|resume|promote|rerun|retry|redeploy|reinstall|restore|fix|undo|get|change|dump|remount|bounce|evict|rotate|resync|reindex|tune|reissue|renew|rejoin|let|keep|leave|uninstall|install|stop|start|power|mount|unmount|umount|patch|ignore|purge|truncate|vacuum|compact|rebalance|reassign|demote|regenerate|revoke|resubmit)\b`)
	// alternativeRe is a question offering two answers ("is remote
	// write falling behind or are targets not being scraped").
	alternativeRe = regexp.MustCompile(`(?i)^(?:(?:is|was|are|were)\s+(?:it|this|that)\s+|(?:is|was|are|were|do|does|did|can|could|should|shall|would|must)\s+(?:(?:it|we|you|i|they)\s+)?)?(.+?)\s+or\s+(?:(?:is|was|are|were|do|does|did|can|could|should|shall|would|must)\s+(?:(?:it|this|that|we|you|i|they)\s+)?)?(.+)$`)
	// mustRe leads a thing to do with what forces it ("have to rebuild
	// it", "need to resync").
	mustRe = regexp.MustCompile(`(?i)^(?:(?:we|i|you)\s+)?(?:just\s+)?(?:have\s+to|need\s+to|need|got\s+to|gotta)\s+`)
	// nounReadRe is a side whose first word is a noun, not a verb: a
	// gerund or a preposition follows it ("swap thrashing", "drop in
	// traffic").
	nounReadRe = regexp.MustCompile(`(?i)^` + offerLead + `\w+\s+(?:\w+ing|of|in|on|at)\b`)
	// orIsRe offers the second answer as what is the case ("or is this
	// a leak").
	orIsRe = regexp.MustCompile(`(?i)\bor\s+(?:is|was|are|were)\s`)
	// justRe is how a side plays itself down ("just restart it").
	justRe = regexp.MustCompile(`(?i)^(?:just|simply)\s+`)
	// moreRe leads a remedy told by its amount ("more replicas", "a
	// bigger instance").
	moreRe = regexp.MustCompile(`(?i)^(?:(?:a|an)\s+)?(?:more|fewer|less|bigger|smaller|larger|another|extra)\s`)
	// causeLeadRe leads a side that is no remedy but another cause
	// ("something else going on", "is this a leak").
	causeLeadRe    = regexp.MustCompile(`(?i)^(?:something|anything|someone|it|this|that|these|those|there)\b`)
	lastSentenceRe = regexp.MustCompile(`[.!]\s+([^.!]+)$`)
	oneRe          = regexp.MustCompile(`(?i)(^|\s)ones?(\s|$)`)
)

// offerLead is how an engineer leads what they offer to do before its
// verb ("just", "first", "we"), read by doingRe and nounReadRe alike.
const offerLead = `(?:(?:just|first|simply|rather|we|i)\s+)*`

// offered is a side of a question offering two answers as what it offers:
// without the question's own lead ("Can we just restart the replica
// threads," → "restart the replica threads", "have to rebuild it" →
// "rebuild it", "need a rebuild" → "a rebuild") or the comma before "or".
func offered(s string) string {
	s = strings.TrimRight(strings.TrimSpace(s), ",;:- ")
	return justRe.ReplaceAllString(mustRe.ReplaceAllString(s, ""), "")
}

// remedies tells whether two answers offered for a situation told are
// two things to do: each led by what to do ("kill that one or raise
// max_connections"), or by an amount ("more replicas, or NodeLocal
// DNSCache?"), or the second a thing the first one's verb is done to
// ("raise maxReplicas or the cpu limit"); not a thing to do and another
// cause ("replace the disk, or something else to blame?").
func remedies(a, b string) bool {
	switch {
	case doing(a) && doing(b):
		return true
	case doing(a):
		return !causeLeadRe.MatchString(b)
	case doing(b):
		return !causeLeadRe.MatchString(a)
	}
	return false
}

// offers tells whether the topic offers what to do about the situation it
// told: two things, or one and another cause.
func (f form) offers() bool { return (f.remedies || f.doubt) && f.setting != "" }

// doing tells whether s is a thing to do: led by what to do ("raise
// maxReplicas"), not by a noun the verb spells too ("swap thrashing",
// "drop in traffic"), or by an amount ("more replicas").
func doing(s string) bool {
	return doingRe.MatchString(s) && !nounReadRe.MatchString(s) || moreRe.MatchString(s) || otherWayRe.MatchString(s)
}

// otherWayRe is a remedy asked for rather than named ("reissue it with
// SANs, or is there a quicker way out tonight?").
var otherWayRe = regexp.MustCompile(`(?i)^there\s+(?:an?\s+|any\s+)?(?:\w+\s+)?(?:way|fix|option|workaround|alternative)\b`)

// head is the noun's head word: its last word before a preposition.
func (f form) head() string { return headOf(f.noun) }

// headOf is a noun phrase's head word: its last word before a
// preposition.
func headOf(head string) string {
	if loc := prepositionRe.FindStringIndex(head); loc != nil {
		head = head[:loc[0]]
	}
	ws := strings.Fields(head)
	if len(ws) == 0 {
		return ""
	}
	return strings.Trim(ws[len(ws)-1], ",.;:")
}

// plural reports whether the noun's head word is plural ("models" in
// "language models in testing").
func (f form) plural() bool {
	if lead, _, _ := strings.Cut(f.noun, " "); gerund(strings.ToLower(lead)) {
		// "scaling Kafka consumers" is one activity.
		return false
	}
	w := strings.ToLower(f.head())
	return len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is")
}

// question writes the angle's question in the topic's own terms; sharper
// is the second phrasing Refine tries when the first found too little.
func (f form) question(k questionKind, sharper bool) string {
	return tidyQuestion(f.composed(k, sharper))
}

// doubledMarkRe is a question or exclamation mark the asker wrote before
// the question's own mark or a comma the question adds, or a stop before
// its mark ("… for the office and lab subnets.?").
var doubledMarkRe = regexp.MustCompile(`[?!]+([?,])|\.(\?)`)

// tidyQuestion leaves one mark where the asker's ("only 61% full??",
// "did it fall out of prometheus?", "… subnets.") meets the question's
// own ("…full??", "…prometheus?, or why not?", "…subnets.?"), outside
// the messages it quotes in backquotes, which stay as written.
func tidyQuestion(q string) string {
	parts := strings.Split(q, "`")
	for i := 0; i < len(parts); i += 2 {
		parts[i] = doubledMarkRe.ReplaceAllString(parts[i], "$1$2")
	}
	return strings.Join(parts, "`")
}

// composed is question before tidyQuestion.
func (f form) composed(k questionKind, sharper bool) string {
	if f.lead {
		g := f
		g.lead = false
		q := g.question(k, sharper)
		r, n := utf8.DecodeRuneInString(q)
		return headingOf(f.name) + ": " + string(unicode.ToLower(r)) + q[n:]
	}
	if g, cut := f.firstSentences(); cut {
		// A story told over several sentences ("edge-3 stopped taking
		// new connections around 11:20. error.log: `…`. /nginx_status:
		// …") is asked about by its first: the rest, pasted logs
		// included, was searched and judged on its own.
		return g.question(k, sharper)
	}
	pick := func(first, second string) string {
		if sharper {
			return second
		}
		return first
	}
	if f.a != "" {
		a, b, ctx := f.a, f.b, f.context
		if k.name == kindComparison.name && !f.offers() {
			return pick("How do "+a+" and "+b+" differ"+ctx+"?", "What separates "+a+" from "+b+ctx+"?")
		}
		if f.things() {
			// Two things to choose between (Redis and Memcached), not
			// two problems: what each is, when to pick which, the
			// trade-offs.
			switch k.name {
			case kindOverview.name:
				return pick("What is "+a+", and what is "+b+"?", "How do "+a+" and "+b+" each work?")
			case kindCause.name:
				return pick("When would you choose "+a+" over "+b+ctx+"?", "When is "+b+" the better choice"+ctx+"?")
			case kindDiagnosis.name:
				return pick("How do you tell whether "+a+" or "+b+" fits"+ctx+"?", "What should you measure to choose between "+a+" and "+b+"?")
			default:
				return pick("What are the trade-offs between "+a+" and "+b+ctx+"?", "What goes wrong with "+a+" or "+b+ctx+"?")
			}
		}
		if s := f.setting; f.offers() {
			// Two things to do about the situation told, or one and
			// another cause: what it is and why, then which to do ("What
			// is kill that one?" is no question a person asks).
			if w, _, _ := strings.Cut(a, " "); len(w) > 1 && strings.ToLower(w[1:]) == w[1:] {
				// "Kill that one": a verb, not a name.
				a = strings.ToLower(w[:1]) + a[1:]
			}
			if f.doubt && k.name == kindDiagnosis.name {
				// "or something else?": or is it something else; "or
				// something else going on?": or is something else going on.
				if b = f.other; !causeLeadRe.MatchString(b) || len(strings.Fields(b)) <= 2 {
					b = "it " + b
				}
				return pick("Should you "+a+", or is "+b+", and how do you tell?", "Is it enough to "+a+", or is "+b+"?")
			}
			if k.name == kindDiagnosis.name {
				if !doingRe.MatchString(a) {
					// "More replicas, or NodeLocal DNSCache?": two remedies
					// named, not done.
					return pick("Which helps here, "+a+" or "+b+", and how do you decide?", "When is "+a+" the better fix than "+b+"?")
				}
				return pick("Should you "+a+" or "+b+", and how do you decide?", "When is it better to "+a+" than to "+b+"?")
			}
			return aboutSituation(k, s, pick)
		}
		switch k.name {
		case kindOverview.name:
			return pick("What is "+a+", and what is "+b+"?", "How do "+a+" and "+b+" each show up?")
		case kindCause.name:
			return pick("What causes "+a+", and what causes "+b+"?", "Why do "+a+" and "+b+" happen?")
		case kindDiagnosis.name:
			return pick("How do you tell "+a+" from "+b+"?", "Which checks show "+a+" or "+b+"?")
		default:
			return pick("What do you do about "+a+" or "+b+"?", "How do you prevent "+a+" and "+b+"?")
		}
	}
	if f.action != "" {
		a := f.action
		if w, _, _ := strings.Cut(a, " "); f.should && gerund(strings.ToLower(w)) {
			// "Is it worth switching the NFS mounts to soft?": asked
			// with the gerund as written ("Should you switching …" is no
			// question).
			switch k.name {
			case kindOverview.name:
				return pick("Is it worth "+a+", and when?", "When does "+a+" pay off?")
			case kindCause.name:
				return pick("Why would you consider "+a+"?", "What could go wrong with "+a+"?")
			case kindDiagnosis.name:
				return pick("How do you check whether "+a+" helps?", "How do you confirm it worked after "+a+"?")
			default:
				return pick("How do you go about "+a+"?", "What are the steps for "+a+"?")
			}
		}
		switch k.name {
		case kindOverview.name:
			if f.should {
				return pick("Should you "+a+", and when?", "When is it worth it to "+a+"?")
			}
			return pick("What does it take to "+a+"?", "What should you know before you "+a+"?")
		case kindCause.name:
			return pick("Why would you need to "+a+"?", "What leads to having to "+a+"?")
		case kindDiagnosis.name:
			return pick("How do you check whether you need to "+a+"?", "How do you confirm it worked after you "+a+"?")
		default:
			return pick("How do you "+a+"?", "What are the steps to "+a+"?")
		}
	}
	if f.wh != "" {
		asked := yours(f.wh + " " + f.aux + " " + f.clause) // "what should chrony on your EC2 nodes sync against"
		q := strings.ToUpper(asked[:1]) + asked[1:]
		switch k.name {
		case kindOverview.name:
			return pick(q+"?", q+", and why?")
		case kindCause.name:
			return pick("What does the answer depend on: "+asked+"?", "What decides it: "+asked+"?")
		default:
			return pick("How do you check it on your own systems: "+asked+"?", "What shows whether it is right: "+asked+"?")
		}
	}
	if f.yesNo {
		asked := yours(f.aux + " " + f.clause) // "does the kubelet restart …"
		q := strings.ToUpper(asked[:1]) + asked[1:]
		w := f.whether()
		switch {
		case k.name == kindOverview.name:
			return pick(q+"?", q+", and when not?")
		case k.name == kindCause.name:
			return pick("Why "+asked+", or why not?", "What decides it: "+asked+"?")
		case k.name == kindDiagnosis.name && w != "":
			return pick("How do you check whether "+w+"?", "Which checks show whether "+w+"?")
		case k.name == kindDiagnosis.name:
			return pick("When "+asked+", and when not?", "In which cases "+asked+"?")
		default:
			return pick("What do you do if "+w+"?", "What should you change if "+w+"?")
		}
	}
	c, told := f.clause, false
	if c == "" && f.told && len(strings.Fields(f.noun)) >= toldWords && !f.problem() {
		// A situation told without a verb we know ("every rolling deploy
		// gives us a burst of 502s through the ingress controller"), read
		// neither as a problem nor as a thing doing something, is asked
		// about as a situation: "What are good practices for every
		// rolling deploy gives us …?" is no question a person asks.
		c, told = f.noun, true
	}
	if f.ask != "" && k.name == kindOverview.name {
		// "kafka consumers fell behind overnight: do you need more
		// partitions?"
		s := c
		if s == "" {
			s = f.noun
		}
		return pick(headingOf(s)+": "+f.ask+"?", "When "+s+", "+f.ask+"?")
	}
	if c != "" && (told || !(k.name == kindOverview.name && f.noun != "")) {
		if f.how && k.name == kindOverview.name {
			return pick("How "+f.aux+" "+c+"?", "How "+f.aux+" "+c+", step by step?")
		}
		if f.aux != "" {
			// A clause without its own finite verb: "why do pods get
			// OOM killed" is asked as such, and seen otherwise.
			switch k.name {
			case kindOverview.name:
				return pick("What does it mean to see "+c+"?", "What happens when you see "+c+"?")
			case kindCause.name:
				return pick("Why "+f.aux+" "+c+"?", "What makes "+c+"?")
			case kindDiagnosis.name:
				return pick("How do you notice "+c+"?", "Which checks show "+c+"?")
			default:
				return pick("What helps when you see "+c+", and how do you prevent it?", "How do you fix it when you see "+c+"?")
			}
		}
		return aboutSituation(k, c, pick)
	}
	n := f.noun
	switch k.name {
	case kindOverview.name:
		if problemLeadRe.MatchString(n) || f.situation {
			// "running out of inodes" is not a thing that is or works.
			return pick("What does "+n+" look like?", "What happens with "+n+"?")
		}
		if f.plural() {
			return pick("What are "+n+"?", "How do "+n+" work?")
		}
		return pick("What is "+n+"?", "How does "+n+" work?")
	case kindCause.name:
		if f.problem() {
			return pick("What causes "+n+"?", "Why does "+n+" happen?")
		}
		return pick("What goes wrong with "+n+", and why?", "What are the common problems with "+n+"?")
	case kindDiagnosis.name:
		if f.problem() {
			verb := " is"
			if f.plural() {
				verb = " are"
			}
			return pick("How can you tell "+n+verb+" the problem?", "Which checks show "+n+"?")
		}
		return pick("How do you check "+n+"?", "Which metrics and commands show how "+n+" is doing?")
	default:
		if f.problem() {
			return pick("How do you prevent "+n+"?", "How do you fix "+n+"?")
		}
		return pick("What are good practices for "+n+"?", "What should you set up for "+n+"?")
	}
}

// aboutSituation asks the angle about a situation told ("What causes it
// when the rollout is stuck at 3 of 10 new pods?"); pick chooses the
// first phrasing or the sharper one.
func aboutSituation(k questionKind, c string, pick func(first, second string) string) string {
	switch k.name {
	case kindOverview.name:
		return pick("What does it mean when "+c+"?", "What happens when "+c+"?")
	case kindCause.name:
		return pick("What causes it when "+c+"?", "Why would it happen that "+c+"?")
	case kindDiagnosis.name:
		return pick("How can you tell when "+c+"?", "Which checks show that "+c+"?")
	default:
		return pick("What can you do when "+c+", and how do you prevent it?", "How do you fix it when "+c+"?")
	}
}

// angles are the form's angles in plan order: those the topic asks for
// first, then the rest of overview, cause, diagnosis and prevention; a
// comparison adds each side's own overview.
func (f form) angles() []questionKind {
	order := slices.Clone(f.asked)
	if f.offers() {
		// "Kill it or raise max_connections?" compares two things to do:
		// asked once, as which to do.
		for i, k := range order {
			if k.name == kindComparison.name {
				order[i] = kindDiagnosis
			}
		}
	}
	for _, k := range []questionKind{kindOverview, kindCause, kindDiagnosis, kindPrevention} {
		if !slices.ContainsFunc(order, func(o questionKind) bool { return o.name == k.name }) {
			order = append(order, k)
		}
	}
	var out []questionKind
	for _, k := range order {
		if (f.yesNo && f.aux != "do" || f.wh != "") && k.name == kindPrevention.name {
			// What to do is asked of something that happens ("What do
			// you do if zombie processes count against …?"), not of
			// whether it is normal, or allowed: "What do you do if you can
			// run two keepalived pairs …?" is no question.
			continue
		}
		if !slices.ContainsFunc(out, func(o questionKind) bool { return o.name == k.name }) {
			out = append(out, k)
		}
	}
	return out
}

// OfflinePlanner writes sub-questions without a model, from the topic's
// own form: a "why" topic is asked why, a "how to prevent" topic how to
// prevent, a comparison how the two differ; then the remaining angles
// (what it is, what causes it, how to tell, what to do), each written as
// a person would ask it about the topic's subject. Refinement swaps a
// gap's question for its second phrasing, so the next search uses
// different words. It is deterministic.
type OfflinePlanner struct{}

var _ Planner = OfflinePlanner{}

// Plan returns the sub-questions for topic.
func (OfflinePlanner) Plan(_ context.Context, topic string) ([]string, error) {
	f := headingForm(topic)
	var plan []string
	for _, k := range f.angles() {
		plan = append(plan, f.question(k, false))
	}
	return plan, nil
}

// Refine replaces each gap (or, when the critique named none, every
// question: the evidence is thin overall) with its other phrasing.
func (OfflinePlanner) Refine(_ context.Context, topic string, plan []string, c Critique, sharpened map[string]int) ([]string, []string, error) {
	f := headingForm(topic)
	targets := map[string]bool{}
	for _, g := range c.Gaps {
		targets[g] = true
	}
	all := len(targets) == 0
	newPlan := make([]string, 0, len(plan))
	var pending []string
	for _, q := range plan {
		if !all && !targets[q] {
			newPlan = append(newPlan, q)
			continue
		}
		k := kindOf(q, topic)
		if k == nil {
			newPlan = append(newPlan, q)
			pending = append(pending, q)
			continue
		}
		n := sharpened[k.name]
		sharpened[k.name] = n + 1
		alts := []string{f.question(*k, true), f.question(*k, false)}
		sharp := alts[n%2]
		if sharp == q {
			sharp = alts[(n+1)%2]
		}
		newPlan = append(newPlan, sharp)
		pending = append(pending, sharp)
	}
	return newPlan, pending, nil
}

// kindOf returns the angle a sub-question asks about, or nil for a
// question the offline planner did not write (one from a model planner,
// say).
func kindOf(q, topic string) *questionKind {
	f := headingForm(topic)
	for _, k := range f.angles() {
		if q == f.question(k, false) || q == f.question(k, true) {
			return &k
		}
	}
	return nil
}

// subject is what the questions are about: the topic's subject, the
// situation it asks about, or a comparison's two sides.
func subject(topic string) string { return parseForm(topic).subject() }

// subject is what the form's questions are about (see subject).
func (f form) subject() string {
	var s string
	switch {
	case f.a != "":
		s = f.a + " and " + f.b
	case f.noun != "":
		s = f.noun
	case f.action != "":
		s = f.action
	case f.wh != "":
		// "how many partitions should a new Kafka topic get": the
		// partitions of a new Kafka topic, not "what" or "how many".
		s = whWordRe.ReplaceAllString(f.wh, "") + " " + f.clause
	default:
		s = f.clause
	}
	return articleRe.ReplaceAllString(strings.TrimSpace(s), "")
}

// describe is the plan's form in words, for tests and logs.
func (f form) String() string {
	return fmt.Sprintf("noun %q clause %q aux %q how %v action %q a %q b %q", f.noun, f.clause, f.aux, f.how, f.action, f.a, f.b)
}
