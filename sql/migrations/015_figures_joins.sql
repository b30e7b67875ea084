-- 015_figures_joins.sql - ceems.job_figures joins its parts by merge or
-- hash, never by a nested loop (ingest of 5,000 records/s).
--
-- Its functions are defined in sql/functions/figures.sql
-- (applied after the migrations, doc/storage.md); this version holds no
-- table change of its own.

CALL ceems.adopt_objects();
