-- 017_measured_records_first.sql - a record of a job's metadata alone
-- never replaces a measured record of the same node.
--
-- The node agent writes a record of a job it never measured (finalized_by
-- 'agent', figures absent, the note 'not-measured') when it is told of
-- the end of a job it does not hold and has not written lately.  Its
-- memory of the records it wrote is lost when it restarts, so such a
-- record can follow a measured one the agent wrote itself (a reaped job,
-- finalized_by 'agent' too) and, being newer, won under 012's order (by
-- the plugin, written_at, digest): the job's figures were lost.  The
-- order of two records of one node is now (by the plugin, measured,
-- written_at, digest), measured meaning without a 'not-measured' note.
-- A record the plugin wrote is always measured, so only the agent's own
-- records compare on it.
--
-- The set-wise path (store_job_records) keeps 012's order: a batch that
-- holds any record the agent wrote (rare: a job reaped, a reply lost, a
-- job never measured) goes to the loop, whose store_job_record applies
-- the order above, whatever the stored rows are.

-- 012's store_job_record, measured records before metadata alone.
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

	SELECT jn.finalized_by <> 'agent' AS by_plugin,
	       NOT EXISTS (SELECT 1 FROM ceems.job_notes n
			   WHERE n.job_key = jn.job_key AND n.node = jn.node
			     AND n.note_id = 'not-measured') AS measured,
	       jn.written_at, jn.record_digest INTO v_old
		FROM ceems.job_nodes jn
		WHERE jn.job_key = v_key AND jn.node = v_node;
	IF FOUND THEN
		-- A record the job-side plugin wrote beats one the agent
		-- wrote; a measured record beats one of metadata alone;
		-- then the newest wins; ties go to the larger digest, so
		-- that the result never depends on arrival order.
		IF (v_old.by_plugin, v_old.measured, v_old.written_at, v_old.record_digest) >=
		   (coalesce(record ->> 'finalized_by', '') <> 'agent',
		    NOT coalesce(record -> 'notes' @> '[{"id": "not-measured"}]', false),
		    v_written, v_digest) THEN
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


-- 008's entry point: batches with a record the agent wrote go to the
-- loop.
CREATE OR REPLACE FUNCTION ceems.upsert_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	outcomes text[];
BEGIN
	IF records IS NULL OR jsonb_typeof(records) <> 'array' THEN
		RAISE EXCEPTION 'ceems records: not a JSON array'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(records) e
		       WHERE jsonb_typeof(e) = 'object'
			 AND coalesce(e ->> 'finalized_by', '') = 'agent') THEN
		-- One subtransaction per batch: rolls the set-wise writes
		-- back when it gives up.
		BEGIN
			outcomes := ceems.store_job_records(records);
		EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
			outcomes := NULL;
		END;
	END IF;
	IF outcomes IS NULL THEN
		outcomes := ceems.upsert_job_records_each(records);
	END IF;
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_records(jsonb) IS
	'Store a JSON array of ceems-job-record/1 documents, all or nothing: per record as upsert_job_record; a bad record raises its SQLSTATE (class 22/23) with "ceems records[I]:"; returns the outcomes in input order';

CALL ceems.adopt_objects();
