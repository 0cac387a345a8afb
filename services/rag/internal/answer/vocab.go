package answer

import (
	"context"
	"regexp"
	"slices"
	"strings"

	"github.com/groundcrew/groundcrew/services/rag/internal/embedder"
)

// A programmer asks in the words of their trade ("dereference",
// "underscore", "hex", "+="); the Go specification answers in its own
// ("indirection", "blank identifier", "hexadecimal", "assignment
// operation"). The offline answerer matches words, so it cannot bridge
// the two by itself: [Expand] adds, for each phrase of a question a small
// map recognises, the words the specification uses for the same thing.
// Retrieval searches for the question and those words, and the
// extractive writer counts them at [expansionWeight] of a question word.
//
// The map is general programmer vocabulary for the language, not a list
// of questions: each entry names something any Go programmer may say
// (an abbreviation, a term from another language, an operator, a
// paraphrase of a rule) and the specification's word for it. A language
// model (GROQ_API_KEY) or a neural embedder would not need it.

// synonym is one entry of the map: a phrase of the question (a regular
// expression over the lowercased question) and the specification's words
// for it.
type synonym struct {
	re   *regexp.Regexp
	spec string
}

func syn(pattern, spec string) synonym {
	return synonym{re: regexp.MustCompile(pattern), spec: spec}
}

