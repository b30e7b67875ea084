-- tests/integration/lib/reports-data.sql - a generated month of jobs
-- (October 2026) for reports.bats, with the job_nodes rows the node
-- findings read.  Loaded by the superuser: the figures are what the
-- report must find, computed here from a few parameters per user.
--   alice  physics  40 jobs on 16 cores using 2, 4 of 64 GiB, 1 h of 8
--   bob    physics  30 jobs that use what they ask
--   carol  chem     like alice, but opted out of digests
--   erin   chem     like alice, but new: her first job is in the month,
--                   her last 13 days later
--   frank  chem     like alice, 2 jobs only: too few to suggest
--   gina   bio      GPU jobs of 2 h on gpu1: 3 with their GPU busy 3%,
--                   one busy 80%, one of 30 min busy 2%
-- Nodes n1..n4 are alike; n3's static power per core is 30% higher.
-- Every user but erin ran one job in August.

INSERT INTO ceems.clusters (name) VALUES ('c1');

CREATE TEMP TABLE gen (user_name text, uid int, account text, n int, cores int,
		       used double precision, mem_gib double precision,
		       peak_gib double precision, limit_min int);
INSERT INTO gen VALUES
	('alice', 2001, 'physics', 40, 16, 2.0, 64, 4, 480),
	('bob',   2002, 'physics', 30, 4, 3.6, 8, 6, 120),
	('carol', 2003, 'chem',    20, 16, 2.0, 64, 4, 480),
	('erin',  2004, 'chem',    20, 16, 2.0, 64, 4, 480),
	('frank', 2005, 'chem',     2, 16, 2.0, 64, 4, 480);

CREATE TEMP TABLE gjobs AS
SELECT g.*, s.i,
       CASE WHEN s.i = 0 THEN timestamptz '2026-08-15 10:00+00' + g.uid * interval '1 min'
	    ELSE timestamptz '2026-10-01 00:00+00'
		 + (s.i - 1) * (CASE WHEN g.user_name = 'erin' THEN interval '13 days'
				     ELSE interval '29 days' END / g.n)
		 + g.uid * interval '1 min' END AS start_time,
       3600.0::double precision AS elapsed_s,
       'n' || (1 + (s.i + g.uid) % 4) AS node
FROM gen g, generate_series(CASE WHEN g.user_name = 'erin' THEN 1 ELSE 0 END, g.n) s(i);

ALTER TABLE gjobs ADD COLUMN static_w double precision;
UPDATE gjobs SET static_w = CASE WHEN node = 'n3' THEN 3.25 ELSE 2.5 END;

INSERT INTO ceems.jobs (cluster_id, jobid, start_time, user_name, uid, account,
	partition, state, submit_time, end_time, elapsed_s, time_limit_min,
	alloc_cpus, req_mem_bytes, nnodes, nodelist, meta_written_at, meta_node,
	meta_digest, nodes_reported, cpu_time_s, cpu_efficiency, mem_peak_bytes,
	mem_efficiency, package_j, dram_j, total_j, package_static_j,
	dram_static_j, package_coverage, dram_coverage, gap_s, emissions_g,
	emissions_coverage)
SELECT 1, 1000 * (uid - 2000) + i, start_time, user_name, uid, account, 'batch',
       'COMPLETED', start_time - interval '10 min', start_time + elapsed_s * interval '1 s',
       elapsed_s, limit_min, cores, (mem_gib * 1073741824)::bigint, 1, node,
       start_time + elapsed_s * interval '1 s', node, md5(user_name || i), 1,
       used * elapsed_s, used / cores, (peak_gib * 1073741824)::bigint, peak_gib / mem_gib,
       static_w * cores * elapsed_s + 10 * used * elapsed_s,
       0.1 * mem_gib * elapsed_s + 0.05 * peak_gib * elapsed_s,
       static_w * cores * elapsed_s + 10 * used * elapsed_s
	       + 0.1 * mem_gib * elapsed_s + 0.05 * peak_gib * elapsed_s,
       static_w * cores * elapsed_s, 0.1 * mem_gib * elapsed_s, 1, 1, 0,
       (static_w * cores * elapsed_s + 10 * used * elapsed_s
	+ 0.1 * mem_gib * elapsed_s + 0.05 * peak_gib * elapsed_s) / 3.6e6 * 50, 1
FROM gjobs;

-- gina's GPU jobs (job ids 6001..6005; 6000 in August): 100 W of GPU,
-- one GPU each.
INSERT INTO ceems.jobs (cluster_id, jobid, start_time, user_name, uid, account,
	partition, state, submit_time, end_time, elapsed_s, time_limit_min,
	alloc_cpus, req_mem_bytes, alloc_gpus, gpu_util_pct, nnodes, nodelist,
	meta_written_at, meta_node, meta_digest, nodes_reported, cpu_time_s,
	cpu_efficiency, mem_peak_bytes, mem_efficiency, package_j, dram_j, gpu_j,
	total_j, package_static_j, dram_static_j, package_coverage, dram_coverage,
	gpu_coverage, gap_s, emissions_g, emissions_coverage)
SELECT 1, 6000 + g.i, g.st, 'gina', 2006, 'bio', 'gpu', 'COMPLETED',
       g.st - interval '5 min', g.st + g.d * interval '1 s', g.d, 240, 4,
       8 * 1073741824::bigint, 1, g.util, 1, 'gpu1', g.st + g.d * interval '1 s',
       'gpu1', md5('gina' || g.i), 1, 3.5 * g.d, 3.5 / 4, 6 * 1073741824::bigint,
       0.75, 10 * g.d, 1 * g.d, 100 * g.d, 111 * g.d, 5 * g.d, 0.5 * g.d, 1, 1, 1,
       0, 111 * g.d / 3.6e6 * 50, 1
FROM (VALUES (0, timestamptz '2026-08-20 10:00+00', 7200.0::float8, 50.0::float8),
	     (1, timestamptz '2026-10-05 10:00+00', 7200.0, 3.0),
	     (2, timestamptz '2026-10-10 10:00+00', 7200.0, 3.0),
	     (3, timestamptz '2026-10-15 10:00+00', 7200.0, 3.0),
	     (4, timestamptz '2026-10-20 10:00+00', 7200.0, 80.0),
	     (5, timestamptz '2026-10-25 10:00+00', 1800.0, 2.0)) g(i, st, d, util);

INSERT INTO ceems.job_nodes (job_key, node, written_at, finalized_by,
	record_digest, job_meta, alloc_cores, alloc_mem_bytes, elapsed_s,
	lifetime_s, cpu_s, gap_s, cgroup_gone, mem_peak_bytes, package_j, dram_j,
	total_j, package_static_j, dram_static_j, package_covered_s,
	dram_covered_s, emissions_g)
SELECT j.job_key, j.nodelist, j.meta_written_at, 'extern', j.meta_digest, '{}',
       j.alloc_cpus, j.req_mem_bytes, j.elapsed_s, j.elapsed_s, j.cpu_time_s, 0,
       true, j.mem_peak_bytes, j.package_j, j.dram_j, j.total_j,
       j.package_static_j, j.dram_static_j, j.elapsed_s, j.elapsed_s,
       j.emissions_g
FROM ceems.jobs j;

INSERT INTO ceems.coordinators (account, username) VALUES ('physics', 'dave');
INSERT INTO ceems.report_optout (user_name) VALUES ('carol');
