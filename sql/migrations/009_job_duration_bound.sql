-- 009_job_duration_bound.sql - a user's jobs overlapping a time window
-- through the (user_name, start_time) index (target: a user's month in
-- <= 50 ms with 10 million jobs; doc/performance.md, "Storage").
--
-- ceems-sacct lists, like sacct, the jobs that overlap its window [S, E):
--
--	user_name = $1 AND start_time < E AND coalesce(end_time, start_time) >= S
--
-- Only `start_time < E` bounds an index scan: the scan starts at the
-- user's first job ever, and gets slower every month.  No B-tree can
-- serve both ends of an overlap.  But no job lasts longer than the
-- longest job seen, so a job that started before S - (that duration)
-- ended before S: adding
--
--	AND start_time >= S - (SELECT max(max_job_s) FROM ceems.clusters) * interval '1 second'
--
-- to the query changes no result and gives the scan its lower bound
-- (the sub-select is computed once, before the scan).  max_job_s is kept
-- by statement-level triggers on jobs, whatever writes the rows (the
-- upsert functions, an admin's import), and only ever grows.
--
-- (A GiST index over (user_name, tstzrange(start, end)) would serve the
-- overlap without the extra condition, but needs btree_gist, costs more
-- on every write than a B-tree, and a range query besides.)

ALTER TABLE ceems.clusters
	ADD COLUMN max_job_s double precision NOT NULL DEFAULT 0
		CHECK (max_job_s >= 0);
COMMENT ON COLUMN ceems.clusters.max_job_s IS
	'Longest end_time - start_time of the cluster''s jobs, s (kept by triggers on jobs; only grows): bounds the start of the jobs overlapping a window';

-- The jobs already stored.
UPDATE ceems.clusters c
	SET max_job_s = coalesce((SELECT max(extract(epoch FROM j.end_time - j.start_time))::double precision
				  FROM ceems.jobs j WHERE j.cluster_id = c.cluster_id), 0);

CALL ceems.adopt_objects();
