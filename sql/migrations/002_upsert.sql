-- 002_upsert.sql - ceems.upsert_job_record(jsonb): the only way records
-- get into the tables.  The writer (lib/, on compute nodes) calls
--
--	SELECT ceems.upsert_job_record($1::jsonb)
--
-- with one "ceems-job-record/1" document exactly as ceems_record_encode()
-- writes it (doc/record-format.md).  Contract (doc/storage.md):
--   * returns 'inserted' (first record of this node for this job),
--     'replaced' (a newer record of the node replaced the one stored) or
--     'unchanged' (the same record again, or an older one: a replay);
--   * idempotent: replaying a record changes no row;
--   * order-independent: the records of a job's nodes may arrive in any
--     order, and the jobs row is the same;
--   * a bad record raises SQLSTATE class 22 (data exception: 22023 for a
--     missing or mistyped identity field, 22P02 for another value of the
--     wrong type, 22003 for a number out of range) or 23
--     (a constraint: 23514 negative energy, unknown state...) and writes
--     nothing; the writer keeps such a record under rejected/.  Any other
--     error (connection, 40001/40P01, 57014 timeout...) is transient:
--     spool the record and retry;
--   * SECURITY DEFINER, owned by ceems_owner: the writer role needs
--     EXECUTE on it and no privilege on any table.

-- Typed readers of one member of a JSON object: NULL when absent (the
-- record format leaves unknown values out), an error naming WHERE when
-- present with the wrong type.  They cost a PL/pgSQL call each, so only
-- the identity and the structure are read with them; the many figures
-- are read with plain casts ((obj ->> key)::type), which refuse a value
-- of the wrong type too (22P02), only less precisely worded.
CREATE FUNCTION ceems.json_text(obj jsonb, key text, path text)
RETURNS text LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'string' THEN
		RAISE EXCEPTION 'ceems record: %.% must be a string', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN v #>> '{}';
END
$$;

