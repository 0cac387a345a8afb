-- +goose Up
-- The words of the compound identifiers a document writes
-- (indexdoc.CompoundWords: ResourceQuota → "resource quota", one
-- identifier per line), weighed C in tsv — between the headings (B) and the
-- body (D), and ranked below the body by the weights Search passes to
-- ts_rank — so that "resource quota" finds a runbook that writes
-- ResourceQuota, which the parser reads as one word. NULL until computed:
-- rows written before this migration are filled in by Open (pgindex.go,
-- fillCompoundWords), which the partial index finds.
ALTER TABLE search_documents ADD COLUMN parts TEXT;
-- A generated column's expression cannot be altered before PostgreSQL 17:
-- tsv is made again, which recomputes it for every row.
ALTER TABLE search_documents DROP COLUMN tsv;
ALTER TABLE search_documents ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector(lang, title), 'A') ||
    setweight(to_tsvector(lang, headings), 'B') ||
    setweight(to_tsvector(lang, COALESCE(parts, '')), 'C') ||
    setweight(to_tsvector(lang, left(body, 500000)), 'D')
) STORED;
CREATE INDEX search_documents_tsv ON search_documents USING GIN (tsv);
CREATE INDEX search_documents_parts_pending ON search_documents (id) WHERE parts IS NULL;

-- +goose Down
DROP INDEX search_documents_parts_pending;
ALTER TABLE search_documents DROP COLUMN tsv;
ALTER TABLE search_documents DROP COLUMN parts;
ALTER TABLE search_documents ADD COLUMN tsv TSVECTOR GENERATED ALWAYS AS (
    setweight(to_tsvector(lang, title), 'A') ||
    setweight(to_tsvector(lang, headings), 'B') ||
    setweight(to_tsvector(lang, left(body, 500000)), 'D')
) STORED;
CREATE INDEX search_documents_tsv ON search_documents USING GIN (tsv);
