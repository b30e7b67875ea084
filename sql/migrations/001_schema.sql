-- 001_schema.sql - the ceems schema: clusters, jobs and what each node of
-- a job measured (job_nodes, job_steps, job_notes), emission factors.
--
-- Applied by `ceems-admin db migrate` inside one transaction, which then
-- records the version in ceems.schema_version; never edit a migration that
-- has been released: add a new one.  Conventions (doc/storage.md):
--   * NULL is "not measured / not known", never 0 (design invariant 5);
--   * energies in joules, emissions in grams CO2e, times as timestamptz,
--     durations in seconds (double precision), sizes in bytes;
--   * a job is (cluster, job id, start time): Slurm job ids wrap around and
--     a requeued job starts again under the same id;
--   * rows are written only by ceems.upsert_job_record() (002), which
--     recomputes the job-wide figures of `jobs` from its `job_nodes`.

CREATE SCHEMA IF NOT EXISTS ceems;
COMMENT ON SCHEMA ceems IS
	'ceems: per-job energy, emissions and efficiency accounting for Slurm';

-- The owner of every ceems object.  Nobody logs in as it: it exists so
-- that the SECURITY DEFINER functions run with the rights of the tables'
-- owner (bypassing row-level security for the writes they make) and not
-- with those of whoever ran the migration (often a superuser).
DO $$
BEGIN
	IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'ceems_owner') THEN
		CREATE ROLE ceems_owner NOLOGIN;
	END IF;
END
$$;

CREATE TABLE ceems.schema_version (
	version integer PRIMARY KEY CHECK (version > 0),
	name text NOT NULL,
	checksum text NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now(),
	applied_by text NOT NULL DEFAULT session_user
);
COMMENT ON TABLE ceems.schema_version IS
	'Migrations applied to this database (sql/migrations/NNN_name.sql), by ceems-admin db migrate';
COMMENT ON COLUMN ceems.schema_version.checksum IS
	'md5 of the migration file as applied; ceems-admin db status warns when the file has changed since';