CREATE FUNCTION ceems.json_float(obj jsonb, key text, path text)
RETURNS double precision LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'number' THEN
		RAISE EXCEPTION 'ceems record: %.% must be a number', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN (v #>> '{}')::double precision;
END
$$;

CREATE FUNCTION ceems.json_int(obj jsonb, key text, path text)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
	n numeric;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'number' THEN
		RAISE EXCEPTION 'ceems record: %.% must be a whole number', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	n := (v #>> '{}')::numeric;
	IF n <> trunc(n) THEN
		RAISE EXCEPTION 'ceems record: %.% must be a whole number', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN n::bigint;	-- 22003 when it does not fit
END
$$;

CREATE FUNCTION ceems.json_bool(obj jsonb, key text, path text)
RETURNS boolean LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'boolean' THEN
		RAISE EXCEPTION 'ceems record: %.% must be true or false', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN (v #>> '{}')::boolean;
END
$$;

CREATE FUNCTION ceems.json_object(obj jsonb, key text, path text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> 'object' THEN
		RAISE EXCEPTION 'ceems record: %.% must be an object', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN v;
END
$$;

CREATE FUNCTION ceems.json_time(obj jsonb, key text, path text)
RETURNS timestamptz LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT to_timestamp(ceems.json_int(obj, key, path));
$$;

-- min(x, 1) that keeps NULL (least() would turn NULL into 1).
CREATE FUNCTION ceems.at_most_one(x double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN x > 1 THEN 1 ELSE x END;

-- Recompute the jobs row of JOB_KEY from its job_nodes rows: metadata
-- field by field from the newest record that has the field, figures
-- summed over the nodes.  Depends only on the job_nodes rows, never on
-- the order they came in.  Leaves the row alone when nothing changes.
CREATE FUNCTION ceems.refresh_job(p_job_key bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	meta jsonb := '{}';
	n record;
	newest record;
	agg record;
	f record;
	v_elapsed double precision;
	v_alloc_cpus bigint;
	v_req_mem bigint;
BEGIN
	FOR n IN
		SELECT jn.job_meta, jn.written_at, jn.node, jn.record_digest
		FROM ceems.job_nodes jn
		WHERE jn.job_key = p_job_key
		ORDER BY jn.written_at, jn.node, jn.record_digest
	LOOP
		-- Oldest first: a newer record's field replaces an older one's,
		-- a field a newer record lacks keeps the older value.
		meta := meta || n.job_meta;
		newest := n;
	END LOOP;
	IF newest IS NULL THEN
		RETURN;
	END IF;

	SELECT count(*) AS nodes,
	       sum(cpu_s) AS cpu_s,
	       max(mem_peak_bytes) AS mem_peak_max,
	       sum(mem_peak_bytes) AS mem_peak_sum,
	       max(elapsed_s) AS elapsed_max,
	       sum(lifetime_s) AS lifetime_s,
	       sum(gap_s) AS gap_s,
	       sum(package_j) AS package_j, sum(dram_j) AS dram_j,
	       sum(gpu_j) AS gpu_j, sum(node_j) AS node_j,
	       sum(total_j) AS total_j,
	       sum(package_static_j) AS package_static_j,
	       sum(dram_static_j) AS dram_static_j,
	       sum(package_covered_s) AS package_cov,
	       sum(dram_covered_s) AS dram_cov,
	       sum(gpu_covered_s) AS gpu_cov,
	       sum(node_covered_s) AS node_cov,
	       sum(emissions_g) AS emissions_g,
	       sum(emissions_covered_s) AS emissions_cov,
	       avg(gpu_util_pct) AS gpu_util_pct,
	       max(gpu_mem_peak_bytes) AS gpu_mem_peak,
	       count(DISTINCT (emission_factor_source, emission_zone, emission_year,
			       emission_g_per_kwh, pue))
		       FILTER (WHERE emission_factor_source IS NOT NULL) AS factors,
	       bool_or(emission_factor_changed) AS factor_changed
	INTO agg
	FROM ceems.job_nodes
	WHERE job_key = p_job_key;

	SELECT emission_factor_source, emission_zone, emission_year,
	       emission_g_per_kwh, pue
	INTO f
	FROM ceems.job_nodes
	WHERE job_key = p_job_key AND emission_factor_source IS NOT NULL
	ORDER BY node
	LIMIT 1;

	v_alloc_cpus := nullif(ceems.json_int(meta, 'alloc_cpus', 'job'), 0);
	v_req_mem := nullif(ceems.json_int(meta, 'req_mem_bytes', 'job'), 0);
	IF meta ? 'start_time' AND meta ? 'end_time' THEN
		v_elapsed := ceems.json_int(meta, 'end_time', 'job') -
			     (meta ->> 'start_time')::bigint;
	ELSE
		v_elapsed := agg.elapsed_max;
	END IF;

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
	FROM (SELECT
		(meta ->> 'array_job_id')::bigint AS array_job_id,
		(meta ->> 'array_task_id')::bigint AS array_task_id,
		(meta ->> 'user') AS user_name,
		(meta ->> 'uid')::bigint AS uid,
		(meta ->> 'gid')::bigint AS gid,
		(meta ->> 'account') AS account,
		(meta ->> 'partition') AS partition,
		(meta ->> 'qos') AS qos,
		(meta ->> 'name') AS job_name,
		(meta ->> 'state')::ceems.job_state AS state,
		(meta ->> 'exit_code')::bigint::smallint AS exit_code,
		nullif((meta ->> 'exit_signal')::bigint, 0)::smallint AS exit_signal,
		to_timestamp((meta ->> 'submit_time')::bigint) AS submit_time,
		to_timestamp((meta ->> 'end_time')::bigint) AS end_time,
		v_elapsed AS elapsed_s,
		(meta ->> 'time_limit_min')::bigint AS time_limit_min,
		v_alloc_cpus AS alloc_cpus,
		v_req_mem AS req_mem_bytes,
		(meta ->> 'alloc_gpus')::bigint AS alloc_gpus,
		nullif((meta ->> 'nnodes')::bigint, 0) AS nnodes,
		(meta ->> 'nodes') AS nodelist,
		newest.written_at AS meta_written_at,
		newest.node AS meta_node,
		newest.record_digest AS meta_digest,
		agg.nodes::integer AS nodes_reported,
		agg.cpu_s AS cpu_time_s,
		CASE WHEN v_elapsed > 0 AND v_alloc_cpus IS NOT NULL
		     THEN agg.cpu_s / (v_elapsed * v_alloc_cpus) END AS cpu_efficiency,
		agg.mem_peak_max AS mem_peak_bytes,
		agg.mem_peak_sum::double precision / v_req_mem AS mem_efficiency,
		agg.gpu_util_pct AS gpu_util_pct,
		agg.gpu_mem_peak AS gpu_mem_peak_bytes,
		agg.package_j AS package_j,
		agg.dram_j AS dram_j,
		agg.gpu_j AS gpu_j,
		agg.node_j AS node_j,
		agg.total_j AS total_j,
		agg.package_static_j AS package_static_j,
		agg.dram_static_j AS dram_static_j,
		ceems.at_most_one(agg.package_cov / nullif(agg.lifetime_s, 0)) AS package_coverage,
		ceems.at_most_one(agg.dram_cov / nullif(agg.lifetime_s, 0)) AS dram_coverage,
		ceems.at_most_one(agg.gpu_cov / nullif(agg.lifetime_s, 0)) AS gpu_coverage,
		ceems.at_most_one(agg.node_cov / nullif(agg.lifetime_s, 0)) AS node_coverage,
		agg.gap_s AS gap_s,
		agg.emissions_g AS emissions_g,
		ceems.at_most_one(agg.emissions_cov / nullif(agg.lifetime_s, 0)) AS emissions_coverage,
		f.emission_factor_source AS emission_factor_source,
		f.emission_zone AS emission_zone,
		f.emission_year AS emission_year,
		f.emission_g_per_kwh AS emission_g_per_kwh,
		f.pue AS pue,
		CASE WHEN agg.factors > 0
		     THEN agg.factors > 1 OR coalesce(agg.factor_changed, false) END
			AS emission_factor_mixed
	      ) x
	WHERE j.job_key = p_job_key
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
COMMENT ON FUNCTION ceems.refresh_job(bigint) IS
	'Recompute a jobs row from its job_nodes rows (metadata: newest record per field; figures: sums over nodes)';

CREATE FUNCTION ceems.upsert_job_record(record jsonb)
RETURNS text LANGUAGE plpgsql VOLATILE SECURITY DEFINER
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

	SELECT written_at, record_digest INTO v_old
		FROM ceems.job_nodes
		WHERE job_key = v_key AND node = v_node;
	IF FOUND THEN
		-- The newest record of a node wins; ties go to the larger
		-- digest, so that the result never depends on arrival order.
		IF (v_old.written_at, v_old.record_digest) >= (v_written, v_digest) THEN
			RETURN 'unchanged';
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
	       coalesce((s ->> 'cpu_s')::double precision, 0),
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

	PERFORM ceems.refresh_job(v_key);
	RETURN v_outcome;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_record(jsonb) IS
	'Store one ceems-job-record/1 document (doc/storage.md): returns inserted, replaced or unchanged; idempotent and order-independent; SQLSTATE class 22/23 for a bad record';

CALL ceems.adopt_objects();
