-- 005_samples.sql - optional per-job time series (jobs submitted with
-- --ceems-series, or all jobs if configured): one row per node and
-- interval, partitioned by month so that old months are dropped or
-- downsampled cheaply.
--
-- Partitions: ceems.create_sample_partition(month) makes one month's;
-- ceems.ensure_sample_partitions(months_ahead) makes the current month's
-- and the next ones (ceems-admin db migrate calls it; run it monthly from
-- cron too).  Samples of a month without a partition land in
-- job_samples_default: never refused, never lost; create the partition
-- before that month begins, since PostgreSQL refuses to create one whose
-- range already has rows in the default partition.
--
-- Downsampling: ceems.downsample_job_samples(older_than, bucket_s)
-- replaces every sample older than OLDER_THAN whose resolution is finer
-- than BUCKET_S by one row per bucket: energies and CPU time summed,
-- memory the bucket's maximum, resolution_s = BUCKET_S.  Totals over any
-- whole bucket are kept exactly; only the shape within a bucket is lost.
-- Example policy: raw for 30 days, 5 minutes for a year, then drop the
-- month partitions: DROP TABLE ceems.job_samples_y2024m01.

CREATE TABLE ceems.job_samples (
	job_key bigint NOT NULL,
	node text NOT NULL,
	t timestamptz NOT NULL,
	resolution_s integer NOT NULL CHECK (resolution_s > 0),
	interval_s double precision NOT NULL CHECK (interval_s > 0),
	cpu_s double precision CHECK (cpu_s >= 0),
	mem_bytes bigint CHECK (mem_bytes >= 0),
	package_j ceems.joules,
	dram_j ceems.joules,
	gpu_j ceems.joules,
	node_j ceems.joules,
	PRIMARY KEY (job_key, node, t)
) PARTITION BY RANGE (t);
COMMENT ON TABLE ceems.job_samples IS
	'Per-job time series per node, partitioned by month (job_samples_yYYYYmMM), downsampled by ceems.downsample_job_samples';
COMMENT ON COLUMN ceems.job_samples.t IS 'Start of the interval';
COMMENT ON COLUMN ceems.job_samples.resolution_s IS 'Nominal interval length: the agent tick for raw rows, the bucket for downsampled ones';
COMMENT ON COLUMN ceems.job_samples.interval_s IS 'Time the row covers (sum of the intervals merged into it)';
COMMENT ON COLUMN ceems.job_samples.cpu_s IS 'CPU time used in the interval';
COMMENT ON COLUMN ceems.job_samples.mem_bytes IS 'Memory in use at the end of the interval (largest, once downsampled)';
COMMENT ON COLUMN ceems.job_samples.package_j IS 'Package energy charged to the job in the interval, J';

CREATE TABLE ceems.job_samples_default PARTITION OF ceems.job_samples DEFAULT;

CREATE FUNCTION ceems.create_sample_partition(p_month date)
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

CREATE FUNCTION ceems.ensure_sample_partitions(months_ahead integer DEFAULT 2)
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

-- The writer's entry point for series, after upsert_job_record of the
-- same job (the job must exist):
--   {"cluster": C, "jobid": N, "start_time": UNIX, "node": H,
--    "resolution_s": S, "samples": [{"t": UNIX, "interval_s": X,
--    "cpu_s": X, "mem_bytes": N, "package_j": X, "dram_j": X,
--    "gpu_j": X, "node_j": X}, ...]}
-- Unknown figures are left out.  Idempotent: a sample already stored
-- (same job, node and t) is kept as it is.  Returns the rows added.
CREATE FUNCTION ceems.add_job_samples(series jsonb)
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
		interval_s, cpu_s, mem_bytes, package_j, dram_j, gpu_j, node_j)
	SELECT v_key, v_node, ceems.json_time(s, 't', 'samples[]'), v_res,
	       coalesce(ceems.json_float(s, 'interval_s', 'samples[]'), v_res),
	       ceems.json_float(s, 'cpu_s', 'samples[]'),
	       ceems.json_int(s, 'mem_bytes', 'samples[]'),
	       ceems.json_float(s, 'package_j', 'samples[]'),
	       ceems.json_float(s, 'dram_j', 'samples[]'),
	       ceems.json_float(s, 'gpu_j', 'samples[]'),
	       ceems.json_float(s, 'node_j', 'samples[]')
	FROM jsonb_array_elements(series -> 'samples') s
	ON CONFLICT (job_key, node, t) DO NOTHING;
	GET DIAGNOSTICS v_added = ROW_COUNT;
	RETURN v_added;
END
$$;
COMMENT ON FUNCTION ceems.add_job_samples(jsonb) IS
	'Store a job''s time series on one node (format in the migration and doc/storage.md); idempotent; returns rows added';

CREATE FUNCTION ceems.downsample_job_samples(older_than interval, bucket_s integer)
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
	       sum(dram_j) AS dram_j, sum(gpu_j) AS gpu_j, sum(node_j) AS node_j
	FROM ceems.job_samples
	WHERE t < cutoff AND resolution_s < bucket_s
	GROUP BY 1, 2, 3;
	DELETE FROM ceems.job_samples WHERE t < cutoff AND resolution_s < bucket_s;
	INSERT INTO ceems.job_samples (job_key, node, t, resolution_s,
		interval_s, cpu_s, mem_bytes, package_j, dram_j, gpu_j, node_j)
	SELECT d.job_key, d.node, d.t, bucket_s, d.interval_s, d.cpu_s,
	       d.mem_bytes, d.package_j, d.dram_j, d.gpu_j, d.node_j
	FROM ceems_downsampled d
	-- a sample that came late into a bucket merged before
	ON CONFLICT (job_key, node, t) DO UPDATE SET
		interval_s = ceems.job_samples.interval_s + EXCLUDED.interval_s,
		cpu_s = ceems.job_samples.cpu_s + EXCLUDED.cpu_s,
		mem_bytes = greatest(ceems.job_samples.mem_bytes, EXCLUDED.mem_bytes),
		package_j = ceems.job_samples.package_j + EXCLUDED.package_j,
		dram_j = ceems.job_samples.dram_j + EXCLUDED.dram_j,
		gpu_j = ceems.job_samples.gpu_j + EXCLUDED.gpu_j,
		node_j = ceems.job_samples.node_j + EXCLUDED.node_j;
	GET DIAGNOSTICS v_rows = ROW_COUNT;
	DROP TABLE ceems_downsampled;
	RETURN v_rows;
END
$$;
COMMENT ON FUNCTION ceems.downsample_job_samples(interval, integer) IS
	'Merge samples older than OLDER_THAN into BUCKET_S buckets (sums; memory: max); returns the rows written';

ALTER TABLE ceems.job_samples ENABLE ROW LEVEL SECURITY;
CREATE POLICY job_samples_visible ON ceems.job_samples FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_samples.job_key));

GRANT SELECT ON ceems.job_samples TO ceems_reader;
GRANT EXECUTE ON FUNCTION ceems.add_job_samples(jsonb) TO ceems_writer;
GRANT EXECUTE ON FUNCTION ceems.ensure_sample_partitions(integer),
		ceems.downsample_job_samples(interval, integer)
	TO ceems_admin;

SELECT ceems.ensure_sample_partitions(2);

CALL ceems.adopt_objects();
