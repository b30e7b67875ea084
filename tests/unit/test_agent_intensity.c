/* test_agent_intensity.c - the agent's factor tick by tick from the
 * node's intensity series (intensity_file) on the simulated RAPL tree:
 * the grams are the sum over ticks of energy x PUE x the intensity in
 * force at each tick's time; a tick the series does not cover is priced
 * at the yearly figure and counted in the job's fallback part; a file
 * rewritten is read again after the minute, a bad one leaves the series
 * read before in force; the carbon-aware advice the agent gives by the
 * series, in its reply and in the record it writes. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include <dirent.h>

#include "agent/agent.h"
#include "model/carbon_advice.h"
#include "record/record.h"
#include "client/agent_proto.h"
#include "model/emissions.h"
#include "base/fileio.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

/* Wall clock second of monotonic 10 s: the series starts there. */
#define W0 1704067200LL

static char cache_path[240];

static void
write_cache(const char *rows)
{
	char text[1024];

	snprintf(text, sizeof(text),
		 "ceems-intensity 1\nzone FR\nsource test-grid\n%s", rows);
	tmptree_write(proc_root, "intensity", text);
	snprintf(cache_path, sizeof(cache_path), "%s/intensity", proc_root);
}

/* The yearly figure of FR this year, read from the shipped table. */
static double
yearly_fr(void)
{
	struct ceems_emissions_table t;
	struct ceems_emission_factor f;
	time_t now = time(NULL);
	struct tm tm;
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/../../lib/data/carbon-intensity.tsv",
		 fixture_root());
	gmtime_r(&now, &tm);
	if (ceems_emissions_table_load(path, &t) != 0 ||
	    ceems_emissions_lookup(&t, "FR", tm.tm_year + 1900, &f) != 0) {
		printf("Bail out! no yearly figure for FR\n");
		exit(1);
	}
	ceems_emissions_table_free(&t);
	return f.g_per_kwh;
}

/* An agent of config C at monotonic 10 s (wall W0) with job 42
 * registered, Slurm's start START_TIME (0: not sent). */
static struct ceems_agent *
open_agent_with(const struct ceems_config *c, int64_t start_time)
{
	struct ceems_agent_job_spec spec;
	struct ceems_agent *a;
	char err[256] = "";

	a = ceems_agent_open(c, 10 * SEC, err, sizeof(err));
	if (a == NULL) {
		printf("Bail out! agent does not open: %s\n", err);
		exit(1);
	}
	ceems_agent_intensity_set_wall_offset(a, W0 * (long long)SEC - 10 * (long long)SEC);
	job42_spec(&spec);
	spec.start_time = start_time;
	if (ceems_agent_register(a, &spec, 10 * SEC) != 0) {
		printf("Bail out! job 42 does not register\n");
		exit(1);
	}
	return a;
}

static struct ceems_agent *
open_agent(bool with_series)
{
	struct ceems_config c;

	base_config(&c);
	if (with_series)
		snprintf(c.intensity_file, sizeof(c.intensity_file), "%s",
			 cache_path);
	return open_agent_with(&c, 0);
}

static double
job_total(struct ceems_agent *a)
{
	struct ceems_agent_job_report r;

	if (ceems_agent_report(a, 42, &r) != 0)
		return NAN;
	return ceems_job_figures_ledger_total_j(&r.ledger);
}

/* Ticks at 11..14 s and the deregistration at 15 s: wall W0+1..W0+5.
 * G[i] is the intensity the test expects at tick i; the grams are summed
 * here from each tick's energy as the agent measured it. */
static void
run_job(struct ceems_agent *a, const double g[5], double *want_g,
	double *want_fallback_j, const bool fallback[5],
	struct ceems_agent_job_report *r)
{
	double before = 0, after;

