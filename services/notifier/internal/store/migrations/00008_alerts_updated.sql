-- +goose Up
-- WatchAlerts (issue 15) reads the alerts changed after a cursor, in
-- (updated_at, id) order, every short interval on every instance.
CREATE INDEX notifier_alerts_updated ON notifier_alerts (updated_at, id);

-- +goose Down
DROP INDEX notifier_alerts_updated;
