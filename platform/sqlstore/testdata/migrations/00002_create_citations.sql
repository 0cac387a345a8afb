-- +goose Up
CREATE TABLE citations (
    id         BIGINT PRIMARY KEY,
    source_id  TEXT NOT NULL REFERENCES sources (id) ON DELETE CASCADE,
    snippet    TEXT NOT NULL,
    truncated  BOOLEAN NOT NULL DEFAULT FALSE
);

-- +goose Down
DROP TABLE citations;
