package search

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
	"unicode/utf8"

	"golang.org/x/sync/singleflight"
)

// Defaults for Config fields left zero.
const (
	DefaultCacheTTL      = time.Minute
	DefaultCacheSize     = 1024
	DefaultEngineTimeout = 10 * time.Second
	DefaultSearchTimeout = 30 * time.Second
	DefaultHealthTimeout = 3 * time.Second
	// MaxDomains bounds each of AllowedDomains and BlockedDomains.
	MaxDomains = 100
)

// Config configures a Service.
type Config struct {
	// Engines are the configured engines, at most one per name.
	Engines []Engine
	// AutoOrder is the order auto tries engines in; nil means
	// DefaultAutoOrder. Names without a configured engine are skipped.
	AutoOrder []string
	// Indexer stores documents for IndexDocuments; nil disables it.
	Indexer DocumentIndexer
	// CacheTTL and CacheSize bound the result cache; zero means the
	// default, negative disables caching (concurrent identical searches
	// are still coalesced).
	CacheTTL  time.Duration
	CacheSize int
	// EngineTimeout bounds one engine call. When other engines remain to
	// fall back to, a call gets at most half of the remaining request
	// budget, so that a hanging engine leaves time for the next.
	EngineTimeout time.Duration
	// SearchTimeout bounds a whole search, fallbacks included, when the
	// caller's context has no earlier deadline.
	SearchTimeout time.Duration
	// HealthTimeout bounds each engine's health check in Engines.
	HealthTimeout time.Duration
	// Now is the clock for cache expiry and recency filters; nil means
	// time.Now.
	Now func() time.Time
	// Logger receives one warning per failed engine call; nil discards.
	Logger *slog.Logger
}

// Service runs searches over the configured engines. It is safe for
// concurrent use.
type Service struct {
	engines       map[string]Engine
	auto          []Engine
	indexer       DocumentIndexer
	cache         *resultCache
	flights       singleflight.Group
	engineTimeout time.Duration
	searchTimeout time.Duration
	healthTimeout time.Duration
	now           func() time.Time
	log           *slog.Logger

	hits, misses, calls, coalesced atomic.Uint64

	mu       sync.Mutex
	progress map[string]*flightProgress // by cache key, while a flight runs
	outcomes map[string]error           // last call result per engine
}

