/* test_carbon_note.c - carbon-aware advice from a job's report to the
 * user and the record: the advice of a report by a series whose
 * intensity changes during the day (lib/model/carbon_advice.c), its JSON
 * in the agent's reply and the record (lib/model/advice.c, strict
 * and fuzzed), the summary's note (lib/summary/summary_carbon.c) and
 * when it must not fire, and the job's dependency in its metadata.
 * Every advised start and saving was worked out by hand. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "model/carbon_advice.h"
#include "model/ledger.h"
#include "record/record.h"
#include "summary/summary.h"
#include "../tap.h"
#include "day_series.h"

static struct ceems_intensity_series series;

/* The site's defaults (ceems.conf(5)): 24 h, 50 g, 20%, 1 h. */
static const struct ceems_advice_opts site = {
	.window_s = 24 * HOUR, .min_saving_g = 50, .min_saving_frac = 0.2,
	.min_duration_s = 3600,
};

/* A job of ELAPSED seconds that drew JOULES of package energy, priced
 * through the ledger's own tick at PUE (the agent's path). */
static void
job_report(struct ceems_agent_job_report *r, double elapsed, double joules,
	   double pue)
{
	struct ceems_ledger_job_share share;
	struct ceems_emission_factor f = { .source = "series:test-day",
		.zone = "FR", .year = 2026, .g_per_kwh = 400, .pue = pue };

	memset(r, 0, sizeof(*r));
	r->jobid = 1300;
	r->uid = 1000;
	r->elapsed_s = elapsed;
	memset(&share, 0, sizeof(share));
	share.joules[CEEMS_DOMAIN_PACKAGE] = joules;
	share.measured[CEEMS_DOMAIN_PACKAGE] = true;
	share.covered[CEEMS_DOMAIN_PACKAGE] = true;
	ceems_job_figures_ledger_init(&r->ledger);
	ok(ceems_ledger_add_tick(&r->ledger, &share, elapsed, &f) == 0,
	   "the job's tick is in its ledger");
}

static struct ceems_advice
advise_report(int64_t start, double elapsed, double joules, double pue,
	      bool chain)
{
	static struct ceems_agent_job_report r;
	struct ceems_advice a;

	job_report(&r, elapsed, joules, pue);
	ok(ceems_carbon_advice_of_report(&series, &r, start, chain, &site,
					 &a) == 0, "advice of the report");
	return a;
}

static void
test_of_report(void)
{
	struct ceems_advice a;
	static struct ceems_agent_job_report r;

	/* 1 kWh from 19:00 (400): 400 g; the next day's 06:00 (100): 100 g. */
	a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	ok(a.verdict == CEEMS_ADVICE_WORTH, "evening job: worth a note");
	is_near(a.actual_g, 400, 1e-9, "evening job: 400 g at its start");
	is_int(a.best_start, DAY0 + 30 * HOUR, "evening job: the next 06:00");
	is_near(a.best_g, 100, 1e-9, "evening job: 100 g then");
	is_near(a.saving_frac, 0.75, 1e-12, "evening job: 75% less");
	/* 2 kWh from 05:00 at PUE 1.5: 1 kWh at 300, 1 at 100, 600 g; from
	 * 06:00 both at 100: 300 g. */
	a = advise_report(DAY0 + 5 * HOUR, 7200, 2 * KWH, 1.5, false);
	ok(a.verdict == CEEMS_ADVICE_WORTH && a.best_start == DAY0 + 6 * HOUR,
	   "straddling job: an hour later");
	is_near(a.actual_g, 600, 1e-9, "straddling job: 600 g");
	is_near(a.best_g, 300, 1e-9, "straddling job: 300 g");
	/* 4 h from 14:00 (200 to 18:00): 1 kWh, 200 g; 06:00 the next day:
	 * 100 g: 100 g saved, 50%. */
	a = advise_report(DAY0 + 14 * HOUR, 4 * 3600, KWH, 1, false);
	ok(a.verdict == CEEMS_ADVICE_WORTH && a.best_start == DAY0 + 30 * HOUR &&
	   fabs(a.saving_g - 100) < 1e-9, "afternoon job: the next morning, 100 g");
	/* The same evening job in a dependency chain, or 30 min long. */
	a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, true);
	ok(a.verdict == CEEMS_ADVICE_CHAIN && fabs(a.saving_g - 300) < 1e-9,
	   "a chained job: its saving, no note");
	a = advise_report(DAY0 + 19 * HOUR, 1800, KWH / 2, 1, false);
	ok(a.verdict == CEEMS_ADVICE_SHORT, "a 30-minute job: no note");
	/* 0.1 kWh at 19:00: 40 g to 10 g, 30 g saved: under 50 g. */
	a = advise_report(DAY0 + 19 * HOUR, 3600, KWH / 10, 1, false);
	ok(a.verdict == CEEMS_ADVICE_SMALL, "30 g saved: under the grams");
	/* Time the series does not hold: no advice, unknown. */
	a = advise_report(DAY0 - 10 * HOUR, 3600, KWH, 1, false);
	ok(a.verdict == CEEMS_ADVICE_NO_SERIES && !ceems_advice_known(&a),
	   "before the series: no advice");
	/* No emissions (no zone): none either, whatever the series. */
	job_report(&r, 3600, KWH, 1);
	r.ledger.have_emissions = false;
	ok(ceems_carbon_advice_of_report(&series, &r, DAY0 + 19 * HOUR, false,
					 &site, &a) == 0 &&
	   a.verdict == CEEMS_ADVICE_NO_SERIES, "no emissions: no advice");
	ok(ceems_carbon_advice_of_report(NULL, &r, DAY0, false, &site, &a) ==
	   -EINVAL, "no series: refused");
}

