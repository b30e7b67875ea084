-- sql/views/usage.sql - usage and idle-allocated waste, per job, day,
-- month, user, account and partition; per GPU of a job.

-- 004_views.sql - usage reports for admins (and Grafana).  Every view is
-- security_invoker: it runs with the rights of whoever queries it, so
-- row-level security applies and a user who queries a view sees the sums
-- of their own jobs only.
--
-- A job counts in the day (month) of its end, or of its start while it
-- has no end time.  Energies in kWh, emissions in kg CO2e.  Efficiencies
-- are weighted over the jobs that have both terms: CPU efficiency = CPU
-- time / allocated CPU time.
--
-- job_usage and job_gpu_usage, per job, keep the tables' double
-- precision: dashboards sum them over any range.  The reports (per day,
-- per month, the top wasters) are read by people: their figures are
-- numeric, rounded once, where each view sums the unrounded figures of
-- job_usage, to places finer than anything measured: energy (kWh) and
-- emissions (kg) to 6 places (1 mWh = 3.6 J; 1 mg), hours to 4 (0.36 s),
-- efficiencies and shares to 4 (0.01 %).  Sums of their rows stay exact.
CREATE OR REPLACE VIEW ceems.job_usage WITH (security_invoker = true) AS
SELECT j.job_key,
       c.name AS cluster,
       j.jobid,
       j.user_name,
       j.account,
       j.partition,
       coalesce(j.end_time, j.start_time) AS accounted_at,
       j.elapsed_s,
       j.total_j / 3.6e6 AS energy_kwh,
       -- Emissions without energy are unknown: rows stored before the
       -- writers left them out hold 0 g there.
       CASE WHEN j.total_j IS NOT NULL THEN j.emissions_g / 1000 END AS emissions_kg,
       j.alloc_cpus * j.elapsed_s / 3600 AS cpu_hours_alloc,
       j.cpu_time_s / 3600 AS cpu_hours_used,
       -- the record leaves alloc_gpus out when the job holds none
       coalesce(j.alloc_gpus, 0) * j.elapsed_s / 3600 AS gpu_hours,
       j.cpu_efficiency,
       j.mem_efficiency,
       -- Energy spent on held but idle resources: the static power of the
       -- cores (memory) the job held, times the share it did not use.
       -- An estimate: the ledger charges static power by allocation.
       j.package_static_j * (1 - ceems.at_most_one(j.cpu_efficiency)) AS idle_cpu_j,
       j.dram_static_j * (1 - ceems.at_most_one(j.mem_efficiency)) AS idle_mem_j,
       coalesce(j.package_static_j * (1 - ceems.at_most_one(j.cpu_efficiency)), 0) +
	       coalesce(j.dram_static_j * (1 - ceems.at_most_one(j.mem_efficiency)), 0)
	       AS idle_alloc_j,
       (j.package_static_j IS NOT NULL AND j.cpu_efficiency IS NOT NULL) OR
	       (j.dram_static_j IS NOT NULL AND j.mem_efficiency IS NOT NULL)
	       AS idle_alloc_known
FROM ceems.jobs j
JOIN ceems.clusters c USING (cluster_id);
COMMENT ON VIEW ceems.job_usage IS
	'Per job: energy (kWh), emissions (kg), CPU and GPU hours, efficiencies, energy on idle allocated resources';
COMMENT ON COLUMN ceems.job_usage.idle_alloc_j IS
	'Static energy of held but unused cores and memory, J: package_static_j x (1 - CPU efficiency) + dram_static_j x (1 - memory efficiency)';

-- The sums every usage report shares, per day or month (GRAIN, for
-- date_trunc) and cluster, by user, account and partition or by some of
-- them (NULL in the columns not grouped by): the one definition the
-- daily and monthly views share.  A plain SQL function, so that the
-- planner inlines it into each view with its constant arguments (as if
-- the view held the query), and row-level security applies to whoever
-- queries the view.
CREATE OR REPLACE FUNCTION ceems.usage_sums(grain text, by_user boolean,
					    by_account boolean, by_partition boolean)
RETURNS TABLE (period timestamptz, cluster text, user_name text, account text,
	       partition text, jobs bigint, energy_kwh numeric,
	       emissions_kg numeric, cpu_hours_alloc numeric,
	       cpu_hours_used numeric, gpu_hours numeric,
	       cpu_efficiency numeric, eff_used_hours numeric,
	       eff_alloc_hours numeric, idle_alloc_kwh numeric)
LANGUAGE sql STABLE
AS $$
SELECT date_trunc(grain, u.accounted_at),
       u.cluster,
       CASE WHEN by_user THEN u.user_name END,
       CASE WHEN by_account THEN u.account END,
       CASE WHEN by_partition THEN u.partition END,
       count(*),
       round(sum(u.energy_kwh)::numeric, 6),
       round(sum(u.emissions_kg)::numeric, 6),
       round(sum(u.cpu_hours_alloc)::numeric, 4),
       round(sum(u.cpu_hours_used)::numeric, 4),
       round(sum(u.gpu_hours)::numeric, 4),
       round((sum(u.cpu_hours_used) FILTER (WHERE u.cpu_efficiency IS NOT NULL) /
	      nullif(sum(u.cpu_hours_alloc) FILTER (WHERE u.cpu_efficiency IS NOT NULL), 0))::numeric, 4),
       -- the terms of cpu_efficiency, so that sums of rows can weigh it
       round((sum(u.cpu_hours_used) FILTER (WHERE u.cpu_efficiency IS NOT NULL))::numeric, 4),
       round((sum(u.cpu_hours_alloc) FILTER (WHERE u.cpu_efficiency IS NOT NULL))::numeric, 4),
       round((sum(u.idle_alloc_j) FILTER (WHERE u.idle_alloc_known) / 3.6e6)::numeric, 6)
