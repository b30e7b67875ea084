-- 034_work_tags.sql - a counter of work may carry a tag: the
-- application its work is of ("lammps"), as the job gave it
-- (ceems-mark --tag, ceems_mark_tag, the "tag" of a mark; doc/marks.md).
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

DROP VIEW IF EXISTS ceems.work_by_application, ceems.job_work_history,
	ceems.job_work;

CALL ceems.adopt_objects();
