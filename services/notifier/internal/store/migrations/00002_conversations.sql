-- +goose Up
-- One row per Telegram message seen in a chat, the agent's own replies
-- included; parts is the JSON list of text and media parts.
CREATE TABLE notifier_chat_messages (
    chat_id     BIGINT NOT NULL,
    message_id  BIGINT NOT NULL,
    chat_type   TEXT NOT NULL DEFAULT '',
    speaker     TEXT NOT NULL DEFAULT '',
    speaker_id  TEXT NOT NULL DEFAULT '',
    is_agent    BOOLEAN NOT NULL DEFAULT FALSE,
    reply_to_id BIGINT NOT NULL DEFAULT 0,
    parts       TEXT NOT NULL,
    sent_at     BIGINT NOT NULL,
    PRIMARY KEY (chat_id, message_id)
);
CREATE INDEX notifier_chat_messages_sent ON notifier_chat_messages (chat_id, sent_at, message_id);

-- Telegram updates already handled, for idempotency.
CREATE TABLE notifier_telegram_updates (
    update_id   BIGINT PRIMARY KEY,
    outcome     TEXT NOT NULL,
    handled_at  BIGINT NOT NULL
);

-- +goose Down
DROP TABLE notifier_telegram_updates;
DROP TABLE notifier_chat_messages;
