-- +goose Up
-- One row per SendMessage call that was accepted. idempotency_key is NULL
-- when the caller gave none (NULLs never clash in a UNIQUE column);
-- request_hash tells a retry from a different message reusing a key.
-- Times are Unix microseconds, 0 meaning unset; buttons is a JSON list.
CREATE TABLE notifier_messages (
    id              TEXT PRIMARY KEY,
    idempotency_key TEXT UNIQUE,
    request_hash    TEXT NOT NULL,
    sender          TEXT NOT NULL DEFAULT '',
    chat_id         TEXT NOT NULL DEFAULT '',
    text            TEXT NOT NULL,
    buttons         TEXT NOT NULL DEFAULT '[]',
    status          TEXT NOT NULL,
    attempts        INTEGER NOT NULL DEFAULT 0,
    error           TEXT NOT NULL DEFAULT '',
    delivery_id     TEXT NOT NULL DEFAULT '',
    destination     TEXT NOT NULL DEFAULT '',
    created_at      BIGINT NOT NULL,
    updated_at      BIGINT NOT NULL,
    delivered_at    BIGINT NOT NULL DEFAULT 0
);

-- +goose Down
DROP TABLE notifier_messages;
