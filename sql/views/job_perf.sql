-- sql/views/job_perf.sql - A job's perf counters over its nodes.

-- Job-wide: the sums over the nodes, each NULL unless every node that
-- reported measured it (a partial sum would pass for the whole); IPC and
-- the miss ratio from those sums.
CREATE OR REPLACE VIEW ceems.job_perf WITH (security_invoker = true) AS
SELECT p.job_key,
       count(*) AS nodes,
       CASE WHEN count(DISTINCT p.software_status) = 1
	    THEN min(p.software_status) ELSE 'mixed' END AS software_status,
       CASE WHEN count(DISTINCT p.hardware_status) = 1
	    THEN min(p.hardware_status) ELSE 'mixed' END AS hardware_status,
       min(p.running_fraction) AS running_fraction,
       CASE WHEN count(p.task_clock_s) = count(*) THEN sum(p.task_clock_s) END AS task_clock_s,
       CASE WHEN count(p.context_switches) = count(*) THEN sum(p.context_switches) END AS context_switches,
       CASE WHEN count(p.cpu_migrations) = count(*) THEN sum(p.cpu_migrations) END AS cpu_migrations,
       CASE WHEN count(p.page_faults) = count(*) THEN sum(p.page_faults) END AS page_faults,
       CASE WHEN count(p.cycles) = count(*) THEN sum(p.cycles) END AS cycles,
       CASE WHEN count(p.instructions) = count(*) THEN sum(p.instructions) END AS instructions,
       CASE WHEN count(p.cycles) = count(*) AND count(p.instructions) = count(*)
		 AND sum(p.cycles) > 0
	    THEN sum(p.instructions) / sum(p.cycles) END AS ipc,
       CASE WHEN count(p.cache_misses) = count(*) AND count(p.cache_references) = count(*)
		 AND sum(p.cache_references) > 0
	    THEN sum(p.cache_misses) / sum(p.cache_references) END AS cache_miss_ratio,
       CASE WHEN count(p.branch_misses) = count(*) THEN sum(p.branch_misses) END AS branch_misses
FROM ceems.job_node_perf p
GROUP BY p.job_key;
COMMENT ON VIEW ceems.job_perf IS
	'perf counters per job: sums over its nodes (NULL unless every node measured the count), IPC = instructions / cycles';
GRANT SELECT ON ceems.job_perf TO ceems_reader;
