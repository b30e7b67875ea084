-- sql/triggers/job_durations.sql - clusters.max_job_s kept by statement-
-- level triggers on jobs (see 009_job_duration_bound.sql for why).

CREATE OR REPLACE FUNCTION ceems.note_job_durations()
RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
	-- Locks a clusters row only when its maximum grows: rare once a
	-- cluster has run its longest jobs.
	UPDATE ceems.clusters c SET max_job_s = d.s
	FROM (SELECT n.cluster_id,
		     max(extract(epoch FROM n.end_time - n.start_time))::double precision AS s
	      FROM new_jobs n
	      WHERE n.end_time IS NOT NULL
	      GROUP BY n.cluster_id) d
	WHERE c.cluster_id = d.cluster_id AND c.max_job_s < d.s;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION ceems.note_job_durations() IS
	'Trigger: raise clusters.max_job_s to the longest job of the statement''s new or changed jobs rows';

SELECT ceems.create_statement_triggers('ceems.jobs', 'jobs_duration', 'new_jobs',
				       'ceems.note_job_durations()');
