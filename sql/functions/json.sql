-- sql/functions/json.sql - reading the fields of a record (jsonb): typed,
-- with an error naming the field when it has the wrong type.

-- Typed readers of one member of a JSON object: NULL when absent (the
-- record format leaves unknown values out), an error naming WHERE when
-- present with the wrong type.  They cost a PL/pgSQL call each, so only
-- the identity and the structure are read with them; the many figures
-- are read with plain casts ((obj ->> key)::type), which refuse a value
-- of the wrong type too (22P02), only less precisely worded.
-- json_member is the check they share: OBJ's member KEY, NULL when
-- absent or null, or SQLSTATE 22023 "PATH.KEY must be WHAT" when its
-- JSON type is not TYPE.
CREATE OR REPLACE FUNCTION ceems.json_member(obj jsonb, key text, path text,
					     type text, what text)
RETURNS jsonb LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	v jsonb := obj -> key;
BEGIN
	IF v IS NULL OR jsonb_typeof(v) = 'null' THEN
		RETURN NULL;
	END IF;
	IF jsonb_typeof(v) <> type THEN
		RAISE EXCEPTION 'ceems record: %.% must be %', path, key, what
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN v;
END
$$;
COMMENT ON FUNCTION ceems.json_member(jsonb, text, text, text, text) IS
	'A record''s member of a JSON type, NULL when absent, SQLSTATE 22023 naming it when of another type: for the json_ readers';

CREATE OR REPLACE FUNCTION ceems.json_text(obj jsonb, key text, path text)
RETURNS text LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN ceems.json_member(obj, key, path, 'string', 'a string') #>> '{}';

CREATE OR REPLACE FUNCTION ceems.json_float(obj jsonb, key text, path text)
RETURNS double precision LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN (ceems.json_member(obj, key, path, 'number', 'a number') #>> '{}')::double precision;

CREATE OR REPLACE FUNCTION ceems.json_int(obj jsonb, key text, path text)
RETURNS bigint LANGUAGE plpgsql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	n numeric := (ceems.json_member(obj, key, path, 'number', 'a whole number') #>> '{}')::numeric;
BEGIN
	IF n <> trunc(n) THEN
		RAISE EXCEPTION 'ceems record: %.% must be a whole number', path, key
			USING ERRCODE = 'invalid_parameter_value';
	END IF;
	RETURN n::bigint;	-- 22003 when it does not fit
END
$$;

CREATE OR REPLACE FUNCTION ceems.json_bool(obj jsonb, key text, path text)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN (ceems.json_member(obj, key, path, 'boolean', 'true or false') #>> '{}')::boolean;

CREATE OR REPLACE FUNCTION ceems.json_object(obj jsonb, key text, path text)
RETURNS jsonb LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN ceems.json_member(obj, key, path, 'object', 'an object');

-- A ledger domain's idle_unlearned (doc/record-format.md): present only
-- when true, so false where the domain was measured, NULL where it was
-- not (DOMAIN absent).  store_job_record and store_job_records.
CREATE OR REPLACE FUNCTION ceems.idle_unlearned(domain jsonb)
RETURNS boolean LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
RETURN CASE WHEN jsonb_typeof(domain) = 'object'
	    THEN coalesce((domain ->> 'idle_unlearned')::boolean, false) END;

CREATE OR REPLACE FUNCTION ceems.json_time(obj jsonb, key text, path text)
RETURNS timestamptz LANGUAGE sql IMMUTABLE
SET search_path = pg_catalog, pg_temp
AS $$
	SELECT to_timestamp(ceems.json_int(obj, key, path));
$$;

-- Merge objects in aggregation order: the later object's fields win
-- (refresh_job's `meta := meta || job_meta`, as an aggregate).
CREATE OR REPLACE AGGREGATE ceems.jsonb_merge(jsonb) (
	SFUNC = pg_catalog.jsonb_concat,
	STYPE = jsonb,
	INITCOND = '{}'
);
COMMENT ON AGGREGATE ceems.jsonb_merge(jsonb) IS
	'Merge JSON objects in aggregation order (later fields win): the jobs row''s metadata from its node records';

-- ceems.json_int(obj, key, path) as an expression the planner inlines:
-- the PL/pgSQL call is made only to raise its error.
CREATE OR REPLACE FUNCTION ceems.whole_number(obj jsonb, key text, path text)
RETURNS bigint LANGUAGE sql IMMUTABLE
RETURN CASE WHEN coalesce(jsonb_typeof(obj -> key), 'null') = 'null' THEN NULL
	    WHEN jsonb_typeof(obj -> key) <> 'number' THEN ceems.json_int(obj, key, path)
	    WHEN (obj ->> key)::numeric = trunc((obj ->> key)::numeric)
	    THEN (obj ->> key)::numeric::bigint
	    ELSE ceems.json_int(obj, key, path) END;
