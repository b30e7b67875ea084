-- 018_gpu_devices.sql - the GPUs a job held on each node, and the job's
-- GPU figures from them.
--
-- A record's measurements carry "gpus": one object per GPU the job held
-- on the node (a whole device, a MIG instance or a share of one), with
-- its identity and each figure only when measured (doc/record-format.md).
-- They are kept in ceems.job_gpus, one row per GPU and node, and summed
-- into the node's and the job's GPU columns:
--
--   * gpu_util_pct, gpu_sm_active_pct: the mean over the GPUs that have
--     the figure, each weighted by its share of its device (every GPU
--     of a job is held for the job's whole time, so the share is the
--     weight of GPU-time);
--   * gpu_mem_peak_bytes: the sum of the GPUs' peaks (each its own peak,
--     so an upper bound of the memory used at one time), when every
--     GPU's peak is known (a part of the sum would understate it);
--   * gpu_mem_total_bytes: the sum of their memory, when every GPU's is
--     known.
--
-- The writers of 012-017 are kept and wrapped (as 008 renamed
-- upsert_job_records): store_job_record and store_job_records store the
-- GPUs of each record they stored, refresh_jobs adds the job's GPU
-- figures to what it recomputes.  A replayed record changes nothing (its
-- outcome is 'unchanged'); a record that replaces another replaces its
-- GPU rows with the job_nodes row (delete_node_rows).

ALTER TABLE ceems.jobs
	ADD COLUMN gpu_mem_total_bytes bigint CHECK (gpu_mem_total_bytes > 0),
	ADD COLUMN gpu_sm_active_pct double precision
		CHECK (gpu_sm_active_pct BETWEEN 0 AND 100);
COMMENT ON COLUMN ceems.jobs.gpu_util_pct IS
	'Mean GPU utilisation (time a kernel ran), %, over the job''s GPUs that measured it, each weighted by its share of the device; NULL when none did';
COMMENT ON COLUMN ceems.jobs.gpu_mem_peak_bytes IS
	'Sum of the peaks of GPU memory of the job''s GPUs that measured it (each GPU''s own peak: an upper bound of the use at one time); NULL when none did';
COMMENT ON COLUMN ceems.jobs.gpu_mem_total_bytes IS
	'Memory of the job''s GPUs (a MIG instance''s own), summed; NULL unless every GPU''s is known';
COMMENT ON COLUMN ceems.jobs.gpu_sm_active_pct IS
	'Mean SM activity of the job''s GPUs that measured it (profiling metrics), %, weighted by share; NULL when none did';

ALTER TABLE ceems.job_nodes
	ADD COLUMN gpu_mem_total_bytes bigint CHECK (gpu_mem_total_bytes > 0),
	ADD COLUMN gpu_sm_active_pct double precision
		CHECK (gpu_sm_active_pct BETWEEN 0 AND 100);
COMMENT ON COLUMN ceems.job_nodes.gpu_util_pct IS
	'Mean GPU utilisation of the job''s GPUs on this node, weighted by share (as jobs.gpu_util_pct)';
COMMENT ON COLUMN ceems.job_nodes.gpu_mem_peak_bytes IS
	'Sum of the GPU memory peaks of the job''s GPUs on this node that measured it';
COMMENT ON COLUMN ceems.job_nodes.gpu_mem_total_bytes IS
	'Memory of the job''s GPUs on this node, summed; NULL unless every GPU''s is known';
COMMENT ON COLUMN ceems.job_nodes.gpu_sm_active_pct IS
	'Mean SM activity of the job''s GPUs on this node, weighted by share';

