-- 022_series_io_perf.sql - a job's time series carries its IO, network
-- and perf figures.
--
-- The node agent's series (lib/agent_series.h) has, per row, the bytes
-- the job's read and write system calls moved on files and its sockets
-- received and sent (eBPF), its page faults and context switches (perf
-- software events) and its instructions per cycle (perf hardware
-- events: the row's instructions over its cycles).  Each is null where
-- the node did not measure it (no eBPF, perf off, no PMU), never 0.
-- job_samples keeps them, add_job_samples reads them (absent in a sample:
-- unknown, as in the records written before them), and
-- downsample_job_samples sums the counts over a bucket and averages ipc
-- by the time of the rows that have it.
--
-- A node agent that restarted while a job ran adds the counts it kept in
-- its checkpoint to those it counted after, and says how long no agent
-- counted (measurements.ebpf_unmeasured_s, measurements.perf.unmeasured_s:
-- doc/record-format.md): job_nodes and job_node_perf keep it, NULL when
-- the whole job was counted.

ALTER TABLE ceems.job_samples
	ADD COLUMN read_bytes double precision CHECK (read_bytes >= 0),
	ADD COLUMN write_bytes double precision CHECK (write_bytes >= 0),
	ADD COLUMN net_in_bytes double precision CHECK (net_in_bytes >= 0),
	ADD COLUMN net_out_bytes double precision CHECK (net_out_bytes >= 0),
	ADD COLUMN page_faults double precision CHECK (page_faults >= 0),
	ADD COLUMN ctx_switches double precision CHECK (ctx_switches >= 0),
	ADD COLUMN ipc double precision CHECK (ipc >= 0);
COMMENT ON COLUMN ceems.job_samples.read_bytes IS
	'Bytes the job''s read system calls took from files in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.write_bytes IS
	'Bytes the job''s write system calls put to files in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.net_in_bytes IS
	'Bytes the job''s TCP and UDP sockets received in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.net_out_bytes IS
	'Bytes the job''s TCP and UDP sockets sent in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.page_faults IS
	'Page faults of the job in the interval (perf); null: not counted';
COMMENT ON COLUMN ceems.job_samples.ctx_switches IS
	'Context switches of the job in the interval (perf); null: not counted';
COMMENT ON COLUMN ceems.job_samples.ipc IS
	'Instructions per cycle of the job in the interval (perf hardware events; once downsampled, the mean by time); null: not counted';

-- A + B where NULL is unknown: NULL only when both are.
CREATE FUNCTION ceems.add_known(a double precision, b double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE a + b END $$;

-- 019's add_job_samples, with the IO, network and perf columns.
CREATE OR REPLACE FUNCTION ceems.add_job_samples(series jsonb)
RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v_key bigint;
	v_node text;
	v_res integer;
	v_added bigint;
	mon date;
BEGIN
	IF series IS NULL OR jsonb_typeof(series) <> 'object' OR
	   jsonb_typeof(series -> 'samples') IS DISTINCT FROM 'array' THEN
		RAISE EXCEPTION 'ceems series: an object with a samples array is required'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	v_node := ceems.json_text(series, 'node', 'series');
	v_res := ceems.json_int(series, 'resolution_s', 'series');
	SELECT j.job_key INTO v_key
	FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
	WHERE c.name = ceems.json_text(series, 'cluster', 'series')
	  AND j.jobid = ceems.json_int(series, 'jobid', 'series')
	  AND j.start_time = ceems.json_time(series, 'start_time', 'series');
	IF v_key IS NULL OR v_node IS NULL OR v_res IS NULL THEN
		RAISE EXCEPTION 'ceems series: no such job, or node or resolution_s missing (store the job record first)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR mon IN
		SELECT DISTINCT date_trunc('month', ceems.json_time(s, 't', 'samples[]'))::date
		FROM jsonb_array_elements(series -> 'samples') s
	LOOP
		IF mon IS NOT NULL THEN
			PERFORM ceems.create_sample_partition(mon);
		END IF;
	END LOOP;
	INSERT INTO ceems.job_samples (job_key, node, t, resolution_s,
		interval_s, cpu_s, mem_bytes, package_j, dram_j, gpu_j, node_j,
		gpu_util_pct, read_bytes, write_bytes, net_in_bytes,
		net_out_bytes, page_faults, ctx_switches, ipc)
	SELECT v_key, v_node, ceems.json_time(s, 't', 'samples[]'), v_res,
	       coalesce(ceems.json_float(s, 'interval_s', 'samples[]'), v_res),
	       ceems.json_float(s, 'cpu_s', 'samples[]'),
	       ceems.json_int(s, 'mem_bytes', 'samples[]'),
	       ceems.json_float(s, 'package_j', 'samples[]'),
	       ceems.json_float(s, 'dram_j', 'samples[]'),
	       ceems.json_float(s, 'gpu_j', 'samples[]'),
	       ceems.json_float(s, 'node_j', 'samples[]'),
	       ceems.json_float(s, 'gpu_util_pct', 'samples[]'),
	       ceems.json_float(s, 'read_bytes', 'samples[]'),
	       ceems.json_float(s, 'write_bytes', 'samples[]'),
	       ceems.json_float(s, 'net_in_bytes', 'samples[]'),
	       ceems.json_float(s, 'net_out_bytes', 'samples[]'),
	       ceems.json_float(s, 'page_faults', 'samples[]'),
	       ceems.json_float(s, 'ctx_switches', 'samples[]'),
	       ceems.json_float(s, 'ipc', 'samples[]')
	FROM jsonb_array_elements(series -> 'samples') s
	ON CONFLICT (job_key, node, t) DO NOTHING;
	GET DIAGNOSTICS v_added = ROW_COUNT;
	RETURN v_added;
END
$$;
COMMENT ON FUNCTION ceems.add_job_samples(jsonb) IS
	'Store a job''s time series on one node (format in migrations 005, 019 and 022 and doc/storage.md); idempotent; returns rows added';

-- 019's downsample_job_samples, with the counts summed (NULL only when no
-- row of the bucket had them) and ipc averaged by the time of the rows
-- that have it, kept between the bucket's least and greatest (the rows'
-- cycles are not stored: their time stands for them).
CREATE OR REPLACE FUNCTION ceems.downsample_job_samples(older_than interval, bucket_s integer)
RETURNS bigint LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	cutoff timestamptz := now() - older_than;
	v_rows bigint;
