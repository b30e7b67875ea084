-- 034_work_tags.sql - a counter of work may carry a tag, and keeps its
-- work per interval.
--
-- The tag: the application its work is of ("lammps"), as the job gave
-- it (ceems-mark --tag, ceems_mark_tag, the "tag" of a mark;
-- doc/marks.md).
-- A record carries it as its marks' "tag" (doc/record-format.md); the
-- admins' view of energy per unit across users (work_by_application)
-- groups by it where a counter has one, else by the job's name, so that
-- runs of one application under many job names are compared together.
--
-- The views of sql/views/job_work.sql change their columns (a tag in
-- job_work and job_work_history; work_by_application's application and
-- grouped_by in place of job_name): CREATE OR REPLACE VIEW cannot do
-- that, so they are dropped here and made again by the definitions,
-- applied after the migrations in the same transaction.  A view of a
-- site's own on one of them makes this migration fail, naming it: drop
-- that view, migrate, and make it again.  It applies again on a
-- database set back to an earlier version (IF NOT EXISTS).

ALTER TABLE ceems.job_marks ADD COLUMN IF NOT EXISTS tag text
	CHECK (tag ~ '^[A-Za-z0-9_.-]{1,31}$');
COMMENT ON COLUMN ceems.job_marks.tag IS
	'The application the counter''s work is of, as the job tagged it ("lammps"); NULL when it gave none';
CREATE INDEX IF NOT EXISTS job_marks_tag ON ceems.job_marks (tag, name)
	WHERE tag IS NOT NULL;

-- The work per interval: each counter's work in each interval of its
-- marks (the record's marks[].intervals, interval_s long, aligned on the
-- Unix epoch as the job's series is), so that ceems.job_work_series
-- sets the work done beside the power drawn in job_samples.  Kept
-- beside the series, not in it: a row per interval in which the counter
-- gained work, gone with its node row as the marks are
-- (delete_node_rows).
ALTER TABLE ceems.job_marks ADD COLUMN IF NOT EXISTS interval_s integer
	CHECK (interval_s > 0 AND interval_s <= 604800);
COMMENT ON COLUMN ceems.job_marks.interval_s IS
	'The length of the counter''s intervals in job_mark_intervals, s; NULL when it has none';

CREATE TABLE IF NOT EXISTS ceems.job_mark_intervals (
	job_key bigint NOT NULL,
	node text NOT NULL,
	name text NOT NULL,
	t timestamptz NOT NULL,
	work double precision NOT NULL
		CHECK (work > 0 AND work <= 9007199254740992),
	PRIMARY KEY (job_key, node, name, t)
);
COMMENT ON TABLE ceems.job_mark_intervals IS
	'The work a job''s counter gained in each interval (job_marks.interval_s long) in which it gained some, on one node';
COMMENT ON COLUMN ceems.job_mark_intervals.t IS 'The interval''s start';
COMMENT ON COLUMN ceems.job_mark_intervals.work IS 'The work the counter gained in it, in the counter''s unit';

ALTER TABLE ceems.job_mark_intervals ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON ceems.job_mark_intervals FROM PUBLIC;
GRANT SELECT ON ceems.job_mark_intervals TO ceems_reader;

DROP VIEW IF EXISTS ceems.work_by_application, ceems.job_work_history,
	ceems.job_work;

CALL ceems.adopt_objects();
