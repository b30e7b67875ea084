-- sql/functions/perf.sql - Storing a node's perf counters of a job.

CREATE OR REPLACE FUNCTION ceems.add_job_perf(record jsonb)
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
		instructions, cache_references, cache_misses, branch_misses,
		unmeasured_s)
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
		ceems.json_float(p, 'branch_misses', 'perf'),
		ceems.json_float(p, 'unmeasured_s', 'perf'))
	ON CONFLICT (job_key, node) DO NOTHING;
	RETURN true;
END
$$;
COMMENT ON FUNCTION ceems.add_job_perf(jsonb) IS
	'Store the perf counters of a ceems-job-record/1 document (measurements.perf) stored by upsert_job_record(s); true when its job_nodes row is this record''s';
GRANT EXECUTE ON FUNCTION ceems.add_job_perf(jsonb) TO ceems_writer;