FROM ceems.job_usage u
GROUP BY 1, 2, 3, 4, 5
$$;
COMMENT ON FUNCTION ceems.usage_sums(text, boolean, boolean, boolean) IS
	'Usage per day or month (grain) and cluster, by user, account and partition as asked: for the daily and monthly views';
GRANT EXECUTE ON FUNCTION ceems.usage_sums(text, boolean, boolean, boolean) TO ceems_reader;

CREATE OR REPLACE VIEW ceems.usage_daily WITH (security_invoker = true) AS
SELECT * FROM ceems.usage_sums('day', true, true, true) AS s(day);
COMMENT ON VIEW ceems.usage_daily IS
	'Usage per day, cluster, user, account and partition';

CREATE OR REPLACE VIEW ceems.usage_monthly WITH (security_invoker = true) AS
SELECT * FROM ceems.usage_sums('month', true, true, true) AS s(month);
COMMENT ON VIEW ceems.usage_monthly IS
	'Usage per month, cluster, user, account and partition';

-- The monthly views of one grouping column each (user, account,
-- partition): alike but for that column and its flag.
DO $$
DECLARE
	v record;
BEGIN
	FOR v IN SELECT * FROM (VALUES
			('usage_by_user_month', 'user_name', 'true, false, false', 'user'),
			('usage_by_account_month', 'account', 'false, true, false', 'account'),
			('usage_by_partition_month', 'partition', 'false, false, true', 'partition'))
		   AS g(name, col, flags, what) LOOP
		EXECUTE format('CREATE OR REPLACE VIEW ceems.%I WITH (security_invoker = true) AS '
			       'SELECT month, cluster, %I, jobs, energy_kwh, emissions_kg, '
			       'cpu_hours_alloc, cpu_hours_used, gpu_hours, cpu_efficiency, '
			       'idle_alloc_kwh FROM ceems.usage_sums(''month'', %s) AS s(month)',
			       v.name, v.col, v.flags);
		EXECUTE format('COMMENT ON VIEW ceems.%I IS %L',
			       v.name, 'Usage per month and ' || v.what);
	END LOOP;
END
$$;

-- Top wasters: per month and user, the energy spent on resources their
-- jobs held and left idle, largest first.
CREATE OR REPLACE VIEW ceems.idle_waste_by_user_month WITH (security_invoker = true) AS
SELECT date_trunc('month', accounted_at) AS month,
       cluster, user_name,
       count(*) AS jobs,
       round((sum(idle_alloc_j) / 3.6e6)::numeric, 6) AS idle_alloc_kwh,
       round(sum(energy_kwh)::numeric, 6) AS energy_kwh,
       round((sum(idle_alloc_j) / 3.6e6 / nullif(sum(energy_kwh), 0))::numeric, 4) AS idle_share,
       round((sum(cpu_hours_alloc) - sum(cpu_hours_used))::numeric, 4) AS idle_cpu_hours
FROM ceems.job_usage
WHERE idle_alloc_known
GROUP BY 1, 2, 3
ORDER BY month DESC, idle_alloc_kwh DESC;
COMMENT ON VIEW ceems.idle_waste_by_user_month IS
	'Top wasters: energy on held but idle cores and memory per month and user, largest first';

CREATE OR REPLACE VIEW ceems.idle_waste_jobs WITH (security_invoker = true) AS
SELECT job_key, cluster, jobid, user_name, account, partition,
       accounted_at, round((idle_alloc_j / 3.6e6)::numeric, 6) AS idle_alloc_kwh,
       round(energy_kwh::numeric, 6) AS energy_kwh,
       round(cpu_efficiency::numeric, 4) AS cpu_efficiency,
       round(mem_efficiency::numeric, 4) AS mem_efficiency
FROM ceems.job_usage
WHERE idle_alloc_known AND idle_alloc_j > 0
ORDER BY idle_alloc_j DESC;
COMMENT ON VIEW ceems.idle_waste_jobs IS
	'Jobs by energy spent on held but idle cores and memory, largest first (add a time filter)';

-- Per GPU of a job, for admins and Grafana (a user sees their own jobs'
-- GPUs only).  The job's columns are job_usage's: one definition of a
-- job's cluster, owner and accounting time.
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

GRANT SELECT ON ceems.job_usage, ceems.usage_daily, ceems.usage_monthly,
		ceems.usage_by_user_month, ceems.usage_by_account_month,
		ceems.usage_by_partition_month, ceems.idle_waste_by_user_month,
		ceems.idle_waste_jobs
	TO ceems_reader;
