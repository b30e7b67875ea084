-- 029_job_marks.sql - the work a job reported of itself (marks).
--
-- A job's processes may mark how much work they did, as named counters
-- with a unit ("steps" in timesteps), through ceems-mark, libceems_mark
-- or the agent's socket (doc/marks.md).  A record carries them as
-- "marks" (doc/record-format.md); they are kept here, one row per
-- counter and node (each node's agent counts the marks made on it), and
-- the views of sql/views/job_work.sql divide the job's energy by them.
-- A job that never marked has no rows: unknown is not zero.  It applies
-- again on a database set back to an earlier version (IF NOT EXISTS).

CREATE TABLE IF NOT EXISTS ceems.job_marks (
	job_key bigint NOT NULL,
	node text NOT NULL,
	ordinal smallint NOT NULL CHECK (ordinal >= 0 AND ordinal < 8),
	name text NOT NULL CHECK (name ~ '^[A-Za-z0-9_.-]{1,31}$'),
	unit text NOT NULL CHECK (unit ~ '^[A-Za-z0-9_.-]{1,31}$'),
	work double precision NOT NULL
		CHECK (work >= 0 AND work <= 9007199254740992),
	marks bigint NOT NULL CHECK (marks >= 0),
	PRIMARY KEY (job_key, node, name),
	UNIQUE (job_key, node, ordinal)
);
COMMENT ON TABLE ceems.job_marks IS
	'The work a job reported of itself on one node: a counter its processes marked (ceems-mark, libceems_mark), in the unit of its first mark';
COMMENT ON COLUMN ceems.job_marks.ordinal IS 'Its place in the record''s marks array (the order of the counters'' first marks)';
COMMENT ON COLUMN ceems.job_marks.name IS 'The counter''s name, as the job gave it ("steps")';
COMMENT ON COLUMN ceems.job_marks.unit IS 'What it counts ("timesteps", "samples", "ns_simulated")';
COMMENT ON COLUMN ceems.job_marks.work IS 'The counter at the job''s end on this node: its increments summed, or its last cumulative value';
COMMENT ON COLUMN ceems.job_marks.marks IS 'How many marks the agent took for it (a library sums many of the job''s own into one)';
CREATE INDEX IF NOT EXISTS job_marks_unit ON ceems.job_marks (unit, name);

-- Users read the marks of the jobs they may read (sql/policies/job_rows.sql).
ALTER TABLE ceems.job_marks ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON ceems.job_marks FROM PUBLIC;
GRANT SELECT ON ceems.job_marks TO ceems_reader;

CALL ceems.adopt_objects();
