-- 005_samples.sql - optional per-job time series (jobs submitted with
-- --ceems-series, or all jobs if configured): one row per node and
-- interval, partitioned by month so that old months are dropped or
-- downsampled cheaply.
--
-- Partitions: ceems.create_sample_partition(month) makes one month's;
-- ceems.ensure_sample_partitions(months_ahead) makes the current month's
-- and the next ones (sql/functions/samples.sql calls it whenever
-- ceems-admin applies the definitions; run it monthly from cron too).  Samples of a month without a partition land in
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

ALTER TABLE ceems.job_samples ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON ceems.job_samples TO ceems_reader;

CALL ceems.adopt_objects();
