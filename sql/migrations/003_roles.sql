-- 003_roles.sql - who may do what (doc/storage.md, "Roles"):
--   ceems_writer  compute nodes: EXECUTE on the write functions, nothing
--                 else: no table privilege at all, so a node can neither
--                 read nor delete anybody's jobs;
--   ceems_reader  users (database role name = Unix user name), ceems-sacct,
--                 dashboards: SELECT, limited by row-level security to
--                 the user's own jobs, or a coordinator's accounts;
--   ceems_admin   sees every row; maintains coordinators, clusters and
--                 emission factors.  Deleting jobs stays with the owner
--                 (ceems_owner, i.e. whoever runs the migrations).
-- These are group roles (NOLOGIN): grant them to login roles, e.g.
--   CREATE ROLE alice LOGIN IN ROLE ceems_reader;
--   CREATE ROLE slurm LOGIN IN ROLE ceems_writer;
-- Roles belong to the whole PostgreSQL cluster, not to the database: two
-- ceems databases in one cluster share them.

DO $$
DECLARE
	r text;
BEGIN
	FOREACH r IN ARRAY ARRAY['ceems_writer', 'ceems_reader', 'ceems_admin'] LOOP
		IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = r) THEN
			EXECUTE format('CREATE ROLE %I NOLOGIN', r);
		END IF;
	END LOOP;
END
$$;
GRANT ceems_reader TO ceems_admin;

CREATE TABLE ceems.coordinators (
	account text NOT NULL CHECK (account <> ''),
	username text NOT NULL CHECK (username <> ''),
	PRIMARY KEY (account, username)
);
CREATE INDEX coordinators_username ON ceems.coordinators (username);
COMMENT ON TABLE ceems.coordinators IS
	'Who may read the jobs of an account besides their owners (Slurm coordinators); maintained by admins';
COMMENT ON COLUMN ceems.coordinators.username IS 'Database role name (= Unix user name) of the coordinator';

-- Nothing is reachable through PUBLIC.
REVOKE ALL ON SCHEMA ceems FROM PUBLIC;
REVOKE ALL ON ALL TABLES IN SCHEMA ceems FROM PUBLIC;

GRANT USAGE ON SCHEMA ceems TO ceems_writer, ceems_reader, ceems_admin;

-- Readers: every table users query, rows filtered below.
GRANT SELECT ON ceems.jobs, ceems.job_nodes, ceems.job_steps,
		ceems.job_notes, ceems.clusters, ceems.emission_factors,
		ceems.coordinators, ceems.schema_version
	TO ceems_reader;

-- Admins: the reference tables.
GRANT INSERT, UPDATE, DELETE ON ceems.coordinators, ceems.emission_factors
	TO ceems_admin;
GRANT INSERT, UPDATE ON ceems.clusters TO ceems_admin;

-- Row-level security.  The table owner (ceems_owner, and so the SECURITY
-- DEFINER write functions) is not subject to it; superusers neither.
-- Each predicate's sub-select runs once per query (an InitPlan), not per
-- row, so the policies stay cheap on large tables.
ALTER TABLE ceems.jobs ENABLE ROW LEVEL SECURITY;

-- A child row is visible when its job is (the sub-select on jobs is
-- itself filtered by the policies above).
ALTER TABLE ceems.job_nodes ENABLE ROW LEVEL SECURITY;
ALTER TABLE ceems.job_steps ENABLE ROW LEVEL SECURITY;
ALTER TABLE ceems.job_notes ENABLE ROW LEVEL SECURITY;

-- Coordinators: a user sees their own entries, admins all of them and
-- may change them.
ALTER TABLE ceems.coordinators ENABLE ROW LEVEL SECURITY;

CALL ceems.adopt_objects();
