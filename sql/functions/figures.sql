-- sql/functions/figures.sql - a job's figures from its node, step and GPU
-- rows: job_figures and the helpers of the figures and views.

-- min(x, 1) that keeps NULL (least() would turn NULL into 1).
CREATE OR REPLACE FUNCTION ceems.at_most_one(x double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN x > 1 THEN 1 ELSE x END;
GRANT EXECUTE ON FUNCTION ceems.at_most_one(double precision) TO ceems_reader;

-- The figures of a jobs row from its node rows and its steps
-- (job_step_sums); nested loops off (015_figures_joins.sql says why).
-- Dropped first: its result gained columns (migrations 024, 030), which
-- CREATE OR REPLACE refuses; nothing in SQL depends on it.
DROP FUNCTION IF EXISTS ceems.job_figures(bigint[]);
CREATE OR REPLACE FUNCTION ceems.job_figures(p_job_keys bigint[])
RETURNS TABLE (
	job_key bigint,
	array_job_id bigint,
	array_task_id bigint,
	user_name text,
	uid bigint,
	gid bigint,
	account text,
	partition text,
	qos text,
	job_name text,
	state ceems.job_state,
	exit_code smallint,
	exit_signal smallint,
	submit_time timestamp with time zone,
	end_time timestamp with time zone,
	elapsed_s double precision,
	time_limit_min bigint,
	alloc_cpus bigint,
	req_mem_bytes bigint,
	alloc_gpus bigint,
	nnodes bigint,
	nodelist text,
	meta_written_at timestamp with time zone,
	meta_node text,
	meta_digest text,
	nodes_reported integer,
	cpu_time_s double precision,
	cpu_efficiency double precision,
	mem_peak_bytes bigint,
	mem_efficiency double precision,
	gpu_util_pct double precision,
	gpu_mem_peak_bytes bigint,
	package_j double precision,
	dram_j double precision,
	gpu_j double precision,
	node_j double precision,
	total_j double precision,
	package_static_j double precision,
	dram_static_j double precision,
	package_coverage double precision,
	dram_coverage double precision,
	gpu_coverage double precision,
	node_coverage double precision,
	gap_s double precision,
	emissions_g double precision,
	emissions_coverage double precision,
	emission_factor_source text,
	emission_zone text,
	emission_year integer,
	emission_g_per_kwh double precision,
	pue double precision,
	emission_factor_mixed boolean,
	steps ceems.step_summary[],
	emission_fallback double precision,
	package_idle_unlearned boolean,
	dram_idle_unlearned boolean,
	energy_err_j double precision
)
LANGUAGE plpgsql STABLE
-- A few jobs' figures per call: with the default estimate (1,000 rows)
-- refresh_jobs' generic plan joined them to a scan of all of jobs.
ROWS 10
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
SET enable_nestloop = off	-- 015
AS $$
-- PL/pgSQL rather than SQL for its cached plan: planning this query
-- took as long as running it for a batch's jobs.
#variable_conflict use_column
BEGIN
RETURN QUERY
WITH nodes AS MATERIALIZED (
	SELECT jn.*, jn.finalized_by <> 'agent' AS by_plugin
	FROM ceems.job_nodes jn
	WHERE jn.job_key = ANY (p_job_keys)),
step_sums AS MATERIALIZED (
	SELECT ss.job_key, ss.steps
	FROM ceems.job_step_sums ss
	WHERE ss.job_key = ANY (p_job_keys))
SELECT
		agg.job_key,
		(agg.meta ->> 'array_job_id')::bigint AS array_job_id,
		(agg.meta ->> 'array_task_id')::bigint AS array_task_id,
		(agg.meta ->> 'user') AS user_name,
		(agg.meta ->> 'uid')::bigint AS uid,
		(agg.meta ->> 'gid')::bigint AS gid,
		(agg.meta ->> 'account') AS account,
		(agg.meta ->> 'partition') AS partition,
		(agg.meta ->> 'qos') AS qos,
		(agg.meta ->> 'name') AS job_name,
		(agg.meta ->> 'state')::ceems.job_state AS state,
		(agg.meta ->> 'exit_code')::bigint::smallint AS exit_code,
		nullif((agg.meta ->> 'exit_signal')::bigint, 0)::smallint AS exit_signal,
		to_timestamp((agg.meta ->> 'submit_time')::bigint) AS submit_time,
		to_timestamp((agg.meta ->> 'end_time')::bigint) AS end_time,
		v.elapsed_s,
		(agg.meta ->> 'time_limit_min')::bigint AS time_limit_min,
		v.alloc_cpus,
		v.req_mem_bytes,
		(agg.meta ->> 'alloc_gpus')::bigint AS alloc_gpus,
		nullif((agg.meta ->> 'nnodes')::bigint, 0) AS nnodes,
		(agg.meta ->> 'nodes') AS nodelist,
		newest.written_at AS meta_written_at,
		newest.node AS meta_node,
		newest.record_digest AS meta_digest,
		agg.nodes::integer AS nodes_reported,
		agg.cpu_s AS cpu_time_s,
		CASE WHEN v.elapsed_s > 0 AND v.alloc_cpus IS NOT NULL
		     THEN agg.cpu_s / (v.elapsed_s * v.alloc_cpus) END AS cpu_efficiency,
		agg.mem_peak_max AS mem_peak_bytes,
		agg.mem_peak_sum::double precision / v.req_mem_bytes AS mem_efficiency,
		agg.gpu_util_pct,
		agg.gpu_mem_peak AS gpu_mem_peak_bytes,
		agg.package_j,
		agg.dram_j,
		agg.gpu_j,
		agg.node_j,
		agg.total_j,
		agg.package_static_j,
		agg.dram_static_j,
		ceems.at_most_one(agg.package_cov / nullif(agg.lifetime_s, 0)) AS package_coverage,
		ceems.at_most_one(agg.dram_cov / nullif(agg.lifetime_s, 0)) AS dram_coverage,
		ceems.at_most_one(agg.gpu_cov / nullif(agg.lifetime_s, 0)) AS gpu_coverage,
		ceems.at_most_one(agg.node_cov / nullif(agg.lifetime_s, 0)) AS node_coverage,
		agg.gap_s,
		agg.emissions_g,
		ceems.at_most_one(agg.emissions_cov / nullif(agg.lifetime_s, 0)) AS emissions_coverage,
		f.emission_factor_source AS emission_factor_source,
		f.emission_zone AS emission_zone,
		f.emission_year AS emission_year,
		f.emission_g_per_kwh AS emission_g_per_kwh,
		f.pue AS pue,
		CASE WHEN fc.factors > 0
		     THEN fc.factors > 1 OR coalesce(agg.factor_changed, false) END
			AS emission_factor_mixed,
		sr.steps,
		-- The nodes' shares weighted by their energy; their plain
		-- mean where none has energy to weigh by.
		ceems.at_most_one(coalesce(agg.fallback_j / nullif(agg.fallback_weight_j, 0),
					   agg.fallback_mean)) AS emission_fallback,
		agg.package_idle_unlearned,
		agg.dram_idle_unlearned,
		agg.energy_err_j
	      FROM (SELECT n.job_key,
			   ceems.jsonb_merge(n.job_meta ORDER BY n.by_plugin, n.written_at, n.node, n.record_digest) AS meta,
			   count(*) AS nodes,
			   sum(n.cpu_s) AS cpu_s,
			   max(n.mem_peak_bytes) AS mem_peak_max,
			   sum(n.mem_peak_bytes) AS mem_peak_sum,
			   max(n.elapsed_s) AS elapsed_max,
			   sum(n.lifetime_s) AS lifetime_s,
			   sum(n.gap_s) AS gap_s,
			   sum(n.package_j) AS package_j, sum(n.dram_j) AS dram_j,
			   sum(n.gpu_j) AS gpu_j, sum(n.node_j) AS node_j,
			   sum(n.total_j) AS total_j,
			   sum(n.package_static_j) AS package_static_j,
			   sum(n.dram_static_j) AS dram_static_j,
			   sum(n.package_covered_s) AS package_cov,
			   sum(n.dram_covered_s) AS dram_cov,
			   sum(n.gpu_covered_s) AS gpu_cov,
			   sum(n.node_covered_s) AS node_cov,
			   sum(n.emissions_g) AS emissions_g,
			   sum(n.emissions_covered_s) AS emissions_cov,
			   avg(n.gpu_util_pct) AS gpu_util_pct,
			   max(n.gpu_mem_peak_bytes) AS gpu_mem_peak,
			   bool_or(n.emission_factor_changed) AS factor_changed,
			   sum(n.emission_fallback * n.total_j) AS fallback_j,
			   sum(n.total_j) FILTER (WHERE n.emission_fallback IS NOT NULL)
				AS fallback_weight_j,
			   avg(n.emission_fallback) AS fallback_mean,
			   bool_or(n.package_idle_unlearned) AS package_idle_unlearned,
			   bool_or(n.dram_idle_unlearned) AS dram_idle_unlearned,
			   -- Known when every node with energy knows its
			   -- bound (030_energy_err.sql); unknown is not 0.
			   CASE WHEN bool_and(n.energy_err_j IS NOT NULL OR n.total_j IS NULL)
				THEN sum(n.energy_err_j) END AS energy_err_j
		    FROM nodes n
		    GROUP BY n.job_key) agg
	      -- The newest node row, the plugin's first: one sort for all
	      -- the jobs, not one per job and column (ordered aggregates).
	      JOIN (SELECT DISTINCT ON (n.job_key) n.job_key, n.written_at, n.node, n.record_digest
		    FROM nodes n
		    ORDER BY n.job_key, n.by_plugin DESC, n.written_at DESC, n.node DESC,
			     n.record_digest DESC) newest ON newest.job_key = agg.job_key
	      -- The emission factor of the first node (by name) that has one,
	      -- and how many different factors the nodes used.
	      LEFT JOIN (SELECT DISTINCT ON (n.job_key) n.job_key, n.emission_factor_source,
			       n.emission_zone, n.emission_year, n.emission_g_per_kwh, n.pue
			 FROM nodes n
			 WHERE n.emission_factor_source IS NOT NULL
			 ORDER BY n.job_key, n.node) f ON f.job_key = agg.job_key
	      LEFT JOIN (SELECT d.job_key, count(*) AS factors
			 FROM (SELECT DISTINCT n.job_key, n.emission_factor_source, n.emission_zone,
					  n.emission_year, n.emission_g_per_kwh, n.pue
			       FROM nodes n
			       WHERE n.emission_factor_source IS NOT NULL) d
			 GROUP BY d.job_key) fc ON fc.job_key = agg.job_key
	      LEFT JOIN step_sums sr ON sr.job_key = agg.job_key,
	      LATERAL (SELECT
			nullif(ceems.whole_number(agg.meta, 'alloc_cpus', 'job'), 0) AS alloc_cpus,
			nullif(ceems.whole_number(agg.meta, 'req_mem_bytes', 'job'), 0) AS req_mem_bytes,
			CASE WHEN agg.meta ? 'start_time' AND agg.meta ? 'end_time'
			     THEN (ceems.whole_number(agg.meta, 'end_time', 'job') -
				   (agg.meta ->> 'start_time')::bigint)::double precision
			     ELSE agg.elapsed_max END AS elapsed_s) v;
END
$$;
COMMENT ON FUNCTION ceems.job_figures(bigint[]) IS
	'What the jobs rows of these jobs say, from their job_nodes and job_steps rows: for refresh_jobs and for the insert of new jobs (not granted)';

-- A weighted mean (SUM / WEIGHT, NULL without weight) kept within
-- 0..100 where rounding would step over; a sum of bytes within bigint.
-- (Not least() and greatest() alone: they skip a NULL, and an unknown
-- figure would read as a bound.)
CREATE OR REPLACE FUNCTION ceems.gpu_mean(p_sum double precision, p_weight double precision)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_weight > 0 THEN least(100, greatest(0, p_sum / p_weight)) END;
COMMENT ON FUNCTION ceems.gpu_mean(double precision, double precision) IS
	'SUM / WEIGHT within [0, 100], NULL without weight: the GPU means';

CREATE OR REPLACE FUNCTION ceems.gpu_bytes(p_sum numeric)
RETURNS bigint LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN p_sum IS NOT NULL THEN least(p_sum, 9223372036854775807)::bigint END;
COMMENT ON FUNCTION ceems.gpu_bytes(numeric) IS
	'A sum of GPU bytes as bigint (at most its largest value)';