// NewService builds a Service from cfg. It fails when two engines share a
// name or an engine has no name.
func NewService(cfg Config) (*Service, error) {
	s := &Service{
		engines:       make(map[string]Engine),
		indexer:       cfg.Indexer,
		engineTimeout: orDefault(cfg.EngineTimeout, DefaultEngineTimeout),
		searchTimeout: orDefault(cfg.SearchTimeout, DefaultSearchTimeout),
		healthTimeout: orDefault(cfg.HealthTimeout, DefaultHealthTimeout),
		now:           cfg.Now,
		log:           cfg.Logger,
		progress:      make(map[string]*flightProgress),
		outcomes:      make(map[string]error),
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	for _, e := range cfg.Engines {
		name := e.Name()
		if name == "" || name == EngineAuto {
			return nil, fmt.Errorf("search: engine name %q is reserved", name)
		}
		if _, dup := s.engines[name]; dup {
			return nil, fmt.Errorf("search: engine %s configured twice", name)
		}
		s.engines[name] = e
	}
	order := cfg.AutoOrder
	if order == nil {
		order = DefaultAutoOrder
	}
	for _, name := range order {
		if e, ok := s.engines[name]; ok && !slices.Contains(s.auto, e) {
			s.auto = append(s.auto, e)
		}
	}
	ttl, size := cfg.CacheTTL, cfg.CacheSize
	if ttl == 0 {
		ttl = DefaultCacheTTL
	}
	if size == 0 {
		size = DefaultCacheSize
	}
	s.cache = newResultCache(size, ttl, s.now)
	return s, nil
}

func orDefault(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// Search validates q, answers from the cache when it can, and otherwise
// asks the requested engine, or with engine auto each configured engine in
// auto order until one answers. Identical concurrent searches share one
// engine call. Search returns when ctx is done even if the engine has not
// answered; the engine call then continues in the background within the
// first caller's deadline (capped by SearchTimeout) and its answer is
// cached.
//
// Errors: *InvalidArgumentError (ErrInvalidQuery), ErrUnknownEngine,
// *NotConfiguredError (ErrEngineNotConfigured), *EngineError.
func (s *Service) Search(ctx context.Context, q Query) (Response, error) {
	nq, err := normalizeQuery(q)
	if err != nil {
		return Response{}, err
	}
	chain, err := s.resolve(nq.Engine)
	if err != nil {
		return Response{}, err
	}
	if nq.MaxResults == 0 {
		return Response{}, nil
	}
	if err := ctx.Err(); err != nil {
		return Response{}, fmt.Errorf("search: %w", err)
	}
	key := cacheKey(nq)
	if resp, ok := s.cache.get(key); ok {
		s.hits.Add(1)
		resp = cloneResponse(resp)
		resp.Cached = true
		return resp, nil
	}
	s.misses.Add(1)

	var led atomic.Bool
	ch := s.flights.DoChan(key, func() (any, error) {
		led.Store(true)
		// A flight that just finished may have filled the cache between
		// our miss and this call.
		if resp, ok := s.cache.get(key); ok {
			resp.Cached = true
			return resp, nil
		}
		s.calls.Add(1)
		return s.run(ctx, key, nq, chain)
	})
	select {
	case r := <-ch:
		if !led.Load() {
			s.coalesced.Add(1)
		}
		if r.Err != nil {
			return Response{}, r.Err
		}
		return cloneResponse(r.Val.(Response)), nil
	case <-ctx.Done():
		return Response{}, s.abandoned(key, nq.Engine, chain, ctx.Err())
	}
}

// run tries the engines of chain in order and caches the first answer.
func (s *Service) run(parent context.Context, key string, q Query, chain []Engine) (Response, error) {
	// The call is shared by every caller waiting on this key, so one
	// caller cancelling must not cancel it for the others; it stays bound
	// by the first caller's deadline.
	deadline := time.Now().Add(s.searchTimeout)
	if d, ok := parent.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	ctx, cancel := context.WithDeadline(context.WithoutCancel(parent), deadline)
	defer cancel()

	p := &flightProgress{}
	s.mu.Lock()
	s.progress[key] = p
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.progress, key)
		s.mu.Unlock()
	}()

	eq := q
	eq.MaxResults = min(2*q.MaxResults+2, MaxFetch)
	var errs []error
	for i, e := range chain {
		name := e.Name()
		p.start(name)
		timeout := s.engineTimeout
		if i < len(chain)-1 {
			timeout = min(timeout, time.Until(deadline)/2)
		}
		actx, acancel := context.WithTimeout(ctx, timeout)
		raw, err := e.Search(actx, eq)
		acancel()
		s.recordOutcome(name, err)
		if err == nil {
			resp := s.process(raw, q)
			resp.Engine = name
			resp.FallbackFrom = p.failed()
			if sh, ok := e.(SharedIndex); !ok || !sh.Shared() {
				s.cache.put(key, resp)
			}
			return resp, nil
		}
		p.fail(name)
		errs = append(errs, fmt.Errorf("%s: %w", name, err))
		s.log.WarnContext(ctx, "search engine failed", "engine", name, "err", err,
			"fallback_next", i < len(chain)-1 && ctx.Err() == nil)
		if ctx.Err() != nil {
			break
		}
	}
	tried := p.failed()
	return Response{}, &EngineError{
		Engine:        tried[len(tried)-1],
		Tried:         tried,
		FallbackTried: len(tried) > 1,
		NoFallback:    noFallbackReason(q.Engine, len(tried), len(chain)),
		Err:           errors.Join(errs...),
	}
}

// abandoned builds the error for a caller whose context ended while the
// engines were still being asked.
func (s *Service) abandoned(key, engine string, chain []Engine, ctxErr error) error {
	s.mu.Lock()
	p := s.progress[key]
	s.mu.Unlock()
	current, tried := chain[0].Name(), []string(nil)
	if p != nil {
		if c, failed := p.snapshot(); c != "" {
			current, tried = c, failed
		}
	}
	tried = append(tried, current)
	return &EngineError{
		Engine:        current,
		Tried:         tried,
		FallbackTried: len(tried) > 1,
		NoFallback:    noFallbackReason(engine, len(tried), len(chain)),
		Err:           fmt.Errorf("%s: no answer before the request ended: %w", current, ctxErr),
	}
}

func noFallbackReason(engine string, tried, chain int) string {
	switch {
	case tried > 1:
		return ""
	case engine != EngineAuto:
		return "engine " + engine + " was requested by name"
	case chain == 1:
		return "no other engine is configured"
	default:
		return "the request deadline ran out first"
	}
}

// flightProgress records which engine a running flight is asking, so that
// callers who give up can say so.
type flightProgress struct {
	mu      sync.Mutex
	current string
	failedE []string
}

