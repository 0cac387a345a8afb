-- +goose Up
-- Storm digests (issue 14): alerts collapsed into one digest message carry
-- the digest's id; the backlog of a chat is counted by destination (set at
-- intake to the routed chat) and status.
ALTER TABLE notifier_alerts ADD COLUMN digest_id TEXT NOT NULL DEFAULT '';
CREATE INDEX notifier_alerts_backlog ON notifier_alerts (destination, status);
CREATE INDEX notifier_alerts_digest ON notifier_alerts (digest_id);

-- +goose Down
DROP INDEX notifier_alerts_digest;
DROP INDEX notifier_alerts_backlog;
ALTER TABLE notifier_alerts DROP COLUMN digest_id;
