-- +goose Up
-- NOTIFIER_ALERT_RETENTION also purges SendMessage records, chat history
-- and handled-update records by age; these indexes let its hourly run find
-- the oldest rows without reading every row.
CREATE INDEX notifier_messages_created ON notifier_messages (created_at);
CREATE INDEX notifier_chat_messages_age ON notifier_chat_messages (sent_at);
CREATE INDEX notifier_telegram_handled_age ON notifier_telegram_handled (handled_at);

-- +goose Down
DROP INDEX notifier_telegram_handled_age;
DROP INDEX notifier_chat_messages_age;
DROP INDEX notifier_messages_created;
