-- 035_report_index.sql - a user's month for the reports without a visit
-- to the table.
--
-- `ceems-admin report user` reads every job of a user in the period
-- (tools/report/report_fetch.c, jobs_sql).  Through jobs_user_start each
-- job is a visit to its own page of the table: a heavy user of a site
-- with 10 million jobs a month has over 200,000 jobs spread over nearly
-- half the table's pages, and reading them took seconds
-- (doc/performance.md, "Reports").  This index has the same key and
-- carries every column the report and the row-level security policies
-- read, so the report is an index-only scan of consecutive pages.  It
-- is a wide index (about half the table's size); jobs_user_start stays,
-- narrow, for the listings that visit the table anyway.
--
-- An index-only scan skips the table only for pages the visibility map
-- marks all-visible, which VACUUM sets.  Jobs are inserted, rarely
-- updated: autovacuum's default waits for inserts of a fifth of the
-- table, a week or more of a large site's jobs, so last week's report
-- would visit the table after all.  A hundredth keeps the map within a
-- day or so of the newest jobs.
--
-- Each statement is a no-op where its object is there already: a
-- database's version can be set back and the migrations after it
-- applied again (tests/integration/schema.bats).

CREATE INDEX IF NOT EXISTS jobs_user_report ON ceems.jobs (user_name, start_time)
	INCLUDE (end_time, submit_time, jobid, account, state, elapsed_s,
		 time_limit_min, alloc_cpus, cpu_time_s, req_mem_bytes,
		 mem_peak_bytes, alloc_gpus, gpu_util_pct, package_static_j,
		 dram_static_j, gpu_j, total_j, emissions_g, package_coverage,
		 dram_coverage, gpu_coverage, node_coverage, gap_s, nnodes,
		 nodes_reported);
COMMENT ON INDEX ceems.jobs_user_report IS
	'A user''s jobs by start with every column ceems-admin report reads: its user report is an index-only scan';

ALTER TABLE ceems.jobs SET (autovacuum_vacuum_insert_scale_factor = 0.01);
