-- 008_setwise_batch.sql - ceems.upsert_job_records(jsonb) set-wise (issue
-- 5: >= 5,000 records/s from one writer).
--
-- 006 stored a batch with a loop of ceems.store_job_record, about ten
-- statements per record, then ceems.refresh_job per job: ~1 ms a record
-- in the server whatever the batch size (doc/performance.md, "Storage").
-- Here a batch is a fixed number of statements whatever its size: one
-- per table (INSERT ... SELECT FROM the parsed array), one UPDATE ...
-- FROM for the jobs rows.
--
-- The contract of 006 does not change, and the record-at-a-time path
-- stays its reference: the loop of 006 is kept as
-- ceems.upsert_job_records_each, and the set-wise path,
-- ceems.store_job_records, either gives exactly what the loop would (the
-- same rows, the same outcomes) or gives up by raising, in which case
-- its writes are rolled back and the loop runs instead.  It gives up:
--   * when a record fails validation (a required field missing, a field
--     of the wrong type, a measurement of another job, an owner that
--     differs from the stored job's, steps or notes not arrays of
--     objects): the loop then refuses the batch with the bad record's
--     SQLSTATE and "ceems records[I]:", which lib/replay.c answers by
--     storing the batch one record at a time;
--   * when a statement raises a class 22 or 23 error (a CHECK, a value
--     out of range): likewise;
--   * when one node of one job has more than one record that the loop
--     would apply (an older record, then a newer one, in one batch): the
--     loop would insert the older one first and check it against the
--     constraints; the set-wise path stores only the newest, so it
--     leaves such a (rare) batch to the loop rather than accept a record
--     the loop refuses.
-- Giving up costs the rolled-back work, never a different result.
--
-- Why the results are the same: within a batch the loop applies records
-- in the order of (cluster, jobid, start_time, position), and for each
-- (job, node) keeps the newest record by (written_at, digest), counting
-- the stored row; the jobs row is recomputed once per job at the end
-- from its job_nodes rows.  The set-wise path computes the same
-- outcomes from that order (a record is 'unchanged' when the stored row
-- or an earlier record of the batch for its node is as new; 'inserted'
-- when nothing came before it; else 'replaced'), stores the one applied
-- record of each node with the loop's expressions, and recomputes the
-- jobs rows with refresh_job's expressions in one statement.  Lock
-- order is the loop's too: jobs rows in (cluster, jobid, start_time)
-- order, new and stored alike, in one INSERT ... ON CONFLICT.

