-- sql/policies/jobs.sql - row-level security of jobs: users see their
-- own, coordinators their accounts, admins all.

-- current_user is of type name, whose collation is "C"; user_name is
-- text in the database's default collation, and so is the index
-- jobs_user_start.  `user_name = current_user` would compare in
-- collation "C" and could not use that index: with 10 million jobs the
-- planner walked a whole month of jobs_start instead (every user's jobs
-- of the month, filtered).  The policy compares in the column's own
-- collation, so that the row-level security check is itself an index
-- condition.  Queries should do the same: `user_name = $1` with the
-- name as a text parameter, or `user_name = (current_user COLLATE
-- "default")`.
DROP POLICY IF EXISTS jobs_own ON ceems.jobs;
CREATE POLICY jobs_own ON ceems.jobs FOR SELECT
	USING (user_name = (current_user COLLATE "default"));
COMMENT ON POLICY jobs_own ON ceems.jobs IS 'A user sees the jobs whose user_name is their role name';

DROP POLICY IF EXISTS jobs_coordinated ON ceems.jobs;
CREATE POLICY jobs_coordinated ON ceems.jobs FOR SELECT
	USING (account = ANY (ARRAY(SELECT c.account FROM ceems.coordinators c
				    WHERE c.username = current_user)));
COMMENT ON POLICY jobs_coordinated ON ceems.jobs IS 'A coordinator sees the jobs of their accounts';

DROP POLICY IF EXISTS jobs_admin ON ceems.jobs;
CREATE POLICY jobs_admin ON ceems.jobs FOR SELECT
	USING ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')));
COMMENT ON POLICY jobs_admin ON ceems.jobs IS 'Members of ceems_admin see every job';

DROP POLICY IF EXISTS jobs_admin_reader ON ceems.jobs;
CREATE POLICY jobs_admin_reader ON ceems.jobs FOR SELECT
	USING ((SELECT pg_has_role(current_user, 'ceems_admin_reader', 'USAGE')));
COMMENT ON POLICY jobs_admin_reader ON ceems.jobs IS
	'Members of ceems_admin_reader see every job (read only: they hold no write privilege)';
