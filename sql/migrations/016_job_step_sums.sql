-- 016_job_step_sums.sql - each job's steps, summed over its nodes, kept
-- in its jobs row (target: a user's month in <= 50 ms with 10 million
-- jobs).
--
-- ceems-sacct lists each job's steps under it, as sacct does: a batch
-- job has two (batch, extern), so a heavy user's month of 18,000 jobs is
-- 54,000 lines.  The steps came from a second query on job_steps, one
-- row per step and node: 18,000 index descents into a table twice the
-- size of jobs and in the order of job_key, not of the user, and, under
-- row-level security, the policy job_steps_visible run once per step
-- row (an EXISTS on jobs each).  That query cost more than the listing
-- itself, 65 ms as superuser and twice that as the user
-- (doc/performance.md).  The listing now reads the steps from the jobs
-- row it reads anyway, in the same pages, under the jobs policies.
--
-- jobs.steps is computed with the rest of the row, by job_figures, from
-- the job's job_steps rows through one view (job_step_sums, in
-- sql/views/job_step_sums.sql): both write paths (the set-wise batch and
-- the record-by-record loop's refresh_job) and the backfill of the jobs
-- stored before this migration (in the same file, run when the
-- definitions are applied after it) use it, so it is the same however
-- the records arrived (schema.bats compares them).  job_steps stays: the
-- per-node detail behind --json and the node views.
--
-- The backfill rewrites once each jobs row that has steps: on a large
-- database run it in a maintenance window, and `ceems-admin db cluster`
-- afterwards puts a user's rows back together.

CREATE TYPE ceems.step_summary AS (
	step_id text,
	nodes integer,
	elapsed_s double precision,
	cpu_s double precision,
	mem_peak_bytes bigint,
	package_j double precision,
	dram_j double precision,
	gpu_j double precision,
	node_j double precision
);
COMMENT ON TYPE ceems.step_summary IS
	'A job step over the nodes that ran it: nodes counted; elapsed and memory peak the largest of a node; CPU time and energies summed (NULL when no node measured them)';

ALTER TABLE ceems.jobs ADD COLUMN steps ceems.step_summary[];
COMMENT ON COLUMN ceems.jobs.steps IS
	'The job''s steps (job_steps summed per step over its nodes), ordered by step_id; NULL when none was recorded';

CALL ceems.adopt_objects();
