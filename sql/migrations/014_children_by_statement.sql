-- 014_children_by_statement.sql - a job's steps and notes belong to its
-- job_nodes row, checked once per statement rather than once per row
-- (target: an ingest of 5,000 records/s).
--
-- The foreign keys of job_steps and job_notes on job_nodes checked each
-- new row with a query of its own (a plan executed, the parent row
-- locked): for a batch of 500 records of two steps each, 1,000 checks
-- and about 7 % of the batch's time in the server; a job with many srun
-- steps, or records with notes, pay more.  The same rules now hold
-- through statement triggers:
--
--   * a step or note row whose (job_key, node) has no job_nodes row is
--     refused, with foreign_key_violation (23503) as before, by one
--     query over the statement's new rows (a primary-key probe each);
--   * deleting job_nodes rows deletes their steps and notes (the keys'
--     ON DELETE CASCADE), and so does deleting a job, whose job_nodes
--     rows go by their own foreign key, and TRUNCATE;
--   * a job_nodes row's key never changes (the keys' NO ACTION).
--
-- What a foreign key also did and these do not: lock the parent row
-- while the child is inserted.  Rows are only written by the upsert
-- functions, which hold the job's jobs row (FOR UPDATE) or created it in
-- the same transaction; a concurrent delete of that job waits for them.

ALTER TABLE ceems.job_steps DROP CONSTRAINT job_steps_job_key_node_fkey;
ALTER TABLE ceems.job_notes DROP CONSTRAINT job_notes_job_key_node_fkey;

CALL ceems.adopt_objects();
