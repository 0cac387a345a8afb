-- +goose Up
-- The audit record of issue 19: the round and request a message came
-- from, what the parser derived, archived and purged states; citation ids,
-- creation and actor, and the restricted page HTML; review actors.
ALTER TABLE annotated_messages ADD COLUMN round_id TEXT NOT NULL DEFAULT '';
ALTER TABLE annotated_messages ADD COLUMN round_config TEXT NOT NULL DEFAULT '';
ALTER TABLE annotated_messages ADD COLUMN request_id TEXT NOT NULL DEFAULT '';
ALTER TABLE annotated_messages ADD COLUMN parsed_metadata TEXT NOT NULL DEFAULT '';
ALTER TABLE annotated_messages ADD COLUMN artifact_archived BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE annotated_messages ADD COLUMN purged BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX annotated_messages_round_idx ON annotated_messages (round_id);
CREATE INDEX annotated_messages_request_idx ON annotated_messages (request_id);
CREATE INDEX annotated_messages_purge_idx ON annotated_messages (purged, created_at);

ALTER TABLE citations ADD COLUMN id TEXT NOT NULL DEFAULT '';
ALTER TABLE citations ADD COLUMN create_time BIGINT NOT NULL DEFAULT 0;
ALTER TABLE citations ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE citations ADD COLUMN raw_html_path TEXT NOT NULL DEFAULT '';
ALTER TABLE citations ADD COLUMN raw_html_archived BOOLEAN NOT NULL DEFAULT FALSE;
CREATE INDEX citations_id_idx ON citations (id);

ALTER TABLE message_reviews ADD COLUMN actor TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE message_reviews DROP COLUMN actor;
DROP INDEX citations_id_idx;
ALTER TABLE citations DROP COLUMN raw_html_archived;
ALTER TABLE citations DROP COLUMN raw_html_path;
ALTER TABLE citations DROP COLUMN created_by;
ALTER TABLE citations DROP COLUMN create_time;
ALTER TABLE citations DROP COLUMN id;
DROP INDEX annotated_messages_purge_idx;
DROP INDEX annotated_messages_request_idx;
DROP INDEX annotated_messages_round_idx;
ALTER TABLE annotated_messages DROP COLUMN purged;
ALTER TABLE annotated_messages DROP COLUMN artifact_archived;
ALTER TABLE annotated_messages DROP COLUMN parsed_metadata;
ALTER TABLE annotated_messages DROP COLUMN request_id;
ALTER TABLE annotated_messages DROP COLUMN round_config;
ALTER TABLE annotated_messages DROP COLUMN round_id;
