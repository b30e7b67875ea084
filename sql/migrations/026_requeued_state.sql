-- 026_requeued_state.sql - a run of a job that Slurm requeued (scontrol
-- requeue, a node failure or a preemption that requeues) is recorded in
-- the state Slurm's own accounting gives it, REQUEUED; the job's next
-- run has a row of its own (its own start time), as before.

ALTER DOMAIN ceems.job_state DROP CONSTRAINT job_state_check;
ALTER DOMAIN ceems.job_state ADD CONSTRAINT job_state_check
	CHECK (VALUE IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
			 'OUT_OF_MEMORY', 'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL',
			 'DEADLINE', 'REQUEUED', 'RUNNING'));