// vocabulary maps a programmer's words to the specification's. Patterns
// see the question lowercased; \b marks word edges.
var vocabulary = []synonym{
	// Abbreviations and spellings.
	syn(`\bhex\b`, "hexadecimal"),
	syn(`\bfunc\b`, "function"),
	syn(`\bvars?\b`, "variable"),
	syn(`\bconsts?\b`, "constant"),
	syn(`\bchans?\b`, "channel"),
	syn(`\bargs?\b|\bparams?\b`, "argument parameter"),
	syn(`\bptrs?\b`, "pointer"),
	syn(`\bstrs?\b`, "string"),
	syn(`\bbool\b`, "boolean"),
	syn(`\bfloats?\b`, "floating-point"),
	syn(`\bchars?\b`, "character rune"),
	syn(`\bcap\b`, "capacity"),
	syn(`\bnull\b`, "nil"),
	syn(`\bupper[- ]?case\b|\bcapital(ised|ized)?\b|\bcapital letter`, "uppercase exported"),
	syn(`\blower[- ]?case\b`, "lowercase exported"),
	// Words from other languages.
	syn(`\bdictionar(y|ies)\b|\bhash ?(maps?|tables?)\b|\bassociative arrays?\b`, "map"),
	syn(`\bdynamic arrays?\b|\bvectors?\b|\barray ?lists?\b`, "slice"),
	syn(`\bthreads?\b|\basync\w*\b|\bin parallel\b|\bconcurrently\b|\bbackground\b`, "goroutine go statement"),
	syn(`\bexceptions?\b|\bthrows?\b|\babort\w*\b`, "panic run-time panic"),
	syn(`\bcatch\w*\b|\brecover\w*\b`, "recover panic deferred"),
	syn(`\bfinally\b|\bclean ?up\b|\bcleanup\b`, "defer deferred"),
	syn(`\bwhile loop\b|\bwhile\b.*\bloop\b|\bdo[- ]while\b|\binfinite loop\b|\bloop forever\b`, "for statement single condition repeated execution as long as a boolean condition"),
	syn(`\bforeach\b|\biterate over\b|\biterating over\b|\bloop over\b|\bloop through\b`, "range clause iteration"),
	syn(`\bfall ?through\b|\bfalls through\b|\bfalling through\b`, "fallthrough"),
	syn(`\benums?\b|\benumerat\w*\b`, "iota constant declaration"),
	syn(`\bcasts?\b|\bcasting\b`, "conversion convert"),
	syn(`\binstanceof\b|\bdowncast\w*\b|\bcheck\w* (the |its |a )?(dynamic )?type\b`, "type assertion type switch"),
	syn(`\bclosures?\b|\banonymous functions?\b|\blambdas?\b`, "function literal"),
	syn(`\bglobals?\b|\btop[- ]level\b|\bpackage level\b`, "package block"),
	syn(`\bself\b|\bthis\b`, "receiver"),
	syn(`\binherit\w*\b|\bsubclass\w*\b|\bextends?\b|\b(keep|keeps|retain|retains|get|gets)\b.*\bmethods?\b`, "inherit embedded field promoted methods method set"),
	syn(`\bgenerics?\b|\btemplates?\b`, "type parameters generic"),
	syn(`\bduck typing\b|\bsatisf\w*\b`, "implements interface"),
	syn(`\bentry point\b|\bprogram start\w*\b|\bstarts? running\b|\bwhere does .*\bstart\b`, "program execution begins invoking the function main"),
	// Operators, said or written.
	syn(`:=`, "short variable declaration"),
	syn(`(\+|-|\*|/|%|<<|>>|&|\||\^|&\^)=(\s|$)`, "assignment operation op="),
	syn(`\+\+|--|\bincrement\w*\b|\bdecrement\w*\b`, "IncDec statement increment decrement"),
	syn(`&&|\|\||\bshort[- ]circuit\w*\b`, "logical operators conditionally evaluated"),
	syn(`\btilde\b|~`, "underlying type ~T"),
	syn(`\bunderscore\b|(^|\s)_(\s|$|[,?.])`, "blank identifier"),
	syn(`\bdereferenc\w*\b|\bderef\b`, "pointer indirection *x"),
	syn(`\b(take|taking|get|getting|takes)\b.*\baddress\b|&x\b|\baddress of\b`, "address operation addressable"),
	syn(`\bmodulo\b|\bmod\b`, "remainder"),
	syn(`\bdivi\w* by zero\b|\bzero divisor\b`, "divisor zero run-time panic"),
	syn(`\bjoin\w*\b|\bconcat\w*\b|\bglue\b`, "concatenation"),
	syn(`\bdot\b`, "period"),
	// Paraphrases of the specification's rules.
	syn(`\bvariable number of\b|\bany number of\b|\bvarargs?\b|\.\.\.`, "variadic final parameter"),
	syn(`\bdefault values?\b|\buninitiali[sz]ed\b|\bbefore (i|you|we) (assign|set|initiali[sz]e)\w*\b|\binitial values?\b|\bnever (assigned|set|initiali[sz]ed)\b`, "zero value"),
	syn(`\bunlimited\b|\binfinite precision\b|\bhow precise\b`, "arbitrary precision"),
	syn(`\bfits?\b|\bfitting\b|\btoo (big|large|small)\b|\bdoes not fit\b`, "representable overflow"),
	syn(`\bmutable\b|\bmodify\b|\bchange a (byte|character)\b`, "immutable"),
	syn(`\bentries\b|\bentry\b|\bitems?\b`, "elements"),
	syn(`\bhow many (entries|elements|items|bytes|characters|runes|values)\b|\bnumber of (entries|elements|items)\b|\bcount\b`, "length len"),
	syn(`\bvisible\b|\bpublic\b|\bprivate\b|\bunexported\b|\bother packages?\b|\banother package\b|\boutside (the|its|a) package\b`, "exported"),
	syn(`\bready\b`, "proceed"),
	syn(`\bpast\b|\bbeyond\b|\bout of bounds\b|\btoo (big|large) (an )?index\b`, "out of range"),
	syn(`\bleave out\b|\bleft out\b|\bleave off\b|\bomit\w*\b|\bdo not write\b|\bdon't write\b|\bwithout writing\b`, "omitted missing absent"),
	syn(`\bhave no\b|\bhas no\b|\bwith no\b`, "missing omitted empty absent"),
	syn(`\bunused\b|\bnever used\b`, "never used"),
	syn(`\bshadow\w*\b`, "redeclared inner block scope"),
	syn(`\bmultiple return values?\b|\breturn (two|multiple|several) values\b|\bmultiple results\b`, "result parameters multi-valued"),
	syn(`\bnamed returns?\b|\bnaked return\b|\bbare return\b`, "named result parameters return statement"),
	syn(`\bdeadlock\w*\b|\bhangs?\b|\bblocks? forever\b|\bstuck\b`, "blocks forever"),
	syn(`\bsend[- ]only\b|\breceive[- ]only\b|\bread[- ]only channel\b|\bwrite[- ]only channel\b|\bone[- ]way channel\b`, "channel direction send receive only"),
	syn(`\bgrow\w*\b|\bresiz\w*\b|\bpush\b|\badd\w* (an )?elements? to\b`, "append"),
	syn(`\bremov\w*\b`, "delete removed"),
	syn(`\b(any|the|is) any\b|\bany (type|keyword|means?)\b`, "any alias for the empty interface"),
	syn(`\bsame as\b|\bequivalent\b|\bshorthand\b`, "equivalent shorthand"),
	syn(`\b(limit|restrict|set|cap)\w* (the |its )?capacity\b|\bthree[- ]index\b|\b3[- ]index\b`, "full slice expression max capacity"),
	syn(`\bfunc(tion)? variables?\b`, "function value"),
	syn(`\bshort statement\b|\binit(iali[sz]ation)? statement\b`, "simple statement"),
	syn(`\b(add|attach|define|declare|write)\w* (a |new )?methods? (to|on|for)\b`, "method declaration receiver base type same package"),
	syn(`\braw strings?\b|\bmulti-?line strings?\b|\bbacktick\w*\b`, "raw string literal back quotes"),
	syn(`\bescape\w*\b`, "backslash escapes"),
	syn(`\bchar(acter)? literals?\b`, "rune literal"),
	syn(`\b(digit|number|thousands) separators?\b|\bunderscores? (in|between) (numbers|numeric|literals|digits)\b`, "underscore between successive digits"),
	syn(`&\^|\bbit ?clear\b`, "bit clear AND NOT"),
	syn(`\bxor\b`, "bitwise XOR"),
	syn(`\binteger division\b|\bround\w*\b.*\bdivi\w*|\bdivi\w*\b.*\bround\w*`, "truncated towards zero"),
	syn(`\bbreak out of\b|\bnested loops?\b|\bouter loop\b`, "label labeled break continue"),
	syn(`\bnext iteration\b|\bskip (an |the |this )?iteration\b`, "continue statement next iteration"),
	syn(`\b(exit|leave|stop|end) (a |the )?loop\b`, "break statement terminates"),
	syn(`\bby reference\b|\bby value\b|\bcop(y|ied) of the arguments?\b`, "passed by value"),
	syn(`\bcompos(e|ition)\b|\bmixins?\b|\banonymous fields?\b`, "embedded field promoted"),
	syn(`\bcircular imports?\b|\bimport cycles?\b|\bimports? itself\b`, "import itself directly or indirectly"),
	syn(`\bunused imports?\b`, "import a package without referring to its exported identifiers"),
	syn(`\breserved words?\b`, "keywords reserved"),
	syn(`\border of operations\b|\bprecedence\b|\bbinds? (more )?tight\w*\b`, "operator precedence"),
	syn(`\b(compile|compiler|compilation) errors?\b|\bwon't compile\b|\bdoes not compile\b|\bfails? to compile\b`, "illegal invalid error"),
	syn(`\brun ?time errors?\b|\bruntime errors?\b|\bruntime panics?\b`, "run-time panic"),
	syn(`\bnumber of characters\b|\bcount (the )?characters\b`, "runes UTF-8 bytes"),
	syn(`\biteration order\b|\brandom order\b|\border of (the )?(keys|iteration)\b`, "iteration order not specified"),
	syn(`\bcomma[- ]ok\b`, "special form additional untyped boolean value ok"),
	syn(`\bcaptur\w*\b`, "function literals closures refer to variables defined in a surrounding function"),
	syn(`\bnon[- ]?blocking\b`, "default case"),
	syn(`\bsizeof\b|\bhow many bytes\b|\bmemory size\b|\bsize of (a |an |the )?(bool|int\w*|uint\w*|float\w*|complex\w*|byte|rune|struct|type|pointer|variable|value)s?\b|\bhow (big|large) is (a |an |the )?(bool|int\w*|uint\w*|float\w*|complex\w*|byte|rune|struct|type|pointer|variable)s?\b`, "Sizeof size guarantees"),
	syn(`\bpointer methods?\b|\bpointer receivers?\b|\bvalue receivers?\b`, "method set addressable shorthand (&x).m()"),
	syn(`\bbound methods?\b`, "method value"),
	syn(`\bkeys? (that )?(does not|doesn't|do not|don't) exist\b|\bmissing keys?\b|\bkeys? (is )?not (found|present|there)\b|\bnonexistent keys?\b|\babsent keys?\b`, "map does not contain such an entry zero value for the element type"),
	syn(`\bgoroutines?\b.*\breturn\w* (a |any )?(values?|results?)\b|\b(return values?|results?) (from|of) (a )?goroutines?\b`, "go statement function terminates return values discarded"),
	syn(`\bembed\w*\b`, "embedded field embedding"),
	syn(`\bbuilt-?in (types?|identifiers?|constants?|interfaces?)\b`, "predeclared"),
	// The specification's parts, in a programmer's words.
	syn(`\bvariable names?\b|\bnaming rules?\b|\bvalid names?\b|\bname (a|my) variable\b`, "identifier letters digits"),
	syn(`\bnewlines?\b|\bline breaks?\b|\bend of (a |the )?line\b`, "semicolon automatically inserted line's final token"),
	syn(`\bblock comments?\b|/\*`, "general comments"),
	syn(`(^|\s)//|\bline comments?\b`, "line comments"),
	syn(`\bscientific notation\b|\bexponent\b`, "decimal exponent"),
	syn(`\bsingle quotes?\b`, "rune literal"),
	syn(`\bdouble quotes?\b`, "interpreted string literal"),
	syn(`\b0x\b|\b0b\b|\b0o\b`, "prefix hexadecimal binary octal"),
	syn(`\bwithout (an )?initiali[sz]\w*\b|\bnot initiali[sz]ed\b`, "zero value"),
	syn(`\bnew type\b|\bdefine (a |my own |an own )?type\b|\bcustom types?\b|\buser-defined types?\b|\btypedef\b`, "type definition defined type"),
	syn(`\bint size\b|\bsize of (an )?int\b|\bhow (big|large) is (an )?int\b`, "implementation-specific sizes 32 or 64 bits"),
	syn(`\bfixed[- ](size|length)\b`, "array length"),
	syn(`\b(2d|two[- ]dimensional|multi-?dimensional|matrix|matrices|nested (arrays?|slices?))\b`, "higher-dimensional composed"),
	syn(`\bcallbacks?\b|\bhigher[- ]order\b|\bpass (a )?functions?\b|\bfunctions? as (an? )?(argument|parameter|value)s?\b`, "function value function type"),
	syn(`\bhashable\b|\bkey types?\b|\bas (a )?map keys?\b|\bkeys? (in|of) a map\b`, "key type comparison operators fully defined"),
	syn(`\bsame type\b|\bidentical\b|\bidentity\b`, "identical types"),
	syn(`\bassignable\b|\bassignability\b|\bassign (an? |the )?\w+ to (an? |the )?\w+ (variable|type)\b`, "assignable assignability"),
	syn(`\bgroup\w* (declarations?|constants?|variables?|imports?)\b|\bblock of (constants|variables|imports)\b`, "parenthesized list"),
	syn(`\bswap\w*\b|\bmultiple assignments?\b|\bparallel assignment\b`, "tuple assignment"),
	syn(`\bwithout (a )?body\b|\bno body\b|\bassembly\b|\bexternal functions?\b`, "omit the body implemented outside Go"),
	syn(`\bevaluation order\b|\bevaluated (first|in order|left to right)\b|\bleft[- ]to[- ]right\b`, "order of evaluation lexical left-to-right order"),
	syn(`\bspread\b|\bunpack\w*\b|\bsplat\b|\bpass (a |the )?slice (to|as)\b`, "variadic passed unchanged slice followed by ..."),
	syn(`\bslicing\b|\bsub-?slices?\b|\bsubstrings?\b`, "slice expression"),
	syn(`<<|>>|\bshift\w*\b`, "shift operators shift count"),
	syn(`\bloop variables?\b|\bper[- ]iteration\b`, "each iteration has its own separate declared variable"),
	syn(`\blifo\b|\breverse order\b|\border (of|do) defer\w*\b|\bdefer\w* .*\border\b`, "reverse order deferred"),
	syn(`\b(alias|rename)\w* (an |the |a )?imports?\b|\bimport\w* (with|under) (a |another )?(different )?name\b`, "import declaration PackageName qualified identifier"),
	syn(`\bblank imports?\b|\bside[- ]effects?\b`, "import solely for its side-effects blank identifier"),
	syn(`\bprogram (exit|end|terminat|finish)\w*\b|\bwhen does (a |the )?program (exit|end|stop)\b`, "program exits main returns does not wait"),
	syn(`\bwait\w* for (other |all |the )?goroutines?\b`, "does not wait for other goroutines to complete"),
	syn(`\balign\w*\b`, "Alignof alignment"),
	syn(`\bpointer arithmetic\b`, "unsafe Add uintptr"),
	syn(`\[[a-z]\w* (any|comparable|constraints\.)`, "type parameter list constraint"),
	syn(`==|!=`, "comparable comparison operators"),
	syn(`\bclos\w*\b.*\btwice\b|\bclos\w*\b.*\balready closed\b`, "close closed channel run-time panic"),
}

