-- 027_missing_nodes.sql - finding the jobs whose figures lack a node.
--
-- A job's figures are the sums over the nodes whose records arrived
-- (jobs.nodes_reported of nnodes); ceems.job_missing_nodes lists the
-- ended jobs that still lack some.  They are few among millions of
-- rows, so a partial index holds just them and the view reads no other.

CREATE INDEX IF NOT EXISTS jobs_missing_nodes ON ceems.jobs (end_time)
	WHERE nnodes > nodes_reported;