static void
test_in_chain(void)
{
	struct ceems_advice a = { .verdict = CEEMS_ADVICE_WORTH };

	ceems_advice_in_chain(&a);
	ok(a.verdict == CEEMS_ADVICE_CHAIN, "worth, then chained: no note");
	a.verdict = CEEMS_ADVICE_SHORT;
	ceems_advice_in_chain(&a);
	ok(a.verdict == CEEMS_ADVICE_SHORT, "short stays short");
	a.verdict = CEEMS_ADVICE_NO_SERIES;
	ceems_advice_in_chain(&a);
	ok(a.verdict == CEEMS_ADVICE_NO_SERIES, "no advice stays none");
}

static int
from_text(const char *text, struct ceems_advice *a, char *err, size_t size)
{
	struct json_object *o = json_tokener_parse(text);
	int r;

	if (o == NULL)
		return -EINVAL;
	r = ceems_advice_from_json(o, a, err, size);
	json_object_put(o);
	return r;
}

static void
test_json(void)
{
	static const char *const bad[] = {
		"[]",
		"{\"verdict\":\"no series\",\"actual_g\":1,\"best_start\":5,\"best_g\":1}",
		"{\"verdict\":\"worth\",\"actual_g\":1,\"best_start\":5,\"best_g\":2}",
		"{\"verdict\":\"worth\",\"actual_g\":-1,\"best_start\":5,\"best_g\":0}",
		"{\"verdict\":\"worth\",\"actual_g\":1,\"best_g\":0}",
		"{\"verdict\":\"worth\",\"actual_g\":1,\"best_start\":5.5,\"best_g\":0}",
		"{\"verdict\":\"worth\",\"actual_g\":1,\"best_start\":0,\"best_g\":0}",
		"{\"verdict\":\"worth\",\"actual_g\":\"1\",\"best_start\":5,\"best_g\":0}",
		"{\"verdict\":\"worth\",\"actual_g\":1,\"best_start\":5,\"best_g\":0,\"x\":1}",
		"{\"actual_g\":1,\"best_start\":5,\"best_g\":0}",
	};
	struct ceems_advice a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	struct ceems_advice back;
	struct json_object *o = ceems_advice_to_json(&a);
	char err[256] = "";

	ok(o != NULL && ceems_advice_from_json(o, &back, err,
						      sizeof(err)) == 0 &&
	   back.verdict == a.verdict && back.actual_g == a.actual_g &&
	   back.best_g == a.best_g && back.best_start == a.best_start &&
	   back.saving_g == a.saving_g && back.saving_frac == a.saving_frac,
	   "the advice survives its JSON (%s)", err);
	json_object_put(o);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		ok(from_text(bad[i], &back, err, sizeof(err)) == -EINVAL &&
		   (err[0] != '\0' || i == 0), "refused with a reason: %s (%s)",
		   bad[i], err);
	}
}

/* Random bytes put in a valid advice, digits for digits half the time
 * (numbers that still parse): refused, or sane. */
static void
test_fuzz(void)
{
	static const char good[] = "{\"verdict\":\"worth\",\"actual_g\":400,"
	    "\"best_start\":1767333600,\"best_g\":100}";
	unsigned int seed = 38, sane = 0, refused = 0;
	char text[sizeof(good)], err[256];

	for (int i = 0; i < 20000; i++) {
		struct ceems_advice a;

		memcpy(text, good, sizeof(good));
		for (int k = 0; k < 1 + i % 3; k++) {
			size_t at;

			seed = seed * 1103515245u + 12345u;
			at = (seed >> 8) % (sizeof(good) - 1);
			if ((seed >> 30) & 1 && text[at] >= '0' && text[at] <= '9')
				text[at] = (char)('0' + (seed >> 16) % 10);
			else
				text[at] = (char)(32 + (seed >> 20) % 95);
		}
		if (from_text(text, &a, err, sizeof(err)) < 0) {
			refused++;
			continue;
		}
		if (ceems_advice_known(&a) && a.best_g <= a.actual_g &&
		    a.saving_g >= 0 && a.best_start > 0 && isfinite(a.actual_g))
			sane++;
	}
	ok(sane + refused == 20000 && refused > 0 && sane > 0,
	   "20000 mutated advices: %u refused, %u sane, none else", refused,
	   sane);
}

