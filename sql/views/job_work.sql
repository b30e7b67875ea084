-- sql/views/job_work.sql - a job's energy per unit of the work it
-- reported of itself (ceems.job_marks), how it compares with the same
-- user's earlier runs of the job, and, for admins, across the users of
-- an application.  security_invoker: each reader sees through the
-- policies of the tables (their own jobs; coordinators their accounts';
-- admins all), so the same views serve users and admins.

-- One row per job and counter: the work summed over the nodes that
-- marked it (each node's agent counts the marks made there), and the
-- job's energy over it.  NULL energy per work when the job's energy is
-- unknown or its work is 0: unknown is not zero.  The tag is the
-- counter's (migration 034), the least of its nodes' where a job gave
-- it different ones (each node's agent keeps the first it was given).
CREATE OR REPLACE VIEW ceems.job_work WITH (security_invoker = true) AS
SELECT j.job_key, j.cluster_id, j.jobid, j.uid, j.user_name, j.account,
       j.job_name, j.start_time, j.end_time,
       m.name, m.unit,
       sum(m.work) AS work,
       sum(m.marks) AS marks,
       count(*) AS nodes_marked,
       j.total_j,
       CASE WHEN sum(m.work) > 0 THEN j.total_j / sum(m.work) END AS energy_per_work_j,
       min(m.tag) AS tag
FROM ceems.job_marks m
JOIN ceems.jobs j ON j.job_key = m.job_key
GROUP BY j.job_key, m.name, m.unit;
COMMENT ON VIEW ceems.job_work IS
	'Work a job reported (marks) per counter, summed over its nodes, and the job''s energy per unit of it, J';
GRANT SELECT ON ceems.job_work TO ceems_reader;

-- Each job's counter beside the median energy per unit of the same
-- user's last 5 earlier runs of the same job name and counter (same
-- cluster, same unit): vs_previous is the relative difference (0.12: 12%
-- more energy per unit), notable when at least 2 earlier runs exist and
-- it is 10% or more either way (runs of one code on one machine vary by
-- a few percent; doc/marks.md).
CREATE OR REPLACE VIEW ceems.job_work_history WITH (security_invoker = true) AS
SELECT w.*, h.runs AS previous_runs, h.median_j AS previous_median_j,
       CASE WHEN h.median_j > 0 AND w.energy_per_work_j IS NOT NULL
	    THEN w.energy_per_work_j / h.median_j - 1 END AS vs_previous,
       coalesce(h.runs >= 2 AND h.median_j > 0 AND
		abs(w.energy_per_work_j / h.median_j - 1) >= 0.10, false) AS notable
FROM ceems.job_work w
LEFT JOIN LATERAL (
	SELECT count(*) AS runs,
	       percentile_cont(0.5) WITHIN GROUP (ORDER BY p.energy_per_work_j) AS median_j
	FROM (SELECT e.energy_per_work_j
	      FROM ceems.job_work e
	      WHERE e.uid = w.uid AND e.cluster_id = w.cluster_id
		AND e.job_name = w.job_name AND e.name = w.name
		AND e.unit = w.unit AND e.energy_per_work_j IS NOT NULL
		AND e.start_time < w.start_time
	      ORDER BY e.start_time DESC
	      LIMIT 5) p) h ON true;
COMMENT ON VIEW ceems.job_work_history IS
	'A job''s energy per unit of work against the median of the same user''s last 5 earlier runs of the same job name and counter; notable at 10% or more';
GRANT SELECT ON ceems.job_work_history TO ceems_reader;

-- Per application and counter: how many users and jobs, and the spread
-- of their energy per unit, the basis of advice.  The application is
-- the counter's tag where the job gave one (grouped_by 'tag'), else
-- the job's name ('job_name'): runs of one code under many job names
-- come together by their tag, and a tag never mixes with a job name
-- that happens to read the same.
CREATE OR REPLACE VIEW ceems.work_by_application WITH (security_invoker = true) AS
SELECT w.cluster_id, coalesce(w.tag, w.job_name) AS application,
       CASE WHEN w.tag IS NOT NULL THEN 'tag' ELSE 'job_name' END AS grouped_by,
       w.name, w.unit,
       count(DISTINCT w.uid) AS users,
       count(*) AS jobs,
       sum(w.work) AS work,
       sum(w.total_j) AS total_j,
       min(w.energy_per_work_j) AS min_energy_per_work_j,
       percentile_cont(0.5) WITHIN GROUP (ORDER BY w.energy_per_work_j) AS median_energy_per_work_j,
       max(w.energy_per_work_j) AS max_energy_per_work_j
FROM ceems.job_work w
WHERE w.energy_per_work_j IS NOT NULL AND coalesce(w.tag, w.job_name) IS NOT NULL
GROUP BY w.cluster_id, coalesce(w.tag, w.job_name), w.tag IS NOT NULL, w.name, w.unit;
COMMENT ON VIEW ceems.work_by_application IS
	'Energy per unit of work across the users of an application (the counters'' tag, else the job name: grouped_by) and counter: jobs, users, min, median and max, J';
GRANT SELECT ON ceems.work_by_application TO ceems_reader;

-- The work per interval beside the power: for each counter with
-- intervals (job_marks.interval_s) and each of its intervals on a node,
-- the work it gained (job_mark_intervals; 0 where the job's series has
-- the interval and the counter gained nothing in it: the job reported
-- no work there) and the energy charged to the job in it by its series
-- (job_samples rows starting in the interval: the four domains summed,
-- as the job's energy is; NULL when the job has no series there, when
-- none of them was measured, or when a row there stands for more than
-- the interval (its resolution_s: a series downsampled or coarsened
-- after the marks' rows), whose energy cannot be put in one interval:
-- unknown is not zero), its mean power over the time the rows cover,
-- and the energy per unit of the interval.
-- "Where the energy went": intervals of power and no work stand out.
CREATE OR REPLACE VIEW ceems.job_work_series WITH (security_invoker = true) AS
WITH power AS (
	SELECT m.job_key, m.node, m.name,
	       to_timestamp(floor(extract(epoch FROM x.t) / m.interval_s) * m.interval_s) AS t,
	       CASE WHEN bool_and(x.resolution_s <= m.interval_s)
		    THEN sum(x.interval_s) END AS covered_s,
	       CASE WHEN bool_and(x.resolution_s <= m.interval_s)
		    THEN sum(CASE WHEN num_nonnulls(x.package_j, x.dram_j, x.gpu_j, x.node_j) > 0
				  THEN coalesce(x.package_j, 0) + coalesce(x.dram_j, 0) +
				       coalesce(x.gpu_j, 0) + coalesce(x.node_j, 0) END) END AS energy_j
	FROM ceems.job_marks m
	JOIN ceems.job_samples x ON x.job_key = m.job_key AND x.node = m.node
	WHERE m.interval_s IS NOT NULL
	GROUP BY m.job_key, m.node, m.name, 4
), cells AS (
	SELECT coalesce(p.job_key, w.job_key) AS job_key,
	       coalesce(p.node, w.node) AS node,
	       coalesce(p.name, w.name) AS name,
	       coalesce(p.t, w.t) AS t,
	       coalesce(w.work, 0) AS work,
	       p.covered_s, p.energy_j
	FROM power p
	FULL JOIN ceems.job_mark_intervals w
	  ON w.job_key = p.job_key AND w.node = p.node AND w.name = p.name AND w.t = p.t
)
SELECT j.job_key, j.cluster_id, j.jobid, j.uid, j.user_name, j.account,
       j.job_name, c.node, c.name, m.unit, m.tag, c.t, m.interval_s,
       c.work, c.energy_j, c.covered_s,
       c.energy_j / nullif(c.covered_s, 0) AS power_w,
       CASE WHEN c.work > 0 THEN c.energy_j / c.work END AS energy_per_work_j
FROM cells c
JOIN ceems.job_marks m ON m.job_key = c.job_key AND m.node = c.node AND m.name = c.name
JOIN ceems.jobs j ON j.job_key = c.job_key;
COMMENT ON VIEW ceems.job_work_series IS
	'A job''s work per interval and counter beside the energy and mean power its series gives for the interval, and their ratio, J a unit';
GRANT SELECT ON ceems.job_work_series TO ceems_reader;
