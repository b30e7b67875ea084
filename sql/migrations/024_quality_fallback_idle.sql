-- 024_quality_fallback_idle.sql - two data-quality figures of the
-- record reach the node and job rows.
--
-- ledger.emissions.fallback (doc/record-format.md): the share of the
-- node's energy whose emissions were priced at the yearly
-- carbon-intensity figure because the node's intensity series did not
-- cover the tick; present only where a series is configured, so NULL
-- here where none was (not applicable) and in the rows of records
-- written before it (not known), never 0.
--
-- ledger.package.idle_unlearned, ledger.dram.idle_unlearned: some of the
-- domain's ticks were split while the node's idle power was still to be
-- learned (all of the energy by use).  True, false where the domain was
-- measured and no tick was so split, NULL where the domain was not
-- measured and in the rows stored before this migration (their records
-- are not read again: not known).
--
-- The job's figures: the fallback share weighted by each node's energy
-- (total_j), each domain's flag true when any node's is.  Both are
-- computed by ceems.job_figures (sql/functions/figures.sql) and stored
-- by sql/functions/store.sql and sql/functions/refresh.sql.

ALTER TABLE ceems.job_nodes
	ADD COLUMN emission_fallback double precision
		CHECK (emission_fallback >= 0 AND emission_fallback <= 1),
	ADD COLUMN package_idle_unlearned boolean,
	ADD COLUMN dram_idle_unlearned boolean;
COMMENT ON COLUMN ceems.job_nodes.emission_fallback IS
	'Data quality: share of the node''s energy whose emissions were priced at the yearly figure, its intensity series not covering the tick; null: no series configured, or not known';
COMMENT ON COLUMN ceems.job_nodes.package_idle_unlearned IS
	'Data quality: some package ticks were split before the node''s idle power was learned; null: package not measured, or not known';
COMMENT ON COLUMN ceems.job_nodes.dram_idle_unlearned IS
	'Data quality: some dram ticks were split before the node''s idle power was learned; null: dram not measured, or not known';

ALTER TABLE ceems.jobs
	ADD COLUMN emission_fallback double precision
		CHECK (emission_fallback >= 0 AND emission_fallback <= 1),
	ADD COLUMN package_idle_unlearned boolean,
	ADD COLUMN dram_idle_unlearned boolean;
COMMENT ON COLUMN ceems.jobs.emission_fallback IS
	'Data quality: share of the job''s energy whose emissions were priced at the yearly figure, weighted by its nodes'' energy; null: no node had an intensity series, or not known';
COMMENT ON COLUMN ceems.jobs.package_idle_unlearned IS
	'Data quality: on some node, package ticks were split before its idle power was learned; null: no node said';
COMMENT ON COLUMN ceems.jobs.dram_idle_unlearned IS
	'Data quality: on some node, dram ticks were split before its idle power was learned; null: no node said';

CALL ceems.adopt_objects();
