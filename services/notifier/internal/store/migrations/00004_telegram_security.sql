-- +goose Up
-- Handled Telegram updates are keyed by bot and chat as well as update id:
-- update ids are the bot's own sequence, and a forged or replayed id must
-- not burn the id a real update in another chat will carry. Rows handled
-- before this migration keep their outcome under bot 0 and chat 0.
CREATE TABLE notifier_telegram_handled (
    bot_id      BIGINT NOT NULL,
    chat_id     BIGINT NOT NULL,
    update_id   BIGINT NOT NULL,
    outcome     TEXT NOT NULL,
    handled_at  BIGINT NOT NULL,
    PRIMARY KEY (bot_id, chat_id, update_id)
);
INSERT INTO notifier_telegram_handled (bot_id, chat_id, update_id, outcome, handled_at)
    SELECT 0, 0, update_id, outcome, handled_at FROM notifier_telegram_updates;
DROP TABLE notifier_telegram_updates;

-- Who sent a message (the caller's key name set by the gateway, "" for a
-- direct gRPC caller), and the approval whose buttons it carries, so that a
-- button press is accepted only from that message.
ALTER TABLE notifier_messages ADD COLUMN actor TEXT NOT NULL DEFAULT '';
ALTER TABLE notifier_messages ADD COLUMN approval_id TEXT NOT NULL DEFAULT '';
CREATE INDEX notifier_messages_approval ON notifier_messages (approval_id);

-- +goose Down
DROP INDEX notifier_messages_approval;
ALTER TABLE notifier_messages DROP COLUMN approval_id;
ALTER TABLE notifier_messages DROP COLUMN actor;
CREATE TABLE notifier_telegram_updates (
    update_id   BIGINT PRIMARY KEY,
    outcome     TEXT NOT NULL,
    handled_at  BIGINT NOT NULL
);
DROP TABLE notifier_telegram_handled;
