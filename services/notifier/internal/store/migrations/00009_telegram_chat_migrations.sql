-- +goose Up
-- A Telegram group upgraded to a supergroup gets a new chat id and
-- Telegram refuses messages to the old one (400 "group chat was upgraded
-- to a supergroup chat", parameters.migrate_to_chat_id). The notifier
-- follows the move and keeps it here, so that every instance and every
-- restart sends to the new id while the configuration still names the
-- old one.
CREATE TABLE notifier_telegram_chat_migrations (
    from_chat   TEXT PRIMARY KEY,
    to_chat     TEXT NOT NULL,
    migrated_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE notifier_telegram_chat_migrations;