static void
meta_of(struct ceems_job_meta *m, uint8_t dependency, uint32_t nnodes)
{
	ceems_job_meta_init(m);
	m->jobid = 1300;
	m->uid = 1000;
	snprintf(m->cluster, sizeof(m->cluster), "c1");
	snprintf(m->node, sizeof(m->node), "n1");
	snprintf(m->state, sizeof(m->state), "COMPLETED");
	m->exit_code = 0;
	m->start_time = DAY0 + 19 * HOUR;
	m->end_time = DAY0 + 20 * HOUR;
	m->nnodes = nnodes;
	m->alloc_cpus = 1;
	m->dependency = dependency;
}

static const char expected_note[] =
	"Started at 2026-01-02 06:00 UTC, the greenest start the grid's "
	"recorded intensity offered within the site's window, the job would "
	"have emitted 100 g CO2e instead of 400 g: 300 g (75%) less. A job "
	"that can wait may be given a start with --begin.";

static void
test_note(void)
{
	struct ceems_advice a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	struct ceems_summary_note n;

	ok(ceems_summary_carbon_note(&a, &n), "worth: the note fires");
	is_str(n.id, CEEMS_SUMMARY_CARBON_NOTE, "its id");
	is_str(n.text, expected_note, "its text, by hand");
	ok(n.have_saving_g && n.saving_g == 300 && !n.have_saving_j,
	   "its saving in grams, no energy saved");
	a.verdict = CEEMS_ADVICE_SMALL;
	ok(!ceems_summary_carbon_note(&a, &n), "small saving: none");
	ok(!ceems_summary_carbon_note(NULL, &n), "no advice: none");
}

/* The summary carries the note where it must, and only there. */
static void
test_summary(void)
{
	static struct ceems_agent_job_report r;
	static char buf[CEEMS_SUMMARY_SIZE];
	struct ceems_advice a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	struct ceems_job_meta m;

	job_report(&r, 3600, KWH, 1);
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 1);
	ok(ceems_summary_format_advice(&m, &r, &a, CEEMS_SUMMARY_FULL, buf,
				       sizeof(buf)) > 0 &&
	   strstr(buf, "\nNote     Started at 2026-01-02 06:00 UTC, the greenest") != NULL,
	   "one node, no dependency: the note");
	m.dependency = CEEMS_JOB_DEPENDENCY_LISTED;
	ok(ceems_summary_format_advice(&m, &r, &a, CEEMS_SUMMARY_FULL, buf,
				       sizeof(buf)) > 0 &&
	   strstr(buf, "greenest") == NULL, "a listed dependency: none");
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 2);
	ok(ceems_summary_format_advice(&m, &r, &a, CEEMS_SUMMARY_FULL, buf,
				       sizeof(buf)) > 0 &&
	   strstr(buf, "greenest") == NULL, "two nodes: none (one node's advice)");
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 1);
	ok(ceems_summary_format_advice(&m, &r, NULL, CEEMS_SUMMARY_FULL, buf,
				       sizeof(buf)) > 0 &&
	   strstr(buf, "greenest") == NULL, "no series: none");
}

/* RECORD, whose dependency is true, with VALUE instead, decoded into
 * BACK. */
static int
with_dependency(const char *record, const char *value,
		struct ceems_job_record *back)
{
	static char text[CEEMS_RECORD_MAX];
	const char *at = strstr(record, "\"dependency\":true");
	char err[256];
	int n;

	if (at == NULL)
		return -1;
	n = snprintf(text, sizeof(text), "%.*s\"dependency\":%s%s",
		     (int)(at - record), record, value,
		     at + strlen("\"dependency\":true"));
	return n > 0 ? ceems_record_decode(text, (size_t)n, back, err,
					   sizeof(err)) : -1;
}

