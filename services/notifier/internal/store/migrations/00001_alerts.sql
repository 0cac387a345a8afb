-- +goose Up
-- Times are Unix microseconds (BIGINT), 0 meaning unset; JSON is TEXT.
CREATE TABLE notifier_alerts (
    id                      TEXT PRIMARY KEY,
    source                  TEXT NOT NULL,
    text                    TEXT NOT NULL,
    text_truncated          BOOLEAN NOT NULL DEFAULT FALSE,
    metadata                TEXT NOT NULL DEFAULT '{}',
    labels                  TEXT NOT NULL DEFAULT '{}',
    alert_status            TEXT NOT NULL DEFAULT '',
    fingerprint             TEXT NOT NULL,
    status                  TEXT NOT NULL,
    attempts                INTEGER NOT NULL DEFAULT 0,
    error                   TEXT NOT NULL DEFAULT '',
    message_text            TEXT NOT NULL DEFAULT '',
    message_plain           TEXT NOT NULL DEFAULT '',
    message_parse_mode      TEXT NOT NULL DEFAULT '',
    message_disable_preview BOOLEAN NOT NULL DEFAULT FALSE,
    duplicate_of            TEXT NOT NULL DEFAULT '',
    grounding_message_id    TEXT NOT NULL DEFAULT '',
    enrichment_error        TEXT NOT NULL DEFAULT '',
    delivery_ids            TEXT NOT NULL DEFAULT '[]',
    destination             TEXT NOT NULL DEFAULT '',
    received_at             BIGINT NOT NULL,
    updated_at              BIGINT NOT NULL,
    delivered_at            BIGINT NOT NULL DEFAULT 0
);
CREATE INDEX notifier_alerts_dedup ON notifier_alerts (fingerprint, source, alert_status, received_at);
CREATE INDEX notifier_alerts_received ON notifier_alerts (received_at, id);
CREATE INDEX notifier_alerts_status_received ON notifier_alerts (status, received_at, id);

-- +goose Down
DROP TABLE notifier_alerts;
