-- 018_gpu_devices.sql - the GPUs a job held on each node, and the job's
-- GPU figures from them.
--
-- A record's measurements carry "gpus": one object per GPU the job held
-- on the node (a whole device, a MIG instance or a share of one), with
-- its identity and each figure only when measured (doc/record-format.md).
-- They are kept in ceems.job_gpus, one row per GPU and node, and summed
-- into the node's and the job's GPU columns:
--
--   * gpu_util_pct, gpu_sm_active_pct: the mean over the GPUs that have
--     the figure, each weighted by its share of its device (every GPU
--     of a job is held for the job's whole time, so the share is the
--     weight of GPU-time);
--   * gpu_mem_peak_bytes: the sum of the GPUs' peaks (each its own peak,
--     so an upper bound of the memory used at one time), when every
--     GPU's peak is known (a part of the sum would understate it);
--   * gpu_mem_total_bytes: the sum of their memory, when every GPU's is
--     known.
--
-- The writers of 012-017 are kept and wrapped (as 008 renamed
-- upsert_job_records): store_job_record and store_job_records store the
-- GPUs of each record they stored, refresh_jobs adds the job's GPU
-- figures to what it recomputes.  A replayed record changes nothing (its
-- outcome is 'unchanged'); a record that replaces another replaces its
-- GPU rows with the job_nodes row (delete_node_rows).

ALTER TABLE ceems.jobs
	ADD COLUMN gpu_mem_total_bytes bigint CHECK (gpu_mem_total_bytes > 0),
	ADD COLUMN gpu_sm_active_pct double precision
		CHECK (gpu_sm_active_pct BETWEEN 0 AND 100);
COMMENT ON COLUMN ceems.jobs.gpu_util_pct IS
	'Mean GPU utilisation (time a kernel ran), %, over the job''s GPUs that measured it, each weighted by its share of the device; NULL when none did';
COMMENT ON COLUMN ceems.jobs.gpu_mem_peak_bytes IS
	'Sum of the peaks of GPU memory of the job''s GPUs that measured it (each GPU''s own peak: an upper bound of the use at one time); NULL when none did';
COMMENT ON COLUMN ceems.jobs.gpu_mem_total_bytes IS
	'Memory of the job''s GPUs (a MIG instance''s own), summed; NULL unless every GPU''s is known';
COMMENT ON COLUMN ceems.jobs.gpu_sm_active_pct IS
	'Mean SM activity of the job''s GPUs that measured it (profiling metrics), %, weighted by share; NULL when none did';

ALTER TABLE ceems.job_nodes
	ADD COLUMN gpu_mem_total_bytes bigint CHECK (gpu_mem_total_bytes > 0),
	ADD COLUMN gpu_sm_active_pct double precision
		CHECK (gpu_sm_active_pct BETWEEN 0 AND 100);
COMMENT ON COLUMN ceems.job_nodes.gpu_util_pct IS
	'Mean GPU utilisation of the job''s GPUs on this node, weighted by share (as jobs.gpu_util_pct)';
COMMENT ON COLUMN ceems.job_nodes.gpu_mem_peak_bytes IS
	'Sum of the GPU memory peaks of the job''s GPUs on this node that measured it';
COMMENT ON COLUMN ceems.job_nodes.gpu_mem_total_bytes IS
	'Memory of the job''s GPUs on this node, summed; NULL unless every GPU''s is known';
COMMENT ON COLUMN ceems.job_nodes.gpu_sm_active_pct IS
	'Mean SM activity of the job''s GPUs on this node, weighted by share';

