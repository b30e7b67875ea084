-- 016_job_step_sums.sql - each job's steps, summed over its nodes, kept
-- in its jobs row (issue 5: a user's month in <= 50 ms with 10 million
-- jobs).
--
-- ceems-sacct lists each job's steps under it, as sacct does: a batch
-- job has two (batch, extern), so a heavy user's month of 18,000 jobs is
-- 54,000 lines.  The steps came from a second query on job_steps, one
-- row per step and node: 18,000 index descents into a table twice the
-- size of jobs and in the order of job_key, not of the user, and, under
-- row-level security, the policy job_steps_visible run once per step
-- row (an EXISTS on jobs each).  That query cost more than the listing
-- itself, 65 ms as superuser and twice that as the user
-- (doc/performance.md).  The listing now reads the steps from the jobs
-- row it reads anyway, in the same pages, under the jobs policies.
--
-- jobs.steps is computed with the rest of the row, by job_figures, from
-- the job's job_steps rows through one view (job_step_sums): both write
-- paths (the set-wise batch and the record-by-record loop's refresh_job)
-- and the backfill below use it, so it is the same however the records
-- arrived (schema.bats compares them).  job_steps stays: the per-node
-- detail behind --json and the node views.
--
-- The backfill rewrites once each jobs row that has steps: on a large
-- database run it in a maintenance window, and `ceems-admin db cluster`
-- afterwards puts a user's rows back together.

CREATE TYPE ceems.step_summary AS (
	step_id text,
	nodes integer,
	elapsed_s double precision,
	cpu_s double precision,
	mem_peak_bytes bigint,
	package_j double precision,
	dram_j double precision,
	gpu_j double precision,
	node_j double precision
);
COMMENT ON TYPE ceems.step_summary IS
	'A job step over the nodes that ran it: nodes counted; elapsed and memory peak the largest of a node; CPU time and energies summed (NULL when no node measured them)';

ALTER TABLE ceems.jobs ADD COLUMN steps ceems.step_summary[];
COMMENT ON COLUMN ceems.jobs.steps IS
	'The job''s steps (job_steps summed per step over its nodes), ordered by step_id; NULL when none was recorded';

-- Each job's steps as ceems-sacct lists them: the one definition of
-- jobs.steps, for job_figures and the backfill below.  Not granted.
CREATE VIEW ceems.job_step_sums AS
SELECT s.job_key,
       array_agg(ROW(s.step_id, s.nodes, s.elapsed_s, s.cpu_s,
		     s.mem_peak_bytes, s.package_j, s.dram_j, s.gpu_j,
		     s.node_j)::ceems.step_summary
		 ORDER BY s.step_id COLLATE "C") AS steps
FROM (SELECT st.job_key, st.step_id,
	     count(*)::integer AS nodes,
	     max(st.elapsed_s) AS elapsed_s,
	     sum(st.cpu_s) AS cpu_s,
	     max(st.mem_peak_bytes) AS mem_peak_bytes,
	     sum(st.package_j) AS package_j, sum(st.dram_j) AS dram_j,
	     sum(st.gpu_j) AS gpu_j, sum(st.node_j) AS node_j
      FROM ceems.job_steps st
      GROUP BY st.job_key, st.step_id) s
GROUP BY s.job_key;
COMMENT ON VIEW ceems.job_step_sums IS
	'Each job''s steps summed over its nodes, as jobs.steps holds them (not granted)';

-- job_figures gains the steps: its result type changes, so it is made
-- anew (the functions that call it find it by name).
DROP FUNCTION ceems.job_figures(bigint[]);

-- 012's job_figures, with each job's steps (step_sums) and 015's
-- setting in its definition.
CREATE FUNCTION ceems.job_figures(p_job_keys bigint[])
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
	steps ceems.step_summary[]
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
		sr.steps
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
			   bool_or(n.emission_factor_changed) AS factor_changed
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

-- 012's refresh_jobs, with the steps.
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
	       j.emission_factor_mixed, j.steps)
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
	       x.emission_factor_mixed, x.steps);
END
$$;

-- 013's store_job_records: its new jobs' rows with their steps.
CREATE OR REPLACE FUNCTION ceems.store_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off		-- as refresh_jobs
AS $$
DECLARE
	items ceems.batch_record[];
	fresh bigint[];		-- keys of the jobs this batch creates
	changed bigint[];	-- keys of stored jobs it changes
	inserted bigint;
	old_key bigint;		-- a stored row a record replaces
	old_node text;
