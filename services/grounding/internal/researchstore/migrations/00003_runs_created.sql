-- +goose Up
-- Every user's runs, newest first: the console's research list of an
-- operator (ListResearch without a user id).
CREATE INDEX research_runs_created ON research_runs (created_at DESC, id DESC);

-- +goose Down
DROP INDEX research_runs_created;
