-- 030_energy_err.sql - how sure a job's energy is: each energy domain's
-- error bound on a node, by its causes, and the job's bound.
--
-- measurements.ledger.DOMAIN.err (doc/record-format.md): the bound of
-- the domain's figure in joules, at about 95%, in four parts (the
-- model: doc/attribution.md, "How sure a figure is").  NULL where the
-- domain was not measured, where its bound is unknown (the node's agent
-- restarted during the job, or a gap came before the node had shown the
-- domain's power), and in the rows stored before this migration (their
-- records are not read again: not known).  Never 0 for unknown.
--
-- job_nodes.energy_err_j: the node's bound, its domains' added (their
-- errors may share a cause, so they are not taken as independent),
-- when every domain with energy has one.  jobs.energy_err_j: the job's,
-- its nodes' added when every node with energy has one; computed by
-- ceems.job_figures (sql/functions/figures.sql), stored by
-- sql/functions/store.sql and sql/functions/refresh.sql.
--
-- IF NOT EXISTS: a database whose version was set back runs it again.

ALTER TABLE ceems.job_nodes
	ADD COLUMN IF NOT EXISTS package_err_source_j double precision CHECK (package_err_source_j >= 0),
	ADD COLUMN IF NOT EXISTS package_err_lag_j double precision CHECK (package_err_lag_j >= 0),
	ADD COLUMN IF NOT EXISTS package_err_idle_power_j double precision CHECK (package_err_idle_power_j >= 0),
	ADD COLUMN IF NOT EXISTS package_err_gaps_j double precision CHECK (package_err_gaps_j >= 0),
	ADD COLUMN IF NOT EXISTS dram_err_source_j double precision CHECK (dram_err_source_j >= 0),
	ADD COLUMN IF NOT EXISTS dram_err_lag_j double precision CHECK (dram_err_lag_j >= 0),
	ADD COLUMN IF NOT EXISTS dram_err_idle_power_j double precision CHECK (dram_err_idle_power_j >= 0),
	ADD COLUMN IF NOT EXISTS dram_err_gaps_j double precision CHECK (dram_err_gaps_j >= 0),
	ADD COLUMN IF NOT EXISTS gpu_err_source_j double precision CHECK (gpu_err_source_j >= 0),
	ADD COLUMN IF NOT EXISTS gpu_err_lag_j double precision CHECK (gpu_err_lag_j >= 0),
	ADD COLUMN IF NOT EXISTS gpu_err_idle_power_j double precision CHECK (gpu_err_idle_power_j >= 0),
	ADD COLUMN IF NOT EXISTS gpu_err_gaps_j double precision CHECK (gpu_err_gaps_j >= 0),
	ADD COLUMN IF NOT EXISTS node_err_source_j double precision CHECK (node_err_source_j >= 0),
	ADD COLUMN IF NOT EXISTS node_err_lag_j double precision CHECK (node_err_lag_j >= 0),
	ADD COLUMN IF NOT EXISTS node_err_idle_power_j double precision CHECK (node_err_idle_power_j >= 0),
	ADD COLUMN IF NOT EXISTS node_err_gaps_j double precision CHECK (node_err_gaps_j >= 0),
	ADD COLUMN IF NOT EXISTS energy_err_j double precision
		GENERATED ALWAYS AS (CASE WHEN total_j IS NOT NULL AND
			(package_j IS NULL OR package_err_source_j IS NOT NULL) AND
			(dram_j IS NULL OR dram_err_source_j IS NOT NULL) AND
			(gpu_j IS NULL OR gpu_err_source_j IS NOT NULL) AND
			(node_j IS NULL OR node_err_source_j IS NOT NULL)
		THEN
			coalesce(package_err_source_j, 0) +
			coalesce(package_err_lag_j, 0) +
			coalesce(package_err_idle_power_j, 0) +
			coalesce(package_err_gaps_j, 0) +
			coalesce(dram_err_source_j, 0) +
			coalesce(dram_err_lag_j, 0) +
			coalesce(dram_err_idle_power_j, 0) +
			coalesce(dram_err_gaps_j, 0) +
			coalesce(gpu_err_source_j, 0) +
			coalesce(gpu_err_lag_j, 0) +
			coalesce(gpu_err_idle_power_j, 0) +
			coalesce(gpu_err_gaps_j, 0) +
			coalesce(node_err_source_j, 0) +
			coalesce(node_err_lag_j, 0) +
			coalesce(node_err_idle_power_j, 0) +
			coalesce(node_err_gaps_j, 0) END) STORED;
COMMENT ON COLUMN ceems.job_nodes.package_err_source_j IS
	'Error bound of the node''s package energy, J, from its sources'' resolution; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.package_err_lag_j IS
	'Error bound of the node''s package energy, J, from a power reading''s lag; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.package_err_idle_power_j IS
	'Error bound of the node''s package energy, J, from the idle power''s uncertainty, through the static split; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.package_err_gaps_j IS
	'Error bound of the node''s package energy, J, from what the time no measurement covered could have held; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.dram_err_source_j IS
	'Error bound of the node''s dram energy, J, from its sources'' resolution; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.dram_err_lag_j IS
	'Error bound of the node''s dram energy, J, from a power reading''s lag; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.dram_err_idle_power_j IS
	'Error bound of the node''s dram energy, J, from the idle power''s uncertainty, through the static split; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.dram_err_gaps_j IS
	'Error bound of the node''s dram energy, J, from what the time no measurement covered could have held; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.gpu_err_source_j IS
	'Error bound of the node''s gpu energy, J, from its sources'' resolution; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.gpu_err_lag_j IS
	'Error bound of the node''s gpu energy, J, from a power reading''s lag; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.gpu_err_idle_power_j IS
	'Error bound of the node''s gpu energy, J, from the idle power''s uncertainty, through the static split; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.gpu_err_gaps_j IS
	'Error bound of the node''s gpu energy, J, from what the time no measurement covered could have held; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.node_err_source_j IS
	'Error bound of the node''s node energy, J, from its sources'' resolution; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.node_err_lag_j IS
	'Error bound of the node''s node energy, J, from a power reading''s lag; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.node_err_idle_power_j IS
	'Error bound of the node''s node energy, J, from the idle power''s uncertainty, through the static split; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.node_err_gaps_j IS
	'Error bound of the node''s node energy, J, from what the time no measurement covered could have held; null: not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.energy_err_j IS
	'Error bound of the node''s energy (total_j), J, at about 95%: its domains'' bounds added; null: some domain with energy has no bound, or not known';

ALTER TABLE ceems.jobs
	ADD COLUMN IF NOT EXISTS energy_err_j double precision CHECK (energy_err_j >= 0);
COMMENT ON COLUMN ceems.jobs.energy_err_j IS
	'Error bound of the job''s energy (total_j), J, at about 95%: its nodes'' bounds added; null: some node with energy has none, or not known';

CALL ceems.adopt_objects();
