-- 028_step_tasks.sql - a step's tasks: on each node in job_steps, over
-- its nodes in jobs.steps, for ceems-sacct's NTasks.
--
-- sacct's NTasks of a step is its tasks over all its nodes; sacct's
-- clients reckon a step's memory as MaxRSS x NTasks.  A record's step
-- carries "tasks", the step's tasks on the node as its slurmstepd
-- counted them (doc/record-format.md); records of plugins and agents
-- before it do not, and their steps' tasks are NULL: unknown, not 0.
--
-- jobs.steps sums them over the step's nodes (job_step_sums, in
-- sql/views/job_step_sums.sql, applied with the definitions after
-- this): NULL as soon as one node's count is, for a partial sum is no
-- count.  The rows stored before this migration have NULL tasks in
-- job_steps and in jobs.steps alike, so no jobs row is rewritten.
--
-- Each statement is a no-op where its object is there already: a
-- database's version can be set back (a restore of schema_version
-- alone, tests/integration/schema.bats) and the migrations after it
-- applied again.
--
-- A ceems-sacct older than this reads a step_summary of nine fields and
-- refuses the ten of this one (doc/storage.md: upgrade it with the
-- schema); from this one on it reads both, by the schema's version.

ALTER TABLE ceems.job_steps ADD COLUMN IF NOT EXISTS tasks integer
	CHECK (tasks BETWEEN 1 AND 65535);
COMMENT ON COLUMN ceems.job_steps.tasks IS
	'Tasks of the step on the node, as its slurmstepd counted them; NULL when the record does not say (plugins and agents before migration 028)';

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_attribute
		       WHERE attrelid = 'ceems.step_summary'::regclass
			 AND attname = 'tasks' AND NOT attisdropped) THEN
		ALTER TYPE ceems.step_summary ADD ATTRIBUTE tasks bigint;
	END IF;
END
$$;
COMMENT ON TYPE ceems.step_summary IS
	'A job step over the nodes that ran it: nodes counted; elapsed and memory peak the largest of a node; CPU time, energies and tasks summed (NULL when no node measured them; tasks NULL unless every node counted them)';

CALL ceems.adopt_objects();
