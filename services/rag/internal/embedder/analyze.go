package embedder

import (
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/blevesearch/snowballstem"
	"github.com/blevesearch/snowballstem/english"
)

// Analyze splits text into index terms: lowercased words (letters, digits
// and underscores), English stop words dropped, each word reduced to its
// Porter2 stem. BM25, the extractive answerer and the local embedder all
// use it so that "a term" means the same thing in the lexical and the
// dense view of a collection.
//
// Changing Analyze changes the vectors the local embedder produces, so any
// change must come with a new [Hashing.Name].
func Analyze(text string) []string {
	var terms []string
	eachWord(text, func(w string) {
		if _, stop := stopWords[w]; stop {
			return
		}
		terms = append(terms, stem(w))
	})
	return terms
}

// IsStopWord reports whether the lowercased word carries too little meaning
// to be a term of its own.
func IsStopWord(word string) bool {
	_, ok := stopWords[word]
	return ok
}

// eachWord calls fn with every lowercased word of text. A word is a run of
// letters, digits and underscores, which suits both prose and the
// identifiers of technical documents. Operator-like runs of punctuation
// (":=", "<-", "&&", "...", "~") are words too: in technical text they are
// what a question is about ("what does := do?").
func eachWord(text string, fn func(string)) {
	var b, op strings.Builder
	flush := func() {
		if b.Len() > 0 {
			fn(b.String())
			b.Reset()
		}
	}
	flushOp := func() {
		if o := op.String(); len(o) >= 2 && len(o) <= 3 || o == "~" {
			fn(o)
		}
		op.Reset()
	}
	for i := 0; i < len(text); {
		c := text[i]
		if c < utf8.RuneSelf {
			i++
			if strings.IndexByte(operatorChars, c) >= 0 {
				flush()
				op.WriteByte(c)
				continue
			}
			flushOp()
			switch {
			case 'a' <= c && c <= 'z', '0' <= c && c <= '9', c == '_':
				b.WriteByte(c)
			case 'A' <= c && c <= 'Z':
				b.WriteByte(c + 'a' - 'A')
			default:
				flush()
			}
			continue
		}
		flushOp()
		r, size := utf8.DecodeRuneInString(text[i:])
		i += size
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		} else {
			flush()
		}
	}
	flush()
	flushOp()
}

// operatorChars may form operator words; brackets, quotes and commas may
// not, so "f()" or "),"  never become words.
const operatorChars = "!%&*+-/:<=>^|~."

// maxStemCache bounds the stem cache: real vocabularies are far smaller,
// but a stream of random tokens must not grow memory without limit.
const maxStemCache = 1 << 18

var (
	// stemCache memoises stems because the Snowball stemmer allocates and
	// the same few thousand words recur in every chunk of a collection.
	stemCache   = map[string]string{}
	stemCacheMu sync.RWMutex
	envPool     = sync.Pool{New: func() any { return snowballstem.NewEnv("") }}
)

// stem returns the Porter2 stem of a lowercased word. Words with digits
// and very short words are kept as they are: stemming "int64" or "go"
// only loses information.
func stem(w string) string {
	if len(w) <= 3 || strings.ContainsAny(w, "0123456789_") {
		return w
	}
	stemCacheMu.RLock()
	s, ok := stemCache[w]
	stemCacheMu.RUnlock()
	if ok {
		return s
	}
	env := envPool.Get().(*snowballstem.Env)
	env.SetCurrent(w)
	english.Stem(env)
	s = strings.Clone(env.Current())
	envPool.Put(env)

	stemCacheMu.Lock()
	if len(stemCache) >= maxStemCache {
		clear(stemCache)
	}
	stemCache[strings.Clone(w)] = s
	stemCacheMu.Unlock()
	return s
}

// stopWords are common English function words, plus the question words
// people use when asking ("how", "what", "explain"), which say nothing
// about the topic of a question.
var stopWords = func() map[string]struct{} {
	words := strings.Fields(`
a about above after again against all also am an and any are aren as at
be because been before being below between both but by can cannot could
did do does doing don done down during each either else etc ever every few
for from further get gets got had has have having he her here hers herself him
himself his how however i if in into is isn it its itself just let lets me
might more most much must my myself neither no nor not now of off on once
only or other others ought our ours ourselves out over own per please same
shall she should so some such than that the their theirs them themselves then
there these they this those through thus to too under until up upon us very
was we were what whatever when whenever where whether which while who whom
whose why will with within without would yes yet you your yours yourself
yourselves
ll re ve s t d m
explain tell know want wants need needs use using used happen happens
happened mean means meaning thing things way ways
`)
	m := make(map[string]struct{}, len(words))
	for _, w := range words {
		m[w] = struct{}{}
	}
	return m
}()
