-- 012_plugin_records_first.sql - two changes to how records are stored
-- (issue 5):
--
-- 1. A record the job-side plugin wrote (finalized_by 'extern' or
--    'epilog') is never replaced by one the node agent wrote for the same
--    node ('agent': lib/agent_finish.c writes one when the plugin did not
--    confirm it stored its own within finish_grace, or when a job vanished
--    unregistered).  Both carry the same measurements, but the plugin's
--    has the job's metadata from slurmctld and no agent-finalized note;
--    the agent's is written later, so "the newest wins" alone let it
--    replace the better record.  The order of precedence of two records
--    of one node is now (written by the plugin, written_at, digest), in
--    the record-by-record loop (store_job_record) and in the set-wise
--    path alike; and when a job's nodes' metadata are merged into its
--    jobs row, plugin-written metadata win over agent-written ones.
--
-- 2. A batch writes each new job's jobs row once, complete.  The
--    set-wise path of 008 inserted a row with the key columns, then
--    refresh_jobs rewrote it whole: two heap tuples and, since the second
--    rarely fit the first's page, a second entry in each of the table's
--    indexes, for every new job (a third of a batch's time in the server,
--    doc/performance.md).  Now the new jobs' keys are drawn first, their
--    job_nodes rows written under those keys (the foreign key checked at
--    the end of the function, deferred within it), and the jobs rows
--    inserted from the same figures refresh_jobs computes, which now come
--    from one function, ceems.job_figures: refresh_jobs, the single-job
--    refresh_job of the loop, and the insert of new jobs all use it, so
--    that a jobs row is the same however its records arrived.  Jobs
--    already stored are locked first (in identity order, as before) and
--    refreshed as before.  A job another writer inserts meanwhile makes
--    the set-wise path give up (the loop handles it), as any surprise does
--    (008's contract).
--
-- The index jobs_cluster_jobid (cluster_id, jobid) goes: jobs_identity
-- (cluster_id, jobid, start_time) serves every lookup it served, and each
-- index costs every insert.

ALTER TABLE ceems.job_nodes ALTER CONSTRAINT job_nodes_job_key_fkey
	DEFERRABLE INITIALLY IMMEDIATE;
DROP INDEX ceems.jobs_cluster_jobid;

ALTER TYPE ceems.batch_record
	ADD ATTRIBUTE by_plugin boolean,	-- finalized_by is not 'agent'
	ADD ATTRIBUTE fresh boolean;		-- its job is new in this batch

-- The jobs row's figures of each job of P_JOB_KEYS from its job_nodes
-- rows (002's refresh_job, 008's refresh_jobs): the job's metadata are
-- its nodes' merged, oldest first, the agent's before the plugin's.
CREATE FUNCTION ceems.job_figures(p_job_keys bigint[])
RETURNS TABLE (
	job_key bigint,
	array_job_id bigint,
	array_task_id bigint,
	user_name text,
	uid bigint,
	gid bigint,
	account text,
	partition text,
	qos text,
	job_name text,
	state ceems.job_state,
	exit_code smallint,
	exit_signal smallint,
	submit_time timestamp with time zone,
	end_time timestamp with time zone,
	elapsed_s double precision,
	time_limit_min bigint,
	alloc_cpus bigint,
	req_mem_bytes bigint,
	alloc_gpus bigint,
	nnodes bigint,
	nodelist text,
	meta_written_at timestamp with time zone,
	meta_node text,
	meta_digest text,
	nodes_reported integer,
	cpu_time_s double precision,
	cpu_efficiency double precision,
	mem_peak_bytes bigint,
	mem_efficiency double precision,
	gpu_util_pct double precision,
	gpu_mem_peak_bytes bigint,
	package_j double precision,
	dram_j double precision,
	gpu_j double precision,
	node_j double precision,
	total_j double precision,
	package_static_j double precision,
	dram_static_j double precision,
	package_coverage double precision,
	dram_coverage double precision,
	gpu_coverage double precision,
	node_coverage double precision,
	gap_s double precision,
	emissions_g double precision,
	emissions_coverage double precision,
	emission_factor_source text,
	emission_zone text,
	emission_year integer,
	emission_g_per_kwh double precision,
	pue double precision,
	emission_factor_mixed boolean
)
LANGUAGE plpgsql STABLE
-- A few jobs' figures per call: with the default estimate (1,000 rows)
-- refresh_jobs' generic plan joined them to a scan of all of jobs.
ROWS 10
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
-- PL/pgSQL rather than SQL for its cached plan: planning this query
-- took as long as running it for a batch's jobs.
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH nodes AS MATERIALIZED (
	SELECT jn.*, jn.finalized_by <> 'agent' AS by_plugin
	FROM ceems.job_nodes jn
	WHERE jn.job_key = ANY (p_job_keys))
SELECT
		agg.job_key,
		(agg.meta ->> 'array_job_id')::bigint AS array_job_id,
		(agg.meta ->> 'array_task_id')::bigint AS array_task_id,
		(agg.meta ->> 'user') AS user_name,
		(agg.meta ->> 'uid')::bigint AS uid,
		(agg.meta ->> 'gid')::bigint AS gid,
		(agg.meta ->> 'account') AS account,
		(agg.meta ->> 'partition') AS partition,
		(agg.meta ->> 'qos') AS qos,
		(agg.meta ->> 'name') AS job_name,
		(agg.meta ->> 'state')::ceems.job_state AS state,
		(agg.meta ->> 'exit_code')::bigint::smallint AS exit_code,
		nullif((agg.meta ->> 'exit_signal')::bigint, 0)::smallint AS exit_signal,
		to_timestamp((agg.meta ->> 'submit_time')::bigint) AS submit_time,
		to_timestamp((agg.meta ->> 'end_time')::bigint) AS end_time,
		v.elapsed_s,
		(agg.meta ->> 'time_limit_min')::bigint AS time_limit_min,
		v.alloc_cpus,
		v.req_mem_bytes,
		(agg.meta ->> 'alloc_gpus')::bigint AS alloc_gpus,
		nullif((agg.meta ->> 'nnodes')::bigint, 0) AS nnodes,
		(agg.meta ->> 'nodes') AS nodelist,
		newest.written_at AS meta_written_at,
		newest.node AS meta_node,
		newest.record_digest AS meta_digest,
		agg.nodes::integer AS nodes_reported,
		agg.cpu_s AS cpu_time_s,
		CASE WHEN v.elapsed_s > 0 AND v.alloc_cpus IS NOT NULL
		     THEN agg.cpu_s / (v.elapsed_s * v.alloc_cpus) END AS cpu_efficiency,
		agg.mem_peak_max AS mem_peak_bytes,
		agg.mem_peak_sum::double precision / v.req_mem_bytes AS mem_efficiency,
		agg.gpu_util_pct,
		agg.gpu_mem_peak AS gpu_mem_peak_bytes,
		agg.package_j,
		agg.dram_j,
		agg.gpu_j,
		agg.node_j,
		agg.total_j,
		agg.package_static_j,
		agg.dram_static_j,
		ceems.at_most_one(agg.package_cov / nullif(agg.lifetime_s, 0)) AS package_coverage,
		ceems.at_most_one(agg.dram_cov / nullif(agg.lifetime_s, 0)) AS dram_coverage,
		ceems.at_most_one(agg.gpu_cov / nullif(agg.lifetime_s, 0)) AS gpu_coverage,
		ceems.at_most_one(agg.node_cov / nullif(agg.lifetime_s, 0)) AS node_coverage,
		agg.gap_s,
		agg.emissions_g,
		ceems.at_most_one(agg.emissions_cov / nullif(agg.lifetime_s, 0)) AS emissions_coverage,
		f.emission_factor_source AS emission_factor_source,
		f.emission_zone AS emission_zone,
		f.emission_year AS emission_year,
		f.emission_g_per_kwh AS emission_g_per_kwh,
		f.pue AS pue,
		CASE WHEN fc.factors > 0
		     THEN fc.factors > 1 OR coalesce(agg.factor_changed, false) END
			AS emission_factor_mixed
	      FROM (SELECT n.job_key,
			   ceems.jsonb_merge(n.job_meta ORDER BY n.by_plugin, n.written_at, n.node, n.record_digest) AS meta,
			   count(*) AS nodes,
			   sum(n.cpu_s) AS cpu_s,
			   max(n.mem_peak_bytes) AS mem_peak_max,
			   sum(n.mem_peak_bytes) AS mem_peak_sum,
			   max(n.elapsed_s) AS elapsed_max,
			   sum(n.lifetime_s) AS lifetime_s,
			   sum(n.gap_s) AS gap_s,
			   sum(n.package_j) AS package_j, sum(n.dram_j) AS dram_j,
			   sum(n.gpu_j) AS gpu_j, sum(n.node_j) AS node_j,
			   sum(n.total_j) AS total_j,
			   sum(n.package_static_j) AS package_static_j,
			   sum(n.dram_static_j) AS dram_static_j,
			   sum(n.package_covered_s) AS package_cov,
			   sum(n.dram_covered_s) AS dram_cov,
			   sum(n.gpu_covered_s) AS gpu_cov,
			   sum(n.node_covered_s) AS node_cov,
			   sum(n.emissions_g) AS emissions_g,
			   sum(n.emissions_covered_s) AS emissions_cov,
			   avg(n.gpu_util_pct) AS gpu_util_pct,
			   max(n.gpu_mem_peak_bytes) AS gpu_mem_peak,
			   bool_or(n.emission_factor_changed) AS factor_changed
		    FROM nodes n
		    GROUP BY n.job_key) agg
	      -- The newest node row, the plugin's first: one sort for all
	      -- the jobs, not one per job and column (ordered aggregates).
	      JOIN (SELECT DISTINCT ON (n.job_key) n.job_key, n.written_at, n.node, n.record_digest
		    FROM nodes n
		    ORDER BY n.job_key, n.by_plugin DESC, n.written_at DESC, n.node DESC,
			     n.record_digest DESC) newest ON newest.job_key = agg.job_key
	      -- The emission factor of the first node (by name) that has one,
	      -- and how many different factors the nodes used.
	      LEFT JOIN (SELECT DISTINCT ON (n.job_key) n.job_key, n.emission_factor_source,
			       n.emission_zone, n.emission_year, n.emission_g_per_kwh, n.pue
			 FROM nodes n
			 WHERE n.emission_factor_source IS NOT NULL
			 ORDER BY n.job_key, n.node) f ON f.job_key = agg.job_key
	      LEFT JOIN (SELECT d.job_key, count(*) AS factors
			 FROM (SELECT DISTINCT n.job_key, n.emission_factor_source, n.emission_zone,
					  n.emission_year, n.emission_g_per_kwh, n.pue
			       FROM nodes n
			       WHERE n.emission_factor_source IS NOT NULL) d
			 GROUP BY d.job_key) fc ON fc.job_key = agg.job_key,
	      LATERAL (SELECT
			nullif(ceems.whole_number(agg.meta, 'alloc_cpus', 'job'), 0) AS alloc_cpus,
			nullif(ceems.whole_number(agg.meta, 'req_mem_bytes', 'job'), 0) AS req_mem_bytes,
			CASE WHEN agg.meta ? 'start_time' AND agg.meta ? 'end_time'
			     THEN (ceems.whole_number(agg.meta, 'end_time', 'job') -
				   (agg.meta ->> 'start_time')::bigint)::double precision
			     ELSE agg.elapsed_max END AS elapsed_s) v;
END
$$;
COMMENT ON FUNCTION ceems.job_figures(bigint[]) IS
	'What the jobs rows of these jobs say, from their job_nodes rows: for refresh_jobs and for the insert of new jobs (not granted)';

-- Reads and updates a few jobs by key: index scans always.  A plan
-- made while the tables were small (a new database, statistics not yet
-- gathered) scanned them whole for as long as the session kept it, and
-- the writer's session lasts; ingest slowed as the tables grew.
CREATE OR REPLACE FUNCTION ceems.refresh_jobs(p_job_keys bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
	UPDATE ceems.jobs j SET
		array_job_id = x.array_job_id,
		array_task_id = x.array_task_id,
		user_name = x.user_name,
		uid = x.uid,
		gid = x.gid,
		account = x.account,
		partition = x.partition,
		qos = x.qos,
		job_name = x.job_name,
		state = x.state,
		exit_code = x.exit_code,
		exit_signal = x.exit_signal,
		submit_time = x.submit_time,
		end_time = x.end_time,
		elapsed_s = x.elapsed_s,
		time_limit_min = x.time_limit_min,
		alloc_cpus = x.alloc_cpus,
		req_mem_bytes = x.req_mem_bytes,
		alloc_gpus = x.alloc_gpus,
		nnodes = x.nnodes,
		nodelist = x.nodelist,
		meta_written_at = x.meta_written_at,
		meta_node = x.meta_node,
		meta_digest = x.meta_digest,
		nodes_reported = x.nodes_reported,
		cpu_time_s = x.cpu_time_s,
		cpu_efficiency = x.cpu_efficiency,
		mem_peak_bytes = x.mem_peak_bytes,
		mem_efficiency = x.mem_efficiency,
		gpu_util_pct = x.gpu_util_pct,
		gpu_mem_peak_bytes = x.gpu_mem_peak_bytes,
		package_j = x.package_j,
		dram_j = x.dram_j,
		gpu_j = x.gpu_j,
		node_j = x.node_j,
		total_j = x.total_j,
		package_static_j = x.package_static_j,
		dram_static_j = x.dram_static_j,
		package_coverage = x.package_coverage,
		dram_coverage = x.dram_coverage,
		gpu_coverage = x.gpu_coverage,
		node_coverage = x.node_coverage,
		gap_s = x.gap_s,
		emissions_g = x.emissions_g,
		emissions_coverage = x.emissions_coverage,
		emission_factor_source = x.emission_factor_source,
		emission_zone = x.emission_zone,
		emission_year = x.emission_year,
		emission_g_per_kwh = x.emission_g_per_kwh,
		pue = x.pue,
		emission_factor_mixed = x.emission_factor_mixed,
		updated_at = now()
	FROM ceems.job_figures(p_job_keys) x
	WHERE j.job_key = x.job_key
	  AND (j.array_job_id, j.array_task_id, j.user_name, j.uid, j.gid,
	       j.account, j.partition, j.qos, j.job_name, j.state::text,
	       j.exit_code, j.exit_signal, j.submit_time, j.end_time,
	       j.elapsed_s, j.time_limit_min, j.alloc_cpus, j.req_mem_bytes,
	       j.alloc_gpus, j.nnodes, j.nodelist, j.meta_written_at,
	       j.meta_node, j.meta_digest, j.nodes_reported, j.cpu_time_s,
	       j.cpu_efficiency, j.mem_peak_bytes, j.mem_efficiency,
	       j.gpu_util_pct, j.gpu_mem_peak_bytes, j.package_j::float8,
	       j.dram_j::float8, j.gpu_j::float8, j.node_j::float8,
	       j.total_j::float8, j.package_static_j::float8,
	       j.dram_static_j::float8, j.package_coverage::float8,
	       j.dram_coverage::float8, j.gpu_coverage::float8,
	       j.node_coverage::float8, j.gap_s, j.emissions_g,
	       j.emissions_coverage::float8, j.emission_factor_source,
	       j.emission_zone, j.emission_year, j.emission_g_per_kwh, j.pue,
	       j.emission_factor_mixed)
	      IS DISTINCT FROM
	      (x.array_job_id, x.array_task_id, x.user_name, x.uid, x.gid,
	       x.account, x.partition, x.qos, x.job_name, x.state::text,
	       x.exit_code, x.exit_signal, x.submit_time, x.end_time,
	       x.elapsed_s, x.time_limit_min, x.alloc_cpus, x.req_mem_bytes,
	       x.alloc_gpus, x.nnodes, x.nodelist, x.meta_written_at,
	       x.meta_node, x.meta_digest, x.nodes_reported, x.cpu_time_s,
	       x.cpu_efficiency, x.mem_peak_bytes, x.mem_efficiency,
	       x.gpu_util_pct, x.gpu_mem_peak_bytes, x.package_j, x.dram_j,
	       x.gpu_j, x.node_j, x.total_j, x.package_static_j,
	       x.dram_static_j, x.package_coverage, x.dram_coverage,
	       x.gpu_coverage, x.node_coverage, x.gap_s, x.emissions_g,
	       x.emissions_coverage, x.emission_factor_source,
	       x.emission_zone, x.emission_year, x.emission_g_per_kwh, x.pue,
	       x.emission_factor_mixed);
END
$$;

-- The loop's refresh of one job: the same figures as a batch.
CREATE OR REPLACE FUNCTION ceems.refresh_job(p_job_key bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM ceems.refresh_jobs(ARRAY[p_job_key]);
END
$$;

-- 010's store_job_record, with the plugin's records first.
CREATE OR REPLACE FUNCTION ceems.store_job_record(record jsonb, OUT outcome text, OUT stored_key bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	job jsonb;
	m jsonb;
	led jsonb;
	usage jsonb;
	em jsonb;
	fac jsonb;
	v_cluster text;
	v_cluster_id integer;
	v_jobid bigint;
	v_uid bigint;
	v_start timestamptz;
	v_node text;
	v_written timestamptz;
	v_digest text;
	v_key bigint;
	v_old record;
	v_outcome text;
	v_pkg jsonb;
	v_dram jsonb;
	v_gpu jsonb;
	v_nodedom jsonb;
	v_mem_limit jsonb;
	v_total double precision;
BEGIN
	IF record IS NULL OR jsonb_typeof(record) <> 'object' THEN
		RAISE EXCEPTION 'ceems record: not a JSON object'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (record ->> 'format') IS DISTINCT FROM 'ceems-job-record/1' THEN
		RAISE EXCEPTION 'ceems record: format is not "ceems-job-record/1"'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	job := ceems.json_object(record, 'job', 'record');
	m := ceems.json_object(record, 'measurements', 'record');
	v_written := ceems.json_time(record, 'written_at', 'record');
	IF job IS NULL OR m IS NULL OR v_written IS NULL THEN
		RAISE EXCEPTION 'ceems record: job, measurements and written_at are required'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	v_cluster := ceems.json_text(job, 'cluster', 'job');
	v_jobid := ceems.json_int(job, 'jobid', 'job');
	v_uid := ceems.json_int(job, 'uid', 'job');
	v_start := ceems.json_time(job, 'start_time', 'job');
	v_node := ceems.json_text(job, 'node', 'job');
	IF v_cluster IS NULL OR v_jobid IS NULL OR v_uid IS NULL OR
	   v_start IS NULL OR v_node IS NULL THEN
		RAISE EXCEPTION 'ceems record: job.cluster, job.jobid, job.uid, job.start_time and job.node are required (a job is cluster, job id and start time)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF (m ->> 'jobid')::bigint IS DISTINCT FROM v_jobid OR
	   (m ->> 'uid')::bigint IS DISTINCT FROM v_uid THEN
		RAISE EXCEPTION 'ceems record: measurements are not of job % of uid %', v_jobid, v_uid
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	v_digest := md5(record::text);

	-- The cluster, then the job row, locked: the records of one job's
	-- nodes are applied one after the other even by concurrent writers,
	-- so that refresh_job sees every committed node row.
	INSERT INTO ceems.clusters (name) VALUES (v_cluster)
		ON CONFLICT (name) DO NOTHING;
	SELECT cluster_id INTO STRICT v_cluster_id
		FROM ceems.clusters WHERE name = v_cluster;

	-- The indexed columns (user, account) are set now, so that the
	-- update of refresh_job below can be a HOT update.
	INSERT INTO ceems.jobs (cluster_id, jobid, start_time, uid, user_name,
				account, meta_written_at, meta_node, meta_digest)
		VALUES (v_cluster_id, v_jobid, v_start, v_uid, job ->> 'user',
			job ->> 'account', v_written, v_node, v_digest)
		ON CONFLICT (cluster_id, jobid, start_time) DO NOTHING
		RETURNING job_key INTO v_key;
	IF v_key IS NULL THEN
		SELECT job_key, uid INTO v_old
			FROM ceems.jobs
			WHERE cluster_id = v_cluster_id AND jobid = v_jobid
			  AND start_time = v_start
			FOR UPDATE;
		v_key := v_old.job_key;
		IF v_old.uid <> v_uid THEN
			RAISE EXCEPTION 'ceems record: job % of % started at % belongs to uid %, the record says uid %',
				v_jobid, v_cluster, v_start, v_old.uid, v_uid
				USING ERRCODE = 'invalid_parameter_value';
		END IF;
	END IF;

	SELECT finalized_by <> 'agent' AS by_plugin, written_at, record_digest INTO v_old
		FROM ceems.job_nodes
		WHERE job_key = v_key AND node = v_node;
	IF FOUND THEN
		-- A record the job-side plugin wrote beats one the agent
		-- wrote; then the newest wins; ties go to the larger digest,
		-- so that the result never depends on arrival order.
		IF (v_old.by_plugin, v_old.written_at, v_old.record_digest) >=
		   (coalesce(record ->> 'finalized_by', '') <> 'agent', v_written, v_digest) THEN
			outcome := 'unchanged';
			stored_key := v_key;
			RETURN;
		END IF;
		DELETE FROM ceems.job_nodes WHERE job_key = v_key AND node = v_node;
		v_outcome := 'replaced';
	ELSE
		v_outcome := 'inserted';
	END IF;

	led := ceems.json_object(m, 'ledger', 'measurements');
	usage := ceems.json_object(m, 'usage', 'measurements');
	v_pkg := ceems.json_object(led, 'package', 'measurements.ledger');
	v_dram := ceems.json_object(led, 'dram', 'measurements.ledger');
	v_gpu := ceems.json_object(led, 'gpu', 'measurements.ledger');
	v_nodedom := ceems.json_object(led, 'node', 'measurements.ledger');
	em := ceems.json_object(led, 'emissions', 'measurements.ledger');
	fac := ceems.json_object(em, 'factor', 'measurements.ledger.emissions');
	v_mem_limit := usage -> 'mem_limit_bytes';
	IF v_pkg ? 'joules' OR v_dram ? 'joules' OR v_gpu ? 'joules' OR v_nodedom ? 'joules' THEN
		v_total := coalesce(ceems.json_float(v_pkg, 'joules', 'ledger.package'), 0) +
			   coalesce((v_dram ->> 'joules')::double precision, 0) +
			   coalesce((v_gpu ->> 'joules')::double precision, 0) +
			   coalesce((v_nodedom ->> 'joules')::double precision, 0);
	END IF;

	INSERT INTO ceems.job_nodes (
		job_key, node, written_at, finalized_by, record_digest, job_meta,
		alloc_cores, alloc_mem_bytes, elapsed_s, lifetime_s, cpu_s,
		gap_s, cgroup_gone, mem_peak_bytes, mem_peak_sampled,
		mem_rss_bytes, mem_limit_bytes, oom_kills, io_read_bytes,
		io_write_bytes, cpuset, usage_failed,
		package_j, dram_j, gpu_j, node_j, total_j,
		package_static_j, dram_static_j,
		package_covered_s, dram_covered_s, gpu_covered_s, node_covered_s,
		emissions_g, emissions_covered_s, emission_factor_source,
		emission_zone, emission_year, emission_g_per_kwh, pue,
		emission_factor_changed)
	VALUES (
		v_key, v_node, v_written,
		(record ->> 'finalized_by'), v_digest, job,
		(m ->> 'alloc_cores')::bigint,
		(m ->> 'alloc_mem_bytes')::bigint,
		(m ->> 'elapsed_s')::double precision,
		(led ->> 'lifetime_s')::double precision,
		(m ->> 'cpu_s')::double precision,
		coalesce((m ->> 'gap_s')::double precision, 0),
		coalesce((m ->> 'cgroup_gone')::boolean, false),
		(usage ->> 'mem_peak_bytes')::bigint,
		coalesce((usage ->> 'peak_sampled')::boolean, false),
		(usage ->> 'mem_rss_bytes')::bigint,
		CASE WHEN v_mem_limit = '"max"' THEN NULL
		     ELSE (usage ->> 'mem_limit_bytes')::bigint END,
		(usage ->> 'oom_kills')::bigint,
		(usage ->> 'io_read_bytes')::bigint,
		(usage ->> 'io_write_bytes')::bigint,
		(usage ->> 'cpuset'),
		CASE WHEN jsonb_typeof(usage -> 'failed') = 'array'
		     THEN ARRAY(SELECT jsonb_array_elements_text(usage -> 'failed')) END,
		(v_pkg ->> 'joules')::double precision,
		(v_dram ->> 'joules')::double precision,
		(v_gpu ->> 'joules')::double precision,
		(v_nodedom ->> 'joules')::double precision,
		v_total,
		(v_pkg ->> 'static_j')::double precision,
		(v_dram ->> 'static_j')::double precision,
		(v_pkg ->> 'covered_s')::double precision,
		(v_dram ->> 'covered_s')::double precision,
		(v_gpu ->> 'covered_s')::double precision,
		(v_nodedom ->> 'covered_s')::double precision,
		(em ->> 'grams')::double precision,
		(em ->> 'covered_s')::double precision,
		nullif((fac ->> 'source'), ''),
		nullif((fac ->> 'zone'), ''),
		nullif((fac ->> 'year')::bigint, 0),
		(fac ->> 'g_per_kwh')::double precision,
		(fac ->> 'pue')::double precision,
		(em ->> 'factor_changed')::boolean);

	-- Steps and notes: one statement each (a loop of single inserts
	-- costs several times more), after a check of their shape.
	IF jsonb_typeof(coalesce(m -> 'steps', '[]')) <> 'array' OR
	   jsonb_typeof(coalesce(record -> 'notes', '[]')) <> 'array' OR
	   EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(m -> 'steps', '[]')) s
		   WHERE jsonb_typeof(s) <> 'object' OR
			 jsonb_typeof(coalesce(s -> 'joules', '{}')) <> 'object') OR
	   EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(record -> 'notes', '[]')) n
		   WHERE jsonb_typeof(n) <> 'object') THEN
		RAISE EXCEPTION 'ceems record: measurements.steps and notes must be arrays of objects'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s,
		cpu_s, mem_peak_bytes, package_j, dram_j, gpu_j, node_j)
	SELECT v_key, v_node,
	       (s ->> 'id'),
	       coalesce((s ->> 'ended')::boolean, false),
	       coalesce((s ->> 'elapsed_s')::double precision, 0),
	       (s ->> 'cpu_s')::double precision,
	       (s ->> 'mem_peak_bytes')::bigint,
	       (s -> 'joules' ->> 'package')::double precision,
	       (s -> 'joules' ->> 'dram')::double precision,
	       (s -> 'joules' ->> 'gpu')::double precision,
	       (s -> 'joules' ->> 'node')::double precision
	FROM jsonb_array_elements(m -> 'steps') s;
	INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text,
				     saving_j, saving_g)
	SELECT v_key, v_node, (n.ord - 1)::smallint,
	       (n.value ->> 'id'),
	       (n.value ->> 'text'),
	       (n.value ->> 'saving_j')::double precision,
	       (n.value ->> 'saving_g')::double precision
	FROM jsonb_array_elements(record -> 'notes') WITH ORDINALITY n(value, ord);

	outcome := v_outcome;
	stored_key := v_key;
