-- 010_step_absent_values.sql - a step figure that was not measured is
-- stored as NULL, never as 0 (design invariant 5, doc/design.md).
--
-- A job record leaves out what was not measured for a step: cpu_s when
-- the step's cgroup never gave two CPU readings (a step whose cgroup was
-- not found), and each joules entry when no tick covered that domain for
-- the job while the step's cgroup could be read (doc/record-format.md).
-- Until now job_steps.cpu_s was NOT NULL and store_job_record (006)
-- turned a missing cpu_s into 0: a step nobody measured read as a step
-- that used no CPU.  Energy columns and mem_peak_bytes were nullable and
-- stored NULL for a missing value already.
--
-- Semantics, for any writer of job_steps (this function and any
-- set-wise batch path alike):
--   cpu_s          = (s ->> 'cpu_s')::double precision        -- NULL if absent
--   mem_peak_bytes = (s ->> 'mem_peak_bytes')::bigint         -- NULL if absent
--   <domain>_j     = (s -> 'joules' ->> '<domain>')::double precision
--   ended          = coalesce((s ->> 'ended')::boolean, false)
--   elapsed_s      = coalesce((s ->> 'elapsed_s')::double precision, 0)
-- (ended and elapsed_s are known for every step the agent saw start:
-- the encoder always writes them.)  Rows stored before this migration
-- keep their 0: nothing can tell a measured 0 from a coalesced one.

ALTER TABLE ceems.job_steps ALTER COLUMN cpu_s DROP NOT NULL;
COMMENT ON COLUMN ceems.job_steps.cpu_s IS
	'CPU time of the step, s; NULL when its cgroup could not be read (not measured, not 0)';
COMMENT ON COLUMN ceems.job_steps.mem_peak_bytes IS
	'Memory peak of the step; NULL when not measured';
COMMENT ON COLUMN ceems.job_steps.package_j IS
	'Package energy of the step, J; NULL when the node did not measure the domain or the step''s part could not be measured';

CALL ceems.adopt_objects();
