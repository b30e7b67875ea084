-- 006_batch.sql - batched ingest: ceems.upsert_job_records(jsonb) stores
-- a JSON array of records in one statement (issue 5: >= 5,000 records/s
-- from one writer; one statement per record gives ~1,400/s, most of it
-- round trips, commits and the per-record refresh of the jobs row).
--
-- The body of upsert_job_record (002) moves into ceems.store_job_record,
-- which does everything but the refresh of the jobs row and says which
-- job it touched; upsert_job_record becomes store + refresh, so the
-- single-record contract (002's header) is unchanged, and the batch is
--
--	SELECT ceems.upsert_job_records($1::jsonb)	-- [rec, rec, ...]
--
-- with the same contract per record (idempotent, order-independent, the
-- same SQLSTATE class 22/23 errors) plus:
--   * all or nothing: one bad record refuses the whole batch, with its
--     SQLSTATE and a message starting "ceems records[I]:" (I counts from
--     0); the writer then stores the batch one record at a time to set
--     the bad one aside (lib/replay.c);
--   * each job's row is recomputed once per batch, after all its
--     records, not once per record;
--   * records are applied in the order of their job identity, so that
--     two writers with overlapping batches lock jobs rows in one order
--     and do not deadlock;
--   * returns the outcomes ('inserted', 'replaced', 'unchanged') in the
--     order of the input array.

-- Everything upsert_job_record did but the refresh of the jobs row.
CREATE FUNCTION ceems.store_job_record(record jsonb, OUT outcome text, OUT stored_key bigint)
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

	SELECT written_at, record_digest INTO v_old
		FROM ceems.job_nodes
		WHERE job_key = v_key AND node = v_node;
	IF FOUND THEN
		-- The newest record of a node wins; ties go to the larger
		-- digest, so that the result never depends on arrival order.
		IF (v_old.written_at, v_old.record_digest) >= (v_written, v_digest) THEN
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

	outcome := v_outcome;
	stored_key := v_key;
END
$$;
COMMENT ON FUNCTION ceems.store_job_record(jsonb) IS
	'upsert_job_record without the refresh of the jobs row: for upsert_job_record and upsert_job_records only (not granted)';

CREATE OR REPLACE FUNCTION ceems.upsert_job_record(record jsonb)
RETURNS text LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s record;
BEGIN
	s := ceems.store_job_record(record);
	IF s.outcome <> 'unchanged' THEN
		PERFORM ceems.refresh_job(s.stored_key);
	END IF;
	RETURN s.outcome;
END
$$;

CREATE FUNCTION ceems.upsert_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
	s record;
	outcomes text[];
	changed_keys bigint[] := '{}';
	changed_at integer[] := '{}';
	v_index integer;
	v_state text;
	v_message text;
BEGIN
	IF records IS NULL OR jsonb_typeof(records) <> 'array' THEN
		RAISE EXCEPTION 'ceems records: not a JSON array'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	outcomes := array_fill(NULL::text, ARRAY[jsonb_array_length(records)]);
	-- One exception block for the whole batch (one subtransaction, not
	-- one per record): it only adds the index to a bad record's error.
	BEGIN
		FOR r IN
			SELECT e.value, e.ord::integer AS ord
			FROM jsonb_array_elements(records) WITH ORDINALITY e(value, ord)
			ORDER BY e.value -> 'job' -> 'cluster', e.value -> 'job' -> 'jobid',
				 e.value -> 'job' -> 'start_time', e.ord
		LOOP
			v_index := r.ord - 1;
			s := ceems.store_job_record(r.value);
			outcomes[r.ord] := s.outcome;
			IF s.outcome <> 'unchanged' THEN
				changed_keys := changed_keys || s.stored_key;
				changed_at := changed_at || r.ord;
			END IF;
		END LOOP;
		-- The jobs rows' checks (end before start...) fail here: the
		-- index named is that of the job's first changed record.
		FOR r IN
			SELECT c.k, min(c.i) AS i
			FROM unnest(changed_keys, changed_at) c(k, i)
			GROUP BY c.k ORDER BY c.k
		LOOP
			v_index := r.i - 1;
			PERFORM ceems.refresh_job(r.k);
		END LOOP;
	EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
		GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE,
					v_message = MESSAGE_TEXT;
		RAISE EXCEPTION 'ceems records[%]: %', v_index, v_message
			USING ERRCODE = v_state;
	END;
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_records(jsonb) IS
	'Store a JSON array of ceems-job-record/1 documents, all or nothing: per record as upsert_job_record; a bad record raises its SQLSTATE (class 22/23) with "ceems records[I]:"; returns the outcomes in input order';

CALL ceems.adopt_objects();

-- The writer: the batch like the single record, nothing else.
GRANT EXECUTE ON FUNCTION ceems.upsert_job_records(jsonb) TO ceems_writer;
