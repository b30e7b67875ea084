-- 021_perf.sql - perf counters per job and node (lib/perf_job.h): the
-- record's measurements.perf object (doc/record-format.md) in a table of
-- its own, and the job-wide sums in a view.
--
-- A row is written by ceems.add_job_perf(record), which the writers call
-- after upsert_job_record(s) with the same record, in the same statement
-- (lib/storage.c), as they call add_job_samples.  It belongs to the
-- job_nodes row of the same record (same digest): a record that loses to
-- the stored one adds nothing, and one that replaces it (job_nodes rows
-- are deleted and inserted again) takes the old row away by the cascade.
--
-- Unknown is not zero: a count is NULL when the node did not measure it,
-- and the two statuses say why ('not supported' on a node without a PMU,
-- 'not measured: descriptor budget', 'agent restarted', ...).

CREATE TABLE ceems.job_node_perf (
	job_key bigint NOT NULL,
	node text NOT NULL,
	software_status text NOT NULL CHECK (software_status <> ''),
	hardware_status text NOT NULL CHECK (hardware_status <> ''),
	running_fraction ceems.fraction,
	task_clock_s double precision CHECK (task_clock_s >= 0),
	context_switches double precision CHECK (context_switches >= 0),
	cpu_migrations double precision CHECK (cpu_migrations >= 0),
	page_faults double precision CHECK (page_faults >= 0),
	cycles double precision CHECK (cycles >= 0),
	instructions double precision CHECK (instructions >= 0),
	cache_references double precision CHECK (cache_references >= 0),
	cache_misses double precision CHECK (cache_misses >= 0),
	branch_misses double precision CHECK (branch_misses >= 0),
	PRIMARY KEY (job_key, node),
	FOREIGN KEY (job_key, node) REFERENCES ceems.job_nodes ON DELETE CASCADE
);
COMMENT ON TABLE ceems.job_node_perf IS
	'perf counters of one job on one node, from the record the job_nodes row holds; counts since the job registered with the node agent, scaled for multiplexing';
COMMENT ON COLUMN ceems.job_node_perf.software_status IS
	'measured, or why the software events have no figures: off, no permission, not measured: descriptor budget, no perf_event cgroup, agent restarted, failed';
COMMENT ON COLUMN ceems.job_node_perf.hardware_status IS
	'measured, or why the hardware events have no figures: off (not asked), not supported (no PMU), and the software reasons';
COMMENT ON COLUMN ceems.job_node_perf.running_fraction IS
	'Lowest share of its enabled time an event group was counting (below 1: counts estimated, multiplexed)';
COMMENT ON COLUMN ceems.job_node_perf.task_clock_s IS 'CPU time the job''s tasks ran, s (perf task-clock)';
COMMENT ON COLUMN ceems.job_node_perf.page_faults IS 'Page faults, minor and major';

ALTER TABLE ceems.job_node_perf ENABLE ROW LEVEL SECURITY;

GRANT SELECT ON ceems.job_node_perf TO ceems_reader;

CALL ceems.adopt_objects();