BEGIN
	IF bucket_s IS NULL OR bucket_s < 1 THEN
		RAISE EXCEPTION 'bucket_s must be a positive number of seconds'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- Only whole buckets before the cutoff, so a later run never meets
	-- a bucket it half merged.
	cutoff := to_timestamp(floor(extract(epoch FROM cutoff) / bucket_s) * bucket_s);
	CREATE TEMPORARY TABLE ceems_downsampled ON COMMIT DROP AS
	SELECT job_key, node,
	       to_timestamp(floor(extract(epoch FROM t) / bucket_s) * bucket_s) AS t,
	       sum(interval_s) AS interval_s, sum(cpu_s) AS cpu_s,
	       max(mem_bytes) AS mem_bytes, sum(package_j) AS package_j,
	       sum(dram_j) AS dram_j, sum(gpu_j) AS gpu_j, sum(node_j) AS node_j,
	       least(max(gpu_util_pct), greatest(min(gpu_util_pct),
		     sum(gpu_util_pct * interval_s) /
		     sum(interval_s) FILTER (WHERE gpu_util_pct IS NOT NULL)))
		       AS gpu_util_pct,
	       sum(read_bytes) AS read_bytes, sum(write_bytes) AS write_bytes,
	       sum(net_in_bytes) AS net_in_bytes,
	       sum(net_out_bytes) AS net_out_bytes,
	       sum(page_faults) AS page_faults,
	       sum(ctx_switches) AS ctx_switches,
	       least(max(ipc), greatest(min(ipc),
		     sum(ipc * interval_s) /
		     sum(interval_s) FILTER (WHERE ipc IS NOT NULL))) AS ipc
	FROM ceems.job_samples
	WHERE t < cutoff AND resolution_s < bucket_s
	GROUP BY 1, 2, 3;
	DELETE FROM ceems.job_samples WHERE t < cutoff AND resolution_s < bucket_s;
	INSERT INTO ceems.job_samples (job_key, node, t, resolution_s,
		interval_s, cpu_s, mem_bytes, package_j, dram_j, gpu_j, node_j,
		gpu_util_pct, read_bytes, write_bytes, net_in_bytes,
		net_out_bytes, page_faults, ctx_switches, ipc)
	SELECT d.job_key, d.node, d.t, bucket_s, d.interval_s, d.cpu_s,
	       d.mem_bytes, d.package_j, d.dram_j, d.gpu_j, d.node_j,
	       d.gpu_util_pct, d.read_bytes, d.write_bytes, d.net_in_bytes,
	       d.net_out_bytes, d.page_faults, d.ctx_switches, d.ipc
	FROM ceems_downsampled d
	-- a sample that came late into a bucket merged before: the two
	-- utilisations weighted by the rows' time
	ON CONFLICT (job_key, node, t) DO UPDATE SET
		interval_s = ceems.job_samples.interval_s + EXCLUDED.interval_s,
		cpu_s = ceems.job_samples.cpu_s + EXCLUDED.cpu_s,
		mem_bytes = greatest(ceems.job_samples.mem_bytes, EXCLUDED.mem_bytes),
		package_j = ceems.job_samples.package_j + EXCLUDED.package_j,
		dram_j = ceems.job_samples.dram_j + EXCLUDED.dram_j,
		gpu_j = ceems.job_samples.gpu_j + EXCLUDED.gpu_j,
		node_j = ceems.job_samples.node_j + EXCLUDED.node_j,
		gpu_util_pct = CASE
			WHEN ceems.job_samples.gpu_util_pct IS NULL THEN EXCLUDED.gpu_util_pct
			WHEN EXCLUDED.gpu_util_pct IS NULL THEN ceems.job_samples.gpu_util_pct
			ELSE least(greatest(ceems.job_samples.gpu_util_pct, EXCLUDED.gpu_util_pct),
				   greatest(least(ceems.job_samples.gpu_util_pct, EXCLUDED.gpu_util_pct),
					    (ceems.job_samples.gpu_util_pct * ceems.job_samples.interval_s +
					     EXCLUDED.gpu_util_pct * EXCLUDED.interval_s) /
					    (ceems.job_samples.interval_s + EXCLUDED.interval_s)))
		END,
		read_bytes = ceems.add_known(ceems.job_samples.read_bytes, EXCLUDED.read_bytes),
		write_bytes = ceems.add_known(ceems.job_samples.write_bytes, EXCLUDED.write_bytes),
		net_in_bytes = ceems.add_known(ceems.job_samples.net_in_bytes, EXCLUDED.net_in_bytes),
		net_out_bytes = ceems.add_known(ceems.job_samples.net_out_bytes, EXCLUDED.net_out_bytes),
		page_faults = ceems.add_known(ceems.job_samples.page_faults, EXCLUDED.page_faults),
		ctx_switches = ceems.add_known(ceems.job_samples.ctx_switches, EXCLUDED.ctx_switches),
		ipc = CASE
			WHEN ceems.job_samples.ipc IS NULL THEN EXCLUDED.ipc
			WHEN EXCLUDED.ipc IS NULL THEN ceems.job_samples.ipc
			ELSE least(greatest(ceems.job_samples.ipc, EXCLUDED.ipc),
				   greatest(least(ceems.job_samples.ipc, EXCLUDED.ipc),
					    (ceems.job_samples.ipc * ceems.job_samples.interval_s +
					     EXCLUDED.ipc * EXCLUDED.interval_s) /
					    (ceems.job_samples.interval_s + EXCLUDED.interval_s)))
		END;
	GET DIAGNOSTICS v_rows = ROW_COUNT;
	DROP TABLE ceems_downsampled;
	RETURN v_rows;