CREATE TABLE ceems.job_gpus (
	job_key bigint NOT NULL,
	node text NOT NULL,
	ordinal smallint NOT NULL CHECK (ordinal >= 0 AND ordinal < 16),
	uuid text CHECK (uuid <> '' AND length(uuid) < 96),
	bus_id text CHECK (bus_id <> '' AND length(bus_id) < 32),
	instance integer CHECK (instance >= 0),
	share double precision NOT NULL CHECK (share > 0 AND share <= 1),
	power_integrated boolean NOT NULL,
	energy_j ceems.joules,
	util_pct double precision CHECK (util_pct BETWEEN 0 AND 100),
	mem_util_pct double precision CHECK (mem_util_pct BETWEEN 0 AND 100),
	mem_peak_bytes bigint CHECK (mem_peak_bytes >= 0),
	mem_total_bytes bigint CHECK (mem_total_bytes > 0),
	sm_active_pct double precision CHECK (sm_active_pct BETWEEN 0 AND 100),
	sm_occupancy_pct double precision CHECK (sm_occupancy_pct BETWEEN 0 AND 100),
	tensor_active_pct double precision CHECK (tensor_active_pct BETWEEN 0 AND 100),
	fp_active_pct double precision CHECK (fp_active_pct BETWEEN 0 AND 100),
	PRIMARY KEY (job_key, node, ordinal),
	-- A GPU is known by one of its names, or it is no GPU.
	CHECK (uuid IS NOT NULL OR bus_id IS NOT NULL)
);
COMMENT ON TABLE ceems.job_gpus IS
	'A GPU a job held on one node (a whole device, a MIG instance or a share of one) and what the job did with it; NULL figures were not measured';
COMMENT ON COLUMN ceems.job_gpus.ordinal IS 'Its place in the record''s gpus array (the agent''s device order)';
COMMENT ON COLUMN ceems.job_gpus.uuid IS 'The device''s UUID (NVIDIA "GPU-...", AMD unique id); NULL unknown';
COMMENT ON COLUMN ceems.job_gpus.bus_id IS 'PCI bus id, "0000:3b:00.0"; NULL unknown';
COMMENT ON COLUMN ceems.job_gpus.instance IS 'MIG GPU instance id (NVIDIA) or compute partition (AMD); NULL for a whole device';
COMMENT ON COLUMN ceems.job_gpus.share IS 'Share of the device the job held, (0, 1]: 1 for a whole device';
COMMENT ON COLUMN ceems.job_gpus.power_integrated IS 'Data quality: its energy is power integrated over samples (the device has no energy counter)';
COMMENT ON COLUMN ceems.job_gpus.energy_j IS 'Energy of the device charged to the job, J';
COMMENT ON COLUMN ceems.job_gpus.util_pct IS 'Mean GPU utilisation: share of the time a kernel ran, %';
COMMENT ON COLUMN ceems.job_gpus.mem_util_pct IS 'Mean share of the time device memory was read or written, %';
COMMENT ON COLUMN ceems.job_gpus.mem_peak_bytes IS 'Largest GPU memory use seen';
COMMENT ON COLUMN ceems.job_gpus.mem_total_bytes IS 'The GPU''s memory (a MIG instance''s own)';
COMMENT ON COLUMN ceems.job_gpus.sm_active_pct IS 'Mean share of the SMs with a warp resident, % (profiling metrics)';
COMMENT ON COLUMN ceems.job_gpus.sm_occupancy_pct IS 'Mean warps resident over the maximum, %';
COMMENT ON COLUMN ceems.job_gpus.tensor_active_pct IS 'Mean share of the time the tensor pipes were busy, %';
COMMENT ON COLUMN ceems.job_gpus.fp_active_pct IS 'Mean share of the time the FP64/FP32/FP16 pipes were busy (the busiest), %';
CREATE INDEX job_gpus_uuid ON ceems.job_gpus (uuid);

-- As job_steps and job_notes (014): the node row checked once a
-- statement, the rows gone with their node row.
CREATE TRIGGER job_gpus_node_insert AFTER INSERT ON ceems.job_gpus
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();
CREATE TRIGGER job_gpus_node_update AFTER UPDATE ON ceems.job_gpus
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();

-- 014's delete_node_rows, with the GPUs.
CREATE OR REPLACE FUNCTION ceems.delete_node_rows()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
	gone record;
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		DELETE FROM ceems.job_steps;
		DELETE FROM ceems.job_notes;
		DELETE FROM ceems.job_gpus;
		RETURN NULL;
	END IF;
	FOR gone IN SELECT o.job_key, o.node FROM old_rows o LOOP
		DELETE FROM ceems.job_steps s
			WHERE s.job_key = gone.job_key AND s.node = gone.node;
		DELETE FROM ceems.job_notes t
			WHERE t.job_key = gone.job_key AND t.node = gone.node;
		DELETE FROM ceems.job_gpus g
			WHERE g.job_key = gone.job_key AND g.node = gone.node;
	END LOOP;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION ceems.delete_node_rows() IS
	'Trigger: the steps, notes and GPUs of deleted (or truncated) job_nodes rows go with them';