// goAnchors are words of the Go specification that hardly any other text
// uses together: a collection holding both is one the vocabulary is for.
var goAnchors = []string{"goroutine", "fallthrough"}

// speaksGo reports whether collection uses the specification's own words
// ([goAnchors]; df is a term's chunk count in the collection, -1 when it
// cannot be read). The vocabulary maps a Go programmer's words to the Go
// specification's, so it is applied only there: in a collection of
// runbooks "this" is not a method's receiver, nor "count" a length.
func speaksGo(df func(term string) int) bool {
	for _, w := range goAnchors {
		for _, t := range embedder.Analyze(w) {
			if df(t) <= 0 {
				return false
			}
		}
	}
	return true
}

// vocabularyKey marks a context whose question is asked of a collection
// the vocabulary is for (see [speaksGo]); the extractive writer reads it.
type vocabularyKey struct{}

// withVocabulary returns ctx marked so that the writer counts the
// vocabulary's words.
func withVocabulary(ctx context.Context) context.Context {
	return context.WithValue(ctx, vocabularyKey{}, true)
}

// vocabularyOn reports whether ctx was marked by [withVocabulary].
func vocabularyOn(ctx context.Context) bool {
	on, _ := ctx.Value(vocabularyKey{}).(bool)
	return on
}

// expansionWeight is the share of a question word's weight that a word
// added by [Expand] earns when the extractive writer scores a sentence:
// the question's own words say more than the map's guesses.
const expansionWeight = 0.5

