-- sql/views/job_missing_nodes.sql - the ended jobs whose nodes have not
-- all reported: partial figures, and the nodes to look at.

-- A node's record can be late for a while (its spool is replayed once
-- the database is back), so the view says how long ago the job ended;
-- an admin looks at the nodes of jobs listed for longer than the nodes'
-- replay takes.  The nodes that did report are named; nodelist, in
-- Slurm's hostlist form, names them all.  security_invoker: a user sees
-- their own jobs only, as in every view.
CREATE OR REPLACE VIEW ceems.job_missing_nodes WITH (security_invoker = true) AS
SELECT j.job_key,
       c.name AS cluster,
       j.jobid,
       j.user_name,
       j.account,
       j.state,
       j.start_time,
       j.end_time,
       now() - j.end_time AS since_end,
       j.nnodes,
       j.nodes_reported,
       j.nnodes - j.nodes_reported AS nodes_missing,
       j.nodelist,
       (SELECT string_agg(n.node, ',' ORDER BY n.node COLLATE "C")
	  FROM ceems.job_nodes n
	 WHERE n.job_key = j.job_key) AS reported_nodes
FROM ceems.jobs j
JOIN ceems.clusters c USING (cluster_id)
WHERE j.nnodes > j.nodes_reported
  AND j.end_time IS NOT NULL;
COMMENT ON VIEW ceems.job_missing_nodes IS
	'Ended jobs whose figures lack some node''s record: how many, which reported, how long since the end';
COMMENT ON COLUMN ceems.job_missing_nodes.reported_nodes IS
	'The nodes whose records are in, by name, comma-separated; nodelist names all the job''s nodes';
GRANT SELECT ON ceems.job_missing_nodes TO ceems_reader;
