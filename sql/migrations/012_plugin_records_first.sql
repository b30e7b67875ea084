-- 012_plugin_records_first.sql - two changes to how records are stored:
--
-- 1. A record the job-side plugin wrote (finalized_by 'extern' or
--    'epilog') is never replaced by one the node agent wrote for the same
--    node ('agent': lib/agent_finish.c writes one when the plugin did not
--    confirm it stored its own within finish_grace, or when a job vanished
--    unregistered).  Both carry the same measurements, but the plugin's
--    has the job's metadata from slurmctld and no agent-finalized note;
--    the agent's is written later, so "the newest wins" alone let it
--    replace the better record.  The order of precedence of two records
--    of one node is now (written by the plugin, written_at, digest), in
--    the record-by-record loop (store_job_record) and in the set-wise
--    path alike; and when a job's nodes' metadata are merged into its
--    jobs row, plugin-written metadata win over agent-written ones.
--
-- 2. A batch writes each new job's jobs row once, complete.  The
--    set-wise path of 008 inserted a row with the key columns, then
--    refresh_jobs rewrote it whole: two heap tuples and, since the second
--    rarely fit the first's page, a second entry in each of the table's
--    indexes, for every new job (a third of a batch's time in the server,
--    doc/performance.md).  Now the new jobs' keys are drawn first, their
--    job_nodes rows written under those keys (the foreign key checked at
--    the end of the function, deferred within it), and the jobs rows
--    inserted from the same figures refresh_jobs computes, which now come
--    from one function, ceems.job_figures: refresh_jobs, the single-job
--    refresh_job of the loop, and the insert of new jobs all use it, so
--    that a jobs row is the same however its records arrived.  Jobs
--    already stored are locked first (in identity order, as before) and
--    refreshed as before.  A job another writer inserts meanwhile makes
--    the set-wise path give up (the loop handles it), as any surprise does
--    (008's contract).
--
-- The index jobs_cluster_jobid (cluster_id, jobid) goes: jobs_identity
-- (cluster_id, jobid, start_time) serves every lookup it served, and each
-- index costs every insert.

ALTER TABLE ceems.job_nodes ALTER CONSTRAINT job_nodes_job_key_fkey
	DEFERRABLE INITIALLY IMMEDIATE;
DROP INDEX ceems.jobs_cluster_jobid;

ALTER TYPE ceems.batch_record
	ADD ATTRIBUTE by_plugin boolean,	-- finalized_by is not 'agent'
	ADD ATTRIBUTE fresh boolean;		-- its job is new in this batch

CALL ceems.adopt_objects();
