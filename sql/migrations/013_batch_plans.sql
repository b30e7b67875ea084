-- 013_batch_plans.sql - the set-wise batch (store_job_records) without
-- its two costs that grew with the batch and the table (issue 5, ingest
-- of 5,000 records/s):
--
-- 1. The rows of the batch no longer carry the records.  012 put each
--    record (about 1 KB of jsonb) in every row of the batch's array, so
--    every sort, window and materialised CTE of the outcomes copied it;
--    now the rows hold what they are compared and stored by, and a
--    statement that reads a record takes it from the batch's argument
--    by position (records -> (ord - 1)).
--
-- 2. The outcomes' plan no longer depends on the batch's size or the
--    table's.  The plan is generic (kept for the session, 012), made for
--    the few rows an array parameter is assumed to hold: it joined each
--    record to the batch's new jobs by a nested loop (n * n comparisons,
--    250,000 for a batch of 500) and to its stored job_nodes row by a
--    hash join over the whole of job_nodes, which a writer's session
--    started on a small database kept as the table grew.  Each record
--    now looks up its stored row with an index probe of its own
--    (LATERAL, as 012 does for jobs), and a new job takes its key by its
--    rank among the batch's new jobs from keys drawn in identity order;
--    a record that replaces a stored row deletes it with a probe of its
--    own rather than a join.
--
-- 3. Statistics of the lookups' columns are gathered when jobs or
--    job_nodes has more than doubled since they were last (012 did so
--    only when there were none at all).  A table emptied by TRUNCATE keeps its old statistics, so
--    012 kept plans made on an empty table: every batch then read all of
--    job_nodes, and found stored jobs through jobs_start, reading every
--    job started in the same second (an array job's tasks): 50 times
--    slower by 20,000 records.  schema.bats checks the index reads.
--
-- Outcomes, keys and rows are the same as 012's (schema.bats compares
-- the batch with the record-by-record loop); a batch of 500 new records
-- spends about a fifth less time in the server (doc/performance.md).

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
		emission_factor_mixed)
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
	       x.emission_factor_mixed
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

CALL ceems.adopt_objects();
