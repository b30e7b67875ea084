-- sql/functions/marks.sql - the work jobs reported of themselves (the
-- records' "marks", doc/record-format.md) into ceems.job_marks, and
-- their work per interval into ceems.job_mark_intervals.

-- The marks of stored records: P_KEYS[i], P_NODES[i] is the job_nodes
-- row just written for the record P_RECORDS[i].  A record that replaces
-- another replaced its node row, and its marks went with it
-- (delete_node_rows).
CREATE OR REPLACE FUNCTION ceems.store_job_marks(p_keys bigint[], p_nodes text[], p_records jsonb[])
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	IF EXISTS (SELECT 1 FROM unnest(p_records) r
		   WHERE jsonb_typeof(coalesce(r -> 'marks', '[]')) <> 'array') OR
	   EXISTS (SELECT 1 FROM unnest(p_records) r,
			 jsonb_array_elements(coalesce(r -> 'marks', '[]')) m
		   WHERE jsonb_typeof(m) <> 'object' OR
			 jsonb_typeof(m -> 'work') <> 'number' OR
			 jsonb_typeof(m -> 'marks') <> 'number' OR
			 jsonb_typeof(coalesce(m -> 'tag', '""')) <> 'string' OR
			 jsonb_typeof(coalesce(m -> 'interval_s', '1')) <> 'number' OR
			 jsonb_typeof(coalesce(m -> 'intervals', '[]')) <> 'array') OR
	   EXISTS (SELECT 1 FROM unnest(p_records) r,
			 jsonb_array_elements(coalesce(r -> 'marks', '[]')) m,
			 jsonb_array_elements(coalesce(m -> 'intervals', '[]')) w
		   WHERE jsonb_typeof(w) <> 'array' OR jsonb_array_length(w) <> 2 OR
			 jsonb_typeof(w -> 0) <> 'number' OR
			 jsonb_typeof(w -> 1) <> 'number' OR
			 m -> 'interval_s' IS NULL) THEN
		RAISE EXCEPTION 'ceems record: marks must be an array of objects with numbers work and marks (a string tag; intervals, with interval_s, of [t, work] numbers)'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	INSERT INTO ceems.job_marks (job_key, node, ordinal, name, unit, work, marks, tag,
				     interval_s)
	SELECT i.k, i.n, (m.ord - 1)::smallint, m.value ->> 'name', m.value ->> 'unit',
	       (m.value ->> 'work')::double precision,
	       (m.value ->> 'marks')::bigint, m.value ->> 'tag',
	       (m.value ->> 'interval_s')::integer
	FROM unnest(p_keys, p_nodes, p_records) i(k, n, r),
	     jsonb_array_elements(i.r -> 'marks') WITH ORDINALITY m(value, ord)
	WHERE jsonb_typeof(i.r -> 'marks') = 'array';
	INSERT INTO ceems.job_mark_intervals (job_key, node, name, t, work)
	SELECT i.k, i.n, m.value ->> 'name', to_timestamp((w.value ->> 0)::bigint),
	       (w.value ->> 1)::double precision
	FROM unnest(p_keys, p_nodes, p_records) i(k, n, r),
	     jsonb_array_elements(i.r -> 'marks') m(value),
	     jsonb_array_elements(m.value -> 'intervals') w(value)
	WHERE jsonb_typeof(i.r -> 'marks') = 'array' AND
	      jsonb_typeof(m.value -> 'intervals') = 'array';
END
$$;
COMMENT ON FUNCTION ceems.store_job_marks(bigint[], text[], jsonb[]) IS
	'The marks of records just stored into job_marks: for store_job_record and store_job_records only (not granted)';
