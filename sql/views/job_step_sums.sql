-- sql/views/job_step_sums.sql - each job's steps summed over its nodes:
-- the one definition of jobs.steps (016_job_step_sums.sql says why the
-- steps are kept in the jobs row).

-- Each job's steps as ceems-sacct lists them: the one definition of
-- jobs.steps, for job_figures and the catch-up below.  Not granted.
CREATE OR REPLACE VIEW ceems.job_step_sums AS
SELECT s.job_key,
       array_agg(ROW(s.step_id, s.nodes, s.elapsed_s, s.cpu_s,
		     s.mem_peak_bytes, s.package_j, s.dram_j, s.gpu_j,
		     s.node_j, s.tasks)::ceems.step_summary
		 ORDER BY s.step_id COLLATE "C") AS steps
FROM (SELECT st.job_key, st.step_id,
	     count(*)::integer AS nodes,
	     max(st.elapsed_s) AS elapsed_s,
	     sum(st.cpu_s) AS cpu_s,
	     max(st.mem_peak_bytes) AS mem_peak_bytes,
	     sum(st.package_j) AS package_j, sum(st.dram_j) AS dram_j,
	     sum(st.gpu_j) AS gpu_j, sum(st.node_j) AS node_j,
	     -- Every node's count, or none: a partial sum is no count (028).
	     CASE WHEN count(st.tasks) = count(*) THEN sum(st.tasks) END AS tasks
      FROM ceems.job_steps st
      GROUP BY st.job_key, st.step_id) s
GROUP BY s.job_key;
COMMENT ON VIEW ceems.job_step_sums IS
	'Each job''s steps summed over its nodes, as jobs.steps holds them (not granted)';

-- The jobs whose steps differ from their job_steps rows: the jobs stored
-- before 016 added the column, once.  Afterwards every write keeps
-- jobs.steps equal to the view, this updates no row, and applying the
-- definitions again changes nothing.
UPDATE ceems.jobs j SET steps = ss.steps
FROM ceems.job_step_sums ss
WHERE j.job_key = ss.job_key AND j.steps IS DISTINCT FROM ss.steps;
