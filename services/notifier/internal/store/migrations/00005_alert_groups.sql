-- +goose Up
-- Alert groups (issue 14): one row per upstream groupKey and destination
-- chat. The UNIQUE key is the backstop that keeps two instances from
-- opening two roots for one group; intake also takes an advisory lock per
-- group on PostgreSQL. Times are Unix microseconds, 0 meaning unset; label
-- maps and the enrichment are JSON text.
CREATE TABLE notifier_alert_groups (
    id                   TEXT PRIMARY KEY,
    group_key            TEXT NOT NULL,
    source               TEXT NOT NULL,
    destination          TEXT NOT NULL,
    root_message_id      TEXT NOT NULL DEFAULT '',
    status               TEXT NOT NULL,
    firing_count         INTEGER NOT NULL DEFAULT 0,
    resolved_count       INTEGER NOT NULL DEFAULT 0,
    group_labels         TEXT NOT NULL DEFAULT '{}',
    common_labels        TEXT NOT NULL DEFAULT '{}',
    common_annotations   TEXT NOT NULL DEFAULT '{}',
    external_url         TEXT NOT NULL DEFAULT '',
    enrichment           TEXT NOT NULL DEFAULT '',
    grounding_message_id TEXT NOT NULL DEFAULT '',
    enrichment_error     TEXT NOT NULL DEFAULT '',
    silence_id           TEXT NOT NULL DEFAULT '',
    silence_actor        TEXT NOT NULL DEFAULT '',
    silence_by           TEXT NOT NULL DEFAULT '',
    silence_ends_at      BIGINT NOT NULL DEFAULT 0,
    silence_created_at   BIGINT NOT NULL DEFAULT 0,
    silence_expired      BOOLEAN NOT NULL DEFAULT FALSE,
    ack_actor            TEXT NOT NULL DEFAULT '',
    ack_by               TEXT NOT NULL DEFAULT '',
    ack_at               BIGINT NOT NULL DEFAULT 0,
    created_at           BIGINT NOT NULL,
    updated_at           BIGINT NOT NULL,
    UNIQUE (source, group_key, destination)
);
CREATE INDEX notifier_alert_groups_created ON notifier_alert_groups (created_at, id);

-- One row per notification of a group: seq 0 is the root message, later
-- ones reply to it. alert_ids lists the alerts it carries (JSON).
CREATE TABLE notifier_group_notifications (
    id           TEXT PRIMARY KEY,
    group_id     TEXT NOT NULL,
    seq          INTEGER NOT NULL,
    alert_ids    TEXT NOT NULL DEFAULT '[]',
    status       TEXT NOT NULL,
    delivery_id  TEXT NOT NULL DEFAULT '',
    received_at  BIGINT NOT NULL,
    delivered_at BIGINT NOT NULL DEFAULT 0,
    UNIQUE (group_id, seq)
);

ALTER TABLE notifier_alerts ADD COLUMN group_id TEXT NOT NULL DEFAULT '';
CREATE INDEX notifier_alerts_group ON notifier_alerts (group_id, received_at);

-- +goose Down
DROP INDEX notifier_alerts_group;
ALTER TABLE notifier_alerts DROP COLUMN group_id;
DROP TABLE notifier_group_notifications;
DROP TABLE notifier_alert_groups;
