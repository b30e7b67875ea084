-- 025_usage_reports_numeric.sql - the usage reports (per day, per month,
-- the top wasters) give numeric figures rounded to fixed places instead
-- of double precision (sql/views/usage.sql says which places and why),
-- and their sums per day and per month come from one function,
-- ceems.usage_sums, in place of ceems.usage_months.
--
-- CREATE OR REPLACE VIEW cannot change a column's type, nor CREATE OR
-- REPLACE FUNCTION a result's: those views and the function are dropped
-- here, once, and made again by the definitions, which are applied after
-- the migrations in the same transaction.  A view of a site's own on one
-- of them makes this migration fail, naming it: drop that view, migrate,
-- and make it again.

DROP VIEW IF EXISTS ceems.usage_by_user_month, ceems.usage_by_account_month,
	ceems.usage_by_partition_month, ceems.usage_monthly,
	ceems.idle_waste_by_user_month, ceems.idle_waste_jobs, ceems.usage_daily;
DROP FUNCTION IF EXISTS ceems.usage_months(boolean, boolean, boolean);

CALL ceems.adopt_objects();