END
$$;
COMMENT ON FUNCTION ceems.downsample_job_samples(interval, integer) IS
	'Merge samples older than OLDER_THAN into BUCKET_S buckets (sums; memory: max; GPU utilisation and IPC: means by time); returns the rows written';

-- The time no agent counted a job's IO and network, and its perf events.
ALTER TABLE ceems.job_nodes
	ADD COLUMN ebpf_unmeasured_s double precision CHECK (ebpf_unmeasured_s >= 0);
COMMENT ON COLUMN ceems.job_nodes.ebpf_unmeasured_s IS
	'Seconds of the job no agent counted its IO and network (the node agent was down, restarted): the figures miss them; NULL: none';
ALTER TABLE ceems.job_node_perf
	ADD COLUMN unmeasured_s double precision CHECK (unmeasured_s >= 0);
COMMENT ON COLUMN ceems.job_node_perf.unmeasured_s IS
	'Seconds of the job no agent counted its perf events (the node agent was down, restarted): the counts miss them; NULL: none';

-- 020's store_job_node_io, then the time not counted.
ALTER FUNCTION ceems.store_job_node_io(bigint, jsonb) RENAME TO store_job_node_io_before_unmeasured;
CREATE FUNCTION ceems.store_job_node_io(p_key bigint, record jsonb)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM ceems.store_job_node_io_before_unmeasured(p_key, record);
	UPDATE ceems.job_nodes n SET
		ebpf_unmeasured_s = ceems.json_float(record -> 'measurements',
						     'ebpf_unmeasured_s', 'measurements')
	WHERE n.job_key = p_key AND n.node = record #>> '{job,node}';
END
$$;
COMMENT ON FUNCTION ceems.store_job_node_io(bigint, jsonb) IS
	'The IO and network figures of a record into the node row its writer stored, with the time no agent counted them (not granted)';

-- 021's add_job_perf, then the time not counted.
ALTER FUNCTION ceems.add_job_perf(jsonb) RENAME TO add_job_perf_before_unmeasured;
REVOKE EXECUTE ON FUNCTION ceems.add_job_perf_before_unmeasured(jsonb) FROM ceems_writer;
CREATE FUNCTION ceems.add_job_perf(record jsonb)
RETURNS boolean LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF NOT ceems.add_job_perf_before_unmeasured(record) THEN
		RETURN false;
	END IF;
	UPDATE ceems.job_node_perf p SET
		unmeasured_s = ceems.json_float(record #> '{measurements,perf}',
						'unmeasured_s', 'perf')
	FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
	WHERE p.job_key = j.job_key AND p.node = record #>> '{job,node}'
	  AND c.name = record #>> '{job,cluster}'
	  AND j.jobid = ceems.json_int(record -> 'job', 'jobid', 'job')
	  AND j.start_time = ceems.json_time(record -> 'job', 'start_time', 'job');
	RETURN true;
END
$$;
COMMENT ON FUNCTION ceems.add_job_perf(jsonb) IS
	'Store the perf counters of a ceems-job-record/1 document (measurements.perf) stored by upsert_job_record(s), with the time no agent counted them; true when its job_nodes row is this record''s';
GRANT EXECUTE ON FUNCTION ceems.add_job_perf(jsonb) TO ceems_writer;

CALL ceems.adopt_objects();
