-- +goose Up
-- Runs, approvals and reports of the research workflow. Each row keeps the
-- whole record as JSON in data; the other columns exist to filter, order
-- and page. Times are Unix microseconds so they sort as numbers on both
-- SQLite and PostgreSQL.
CREATE TABLE research_runs (
    id         TEXT PRIMARY KEY,
    user_id    TEXT NOT NULL,
    status     TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    data       TEXT NOT NULL
);
CREATE INDEX research_runs_user_created ON research_runs (user_id, created_at DESC, id DESC);

CREATE TABLE research_approvals (
    id           TEXT PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES research_runs (id) ON DELETE CASCADE,
    status       TEXT NOT NULL,
    requested_at BIGINT NOT NULL,
    timeout_at   BIGINT NOT NULL,
    data         TEXT NOT NULL
);
CREATE INDEX research_approvals_status_requested ON research_approvals (status, requested_at DESC, id DESC);
CREATE INDEX research_approvals_requested ON research_approvals (requested_at DESC, id DESC);
CREATE INDEX research_approvals_run ON research_approvals (run_id);

-- metadata holds no personal data (see research.ReportMetadata); report is
-- the full report as the user saw it.
CREATE TABLE research_reports (
    run_id     TEXT PRIMARY KEY REFERENCES research_runs (id) ON DELETE CASCADE,
    metadata   TEXT NOT NULL,
    report     TEXT NOT NULL,
    created_at BIGINT NOT NULL
);

-- +goose Down
DROP TABLE research_reports;
DROP TABLE research_approvals;
DROP TABLE research_runs;