func (p *flightProgress) start(name string) {
	p.mu.Lock()
	p.current = name
	p.mu.Unlock()
}

func (p *flightProgress) fail(name string) {
	p.mu.Lock()
	p.failedE = append(p.failedE, name)
	p.current = ""
	p.mu.Unlock()
}

func (p *flightProgress) failed() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.failedE)
}

func (p *flightProgress) snapshot() (string, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.current, slices.Clone(p.failedE)
}

// process validates, cleans, filters, de-duplicates and trims raw results.
func (s *Service) process(raw []Result, q Query) Response {
	var resp Response
	seen := make(map[string]bool, len(raw))
	var oldest time.Time
	if q.MaxAge > 0 {
		oldest = s.now().Add(-q.MaxAge)
	}
	for _, r := range raw {
		title := cleanText(r.Title, MaxTitleChars)
		snippet := cleanText(r.Snippet, MaxSnippetChars)
		u, err := CleanURL(r.URL)
		if title == "" || snippet == "" || err != nil || !utf8.ValidString(u) {
			resp.Dropped++
			continue
		}
		canon, err := CanonicalURL(u)
		if err != nil {
			resp.Dropped++
			continue
		}
		domain, _ := Domain(u)
		if (len(q.AllowedDomains) > 0 && !matchesAny(domain, q.AllowedDomains)) ||
			matchesAny(domain, q.BlockedDomains) ||
			(!oldest.IsZero() && !r.PublishedAt.IsZero() && r.PublishedAt.Before(oldest)) {
			resp.Filtered++
			continue
		}
		if seen[canon] {
			resp.Duplicates++
			continue
		}
		seen[canon] = true
		if len(resp.Results) < q.MaxResults {
			resp.Results = append(resp.Results, Result{
				Title: title, Snippet: snippet, URL: u, SourceDomain: domain,
				Score: r.Score, PublishedAt: r.PublishedAt, DisplayURL: DisplayURL(u),
				MimeType: CleanMimeType(r.MimeType), FaviconURL: CleanIconURL(r.FaviconURL, u),
				Provenance: r.Provenance, Text: TruncateText(strings.ToValidUTF8(r.Text, "")),
			})
		}
	}
	return resp
}

// cleanText makes s valid UTF-8 without control characters, collapses
// whitespace, and cuts it to at most limit runes at a word boundary.
func cleanText(s string, limit int) string {
	s = strings.ToValidUTF8(s, "")
	s = strings.Join(strings.FieldsFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsControl(r)
	}), " ")
	return Truncate(s, limit)
}

// Truncate cuts s to at most limit runes, at the last space before the
// limit when there is one in the final third, ending in "…" when cut.
func Truncate(s string, limit int) string {
	if utf8.RuneCountInString(s) <= limit {
		return s
	}
	if limit <= 0 {
		return ""
	}
	if limit == 1 {
		return "…"
	}
	// Byte offset of the rune that would be number limit (the ellipsis).
	cut, n := 0, 0
	for i := range s {
		if n == limit-1 {
			cut = i
			break
		}
		n++
	}
	head := s[:cut]
	if sp := strings.LastIndexByte(head, ' '); sp > len(head)*2/3 {
		head = head[:sp]
	}
	return strings.TrimRightFunc(head, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) && r != ')' && r != '"'
	}) + "…"
}

// normalizeQuery validates q and returns it with text whitespace-collapsed,
// engine lower-cased (auto when empty) and domains normalised, de-duplicated
// and sorted.
func normalizeQuery(q Query) (Query, error) {
	if !utf8.ValidString(q.Text) {
		return Query{}, invalid("query", "must be valid UTF-8")
	}
	text := strings.Join(strings.Fields(q.Text), " ")
	if text == "" {
		return Query{}, invalid("query", "must not be empty or only whitespace")
	}
	if n := utf8.RuneCountInString(strings.TrimSpace(q.Text)); n > MaxQueryChars {
		return Query{}, invalid("query", "is %d characters long; the limit is %d", n, MaxQueryChars)
	}
	if q.MaxResults < 0 || q.MaxResults > MaxResultsLimit {
		return Query{}, invalid("max_results", "must be between 0 and %d, got %d", MaxResultsLimit, q.MaxResults)
	}
	if q.MaxAge < 0 {
		return Query{}, invalid("max_age", "must not be negative")
	}
	engine := strings.ToLower(strings.TrimSpace(q.Engine))
	if engine == "" {
		engine = EngineAuto
	}
	allowed, err := normalizeDomains("allowed_domains", q.AllowedDomains)
	if err != nil {
		return Query{}, err
	}
	blocked, err := normalizeDomains("blocked_domains", q.BlockedDomains)
	if err != nil {
		return Query{}, err
	}
	if len(q.ExcludeCollections) > MaxDomains {
		return Query{}, invalid("exclude_collections", "has %d entries; the limit is %d", len(q.ExcludeCollections), MaxDomains)
	}
	var collections []string
	for _, c := range q.ExcludeCollections {
		if c = strings.TrimSpace(c); c != "" {
			collections = append(collections, c)
		}
	}
	slices.Sort(collections)
	return Query{
		Text: text, MaxResults: q.MaxResults, Engine: engine,
		AllowedDomains: allowed, BlockedDomains: blocked, MaxAge: q.MaxAge,
		ExcludeCollections: slices.Compact(collections), IncludeText: q.IncludeText,
	}, nil
}

