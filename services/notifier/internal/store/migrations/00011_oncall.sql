-- +goose Up
-- On call (issue 26): schedules and escalation policies as documents (the
-- JSON the on-call store writes), and each alert group's escalation with
-- its timeline. The position (round, step) is compared-and-set, so of two
-- instances running one step only one pages.
CREATE TABLE notifier_oncall_documents (
	kind       TEXT   NOT NULL, -- 'schedule' or 'policy'
	id         TEXT   NOT NULL,
	body       TEXT   NOT NULL,
	updated_by TEXT   NOT NULL,
	updated_at BIGINT NOT NULL,
	PRIMARY KEY (kind, id)
);

CREATE TABLE notifier_escalations (
	group_id   TEXT    PRIMARY KEY,
	policy_id  TEXT    NOT NULL,
	state      TEXT    NOT NULL,
	round      INTEGER NOT NULL,
	step       INTEGER NOT NULL,
	next_at    BIGINT  NOT NULL,
	started_at BIGINT  NOT NULL,
	updated_at BIGINT  NOT NULL
);

CREATE TABLE notifier_escalation_events (
	group_id    TEXT    NOT NULL,
	at          BIGINT  NOT NULL,
	seq         INTEGER NOT NULL,
	kind        TEXT    NOT NULL,
	round       INTEGER NOT NULL,
	step        INTEGER NOT NULL,
	participant TEXT    NOT NULL,
	channel     TEXT    NOT NULL,
	detail      TEXT    NOT NULL,
	PRIMARY KEY (group_id, at, seq)
);

-- +goose Down
DROP TABLE notifier_escalation_events;
DROP TABLE notifier_escalations;
DROP TABLE notifier_oncall_documents;