-- Merge objects in aggregation order: the later object's fields win
-- (refresh_job's `meta := meta || job_meta`, as an aggregate).
CREATE AGGREGATE ceems.jsonb_merge(jsonb) (
	SFUNC = pg_catalog.jsonb_concat,
	STYPE = jsonb,
	INITCOND = '{}'
);
COMMENT ON AGGREGATE ceems.jsonb_merge(jsonb) IS
	'Merge JSON objects in aggregation order (later fields win): the jobs row''s metadata from its node records';

-- ceems.json_int(obj, key, path) as an expression the planner inlines:
-- the PL/pgSQL call is made only to raise its error.
CREATE FUNCTION ceems.whole_number(obj jsonb, key text, path text)
RETURNS bigint LANGUAGE sql IMMUTABLE
RETURN CASE WHEN coalesce(jsonb_typeof(obj -> key), 'null') = 'null' THEN NULL
	    WHEN jsonb_typeof(obj -> key) <> 'number' THEN ceems.json_int(obj, key, path)
	    WHEN (obj ->> key)::numeric = trunc((obj ->> key)::numeric)
	    THEN (obj ->> key)::numeric::bigint
	    ELSE ceems.json_int(obj, key, path) END;

-- One record of a batch as the set-wise path carries it from statement
-- to statement.
CREATE TYPE ceems.batch_record AS (
	seq integer,		-- order of application (the loop's)
	ord integer,		-- position in the input array, from 1
	rec jsonb,
	cluster text,
	jobid bigint,
	uid bigint,
	start_time timestamptz,
	node text,
	written_at timestamptz,
	digest text,
	job_key bigint,
	outcome text,		-- inserted, replaced, unchanged
	replaces boolean	-- applied over a stored row of its node
);
COMMENT ON TYPE ceems.batch_record IS
	'Internal to ceems.store_job_records: one record of a batch';

-- The reference: 006's loop, one store_job_record per record.
ALTER FUNCTION ceems.upsert_job_records(jsonb) RENAME TO upsert_job_records_each;
REVOKE EXECUTE ON FUNCTION ceems.upsert_job_records_each(jsonb) FROM ceems_writer;
COMMENT ON FUNCTION ceems.upsert_job_records_each(jsonb) IS
	'006''s batch, record by record: what ceems.upsert_job_records falls back to (and the reference the set-wise path is tested against)';

CREATE FUNCTION ceems.store_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_custom_plan
AS $$
DECLARE
	items ceems.batch_record[];
	keys bigint[];
BEGIN
	-- Parse and validate every record.  The checks are the loop's
	-- (store_job_record's), made on every record, applied or not: a
	-- stricter check here only sends the batch to the loop.
	items := ARRAY(
		SELECT ROW(row_number() OVER (ORDER BY p.rec -> 'job' -> 'cluster',
						     p.rec -> 'job' -> 'jobid',
						     p.rec -> 'job' -> 'start_time', p.ord),
			   p.ord, p.rec,
			   CASE WHEN p.ok THEN p.job ->> 'cluster' END,
			   CASE WHEN p.ok THEN ceems.whole_number(p.job, 'jobid', 'job') END,
			   CASE WHEN p.ok THEN ceems.whole_number(p.job, 'uid', 'job') END,
			   CASE WHEN p.ok THEN to_timestamp(ceems.whole_number(p.job, 'start_time', 'job')) END,
			   CASE WHEN p.ok THEN p.job ->> 'node' END,
			   CASE WHEN p.ok THEN to_timestamp(ceems.whole_number(p.rec, 'written_at', 'record')) END,
			   md5(p.rec::text), NULL, NULL, NULL)::ceems.batch_record
		FROM (SELECT e.value AS rec, e.ord::integer AS ord, x.job,
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
	IF EXISTS (SELECT 1 FROM unnest(items) i
		   WHERE i.cluster IS NULL OR i.jobid IS NULL OR i.uid IS NULL OR
			 i.start_time IS NULL OR i.node IS NULL OR i.written_at IS NULL OR
			 (i.rec -> 'measurements' ->> 'jobid')::bigint IS DISTINCT FROM i.jobid OR
			 (i.rec -> 'measurements' ->> 'uid')::bigint IS DISTINCT FROM i.uid OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(i.rec -> 'measurements' -> 'steps', '[]')) s
				 WHERE jsonb_typeof(s) <> 'object' OR
				       jsonb_typeof(coalesce(s -> 'joules', '{}')) <> 'object') OR
			 EXISTS (SELECT 1 FROM jsonb_array_elements(coalesce(i.rec -> 'notes', '[]')) n
				 WHERE jsonb_typeof(n) <> 'object')) THEN
		RAISE EXCEPTION 'ceems records: a record is not valid: store one by one'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;

	INSERT INTO ceems.clusters (name)
		SELECT DISTINCT i.cluster FROM unnest(items) i ORDER BY 1
		ON CONFLICT (name) DO NOTHING;

	-- Each job row inserted, or locked if stored (DO UPDATE locks the
	-- conflicting row even when its WHERE is false), in the loop's
	-- order.  The first record's owner and indexed columns, as the loop.
	INSERT INTO ceems.jobs (cluster_id, jobid, start_time, uid, user_name,
				account, meta_written_at, meta_node, meta_digest)
		SELECT DISTINCT ON (c.cluster_id, i.jobid, i.start_time)
		       c.cluster_id, i.jobid, i.start_time, i.uid,
		       i.rec -> 'job' ->> 'user', i.rec -> 'job' ->> 'account',
		       i.written_at, i.node, i.digest
		FROM unnest(items) i JOIN ceems.clusters c ON c.name = i.cluster
		ORDER BY c.cluster_id, i.jobid, i.start_time, i.seq
		ON CONFLICT (cluster_id, jobid, start_time)
		DO UPDATE SET uid = EXCLUDED.uid WHERE false;

	-- The outcome of each record, as the loop would give it in its order.
	items := ARRAY(
		WITH k AS (
			SELECT i.seq, i.ord, i.rec, i.cluster, i.jobid, i.uid,
			       i.start_time, i.node, i.written_at, i.digest,
			       j.job_key, j.uid AS job_uid,
			       jn.written_at AS old_written_at,
			       jn.record_digest AS old_digest,
			       count(*) OVER (PARTITION BY j.job_key, i.node) AS records
			FROM unnest(items) i
			JOIN ceems.clusters c ON c.name = i.cluster
			JOIN ceems.jobs j ON j.cluster_id = c.cluster_id
				AND j.jobid = i.jobid AND j.start_time = i.start_time
			LEFT JOIN ceems.job_nodes jn ON jn.job_key = j.job_key
				AND jn.node = i.node)
		SELECT ROW(k.seq, k.ord, k.rec, k.cluster, k.jobid, k.uid,
			   k.start_time, k.node, k.written_at, k.digest, k.job_key,
			   CASE WHEN k.uid <> k.job_uid THEN NULL
				WHEN (k.old_written_at, k.old_digest) >= (k.written_at, k.digest) OR
				     k.records > 1 AND EXISTS (SELECT 1 FROM k e
					     WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq
					       AND (e.written_at, e.digest) >= (k.written_at, k.digest))
				THEN 'unchanged'
				WHEN k.old_written_at IS NULL AND
				     (k.records = 1 OR NOT EXISTS (SELECT 1 FROM k e
						 WHERE e.job_key = k.job_key AND e.node = k.node AND e.seq < k.seq))
				THEN 'inserted'
				ELSE 'replaced' END,
			   k.old_written_at IS NOT NULL)::ceems.batch_record
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
	DELETE FROM ceems.job_nodes jn
		USING unnest(items) i
		WHERE i.outcome <> 'unchanged' AND i.replaces
		  AND jn.job_key = i.job_key AND jn.node = i.node;

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
		(i.rec ->> 'finalized_by'), i.digest, i.rec -> 'job',
		(i.rec #>> '{measurements,alloc_cores}')::bigint,
		(i.rec #>> '{measurements,alloc_mem_bytes}')::bigint,
		(i.rec #>> '{measurements,elapsed_s}')::double precision,
		(i.rec #>> '{measurements,ledger,lifetime_s}')::double precision,
		(i.rec #>> '{measurements,cpu_s}')::double precision,
		coalesce((i.rec #>> '{measurements,gap_s}')::double precision, 0),
		coalesce((i.rec #>> '{measurements,cgroup_gone}')::boolean, false),
		(i.rec #>> '{measurements,usage,mem_peak_bytes}')::bigint,
		coalesce((i.rec #>> '{measurements,usage,peak_sampled}')::boolean, false),
		(i.rec #>> '{measurements,usage,mem_rss_bytes}')::bigint,
		CASE WHEN i.rec #> '{measurements,usage,mem_limit_bytes}' = '"max"' THEN NULL
		     ELSE (i.rec #>> '{measurements,usage,mem_limit_bytes}')::bigint END,
		(i.rec #>> '{measurements,usage,oom_kills}')::bigint,
		(i.rec #>> '{measurements,usage,io_read_bytes}')::bigint,
		(i.rec #>> '{measurements,usage,io_write_bytes}')::bigint,
		(i.rec #>> '{measurements,usage,cpuset}'),
		CASE WHEN jsonb_typeof(i.rec #> '{measurements,usage,failed}') = 'array'
		     THEN ARRAY(SELECT jsonb_array_elements_text(i.rec #> '{measurements,usage,failed}')) END,
		(i.rec #>> '{measurements,ledger,package,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,gpu,joules}')::double precision,
		(i.rec #>> '{measurements,ledger,node,joules}')::double precision,
		CASE WHEN (i.rec #> '{measurements,ledger,package}') ? 'joules' OR (i.rec #> '{measurements,ledger,dram}') ? 'joules' OR (i.rec #> '{measurements,ledger,gpu}') ? 'joules' OR (i.rec #> '{measurements,ledger,node}') ? 'joules'
		     THEN coalesce((i.rec #>> '{measurements,ledger,package,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,dram,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,gpu,joules}')::double precision, 0) +
			  coalesce((i.rec #>> '{measurements,ledger,node,joules}')::double precision, 0) END,
		(i.rec #>> '{measurements,ledger,package,static_j}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,static_j}')::double precision,
		(i.rec #>> '{measurements,ledger,package,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,dram,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,gpu,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,node,covered_s}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,grams}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,covered_s}')::double precision,
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,source}'), ''),
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,zone}'), ''),
		nullif((i.rec #>> '{measurements,ledger,emissions,factor,year}')::bigint, 0),
		(i.rec #>> '{measurements,ledger,emissions,factor,g_per_kwh}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,factor,pue}')::double precision,
		(i.rec #>> '{measurements,ledger,emissions,factor_changed}')::boolean
	FROM unnest(items) i
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
	     jsonb_array_elements(i.rec -> 'measurements' -> 'steps') s
	WHERE i.outcome <> 'unchanged';
	INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text,
				     saving_j, saving_g)
	SELECT i.job_key, i.node, (n.ord - 1)::smallint,
	       (n.value ->> 'id'),
	       (n.value ->> 'text'),
	       (n.value ->> 'saving_j')::double precision,
	       (n.value ->> 'saving_g')::double precision
	FROM unnest(items) i,
	     jsonb_array_elements(i.rec -> 'notes') WITH ORDINALITY n(value, ord)
	WHERE i.outcome <> 'unchanged';

	keys := ARRAY(SELECT DISTINCT i.job_key FROM unnest(items) i
		      WHERE i.outcome <> 'unchanged');
	IF cardinality(keys) > 0 THEN
		PERFORM ceems.refresh_jobs(keys);
	END IF;

	RETURN ARRAY(SELECT i.outcome FROM unnest(items) i ORDER BY i.ord);
END
$$;
COMMENT ON FUNCTION ceems.store_job_records(jsonb) IS
	'The set-wise path of upsert_job_records: the loop''s result, or an error (then the loop runs); not granted';

-- refresh_job (002) for many jobs in one statement: the same
-- expressions, the aggregates per job_key instead of one job's
-- variables.  Leaves a row alone when nothing changes.
CREATE FUNCTION ceems.refresh_jobs(p_job_keys bigint[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
SET plan_cache_mode = force_generic_plan
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
		updated_at = now()
	FROM (SELECT
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
		agg.newest_written_at AS meta_written_at,
		agg.newest_node AS meta_node,
		agg.newest_digest AS meta_digest,
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
		agg.f_source AS emission_factor_source,
		agg.f_zone AS emission_zone,
		agg.f_year AS emission_year,
		agg.f_g_per_kwh AS emission_g_per_kwh,
		agg.f_pue AS pue,
		CASE WHEN agg.factors > 0
		     THEN agg.factors > 1 OR coalesce(agg.factor_changed, false) END
			AS emission_factor_mixed
	      FROM (SELECT jn.job_key,
			   ceems.jsonb_merge(jn.job_meta ORDER BY jn.written_at, jn.node, jn.record_digest) AS meta,
			   (array_agg(jn.written_at ORDER BY jn.written_at DESC, jn.node DESC, jn.record_digest DESC))[1] AS newest_written_at,
			   (array_agg(jn.node ORDER BY jn.written_at DESC, jn.node DESC, jn.record_digest DESC))[1] AS newest_node,
			   (array_agg(jn.record_digest ORDER BY jn.written_at DESC, jn.node DESC, jn.record_digest DESC))[1] AS newest_digest,
			   count(*) AS nodes,
			   sum(jn.cpu_s) AS cpu_s,
			   max(jn.mem_peak_bytes) AS mem_peak_max,
			   sum(jn.mem_peak_bytes) AS mem_peak_sum,
			   max(jn.elapsed_s) AS elapsed_max,
			   sum(jn.lifetime_s) AS lifetime_s,
			   sum(jn.gap_s) AS gap_s,
			   sum(jn.package_j) AS package_j, sum(jn.dram_j) AS dram_j,
			   sum(jn.gpu_j) AS gpu_j, sum(jn.node_j) AS node_j,
			   sum(jn.total_j) AS total_j,
			   sum(jn.package_static_j) AS package_static_j,
			   sum(jn.dram_static_j) AS dram_static_j,
			   sum(jn.package_covered_s) AS package_cov,
			   sum(jn.dram_covered_s) AS dram_cov,
			   sum(jn.gpu_covered_s) AS gpu_cov,
			   sum(jn.node_covered_s) AS node_cov,
			   sum(jn.emissions_g) AS emissions_g,
			   sum(jn.emissions_covered_s) AS emissions_cov,
			   avg(jn.gpu_util_pct) AS gpu_util_pct,
			   max(jn.gpu_mem_peak_bytes) AS gpu_mem_peak,
			   count(DISTINCT (jn.emission_factor_source, jn.emission_zone, jn.emission_year,
					   jn.emission_g_per_kwh, jn.pue))
				   FILTER (WHERE jn.emission_factor_source IS NOT NULL) AS factors,
			   bool_or(jn.emission_factor_changed) AS factor_changed,
			   (array_agg(jn.emission_factor_source ORDER BY jn.node) FILTER (WHERE jn.emission_factor_source IS NOT NULL))[1] AS f_source,
			   (array_agg(jn.emission_zone ORDER BY jn.node) FILTER (WHERE jn.emission_factor_source IS NOT NULL))[1] AS f_zone,
			   (array_agg(jn.emission_year ORDER BY jn.node) FILTER (WHERE jn.emission_factor_source IS NOT NULL))[1] AS f_year,
			   (array_agg(jn.emission_g_per_kwh ORDER BY jn.node) FILTER (WHERE jn.emission_factor_source IS NOT NULL))[1] AS f_g_per_kwh,
			   (array_agg(jn.pue ORDER BY jn.node) FILTER (WHERE jn.emission_factor_source IS NOT NULL))[1] AS f_pue
		    FROM ceems.job_nodes jn
		    WHERE jn.job_key = ANY (p_job_keys)
		    GROUP BY jn.job_key) agg,
	      LATERAL (SELECT
			nullif(ceems.whole_number(agg.meta, 'alloc_cpus', 'job'), 0) AS alloc_cpus,
			nullif(ceems.whole_number(agg.meta, 'req_mem_bytes', 'job'), 0) AS req_mem_bytes,
			CASE WHEN agg.meta ? 'start_time' AND agg.meta ? 'end_time'
			     THEN (ceems.whole_number(agg.meta, 'end_time', 'job') -
				   (agg.meta ->> 'start_time')::bigint)::double precision
			     ELSE agg.elapsed_max END AS elapsed_s) v
	      ) x
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
	       j.emission_factor_mixed)
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
	       x.emission_factor_mixed);
END
$$;
COMMENT ON FUNCTION ceems.refresh_jobs(bigint[]) IS
	'refresh_job for many jobs in one statement: the same result per job';

-- The writer's entry point, same name and contract as 006: set-wise,
-- or the loop when the set-wise path gives up.
CREATE FUNCTION ceems.upsert_job_records(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	outcomes text[];
BEGIN
	IF records IS NULL OR jsonb_typeof(records) <> 'array' THEN
		RAISE EXCEPTION 'ceems records: not a JSON array'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	-- One subtransaction per batch: rolls the set-wise writes back
	-- when it gives up.
	BEGIN
		outcomes := ceems.store_job_records(records);
	EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
		outcomes := NULL;
	END;
	IF outcomes IS NULL THEN
		outcomes := ceems.upsert_job_records_each(records);
	END IF;
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_records(jsonb) IS
	'Store a JSON array of ceems-job-record/1 documents, all or nothing: per record as upsert_job_record; a bad record raises its SQLSTATE (class 22/23) with "ceems records[I]:"; returns the outcomes in input order';

CALL ceems.adopt_objects();

GRANT EXECUTE ON FUNCTION ceems.upsert_job_records(jsonb) TO ceems_writer;