func normalizeDomains(field string, in []string) ([]string, error) {
	if len(in) > MaxDomains {
		return nil, invalid(field, "has %d entries; the limit is %d", len(in), MaxDomains)
	}
	var out []string
	for i, d := range in {
		n, err := NormalizeDomain(d)
		if err != nil {
			// The entry itself, as the proto's own rules name it.
			return nil, invalid(fmt.Sprintf("%s[%d]", field, i), "%v", err)
		}
		out = append(out, n)
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

func cacheKey(q Query) string {
	var b strings.Builder
	b.WriteString(q.Engine)
	b.WriteByte(0)
	b.WriteString(strings.ToLower(q.Text))
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(q.MaxResults))
	b.WriteByte(0)
	b.WriteString(strings.Join(q.AllowedDomains, ","))
	b.WriteByte(0)
	b.WriteString(strings.Join(q.BlockedDomains, ","))
	b.WriteByte(0)
	b.WriteString(q.MaxAge.String())
	b.WriteByte(0)
	b.WriteString(strings.Join(q.ExcludeCollections, ","))
	b.WriteByte(0)
	b.WriteString(strconv.FormatBool(q.IncludeText))
	return b.String()
}

func cloneResponse(r Response) Response {
	r.Results = slices.Clone(r.Results)
	r.FallbackFrom = slices.Clone(r.FallbackFrom)
	return r
}

// resolve returns the engines to try for the requested engine name.
func (s *Service) resolve(name string) ([]Engine, error) {
	if name == EngineAuto {
		if len(s.auto) == 0 {
			return nil, &NotConfiguredError{Engine: EngineAuto, EnvVar: "one of SEARXNG_URL, EXA_API_KEY, TAVILY_API_KEY, BRAVE_API_KEY or DATA_DIR"}
		}
		return s.auto, nil
	}
	if e, ok := s.engines[name]; ok {
		return []Engine{e}, nil
	}
	if v := EnvVar(name); v != "" {
		return nil, &NotConfiguredError{Engine: name, EnvVar: v}
	}
	return nil, fmt.Errorf("%w %q: known engines are auto, %s", ErrUnknownEngine, name, strings.Join(KnownEngines, ", "))
}

func (s *Service) recordOutcome(engine string, err error) {
	s.mu.Lock()
	s.outcomes[engine] = err
	s.mu.Unlock()
}

// IndexDocuments adds docs to the local index, replacing documents with the
// same canonical URL, and drops cached results so searches see them.
// Individual bad documents are reported in IndexResult.Rejected, not as an
// error.
func (s *Service) IndexDocuments(ctx context.Context, docs []Document) (IndexResult, error) {
	if s.indexer == nil {
		return IndexResult{}, &NotConfiguredError{Engine: EngineLocal, EnvVar: EnvVar(EngineLocal)}
	}
	if len(docs) == 0 {
		return IndexResult{}, invalid("documents", "at least one document is required")
	}
	if len(docs) > MaxDocumentsPerCall {
		return IndexResult{}, invalid("documents", "has %d documents; the limit per call is %d", len(docs), MaxDocumentsPerCall)
	}
	res, err := s.indexer.Upsert(ctx, docs)
	if res.Indexed > 0 {
		s.cache.clear()
	}
	// The audit trail of a replaced document: the runbooks enrichment
	// cites are what a leaked key would rewrite.
	for _, r := range res.Replacements {
		s.log.InfoContext(ctx, "indexed document replaced", "url", r.URL,
			"by", r.Provenance.IndexedBy, "revision", r.Provenance.Revision,
			"previous_by", r.Provenance.PreviousIndexedBy, "previous_at", r.Provenance.PreviousIndexedAt)
	}
	if err != nil {
		return res, fmt.Errorf("indexing documents: %w", err)
	}
	return res, nil
}

// Engines reports every known engine, plus any other configured one: whether
// it is configured, its place in the auto order and its health. Health
// checks run concurrently, each bounded by HealthTimeout.
func (s *Service) Engines(ctx context.Context) []EngineStatus {
	names := slices.Clone(KnownEngines)
	for name := range s.engines {
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
	}
	slices.Sort(names[len(KnownEngines):])

	out := make([]EngineStatus, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		st := EngineStatus{Name: name, EnvVar: EnvVar(name)}
		for rank, e := range s.auto {
			if e.Name() == name {
				st.AutoRank = rank + 1
			}
		}
		e, ok := s.engines[name]
		if !ok {
			st.Detail = "not configured: set " + st.EnvVar
			out[i] = st
			continue
		}
		st.Configured = true
		wg.Go(func() {
			err := s.health(ctx, e)
			st.Healthy = err == nil
			if err != nil {
				st.Detail = strings.ReplaceAll(err.Error(), "\n", "; ")
			}
			out[i] = st
		})
	}
	wg.Wait()
	return out
}

func (s *Service) health(ctx context.Context, e Engine) error {
	if hc, ok := e.(HealthChecker); ok {
		ctx, cancel := context.WithTimeout(ctx, s.healthTimeout)
		defer cancel()
		return hc.Healthy(ctx)
	}
	s.mu.Lock()
	err := s.outcomes[e.Name()]
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("last call failed: %w", err)
	}
	return nil
}

