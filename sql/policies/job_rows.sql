-- sql/policies/job_rows.sql - row-level security of a job's other rows:
-- visible with their job.

-- The one policy of each table whose rows hang on a job by job_key:
-- TABLE_visible, a row visible when its jobs row is (the jobs policies
-- decide which).
DO $$
DECLARE
	tbl text;
BEGIN
	FOREACH tbl IN ARRAY ARRAY['job_nodes', 'job_steps', 'job_notes', 'job_samples',
				   'job_gpus', 'job_node_perf', 'job_marks',
				   'job_mark_intervals'] LOOP
		EXECUTE format('DROP POLICY IF EXISTS %I ON ceems.%I',
			       tbl || '_visible', tbl);
		EXECUTE format('CREATE POLICY %I ON ceems.%I FOR SELECT '
			       'USING (EXISTS (SELECT 1 FROM ceems.jobs j '
			       'WHERE j.job_key = %I.job_key))',
			       tbl || '_visible', tbl, tbl);
	END LOOP;
END
$$;
COMMENT ON POLICY job_gpus_visible ON ceems.job_gpus IS
	'A GPU row is visible when its job is';
COMMENT ON POLICY job_marks_visible ON ceems.job_marks IS
	'A row of a job''s marks is visible when its job is';
COMMENT ON POLICY job_mark_intervals_visible ON ceems.job_mark_intervals IS
	'A row of a job''s work per interval is visible when its job is';
