-- sql/views/usage_carbon.sql - how much of a month's emissions could
-- have been shifted to greener hours, per account: the carbon-aware
-- advice of each job's nodes (migration 033; doc/attribution.md,
-- "Carbon-aware advice").  security_invoker: each reader sees through
-- the policies of the tables (their own jobs; coordinators their
-- accounts'; admins all).  A job counts in the month of its end, as in
-- the usage views (sql/views/usage.sql, applied before this file).

-- Per job: its nodes' advice added, where every node with emissions had
-- one (else unknown, as ceems-sacct's CO2eSaving).  shiftable_g is the
-- saving of a job free to move (its verdict worth or small saving: not
-- short, not in a dependency chain); noted_g that of the jobs whose
-- saving met the note's thresholds (verdict worth; the summary of a job
-- of one node notes it).
CREATE OR REPLACE VIEW ceems.job_carbon_advice WITH (security_invoker = true) AS
SELECT u.job_key, u.cluster, u.jobid, u.user_name, u.account,
       u.accounted_at, u.emissions_kg,
       a.actual_g, a.best_g, a.saving_g, a.shiftable_g, a.noted_g,
       a.best_start, a.verdict
FROM ceems.job_usage u
JOIN LATERAL (
	SELECT sum(n.advice_actual_g) AS actual_g,
	       sum(n.advice_best_g) AS best_g,
	       sum(n.advice_saving_g) AS saving_g,
	       coalesce(sum(n.advice_saving_g) FILTER (WHERE n.advice_verdict IN
			('worth', 'small saving')), 0) AS shiftable_g,
	       coalesce(sum(n.advice_saving_g) FILTER (WHERE n.advice_verdict =
			'worth'), 0) AS noted_g,
	       -- the nodes' greenest start: one where they agree
	       min(n.advice_best_start) AS best_start,
	       -- the job's: the most telling of its nodes'
	       CASE WHEN bool_or(n.advice_verdict = 'worth') THEN 'worth'
		    WHEN bool_or(n.advice_verdict = 'dependency chain') THEN 'dependency chain'
		    WHEN bool_or(n.advice_verdict = 'short') THEN 'short'
		    ELSE 'small saving' END AS verdict
	FROM ceems.job_nodes n
	WHERE n.job_key = u.job_key
	HAVING bool_and(n.advice_verdict IS NOT NULL OR n.emissions_g IS NULL)
	   AND bool_or(n.advice_verdict IS NOT NULL)) a ON true;
COMMENT ON VIEW ceems.job_carbon_advice IS
	'Per job with carbon-aware advice on every node with emissions: its emissions at its own start by the intensity series, at the greenest start of the site''s window, the saving (g CO2e), the part of it a job free to move could have had (shiftable_g) and the part that met the note''s thresholds (noted_g)';
GRANT SELECT ON ceems.job_carbon_advice TO ceems_reader;

-- Per month, cluster and account: every job's emissions, those of the
-- jobs with advice, and how much of them could have been shifted.
CREATE OR REPLACE VIEW ceems.carbon_shift_by_account_month WITH (security_invoker = true) AS
SELECT date_trunc('month', u.accounted_at) AS month,
       u.cluster, u.account,
       count(*) AS jobs,
       count(a.job_key) AS jobs_advised,
       count(a.job_key) FILTER (WHERE a.noted_g > 0) AS jobs_noted,
       round(sum(u.emissions_kg)::numeric, 6) AS emissions_kg,
       round((sum(a.actual_g) / 1000)::numeric, 6) AS advised_emissions_kg,
       round((sum(a.shiftable_g) / 1000)::numeric, 6) AS shiftable_kg,
       round((sum(a.noted_g) / 1000)::numeric, 6) AS noted_kg,
       round((sum(a.shiftable_g) / 1000 / nullif(sum(u.emissions_kg), 0))::numeric, 4)
	       AS shiftable_share
FROM ceems.job_usage u
LEFT JOIN ceems.job_carbon_advice a ON a.job_key = u.job_key
GROUP BY 1, 2, 3;
COMMENT ON VIEW ceems.carbon_shift_by_account_month IS
	'Per month, cluster and account: emissions (kg CO2e), those of the jobs with carbon-aware advice, how much a greenest start within the site''s window would have saved of jobs free to move (shiftable_kg) and of the jobs whose saving met the note''s thresholds (noted_kg), and shiftable_kg over all the emissions';
GRANT SELECT ON ceems.carbon_shift_by_account_month TO ceems_reader;
