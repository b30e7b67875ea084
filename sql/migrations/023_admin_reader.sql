-- 023_admin_reader.sql - a role that reads every job and writes nothing,
-- for dashboards that show the whole site (Grafana, doc/grafana.md).
--
-- ceems_reader sees one user's jobs (or a coordinator's accounts): a
-- shared Grafana login in it sees the jobs of a role named "grafana",
-- i.e. none.  ceems_admin sees every job but also maintains
-- coordinators, emission factors, clusters and the sample partitions, and
-- Grafana lets every dashboard editor run any SQL through its data
-- source: a login in ceems_admin would let them rewrite who coordinates
-- what.  ceems_admin_reader is ceems_reader's SELECT on every table and
-- view, with a policy that shows it every row of jobs (and so of every
-- child table, whose policies look the job up; sql/policies/jobs.sql),
-- and nothing else:
--   CREATE ROLE grafana LOGIN IN ROLE ceems_admin_reader;
-- A group role (NOLOGIN), created when missing: roles belong to the
-- whole PostgreSQL cluster, not to the database.

DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ceems_admin_reader') THEN
		CREATE ROLE ceems_admin_reader NOLOGIN;
	END IF;
END
$$;
GRANT ceems_reader TO ceems_admin_reader;

-- Its policies on jobs and coordinators are in sql/policies/.

CALL ceems.adopt_objects();
