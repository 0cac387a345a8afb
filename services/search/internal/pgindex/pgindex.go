// Package pgindex is the embedded search engine "local" kept in PostgreSQL
// full-text search instead of a bleve directory, so any number of search
// replicas on one database share one index: a document indexed through
// one is found through every other at once.
//
// It keeps the bleve index's contract (see internal/indextest): documents
// keyed by canonical URL (indexing a URL again replaces it), prepared alike
// (internal/indexdoc), the same filters and limits, scores in [0,1] and
// snippets of at most MaxSnippetChars characters.
//
// Each document is parsed with its own text search configuration (its
// declared language, English when it reads as English, else "simple"),
// into a weighted tsvector (title A, headings B, the words of compound
// identifiers C, body D) kept in a stored generated column with a GIN
// index. A query is parsed once per
// configuration in use with websearch_to_tsquery, its words joined with
// "or" (as the bleve index matches any word; quoted phrases stay phrases),
// and matched against that configuration's documents. PostgreSQL's GIN
// index knows which documents hold a word but not how often, so every
// match must be read to be ranked; to bound that, candidates are first
// the documents holding at least two of the query's words (any word when
// those are too few), at most MaxCandidates of them. ts_rank (normalised
// by document length) plus a bonus when the whole query appears as a
// phrase orders them, rank/(rank+1) is the score, and ts_headline cuts the
// snippet around the best passage. A compound identifier in the query
// (ResourceQuota) also matches its words as a phrase, and its words alone
// where documents write them inside identifiers (weight C); ts_rank weighs
// C below the body, so the identifier's words never lift a document above
// one that writes what was asked.
package pgindex

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/jackc/pgx/v5"

	"github.com/groundcrew/groundcrew/platform/sqlstore"
	"github.com/groundcrew/groundcrew/services/search/internal/indexdoc"
	"github.com/groundcrew/groundcrew/services/search/internal/search"
)

//go:embed migrations/*.sql
var migrations embed.FS

// MaxSnippetChars bounds a result's snippet, as in the bleve index.
const MaxSnippetChars = 300

// headlineInput bounds the body text ts_headline reads: it parses what it
// is given, and the passage that matched is almost always near the
// beginning of a runbook-sized document.
const headlineInput = "200000"

var (
	_ search.Engine          = (*Index)(nil)
	_ search.HealthChecker   = (*Index)(nil)
	_ search.DocumentIndexer = (*Index)(nil)
	_ search.SharedIndex     = (*Index)(nil)
)

// Options tune an Index; the zero value is usable.
type Options struct {
	// Now is the clock for indexing times and recency filters; nil means
	// time.Now.
	Now func() time.Time
	// BatchSize is the number of documents written per transaction; 0
	// means 500. A call's documents are durable batch by batch: an
	// acknowledged call is wholly stored.
	BatchSize int
}

// Index is the local index in PostgreSQL. It is safe for concurrent use,
// and by several processes on one database.
type Index struct {
	db        *sqlstore.DB
	now       func() time.Time
	batchSize int

	// configs are the text search configurations the server has; a
	// document whose language has none is parsed with "simple".
	configs map[string]bool
}

