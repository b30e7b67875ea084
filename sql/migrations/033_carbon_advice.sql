-- 033_carbon_advice.sql - carbon-aware advice: what a finished job
-- would have emitted had it started at the greenest hour of the site's
-- window, by the intensities the node's series recorded for those hours
-- (doc/attribution.md, "Carbon-aware advice").
--
-- A record carries it as "advice" (doc/record-format.md), one per node:
-- each node's agent advises its part of the job by its own series.  The
-- columns are NULL where no time-varying series covered the job's time
-- on the node (the yearly figure gives no advice), where the node
-- measured no energy, and in the rows stored before this migration:
-- unknown, never a saving of 0.  sql/views/usage_carbon.sql sums the
-- savings a month's jobs could have had, per account.
--
-- IF NOT EXISTS: a database whose version was set back runs it again.

ALTER TABLE ceems.job_nodes
	ADD COLUMN IF NOT EXISTS advice_verdict text
		CHECK (advice_verdict IN ('worth', 'short', 'dependency chain', 'small saving')),
	ADD COLUMN IF NOT EXISTS advice_actual_g double precision
		CHECK (advice_actual_g >= 0),
	ADD COLUMN IF NOT EXISTS advice_best_start timestamptz,
	ADD COLUMN IF NOT EXISTS advice_best_g double precision
		CHECK (advice_best_g >= 0 AND advice_best_g <= advice_actual_g),
	ADD COLUMN IF NOT EXISTS advice_saving_g double precision
		GENERATED ALWAYS AS (advice_actual_g - advice_best_g) STORED;
DO $$
BEGIN
	-- All of the advice or none of it.
	IF NOT EXISTS (SELECT 1 FROM pg_constraint
		       WHERE conname = 'job_nodes_advice_whole'
			 AND conrelid = 'ceems.job_nodes'::regclass) THEN
		ALTER TABLE ceems.job_nodes ADD CONSTRAINT job_nodes_advice_whole
			CHECK ((advice_verdict IS NULL) = (advice_actual_g IS NULL) AND
			       (advice_verdict IS NULL) = (advice_best_start IS NULL) AND
			       (advice_verdict IS NULL) = (advice_best_g IS NULL));
	END IF;
END $$;
COMMENT ON COLUMN ceems.job_nodes.advice_verdict IS
	'The carbon-aware advice''s verdict: worth (the summary noted it), short, dependency chain or small saving (no note); null: no time-varying intensity series covered the job''s time on the node';
COMMENT ON COLUMN ceems.job_nodes.advice_actual_g IS
	'The node''s part of the job''s emissions at its own start by the series, g CO2e, at its mean power; null: no advice';
COMMENT ON COLUMN ceems.job_nodes.advice_best_start IS
	'The greenest start within the site''s window (advice_window) whose hours the series recorded; the job''s own when none was greener; null: no advice';
COMMENT ON COLUMN ceems.job_nodes.advice_best_g IS
	'The node''s part of the job''s emissions had it started at advice_best_start, g CO2e; null: no advice';
COMMENT ON COLUMN ceems.job_nodes.advice_saving_g IS
	'advice_actual_g - advice_best_g, g CO2e, never negative; null: no advice';

CALL ceems.adopt_objects();
