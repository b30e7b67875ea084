-- 031_reports.sql - the periodic reports (ceems-admin report,
-- doc/reports.md): who wants none, and which periods went to whom.
--
-- report_optout: a user (or coordinator) who asked for no more reports;
-- a user may add or remove their own row (sql/policies/reports.sql), an
-- admin anybody's.
-- report_sent: one row per report mailed or filed, written in the same
-- transaction as the delivery, so that a period that overlaps one sent
-- already to the same recipient is never sent again, and a delivery that
-- failed leaves no row (the next run sends it).
-- Applied again over itself (a database put back to an earlier version
-- by hand), it changes nothing.

CREATE TABLE IF NOT EXISTS ceems.report_optout (
	user_name text PRIMARY KEY CHECK (user_name <> '' AND length(user_name) <= 64),
	since timestamptz NOT NULL DEFAULT now()
);
COMMENT ON TABLE ceems.report_optout IS
	'People who receive no report from ceems-admin report (their role name); maintained by themselves or by admins';
COMMENT ON COLUMN ceems.report_optout.since IS 'When they opted out';

CREATE TABLE IF NOT EXISTS ceems.report_sent (
	kind text NOT NULL CHECK (kind IN ('user', 'account', 'triage', 'nodes', 'alert')),
	recipient text NOT NULL CHECK (recipient <> '' AND length(recipient) <= 320),
	subject_key text NOT NULL DEFAULT '' CHECK (length(subject_key) <= 64),
	period_start timestamptz NOT NULL,
	period_end timestamptz NOT NULL,
	jobs integer NOT NULL CHECK (jobs >= 0),
	sent_at timestamptz NOT NULL DEFAULT now(),
	sent_by text NOT NULL DEFAULT current_user,
	PRIMARY KEY (kind, recipient, subject_key, period_start),
	CHECK (period_end > period_start)
);
COMMENT ON TABLE ceems.report_sent IS
	'Reports mailed or filed by ceems-admin report: a period overlapping a row here is not sent again to the same recipient';
COMMENT ON COLUMN ceems.report_sent.kind IS
	'user (a user''s digest), account (an account''s overview for a coordinator), triage or nodes (for admins), alert (a user''s GPU jobs whose GPUs sat idle)';
COMMENT ON COLUMN ceems.report_sent.recipient IS
	'The role name of the user or coordinator, or the admins'' address';
COMMENT ON COLUMN ceems.report_sent.subject_key IS 'The account of an account overview, else empty';
COMMENT ON COLUMN ceems.report_sent.jobs IS 'How many jobs the report covered';
COMMENT ON COLUMN ceems.report_sent.sent_by IS 'The role that sent it (ceems-admin report)';

GRANT SELECT, INSERT, DELETE ON ceems.report_optout TO ceems_reader;
GRANT SELECT, INSERT, DELETE ON ceems.report_sent TO ceems_admin;
GRANT SELECT ON ceems.report_sent TO ceems_admin_reader;

ALTER TABLE ceems.report_optout ENABLE ROW LEVEL SECURITY;
ALTER TABLE ceems.report_sent ENABLE ROW LEVEL SECURITY;
-- Their policies are in sql/policies/reports.sql.

CALL ceems.adopt_objects();