	*want_g = 0;
	*want_fallback_j = 0;
	for (int i = 0; i < 4; i++) {
		advance(400000000ULL * (unsigned long long)(i + 1));
		ceems_agent_tick(a, (11 + (uint64_t)i) * SEC);
		after = job_total(a);
		*want_g += (after - before) * 1.5 * g[i] / 3.6e6;
		if (fallback[i])
			*want_fallback_j += after - before;
		before = after;
	}
	advance(1500000000ULL);
	if (ceems_agent_deregister(a, 42, 15 * SEC, r) != 0) {
		printf("Bail out! job 42 does not deregister\n");
		exit(1);
	}
	after = ceems_job_figures_ledger_total_j(&r->ledger);
	*want_g += (after - before) * 1.5 * g[4] / 3.6e6;
	if (fallback[4])
		*want_fallback_j += after - before;
}

/* The report as the record carries it keeps the fallback part. */
static void
check_report_json(const struct ceems_agent_job_report *r)
{
	struct json_object *obj = ceems_measure_json_report_to_json(r);
	struct ceems_agent_job_report *back = calloc(1, sizeof(*back));
	char err[256] = "";

	ok(obj != NULL && back != NULL &&
	   ceems_measure_json_report_from_json(obj, back, err, sizeof(err)) == 0,
	   "the report goes through JSON (%s)", err);
	ok(back->ledger.factor_timed &&
	   back->ledger.factor_fallback == r->ledger.factor_fallback &&
	   back->ledger.factor_changed &&
	   strcmp(back->ledger.factor.source, r->ledger.factor.source) == 0,
	   "and keeps the fallback part, the change and the series' source");
	json_object_put(obj);
	free(back);
}

static void
test_series_with_gap(void)
{
	const double yearly = yearly_fr();
	const double g[5] = { 100, 300, yearly, 50, 50 };
	const bool fallback[5] = { false, false, true, false, false };
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	double want_g, fallback_j, total, mean;
	char rows[512];

	/* [W0, W0+2) 100; [W0+2, W0+3) 300; a gap; [W0+4, W0+10) 50. */
	snprintf(rows, sizeof(rows), "%lld %lld 100\n%lld %lld 300\n%lld %lld 50\n",
		 W0, W0 + 2, W0 + 2, W0 + 3, W0 + 4, W0 + 10);
	write_cache(rows);
	a = open_agent(true);
	run_job(a, g, &want_g, &fallback_j, fallback, &r);
	total = ceems_job_figures_ledger_total_j(&r.ledger);
	ok(total > 0 && fallback_j > 0 && fallback_j < total,
	   "the job used energy in and out of the series (%.3f of %.3f J)",
	   fallback_j, total);
	is_near(r.ledger.emissions_g, want_g, 1e-9 * want_g,
		"grams = sum over ticks of energy x PUE x the intensity in force");
	ok(r.ledger.factor_changed, "the factor changed during the job");
	mean = want_g * 3.6e6 / (1.5 * total);
	is_near(r.ledger.factor.g_per_kwh, mean, 1e-9 * mean,
		"the recorded intensity is the energy-weighted mean");
	is_str(r.ledger.factor.source, "series:test-grid",
	       "the source is the series'");
	ok(r.ledger.factor_timed, "the job's factor came from a series");
	is_near(r.ledger.factor_fallback, fallback_j / total, 1e-6,
		"fallback: the part of the energy at the yearly figure");
	check_report_json(&r);
	is_int(ceems_agent_release(a, 42), 0, "released");
	ceems_agent_open_close(a);
}