CREATE TABLE ceems.job_gpus (
	job_key bigint NOT NULL,
	node text NOT NULL,
	ordinal smallint NOT NULL CHECK (ordinal >= 0 AND ordinal < 16),
	uuid text CHECK (uuid <> '' AND length(uuid) < 96),
	bus_id text CHECK (bus_id <> '' AND length(bus_id) < 32),
	instance integer CHECK (instance >= 0),
	share double precision NOT NULL CHECK (share > 0 AND share <= 1),
	power_integrated boolean NOT NULL,
	energy_j ceems.joules,
	util_pct double precision CHECK (util_pct BETWEEN 0 AND 100),
	mem_util_pct double precision CHECK (mem_util_pct BETWEEN 0 AND 100),
	mem_peak_bytes bigint CHECK (mem_peak_bytes >= 0),
	mem_total_bytes bigint CHECK (mem_total_bytes > 0),
	sm_active_pct double precision CHECK (sm_active_pct BETWEEN 0 AND 100),
	sm_occupancy_pct double precision CHECK (sm_occupancy_pct BETWEEN 0 AND 100),
	tensor_active_pct double precision CHECK (tensor_active_pct BETWEEN 0 AND 100),
	fp_active_pct double precision CHECK (fp_active_pct BETWEEN 0 AND 100),
	PRIMARY KEY (job_key, node, ordinal),
	-- A GPU is known by one of its names, or it is no GPU.
	CHECK (uuid IS NOT NULL OR bus_id IS NOT NULL)
);
COMMENT ON TABLE ceems.job_gpus IS
	'A GPU a job held on one node (a whole device, a MIG instance or a share of one) and what the job did with it; NULL figures were not measured';
COMMENT ON COLUMN ceems.job_gpus.ordinal IS 'Its place in the record''s gpus array (the agent''s device order)';
COMMENT ON COLUMN ceems.job_gpus.uuid IS 'The device''s UUID (NVIDIA "GPU-...", AMD unique id); NULL unknown';
COMMENT ON COLUMN ceems.job_gpus.bus_id IS 'PCI bus id, "0000:3b:00.0"; NULL unknown';
COMMENT ON COLUMN ceems.job_gpus.instance IS 'MIG GPU instance id (NVIDIA) or compute partition (AMD); NULL for a whole device';
COMMENT ON COLUMN ceems.job_gpus.share IS 'Share of the device the job held, (0, 1]: 1 for a whole device';
COMMENT ON COLUMN ceems.job_gpus.power_integrated IS 'Data quality: its energy is power integrated over samples (the device has no energy counter)';
COMMENT ON COLUMN ceems.job_gpus.energy_j IS 'Energy of the device charged to the job, J';
COMMENT ON COLUMN ceems.job_gpus.util_pct IS 'Mean GPU utilisation: share of the time a kernel ran, %';
COMMENT ON COLUMN ceems.job_gpus.mem_util_pct IS 'Mean share of the time device memory was read or written, %';
COMMENT ON COLUMN ceems.job_gpus.mem_peak_bytes IS 'Largest GPU memory use seen';
COMMENT ON COLUMN ceems.job_gpus.mem_total_bytes IS 'The GPU''s memory (a MIG instance''s own)';
COMMENT ON COLUMN ceems.job_gpus.sm_active_pct IS 'Mean share of the SMs with a warp resident, % (profiling metrics)';
COMMENT ON COLUMN ceems.job_gpus.sm_occupancy_pct IS 'Mean warps resident over the maximum, %';
COMMENT ON COLUMN ceems.job_gpus.tensor_active_pct IS 'Mean share of the time the tensor pipes were busy, %';
COMMENT ON COLUMN ceems.job_gpus.fp_active_pct IS 'Mean share of the time the FP64/FP32/FP16 pipes were busy (the busiest), %';
CREATE INDEX job_gpus_uuid ON ceems.job_gpus (uuid);

-- Users read the GPU rows of the jobs they may read (003).
ALTER TABLE ceems.job_gpus ENABLE ROW LEVEL SECURITY;
REVOKE ALL ON ceems.job_gpus FROM PUBLIC;
GRANT SELECT ON ceems.job_gpus TO ceems_reader;

CALL ceems.adopt_objects();