CREATE TABLE ceems.schema_definitions (
	one boolean PRIMARY KEY DEFAULT true CHECK (one),
	checksum text NOT NULL,
	files integer NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ceems.schema_definitions IS
	'The functions, triggers, views and policies (sql/functions, sql/triggers, sql/views, sql/policies) ceems-admin applied last, after the migrations: one row';
COMMENT ON COLUMN ceems.schema_definitions.checksum IS
	'md5 of the files'' names and texts in the order applied: db status compares it with the installed files';

CREATE TABLE ceems.clusters (
	cluster_id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name text NOT NULL UNIQUE CHECK (name <> '' AND length(name) <= 63),
	first_seen timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ceems.clusters IS
	'Slurm clusters (ClusterName); added by the first record of each';

-- The job states Slurm reports at a job's end (record.c accepts the same).
CREATE DOMAIN ceems.job_state AS text
	CHECK (VALUE IN ('COMPLETED', 'FAILED', 'CANCELLED', 'TIMEOUT',
			 'OUT_OF_MEMORY', 'NODE_FAIL', 'PREEMPTED', 'BOOT_FAIL',
			 'DEADLINE', 'RUNNING'));
COMMENT ON DOMAIN ceems.job_state IS 'A Slurm job state name';

CREATE DOMAIN ceems.joules AS double precision
	CHECK (VALUE >= 0 AND VALUE < 'Infinity');
COMMENT ON DOMAIN ceems.joules IS 'Energy in joules: never negative';

CREATE DOMAIN ceems.fraction AS double precision
	CHECK (VALUE >= 0 AND VALUE <= 1);
COMMENT ON DOMAIN ceems.fraction IS 'A share in [0, 1]';

CREATE TABLE ceems.jobs (
	job_key bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	cluster_id integer NOT NULL REFERENCES ceems.clusters,
	jobid bigint NOT NULL CHECK (jobid > 0 AND jobid < 4294967295),
	start_time timestamptz NOT NULL,

	array_job_id bigint CHECK (array_job_id >= 0 AND array_job_id < 4294967295),
	array_task_id bigint CHECK (array_task_id >= 0 AND array_task_id < 4294967295),
	user_name text,
	uid bigint NOT NULL CHECK (uid >= 0 AND uid < 4294967295),
	gid bigint CHECK (gid >= 0 AND gid < 4294967295),
	account text,
	partition text,
	qos text,
	job_name text,
	state ceems.job_state,
	exit_code smallint CHECK (exit_code BETWEEN 0 AND 255),
	exit_signal smallint CHECK (exit_signal BETWEEN 1 AND 255),
	submit_time timestamptz CHECK (submit_time <= start_time),
	end_time timestamptz CHECK (end_time >= start_time),
	elapsed_s double precision CHECK (elapsed_s >= 0),
	time_limit_min bigint CHECK (time_limit_min >= 0),
	alloc_cpus bigint CHECK (alloc_cpus > 0),
	req_mem_bytes bigint CHECK (req_mem_bytes > 0),
	alloc_gpus bigint CHECK (alloc_gpus >= 0),
	nnodes bigint CHECK (nnodes > 0),
	nodelist text,
	-- The newest node record (by written_at, node, digest): the metadata
	-- above is, field by field, the newest record's that has the field
	-- (ceems.upsert_job_record), so any arrival order gives one result.
	meta_written_at timestamptz NOT NULL,
	meta_node text NOT NULL,
	meta_digest text NOT NULL,

	-- Job-wide figures: recomputed from job_nodes on every change.
	nodes_reported integer NOT NULL DEFAULT 0 CHECK (nodes_reported >= 0),
	cpu_time_s double precision CHECK (cpu_time_s >= 0),
	cpu_efficiency double precision CHECK (cpu_efficiency >= 0),
	mem_peak_bytes bigint CHECK (mem_peak_bytes >= 0),
	mem_efficiency double precision CHECK (mem_efficiency >= 0),
	gpu_util_pct double precision CHECK (gpu_util_pct BETWEEN 0 AND 100),
	gpu_mem_peak_bytes bigint CHECK (gpu_mem_peak_bytes >= 0),
	package_j ceems.joules,
	dram_j ceems.joules,
	gpu_j ceems.joules,
	node_j ceems.joules,
	total_j ceems.joules,
	package_static_j ceems.joules,
	dram_static_j ceems.joules,
	package_coverage ceems.fraction,
	dram_coverage ceems.fraction,
	gpu_coverage ceems.fraction,
	node_coverage ceems.fraction,
	gap_s double precision CHECK (gap_s >= 0),
	emissions_g double precision CHECK (emissions_g >= 0),
	emissions_coverage ceems.fraction,
	emission_factor_source text,
	emission_zone text,
	emission_year integer CHECK (emission_year BETWEEN 1900 AND 2200),
	emission_g_per_kwh double precision CHECK (emission_g_per_kwh >= 0),
	pue double precision CHECK (pue >= 1),
	emission_factor_mixed boolean,
	updated_at timestamptz NOT NULL DEFAULT now(),

	CONSTRAINT jobs_identity UNIQUE (cluster_id, jobid, start_time),
	CONSTRAINT jobs_array CHECK ((array_job_id IS NULL) = (array_task_id IS NULL))
) WITH (fillfactor = 85);	-- room for the HOT updates of ceems.refresh_job
COMMENT ON TABLE ceems.jobs IS
	'One row per Slurm job run (a requeue is a new row): its metadata and its job-wide figures, the sums over its job_nodes rows';
COMMENT ON COLUMN ceems.jobs.job_key IS 'Surrogate key the child tables refer to';
COMMENT ON COLUMN ceems.jobs.jobid IS 'Slurm job id (wraps around: unique only with cluster and start time)';
COMMENT ON COLUMN ceems.jobs.start_time IS 'When the job started; part of the identity, so a requeued job is a new row';
COMMENT ON COLUMN ceems.jobs.user_name IS 'Unix user name of the owner; row-level security compares it with the database role name';
COMMENT ON COLUMN ceems.jobs.exit_code IS 'Exit status of the batch script, NULL unknown';
COMMENT ON COLUMN ceems.jobs.exit_signal IS 'Signal that ended the job, NULL for none';
COMMENT ON COLUMN ceems.jobs.elapsed_s IS 'end_time - start_time, or the longest node figure when a time is unknown';
COMMENT ON COLUMN ceems.jobs.time_limit_min IS 'Time limit in minutes, NULL for none or unknown';
COMMENT ON COLUMN ceems.jobs.alloc_cpus IS 'CPUs allocated to the whole job';
COMMENT ON COLUMN ceems.jobs.req_mem_bytes IS 'Memory allocated to the whole job';
COMMENT ON COLUMN ceems.jobs.nodelist IS 'Slurm hostlist expression of the job''s nodes';
COMMENT ON COLUMN ceems.jobs.nodes_reported IS 'How many node records are in job_nodes; fewer than nnodes means the figures are partial';
COMMENT ON COLUMN ceems.jobs.cpu_time_s IS 'CPU time (user + system) summed over the nodes that measured it';
COMMENT ON COLUMN ceems.jobs.cpu_efficiency IS 'cpu_time_s / (elapsed_s * alloc_cpus); NULL when a term is unknown';
COMMENT ON COLUMN ceems.jobs.mem_peak_bytes IS 'Largest memory peak of one node';
COMMENT ON COLUMN ceems.jobs.mem_efficiency IS 'Sum of the nodes'' memory peaks / req_mem_bytes';
COMMENT ON COLUMN ceems.jobs.gpu_util_pct IS 'Mean GPU utilisation, NULL until GPU usage is measured';
COMMENT ON COLUMN ceems.jobs.gpu_mem_peak_bytes IS 'Peak GPU memory, NULL until GPU usage is measured';
COMMENT ON COLUMN ceems.jobs.package_j IS 'CPU package energy charged to the job, J; NULL when no node measured it';
COMMENT ON COLUMN ceems.jobs.dram_j IS 'DRAM energy charged to the job, J';
COMMENT ON COLUMN ceems.jobs.gpu_j IS 'GPU energy charged to the job, J';
COMMENT ON COLUMN ceems.jobs.node_j IS 'The rest of the node (BMC total minus the domains above) charged to the job, J';
COMMENT ON COLUMN ceems.jobs.total_j IS 'Sum of the domains, J (the node domain is a residual, so nothing counts twice)';
COMMENT ON COLUMN ceems.jobs.package_static_j IS 'Of package_j, the static (idle) power of the cores the job held, J';
COMMENT ON COLUMN ceems.jobs.dram_static_j IS 'Of dram_j, the static power of the memory the job held, J';
COMMENT ON COLUMN ceems.jobs.package_coverage IS 'Data quality: share of the job''s node-time the package domain was measured';
COMMENT ON COLUMN ceems.jobs.gap_s IS 'Node-seconds the agents could not account (summed over nodes)';
COMMENT ON COLUMN ceems.jobs.emissions_g IS 'Emissions, g CO2e: energy x PUE x carbon intensity, per tick';
COMMENT ON COLUMN ceems.jobs.emissions_coverage IS 'Share of the job''s node-time that had an emission factor';
COMMENT ON COLUMN ceems.jobs.emission_factor_source IS 'Where the carbon intensity came from (first node by name)';
COMMENT ON COLUMN ceems.jobs.emission_factor_mixed IS 'True when nodes used different factors, or a factor changed during the job';
COMMENT ON COLUMN ceems.jobs.meta_written_at IS 'written_at of the newest node record (metadata: each field from the newest record that has it)';

-- A user's jobs by time: the query ceems-sacct makes.
CREATE INDEX jobs_user_start ON ceems.jobs (user_name, start_time);
CREATE INDEX jobs_account_start ON ceems.jobs (account, start_time);
CREATE INDEX jobs_start ON ceems.jobs (start_time);
CREATE INDEX jobs_cluster_jobid ON ceems.jobs (cluster_id, jobid);

CREATE TABLE ceems.job_nodes (
	job_key bigint NOT NULL REFERENCES ceems.jobs ON DELETE CASCADE,
	node text NOT NULL CHECK (node <> ''),
	written_at timestamptz NOT NULL,
	finalized_by text NOT NULL CHECK (finalized_by IN ('extern', 'epilog')),
	record_digest text NOT NULL,
	job_meta jsonb NOT NULL CHECK (jsonb_typeof(job_meta) = 'object'),
	alloc_cores bigint CHECK (alloc_cores > 0),
	alloc_mem_bytes bigint CHECK (alloc_mem_bytes > 0),
	elapsed_s double precision NOT NULL CHECK (elapsed_s >= 0),
	lifetime_s double precision CHECK (lifetime_s >= 0),
	cpu_s double precision CHECK (cpu_s >= 0),
	gap_s double precision NOT NULL CHECK (gap_s >= 0),
	cgroup_gone boolean NOT NULL,
	mem_peak_bytes bigint CHECK (mem_peak_bytes >= 0),
	mem_peak_sampled boolean NOT NULL DEFAULT false,
	mem_rss_bytes bigint CHECK (mem_rss_bytes >= 0),
	mem_limit_bytes bigint CHECK (mem_limit_bytes >= 0),
	oom_kills bigint CHECK (oom_kills >= 0),
	io_read_bytes bigint CHECK (io_read_bytes >= 0),
	io_write_bytes bigint CHECK (io_write_bytes >= 0),
	cpuset text,
	usage_failed text[],
	gpu_util_pct double precision CHECK (gpu_util_pct BETWEEN 0 AND 100),
	gpu_mem_peak_bytes bigint CHECK (gpu_mem_peak_bytes >= 0),
	package_j ceems.joules,
	dram_j ceems.joules,
	gpu_j ceems.joules,
	node_j ceems.joules,
	total_j ceems.joules,
	package_static_j ceems.joules,
	dram_static_j ceems.joules,
	package_covered_s double precision CHECK (package_covered_s >= 0),
	dram_covered_s double precision CHECK (dram_covered_s >= 0),
	gpu_covered_s double precision CHECK (gpu_covered_s >= 0),
	node_covered_s double precision CHECK (node_covered_s >= 0),
	emissions_g double precision CHECK (emissions_g >= 0),
	emissions_covered_s double precision CHECK (emissions_covered_s >= 0),
	emission_factor_source text,
	emission_zone text,
	emission_year integer CHECK (emission_year BETWEEN 1900 AND 2200),
	emission_g_per_kwh double precision CHECK (emission_g_per_kwh >= 0),
	pue double precision CHECK (pue >= 1),
	emission_factor_changed boolean,
	PRIMARY KEY (job_key, node),
	-- Energy over no covered time is unknown, not zero (record format).
	CHECK (package_j IS NULL OR package_covered_s > 0),
	CHECK (dram_j IS NULL OR dram_covered_s > 0),
	CHECK (gpu_j IS NULL OR gpu_covered_s > 0),
	CHECK (node_j IS NULL OR node_covered_s > 0),
	CHECK (package_static_j IS NULL OR package_static_j <= package_j * (1 + 1e-9) + 1e-6),
	CHECK (dram_static_j IS NULL OR dram_static_j <= dram_j * (1 + 1e-9) + 1e-6)
);
COMMENT ON TABLE ceems.job_nodes IS
	'What one node measured of one job: one row per node record (the latest record of the node wins); the jobs row sums these';
COMMENT ON COLUMN ceems.job_nodes.node IS 'Host name of the node the record is from';
COMMENT ON COLUMN ceems.job_nodes.written_at IS 'When the node wrote the record';
COMMENT ON COLUMN ceems.job_nodes.finalized_by IS 'Which hook wrote the record: the extern step at job end, or the epilog as a fallback';
COMMENT ON COLUMN ceems.job_nodes.record_digest IS 'md5 of the record (jsonb text form): replays of the same record are recognised and change nothing';
COMMENT ON COLUMN ceems.job_nodes.job_meta IS 'The record''s "job" object as the node sent it (the jobs row merges these)';
COMMENT ON COLUMN ceems.job_nodes.alloc_cores IS 'CPUs the job held on this node';
COMMENT ON COLUMN ceems.job_nodes.elapsed_s IS 'Time from the job''s registration with the agent to its end';
COMMENT ON COLUMN ceems.job_nodes.lifetime_s IS 'Time the ledger accounted for (ticks and gaps)';
COMMENT ON COLUMN ceems.job_nodes.cpu_s IS 'CPU time (user + system) on this node; NULL when the cgroup gave none';
COMMENT ON COLUMN ceems.job_nodes.gap_s IS 'Time the agent could not account (it was down, or registration came late)';
COMMENT ON COLUMN ceems.job_nodes.mem_peak_bytes IS 'Memory peak of the job''s cgroup on this node';
COMMENT ON COLUMN ceems.job_nodes.mem_peak_sampled IS 'True when the kernel gave no peak and it is the largest sampled value';
COMMENT ON COLUMN ceems.job_nodes.mem_limit_bytes IS 'The cgroup''s memory limit; NULL for none ("max") or unknown';
COMMENT ON COLUMN ceems.job_nodes.usage_failed IS 'cgroup fields that could not be read at the last reading';
COMMENT ON COLUMN ceems.job_nodes.package_covered_s IS 'Seconds the package domain was measured for the job (data quality)';
COMMENT ON COLUMN ceems.job_nodes.package_static_j IS 'Of package_j, the static power of the held cores';

CREATE TABLE ceems.job_steps (
	job_key bigint NOT NULL,
	node text NOT NULL,
	step_id text NOT NULL CHECK (step_id ~ '^[A-Za-z0-9_.+-]{1,15}$'),
	ended boolean NOT NULL,
	elapsed_s double precision NOT NULL CHECK (elapsed_s >= 0),
	cpu_s double precision NOT NULL CHECK (cpu_s >= 0),
	mem_peak_bytes bigint CHECK (mem_peak_bytes >= 0),
	package_j ceems.joules,
	dram_j ceems.joules,
	gpu_j ceems.joules,
	node_j ceems.joules,
	PRIMARY KEY (job_key, node, step_id),
	FOREIGN KEY (job_key, node) REFERENCES ceems.job_nodes ON DELETE CASCADE
);
COMMENT ON TABLE ceems.job_steps IS
	'A job step (batch, extern, srun steps) on one node: its share of the job''s figures on that node';
COMMENT ON COLUMN ceems.job_steps.step_id IS 'Slurm step: batch, extern, interactive, 0, 1, ...';
COMMENT ON COLUMN ceems.job_steps.package_j IS 'Package energy of the step, J; NULL when the node did not measure the domain';

CREATE TABLE ceems.job_notes (
	job_key bigint NOT NULL,
	node text NOT NULL,
	ordinal smallint NOT NULL CHECK (ordinal >= 0),
	note_id text NOT NULL CHECK (note_id ~ '^[a-z][a-z0-9-]{0,22}$'),
	text text NOT NULL,
	saving_j ceems.joules,
	saving_g double precision CHECK (saving_g >= 0),
	PRIMARY KEY (job_key, node, ordinal),
	FOREIGN KEY (job_key, node) REFERENCES ceems.job_nodes ON DELETE CASCADE
);
COMMENT ON TABLE ceems.job_notes IS
	'The end-of-job summary''s notes (doc/summary.md) as each node computed them, most important first';
COMMENT ON COLUMN ceems.job_notes.note_id IS 'Stable note identifier: oom, timeout, too-short, cpu-underuse, mem-underuse, gpu-idle, time-limit, ...';
COMMENT ON COLUMN ceems.job_notes.saving_j IS 'Energy following the note would have saved, J; NULL when it cannot be estimated';
COMMENT ON COLUMN ceems.job_notes.saving_g IS 'Emissions following the note would have saved, g CO2e';
CREATE INDEX job_notes_note_id ON ceems.job_notes (note_id);

CREATE TABLE ceems.emission_factors (
	zone text NOT NULL CHECK (zone ~ '^[A-Z0-9_-]{2,16}$'),
	valid_from timestamptz NOT NULL,
	valid_to timestamptz CHECK (valid_to > valid_from),
	g_per_kwh double precision NOT NULL CHECK (g_per_kwh >= 0 AND g_per_kwh < 10000),
	source text NOT NULL CHECK (source <> ''),
	loaded_at timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (zone, valid_from)
);
COMMENT ON TABLE ceems.emission_factors IS
	'Carbon intensity of electricity per zone over time (ceems-admin factors load FILE.csv); for reports that recompute emissions';
COMMENT ON COLUMN ceems.emission_factors.zone IS 'ISO 3166-1 alpha-2 country code, WORLD, or a grid zone name';
COMMENT ON COLUMN ceems.emission_factors.valid_from IS 'Start of validity (a yearly figure: January 1st of its year, UTC)';
COMMENT ON COLUMN ceems.emission_factors.valid_to IS 'End of validity, exclusive; NULL: until the next row of the zone';
COMMENT ON COLUMN ceems.emission_factors.g_per_kwh IS 'g CO2e per kWh';

-- Every migration ends with CALL ceems.adopt_objects(): whatever it
-- created becomes ceems_owner's, and no function stays executable by
-- PUBLIC (PostgreSQL's default), so that only the grants of 003 and later
-- say who may run what.
CREATE PROCEDURE ceems.adopt_objects()
LANGUAGE plpgsql
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
	obj record;
BEGIN
	EXECUTE 'ALTER SCHEMA ceems OWNER TO ceems_owner';
	FOR obj IN
		SELECT c.oid::regclass AS name, c.relkind
		FROM pg_class c
		WHERE c.relnamespace = 'ceems'::regnamespace
		  AND c.relkind IN ('r', 'p', 'v', 'm')
		  AND c.relowner <> 'ceems_owner'::regrole
	LOOP
		EXECUTE format('ALTER %s %s OWNER TO ceems_owner',
			       CASE obj.relkind WHEN 'v' THEN 'VIEW'
					WHEN 'm' THEN 'MATERIALIZED VIEW'
					ELSE 'TABLE' END, obj.name);
	END LOOP;
	FOR obj IN
		SELECT t.oid::regtype AS name
		FROM pg_type t
		WHERE t.typnamespace = 'ceems'::regnamespace AND t.typtype = 'd'
		  AND t.typowner <> 'ceems_owner'::regrole
	LOOP
		EXECUTE format('ALTER DOMAIN %s OWNER TO ceems_owner', obj.name);
	END LOOP;
	FOR obj IN
		SELECT p.oid::regprocedure AS name
		FROM pg_proc p
		WHERE p.pronamespace = 'ceems'::regnamespace
	LOOP
		IF (SELECT proowner FROM pg_proc WHERE oid = obj.name) <> 'ceems_owner'::regrole THEN
			EXECUTE format('ALTER ROUTINE %s OWNER TO ceems_owner', obj.name);
		END IF;
		EXECUTE format('REVOKE ALL ON ROUTINE %s FROM PUBLIC', obj.name);
	END LOOP;
END
$$;
COMMENT ON PROCEDURE ceems.adopt_objects() IS
	'Run at the end of every migration: ceems_owner owns every object of the schema, PUBLIC may execute no function';

CALL ceems.adopt_objects();