// Expand returns the specification's words for the programmer's phrases
// the question uses (see [vocabulary]), as text to add to the question,
// or "" when the question uses none.
func Expand(question string) string {
	var out []string
	for _, m := range expansions(question) {
		out = append(out, m.spec)
	}
	return strings.Join(out, " ")
}

// expansion is a phrase of a question the vocabulary knows and the
// specification's words for it.
type expansion struct {
	phrase, spec string
}

// expansions lists the vocabulary's entries a question uses, each
// specification text once.
func expansions(question string) []expansion {
	q := strings.ToLower(question)
	var out []expansion
	seen := map[string]bool{}
	for _, s := range vocabulary {
		if seen[s.spec] {
			continue
		}
		if m := s.re.FindString(q); m != "" {
			seen[s.spec] = true
			out = append(out, expansion{phrase: m, spec: s.spec})
		}
	}
	return out
}

// foreignExpansion returns the specification's words for the phrases of
// the question that use a word the collection never does (df reports a
// term's chunk count): "mutable" where the collection says "immutable".
// The scope check may count these, and only these: a phrase whose words
// the collection uses in another sense ("capital" of a country,
// "recover" a photo) must not make a question look covered.
func foreignExpansion(question string, df func(term string) int) string {
	var out []string
	for _, m := range expansions(question) {
		if slices.ContainsFunc(embedder.Analyze(m.phrase), func(t string) bool { return df(t) == 0 }) {
			out = append(out, m.spec)
		}
	}
	return strings.Join(out, " ")
}
