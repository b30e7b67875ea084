-- sql/functions/refresh.sql - recomputing jobs rows from their node, step
-- and GPU rows.

-- The loop's refresh of one job: the same figures as a batch.
CREATE OR REPLACE FUNCTION ceems.refresh_job(p_job_key bigint)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	PERFORM ceems.refresh_jobs(ARRAY[p_job_key]);
END
$$;
COMMENT ON FUNCTION ceems.refresh_job(bigint) IS
	'Recompute a jobs row from its job_nodes rows (metadata: newest record per field; figures: sums over nodes)';

-- An earlier schema's layer under refresh_jobs, whole now.
DROP FUNCTION IF EXISTS ceems.refresh_jobs_016(bigint[]);

-- refresh_job for many jobs in one statement, steps included, then their
-- GPU columns (refresh_job_gpus, below).
CREATE OR REPLACE FUNCTION ceems.refresh_jobs(p_job_keys bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
BEGIN
	UPDATE ceems.jobs j SET
		array_job_id = x.array_job_id,
		array_task_id = x.array_task_id,
		user_name = x.user_name,
		uid = x.uid,
		gid = x.gid,
		account = x.account,
		partition = x.partition,
		qos = x.qos,
		job_name = x.job_name,
		state = x.state,
		exit_code = x.exit_code,
		exit_signal = x.exit_signal,
		submit_time = x.submit_time,
		end_time = x.end_time,
		elapsed_s = x.elapsed_s,
		time_limit_min = x.time_limit_min,
		alloc_cpus = x.alloc_cpus,
		req_mem_bytes = x.req_mem_bytes,
		alloc_gpus = x.alloc_gpus,
		nnodes = x.nnodes,
		nodelist = x.nodelist,
		meta_written_at = x.meta_written_at,
		meta_node = x.meta_node,
		meta_digest = x.meta_digest,
		nodes_reported = x.nodes_reported,
		cpu_time_s = x.cpu_time_s,
		cpu_efficiency = x.cpu_efficiency,
		mem_peak_bytes = x.mem_peak_bytes,
		mem_efficiency = x.mem_efficiency,
		gpu_util_pct = x.gpu_util_pct,
		gpu_mem_peak_bytes = x.gpu_mem_peak_bytes,
		package_j = x.package_j,
		dram_j = x.dram_j,
		gpu_j = x.gpu_j,
		node_j = x.node_j,
		total_j = x.total_j,
		package_static_j = x.package_static_j,
		dram_static_j = x.dram_static_j,
		package_coverage = x.package_coverage,
		dram_coverage = x.dram_coverage,
		gpu_coverage = x.gpu_coverage,
		node_coverage = x.node_coverage,
		gap_s = x.gap_s,
		emissions_g = x.emissions_g,
		emissions_coverage = x.emissions_coverage,
		emission_factor_source = x.emission_factor_source,
		emission_zone = x.emission_zone,
		emission_year = x.emission_year,
		emission_g_per_kwh = x.emission_g_per_kwh,
		pue = x.pue,
		emission_factor_mixed = x.emission_factor_mixed,
		steps = x.steps,
		emission_fallback = x.emission_fallback,
		package_idle_unlearned = x.package_idle_unlearned,
		dram_idle_unlearned = x.dram_idle_unlearned,
		energy_err_j = x.energy_err_j,
		updated_at = now()
	FROM ceems.job_figures(p_job_keys) x
	WHERE j.job_key = x.job_key
	  AND (j.array_job_id, j.array_task_id, j.user_name, j.uid, j.gid,
	       j.account, j.partition, j.qos, j.job_name, j.state::text,
	       j.exit_code, j.exit_signal, j.submit_time, j.end_time,
	       j.elapsed_s, j.time_limit_min, j.alloc_cpus, j.req_mem_bytes,
	       j.alloc_gpus, j.nnodes, j.nodelist, j.meta_written_at,
	       j.meta_node, j.meta_digest, j.nodes_reported, j.cpu_time_s,
	       j.cpu_efficiency, j.mem_peak_bytes, j.mem_efficiency,
	       j.gpu_util_pct, j.gpu_mem_peak_bytes, j.package_j::float8,
	       j.dram_j::float8, j.gpu_j::float8, j.node_j::float8,
	       j.total_j::float8, j.package_static_j::float8,
	       j.dram_static_j::float8, j.package_coverage::float8,
	       j.dram_coverage::float8, j.gpu_coverage::float8,
	       j.node_coverage::float8, j.gap_s, j.emissions_g,
	       j.emissions_coverage::float8, j.emission_factor_source,
	       j.emission_zone, j.emission_year, j.emission_g_per_kwh, j.pue,
	       j.emission_factor_mixed, j.steps, j.emission_fallback,
	       j.package_idle_unlearned, j.dram_idle_unlearned, j.energy_err_j)
	      IS DISTINCT FROM
	      (x.array_job_id, x.array_task_id, x.user_name, x.uid, x.gid,
	       x.account, x.partition, x.qos, x.job_name, x.state::text,
	       x.exit_code, x.exit_signal, x.submit_time, x.end_time,
	       x.elapsed_s, x.time_limit_min, x.alloc_cpus, x.req_mem_bytes,
	       x.alloc_gpus, x.nnodes, x.nodelist, x.meta_written_at,
	       x.meta_node, x.meta_digest, x.nodes_reported, x.cpu_time_s,
	       x.cpu_efficiency, x.mem_peak_bytes, x.mem_efficiency,
	       x.gpu_util_pct, x.gpu_mem_peak_bytes, x.package_j, x.dram_j,
	       x.gpu_j, x.node_j, x.total_j, x.package_static_j,
	       x.dram_static_j, x.package_coverage, x.dram_coverage,
	       x.gpu_coverage, x.node_coverage, x.gap_s, x.emissions_g,
	       x.emissions_coverage, x.emission_factor_source,
	       x.emission_zone, x.emission_year, x.emission_g_per_kwh, x.pue,
	       x.emission_factor_mixed, x.steps, x.emission_fallback,
	       x.package_idle_unlearned, x.dram_idle_unlearned, x.energy_err_j);
	PERFORM ceems.refresh_job_gpus(p_job_keys);
END
$$;
COMMENT ON FUNCTION ceems.refresh_jobs(bigint[]) IS
	'Recompute the jobs rows of these jobs from their node, step and GPU rows: refresh_job for many jobs in one statement, the same result per job (not granted)';

-- The jobs' GPU columns from all their GPUs, on every node; a job whose
-- rows say nothing new is not written.
CREATE OR REPLACE FUNCTION ceems.refresh_job_gpus(p_job_keys bigint[])
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
