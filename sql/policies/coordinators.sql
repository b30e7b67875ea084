-- sql/policies/coordinators.sql - Row-level security of ceems.coordinators.

DROP POLICY IF EXISTS coordinators_own ON ceems.coordinators;
CREATE POLICY coordinators_own ON ceems.coordinators FOR SELECT
	USING (username = current_user);

DROP POLICY IF EXISTS coordinators_admin ON ceems.coordinators;
CREATE POLICY coordinators_admin ON ceems.coordinators FOR ALL
	USING ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')))
	WITH CHECK ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')));

DROP POLICY IF EXISTS coordinators_admin_reader ON ceems.coordinators;
CREATE POLICY coordinators_admin_reader ON ceems.coordinators FOR SELECT
	USING ((SELECT pg_has_role(current_user, 'ceems_admin_reader', 'USAGE')));
COMMENT ON POLICY coordinators_admin_reader ON ceems.coordinators IS
	'Members of ceems_admin_reader see every coordinator entry';
