-- sql/views/usage_gpus.sql - A job's GPUs, one row per device (the view
-- job_gpu_usage; after usage.sql, whose job_usage it reads).

-- Per GPU of a job, for admins and Grafana (security_invoker, as the
-- views of 004: a user sees their own jobs' GPUs only).  The job's
-- columns are job_usage's: one definition of a job's cluster, owner and
-- accounting time.
CREATE OR REPLACE VIEW ceems.job_gpu_usage WITH (security_invoker = true) AS
SELECT g.job_key,
       u.cluster, u.jobid, u.user_name, u.account, u.partition, u.accounted_at,
       g.node,
       g.uuid,
       g.bus_id,
       g.instance,
       g.share,
       g.share * u.elapsed_s / 3600 AS gpu_hours,
       g.energy_j / 3.6e6 AS energy_kwh,
       g.power_integrated,
       g.util_pct,
       g.sm_active_pct,
       g.mem_peak_bytes,
       g.mem_total_bytes,
       -- As the summary's gpu-idle note: busy under 1% on average.
       g.util_pct < 1 AS idle
FROM ceems.job_gpus g
JOIN ceems.job_usage u USING (job_key);
COMMENT ON VIEW ceems.job_gpu_usage IS
	'Per GPU a job held on a node: GPU hours (share x elapsed), energy (kWh), utilisation, SM activity, memory; idle when busy under 1%';
COMMENT ON COLUMN ceems.job_gpu_usage.idle IS
	'Busy under 1% of the time on average (the summary''s gpu-idle); NULL when utilisation was not measured';
GRANT SELECT ON ceems.job_gpu_usage TO ceems_reader;
