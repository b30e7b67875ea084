-- sql/policies/job_rows.sql - row-level security of a job's other rows:
-- visible with their job.

DROP POLICY IF EXISTS job_nodes_visible ON ceems.job_nodes;
CREATE POLICY job_nodes_visible ON ceems.job_nodes FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_nodes.job_key));

DROP POLICY IF EXISTS job_steps_visible ON ceems.job_steps;
CREATE POLICY job_steps_visible ON ceems.job_steps FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_steps.job_key));

DROP POLICY IF EXISTS job_notes_visible ON ceems.job_notes;
CREATE POLICY job_notes_visible ON ceems.job_notes FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_notes.job_key));

DROP POLICY IF EXISTS job_samples_visible ON ceems.job_samples;
CREATE POLICY job_samples_visible ON ceems.job_samples FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_samples.job_key));

DROP POLICY IF EXISTS job_gpus_visible ON ceems.job_gpus;
CREATE POLICY job_gpus_visible ON ceems.job_gpus FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_gpus.job_key));
COMMENT ON POLICY job_gpus_visible ON ceems.job_gpus IS
	'A GPU row is visible when its job is';

DROP POLICY IF EXISTS job_node_perf_visible ON ceems.job_node_perf;
CREATE POLICY job_node_perf_visible ON ceems.job_node_perf FOR SELECT
	USING (EXISTS (SELECT 1 FROM ceems.jobs j WHERE j.job_key = job_node_perf.job_key));
