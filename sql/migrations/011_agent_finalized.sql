-- 011_agent_finalized.sql - records the node agent writes itself
-- (lib/agent_finish.c): when the job-side plugin gave up or died after
-- taking a job's final figures, or when a job vanished without ever
-- being deregistered, the agent spools the record with finalized_by
-- 'agent' (doc/record-format.md) rather than lose it.
ALTER TABLE ceems.job_nodes
	DROP CONSTRAINT IF EXISTS job_nodes_finalized_by_check;
ALTER TABLE ceems.job_nodes
	ADD CONSTRAINT job_nodes_finalized_by_check
	CHECK (finalized_by IN ('extern', 'epilog', 'agent'));
COMMENT ON COLUMN ceems.job_nodes.finalized_by IS
	'Which hook wrote the record: the extern step at job end, the epilog as a fallback, or the node agent itself when neither stored it (the note agent-finalized says why)';

CALL ceems.adopt_objects();