BEGIN
	-- Parse and validate every record.  The checks are the loop's
	-- (store_job_record's), made on every record, applied or not: a
	-- stricter check here only sends the batch to the loop.
	-- The identity's numbers are known to be JSON numbers here: cast
	-- directly (a fraction, which the loop may accept as a whole number,
	-- raises and sends the batch to the loop).
	items := ARRAY(
		SELECT ROW(row_number() OVER (ORDER BY p.k_cluster, p.k_jobid,
						     p.k_start, p.ord),
			   p.ord, NULL,
			   CASE WHEN p.ok THEN p.cluster END,
			   CASE WHEN p.ok THEN p.jobid::bigint END,
			   CASE WHEN p.ok THEN p.uid::bigint END,
			   CASE WHEN p.ok THEN to_timestamp(p.start_time::bigint) END,
			   CASE WHEN p.ok THEN p.node END,
			   CASE WHEN p.ok THEN to_timestamp(p.written_at::bigint) END,
			   p.digest, NULL, NULL, NULL,
			   p.by_plugin, NULL)::ceems.batch_record
		-- Only what the batch's rows need is taken out here: the
		-- records stay in RECORDS, and each later statement takes its
		-- record from there by position (records -> (ord - 1)).  Rows
		-- that carried the whole record through the sorts and arrays
		-- of the outcomes cost a third of a batch's time (013).
		FROM (SELECT e.ord::integer AS ord,
			     x.job -> 'cluster' AS k_cluster,
			     x.job -> 'jobid' AS k_jobid,
			     x.job -> 'start_time' AS k_start,
			     x.job ->> 'cluster' AS cluster,
			     x.job ->> 'jobid' AS jobid,
			     x.job ->> 'uid' AS uid,
			     x.job ->> 'start_time' AS start_time,
			     x.job ->> 'node' AS node,
			     e.value ->> 'written_at' AS written_at,
			     md5(e.value::text) AS digest,
			     coalesce(e.value ->> 'finalized_by', '') <> 'agent' AS by_plugin,
			     jsonb_typeof(e.value) = 'object'
			     AND (e.value ->> 'format') IS NOT DISTINCT FROM 'ceems-job-record/1'
			     AND jsonb_typeof(x.job) = 'object'
			     AND jsonb_typeof(x.m) = 'object'
			     AND jsonb_typeof(e.value -> 'written_at') = 'number'
			     AND jsonb_typeof(x.job -> 'cluster') = 'string'
			     AND jsonb_typeof(x.job -> 'jobid') = 'number'
			     AND jsonb_typeof(x.job -> 'uid') = 'number'
			     AND jsonb_typeof(x.job -> 'start_time') = 'number'
			     AND jsonb_typeof(x.job -> 'node') = 'string'
			     AND coalesce(jsonb_typeof(y.led), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(x.m -> 'usage'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.pkg), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'dram'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'gpu'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.led -> 'node'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.em), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.em -> 'factor'), 'null') IN ('object', 'null')
			     AND coalesce(jsonb_typeof(y.pkg -> 'joules'), 'null') IN ('number', 'null')
			     AND coalesce(jsonb_typeof(x.m -> 'steps'), 'array') = 'array'
			     AND coalesce(jsonb_typeof(e.value -> 'notes'), 'array') = 'array'
			     AS ok
		      FROM jsonb_array_elements(records) WITH ORDINALITY e(value, ord),
			   -- OFFSET 0: each sub-object is taken out of its
			   -- record once, not once per use.
			   LATERAL (SELECT e.value -> 'job' AS job,
					   e.value -> 'measurements' AS m OFFSET 0) x,
			   LATERAL (SELECT l.led, l.led -> 'package' AS pkg,
					   l.led -> 'emissions' AS em
				    FROM (SELECT x.m -> 'ledger' AS led OFFSET 0) l
				    OFFSET 0) y) p
		ORDER BY 1);
	IF EXISTS (SELECT 1 FROM unnest(items) i,
			 LATERAL (SELECT records -> (i.ord - 1) AS rec OFFSET 0) r
		   WHERE i.cluster IS NULL OR i.jobid IS NULL OR i.uid IS NULL OR
			 i.start_time IS NULL OR i.node IS NULL OR i.written_at IS NULL OR
			 (r.rec -> 'measurements' ->> 'jobid')::bigint IS DISTINCT FROM i.jobid OR
			 (r.rec -> 'measurements' ->> 'uid')::bigint IS DISTINCT FROM i.uid OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.rec -> 'measurements' -> 'steps', '[]')) s
				 WHERE jsonb_typeof(s) <> 'object' OR
				       jsonb_typeof(coalesce(s -> 'joules', '{}')) <> 'object') OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(r.rec -> 'notes', '[]')) n
				 WHERE jsonb_typeof(n) <> 'object')) THEN
		RAISE EXCEPTION 'ceems records: a record is not valid: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	INSERT INTO ceems.clusters (name)
		SELECT DISTINCT i.cluster FROM unnest(items) i ORDER BY 1
		ON CONFLICT (name) DO NOTHING;

	-- Statistics that describe a much smaller table than there is: a
	-- new or restored database (none at all), a table emptied by
	-- TRUNCATE, or one grown faster than autovacuum looked.  Every
	-- index of jobs then looks as good as another, and the plans kept
	-- for the session found a job through jobs_start, reading every job
	-- that started at the same second (all the tasks of an array job),
	-- each batch slower than the last.  Gather them when a table has
	-- more than doubled since (a few times while a database fills;
	-- autovacuum keeps them after); ANALYZE invalidates the kept plans.
	-- Only the columns the batch's lookups choose an index by: all of
	-- them took more time than the plans saved while a database filled.
	IF EXISTS (SELECT 1 FROM pg_class c
		   WHERE c.oid IN ('ceems.jobs'::regclass, 'ceems.job_nodes'::regclass)
		     AND pg_relation_size(c.oid) >
			 current_setting('block_size')::bigint * (2 * c.relpages::bigint + 8)) THEN
		ANALYZE ceems.jobs (cluster_id, jobid, start_time),
			ceems.job_nodes (job_key, node);
	END IF;

	-- The stored jobs of the batch, locked in the loop's order (a
	-- concurrent writer's records of one job wait for this batch's).
	-- Each job is looked up by its whole identity in a subquery of its
	-- own: as a join, a plan made before the table had statistics used
	-- the cluster alone as the index condition and read every job of
	-- the cluster for each record.
	PERFORM 1
		FROM (SELECT DISTINCT c.cluster_id, i.jobid, i.start_time
		      FROM unnest(items) i JOIN ceems.clusters c ON c.name = i.cluster
		      ORDER BY 1, 2, 3) b,
		     LATERAL (SELECT 1 FROM ceems.jobs j
			      WHERE j.cluster_id = b.cluster_id AND j.jobid = b.jobid
				AND j.start_time = b.start_time
			      FOR UPDATE) s;

	-- The outcome of each record, as the loop would give it in its
	-- order; a new job's key drawn now, its owner its first record's.
	-- Every lookup is one index probe per record (LATERAL, OFFSET 0),
	-- and a new job finds its key by its rank among the batch's new
	-- jobs: a generic plan, which expects a handful of rows, joined the
	-- batch to its new jobs by a nested loop (n * n rows compared) and
	-- job_nodes by a scan of the whole table, kept for the session (013).
	items := ARRAY(
		WITH b AS (
			SELECT i.*, c.cluster_id, j.job_key AS stored_key,
			       j.uid AS stored_uid,
			       CASE WHEN j.job_key IS NULL
				    THEN dense_rank() OVER (PARTITION BY j.job_key IS NULL
							    ORDER BY c.cluster_id, i.jobid, i.start_time)
			       END AS new_rank
			FROM unnest(items) i
			JOIN ceems.clusters c ON c.name = i.cluster
			LEFT JOIN LATERAL (SELECT s.job_key, s.uid FROM ceems.jobs s
					   WHERE s.cluster_id = c.cluster_id AND s.jobid = i.jobid
					     AND s.start_time = i.start_time
					   OFFSET 0) j ON true),
		-- Drawn in the new jobs' identity order, as the loop would.
		new_keys AS MATERIALIZED (
			SELECT ARRAY(SELECT nextval('ceems.jobs_job_key_seq')
				     FROM generate_series(1, (SELECT max(b.new_rank) FROM b))) AS keys),
		k AS (
			SELECT b.seq, b.ord, b.cluster, b.jobid, b.uid,
			       b.start_time, b.node, b.written_at, b.digest,
			       b.by_plugin, b.stored_key IS NULL AS fresh,
			       coalesce(b.stored_key, nk.keys[b.new_rank]) AS job_key,
			       coalesce(b.stored_uid,
					first_value(b.uid) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time
								 ORDER BY b.seq)) AS job_uid,
			       jn.finalized_by <> 'agent' AS old_by_plugin,
			       jn.written_at AS old_written_at,
			       jn.record_digest AS old_digest,
			       count(*) OVER (PARTITION BY b.cluster_id, b.jobid, b.start_time, b.node) AS records
			FROM b
			CROSS JOIN new_keys nk
			LEFT JOIN LATERAL (SELECT o.finalized_by, o.written_at, o.record_digest
					   FROM ceems.job_nodes o
					   WHERE o.job_key = b.stored_key AND o.node = b.node
					   OFFSET 0) jn ON true)
		SELECT ROW(k.seq, k.ord, NULL, k.cluster, k.jobid, k.uid,
			   k.start_time, k.node, k.written_at, k.digest, k.job_key,
			   CASE WHEN k.uid <> k.job_uid THEN NULL
				WHEN (k.old_by_plugin, k.old_written_at, k.old_digest) >=
				     (k.by_plugin, k.written_at, k.digest) OR
				     k.records > 1 AND EXISTS (SELECT 1 FROM k e
					     WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq
					       AND (e.by_plugin, e.written_at, e.digest) >=
						   (k.by_plugin, k.written_at, k.digest))
				THEN 'unchanged'
				WHEN k.old_written_at IS NULL AND
				     (k.records = 1 OR NOT EXISTS (SELECT 1 FROM k e
						 WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq))
				THEN 'inserted'
				ELSE 'replaced' END,
			   k.old_written_at IS NOT NULL, k.by_plugin, k.fresh)::ceems.batch_record
		FROM k ORDER BY k.seq);
	IF EXISTS (SELECT 1 FROM unnest(items) i WHERE i.outcome IS NULL) THEN
		RAISE EXCEPTION 'ceems records: a record''s owner differs from its stored job''s: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	IF EXISTS (SELECT 1 FROM unnest(items) i WHERE i.outcome <> 'unchanged'
		   GROUP BY i.job_key, i.node HAVING count(*) > 1) THEN
		RAISE EXCEPTION 'ceems records: several records of one node to apply in order: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	-- From here on, each applied record is the one record of its node.
	-- The new jobs' job_nodes rows come before their jobs rows: their
	-- foreign key is checked at the end of this function.
	SET CONSTRAINTS ceems.job_nodes_job_key_fkey DEFERRED;
	-- One probe per replaced row, if any: as a join, a plan made on a
	-- small table read the whole of job_nodes for every batch (013).
	FOR old_key, old_node IN
		SELECT i.job_key, i.node FROM unnest(items) i
		WHERE i.outcome <> 'unchanged' AND i.replaces
	LOOP
		DELETE FROM ceems.job_nodes jn
			WHERE jn.job_key = old_key AND jn.node = old_node;
	END LOOP;

	INSERT INTO ceems.job_nodes (
		job_key, node, written_at, finalized_by, record_digest, job_meta,
		alloc_cores, alloc_mem_bytes, elapsed_s, lifetime_s, cpu_s,
		gap_s, cgroup_gone, mem_peak_bytes, mem_peak_sampled,
		mem_rss_bytes, mem_limit_bytes, oom_kills, io_read_bytes,
		io_write_bytes, cpuset, usage_failed,
		package_j, dram_j, gpu_j, node_j, total_j,
		package_static_j, dram_static_j,
		package_covered_s, dram_covered_s, gpu_covered_s, node_covered_s,
		emissions_g, emissions_covered_s, emission_factor_source,
		emission_zone, emission_year, emission_g_per_kwh, pue,
		emission_factor_changed)
	SELECT
		i.job_key, i.node, i.written_at,
		(r.rec ->> 'finalized_by'), i.digest, r.rec -> 'job',
		(r.m ->> 'alloc_cores')::bigint,
		(r.m ->> 'alloc_mem_bytes')::bigint,
		(r.m ->> 'elapsed_s')::double precision,
		(l.led ->> 'lifetime_s')::double precision,
		(r.m ->> 'cpu_s')::double precision,
		coalesce((r.m ->> 'gap_s')::double precision, 0),
		coalesce((r.m ->> 'cgroup_gone')::boolean, false),
		(u.u ->> 'mem_peak_bytes')::bigint,
		coalesce((u.u ->> 'peak_sampled')::boolean, false),
		(u.u ->> 'mem_rss_bytes')::bigint,
		CASE WHEN u.u -> 'mem_limit_bytes' = '"max"' THEN NULL
		     ELSE (u.u ->> 'mem_limit_bytes')::bigint END,
		(u.u ->> 'oom_kills')::bigint,
		(u.u ->> 'io_read_bytes')::bigint,
		(u.u ->> 'io_write_bytes')::bigint,
		(u.u ->> 'cpuset'),
		CASE WHEN jsonb_typeof(u.u -> 'failed') = 'array'
		     THEN ARRAY(SELECT jsonb_array_elements_text(u.u -> 'failed')) END,
		(l.pkg ->> 'joules')::double precision,
		(l.dram ->> 'joules')::double precision,
		(l.gpu ->> 'joules')::double precision,
		(l.node ->> 'joules')::double precision,
		CASE WHEN l.pkg ? 'joules' OR l.dram ? 'joules' OR l.gpu ? 'joules' OR l.node ? 'joules'
		     THEN coalesce((l.pkg ->> 'joules')::double precision, 0) +
			  coalesce((l.dram ->> 'joules')::double precision, 0) +
			  coalesce((l.gpu ->> 'joules')::double precision, 0) +
			  coalesce((l.node ->> 'joules')::double precision, 0) END,
		(l.pkg ->> 'static_j')::double precision,
		(l.dram ->> 'static_j')::double precision,
		(l.pkg ->> 'covered_s')::double precision,
		(l.dram ->> 'covered_s')::double precision,
		(l.gpu ->> 'covered_s')::double precision,
		(l.node ->> 'covered_s')::double precision,
		(l.em ->> 'grams')::double precision,
		(l.em ->> 'covered_s')::double precision,
		nullif((l.em -> 'factor' ->> 'source'), ''),
		nullif((l.em -> 'factor' ->> 'zone'), ''),
		nullif((l.em -> 'factor' ->> 'year')::bigint, 0),
		(l.em -> 'factor' ->> 'g_per_kwh')::double precision,
		(l.em -> 'factor' ->> 'pue')::double precision,
		(l.em ->> 'factor_changed')::boolean
	-- OFFSET 0: each sub-object is taken out of its record once, and
	-- each figure is then one key away (a path from the record's top
	-- for each of 40 figures was a fifth of this statement).
	FROM unnest(items) i,
	     LATERAL (SELECT x.rec, x.rec -> 'measurements' AS m
		      FROM (SELECT records -> (i.ord - 1) AS rec OFFSET 0) x
		      OFFSET 0) r,
	     LATERAL (SELECT r.m -> 'usage' AS u OFFSET 0) u,
	     LATERAL (SELECT y.led, y.led -> 'package' AS pkg, y.led -> 'dram' AS dram,
			     y.led -> 'gpu' AS gpu, y.led -> 'node' AS node,
			     y.led -> 'emissions' AS em
		      FROM (SELECT r.m -> 'ledger' AS led OFFSET 0) y
		      OFFSET 0) l
	WHERE i.outcome <> 'unchanged'
	ORDER BY i.seq;

	INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s,
		cpu_s, mem_peak_bytes, package_j, dram_j, gpu_j, node_j)
	SELECT i.job_key, i.node,
	       (s ->> 'id'),
	       coalesce((s ->> 'ended')::boolean, false),
	       coalesce((s ->> 'elapsed_s')::double precision, 0),
	       -- Absent: not measured, NULL (job_steps.cpu_s is nullable
	       -- from migration 010 on, applied with this one).
	       (s ->> 'cpu_s')::double precision,
	       (s ->> 'mem_peak_bytes')::bigint,
	       (s -> 'joules' ->> 'package')::double precision,
	       (s -> 'joules' ->> 'dram')::double precision,
	       (s -> 'joules' ->> 'gpu')::double precision,
	       (s -> 'joules' ->> 'node')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements((records -> (i.ord - 1)) -> 'measurements' -> 'steps') s
	WHERE i.outcome <> 'unchanged';
	INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text,
				     saving_j, saving_g)
	SELECT i.job_key, i.node, (n.ord - 1)::smallint,
	       (n.value ->> 'id'),
	       (n.value ->> 'text'),
	       (n.value ->> 'saving_j')::double precision,
	       (n.value ->> 'saving_g')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements((records -> (i.ord - 1)) -> 'notes') WITH ORDINALITY n(value, ord)
	WHERE i.outcome <> 'unchanged';

	-- The new jobs, complete, in identity order.  Drawn keys make no
	-- conflict; a conflict on the identity is another writer's insert
	-- since the outcomes: give up.
	fresh := ARRAY(SELECT DISTINCT i.job_key FROM unnest(items) i WHERE i.fresh);
	INSERT INTO ceems.jobs (job_key, cluster_id, jobid, start_time,
		array_job_id, array_task_id, user_name, uid, gid,
		account, partition, qos, job_name, state,
		exit_code, exit_signal, submit_time, end_time, elapsed_s,
		time_limit_min, alloc_cpus, req_mem_bytes, alloc_gpus, nnodes,
		nodelist, meta_written_at, meta_node, meta_digest, nodes_reported,
		cpu_time_s, cpu_efficiency, mem_peak_bytes, mem_efficiency, gpu_util_pct,
		gpu_mem_peak_bytes, package_j, dram_j, gpu_j, node_j,
		total_j, package_static_j, dram_static_j, package_coverage, dram_coverage,
		gpu_coverage, node_coverage, gap_s, emissions_g, emissions_coverage,
		emission_factor_source, emission_zone, emission_year, emission_g_per_kwh, pue,
		emission_factor_mixed, steps)
	OVERRIDING SYSTEM VALUE
	SELECT f.job_key, f.cluster_id, f.jobid, f.start_time,
	       x.array_job_id, x.array_task_id, x.user_name, x.uid, x.gid,
	       x.account, x.partition, x.qos, x.job_name, x.state,
	       x.exit_code, x.exit_signal, x.submit_time, x.end_time, x.elapsed_s,
	       x.time_limit_min, x.alloc_cpus, x.req_mem_bytes, x.alloc_gpus, x.nnodes,
	       x.nodelist, x.meta_written_at, x.meta_node, x.meta_digest, x.nodes_reported,
	       x.cpu_time_s, x.cpu_efficiency, x.mem_peak_bytes, x.mem_efficiency, x.gpu_util_pct,
	       x.gpu_mem_peak_bytes, x.package_j, x.dram_j, x.gpu_j, x.node_j,
	       x.total_j, x.package_static_j, x.dram_static_j, x.package_coverage, x.dram_coverage,
	       x.gpu_coverage, x.node_coverage, x.gap_s, x.emissions_g, x.emissions_coverage,
	       x.emission_factor_source, x.emission_zone, x.emission_year, x.emission_g_per_kwh, x.pue,
	       x.emission_factor_mixed, x.steps
	FROM (SELECT DISTINCT i.job_key, c.cluster_id, i.jobid, i.start_time
	      FROM unnest(items) i JOIN ceems.clusters c ON c.name = i.cluster
	      WHERE i.fresh) f
	JOIN ceems.job_figures(fresh) x ON x.job_key = f.job_key
	ORDER BY f.cluster_id, f.jobid, f.start_time
	ON CONFLICT (cluster_id, jobid, start_time) DO NOTHING;
	GET DIAGNOSTICS inserted = ROW_COUNT;
	IF inserted <> cardinality(fresh) THEN
		RAISE EXCEPTION 'ceems records: a job of the batch was stored meanwhile: store one by one'
			USING ERRCODE = 'unique_violation';
	END IF;
	SET CONSTRAINTS ceems.job_nodes_job_key_fkey IMMEDIATE;

	changed := ARRAY(SELECT DISTINCT i.job_key FROM unnest(items) i
			 WHERE i.outcome <> 'unchanged' AND NOT i.fresh);
	IF cardinality(changed) > 0 THEN
		PERFORM ceems.refresh_jobs(changed);
	END IF;

	RETURN ARRAY(SELECT i.outcome FROM unnest(items) i ORDER BY i.ord);
END
$$;

-- The jobs already stored.  Their durations do not change: the trigger
-- that notes them would only hold every row of the table meanwhile.
ALTER TABLE ceems.jobs DISABLE TRIGGER jobs_duration_update;
UPDATE ceems.jobs j SET steps = ss.steps
FROM ceems.job_step_sums ss
WHERE j.job_key = ss.job_key;
ALTER TABLE ceems.jobs ENABLE TRIGGER jobs_duration_update;

CALL ceems.adopt_objects();
