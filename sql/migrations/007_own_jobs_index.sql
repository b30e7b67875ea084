-- 007_own_jobs_index.sql - a user's own jobs through the (user_name,
-- start_time) index (target: a user's month in <= 50 ms with 10 million
-- jobs; doc/performance.md, "Storage").  The policy jobs_own it changed
-- is defined in sql/policies/jobs.sql, which says why it compares in the
-- column's collation; the version stays, with no table change of its own.

CALL ceems.adopt_objects();