static void
test_record(void)
{
	static struct ceems_job_record rec, back;
	static struct ceems_agent_job_report r;
	static char buf[CEEMS_RECORD_MAX];
	struct ceems_advice a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	struct ceems_advice none;
	struct ceems_job_meta m;
	char err[256] = "";
	int n;

	job_report(&r, 3600, KWH, 1);
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 1);
	ceems_record_build(&rec, &m, &r, "extern", DAY0 + 21 * HOUR);
	ceems_record_set_advice(&rec, &a);
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	ok(n > 0 && ceems_record_decode(buf, (size_t)n, &back, err,
					sizeof(err)) == 0,
	   "a record with advice round-trips (%s)", err);
	ok(back.have_advice && back.advice.best_start == DAY0 + 30 * HOUR &&
	   back.advice.saving_g == 300, "its advice is kept");
	ok(back.nnotes > 0 &&
	   strcmp(back.notes[back.nnotes - 1].id, CEEMS_SUMMARY_CARBON_NOTE) == 0 &&
	   strcmp(back.notes[back.nnotes - 1].text, expected_note) == 0,
	   "its note, last");
	ok(back.meta.dependency == CEEMS_JOB_DEPENDENCY_UNKNOWN &&
	   strstr(buf, "dependency") == NULL,
	   "no dependency listed: left out (an older agent takes the rest)");
	/* One node of two: its advice, no note (the summary gives none). */
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 2);
	ceems_record_build(&rec, &m, &r, "extern", DAY0 + 21 * HOUR);
	ceems_record_set_advice(&rec, &a);
	ok(rec.have_advice && (rec.nnotes == 0 || strcmp(rec.notes[rec.nnotes - 1].id,
			CEEMS_SUMMARY_CARBON_NOTE) != 0),
	   "a node of a job of two: the advice, no note");
	meta_of(&m, CEEMS_JOB_DEPENDENCY_NONE, 1);
	/* No series: no advice, no key, no note. */
	ceems_record_build(&rec, &m, &r, "extern", DAY0 + 21 * HOUR);
	ceems_advice_none(&none);
	ceems_record_set_advice(&rec, &none);
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	ok(n > 0 && strstr(buf, "\"advice\"") == NULL &&
	   strstr(buf, CEEMS_SUMMARY_CARBON_NOTE) == NULL && !rec.have_advice,
	   "no series: no advice in the record");
	/* A listed dependency reads back; unknown stays out. */
	meta_of(&m, CEEMS_JOB_DEPENDENCY_LISTED, 1);
	ceems_record_build(&rec, &m, &r, "extern", DAY0 + 21 * HOUR);
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	ok(n > 0 && ceems_record_decode(buf, (size_t)n, &back, err,
					sizeof(err)) == 0 &&
	   back.meta.dependency == CEEMS_JOB_DEPENDENCY_LISTED &&
	   strstr(buf, "\"dependency\":true") != NULL,
	   "a listed dependency is kept");
	/* A reader takes false too (none listed), and no other value. */
	ok(with_dependency(buf, "false", &back) == 0 &&
	   back.meta.dependency == CEEMS_JOB_DEPENDENCY_NONE, "false: none listed");
	ok(with_dependency(buf, "1", &back) < 0, "1: no boolean, refused");
	meta_of(&m, CEEMS_JOB_DEPENDENCY_UNKNOWN, 1);
	ceems_record_build(&rec, &m, &r, "extern", DAY0 + 21 * HOUR);
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	ok(n > 0 && strstr(buf, "dependency") == NULL, "unknown: left out");
}

/* The step's reply carries the advice to the job side. */
static void
test_reply(void)
{
	static struct ceems_agent_job_report r, back;
	static char buf[CEEMS_AGENT_MSG_MAX];
	struct ceems_advice a = advise_report(DAY0 + 19 * HOUR, 3600, KWH, 1, false);
	struct ceems_advice got;
	char err[256] = "";
	int n;

	job_report(&r, 3600, KWH, 1);
	n = ceems_agent_proto_reply_ok_work(&r, NULL, NULL, &a, buf, sizeof(buf));
	ok(n > 0 && ceems_agent_proto_reply_decode_work(buf, (size_t)n, &back,
			NULL, NULL, &got, err, sizeof(err)) == 0 &&
	   got.verdict == CEEMS_ADVICE_WORTH && got.best_g == a.best_g &&
	   got.best_start == a.best_start, "the reply's advice (%s)", err);
	n = ceems_agent_proto_reply_ok_work(&r, NULL, NULL, NULL, buf, sizeof(buf));
	ok(n > 0 && ceems_agent_proto_reply_decode_work(buf, (size_t)n, &back,
			NULL, NULL, &got, err, sizeof(err)) == 0 &&
	   got.verdict == CEEMS_ADVICE_NO_SERIES, "none: no series");
}

int
main(void)
{
	/* The note says the node's local time: UTC here. */
	setenv("TZ", "UTC", 1);
	day_series_load(&series);
	test_of_report();
	test_in_chain();
	test_json();
	test_fuzz();
	test_note();
	test_summary();
	test_record();
	test_reply();
	ceems_intensity_free(&series);
	return done_testing();
}
