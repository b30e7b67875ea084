-- sql/functions/store.sql - storing records' node, step, note, GPU and IO
-- rows, one record or a batch (the jobs row is refreshed by the callers).

-- The layers an earlier schema stacked, each wrapping the one before:
-- store_job_record and store_job_records are whole now.
DROP FUNCTION IF EXISTS ceems.store_job_record_017(jsonb);
DROP FUNCTION IF EXISTS ceems.store_job_record_before_io(jsonb);
DROP FUNCTION IF EXISTS ceems.store_job_records_016(jsonb);
DROP FUNCTION IF EXISTS ceems.store_job_records_before_io(jsonb);

-- The node, step and note rows of the applied records of ITEMS (outcome
-- not unchanged, the stored row of their node deleted): each item's
-- record at its position in RECORDS, its key, node, written_at and digest
-- the item's.  The one definition of a record's rows, for
-- store_job_record (one item) and store_job_records (a batch); a record
-- whose steps or notes are not arrays of objects raises (the batch then
-- goes to the loop, which names it).
CREATE OR REPLACE FUNCTION ceems.store_job_nodes(records jsonb, items ceems.batch_record[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
-- The plans read no table: a generic one serves every call (a custom
-- plan, cheaper for one item than the generic one's guess of ten, would
-- be planned again at each of the loop's records).
SET plan_cache_mode = force_generic_plan
AS $$
BEGIN
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
		emission_factor_changed, emission_fallback,
		package_idle_unlearned, dram_idle_unlearned,
		package_err_source_j, package_err_lag_j, package_err_idle_power_j, package_err_gaps_j,
		dram_err_source_j, dram_err_lag_j, dram_err_idle_power_j, dram_err_gaps_j,
		gpu_err_source_j, gpu_err_lag_j, gpu_err_idle_power_j, gpu_err_gaps_j,
		node_err_source_j, node_err_lag_j, node_err_idle_power_j, node_err_gaps_j,
		advice_verdict, advice_actual_g, advice_best_start, advice_best_g)
	SELECT
		i.job_key, i.node, i.written_at,
		(r.rec ->> 'finalized_by'), i.digest, r.rec -> 'job',
		(r.m ->> 'alloc_cores')::bigint,
		(r.m ->> 'alloc_mem_bytes')::bigint,
		(r.m ->> 'elapsed_s')::double precision,
		(l.led ->> 'lifetime_s')::double precision,
		(r.m ->> 'cpu_s')::double precision,
		coalesce((r.m ->> 'gap_s')::double precision, 0),
		coalesce((r.m ->> 'cgroup_gone')::boolean, false),
		(u.u ->> 'mem_peak_bytes')::bigint,
		coalesce((u.u ->> 'peak_sampled')::boolean, false),
		(u.u ->> 'mem_rss_bytes')::bigint,
		CASE WHEN u.u -> 'mem_limit_bytes' = '"max"' THEN NULL
		     ELSE (u.u ->> 'mem_limit_bytes')::bigint END,
		(u.u ->> 'oom_kills')::bigint,
		(u.u ->> 'io_read_bytes')::bigint,
		(u.u ->> 'io_write_bytes')::bigint,
		(u.u ->> 'cpuset'),
		CASE WHEN jsonb_typeof(u.u -> 'failed') = 'array'
		     THEN ARRAY(SELECT jsonb_array_elements_text(u.u -> 'failed')) END,
		(l.pkg ->> 'joules')::double precision,
		(l.dram ->> 'joules')::double precision,
		(l.gpu ->> 'joules')::double precision,
		(l.node ->> 'joules')::double precision,
		CASE WHEN l.pkg ? 'joules' OR l.dram ? 'joules' OR l.gpu ? 'joules' OR l.node ? 'joules'
		     THEN coalesce((l.pkg ->> 'joules')::double precision, 0) +
			  coalesce((l.dram ->> 'joules')::double precision, 0) +
			  coalesce((l.gpu ->> 'joules')::double precision, 0) +
			  coalesce((l.node ->> 'joules')::double precision, 0) END,
		(l.pkg ->> 'static_j')::double precision,
		(l.dram ->> 'static_j')::double precision,
		(l.pkg ->> 'covered_s')::double precision,
		(l.dram ->> 'covered_s')::double precision,
		(l.gpu ->> 'covered_s')::double precision,
		(l.node ->> 'covered_s')::double precision,
		(l.em ->> 'grams')::double precision,
		(l.em ->> 'covered_s')::double precision,
		nullif((l.em -> 'factor' ->> 'source'), ''),
		nullif((l.em -> 'factor' ->> 'zone'), ''),
		nullif((l.em -> 'factor' ->> 'year')::bigint, 0),
		(l.em -> 'factor' ->> 'g_per_kwh')::double precision,
		(l.em -> 'factor' ->> 'pue')::double precision,
		(l.em ->> 'factor_changed')::boolean,
		(l.em ->> 'fallback')::double precision,
		ceems.idle_unlearned(l.pkg),
		ceems.idle_unlearned(l.dram),
		(l.pkg -> 'err' ->> 'source')::double precision,
		(l.pkg -> 'err' ->> 'lag')::double precision,
		(l.pkg -> 'err' ->> 'idle_power')::double precision,
		(l.pkg -> 'err' ->> 'gaps')::double precision,
		(l.dram -> 'err' ->> 'source')::double precision,
		(l.dram -> 'err' ->> 'lag')::double precision,
		(l.dram -> 'err' ->> 'idle_power')::double precision,
		(l.dram -> 'err' ->> 'gaps')::double precision,
		(l.gpu -> 'err' ->> 'source')::double precision,
		(l.gpu -> 'err' ->> 'lag')::double precision,
		(l.gpu -> 'err' ->> 'idle_power')::double precision,
		(l.gpu -> 'err' ->> 'gaps')::double precision,
		(l.node -> 'err' ->> 'source')::double precision,
		(l.node -> 'err' ->> 'lag')::double precision,
		(l.node -> 'err' ->> 'idle_power')::double precision,
		(l.node -> 'err' ->> 'gaps')::double precision,
		(r.rec -> 'advice' ->> 'verdict'),
		(r.rec -> 'advice' ->> 'actual_g')::double precision,
		to_timestamp((r.rec -> 'advice' ->> 'best_start')::bigint),
		(r.rec -> 'advice' ->> 'best_g')::double precision
	-- OFFSET 0: each sub-object is taken out of its record once, and
	-- each figure is then one key away (a path from the record's top
	-- for each of 40 figures was a fifth of this statement).
	FROM unnest(items) i,
	     LATERAL (SELECT x.rec, x.rec -> 'measurements' AS m
		      FROM (SELECT records -> (i.ord - 1) AS rec OFFSET 0) x
		      OFFSET 0) r,
	     LATERAL (SELECT r.m -> 'usage' AS u OFFSET 0) u,
	     LATERAL (SELECT y.led, y.led -> 'package' AS pkg, y.led -> 'dram' AS dram,
			     y.led -> 'gpu' AS gpu, y.led -> 'node' AS node,
			     -- Emissions are energy x factor: with no energy
			     -- measured they are unknown (NULL), whatever a
			     -- record written before that rule says (0 g).
			     CASE WHEN y.led -> 'package' ? 'joules' OR
				       y.led -> 'dram' ? 'joules' OR
				       y.led -> 'gpu' ? 'joules' OR
				       y.led -> 'node' ? 'joules'
				  THEN y.led -> 'emissions' END AS em
		      FROM (SELECT r.m -> 'ledger' AS led OFFSET 0) y
		      OFFSET 0) l
	WHERE i.outcome <> 'unchanged'
	ORDER BY i.seq;

	-- Steps and notes: one statement each (a loop of single inserts
	-- costs several times more), after a check of their shape.
	IF EXISTS (SELECT 1 FROM unnest(items) i,
			 LATERAL (SELECT records -> (i.ord - 1) AS rec OFFSET 0) r
		   WHERE i.outcome <> 'unchanged' AND
			 (jsonb_typeof(coalesce(r.rec -> 'measurements' -> 'steps', '[]')) <> 'array' OR
			  jsonb_typeof(coalesce(r.rec -> 'notes', '[]')) <> 'array' OR
			  EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.rec -> 'measurements' -> 'steps', '[]')) s
				  WHERE jsonb_typeof(s) <> 'object' OR
					jsonb_typeof(coalesce(s -> 'joules', '{}')) <> 'object') OR
			  EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.rec -> 'notes', '[]')) n
				  WHERE jsonb_typeof(n) <> 'object'))) THEN
		RAISE EXCEPTION 'ceems record: measurements.steps and notes must be arrays of objects'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s,
		cpu_s, mem_peak_bytes, package_j, dram_j, gpu_j, node_j, tasks)
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
	       (s -> 'joules' ->> 'node')::double precision,
	       -- Absent (plugins and agents before it): unknown, NULL (028).
	       (s ->> 'tasks')::integer
	FROM unnest(items) i,
	     jsonb_array_elements((records -> (i.ord - 1)) -> 'measurements' -> 'steps') s
	WHERE i.outcome <> 'unchanged';
	INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text,
				     saving_j, saving_g)
	SELECT i.job_key, i.node, (n.ord - 1)::smallint,
	       (n.value ->> 'id'),
	       (n.value ->> 'text'),
	       (n.value ->> 'saving_j')::double precision,
	       (n.value ->> 'saving_g')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements((records -> (i.ord - 1)) -> 'notes') WITH ORDINALITY n(value, ord)
	WHERE i.outcome <> 'unchanged';
