-- sql/functions/upsert.sql - the writer's entry points:
-- ceems.upsert_job_record and ceems.upsert_job_records.

CREATE OR REPLACE FUNCTION ceems.upsert_job_record(record jsonb)
RETURNS text LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	s record;
BEGIN
	s := ceems.store_job_record(record);
	IF s.outcome <> 'unchanged' THEN
		PERFORM ceems.refresh_job(s.stored_key);
	END IF;
	RETURN s.outcome;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_record(jsonb) IS
	'Store one ceems-job-record/1 document (doc/storage.md): returns inserted, replaced or unchanged; idempotent and order-independent; SQLSTATE class 22/23 for a bad record';
-- The writer: the write function only.
GRANT EXECUTE ON FUNCTION ceems.upsert_job_record(jsonb) TO ceems_writer;

CREATE OR REPLACE FUNCTION ceems.upsert_job_records_each(records jsonb)
RETURNS text[] LANGUAGE plpgsql VOLATILE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	r record;
	s record;
	outcomes text[];
	changed_keys bigint[] := '{}';
	changed_at integer[] := '{}';
	v_index integer;
	v_state text;
	v_message text;
BEGIN
	IF records IS NULL OR jsonb_typeof(records) <> 'array' THEN
		RAISE EXCEPTION 'ceems records: not a JSON array'
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	outcomes := array_fill(NULL::text, ARRAY[jsonb_array_length(records)]);
	-- One exception block for the whole batch (one subtransaction, not
	-- one per record): it only adds the index to a bad record's error.
	BEGIN
		FOR r IN
			SELECT e.value, e.ord::integer AS ord
			FROM jsonb_array_elements(records) WITH ORDINALITY e(value, ord)
			ORDER BY e.value -> 'job' -> 'cluster', e.value -> 'job' -> 'jobid',
				 e.value -> 'job' -> 'start_time', e.ord
		LOOP
			v_index := r.ord - 1;
			s := ceems.store_job_record(r.value);
			outcomes[r.ord] := s.outcome;
			IF s.outcome <> 'unchanged' THEN
				changed_keys := changed_keys || s.stored_key;
				changed_at := changed_at || r.ord;
			END IF;
		END LOOP;
		-- The jobs rows' checks (end before start...) fail here: the
		-- index named is that of the job's first changed record.
		FOR r IN
			SELECT c.k, min(c.i) AS i
			FROM unnest(changed_keys, changed_at) c(k, i)
			GROUP BY c.k ORDER BY c.k
		LOOP
			v_index := r.i - 1;
			PERFORM ceems.refresh_job(r.k);
		END LOOP;
	EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
		GET STACKED DIAGNOSTICS v_state = RETURNED_SQLSTATE,
					v_message = MESSAGE_TEXT;
		RAISE EXCEPTION 'ceems records[%]: %', v_index, v_message
			USING ERRCODE = v_state;
	END;
	RETURN outcomes;
END
$$;
COMMENT ON FUNCTION ceems.upsert_job_records_each(jsonb) IS
	'006''s batch, record by record: what ceems.upsert_job_records falls back to (and the reference the set-wise path is tested against)';

-- The batch entry point: set-wise, except batches with a record the
-- agent wrote, which go to the loop.
CREATE OR REPLACE FUNCTION ceems.upsert_job_records(records jsonb)
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
	IF NOT EXISTS (SELECT 1 FROM jsonb_array_elements(records) e
		       WHERE jsonb_typeof(e) = 'object'
			 AND coalesce(e ->> 'finalized_by', '') = 'agent') THEN
		-- One subtransaction per batch: rolls the set-wise writes
		-- back when it gives up.
		BEGIN
			outcomes := ceems.store_job_records(records);
		EXCEPTION WHEN data_exception OR integrity_constraint_violation THEN
			outcomes := NULL;
		END;
	END IF;
	IF outcomes IS NULL THEN
		outcomes := ceems.upsert_job_records_each(records);
	END IF;
	RETURN outcomes;
END
$$;
GRANT EXECUTE ON FUNCTION ceems.upsert_job_records(jsonb) TO ceems_writer;
COMMENT ON FUNCTION ceems.upsert_job_records(jsonb) IS
	'Store a JSON array of ceems-job-record/1 documents, all or nothing: per record as upsert_job_record; a bad record raises its SQLSTATE (class 22/23) with "ceems records[I]:"; returns the outcomes in input order';
