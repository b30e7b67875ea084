-- 022_series_io_perf.sql - a job's time series carries its IO, network
-- and perf figures.
--
-- The node agent's series (lib/agent_series.h) has, per row, the bytes
-- the job's read and write system calls moved on files and its sockets
-- received and sent (eBPF), its page faults and context switches (perf
-- software events) and its instructions per cycle (perf hardware
-- events: the row's instructions over its cycles).  Each is null where
-- the node did not measure it (no eBPF, perf off, no PMU), never 0.
-- job_samples keeps them, add_job_samples reads them (absent in a sample:
-- unknown, as in the records written before them), and
-- downsample_job_samples sums the counts over a bucket and averages ipc
-- by the time of the rows that have it.
--
-- A node agent that restarted while a job ran adds the counts it kept in
-- its checkpoint to those it counted after, and says how long no agent
-- counted (measurements.ebpf_unmeasured_s, measurements.perf.unmeasured_s:
-- doc/record-format.md): job_nodes and job_node_perf keep it, NULL when
-- the whole job was counted.

ALTER TABLE ceems.job_samples
	ADD COLUMN read_bytes double precision CHECK (read_bytes >= 0),
	ADD COLUMN write_bytes double precision CHECK (write_bytes >= 0),
	ADD COLUMN net_in_bytes double precision CHECK (net_in_bytes >= 0),
	ADD COLUMN net_out_bytes double precision CHECK (net_out_bytes >= 0),
	ADD COLUMN page_faults double precision CHECK (page_faults >= 0),
	ADD COLUMN ctx_switches double precision CHECK (ctx_switches >= 0),
	ADD COLUMN ipc double precision CHECK (ipc >= 0);
COMMENT ON COLUMN ceems.job_samples.read_bytes IS
	'Bytes the job''s read system calls took from files in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.write_bytes IS
	'Bytes the job''s write system calls put to files in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.net_in_bytes IS
	'Bytes the job''s TCP and UDP sockets received in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.net_out_bytes IS
	'Bytes the job''s TCP and UDP sockets sent in the interval (eBPF); null: not measured';
COMMENT ON COLUMN ceems.job_samples.page_faults IS
	'Page faults of the job in the interval (perf); null: not counted';
COMMENT ON COLUMN ceems.job_samples.ctx_switches IS
	'Context switches of the job in the interval (perf); null: not counted';
COMMENT ON COLUMN ceems.job_samples.ipc IS
	'Instructions per cycle of the job in the interval (perf hardware events; once downsampled, the mean by time); null: not counted';

-- The time no agent counted a job's IO and network, and its perf events.
ALTER TABLE ceems.job_nodes
	ADD COLUMN ebpf_unmeasured_s double precision CHECK (ebpf_unmeasured_s >= 0);
COMMENT ON COLUMN ceems.job_nodes.ebpf_unmeasured_s IS
	'Seconds of the job no agent counted its IO and network (the node agent was down, restarted): the figures miss them; NULL: none';
ALTER TABLE ceems.job_node_perf
	ADD COLUMN unmeasured_s double precision CHECK (unmeasured_s >= 0);
COMMENT ON COLUMN ceems.job_node_perf.unmeasured_s IS
	'Seconds of the job no agent counted its perf events (the node agent was down, restarted): the counts miss them; NULL: none';

-- The definitions that read and write these columns (add_job_samples,
-- downsample_job_samples, add_known: sql/functions/samples.sql;
-- store_job_node_io: sql/functions/store.sql; add_job_perf:
-- sql/functions/perf.sql) are applied after the migrations.

CALL ceems.adopt_objects();