-- Users read the GPU rows of the jobs they may read (003).
ALTER TABLE ceems.job_gpus ENABLE ROW LEVEL SECURITY;
CREATE POLICY job_gpus_visible ON ceems.job_gpus FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_gpus.job_key));
COMMENT ON POLICY job_gpus_visible ON ceems.job_gpus IS
	'A GPU row is visible when its job is';
REVOKE ALL ON ceems.job_gpus FROM PUBLIC;
GRANT SELECT ON ceems.job_gpus TO ceems_reader;

-- Per GPU of a job, for admins and Grafana (security_invoker, as the
-- views of 004: a user sees their own jobs' GPUs only).
CREATE VIEW ceems.job_gpu_usage WITH (security_invoker = true) AS
SELECT g.job_key,
       c.name AS cluster,
       j.jobid,
       j.user_name,
       j.account,
       j.partition,
       coalesce(j.end_time, j.start_time) AS accounted_at,
       g.node,
       g.uuid,
       g.bus_id,
       g.instance,
       g.share,
       g.share * j.elapsed_s / 3600 AS gpu_hours,
       g.energy_j / 3.6e6 AS energy_kwh,
       g.power_integrated,
       g.util_pct,
       g.sm_active_pct,
       g.mem_peak_bytes,
       g.mem_total_bytes,
       -- As the summary's gpu-idle note: busy under 1% on average.
       g.util_pct < 1 AS idle
FROM ceems.job_gpus g
JOIN ceems.jobs j USING (job_key)
JOIN ceems.clusters c USING (cluster_id);
COMMENT ON VIEW ceems.job_gpu_usage IS
	'Per GPU a job held on a node: GPU hours (share x elapsed), energy (kWh), utilisation, SM activity, memory; idle when busy under 1%';
COMMENT ON COLUMN ceems.job_gpu_usage.idle IS
	'Busy under 1% of the time on average (the summary''s gpu-idle); NULL when utilisation was not measured';
GRANT SELECT ON ceems.job_gpu_usage TO ceems_reader;

-- The GPUs of stored records: P_KEYS[i], P_NODES[i] is the job_nodes
-- row just written for the record P_RECORDS[i].  Rows, then the node
-- rows' GPU columns, one statement each.
CREATE FUNCTION ceems.store_job_gpus(p_keys bigint[], p_nodes text[], p_records jsonb[])
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

-- A weighted mean (SUM / WEIGHT, NULL without weight) kept within
-- 0..100 where rounding would step over; a sum of bytes within bigint.
-- (Not least() and greatest() alone: they skip a NULL, and an unknown
-- figure would read as a bound.)
CREATE FUNCTION ceems.gpu_mean(p_sum double precision, p_weight double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_weight > 0 THEN least(100, greatest(0, p_sum / p_weight)) END;
COMMENT ON FUNCTION ceems.gpu_mean(double precision, double precision) IS
	'SUM / WEIGHT within [0, 100], NULL without weight: the GPU means';
CREATE FUNCTION ceems.gpu_bytes(p_sum numeric)
RETURNS bigint LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_sum IS NOT NULL THEN least(p_sum, 9223372036854775807)::bigint END;
COMMENT ON FUNCTION ceems.gpu_bytes(numeric) IS
	'A sum of GPU bytes as bigint (at most its largest value)';

-- The jobs' GPU columns from all their GPUs, on every node; a job whose
-- rows say nothing new is not written.
CREATE FUNCTION ceems.refresh_job_gpus(p_job_keys bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
BEGIN
	UPDATE ceems.jobs j SET
		gpu_util_pct = a.util_pct,
		gpu_mem_peak_bytes = a.mem_peak_bytes,
		gpu_mem_total_bytes = a.mem_total_bytes,
		gpu_sm_active_pct = a.sm_active_pct
	FROM (SELECT k.job_key,
		     ceems.gpu_mean(sum(g.share * g.util_pct),
				    sum(g.share) FILTER (WHERE g.util_pct IS NOT NULL)) AS util_pct,
		     CASE WHEN count(*) = count(g.mem_peak_bytes)
			  THEN ceems.gpu_bytes(sum(g.mem_peak_bytes)) END AS mem_peak_bytes,
		     CASE WHEN count(g.ordinal) > 0 AND count(g.ordinal) = count(g.mem_total_bytes)
			  THEN ceems.gpu_bytes(sum(g.mem_total_bytes)) END AS mem_total_bytes,
		     ceems.gpu_mean(sum(g.share * g.sm_active_pct),
				    sum(g.share) FILTER (WHERE g.sm_active_pct IS NOT NULL)) AS sm_active_pct
	      FROM (SELECT DISTINCT u.job_key FROM unnest(p_job_keys) u(job_key)) k
	      LEFT JOIN ceems.job_gpus g ON g.job_key = k.job_key
	      GROUP BY k.job_key) a
	WHERE j.job_key = a.job_key
	  AND (j.gpu_util_pct, j.gpu_mem_peak_bytes, j.gpu_mem_total_bytes, j.gpu_sm_active_pct)
	      IS DISTINCT FROM (a.util_pct, a.mem_peak_bytes, a.mem_total_bytes, a.sm_active_pct);
END
$$;
COMMENT ON FUNCTION ceems.refresh_job_gpus(bigint[]) IS
	'The GPU columns of these jobs from their job_gpus rows: for refresh_jobs and store_job_records (not granted)';

-- 016's refresh_jobs, then the GPU columns.
ALTER FUNCTION ceems.refresh_jobs(bigint[]) RENAME TO refresh_jobs_016;
CREATE FUNCTION ceems.refresh_jobs(p_job_keys bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM ceems.refresh_jobs_016(p_job_keys);
	PERFORM ceems.refresh_job_gpus(p_job_keys);
END
$$;
COMMENT ON FUNCTION ceems.refresh_jobs(bigint[]) IS
	'Recompute the jobs rows of these jobs from their node, step and GPU rows (not granted)';

-- 017's store_job_record, then the record's GPUs.
ALTER FUNCTION ceems.store_job_record(jsonb) RENAME TO store_job_record_017;
CREATE FUNCTION ceems.store_job_record(record jsonb, OUT outcome text, OUT stored_key bigint)
LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s record;
BEGIN
	s := ceems.store_job_record_017(record);
	IF s.outcome <> 'unchanged' AND (record -> 'measurements') ? 'gpus' THEN
		PERFORM ceems.store_job_gpus(ARRAY[s.stored_key],
					     ARRAY[record -> 'job' ->> 'node'],
					     ARRAY[record]);
	END IF;
	outcome := s.outcome;
	stored_key := s.stored_key;
END
$$;
COMMENT ON FUNCTION ceems.store_job_record(jsonb) IS
	'upsert_job_record without the refresh of the jobs row: for upsert_job_record and upsert_job_records only (not granted)';

-- 016's store_job_records, then the GPUs of the records it stored and
-- their jobs' GPU columns (its own refresh ran before the GPU rows were
-- there).
ALTER FUNCTION ceems.store_job_records(jsonb) RENAME TO store_job_records_016;
CREATE FUNCTION ceems.store_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
	outcomes text[];
	stored record;
BEGIN
	outcomes := ceems.store_job_records_016(records);
	SELECT array_agg(j.job_key) AS keys, array_agg(e.rec -> 'job' ->> 'node') AS nodes,
	       array_agg(e.rec) AS recs INTO stored
	FROM unnest(outcomes) WITH ORDINALITY o(outcome, ord)
	     CROSS JOIN LATERAL (SELECT records -> (o.ord::integer - 1) AS rec) e
	     JOIN ceems.clusters c ON c.name = e.rec -> 'job' ->> 'cluster'
	     JOIN ceems.jobs j ON j.cluster_id = c.cluster_id
		AND j.jobid = (e.rec -> 'job' ->> 'jobid')::bigint
		AND j.start_time = ceems.json_time(e.rec -> 'job', 'start_time', 'job')
	WHERE o.outcome <> 'unchanged' AND (e.rec -> 'measurements') ? 'gpus';
	IF stored.keys IS NOT NULL THEN
		PERFORM ceems.store_job_gpus(stored.keys, stored.nodes, stored.recs);
		PERFORM ceems.refresh_job_gpus(stored.keys);
	END IF;
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.store_job_records(jsonb) IS
	'The set-wise path of upsert_job_records: the loop''s result, or an error (then the loop runs); not granted';

CALL ceems.adopt_objects();
