-- +goose Up
-- The enrichment cache key of a group (its alertname and common labels,
-- hashed): a group whose key matches one enriched within
-- NOTIFIER_ENRICH_CACHE_TTL reuses that enrichment.
ALTER TABLE notifier_alert_groups ADD COLUMN enrich_key TEXT NOT NULL DEFAULT '';
ALTER TABLE notifier_alert_groups ADD COLUMN enriched_at BIGINT NOT NULL DEFAULT 0;
CREATE INDEX notifier_alert_groups_enrich ON notifier_alert_groups (enrich_key, enriched_at);

-- +goose Down
DROP INDEX notifier_alert_groups_enrich;
ALTER TABLE notifier_alert_groups DROP COLUMN enriched_at;
ALTER TABLE notifier_alert_groups DROP COLUMN enrich_key;
