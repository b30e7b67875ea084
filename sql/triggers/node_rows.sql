-- sql/triggers/node_rows.sql - a job's step, note and GPU rows belong to
-- one of its job_nodes rows: checked per statement, deleted with it, its
-- key fixed.

-- One index probe per row, whatever the statistics: these plans are kept
-- for the session, and a plan made while job_nodes was small read the
-- whole of it for every new row (an anti-join against its materialised
-- index, found in a writer's session on a new database).
CREATE OR REPLACE FUNCTION ceems.check_node_rows()
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

SELECT ceems.create_statement_triggers('ceems.job_steps', 'job_steps_node', 'new_rows',
				       'ceems.check_node_rows()');

SELECT ceems.create_statement_triggers('ceems.job_notes', 'job_notes_node', 'new_rows',
				       'ceems.check_node_rows()');

-- The steps, notes and GPUs of deleted (or truncated) job_nodes rows go
-- with them.
CREATE OR REPLACE FUNCTION ceems.delete_node_rows()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
SET enable_seqscan = off
AS $$
DECLARE
	gone record;
BEGIN
	IF TG_OP = 'TRUNCATE' THEN
		DELETE FROM ceems.job_steps;
		DELETE FROM ceems.job_notes;
		DELETE FROM ceems.job_gpus;
		DELETE FROM ceems.job_marks;
		DELETE FROM ceems.job_mark_intervals;
		RETURN NULL;
	END IF;
	FOR gone IN SELECT o.job_key, o.node FROM old_rows o LOOP
		DELETE FROM ceems.job_steps s
			WHERE s.job_key = gone.job_key AND s.node = gone.node;
		DELETE FROM ceems.job_notes t
			WHERE t.job_key = gone.job_key AND t.node = gone.node;
		DELETE FROM ceems.job_gpus g
			WHERE g.job_key = gone.job_key AND g.node = gone.node;
		DELETE FROM ceems.job_marks m
			WHERE m.job_key = gone.job_key AND m.node = gone.node;
		DELETE FROM ceems.job_mark_intervals w
			WHERE w.job_key = gone.job_key AND w.node = gone.node;
	END LOOP;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION ceems.delete_node_rows() IS
	'Trigger: the steps, notes, GPUs, marks and work intervals of deleted (or truncated) job_nodes rows go with them';

CREATE OR REPLACE TRIGGER job_nodes_children_delete AFTER DELETE ON ceems.job_nodes
	REFERENCING OLD TABLE AS old_rows
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.delete_node_rows();

CREATE OR REPLACE TRIGGER job_nodes_children_truncate AFTER TRUNCATE ON ceems.job_nodes
	FOR EACH STATEMENT EXECUTE FUNCTION ceems.delete_node_rows();

CREATE OR REPLACE FUNCTION ceems.refuse_node_key_change()
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

CREATE OR REPLACE TRIGGER job_nodes_key_fixed BEFORE UPDATE OF job_key, node ON ceems.job_nodes
	FOR EACH ROW
	WHEN (OLD.job_key IS DISTINCT FROM NEW.job_key OR OLD.node IS DISTINCT FROM NEW.node)
	EXECUTE FUNCTION ceems.refuse_node_key_change();

-- As job_steps and job_notes: the node row checked once a
-- statement, the rows gone with their node row.
SELECT ceems.create_statement_triggers('ceems.job_gpus', 'job_gpus_node', 'new_rows',
				       'ceems.check_node_rows()');

SELECT ceems.create_statement_triggers('ceems.job_marks', 'job_marks_node', 'new_rows',
				       'ceems.check_node_rows()');

SELECT ceems.create_statement_triggers('ceems.job_mark_intervals',
				       'job_mark_intervals_node', 'new_rows',
				       'ceems.check_node_rows()');
