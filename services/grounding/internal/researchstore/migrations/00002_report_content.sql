-- +goose Up
-- The report as one Markdown document (executive summary, findings,
-- sources), as GetResearchReport returns it. Reports stored before this
-- column existed have '' and are rendered from report on read.
ALTER TABLE research_reports ADD COLUMN content TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE research_reports DROP COLUMN content;