END
$$;
COMMENT ON FUNCTION ceems.store_job_nodes(jsonb, ceems.batch_record[]) IS
	'The job_nodes, job_steps and job_notes rows of the applied records of a batch (or of one record): for store_job_record and store_job_records only (not granted)';

-- The GPUs of stored records: P_KEYS[i], P_NODES[i] is the job_nodes
-- row just written for the record P_RECORDS[i].  Rows, then the node
-- rows' GPU columns, one statement each.
CREATE OR REPLACE FUNCTION ceems.store_job_gpus(p_keys bigint[], p_nodes text[], p_records jsonb[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM unnest(p_records) r
		   WHERE jsonb_typeof(coalesce(r -> 'measurements' -> 'gpus', '[]')) <> 'array') OR
	   EXISTS (SELECT 1 FROM unnest(p_records) r,
			 jsonb_array_elements(coalesce(r -> 'measurements' -> 'gpus', '[]')) g
		   WHERE jsonb_typeof(g) <> 'object') THEN
		RAISE EXCEPTION 'ceems record: measurements.gpus must be an array of objects'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO ceems.job_gpus (job_key, node, ordinal, uuid, bus_id,
		instance, share, power_integrated, energy_j, util_pct,
		mem_util_pct, mem_peak_bytes, mem_total_bytes, sm_active_pct,
		sm_occupancy_pct, tensor_active_pct, fp_active_pct)
	SELECT i.k, i.n, (g.ord - 1)::smallint,
	       (g.value ->> 'uuid'),
	       (g.value ->> 'bus_id'),
	       (g.value ->> 'instance')::integer,
	       (g.value ->> 'share')::double precision,
	       coalesce((g.value ->> 'power_integrated')::boolean, false),
	       (g.value ->> 'energy_j')::double precision,
	       (g.value ->> 'util_pct')::double precision,
	       (g.value ->> 'mem_util_pct')::double precision,
	       (g.value ->> 'mem_peak_bytes')::bigint,
	       (g.value ->> 'mem_total_bytes')::bigint,
	       (g.value ->> 'sm_active_pct')::double precision,
	       (g.value ->> 'sm_occupancy_pct')::double precision,
	       (g.value ->> 'tensor_active_pct')::double precision,
	       (g.value ->> 'fp_active_pct')::double precision
	FROM unnest(p_keys, p_nodes, p_records) i(k, n, r),
	     jsonb_array_elements(i.r -> 'measurements' -> 'gpus') WITH ORDINALITY g(value, ord)
	WHERE jsonb_typeof(i.r -> 'measurements' -> 'gpus') = 'array';
	UPDATE ceems.job_nodes jn SET
		gpu_util_pct = a.util_pct,
		gpu_mem_peak_bytes = a.mem_peak_bytes,
		gpu_mem_total_bytes = a.mem_total_bytes,
		gpu_sm_active_pct = a.sm_active_pct
	FROM (SELECT g.job_key, g.node,
		     ceems.gpu_mean(sum(g.share * g.util_pct),
				    sum(g.share) FILTER (WHERE g.util_pct IS NOT NULL)) AS util_pct,
		     CASE WHEN count(*) = count(g.mem_peak_bytes)
			  THEN ceems.gpu_bytes(sum(g.mem_peak_bytes)) END AS mem_peak_bytes,
		     CASE WHEN count(*) = count(g.mem_total_bytes)
			  THEN ceems.gpu_bytes(sum(g.mem_total_bytes)) END AS mem_total_bytes,
		     ceems.gpu_mean(sum(g.share * g.sm_active_pct),
				    sum(g.share) FILTER (WHERE g.sm_active_pct IS NOT NULL)) AS sm_active_pct
	      FROM unnest(p_keys, p_nodes) i(k, n)
	      JOIN ceems.job_gpus g ON g.job_key = i.k AND g.node = i.n
	      GROUP BY g.job_key, g.node) a
	WHERE jn.job_key = a.job_key AND jn.node = a.node;
END
$$;
COMMENT ON FUNCTION ceems.store_job_gpus(bigint[], text[], jsonb[]) IS
	'The gpus of records just stored into job_gpus, and their nodes'' GPU columns: for store_job_record and store_job_records only (not granted)';

-- The IO and network of RECORD into its node row of job P_KEY.
CREATE OR REPLACE FUNCTION ceems.store_job_node_io(p_key bigint, record jsonb)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	UPDATE ceems.job_nodes n SET
		-- Counted per tick (every descriptor, no errors): not the
		-- system calls on files that 'syscall' says (032).
		io_source = CASE WHEN x.io ->> 'counting' = 'per-tick' THEN 'task'
				 WHEN x.io IS NOT NULL THEN 'syscall'
				 WHEN n.io_read_bytes IS NOT NULL OR
				      n.io_write_bytes IS NOT NULL THEN 'block' END,
		io_read_bytes = coalesce((x.io ->> 'read_bytes')::bigint, n.io_read_bytes),
		io_write_bytes = coalesce((x.io ->> 'write_bytes')::bigint, n.io_write_bytes),
		io_read_ops = (x.io ->> 'read_ops')::bigint,
		io_write_ops = (x.io ->> 'write_ops')::bigint,
		io_read_errors = (x.io ->> 'read_errors')::bigint,
		io_write_errors = (x.io ->> 'write_errors')::bigint,
		net_tcp4_in_bytes = (x.net #>> '{tcp4,in_bytes}')::bigint,
		net_tcp4_out_bytes = (x.net #>> '{tcp4,out_bytes}')::bigint,
		net_tcp6_in_bytes = (x.net #>> '{tcp6,in_bytes}')::bigint,
		net_tcp6_out_bytes = (x.net #>> '{tcp6,out_bytes}')::bigint,
		net_udp4_in_bytes = (x.net #>> '{udp4,in_bytes}')::bigint,
		net_udp4_out_bytes = (x.net #>> '{udp4,out_bytes}')::bigint,
		net_udp6_in_bytes = (x.net #>> '{udp6,in_bytes}')::bigint,
		net_udp6_out_bytes = (x.net #>> '{udp6,out_bytes}')::bigint,
		net_in_msgs = CASE WHEN x.net IS NOT NULL THEN
			coalesce((x.net #>> '{tcp4,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{tcp6,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp4,in_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp6,in_msgs}')::bigint, 0) END,
		net_out_msgs = CASE WHEN x.net IS NOT NULL THEN
			coalesce((x.net #>> '{tcp4,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{tcp6,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp4,out_msgs}')::bigint, 0) +
			coalesce((x.net #>> '{udp6,out_msgs}')::bigint, 0) END,
		tcp_retrans = (x.net ->> 'tcp_retrans')::bigint,
		ebpf_dropped = (x.m ->> 'ebpf_dropped')::bigint,
		ebpf_absent = x.m ->> 'ebpf_absent',
		ebpf_unmeasured_s = (x.m ->> 'ebpf_unmeasured_s')::double precision
	FROM (SELECT record -> 'measurements' AS m,
		     CASE WHEN jsonb_typeof(record #> '{measurements,io}') = 'object'
			  THEN record #> '{measurements,io}' END AS io,
		     CASE WHEN jsonb_typeof(record #> '{measurements,net}') = 'object'
			  THEN record #> '{measurements,net}' END AS net) x
	WHERE n.job_key = p_key AND n.node = record #>> '{job,node}';
END
$$;
COMMENT ON FUNCTION ceems.store_job_node_io(bigint, jsonb) IS
	'The IO and network figures of a record into the node row its writer stored (not granted)';

-- One record's rows: its node, steps, notes, GPUs, IO and network; a
-- measured record is never replaced by one of the job's metadata alone.
CREATE OR REPLACE FUNCTION ceems.store_job_record(record jsonb, OUT outcome text, OUT stored_key bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	job jsonb;
	m jsonb;
	led jsonb;
	em jsonb;
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

	-- The figures' shape (an error names the member): the rows are
	-- store_job_nodes's, as the batch's.
	led := ceems.json_object(m, 'ledger', 'measurements');
	PERFORM ceems.json_object(m, 'usage', 'measurements');
	v_pkg := ceems.json_object(led, 'package', 'measurements.ledger');
	PERFORM ceems.json_object(led, 'dram', 'measurements.ledger');
	PERFORM ceems.json_object(led, 'gpu', 'measurements.ledger');
	PERFORM ceems.json_object(led, 'node', 'measurements.ledger');
	em := ceems.json_object(led, 'emissions', 'measurements.ledger');
	PERFORM ceems.json_object(em, 'factor', 'measurements.ledger.emissions');
	PERFORM ceems.json_float(v_pkg, 'joules', 'ledger.package');
	PERFORM ceems.store_job_nodes(jsonb_build_array(record),
		ARRAY[ROW(1, 1, NULL, v_cluster, v_jobid, v_uid, v_start, v_node,
			  v_written, v_digest, v_key, v_outcome,
			  v_outcome = 'replaced', NULL, NULL)::ceems.batch_record]);
	IF (record -> 'measurements') ? 'gpus' THEN
		PERFORM ceems.store_job_gpus(ARRAY[v_key], ARRAY[v_node], ARRAY[record]);
	END IF;
	IF record ? 'marks' THEN
		PERFORM ceems.store_job_marks(ARRAY[v_key], ARRAY[v_node], ARRAY[record]);
	END IF;
	PERFORM ceems.store_job_node_io(v_key, record);

	outcome := v_outcome;
	stored_key := v_key;
END
$$;
COMMENT ON FUNCTION ceems.store_job_record(jsonb) IS
	'upsert_job_record without the refresh of the jobs row: for upsert_job_record and upsert_job_records only (not granted)';

-- store_job_record set-wise: the batch's rows, its new jobs' rows with
-- their steps, then the GPUs, IO and network of the records applied.
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
	old_key bigint;		-- a stored row a record replaces
	old_node text;
	stored record;		-- the applied records that have GPUs
BEGIN
	-- Parse and validate every record.  The checks are the loop's
	-- (store_job_record's), made on every record, applied or not: a
	-- stricter check here only sends the batch to the loop.  The shape
	-- of the steps and notes is checked where they are stored
	-- (store_job_nodes), as in the loop.
	-- The identity's numbers are known to be JSON numbers here: cast
	-- directly (a fraction, which the loop may accept as a whole number,
	-- raises and sends the batch to the loop).
	items := ARRAY(
		SELECT ROW(row_number() OVER (ORDER BY p.k_cluster, p.k_jobid,
						     p.k_start, p.ord),
			   p.ord, NULL,
			   CASE WHEN p.ok THEN p.cluster END,
			   CASE WHEN p.ok THEN p.jobid::bigint END,
			   CASE WHEN p.ok THEN p.uid::bigint END,
			   CASE WHEN p.ok THEN to_timestamp(p.start_time::bigint) END,
			   CASE WHEN p.ok THEN p.node END,
			   CASE WHEN p.ok THEN to_timestamp(p.written_at::bigint) END,
			   p.digest, NULL, NULL, NULL,
			   p.by_plugin, NULL)::ceems.batch_record
		-- Only what the batch's rows need is taken out here: the
		-- records stay in RECORDS, and each later statement takes its
		-- record from there by position (records -> (ord - 1)).  Rows
		-- that carried the whole record through the sorts and arrays
		-- of the outcomes cost a third of a batch's time (013).
		FROM (SELECT e.ord::integer AS ord,
			     x.job -> 'cluster' AS k_cluster,
			     x.job -> 'jobid' AS k_jobid,
			     x.job -> 'start_time' AS k_start,
			     x.job ->> 'cluster' AS cluster,
			     x.job ->> 'jobid' AS jobid,
			     x.job ->> 'uid' AS uid,
			     x.job ->> 'start_time' AS start_time,
			     x.job ->> 'node' AS node,
			     e.value ->> 'written_at' AS written_at,
			     md5(e.value::text) AS digest,
			     coalesce(e.value ->> 'finalized_by', '') <> 'agent' AS by_plugin,
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
	IF EXISTS (SELECT 1 FROM unnest(items) i,
			 LATERAL (SELECT records -> (i.ord - 1) AS rec OFFSET 0) r
		   WHERE i.cluster IS NULL OR i.jobid IS NULL OR i.uid IS NULL OR
			 i.start_time IS NULL OR i.node IS NULL OR i.written_at IS NULL OR
			 (r.rec -> 'measurements' ->> 'jobid')::bigint IS DISTINCT FROM i.jobid OR
			 (r.rec -> 'measurements' ->> 'uid')::bigint IS DISTINCT FROM i.uid) THEN
		RAISE EXCEPTION 'ceems records: a record is not valid: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	INSERT INTO ceems.clusters (name)
		SELECT DISTINCT i.cluster FROM unnest(items) i ORDER BY 1
		ON CONFLICT (name) DO NOTHING;

	-- Statistics that describe a much smaller table than there is: a
	-- new or restored database (none at all), a table emptied by
	-- TRUNCATE, or one grown faster than autovacuum looked.  Every
	-- index of jobs then looks as good as another, and the plans kept
	-- for the session found a job through jobs_start, reading every job
	-- that started at the same second (all the tasks of an array job),
	-- each batch slower than the last.  Gather them when a table has
	-- more than doubled since (a few times while a database fills;
	-- autovacuum keeps them after); ANALYZE invalidates the kept plans.
	-- Only the columns the batch's lookups choose an index by: all of
	-- them took more time than the plans saved while a database filled.
	IF EXISTS (SELECT 1 FROM pg_class c
		   WHERE c.oid IN ('ceems.jobs'::regclass, 'ceems.job_nodes'::regclass)
		     AND pg_relation_size(c.oid) >
			 current_setting('block_size')::bigint * (2 * c.relpages::bigint + 8)) THEN
		ANALYZE ceems.jobs (cluster_id, jobid, start_time),
			ceems.job_nodes (job_key, node);
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
	-- Every lookup is one index probe per record (LATERAL, OFFSET 0),
	-- and a new job finds its key by its rank among the batch's new
	-- jobs: a generic plan, which expects a handful of rows, joined the
	-- batch to its new jobs by a nested loop (n * n rows compared) and
	-- job_nodes by a scan of the whole table, kept for the session (013).
	items := ARRAY(
		WITH b AS (
			SELECT i.*, c.cluster_id, j.job_key AS stored_key,
			       j.uid AS stored_uid,
			       CASE WHEN j.job_key IS NULL
				    THEN dense_rank() OVER (PARTITION BY j.job_key IS NULL
							    ORDER BY c.cluster_id, i.jobid, i.start_time)
			       END AS new_rank
			FROM unnest(items) i
			JOIN ceems.clusters c ON c.name = i.cluster
			LEFT JOIN LATERAL (SELECT s.job_key, s.uid FROM ceems.jobs s
					   WHERE s.cluster_id = c.cluster_id AND s.jobid = i.jobid
					     AND s.start_time = i.start_time
					   OFFSET 0) j ON true),
		-- Drawn in the new jobs' identity order, as the loop would.
		new_keys AS MATERIALIZED (
			SELECT ARRAY(SELECT nextval('ceems.jobs_job_key_seq')
				     FROM generate_series(1, (SELECT max(b.new_rank) FROM b))) AS keys),
		k AS (
			SELECT b.seq, b.ord, b.cluster, b.jobid, b.uid,
			       b.start_time, b.node, b.written_at, b.digest,
			       b.by_plugin, b.stored_key IS NULL AS fresh,
			       coalesce(b.stored_key, nk.keys[b.new_rank]) AS job_key,
			       coalesce(b.stored_uid,
					first_value(b.uid) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time
								 ORDER BY b.seq)) AS job_uid,
			       jn.finalized_by <> 'agent' AS old_by_plugin,
			       jn.written_at AS old_written_at,
			       jn.record_digest AS old_digest,
			       count(*) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time, b.node) AS records
			FROM b
			CROSS JOIN new_keys nk
			LEFT JOIN LATERAL (SELECT o.finalized_by, o.written_at, o.record_digest
					   FROM ceems.job_nodes o
					   WHERE o.job_key = b.stored_key AND o.node = b.node
					   OFFSET 0) jn ON true)
		SELECT ROW(k.seq, k.ord, NULL, k.cluster, k.jobid, k.uid,
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
	-- One probe per replaced row, if any: as a join, a plan made on a
	-- small table read the whole of job_nodes for every batch (013).
	FOR old_key, old_node IN
		SELECT i.job_key, i.node FROM unnest(items) i
		WHERE i.outcome <> 'unchanged' AND i.replaces
	LOOP
		DELETE FROM ceems.job_nodes jn
			WHERE jn.job_key = old_key AND jn.node = old_node;
	END LOOP;

	PERFORM ceems.store_job_nodes(records, items);

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
		emission_factor_mixed, steps, emission_fallback,
		package_idle_unlearned, dram_idle_unlearned, energy_err_j)
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
	       x.emission_factor_mixed, x.steps, x.emission_fallback,
	       x.package_idle_unlearned, x.dram_idle_unlearned, x.energy_err_j
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

	-- The GPUs of the records applied, then their jobs' GPU columns
	-- (the new jobs' too); then the IO and network of each.
	SELECT array_agg(i.job_key) AS keys, array_agg(i.node) AS nodes,
	       array_agg(r.rec) AS recs INTO stored
	FROM unnest(items) i,
	     LATERAL (SELECT records -> (i.ord - 1) AS rec OFFSET 0) r
	WHERE i.outcome <> 'unchanged' AND (r.rec -> 'measurements') ? 'gpus';
	IF stored.keys IS NOT NULL THEN
		PERFORM ceems.store_job_gpus(stored.keys, stored.nodes, stored.recs);
		PERFORM ceems.refresh_job_gpus(stored.keys);
	END IF;
	-- The work the records applied reported of their jobs.
	SELECT array_agg(i.job_key) AS keys, array_agg(i.node) AS nodes,
	       array_agg(r.rec) AS recs INTO stored
	FROM unnest(items) i,
	     LATERAL (SELECT records -> (i.ord - 1) AS rec OFFSET 0) r
	WHERE i.outcome <> 'unchanged' AND r.rec ? 'marks';
	IF stored.keys IS NOT NULL THEN
		PERFORM ceems.store_job_marks(stored.keys, stored.nodes, stored.recs);
	END IF;
	PERFORM ceems.store_job_node_io(i.job_key, records -> (i.ord - 1))
		FROM unnest(items) i
		WHERE i.outcome <> 'unchanged';

	RETURN ARRAY(SELECT i.outcome FROM unnest(items) i ORDER BY i.ord);
END
$$;
COMMENT ON FUNCTION ceems.store_job_records(jsonb) IS
	'store_job_record set-wise: the loop''s result, or an error (then upsert_job_records runs the loop); for upsert_job_records only (not granted)';
