-- +goose Up
CREATE TABLE sources (
    id         TEXT PRIMARY KEY,
    url        TEXT NOT NULL,
    domain     TEXT NOT NULL,
    fetched_at TEXT NOT NULL
);
CREATE INDEX sources_domain_idx ON sources (domain);

-- +goose Down
DROP TABLE sources;
