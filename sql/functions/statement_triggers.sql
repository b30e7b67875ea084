-- sql/functions/statement_triggers.sql - the pair of statement-level
-- triggers (after insert, after update) that hand a function the rows a
-- statement wrote, as a transition table.

-- PostgreSQL refuses a transition table on a trigger of more than one
-- event, so each watched table needs two triggers alike but for the
-- event: NAME_insert and NAME_update on P_TABLE, each running P_FUNCTION
-- once a statement with the new rows as TRANSITION.  Run by the files of
-- sql/triggers; CREATE OR REPLACE, so that they can be applied again.
CREATE OR REPLACE FUNCTION ceems.create_statement_triggers(p_table regclass, p_name text,
							   p_transition text,
							   p_function regprocedure)
RETURNS void LANGUAGE plpgsql VOLATILE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	event text;
BEGIN
	FOREACH event IN ARRAY ARRAY['insert', 'update'] LOOP
		EXECUTE format('CREATE OR REPLACE TRIGGER %I AFTER %s ON %s '
			       'REFERENCING NEW TABLE AS %I '
			       'FOR EACH STATEMENT EXECUTE FUNCTION %s',
			       p_name || '_' || event, upper(event), p_table,
			       p_transition, p_function);
	END LOOP;
END
$$;
COMMENT ON FUNCTION ceems.create_statement_triggers(regclass, text, text, regprocedure) IS
	'Create (or replace) the triggers NAME_insert and NAME_update on TABLE, each running FUNCTION once a statement with its new rows as TRANSITION: for the files of sql/triggers (not granted)';
