// Package answer answers a question about one collection: it checks that
// the collection covers the question at all (the scope check), retrieves
// chunks and writes an answer grounded only in them, naming the chunk it
// relies on most. The offline answer writer is extractive: it quotes the
// retrieved sentences that best match the question, each cited.
package answer

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/groundcrew/groundcrew/platform/weburl"
	"github.com/groundcrew/groundcrew/services/rag/internal/rag"
)

// MaxQuestionLength is the longest question accepted, in characters: the
// specification's Query allows 1 to 2,000.
const MaxQuestionLength = 2000

// ErrInvalidQuestion means the question is blank or too long, or asks for
// an invalid number of chunks.
var ErrInvalidQuestion = errors.New("invalid question")

// Searcher is what answering needs from a document store;
// both document stores (vectorindex, qdrantstore) implement it.
type Searcher interface {
	Search(ctx context.Context, collection string, q rag.Query) ([]rag.Hit, error)
	Settings(collection string) (rag.Settings, error)
}

// Generator writes an answer from retrieved chunks. [Extractive] is the
// offline one; a language-model writer can take its place.
type Generator interface {
	Generate(ctx context.Context, question string, chunks []rag.Hit) (Draft, error)
}

// TermCounter is implemented by stores that can say how specific words
// are to a collection; the scope check weighs a question's words by it.
type TermCounter interface {
	TermStats(collection string, terms []string) (rag.TermStats, error)
}

// Briefing is what a writer may know about the collection besides the
// chunks: its description, as the collection's owner wrote it.
type Briefing struct {
	// Collection is the collection's name.
	Collection string
	// Description says what the collection is about; may be empty.
	Description string
}

// BriefedGenerator is a writer that can be told what the collection is
// about (a language model puts the description in its instructions).
// Briefed returns a writer for one question; it must keep the receiver's
// streaming ability.
type BriefedGenerator interface {
	Generator
	Briefed(b Briefing) Generator
}

// StreamGenerator is an answer writer that can also hand out its text as
// it is written; [Request.Delta] receives those pieces. Generators that
// cannot stream (the extractive one) hand out their text as one piece.
type StreamGenerator interface {
	Generator
	// GenerateStream is Generate calling delta with each new piece of the
	// answer text, in order; the pieces add up to the Draft's Text.
	GenerateStream(ctx context.Context, question string, chunks []rag.Hit, delta func(string)) (Draft, error)
}

// GenerationError marks a failure of the answer writer (after the
// fallback, see [Asker.Ask]); callers report it as a failed answer rather
// than a bad request.
type GenerationError struct {
	// Model names the writer that failed.
	Model string
	// Err is its error.
	Err error
}

// Error implements error.
func (e *GenerationError) Error() string { return fmt.Sprintf("%s: %v", e.Model, e.Err) }

// Unwrap returns the writer's error.
func (e *GenerationError) Unwrap() error { return e.Err }

// Draft is a generator's answer.
type Draft struct {
	// Text is the answer, citing chunks as [n]: the n-th entry of Cited.
	Text string
	// Cited lists the chunks the answer draws on, as indexes into the
	// chunks given, in the order their citation numbers count; empty means
	// all chunks, in order.
	Cited []int
	// Primary is the index (into the chunks given) of the chunk the answer
	// relies on most; it should be in Cited.
	Primary int
	// Model names the writer, e.g. "extractive".
	Model string
	// OutOfScope is set when the generator finds that the chunks do not
	// answer the question; Reason then says why.
	OutOfScope bool
	// Reason says why the chunks do not answer the question.
	Reason string
	// Uncited is set when the answer cites no chunk at all (a model
	// whose every marker named no chunk, see [Cite]); Cited is then
	// ignored and the answer has no sources.
	Uncited bool
	// Dropped counts citation markers removed from the text because
	// they named no chunk.
	Dropped int
}

// Source is a chunk an answer draws on, by document and position.
type Source struct {
	// URL and Title are the chunk's document's.
	URL   string
	Title string
	// ChunkIndex is the chunk's position in its document, from 0.
	ChunkIndex int
}

