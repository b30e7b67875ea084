-- 008_setwise_batch.sql - ceems.upsert_job_records(jsonb) set-wise (issue
-- 5: >= 5,000 records/s from one writer).
--
-- 006 stored a batch with a loop of ceems.store_job_record, about ten
-- statements per record, then ceems.refresh_job per job: ~1 ms a record
-- in the server whatever the batch size (doc/performance.md, "Storage").
-- Here a batch is a fixed number of statements whatever its size: one
-- per table (INSERT ... SELECT FROM the parsed array), one UPDATE ...
-- FROM for the jobs rows.
--
-- The contract of 006 does not change, and the record-at-a-time path
-- stays its reference: the loop of 006 is kept as
-- ceems.upsert_job_records_each, and the set-wise path,
-- ceems.store_job_records, either gives exactly what the loop would (the
-- same rows, the same outcomes) or gives up by raising, in which case
-- its writes are rolled back and the loop runs instead.  It gives up:
--   * when a record fails validation (a required field missing, a field
--     of the wrong type, a measurement of another job, an owner that
--     differs from the stored job's, steps or notes not arrays of
--     objects): the loop then refuses the batch with the bad record's
--     SQLSTATE and "ceems records[I]:", which lib/replay.c answers by
--     storing the batch one record at a time;
--   * when a statement raises a class 22 or 23 error (a CHECK, a value
--     out of range): likewise;
--   * when one node of one job has more than one record that the loop
--     would apply (an older record, then a newer one, in one batch): the
--     loop would insert the older one first and check it against the
--     constraints; the set-wise path stores only the newest, so it
--     leaves such a (rare) batch to the loop rather than accept a record
--     the loop refuses.
-- Giving up costs the rolled-back work, never a different result.
--
-- Why the results are the same: within a batch the loop applies records
-- in the order of (cluster, jobid, start_time, position), and for each
-- (job, node) keeps the newest record by (written_at, digest), counting
-- the stored row; the jobs row is recomputed once per job at the end
-- from its job_nodes rows.  The set-wise path computes the same
-- outcomes from that order (a record is 'unchanged' when the stored row
-- or an earlier record of the batch for its node is as new; 'inserted'
-- when nothing came before it; else 'replaced'), stores the one applied
-- record of each node with the loop's expressions, and recomputes the
-- jobs rows with refresh_job's expressions in one statement.  Lock
-- order is the loop's too: jobs rows in (cluster, jobid, start_time)
-- order, new and stored alike, in one INSERT ... ON CONFLICT.

-- One record of a batch as the set-wise path carries it from statement
-- to statement.
CREATE TYPE ceems.batch_record AS (
	seq integer,		-- order of application (the loop's)
	ord integer,		-- position in the input array, from 1
	rec jsonb,
	cluster text,
	jobid bigint,
	uid bigint,
	start_time timestamptz,
	node text,
	written_at timestamptz,
	digest text,
	job_key bigint,
	outcome text,		-- inserted, replaced, unchanged
	replaces boolean	-- applied over a stored row of its node
);
COMMENT ON TYPE ceems.batch_record IS
	'Internal to ceems.store_job_records: one record of a batch';

CALL ceems.adopt_objects();
