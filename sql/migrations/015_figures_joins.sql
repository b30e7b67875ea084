-- 015_figures_joins.sql - ceems.job_figures joins its parts by merge or
-- hash, never by a nested loop (issue 5, ingest of 5,000 records/s).
--
-- job_figures computes a jobs row's figures from the job's job_nodes
-- rows: an aggregate per job, joined to the job's newest node row and to
-- its emission factor, each a DISTINCT ON over the same rows.  Its plan,
-- kept for the session and made for the few rows an array parameter is
-- assumed to hold, joined them by nested loops: each job's aggregate
-- scanned the sorted newest rows of every job from the start, 125,000
-- rows for the 500 new jobs of a batch on a new database.  Without
-- nested loops the planner merges the sorted parts: 34 ms became 10 ms
-- for 500 jobs (auto_explain).  In a filled database, whose plans are
-- made with real statistics, the gain did not show beyond the test
-- machine's noise (doc/performance.md).  For one job (the
-- record-by-record loop's refresh_job) the merge costs what the loop
-- did.
ALTER FUNCTION ceems.job_figures(bigint[]) SET enable_nestloop = off;

CALL ceems.adopt_objects();
