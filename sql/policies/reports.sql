-- sql/policies/reports.sql - row-level security of the reports' tables
-- (031_reports.sql): a user opts themselves out or in, admins anybody.

DROP POLICY IF EXISTS report_optout_own ON ceems.report_optout;
CREATE POLICY report_optout_own ON ceems.report_optout FOR ALL
	USING (user_name = (current_user COLLATE "default"))
	WITH CHECK (user_name = (current_user COLLATE "default"));
COMMENT ON POLICY report_optout_own ON ceems.report_optout IS
	'A user sees, adds and removes their own opt-out';

DROP POLICY IF EXISTS report_optout_admin ON ceems.report_optout;
CREATE POLICY report_optout_admin ON ceems.report_optout FOR ALL
	USING ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')))
	WITH CHECK ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')));
COMMENT ON POLICY report_optout_admin ON ceems.report_optout IS
	'Members of ceems_admin see and change every opt-out';

DROP POLICY IF EXISTS report_sent_admin ON ceems.report_sent;
CREATE POLICY report_sent_admin ON ceems.report_sent FOR ALL
	USING ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')))
	WITH CHECK ((SELECT pg_has_role(current_user, 'ceems_admin', 'USAGE')));
COMMENT ON POLICY report_sent_admin ON ceems.report_sent IS
	'Members of ceems_admin see and record every report sent';

DROP POLICY IF EXISTS report_sent_admin_reader ON ceems.report_sent;
CREATE POLICY report_sent_admin_reader ON ceems.report_sent FOR SELECT
	USING ((SELECT pg_has_role(current_user, 'ceems_admin_reader', 'USAGE')));
COMMENT ON POLICY report_sent_admin_reader ON ceems.report_sent IS
	'Members of ceems_admin_reader see every report sent';
