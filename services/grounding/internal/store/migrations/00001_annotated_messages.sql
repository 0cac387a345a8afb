-- +goose Up
CREATE TABLE annotated_messages (
    id              TEXT PRIMARY KEY,
    text            TEXT NOT NULL,
    summary         TEXT NOT NULL,
    confidence      DOUBLE PRECISION,
    status          TEXT NOT NULL,
    query           TEXT NOT NULL,
    evidence        TEXT NOT NULL,
    evidence_time   BIGINT NOT NULL,
    input_text      TEXT NOT NULL,
    artifact_path   TEXT NOT NULL,
    model           TEXT NOT NULL,
    engine          TEXT NOT NULL,
    error           TEXT NOT NULL,
    created_by      TEXT NOT NULL,
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL
);
CREATE INDEX annotated_messages_created_idx ON annotated_messages (created_at, id);
CREATE INDEX annotated_messages_status_idx ON annotated_messages (status, created_at);

CREATE TABLE citations (
    message_id        TEXT NOT NULL REFERENCES annotated_messages (id) ON DELETE CASCADE,
    position          INTEGER NOT NULL,
    url               TEXT NOT NULL,
    domain            TEXT NOT NULL,
    title             TEXT NOT NULL,
    snippet           TEXT NOT NULL,
    snippet_truncated BOOLEAN NOT NULL,
    start_index       INTEGER NOT NULL,
    end_index         INTEGER NOT NULL,
    confidence_score  DOUBLE PRECISION NOT NULL,
    fetch_time        BIGINT NOT NULL,
    mime_type         TEXT NOT NULL,
    favicon_url       TEXT NOT NULL,
    source_index      INTEGER NOT NULL,
    PRIMARY KEY (message_id, position)
);
CREATE INDEX citations_message_idx ON citations (message_id);
CREATE INDEX citations_url_idx ON citations (url);
CREATE INDEX citations_domain_idx ON citations (domain);
CREATE INDEX citations_fetch_time_idx ON citations (fetch_time);

CREATE TABLE message_reviews (
    id              TEXT PRIMARY KEY,
    message_id      TEXT NOT NULL REFERENCES annotated_messages (id) ON DELETE CASCADE,
    reviewer_id     TEXT NOT NULL,
    notes           TEXT NOT NULL,
    previous_status TEXT NOT NULL,
    new_status      TEXT NOT NULL,
    review_time     BIGINT NOT NULL
);
CREATE INDEX message_reviews_message_idx ON message_reviews (message_id, review_time);

-- +goose Down
DROP TABLE message_reviews;
DROP TABLE citations;
DROP TABLE annotated_messages;