static void
test_no_file(void)
{
	const double yearly = yearly_fr();
	const double g[5] = { yearly, yearly, yearly, yearly, yearly };
	const bool fallback[5] = { true, true, true, true, true };
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	double want_g, fallback_j;

	unlink(cache_path);
	a = open_agent(true);
	run_job(a, g, &want_g, &fallback_j, fallback, &r);
	is_near(r.ledger.emissions_g, want_g, 1e-9 * want_g,
		"no file: every tick at the yearly figure");
	ok(!r.ledger.factor_changed, "one factor all along");
	ok(r.ledger.factor_timed && r.ledger.factor_fallback == 1,
	   "all of the energy at the fallback");
	ok(strncmp(r.ledger.factor.source, "series:", 7) != 0,
	   "the source is the yearly table's (%s)", r.ledger.factor.source);
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

static void
test_no_series_configured(void)
{
	const double yearly = yearly_fr();
	const double g[5] = { yearly, yearly, yearly, yearly, yearly };
	const bool fallback[5] = { false, false, false, false, false };
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	double want_g, fallback_j;

	a = open_agent(false);
	run_job(a, g, &want_g, &fallback_j, fallback, &r);
	is_near(r.ledger.emissions_g, want_g, 1e-9 * want_g,
		"without intensity_file: the yearly figure");
	ok(!r.ledger.factor_timed && r.ledger.factor_fallback == 0,
	   "no fallback figure where no series is configured");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

static int intensity_errors;
static char last_error[512];

static void
count_logs(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		printf("# log: %s\n", message);
	if (level == CEEMS_LOG_ERROR && strstr(message, "intensity_file") != NULL) {
		intensity_errors++;
		snprintf(last_error, sizeof(last_error), "%s", message);
	}
}

/* The file is looked at once a minute: a rewrite is seen after it; a
 * bad file leaves the series read before in force. */
static void
test_reload(void)
{
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char rows[256];
	double before, after;

	snprintf(rows, sizeof(rows), "%lld %lld 100\n", W0, W0 + 1000);
	write_cache(rows);
	a = open_agent(true);
	advance(1000000000ULL);
	ceems_agent_tick(a, 11 * SEC);
	before = job_total(a);
	snprintf(rows, sizeof(rows), "%lld %lld 400\n", W0, W0 + 1000);
	write_cache(rows);
	advance(1000000000ULL);
	ceems_agent_tick(a, 12 * SEC);
	ceems_agent_report(a, 42, &r);
	after = ceems_job_figures_ledger_total_j(&r.ledger);
	advance(1000000000ULL);
	ceems_agent_tick(a, 40 * SEC);	/* RAPL read well within a wrap */
	ceems_agent_report(a, 42, &r);
	after = ceems_job_figures_ledger_total_j(&r.ledger);
	is_near(r.ledger.emissions_g, after * 1.5 * 100 / 3.6e6, 1e-9,
		"within the minute the file is not read again");
	advance(1000000000ULL);
	ceems_agent_tick(a, 71 * SEC);
	ceems_agent_report(a, 42, &r);
	before = after;
	after = ceems_job_figures_ledger_total_j(&r.ledger);
	is_near(r.ledger.emissions_g,
		(before * 100 + (after - before) * 400) * 1.5 / 3.6e6, 1e-9,
		"after the minute the new series applies");
	write_cache("1 2 oops\n");
	advance(1000000000ULL);
	ceems_agent_tick(a, 100 * SEC);
	advance(1000000000ULL);
	ceems_agent_tick(a, 132 * SEC);
	ceems_agent_report(a, 42, &r);
	ok(r.ledger.factor_timed && r.ledger.factor_fallback == 0,
	   "a bad file: the series read before stays in force");
	ok(intensity_errors == 1 && strstr(last_error, "line 4") != NULL &&
	   strstr(last_error, "series read before") != NULL,
	   "one log line names the bad line and what applies");
	advance(1000000000ULL);
	ceems_agent_tick(a, 160 * SEC);
	advance(1000000000ULL);
	ceems_agent_tick(a, 193 * SEC);
	is_int(intensity_errors, 1, "the same bad file is not logged again");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

/* The one record in the spool SPOOL into REC: 0, or -1. */
static int
spooled_record(const char *spool, struct ceems_job_record *rec)
{
	static char text[CEEMS_RECORD_MAX + 1];
	char path[PATH_MAX], err[256] = "";
	struct dirent *e;
	DIR *d = opendir(spool);
	int n = 0, r = -1;

	while (d != NULL && (e = readdir(d)) != NULL) {
		size_t len = strlen(e->d_name);
		ssize_t got;

		if (len < 5 || strcmp(e->d_name + len - 5, ".json") != 0)
			continue;
		n++;
		snprintf(path, sizeof(path), "%s/%s", spool, e->d_name);
		got = ceems_fileio_read_text_file(path, text, sizeof(text));
		if (got > 0 && ceems_record_decode(text, (size_t)got, rec, err,
						   sizeof(err)) == 0)
			r = 0;
		else
			printf("# %s: %s\n", path, err);
	}
	if (d != NULL)
		closedir(d);
	return n == 1 ? r : -1;
}

/* The advice by a series of 400 g/kWh over the job's own 4 s, 300 from
 * 5 s on, 100 from 10 s, 200 from 20 s, in a window of 20 s: its start
 * at 10 s, at a quarter of its emissions.  By hand, whatever the energy
 * the simulated node gives the job. */
static void
test_advice(void)
{
	static struct ceems_job_record rec;
	struct ceems_config c;
	struct ceems_agent_job_report r;
	struct ceems_job_meta m;
	struct ceems_advice adv;
	struct ceems_agent *a;
	char rows[256];
	double e, want;

	snprintf(rows, sizeof(rows), "%lld %lld 400\n%lld %lld 300\n"
		 "%lld %lld 100\n%lld %lld 200\n", W0, W0 + 5, W0 + 5, W0 + 10,
		 W0 + 10, W0 + 20, W0 + 20, W0 + 30);
	write_cache(rows);
	base_config(&c);
	snprintf(c.intensity_file, sizeof(c.intensity_file), "%s", cache_path);
	c.advice_window_ns = 20 * SEC;
	c.advice_min_duration_ns = 0;
	c.advice_min_saving_g = 0;
	c.advice_min_saving_pct = 0;
	a = open_agent_with(&c, W0);	/* Slurm's start, as the plugin sends it */
	for (int i = 0; i < 4; i++) {
		advance(400000000ULL * (unsigned long long)(i + 1));
		ceems_agent_tick(a, (11 + (uint64_t)i) * SEC);
	}
	ok(ceems_agent_report(a, 42, &r) == 0 && r.elapsed_s == 4,
	   "4 s of the job, all at 400 g/kWh");
	e = ceems_job_figures_ledger_total_j(&r.ledger);
	ok(ceems_agent_end_advice(a, 42, &r, 14 * SEC, &adv) == 0 &&
	   adv.verdict == CEEMS_ADVICE_WORTH, "the step's reply: worth a note (%s)",
	   ceems_advice_verdict_name(adv.verdict));
	want = e * 1.5 * 400 / 3.6e6;
	is_near(adv.actual_g, want, 1e-9 * want, "its own start: E x PUE x 400");
	is_near(adv.actual_g, r.ledger.emissions_g, 1e-9 * want,
		"the same as its Carbon line, priced tick by tick");
	is_int(adv.best_start, W0 + 10, "the greenest start: the 100 g/kWh rows");
	is_near(adv.best_g, want / 4, 1e-9 * want, "a quarter of the emissions");
	/* The end: the record the agent writes carries it, and its note. */
	ok(ceems_agent_deregister(a, 42, 14 * SEC, &r) == 0, "deregistered");
	ceems_job_meta_init(&m);
	m.jobid = 42;
	m.uid = 1000;
	snprintf(m.cluster, sizeof(m.cluster), "c1");
	snprintf(m.state, sizeof(m.state), "COMPLETED");
	m.start_time = W0;
	m.end_time = W0 + 4;
	m.dependency = CEEMS_JOB_DEPENDENCY_NONE;
	is_int(ceems_agent_end(a, 42, &m, "epilog", 14 * SEC), 0,
	       "the end's word writes the record");
	ok(spooled_record(c.spool_dir, &rec) == 0 && rec.have_advice &&
	   rec.advice.best_start == W0 + 10 &&
	   fabs(rec.advice.best_g - want / 4) < 1e-9 * want,
	   "the record keeps the advice");
	ok(rec.nnotes > 0 && strcmp(rec.notes[rec.nnotes - 1].id,
				    CEEMS_SUMMARY_CARBON_NOTE) == 0,
	   "and its note");
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(count_logs, NULL);
	make_trees();
	test_series_with_gap();
	test_no_file();
	test_no_series_configured();
	test_reload();
	test_advice();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