END
$$;
COMMENT ON FUNCTION ceems.store_job_record(jsonb) IS
	'upsert_job_record without the refresh of the jobs row: for upsert_job_record and upsert_job_records only (not granted)';

-- Generic plans (008 planned every statement anew: a third of a batch's
-- time): every lookup is by key, so no plan depends on the batch.
CREATE OR REPLACE FUNCTION ceems.store_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off		-- as refresh_jobs
AS $$
DECLARE
	items ceems.batch_record[];
	fresh bigint[];		-- keys of the jobs this batch creates
	changed bigint[];	-- keys of stored jobs it changes
	inserted bigint;
BEGIN
	-- Parse and validate every record.  The checks are the loop's
	-- (store_job_record's), made on every record, applied or not: a
	-- stricter check here only sends the batch to the loop.
	-- The identity's numbers are known to be JSON numbers here: cast
	-- directly (a fraction, which the loop may accept as a whole number,
	-- raises and sends the batch to the loop).
	items := ARRAY(
		SELECT ROW(row_number() OVER (ORDER BY p.rec -> 'job' -> 'cluster',
						     p.rec -> 'job' -> 'jobid',
						     p.rec -> 'job' -> 'start_time', p.ord),
			   p.ord, p.rec,
			   CASE WHEN p.ok THEN p.job ->> 'cluster' END,
			   CASE WHEN p.ok THEN (p.job ->> 'jobid')::bigint END,
			   CASE WHEN p.ok THEN (p.job ->> 'uid')::bigint END,
			   CASE WHEN p.ok THEN to_timestamp((p.job ->> 'start_time')::bigint) END,
			   CASE WHEN p.ok THEN p.job ->> 'node' END,
			   CASE WHEN p.ok THEN to_timestamp((p.rec ->> 'written_at')::bigint) END,
			   md5(p.rec::text), NULL, NULL, NULL,
			   coalesce(p.rec ->> 'finalized_by', '') <> 'agent', NULL)::ceems.batch_record
		FROM (SELECT e.value AS rec, e.ord::integer AS ord, x.job,
			     jsonb_typeof(e.value) = 'object'
			     AND (e.value ->> 'format') IS NOT DISTINCT FROM 'ceems-job-record/1'
			     AND jsonb_typeof(x.job) = 'object'
			     AND jsonb_typeof(x.m) = 'object'
			     AND jsonb_typeof(e.value -> 'written_at') = 'number'
			     AND jsonb_typeof(x.job -> 'cluster') = 'string'
			     AND jsonb_typeof(x.job -> 'jobid') = 'number'
			     AND jsonb_typeof(x.job -> 'uid') = 'number'
			     AND jsonb_typeof(x.job -> 'start_time') = 'number'
			     AND jsonb_typeof(x.job -> 'node') = 'string'
			     AND coalesce(jsonb_typeof(y.led), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(x.m -> 'usage'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.pkg), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'dram'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'gpu'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'node'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.em), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.em -> 'factor'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.pkg -> 'joules'), 'null') IN ('number', 'null')
			     AND coalesce(jsonb_typeof(x.m -> 'steps'), 'array') = 'array'
			     AND coalesce(jsonb_typeof(e.value -> 'notes'), 'array') = 'array'
			     AS ok
		      FROM jsonb_array_elements(records) WITH ORDINALITY e(value, ord),
			   -- OFFSET 0: each sub-object is taken out of its
			   -- record once, not once per use.
			   LATERAL (SELECT e.value -> 'job' AS job,
					   e.value -> 'measurements' AS m OFFSET 0) x,
			   LATERAL (SELECT l.led, l.led -> 'package' AS pkg,
					   l.led -> 'emissions' AS em
				    FROM (SELECT x.m -> 'ledger' AS led OFFSET 0) l
				    OFFSET 0) y) p
		ORDER BY 1);
	IF EXISTS (SELECT 1 FROM unnest(items) i
		   WHERE i.cluster IS NULL OR i.jobid IS NULL OR i.uid IS NULL OR
			 i.start_time IS NULL OR i.node IS NULL OR i.written_at IS NULL OR
			 (i.rec -> 'measurements' ->> 'jobid')::bigint IS DISTINCT FROM i.jobid OR
			 (i.rec -> 'measurements' ->> 'uid')::bigint IS DISTINCT FROM i.uid OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(i.rec -> 'measurements' -> 'steps', '[]')) s
				 WHERE jsonb_typeof(s) <> 'object' OR
				       jsonb_typeof(coalesce(s -> 'joules', '{}')) <> 'object') OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(i.rec -> 'notes', '[]')) n
				 WHERE jsonb_typeof(n) <> 'object')) THEN
		RAISE EXCEPTION 'ceems records: a record is not valid: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	INSERT INTO ceems.clusters (name)
		SELECT DISTINCT i.cluster FROM unnest(items) i ORDER BY 1
		ON CONFLICT (name) DO NOTHING;

	-- A new (or restored) database has no statistics: every index of
	-- jobs then looks as good as another, and the plans kept for the
	-- session found a job through jobs_start, reading every job that
	-- started at the same second, each batch slower than the last.
	-- Gather them once there are rows (autovacuum keeps them after).
	IF NOT EXISTS (SELECT 1 FROM pg_stats
		       WHERE schemaname = 'ceems' AND tablename = 'jobs'
			 AND attname = 'jobid')
	   AND EXISTS (SELECT 1 FROM ceems.jobs) THEN
		ANALYZE ceems.jobs, ceems.job_nodes;
	END IF;

	-- The stored jobs of the batch, locked in the loop's order (a
	-- concurrent writer's records of one job wait for this batch's).
	-- Each job is looked up by its whole identity in a subquery of its
	-- own: as a join, a plan made before the table had statistics used
	-- the cluster alone as the index condition and read every job of
	-- the cluster for each record.
	PERFORM 1
		FROM (SELECT DISTINCT c.cluster_id, i.jobid, i.start_time
		      FROM unnest(items) i JOIN ceems.clusters c ON c.name = i.cluster
		      ORDER BY 1, 2, 3) b,
		     LATERAL (SELECT 1 FROM ceems.jobs j
			      WHERE j.cluster_id = b.cluster_id AND j.jobid = b.jobid
				AND j.start_time = b.start_time
			      FOR UPDATE) s;

	-- The outcome of each record, as the loop would give it in its
	-- order; a new job's key drawn now, its owner its first record's.
	items := ARRAY(
		WITH b AS (
			SELECT i.*, c.cluster_id, j.job_key AS stored_key,
			       j.uid AS stored_uid
			FROM unnest(items) i
			JOIN ceems.clusters c ON c.name = i.cluster
			LEFT JOIN LATERAL (SELECT s.job_key, s.uid FROM ceems.jobs s
					   WHERE s.cluster_id = c.cluster_id AND s.jobid = i.jobid
					     AND s.start_time = i.start_time
					   OFFSET 0) j ON true),
		new_jobs AS MATERIALIZED (
			SELECT n.cluster_id, n.jobid, n.start_time,
			       nextval('ceems.jobs_job_key_seq') AS job_key
			FROM (SELECT DISTINCT b.cluster_id, b.jobid, b.start_time
			      FROM b WHERE b.stored_key IS NULL
			      ORDER BY 1, 2, 3) n),
		k AS (
			SELECT b.seq, b.ord, b.rec, b.cluster, b.jobid, b.uid,
			       b.start_time, b.node, b.written_at, b.digest,
			       b.by_plugin, b.stored_key IS NULL AS fresh,
			       coalesce(b.stored_key, n.job_key) AS job_key,
			       coalesce(b.stored_uid,
					first_value(b.uid) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time
								 ORDER BY b.seq)) AS job_uid,
			       jn.finalized_by <> 'agent' AS old_by_plugin,
			       jn.written_at AS old_written_at,
			       jn.record_digest AS old_digest,
			       count(*) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time, b.node) AS records
			FROM b
			LEFT JOIN new_jobs n ON b.stored_key IS NULL
				AND n.cluster_id = b.cluster_id AND n.jobid = b.jobid
				AND n.start_time = b.start_time
			LEFT JOIN ceems.job_nodes jn ON jn.job_key = b.stored_key
				AND jn.node = b.node)
		SELECT ROW(k.seq, k.ord, k.rec, k.cluster, k.jobid, k.uid,
			   k.start_time, k.node, k.written_at, k.digest, k.job_key,
			   CASE WHEN k.uid <> k.job_uid THEN NULL
				WHEN (k.old_by_plugin, k.old_written_at, k.old_digest) >=
				     (k.by_plugin, k.written_at, k.digest) OR
				     k.records > 1 AND EXISTS (SELECT 1 FROM k e
					     WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq
					       AND (e.by_plugin, e.written_at, e.digest) >=
						   (k.by_plugin, k.written_at, k.digest))
				THEN 'unchanged'
				WHEN k.old_written_at IS NULL AND
				     (k.records = 1 OR NOT EXISTS (SELECT 1 FROM k e
						 WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq))
				THEN 'inserted'
				ELSE 'replaced' END,
			   k.old_written_at IS NOT NULL, k.by_plugin, k.fresh)::ceems.batch_record
		FROM k ORDER BY k.seq);
	IF EXISTS (SELECT 1 FROM unnest(items) i WHERE i.outcome IS NULL) THEN
		RAISE EXCEPTION 'ceems records: a record''s owner differs from its stored job''s: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM unnest(items) i WHERE i.outcome <> 'unchanged'
		   GROUP BY i.job_key, i.node HAVING count(*) > 1) THEN
		RAISE EXCEPTION 'ceems records: several records of one node to apply in order: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	-- From here on, each applied record is the one record of its node.
	-- The new jobs' job_nodes rows come before their jobs rows: their
	-- foreign key is checked at the end of this function.
	SET CONSTRAINTS ceems.job_nodes_job_key_fkey DEFERRED;
	DELETE FROM ceems.job_nodes jn
		USING unnest(items) i
		WHERE i.outcome <> 'unchanged' AND i.replaces
		  AND jn.job_key = i.job_key AND jn.node = i.node;

	INSERT INTO ceems.job_nodes (
		job_key, node, written_at, finalized_by, record_digest, job_meta,
		alloc_cores, alloc_mem_bytes, elapsed_s, lifetime_s, cpu_s,
		gap_s, cgroup_gone, mem_peak_bytes, mem_peak_sampled,
		mem_rss_bytes, mem_limit_bytes, oom_kills, io_read_bytes,
		io_write_bytes, cpuset, usage_failed,
		package_j, dram_j, gpu_j, node_j, total_j,
		package_static_j, dram_static_j,
		package_covered_s, dram_covered_s, gpu_covered_s, node_covered_s,
		emissions_g, emissions_covered_s, emission_factor_source,
		emission_zone, emission_year, emission_g_per_kwh, pue,
		emission_factor_changed)
	SELECT
		i.job_key, i.node, i.written_at,
		(i.rec ->> 'finalized_by'), i.digest, i.rec -> 'job',
		(i.rec #>> '{measurements,alloc_cores}')::bigint,
		(i.rec #>> '{measurements,alloc_mem_bytes}')::bigint,
		(i.rec #>> '{measurements,elapsed_s}')::double precision,
		(i.rec #>> '{measurements,ledger,lifetime_s}')::double precision,
		(i.rec #>> '{measurements,cpu_s}')::double precision,
		coalesce((i.rec #>> '{measurements,gap_s}')::double precision, 0),
		coalesce((i.rec #>> '{measurements,cgroup_gone}')::boolean, false),
		(i.rec #>> '{measurements,usage,mem_peak_bytes}')::bigint,
		coalesce((i.rec #>> '{measurements,usage,peak_sampled}')::boolean, false),
		(i.rec #>> '{measurements,usage,mem_rss_bytes}')::bigint,
		CASE WHEN i.rec #> '{measurements,usage,mem_limit_bytes}' = '"max"' THEN NULL
		     ELSE (i.rec #>> '{measurements,usage,mem_limit_bytes}')::bigint END,
		(i.rec #>> '{measurements,usage,oom_kills}')::bigint,
		(i.rec #>> '{measurements,usage,io_read_bytes}')::bigint,
		(i.rec #>> '{measurements,usage,io_write_bytes}')::bigint,
		(i.rec #>> '{measurements,usage,cpuset}'),
		CASE WHEN jsonb_typeof(i.rec #> '{measurements,usage,failed}') = 'array'
		     THEN ARRAY(SELECT jsonb_array_elements_text(i.rec #> '{measurements,usage,failed}')) END,
		(i.rec #>> '{measurements,ledger,package,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,gpu,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,node,joules}')::double precision,
		CASE WHEN (i.rec #> '{measurements,ledger,package}') ? 'joules' OR (i.rec #> '{measurements,ledger,dram}') ? 'joules' OR (i.rec #> '{measurements,ledger,gpu}') ? 'joules' OR (i.rec #> '{measurements,ledger,node}') ? 'joules'
		     THEN coalesce((i.rec #>> '{measurements,ledger,package,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,dram,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,gpu,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,node,joules}')::double precision, 0) END,
		(i.rec #>> '{measurements,ledger,package,static_j}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,static_j}')::double precision,
		(i.rec #>> '{measurements,ledger,package,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,gpu,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,node,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,grams}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,covered_s}')::double precision,
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,source}'), ''),
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,zone}'), ''),
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,year}')::bigint, 0),
		(i.rec #>> '{measurements,ledger,emissions,factor,g_per_kwh}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,factor,pue}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,factor_changed}')::boolean
	FROM unnest(items) i
	WHERE i.outcome <> 'unchanged'
	ORDER BY i.seq;

	INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s,
		cpu_s, mem_peak_bytes, package_j, dram_j, gpu_j, node_j)
	SELECT i.job_key, i.node,
	       (s ->> 'id'),
	       coalesce((s ->> 'ended')::boolean, false),
	       coalesce((s ->> 'elapsed_s')::double precision, 0),
	       -- Absent: not measured, NULL (job_steps.cpu_s is nullable
	       -- from migration 010 on, applied with this one).
	       (s ->> 'cpu_s')::double precision,
	       (s ->> 'mem_peak_bytes')::bigint,
	       (s -> 'joules' ->> 'package')::double precision,
	       (s -> 'joules' ->> 'dram')::double precision,
	       (s -> 'joules' ->> 'gpu')::double precision,
	       (s -> 'joules' ->> 'node')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements(i.rec -> 'measurements' -> 'steps') s
	WHERE i.outcome <> 'unchanged';
	INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text,
				     saving_j, saving_g)
	SELECT i.job_key, i.node, (n.ord - 1)::smallint,
	       (n.value ->> 'id'),
	       (n.value ->> 'text'),
	       (n.value ->> 'saving_j')::double precision,
	       (n.value ->> 'saving_g')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements(i.rec -> 'notes') WITH ORDINALITY n(value, ord)
	WHERE i.outcome <> 'unchanged';

	-- The new jobs, complete, in identity order.  Drawn keys make no
	-- conflict; a conflict on the identity is another writer's insert
	-- since the outcomes: give up.
	fresh := ARRAY(SELECT DISTINCT i.job_key FROM unnest(items) i WHERE i.fresh);
	INSERT INTO ceems.jobs (job_key, cluster_id, jobid, start_time,
		array_job_id, array_task_id, user_name, uid, gid,
		account, partition, qos, job_name, state,
		exit_code, exit_signal, submit_time, end_time, elapsed_s,
		time_limit_min, alloc_cpus, req_mem_bytes, alloc_gpus, nnodes,
		nodelist, meta_written_at, meta_node, meta_digest, nodes_reported,
		cpu_time_s, cpu_efficiency, mem_peak_bytes, mem_efficiency, gpu_util_pct,
		gpu_mem_peak_bytes, package_j, dram_j, gpu_j, node_j,
		total_j, package_static_j, dram_static_j, package_coverage, dram_coverage,
		gpu_coverage, node_coverage, gap_s, emissions_g, emissions_coverage,
		emission_factor_source, emission_zone, emission_year, emission_g_per_kwh, pue,
		emission_factor_mixed)
	OVERRIDING SYSTEM VALUE
	SELECT f.job_key, f.cluster_id, f.jobid, f.start_time,
	       x.array_job_id, x.array_task_id, x.user_name, x.uid, x.gid,
	       x.account, x.partition, x.qos, x.job_name, x.state,
	       x.exit_code, x.exit_signal, x.submit_time, x.end_time, x.elapsed_s,
	       x.time_limit_min, x.alloc_cpus, x.req_mem_bytes, x.alloc_gpus, x.nnodes,
	       x.nodelist, x.meta_written_at, x.meta_node, x.meta_digest, x.nodes_reported,
	       x.cpu_time_s, x.cpu_efficiency, x.mem_peak_bytes, x.mem_efficiency, x.gpu_util_pct,
	       x.gpu_mem_peak_bytes, x.package_j, x.dram_j, x.gpu_j, x.node_j,
	       x.total_j, x.package_static_j, x.dram_static_j, x.package_coverage, x.dram_coverage,
	       x.gpu_coverage, x.node_coverage, x.gap_s, x.emissions_g, x.emissions_coverage,
	       x.emission_factor_source, x.emission_zone, x.emission_year, x.emission_g_per_kwh, x.pue,
	       x.emission_factor_mixed
	FROM (SELECT DISTINCT i.job_key, c.cluster_id, i.jobid, i.start_time
	      FROM unnest(items) i JOIN ceems.clusters c ON c.name = i.cluster
	      WHERE i.fresh) f
	JOIN ceems.job_figures(fresh) x ON x.job_key = f.job_key
	ORDER BY f.cluster_id, f.jobid, f.start_time
	ON CONFLICT (cluster_id, jobid, start_time) DO NOTHING;
	GET DIAGNOSTICS inserted = ROW_COUNT;
	IF inserted <> cardinality(fresh) THEN
		RAISE EXCEPTION 'ceems records: a job of the batch was stored meanwhile: store one by one'
			USING ERRCODE = 'unique_violation';
	END IF;
	SET CONSTRAINTS ceems.job_nodes_job_key_fkey IMMEDIATE;

	changed := ARRAY(SELECT DISTINCT i.job_key FROM unnest(items) i
			 WHERE i.outcome <> 'unchanged' AND NOT i.fresh);
	IF cardinality(changed) > 0 THEN
		PERFORM ceems.refresh_jobs(changed);
	END IF;

	RETURN ARRAY(SELECT i.outcome FROM unnest(items) i ORDER BY i.ord);
END
$$;
COMMENT ON FUNCTION ceems.store_job_records(jsonb) IS
	'The set-wise path of upsert_job_records: the loop''s result, or an error (then the loop runs); not granted';

CALL ceems.adopt_objects();