// Open applies the migrations to db (a PostgreSQL database) and returns
// the index. Closing db is the caller's.
func Open(ctx context.Context, db *sqlstore.DB, opts Options) (*Index, error) {
	if db.Dialect != sqlstore.Postgres {
		return nil, errors.New("pgindex: the local index needs PostgreSQL (SEARCH_DATABASE_URL=postgres://…)")
	}
	// Two replicas starting together must not both create the tables.
	if err := sqlstore.Migrate(ctx, db, migrations, "migrations"); err != nil {
		return nil, fmt.Errorf("pgindex: %w", err)
	}
	ix := &Index{db: db, now: opts.Now, batchSize: opts.BatchSize, configs: map[string]bool{}}
	if ix.now == nil {
		ix.now = time.Now
	}
	if ix.batchSize <= 0 {
		ix.batchSize = 500
	}
	rows, err := db.QueryContext(ctx, "SELECT cfgname FROM pg_catalog.pg_ts_config WHERE cfgnamespace = 'pg_catalog'::regnamespace")
	if err != nil {
		return nil, fmt.Errorf("pgindex: listing text search configurations: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var name string
		if err := rows.Scan(&name); err != nil {
			return nil, fmt.Errorf("pgindex: listing text search configurations: %w", err)
		}
		ix.configs[name] = true
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("pgindex: listing text search configurations: %w", err)
	}
	if err := ix.fillCompoundWords(ctx); err != nil {
		return nil, fmt.Errorf("pgindex: %w", err)
	}
	return ix, nil
}

// fillBatch is how many rows fillCompoundWords updates per transaction.
const fillBatch = 200

// fillCompoundWords computes the parts column (indexdoc.CompoundWords) of
// rows written before it existed (migration 00002 leaves them NULL), so an
// index upgraded in place matches identifiers' words as a new one does.
// Replicas starting together share the work: each takes rows the others
// have not locked.
func (ix *Index) fillCompoundWords(ctx context.Context) error {
	for {
		n := 0
		err := ix.inTx(ctx, func(tx *sql.Tx) error {
			rows, err := tx.QueryContext(ctx, `SELECT id, title, body FROM search_documents
WHERE parts IS NULL ORDER BY id LIMIT $1 FOR UPDATE SKIP LOCKED`, fillBatch)
			if err != nil {
				return err
			}
			type row struct{ id, parts string }
			var todo []row
			for rows.Next() {
				var id, title, body string
				if err := rows.Scan(&id, &title, &body); err != nil {
					rows.Close()
					return err
				}
				todo = append(todo, row{id, indexdoc.CompoundWords(title, body)})
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return err
			}
			for _, r := range todo {
				if _, err := tx.ExecContext(ctx, "UPDATE search_documents SET parts = $2 WHERE id = $1", r.id, r.parts); err != nil {
					return err
				}
			}
			n = len(todo)
			return nil
		})
		if err != nil {
			return fmt.Errorf("computing compound words of earlier documents: %w", err)
		}
		if n < fillBatch {
			return nil
		}
	}
}

// Name returns "local".
func (ix *Index) Name() string { return search.EngineLocal }

// Shared reports that other instances write to this index too.
func (ix *Index) Shared() bool { return true }

// Healthy reports whether the database answers.
func (ix *Index) Healthy(ctx context.Context) error {
	if err := ix.db.PingContext(ctx); err != nil {
		return fmt.Errorf("local index (PostgreSQL): %w", err)
	}
	return nil
}

// Count returns the number of indexed documents.
func (ix *Index) Count(ctx context.Context) (uint64, error) {
	var n uint64
	if err := ix.db.QueryRowContext(ctx, "SELECT count(*) FROM search_documents").Scan(&n); err != nil {
		return 0, fmt.Errorf("counting indexed documents: %w", err)
	}
	return n, nil
}

// upsertSQL writes one document. In DO UPDATE every expression reads the
// row as it was, so the previous version's indexer moves to
// previous_indexed_by as the new one takes its place.
const upsertSQL = `
INSERT INTO search_documents AS d
    (id, url, title, headings, body, lang, domains, date_at, published_at, metadata, indexed_by, indexed_at, revision, parts)
VALUES ($1, $2, $3, $4, $5, $6::regconfig, $7, $8, $9, $10, $11, $12, 1, $13)
ON CONFLICT (id) DO UPDATE SET
    url = EXCLUDED.url, title = EXCLUDED.title, headings = EXCLUDED.headings, body = EXCLUDED.body,
    parts = EXCLUDED.parts,
    lang = EXCLUDED.lang, domains = EXCLUDED.domains, date_at = EXCLUDED.date_at,
    published_at = EXCLUDED.published_at, metadata = EXCLUDED.metadata,
    indexed_by = EXCLUDED.indexed_by, indexed_at = EXCLUDED.indexed_at,
    revision = d.revision + 1,
    previous_indexed_by = d.indexed_by, previous_indexed_at = d.indexed_at
RETURNING revision, COALESCE(previous_indexed_by, ''), previous_indexed_at`

// Upsert indexes docs, each replacing any document with the same canonical
// URL, in transactions of BatchSize documents. Documents that cannot be
// indexed are reported in the result and do not stop the others. An error
// means the database failed; earlier batches are stored.
func (ix *Index) Upsert(ctx context.Context, docs []search.Document) (search.IndexResult, error) {
	var res search.IndexResult
	now := ix.now().UTC().Truncate(time.Microsecond)
	for start := 0; start < len(docs); start += ix.batchSize {
		if err := ctx.Err(); err != nil {
			return res, err
		}
		chunk := docs[start:min(start+ix.batchSize, len(docs))]
		type ready struct {
			index int
			doc   indexdoc.Prepared
		}
		var batch []ready
		for i, d := range chunk {
			p, err := indexdoc.Prepare(d, now)
			if err != nil {
				res.Rejected = append(res.Rejected, search.Rejection{Index: start + i, URL: d.URL, Reason: err.Error()})
				continue
			}
			if !ix.configs[p.Language] {
				p.Language = "simple"
			}
			batch = append(batch, ready{start + i, p})
		}
		if len(batch) == 0 {
			continue
		}
		var reps []search.Replacement
		err := ix.inTx(ctx, func(tx *sql.Tx) error {
			reps = reps[:0]
			langs := make([]string, 0, len(batch))
			for _, r := range batch {
				langs = append(langs, r.doc.Language)
			}
			if err := register(ctx, tx, langs); err != nil {
				return err
			}
			stmt, err := tx.PrepareContext(ctx, upsertSQL)
			if err != nil {
				return err
			}
			defer stmt.Close()
			for _, r := range batch {
				p := r.doc
				meta, err := json.Marshal(p.Metadata)
				if err != nil {
					return fmt.Errorf("metadata of %s: %w", p.ID, err)
				}
				var published any
				if !p.Published.IsZero() {
					published = p.Published
				}
				prov := search.Provenance{IndexedBy: p.IndexedBy, IndexedAt: now}
				var prevAt sql.NullTime
				if err := stmt.QueryRowContext(ctx, p.ID, p.URL, p.Title, p.Headings, p.Text, p.Language, p.Domains,
					p.Date, published, meta, p.IndexedBy, now, indexdoc.CompoundWords(p.Title, p.Text)).Scan(&prov.Revision, &prov.PreviousIndexedBy, &prevAt); err != nil {
					return fmt.Errorf("writing %s: %w", p.ID, err)
				}
				if prov.Revision > 1 {
					prov.PreviousIndexedAt = prevAt.Time.UTC()
					reps = append(reps, search.Replacement{Index: r.index, URL: p.ID, Provenance: prov})
				}
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("writing to the local index: %w", err)
		}
		res.Indexed += len(batch)
		res.Replaced += len(reps)
		res.Replacements = append(res.Replacements, reps...)
	}
	return res, nil
}

// register makes sure search_languages holds the configurations langs,
// in the transaction that writes their documents: a search sees a
// document only with its configuration, so both commit together. The
// insert is a no-op for a configuration already there.
func register(ctx context.Context, tx *sql.Tx, langs []string) error {
	slices.Sort(langs)
	for _, l := range slices.Compact(langs) {
		if _, err := tx.ExecContext(ctx, "INSERT INTO search_languages (cfg) VALUES ($1::regconfig) ON CONFLICT DO NOTHING", l); err != nil {
			return fmt.Errorf("registering text search configuration %s: %w", l, err)
		}
	}
	return nil
}

// inTx runs fn in a transaction, committed when fn returns nil.
func (ix *Index) inTx(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := ix.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			return errors.Join(ctxErr, err)
		}
		return err
	}
	return tx.Commit()
}

// Delete removes the documents with the canonical forms of urls and returns
// how many were present.
func (ix *Index) Delete(ctx context.Context, urls []string) (int, error) {
	var ids []string
	for _, u := range urls {
		if id, err := search.CanonicalURL(u); err == nil {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return 0, nil
	}
	res, err := ix.db.ExecContext(ctx, "DELETE FROM search_documents WHERE id = ANY($1)", ids)
	if err != nil {
		return 0, fmt.Errorf("deleting from the local index: %w", err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return 0, fmt.Errorf("deleting from the local index: %w", err)
	}
	return int(n), nil
}

// searchSQL finds the best $7 documents in two stages, so that a query
// whose words are common costs a bounded amount of ranking. The query is
// parsed once per configuration in search_languages (q, materialised so it
// is parsed once, not per row), and each configuration's documents are
// searched in a LATERAL subquery, so the GIN index is used whatever the
// planner thinks of q's size. Stage one takes, through the GIN index, up
// to $10 candidates matching $9: for a query of several words, documents
// holding at least two of them (pairs joined with "or"), which is where
// the best answers are; for one word, that word. When that finds fewer
// than $7, documents matching any word ($1) join them, bounded alike.
// Stage two ranks the candidates with the tsvectors stage one read (no
// second fetch), and only the rows returned are read whole, for
// ts_headline's snippets and $8 characters of text (0: none).
//
// Compound identifiers (compoundQueries): the query's identifiers as
// phrases of their words ($11) and pairs of its adjacent words among the
// identifiers' words ($12), each kept when it is a phrase of two or more
// words once parsed (a stop word drops out), joined with "or". The
// phrases are few and both stages match them besides the words; the pairs
// only rank: a document writing the identifier holds both words (weight
// C), so the words' own stages find it, and two dozen phrases in the GIN
// stages would be rechecked on every document holding any two of their
// words. The loose stage also matches the words of the query's
// identifiers among the documents' identifiers' words ($13), so that
// KubeResourceQuotaExceeded finds a document that writes ResourceQuota.
// words ranks with the identifiers' words (weight C) at 0, so that a query
// word counts there only in a pair.
const searchSQL = `
WITH q0 AS (
    SELECT l.cfg, websearch_to_tsquery(l.cfg, $1) AS words, websearch_to_tsquery(l.cfg, $9) AS strict,
           phraseto_tsquery(l.cfg, $2) AS phrase,
           COALESCE((SELECT string_agg('(' || p::text || ')', ' | ')
                     FROM unnest($11::text[]) AS u(x) CROSS JOIN LATERAL to_tsquery(l.cfg, u.x) AS p
                     WHERE numnode(p) >= 3), '') AS phrases,
           COALESCE((SELECT string_agg('(' || p::text || ')', ' | ')
                     FROM unnest($11::text[] || $12::text[]) AS u(x) CROSS JOIN LATERAL to_tsquery(l.cfg, u.x) AS p
                     WHERE numnode(p) >= 3), '') AS compound
    FROM search_languages l
), q AS MATERIALIZED (
    SELECT cfg, words, phrase,
           CASE WHEN phrases = '' THEN words ELSE words || phrases::tsquery || to_tsquery(cfg, $13) END AS tsq,
           CASE WHEN phrases = '' THEN strict ELSE strict || phrases::tsquery END AS strict,
           CASE WHEN compound = '' THEN NULL ELSE compound::tsquery END AS compound
    FROM q0
), strict AS MATERIALIZED (
    SELECT s.* FROM q CROSS JOIN LATERAL (
        SELECT d.id, d.lang, d.tsv FROM search_documents d
        WHERE d.tsv @@ q.strict AND d.lang = q.cfg
          AND (cardinality($4::text[]) = 0 OR d.domains && $4::text[])
          AND NOT (d.domains && $5::text[])
          AND ($6::timestamptz IS NULL OR d.date_at >= $6::timestamptz)
        LIMIT $10) s
    LIMIT $10
), loose AS MATERIALIZED (
    SELECT s.* FROM q CROSS JOIN LATERAL (
        SELECT d.id, d.lang, d.tsv FROM search_documents d
        WHERE d.tsv @@ q.tsq AND d.lang = q.cfg
          AND (cardinality($4::text[]) = 0 OR d.domains && $4::text[])
          AND NOT (d.domains && $5::text[])
          AND ($6::timestamptz IS NULL OR d.date_at >= $6::timestamptz)
        LIMIT $10) s
    WHERE (SELECT count(*) FROM strict) < $7
    LIMIT $10
), candidates AS (
    SELECT * FROM strict
    UNION ALL
    SELECT * FROM loose l WHERE NOT EXISTS (SELECT 1 FROM strict s WHERE s.id = l.id)
), ranked AS (
    SELECT c.id, q.tsq,
           ts_rank('` + wordWeights + `', c.tsv, q.words, 1)
             + CASE WHEN q.compound IS NOT NULL AND c.tsv @@ q.compound THEN ts_rank('` + rankWeights + `', c.tsv, q.compound, 1) ELSE 0 END
             + CASE WHEN $3 AND numnode(q.phrase) > 0 AND c.tsv @@ q.phrase THEN ts_rank('` + rankWeights + `', c.tsv, q.phrase, 1) ELSE 0 END AS rank
    FROM candidates c JOIN q ON q.cfg = c.lang
    ORDER BY rank DESC, c.id
    LIMIT $7
)
SELECT d.id, d.url, d.title, d.published_at, d.metadata, d.indexed_by, d.indexed_at, d.revision,
       COALESCE(d.previous_indexed_by, ''), d.previous_indexed_at, r.rank,
       ts_headline(d.lang, left(d.body, ` + headlineInput + `), r.tsq,
           'MaxWords=24, MinWords=10, ShortWord=2, MaxFragments=2, FragmentDelimiter=" … ", StartSel="", StopSel=""'),
       left(d.body, 600),
       left(d.body, $8::int)
FROM ranked r JOIN search_documents d ON d.id = r.id
ORDER BY r.rank DESC, r.id`

// rankWeights are ts_rank's weights of D, C, B and A: PostgreSQL's
// defaults (0.1, 0.2, 0.4, 1.0) but for C, the words of compound
// identifiers, at half the body's weight — a document matching only
// through them is found, but ranks below one that writes the words.
const rankWeights = "{0.1, 0.05, 0.4, 1.0}"

// wordWeights rank the query's words one by one: rankWeights without the
// identifiers' words, which count only in pairs.
const wordWeights = "{0.1, 0, 0.4, 1.0}"

// MaxCandidates bounds the documents one search ranks (per stage): with
// more matches than that, the best of a bounded sample is returned, which
// for the multi-word queries alerts make are documents sharing at least
// two of their words.
const MaxCandidates = 300

// Search runs q. Domain and recency filters are applied in the database,
// so q.MaxResults hits are returned when that many match. Recency uses the
// publication date, or the indexing time for documents without one.
func (ix *Index) Search(ctx context.Context, q search.Query) ([]search.Result, error) {
	n := q.MaxResults
	if n <= 0 {
		return nil, nil
	}
	terms := anyWord(q.Text)
	if terms == "" {
		return nil, nil
	}
	var since any
	if q.MaxAge > 0 {
		since = ix.now().Add(-q.MaxAge).UTC()
	}
	allowed, blocked := q.AllowedDomains, q.BlockedDomains
	if allowed == nil {
		allowed = []string{}
	}
	if blocked == nil {
		blocked = []string{}
	}
	// A collection is a term of the domains column (indexdoc.CollectionTerm).
	blocked = append(slices.Clone(blocked), indexdoc.CollectionTerms(q.ExcludeCollections)...)
	// The whole query as a phrase earns a bonus, as in the bleve index;
	// past six words (alert texts) no document holds it verbatim, and
	// checking each candidate for it costs more than it finds.
	nWords := len(strings.Fields(q.Text))
	multiWord := nWords > 1 && nWords <= 6
	// The whole text only when asked for (left() counts characters, as
	// MaxTextChars does).
	textChars := 0
	if q.IncludeText {
		textChars = search.MaxTextChars
	}
	// Planned for these values every time (an unnamed statement): a
	// generic plan, which pgx's statement cache would get after five
	// runs, knows neither how common the words are nor the limits, and
	// can be a hundred times slower.
	phrases, pairs, idWords := compoundQueries(q.Text)
	if phrases == nil {
		phrases = []string{}
	}
	if pairs == nil {
		pairs = []string{}
	}
	rows, err := ix.db.QueryContext(ctx, searchSQL, pgx.QueryExecModeExec, terms, q.Text, multiWord, allowed, blocked, since, n, textChars,
		twoWords(terms), MaxCandidates, phrases, pairs, idWords)
	if err != nil {
		return nil, fmt.Errorf("local index search: %w", err)
	}
	defer rows.Close()
	var out []search.Result
	for rows.Next() {
		var (
			r                   search.Result
			id, headline, start string
			published, prevAt   sql.NullTime
			meta                []byte
			prov                search.Provenance
			rank                float64
		)
		if err := rows.Scan(&id, &r.URL, &r.Title, &published, &meta, &prov.IndexedBy, &prov.IndexedAt, &prov.Revision,
			&prov.PreviousIndexedBy, &prevAt, &rank, &headline, &start, &r.Text); err != nil {
			return nil, fmt.Errorf("local index search: %w", err)
		}
		r.Score = rank / (1 + rank)
		r.Snippet = snippet(headline, start)
		out = append(out, finish(r, published, prevAt, meta, prov))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local index search: %w", err)
	}
	return out, nil
}

var _ search.DocumentReader = (*Index)(nil)

// documentsSQL reads documents by key ($1), leaving out those whose
// domains hold a term of $2 (excluded collections), with at most $3
// characters of text.
const documentsSQL = `SELECT url, title, published_at, metadata, indexed_by, indexed_at, revision,
       COALESCE(previous_indexed_by, ''), previous_indexed_at, left(body, $3::int)
FROM search_documents
WHERE id = ANY($1) AND NOT (domains && $2)`

// Documents returns the indexed documents among ids (canonical URLs) in
// none of the excluded collections, each with its whole text and its
// beginning as snippet.
func (ix *Index) Documents(ctx context.Context, ids, excludeCollections []string) ([]search.Result, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	excluded := indexdoc.CollectionTerms(excludeCollections)
	if excluded == nil {
		excluded = []string{}
	}
	rows, err := ix.db.QueryContext(ctx, documentsSQL, ids, excluded, search.MaxTextChars)
	if err != nil {
		return nil, fmt.Errorf("local index lookup: %w", err)
	}
	defer rows.Close()
	var out []search.Result
	for rows.Next() {
		var (
			r                 search.Result
			published, prevAt sql.NullTime
			meta              []byte
			prov              search.Provenance
		)
		if err := rows.Scan(&r.URL, &r.Title, &published, &meta, &prov.IndexedBy, &prov.IndexedAt, &prov.Revision,
			&prov.PreviousIndexedBy, &prevAt, &r.Text); err != nil {
			return nil, fmt.Errorf("local index lookup: %w", err)
		}
		r.Snippet = snippet("", r.Text)
		out = append(out, finish(r, published, prevAt, meta, prov))
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("local index lookup: %w", err)
	}
	return out, nil
}

// finish completes a result from the columns every query reads alike: the
// domain, the publication time, who indexed it and its metadata.
func finish(r search.Result, published, prevAt sql.NullTime, meta []byte, prov search.Provenance) search.Result {
	r.SourceDomain, _ = search.Domain(r.URL)
	if published.Valid {
		r.PublishedAt = published.Time.UTC()
	}
	prov.IndexedAt = prov.IndexedAt.UTC()
	if prevAt.Valid {
		prov.PreviousIndexedAt = prevAt.Time.UTC()
	}
	r.Provenance = &prov
	var m map[string]string
	if json.Unmarshal(meta, &m) == nil {
		r.MimeType, r.FaviconURL = m[search.MetaMimeType], m[search.MetaFaviconURL]
	}
	return r
}

// snippet makes ts_headline's passage one line of at most MaxSnippetChars
// characters; when the match was in the title only (no passage), the
// body's beginning stands in.
func snippet(headline, start string) string {
	s := strings.Join(strings.Fields(headline), " ")
	if s == "" {
		s = strings.Join(strings.Fields(start), " ")
	}
	return search.Truncate(s, MaxSnippetChars)
}

// pairWords is how many of a query's first words pair up in twoWords.
// Every pair is a clause GIN evaluates for each document in the union of
// the words' posting lists, so a long query (an alert's text) pairing all
// its words costs tens of milliseconds at 100,000 documents; its first
// words (the alert's name) are the ones that tell runbooks apart. Chosen on
// the labelled enrichment set and the benchmark (BENCHMARKS.md): 4 ranked
// as well as 6, 8 or 16 and was the fastest.
const pairWords = 4

// twoWords turns anyWord's "a or b or c" into "a b or a c or b c": the
// documents holding at least two of the first pairWords words (a quoted
// phrase counts as one word). A single word stays itself.
func twoWords(anyWords string) string {
	parts := strings.Split(anyWords, " or ")
	if len(parts) < 2 {
		return anyWords
	}
	parts = parts[:min(len(parts), pairWords)]
	var pairs []string
	for i := range parts {
		for j := i + 1; j < len(parts); j++ {
			pairs = append(pairs, parts[i]+" "+parts[j])
		}
	}
	return strings.Join(pairs, " or ")
}

// compoundQueries returns the to_tsquery terms that match compound
// identifiers both ways: each identifier of the query as a phrase of its
// words ("resource <-> quota"), which finds documents that write the words
// apart, and each pair of adjacent words of the query, its identifiers
// split, among the words of the documents' identifiers ("resource:C <->
// quota:C"), which ranks documents that write the identifier; nil
// without any. idWords are the identifiers' words among the documents'
// identifiers' words ("resource:C | quota:C"), which find a document that
// writes a part of a query's identifier; "" without any. The words are
// letters and digits only, so they need no quoting.
func compoundQueries(text string) (phrases, pairs []string, idWords string) {
	var ws []string
	seenWord := map[string]bool{}
	for _, parts := range indexdoc.QueryCompounds(text) {
		phrases = append(phrases, strings.Join(parts, " <-> "))
		for _, w := range parts {
			if !seenWord[w] {
				seenWord[w] = true
				ws = append(ws, w+":C")
			}
		}
	}
	words := strings.FieldsFunc(strings.ToLower(indexdoc.SplitQuery(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	})
	seen := map[string]bool{}
	for i := 1; i < len(words) && len(seen) < indexdoc.MaxQueryPairs; i++ {
		pair := words[i-1] + ":C <-> " + words[i] + ":C"
		if !seen[pair] {
			seen[pair] = true
			pairs = append(pairs, pair)
		}
	}
	return phrases, pairs, strings.Join(ws, " | ")
}

// anyWord rewrites a query for websearch_to_tsquery so that any of its
// words matches, as in the bleve index: words are joined with "or",
// quoted phrases stay phrases, and websearch's own operators ("or", a
// leading "-") are taken as plain words.
func anyWord(text string) string {
	var parts []string
	rest := text
	for rest != "" {
		rest = strings.TrimLeftFunc(rest, unicode.IsSpace)
		if rest == "" {
			break
		}
		if rest[0] == '"' {
			end := strings.IndexByte(rest[1:], '"')
			if end > 0 {
				if phrase := strings.TrimSpace(rest[1 : end+1]); phrase != "" {
					parts = append(parts, `"`+phrase+`"`)
				}
				rest = rest[end+2:]
				continue
			}
			rest = rest[1:]
			continue
		}
		i := strings.IndexFunc(rest, func(r rune) bool { return unicode.IsSpace(r) || r == '"' })
		if i < 0 {
			i = len(rest)
		}
		w := strings.TrimLeft(rest[:i], "-")
		rest = rest[i:]
		if w == "" || strings.EqualFold(w, "or") || strings.EqualFold(w, "and") {
			continue
		}
		parts = append(parts, w)
	}
	return strings.Join(parts, " or ")
}
