-- 013_batch_plans.sql - the set-wise batch (store_job_records) without
-- its two costs that grew with the batch and the table (ingest of 5,000
-- records/s): the rows of the batch no longer carry the records, and the
-- outcomes' plan no longer depends on the batch's size.
--
-- Its functions are defined in sql/functions/store.sql
-- (applied after the migrations, doc/storage.md); this version holds no
-- table change of its own.

CALL ceems.adopt_objects();
