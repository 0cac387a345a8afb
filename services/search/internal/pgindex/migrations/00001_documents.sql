-- +goose Up
-- The local index on PostgreSQL full-text search: one row per document,
-- keyed by canonical URL. tsv weighs the title (A) and headings (B) above
-- the body (D), each parsed with the document's own text search
-- configuration (lang: 'english', 'german', …, 'simple' when unknown), so
-- the expression is immutable and can be a stored generated column. The
-- parsed text is bounded: a tsvector holds at most 1 MB.
CREATE TABLE search_documents (
    id                  TEXT PRIMARY KEY,
    url                 TEXT NOT NULL,
    title               TEXT NOT NULL,
    headings            TEXT NOT NULL DEFAULT '',
    body                TEXT NOT NULL,
    lang                REGCONFIG NOT NULL,
    domains             TEXT[] NOT NULL,
    date_at             TIMESTAMPTZ NOT NULL,
    published_at        TIMESTAMPTZ,
    metadata            JSONB NOT NULL DEFAULT '{}',
    indexed_by          TEXT NOT NULL DEFAULT '',
    indexed_at          TIMESTAMPTZ NOT NULL,
    revision            INTEGER NOT NULL DEFAULT 1,
    previous_indexed_by TEXT,
    previous_indexed_at TIMESTAMPTZ,
    tsv                 TSVECTOR GENERATED ALWAYS AS (
        setweight(to_tsvector(lang, title), 'A') ||
        setweight(to_tsvector(lang, headings), 'B') ||
        setweight(to_tsvector(lang, left(body, 500000)), 'D')
    ) STORED
);
CREATE INDEX search_documents_tsv ON search_documents USING GIN (tsv);
CREATE INDEX search_documents_domains ON search_documents USING GIN (domains);
CREATE INDEX search_documents_date ON search_documents (date_at);

-- The configurations documents use: a query is parsed once per
-- configuration and matched against that configuration's documents.
CREATE TABLE search_languages (
    cfg REGCONFIG PRIMARY KEY
);
INSERT INTO search_languages (cfg) VALUES ('simple'), ('english');
-- A few rows for good: tell the planner now (autovacuum waits for 50
-- changes), so it does not take the table for thousands of rows.
ANALYZE search_languages;

-- +goose Down
DROP TABLE search_languages;
DROP TABLE search_documents;