// Stats are cumulative counters for metrics.
type Stats struct {
	// CacheHits and CacheMisses count searches answered from the cache or
	// not (validation failures and MaxResults 0 count as neither).
	CacheHits, CacheMisses uint64
	// EngineCalls counts searches that called engines (one per flight,
	// however many engines it tried); Coalesced counts misses that shared
	// another search's flight instead of calling engines themselves.
	EngineCalls, Coalesced uint64
	// CacheEntries is the current number of cached responses, and
	// CacheEvictions how many were evicted to bound the size.
	CacheEntries   int
	CacheEvictions uint64
}

// Stats returns the counters so far.
func (s *Service) Stats() Stats {
	entries, evictions := s.cache.stats()
	return Stats{
		CacheHits: s.hits.Load(), CacheMisses: s.misses.Load(),
		EngineCalls: s.calls.Load(), Coalesced: s.coalesced.Load(),
		CacheEntries: entries, CacheEvictions: evictions,
	}
}

// Documents looks local documents up by URL: any spelling of the
// canonical URL the index keys them by. It returns those that are indexed
// and in none of the excluded collections, in the order of urls, a
// document named twice once. Nothing is fetched from the web.
//
// Errors: *InvalidArgumentError (no URL, too many, one that is not a web
// address), *NotConfiguredError when no local index can look documents up.
func (s *Service) Documents(ctx context.Context, urls, excludeCollections []string) ([]Result, error) {
	reader, ok := s.indexer.(DocumentReader)
	if !ok {
		return nil, &NotConfiguredError{Engine: EngineLocal, EnvVar: EnvVar(EngineLocal)}
	}
	if len(urls) == 0 {
		return nil, invalid("urls", "at least one URL is required")
	}
	if len(urls) > MaxDocumentLookups {
		return nil, invalid("urls", "has %d URLs; the limit per call is %d", len(urls), MaxDocumentLookups)
	}
	ids := make([]string, 0, len(urls))
	for i, u := range urls {
		id, err := CanonicalURL(u)
		if err != nil {
			return nil, invalid(fmt.Sprintf("urls[%d]", i), "must be an http or https address")
		}
		if !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	found, err := reader.Documents(ctx, ids, excludeCollections)
	if err != nil {
		return nil, fmt.Errorf("looking documents up: %w", err)
	}
	byID := make(map[string]Result, len(found))
	for _, r := range found {
		// A document's URL is kept as it was cleaned, its key canonical.
		if id, err := CanonicalURL(r.URL); err == nil {
			r.DisplayURL = DisplayURL(r.URL)
			byID[id] = r
		}
	}
	out := make([]Result, 0, len(found))
	for _, id := range ids {
		if r, ok := byID[id]; ok {
			out = append(out, r)
		}
	}
	return out, nil
}