// Result is the answer to a question, shaped like the Ask response.
type Result struct {
	// Answer is the answer text with [n] citations, or the collection's
	// out-of-scope answer.
	Answer string
	// PrimarySource names the chunk the answer relies on most:
	// "Source: Document X: [Title] (URL)", X its 1-based position in
	// Sources. Empty when out of scope or when the answer cites nothing
	// (NeedsReview).
	PrimarySource string
	// Primary is that chunk's position in Sources (from 0).
	Primary int
	// Sources are the chunks the answer draws on, numbered from 1 in this
	// order by the answer's [n] citations and by PrimarySource.
	Sources []Source
	// MatchedChunks are all chunks retrieved for the question, in rank
	// order.
	MatchedChunks []rag.Hit
	// IsOutOfScope is set when the collection does not cover the
	// question.
	IsOutOfScope bool
	// OutOfScopeReason says which check failed and with what figures.
	OutOfScopeReason string
	// Success is true when an answer (possibly the out-of-scope answer)
	// was produced; failures are returned as errors instead.
	Success bool
	// QueryTime is the time taken to answer.
	QueryTime time.Duration
	// Model names what wrote the answer ("extractive" offline); empty
	// when the scope check answered.
	Model string
	// Metadata are the request's labels, echoed.
	Metadata map[string]string
	// Received is when the question was received.
	Received time.Time
	// NeedsReview is set when the answer cites none of the retrieved
	// chunks: it has no sources, and ReviewReason says why.
	NeedsReview bool
	// ReviewReason says why the answer needs review.
	ReviewReason string
	// DroppedCitations counts markers removed because they named no
	// retrieved chunk.
	DroppedCitations int
}

// PrimarySourceOf returns the source the answer relies on most, and
// false when there is none (out of scope).
func (r Result) PrimarySourceOf() (Source, bool) {
	if r.IsOutOfScope || r.Primary < 0 || r.Primary >= len(r.Sources) {
		return Source{}, false
	}
	return r.Sources[r.Primary], true
}

// Stage is a step of answering, reported to [Request.Progress].
type Stage int

// Stages, in the order they happen.
const (
	StageRetrieving Stage = iota + 1
	StageScopeCheck
	StageAnswering
)

// Request is a question about a collection.
type Request struct {
	// Collection is the collection's name.
	Collection string
	// Question is 1..2000 characters, not blank.
	Question string
	// TopK is the number of chunks to answer from, 1..50; 0 means the
	// Asker's default.
	TopK int
	// Progress, when set, is called as answering enters each stage, for
	// streaming clients.
	Progress func(Stage)
	// Delta, when set, receives the answer text as it is written (see
	// [StreamGenerator]); an out-of-scope answer sends none.
	Delta func(string)
	// Metadata are the caller's labels, echoed in the result.
	Metadata map[string]string
}

// Options tune an [Asker]; zero fields take defaults.
type Options struct {
	// TopK is the number of chunks retrieved and matched; default 5.
	TopK int
	// Mode is the retrieval ranking; default hybrid.
	Mode rag.Mode
	// Scope tunes the scope check.
	Scope ScopeOptions
	// Generator writes answers; default [Extractive] with its defaults.
	// When another writer (a language model) fails before it wrote any
	// text, the extractive writer answers instead, so the caller still
	// gets a grounded, cited answer; [Result.Model] says which wrote it.
	Generator Generator
	// Logger receives writer failures; default discards.
	Logger *slog.Logger
	// Now is the clock, for tests; default time.Now.
	Now func() time.Time
}

// Asker answers questions about collections.
type Asker struct {
	s    Searcher
	opts Options
}

