-- 021_perf.sql - perf counters per job and node (lib/perf_job.h): the
-- record's measurements.perf object (doc/record-format.md) in a table of
-- its own, and the job-wide sums in a view.
--
-- A row is written by ceems.add_job_perf(record), which the writers call
-- after upsert_job_record(s) with the same record, in the same statement
-- (lib/storage.c), as they call add_job_samples.  It belongs to the
-- job_nodes row of the same record (same digest): a record that loses to
-- the stored one adds nothing, and one that replaces it (job_nodes rows
-- are deleted and inserted again) takes the old row away by the cascade.
--
-- Unknown is not zero: a count is NULL when the node did not measure it,
-- and the two statuses say why ('not supported' on a node without a PMU,
-- 'not measured: descriptor budget', 'agent restarted', ...).

CREATE TABLE ceems.job_node_perf (
	job_key bigint NOT NULL,
	node text NOT NULL,
	software_status text NOT NULL CHECK (software_status <> ''),
	hardware_status text NOT NULL CHECK (hardware_status <> ''),
	running_fraction ceems.fraction,
	task_clock_s double precision CHECK (task_clock_s >= 0),
	context_switches double precision CHECK (context_switches >= 0),
	cpu_migrations double precision CHECK (cpu_migrations >= 0),
	page_faults double precision CHECK (page_faults >= 0),
	cycles double precision CHECK (cycles >= 0),
	instructions double precision CHECK (instructions >= 0),
	cache_references double precision CHECK (cache_references >= 0),
	cache_misses double precision CHECK (cache_misses >= 0),
	branch_misses double precision CHECK (branch_misses >= 0),
	PRIMARY KEY (job_key, node),
	FOREIGN KEY (job_key, node) REFERENCES ceems.job_nodes ON DELETE CASCADE
);
COMMENT ON TABLE ceems.job_node_perf IS
	'perf counters of one job on one node, from the record the job_nodes row holds; counts since the job registered with the node agent, scaled for multiplexing';
COMMENT ON COLUMN ceems.job_node_perf.software_status IS
	'measured, or why the software events have no figures: off, no permission, not measured: descriptor budget, no perf_event cgroup, agent restarted, failed';
COMMENT ON COLUMN ceems.job_node_perf.hardware_status IS
	'measured, or why the hardware events have no figures: off (not asked), not supported (no PMU), and the software reasons';
COMMENT ON COLUMN ceems.job_node_perf.running_fraction IS
	'Lowest share of its enabled time an event group was counting (below 1: counts estimated, multiplexed)';
COMMENT ON COLUMN ceems.job_node_perf.task_clock_s IS 'CPU time the job''s tasks ran, s (perf task-clock)';
COMMENT ON COLUMN ceems.job_node_perf.page_faults IS 'Page faults, minor and major';

CREATE FUNCTION ceems.add_job_perf(record jsonb)
RETURNS boolean LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	job jsonb := record -> 'job';
	p jsonb := record -> 'measurements' -> 'perf';
	v_key bigint;
	v_node text;
BEGIN
	IF p IS NULL OR jsonb_typeof(p) <> 'object' OR
	   jsonb_typeof(job) IS DISTINCT FROM 'object' THEN
		RETURN false;
	END IF;
	v_node := ceems.json_text(job, 'node', 'job');
	SELECT jn.job_key INTO v_key
	FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
	     JOIN ceems.job_nodes jn ON jn.job_key = j.job_key
	WHERE c.name = ceems.json_text(job, 'cluster', 'job')
	  AND j.jobid = ceems.json_int(job, 'jobid', 'job')
	  AND j.start_time = ceems.json_time(job, 'start_time', 'job')
	  AND jn.node = v_node
	  AND jn.record_digest = md5(record::text);
	IF v_key IS NULL THEN
		RETURN false;	-- the stored record of the node is another one
	END IF;
	INSERT INTO ceems.job_node_perf (job_key, node, software_status,
		hardware_status, running_fraction, task_clock_s,
		context_switches, cpu_migrations, page_faults, cycles,
		instructions, cache_references, cache_misses, branch_misses)
	VALUES (v_key, v_node,
		ceems.json_text(p, 'software', 'perf'),
		ceems.json_text(p, 'hardware', 'perf'),
		ceems.json_float(p, 'running_fraction', 'perf'),
		ceems.json_float(p, 'task_clock', 'perf') / 1e9,
		ceems.json_float(p, 'context_switches', 'perf'),
		ceems.json_float(p, 'cpu_migrations', 'perf'),
		ceems.json_float(p, 'page_faults', 'perf'),
		ceems.json_float(p, 'cycles', 'perf'),
		ceems.json_float(p, 'instructions', 'perf'),
		ceems.json_float(p, 'cache_references', 'perf'),
		ceems.json_float(p, 'cache_misses', 'perf'),
		ceems.json_float(p, 'branch_misses', 'perf'))
	ON CONFLICT (job_key, node) DO NOTHING;
	RETURN true;
END
$$;
COMMENT ON FUNCTION ceems.add_job_perf(jsonb) IS
	'Store the perf counters of a ceems-job-record/1 document (measurements.perf) stored by upsert_job_record(s); true when its job_nodes row is this record''s';

-- Job-wide: the sums over the nodes, each NULL unless every node that
-- reported measured it (a partial sum would pass for the whole); IPC and
-- the miss ratio from those sums.
CREATE VIEW ceems.job_perf WITH (security_invoker = true) AS
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

ALTER TABLE ceems.job_node_perf ENABLE ROW LEVEL SECURITY;
CREATE POLICY job_node_perf_visible ON ceems.job_node_perf FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_node_perf.job_key));

GRANT SELECT ON ceems.job_node_perf, ceems.job_perf TO ceems_reader;
GRANT EXECUTE ON FUNCTION ceems.add_job_perf(jsonb) TO ceems_writer;

CALL ceems.adopt_objects();
