-- 019_series_gpu_util.sql - a job's time series carries its GPU
-- utilisation.
--
-- The node agent's series (lib/agent_series.h) has a column
-- gpu_util_pct: per tick the mean utilisation of the GPUs the job holds,
-- then over the row the mean weighted by time; null when the job holds
-- no GPU or nothing was read.  job_samples keeps it, add_job_samples
-- reads it ("gpu_util_pct" in a sample; absent or null: unknown, as in
-- the records written before it), and downsample_job_samples averages it
-- over a bucket weighted by the time of the rows that have it, so that a
-- row without it does not count as 0.  A row's GPU power needs no
-- column: it is gpu_j / interval_s.

ALTER TABLE ceems.job_samples
	ADD COLUMN gpu_util_pct double precision
		CHECK (gpu_util_pct >= 0 AND gpu_util_pct <= 100);
COMMENT ON COLUMN ceems.job_samples.gpu_util_pct IS
	'Mean utilisation of the job''s GPUs in the interval, % (per tick the mean over its GPUs, then weighted by time; once downsampled, by the time of the rows that had it); null: no GPU, or not read';

CALL ceems.adopt_objects();
