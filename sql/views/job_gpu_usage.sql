-- sql/views/job_gpu_usage.sql - A job's GPUs, one row per device.

-- Per GPU of a job, for admins and Grafana (security_invoker, as the
-- views of 004: a user sees their own jobs' GPUs only).
CREATE OR REPLACE VIEW ceems.job_gpu_usage WITH (security_invoker = true) AS
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