// NewAsker returns an Asker over s.
func NewAsker(s Searcher, opts Options) *Asker {
	if opts.TopK <= 0 {
		opts.TopK = rag.DefaultTopK
	}
	if opts.Generator == nil {
		opts.Generator = &Extractive{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	opts.Scope = opts.Scope.withDefaults()
	return &Asker{s: s, opts: opts}
}

// ValidateQuestion checks the question limits: 1 to 2,000 characters and
// not only white space.
func ValidateQuestion(q string) error {
	if strings.TrimSpace(q) == "" {
		return fmt.Errorf("%w: the question is blank", ErrInvalidQuestion)
	}
	if n := utf8.RuneCountInString(q); n > MaxQuestionLength {
		return fmt.Errorf("%w: the question has %d characters, at most %d are allowed", ErrInvalidQuestion, n, MaxQuestionLength)
	}
	return nil
}

// Ask answers a question from a collection: retrieval, the scope check,
// then an answer grounded in the retrieved chunks. Errors wrap
// [ErrInvalidQuestion] or the store's errors (rag.ErrNotFound…).
func (a *Asker) Ask(ctx context.Context, req Request) (Result, error) {
	start := a.opts.Now()
	question, collection := req.Question, req.Collection
	if err := ValidateQuestion(question); err != nil {
		return Result{}, err
	}
	topK := req.TopK
	if topK == 0 {
		topK = a.opts.TopK
	}
	if topK < 0 || topK > rag.MaxTopK {
		return Result{}, fmt.Errorf("%w: top_k %d is outside 1..%d", ErrInvalidQuestion, topK, rag.MaxTopK)
	}
	progress := func(s Stage) {
		if req.Progress != nil {
			req.Progress(s)
		}
	}
	settings, err := a.s.Settings(collection)
	if err != nil {
		return Result{}, err
	}
	progress(StageRetrieving)
	hits, err := a.s.Search(ctx, collection, rag.Query{Text: question, TopK: topK, Mode: a.opts.Mode})
	if err != nil {
		return Result{}, fmt.Errorf("retrieving chunks: %w", err)
	}
	// The vocabulary is the Go specification's ([speaksGo]): a collection
	// that is not gets the question as asked.
	df := func(string) int { return -1 }
	if tc, ok := a.s.(TermCounter); ok {
		df = func(t string) int {
			ts, err := tc.TermStats(collection, []string{t})
			if err != nil {
				return -1
			}
			return ts.DF[t]
		}
	}
	vocabulary := speaksGo(df)
	if vocabulary {
		ctx = withVocabulary(ctx)
	}
	// The answer is written from chunks found for the question together
	// with the specification's words for its phrases (see [Expand]); the
	// scope check judges the question as asked.
	answerHits := hits
	if more := Expand(question); vocabulary && more != "" {
		answerHits, err = a.s.Search(ctx, collection, rag.Query{Text: question + "\n" + more, TopK: topK, Mode: a.opts.Mode})
		if err != nil {
			return Result{}, fmt.Errorf("retrieving chunks: %w", err)
		}
	}
	progress(StageScopeCheck)
	outOfScope := func(reason string) (Result, error) {
		return Result{
			Answer:           settings.OutOfScopeAnswerOrDefault(),
			IsOutOfScope:     true,
			OutOfScopeReason: reason,
			Success:          true,
			QueryTime:        a.opts.Now().Sub(start),
			Metadata:         maps.Clone(req.Metadata),
			Received:         start,
		}, nil
	}

	verdict := a.scope(collection, settings, question, hits)
	if vocabulary && !verdict.InScope && len(answerHits) > 0 {
		// "Are strings mutable?": the collection says "immutable". A
		// question is judged again with the collection's words for its
		// phrases when they replace words the collection never uses.
		if more := foreignExpansion(question, df); more != "" {
			if v := a.scope(collection, settings, question+"\n"+more, answerHits); v.InScope {
				verdict = v
			}
		}
	}
	if !verdict.InScope {
		return outOfScope(verdict.Reason)
	}
	progress(StageAnswering)
	draft, err := a.generate(ctx, Briefing{Collection: collection, Description: settings.Description}, question, answerHits, req.Delta)
	if err != nil {
		return Result{}, fmt.Errorf("writing the answer: %w", err)
	}
	if draft.OutOfScope {
		reason := "the answering model found no answer in the retrieved chunks"
		if draft.Reason != "" {
			reason += ": " + draft.Reason
		}
		return outOfScope(reason)
	}
	if draft.Uncited {
		reason := "the answer cites none of the retrieved chunks"
		if draft.Dropped > 0 {
			reason = fmt.Sprintf("the answer cites none of the retrieved chunks (%d citation markers named no chunk and were removed)", draft.Dropped)
		}
		return Result{
			Answer:           draft.Text,
			Primary:          -1,
			MatchedChunks:    answerHits,
			Success:          true,
			QueryTime:        a.opts.Now().Sub(start),
			Model:            draft.Model,
			Metadata:         maps.Clone(req.Metadata),
			Received:         start,
			NeedsReview:      true,
			ReviewReason:     reason,
			DroppedCitations: draft.Dropped,
		}, nil
	}
	cited := draft.Cited
	if len(cited) == 0 {
		cited = make([]int, len(answerHits))
		for i := range cited {
			cited[i] = i
		}
	}
	sources := make([]Source, 0, len(cited))
	primary := -1
	for _, i := range cited {
		if i < 0 || i >= len(answerHits) {
			return Result{}, fmt.Errorf("the answer cites chunk %d of %d", i, len(answerHits))
		}
		if i == draft.Primary {
			primary = len(sources)
		}
		sources = append(sources, SourceOf(answerHits[i]))
	}
	if primary < 0 {
		// A primary chunk the answer does not cite would be a citation
		// nobody can follow; fall back to the first cited one.
		primary = 0
	}
	return Result{
		Answer:        draft.Text,
		PrimarySource: FormatSource(primary+1, sources[primary]),
		Primary:       primary,
		Sources:       sources,
		MatchedChunks: answerHits,
		Success:       true,
		QueryTime:     a.opts.Now().Sub(start),
		Model:         draft.Model,
		Metadata:      maps.Clone(req.Metadata),
		Received:      start,
		// Markers the writer dropped; the answer still cites what it
		// kept.
		DroppedCitations: draft.Dropped,
	}, nil
}

// scope runs the scope check for a question and the chunks retrieved
// for it.
func (a *Asker) scope(collection string, settings rag.Settings, question string, hits []rag.Hit) Verdict {
	in := ScopeInput{Question: question, Hits: hits, Threshold: a.opts.Scope.Threshold(settings),
		MinEvidence: a.opts.Scope.MinEvidence, MinCoverage: a.opts.Scope.MinCoverage, Description: settings.Description}
	if tc, ok := a.s.(TermCounter); ok {
		// Without term statistics every word weighs the same.
		if ts, err := tc.TermStats(collection, contentTerms(question)); err == nil {
			in.Terms = ts
		}
	}
	return Scope(in)
}

// generate writes the answer with the configured writer, streaming to
// delta when set, and falls back to the extractive writer when the
// configured one fails before it produced any text. Once text has been
// streamed a fallback would contradict it, so a later failure is a
// [*GenerationError], as is a failure of the extractive writer itself.
func (a *Asker) generate(ctx context.Context, brief Briefing, question string, chunks []rag.Hit, delta func(string)) (Draft, error) {
	primary := a.opts.Generator
	if b, ok := primary.(BriefedGenerator); ok {
		primary = b.Briefed(brief)
	}
	var (
		draft Draft
		err   error
		sent  bool
	)
	sg, streams := primary.(StreamGenerator)
	if streams && delta != nil {
		draft, err = sg.GenerateStream(ctx, question, chunks, func(s string) {
			sent = sent || s != ""
			delta(s)
		})
	} else {
		draft, err = primary.Generate(ctx, question, chunks)
	}
	name := ModelName(primary)
	switch {
	case err == nil:
		if !streams && delta != nil && !draft.OutOfScope {
			delta(draft.Text)
		}
		return draft, nil
	case ctx.Err() != nil:
		return Draft{}, err
	case sent:
		return Draft{}, &GenerationError{Model: name, Err: err}
	}
	if _, isExtractive := primary.(*Extractive); isExtractive {
		return Draft{}, &GenerationError{Model: name, Err: err}
	}
	a.opts.Logger.WarnContext(ctx, "answer writer failed; answering extractively", "writer", name, "error", err)
	draft, err = (&Extractive{}).Generate(ctx, question, chunks)
	if err != nil {
		return Draft{}, &GenerationError{Model: ExtractiveModel, Err: err}
	}
	if delta != nil && !draft.OutOfScope {
		delta(draft.Text)
	}
	return draft, nil
}

// ModelName names a generator for errors and logs: its Model() when it
// has one.
func ModelName(g Generator) string {
	if n, ok := g.(interface{ Model() string }); ok {
		return n.Model()
	}
	if _, ok := g.(*Extractive); ok {
		return ExtractiveModel
	}
	return fmt.Sprintf("%T", g)
}

// SourceOf returns the source of a retrieved chunk; its title is never
// empty.
func SourceOf(h rag.Hit) Source {
	// Documents stored before titles were always derived may lack one.
	return Source{URL: h.URL, Title: rag.DocumentTitle(h.Title, "", h.URL), ChunkIndex: h.ChunkIndex}
}

// FormatSource renders the primary-source line: "Source: Document X:
// [Title] (URL)", X being the 1-based position of the source in the
// sources list. It is for people, so the URL is in its readable form
// (Unicode host and path, see platform/weburl); Source.URL keeps the
// canonical one. A document without a title shows its URL as the title.
func FormatSource(x int, s Source) string {
	u := s.URL
	if c, err := weburl.Canonical(u); err == nil && c == u {
		// Stored URLs are canonical; others are shown as they are.
		u = weburl.Readable(u)
	}
	title := strings.TrimSpace(s.Title)
	if title == "" {
		title = u
	}
	return fmt.Sprintf("Source: Document %d: [%s] (%s)", x, title, u)
}
