-- 007_own_jobs_index.sql - a user's own jobs through the (user_name,
-- start_time) index (issue 5: a user's month in <= 50 ms with 10 million
-- jobs; doc/performance.md, "Storage").
--
-- current_user is of type name, whose collation is "C"; user_name is
-- text in the database's default collation, and so is the index
-- jobs_user_start.  `user_name = current_user` therefore compares in
-- collation "C" and cannot use that index: with 10 million jobs the
-- planner walked a whole month of jobs_start instead (every user's jobs
-- of the month, filtered).  The policy now compares in the column's own
-- collation, so that the row-level security check is itself an index
-- condition.  Queries should do the same: `user_name = $1` with the
-- name as a text parameter, or `user_name = (current_user COLLATE
-- "default")`.
ALTER POLICY jobs_own ON ceems.jobs
	USING (user_name = (current_user COLLATE "default"));

CALL ceems.adopt_objects();
