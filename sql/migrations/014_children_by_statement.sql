-- 014_children_by_statement.sql - a job's steps and notes belong to its
-- job_nodes row, checked once per statement rather than once per row
-- (issue 5, ingest of 5,000 records/s).
--
-- The foreign keys of job_steps and job_notes on job_nodes checked each
-- new row with a query of its own (a plan executed, the parent row
-- locked): for a batch of 500 records of two steps each, 1,000 checks
-- and about 7 % of the batch's time in the server; a job with many srun
-- steps, or records with notes, pay more.  The same rules now hold
-- through statement triggers:
--
--   * a step or note row whose (job_key, node) has no job_nodes row is
--     refused, with foreign_key_violation (23503) as before, by one
--     query over the statement's new rows (a primary-key probe each);
--   * deleting job_nodes rows deletes their steps and notes (the keys'
--     ON DELETE CASCADE), and so does deleting a job, whose job_nodes
--     rows go by their own foreign key, and TRUNCATE;
--   * a job_nodes row's key never changes (the keys' NO ACTION).
--
-- What a foreign key also did and these do not: lock the parent row
-- while the child is inserted.  Rows are only written by the upsert
-- functions, which hold the job's jobs row (FOR UPDATE) or created it in
-- the same transaction; a concurrent delete of that job waits for them.

ALTER TABLE ceems.job_steps DROP CONSTRAINT job_steps_job_key_node_fkey;
ALTER TABLE ceems.job_notes DROP CONSTRAINT job_notes_job_key_node_fkey;

-- One index probe per row, whatever the statistics: these plans are kept
-- for the session, and a plan made while job_nodes was small read the
-- whole of it for every new row (an anti-join against its materialised
-- index, found in a writer's session on a new database).
CREATE FUNCTION ceems.check_node_rows()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
	orphan record;
BEGIN
	SELECT c.job_key, c.node INTO orphan
	FROM new_rows c
	     LEFT JOIN LATERAL (SELECT 1 AS found FROM ceems.job_nodes n
				WHERE n.job_key = c.job_key AND n.node = c.node
				OFFSET 0) p ON true
	WHERE p.found IS NULL
	LIMIT 1;
	IF FOUND THEN
		RAISE EXCEPTION 'a row of %.% has no job_nodes row (job_key %, node %)',
			TG_TABLE_SCHEMA, TG_TABLE_NAME, orphan.job_key, orphan.node
			USING ERRCODE = 'foreign_key_violation',
			      TABLE = TG_TABLE_NAME, SCHEMA = TG_TABLE_SCHEMA;
	END IF;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION ceems.check_node_rows() IS
	'Trigger: every new job_steps or job_notes row of the statement has its job_nodes row (the foreign key, checked once a statement)';

CREATE TRIGGER job_steps_node_insert AFTER INSERT ON ceems.job_steps
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();
CREATE TRIGGER job_steps_node_update AFTER UPDATE ON ceems.job_steps
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();
CREATE TRIGGER job_notes_node_insert AFTER INSERT ON ceems.job_notes
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();
CREATE TRIGGER job_notes_node_update AFTER UPDATE ON ceems.job_notes
	REFERENCING NEW TABLE AS new_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.check_node_rows();

CREATE FUNCTION ceems.delete_node_rows()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
	gone record;
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		-- Not TRUNCATE: the statement may be truncating them too,
		-- and a table in use cannot be (then they are empty already).
		DELETE FROM ceems.job_steps;
		DELETE FROM ceems.job_notes;
		RETURN NULL;
	END IF;
	-- Row by row: each delete is a probe of the primary key, whatever
	-- the statement's size (mostly one row: a replaced record, or one
	-- job's nodes going with it).
	FOR gone IN SELECT o.job_key, o.node FROM old_rows o LOOP
		DELETE FROM ceems.job_steps s
			WHERE s.job_key = gone.job_key AND s.node = gone.node;
		DELETE FROM ceems.job_notes t
			WHERE t.job_key = gone.job_key AND t.node = gone.node;
	END LOOP;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION ceems.delete_node_rows() IS
	'Trigger: the steps and notes of deleted (or truncated) job_nodes rows go with them';

CREATE TRIGGER job_nodes_children_delete AFTER DELETE ON ceems.job_nodes
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.delete_node_rows();
CREATE TRIGGER job_nodes_children_truncate AFTER TRUNCATE ON ceems.job_nodes
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.delete_node_rows();

CREATE FUNCTION ceems.refuse_node_key_change()
RETURNS trigger LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	RAISE EXCEPTION 'the key of a job_nodes row (job_key %, node %) does not change: its steps and notes hang on it',
		OLD.job_key, OLD.node
		USING ERRCODE = 'foreign_key_violation';
END
$$;
COMMENT ON FUNCTION ceems.refuse_node_key_change() IS
	'Trigger: a job_nodes row keeps its key (the steps'' and notes'' foreign keys were NO ACTION on update)';

CREATE TRIGGER job_nodes_key_fixed BEFORE UPDATE OF job_key, node ON ceems.job_nodes
	FOR EACH ROW
	WHEN (OLD.job_key IS DISTINCT FROM NEW.job_key OR OLD.node IS DISTINCT FROM NEW.node)
	EXECUTE FUNCTION ceems.refuse_node_key_change();

CALL ceems.adopt_objects();
