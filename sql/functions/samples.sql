-- sql/functions/samples.sql - the per-job time series: monthly partitions,
-- storing and downsampling samples.

CREATE OR REPLACE FUNCTION ceems.create_sample_partition(p_month date)
RETURNS text LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	first date := date_trunc('month', p_month)::date;
	name text := format('job_samples_y%sm%s', to_char(first, 'YYYY'),
			    to_char(first, 'MM'));
BEGIN
	IF to_regclass(format('ceems.%I', name)) IS NULL THEN
		BEGIN
			EXECUTE format('CREATE TABLE ceems.%I PARTITION OF ceems.job_samples FOR VALUES FROM (%L) TO (%L)',
				       name, first::timestamptz,
				       (first + interval '1 month')::timestamptz);
		EXCEPTION WHEN duplicate_table THEN
			NULL;	-- created meanwhile by another session
		END;
	END IF;
	RETURN name;
END
$$;
COMMENT ON FUNCTION ceems.create_sample_partition(date) IS
	'Create the job_samples partition of the month of P_MONTH (UTC month boundaries of the session time zone) if missing; returns its name';

CREATE OR REPLACE FUNCTION ceems.ensure_sample_partitions(months_ahead integer DEFAULT 2)
RETURNS integer LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	i integer;
BEGIN
	IF months_ahead < 0 OR months_ahead > 120 THEN
		RAISE EXCEPTION 'months_ahead must be in 0..120'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	FOR i IN 0 .. months_ahead LOOP
		PERFORM ceems.create_sample_partition((now() + make_interval(months => i))::date);
	END LOOP;
	RETURN months_ahead + 1;
END
$$;
COMMENT ON FUNCTION ceems.ensure_sample_partitions(integer) IS
	'Create the job_samples partitions of this month and the MONTHS_AHEAD next ones';

-- The writer's entry point for series (format in 005_samples.sql and
-- doc/storage.md), gpu_util_pct and the IO, network and perf columns
-- included (absent in a sample: unknown).
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
GRANT EXECUTE ON FUNCTION ceems.add_job_samples(jsonb) TO ceems_writer;
COMMENT ON FUNCTION ceems.add_job_samples(jsonb) IS
	'Store a job''s time series on one node (format in migrations 005 and 019 and doc/storage.md); idempotent; returns rows added';

-- A + B where NULL is unknown: NULL only when both are.
CREATE OR REPLACE FUNCTION ceems.add_known(a double precision, b double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a ELSE a + b END $$;

-- The mean by time of two rows' figures A (over A_S seconds) and B (over
-- B_S), where NULL is unknown: the known one alone when the other is not,
-- and kept between the two, so that rounding never takes it past a bound.
CREATE OR REPLACE FUNCTION ceems.mean_by_time(a double precision, a_s double precision,
					      b double precision, b_s double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$ SELECT CASE WHEN a IS NULL THEN b WHEN b IS NULL THEN a
		  ELSE least(greatest(a, b),
			     greatest(least(a, b), (a * a_s + b * b_s) / (a_s + b_s))) END $$;

-- Downsampling, gpu_util_pct and ipc averaged by time (ipc: the rows'
-- cycles are not stored, their time stands for them), the IO, network
-- and perf counts summed.  The means are kept between the bucket's least
-- and greatest values, so that rounding never takes them past a bound.
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
	-- a sample that came late into a bucket merged before: the rules of
	-- ceems_series_merges (lib/model/agent_series.h), as the agent
	-- coarsens: sums and greatest unknown only when both are, the
	-- utilisations weighted by the rows' time
	ON CONFLICT (job_key, node, t) DO UPDATE SET
		interval_s = ceems.add_known(ceems.job_samples.interval_s, EXCLUDED.interval_s),
		cpu_s = ceems.add_known(ceems.job_samples.cpu_s, EXCLUDED.cpu_s),
		mem_bytes = greatest(ceems.job_samples.mem_bytes, EXCLUDED.mem_bytes),
		package_j = ceems.add_known(ceems.job_samples.package_j, EXCLUDED.package_j),
		dram_j = ceems.add_known(ceems.job_samples.dram_j, EXCLUDED.dram_j),
		gpu_j = ceems.add_known(ceems.job_samples.gpu_j, EXCLUDED.gpu_j),
		node_j = ceems.add_known(ceems.job_samples.node_j, EXCLUDED.node_j),
		gpu_util_pct = ceems.mean_by_time(ceems.job_samples.gpu_util_pct,
						  ceems.job_samples.interval_s,
						  EXCLUDED.gpu_util_pct, EXCLUDED.interval_s),
		read_bytes = ceems.add_known(ceems.job_samples.read_bytes, EXCLUDED.read_bytes),
		write_bytes = ceems.add_known(ceems.job_samples.write_bytes, EXCLUDED.write_bytes),
		net_in_bytes = ceems.add_known(ceems.job_samples.net_in_bytes, EXCLUDED.net_in_bytes),
		net_out_bytes = ceems.add_known(ceems.job_samples.net_out_bytes, EXCLUDED.net_out_bytes),
		page_faults = ceems.add_known(ceems.job_samples.page_faults, EXCLUDED.page_faults),
		ctx_switches = ceems.add_known(ceems.job_samples.ctx_switches, EXCLUDED.ctx_switches),
		ipc = ceems.mean_by_time(ceems.job_samples.ipc, ceems.job_samples.interval_s,
					 EXCLUDED.ipc, EXCLUDED.interval_s);
	GET DIAGNOSTICS v_rows = ROW_COUNT;
	DROP TABLE ceems_downsampled;
	RETURN v_rows;
END
$$;
COMMENT ON FUNCTION ceems.downsample_job_samples(interval, integer) IS
	'Merge samples older than OLDER_THAN into BUCKET_S buckets (sums; memory: max; GPU utilisation: mean by time); returns the rows written';

GRANT EXECUTE ON FUNCTION ceems.ensure_sample_partitions(integer),
		ceems.downsample_job_samples(interval, integer)
	TO ceems_admin;

-- This month's partition and the next two's, made when the definitions
-- are applied (db init, and db migrate when a migration or a definition
-- changed); a month whose partition exists is left alone.
SELECT ceems.ensure_sample_partitions(2);
