/* test_marks.c - a job's marks of its work (model/marks.h) from the
 * request to the summary: the counters' rules (names, units, add and
 * set, the counter bound), the per-job rate, the mark request's strict
 * decoder and its round trip, the reply and record carrying the
 * counters, who the engine lets mark a job (a process inside the job's
 * cgroup, of its owner), and the summary's energy per unit computed
 * from the job's own ledger. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "agent/agent.h"
#include "client/agent_proto.h"
#include "model/ledger.h"
#include "model/marks.h"
#include "model/work_history.h"
#include "record/record.h"
#include "summary/summary.h"
#include "../tap.h"
#include "agent_sim.h"
#include "fixture.h"
#include "tmptree.h"

static char err[512];
static char buf[CEEMS_AGENT_MSG_MAX + 1];

static void
test_counters(void)
{
	struct ceems_marks m;
	char longname[40];

	memset(&m, 0, sizeof(m));
	is_int(ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 1000,
				 err, sizeof(err)), 0, "an increment is taken");
	is_int(ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 500.5,
				 err, sizeof(err)), 0, "a second adds to it");
	is_near(m.c[0].work, 1500.5, 0, "the counter is the sum of its increments");
	is_int(m.c[0].marks, 2, "and counts its marks");
	is_int(ceems_marks_apply(&m, "steps", "samples", NULL, CEEMS_MARKS_ADD, 1,
				 err, sizeof(err)), -EINVAL,
	       "another unit for the same counter is refused");
	ok(strstr(err, "timesteps") != NULL, "saying its unit (%s)", err);
	is_int(ceems_marks_apply(&m, "ns", "ns_simulated", NULL, CEEMS_MARKS_SET, 10,
				 err, sizeof(err)), 0, "a cumulative value is taken");
	is_int(ceems_marks_apply(&m, "ns", "ns_simulated", NULL, CEEMS_MARKS_SET, 25,
				 err, sizeof(err)), 0, "and replaced by a later one");
	is_near(m.c[1].work, 25, 0, "a set counter is its last value");
	is_int(ceems_marks_apply(&m, "ns", "ns_simulated", NULL, CEEMS_MARKS_SET, 24,
				 err, sizeof(err)), -EINVAL,
	       "a cumulative value may not go down");
	is_near(m.c[1].work, 25, 0, "and the refusal changes nothing");
	is_int(ceems_marks_apply(&m, "bad name", "x", NULL, CEEMS_MARKS_ADD, 1, err,
				 sizeof(err)), -EINVAL, "a name with a space is refused");
	is_int(ceems_marks_apply(&m, "x", "a\"b", NULL, CEEMS_MARKS_ADD, 1, err,
				 sizeof(err)), -EINVAL, "a unit with a quote is refused");
	memset(longname, 'a', 31);
	longname[31] = '\0';
	ok(ceems_marks_name_ok(longname), "31 bytes are a name");
	longname[31] = 'a';
	longname[32] = '\0';
	ok(!ceems_marks_name_ok(longname) && !ceems_marks_name_ok(""),
	   "32 bytes and none are not");
	is_int(ceems_marks_apply(&m, "x", "y", NULL, CEEMS_MARKS_ADD, -1, err,
				 sizeof(err)), -EINVAL, "a negative value is refused");
	is_int(ceems_marks_apply(&m, "x", "y", NULL, CEEMS_MARKS_ADD, NAN, err,
				 sizeof(err)), -EINVAL, "NaN is refused");
	is_int(ceems_marks_apply(&m, "x", "y", NULL, CEEMS_MARKS_ADD, 1e300, err,
				 sizeof(err)), -EINVAL, "beyond 2^53 is refused");
	is_int(ceems_marks_apply(&m, "x", "y", NULL, 0, 1, err, sizeof(err)), -EINVAL,
	       "a mark that does not say add or set is refused");
	is_int(ceems_marks_apply(&m, "steps", "timesteps", "lammps", CEEMS_MARKS_ADD,
				 1, err, sizeof(err)), 0, "a tag is taken by an untagged counter");
	is_str(m.c[0].tag, "lammps", "which keeps it");
	is_int(ceems_marks_apply(&m, "steps", "timesteps", "gromacs", CEEMS_MARKS_ADD,
				 1, err, sizeof(err)), -EINVAL,
	       "another tag for the same counter is refused");
	is_int(ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 1,
				 err, sizeof(err)), 0, "a mark without a tag still counts");
	is_int(ceems_marks_apply(&m, "x", "y", "bad tag", CEEMS_MARKS_ADD, 1, err,
				 sizeof(err)), -EINVAL, "a tag with a space is refused");
	is_near(m.c[0].work, 1502.5, 0, "the tagged marks counted, the refused one not");
	is_str(m.c[0].tag, "lammps", "and the tag is the first");
	is_int(m.n, 2, "no refused mark made a counter");
	for (int i = 2; i < CEEMS_MARKS_MAX; i++) {
		char name[16];

		snprintf(name, sizeof(name), "c%d", i);
		(void)ceems_marks_apply(&m, name, "u", NULL, CEEMS_MARKS_ADD, 1, err,
					sizeof(err));
	}
	is_int(m.n, CEEMS_MARKS_MAX, "a job fills its counters");
	is_int(ceems_marks_apply(&m, "one-more", "u", NULL, CEEMS_MARKS_ADD, 1, err,
				 sizeof(err)), -ENOSPC, "and gets no more");
	is_str(ceems_marks_main(&m)->name, "steps",
	       "the main counter is the one marked most");
}

static void
test_rate(void)
{
	struct ceems_marks_rate r;
	unsigned taken = 0;

	memset(&r, 0, sizeof(r));
	for (int i = 0; i < 100000; i++)
		taken += ceems_marks_rate_take(&r, 5 * SEC + (uint64_t)i * 10000);
	/* 100,000 marks in one second: the burst and one second's rate. */
	ok(taken >= CEEMS_MARKS_BURST + CEEMS_MARKS_RATE - 2 &&
	   taken <= CEEMS_MARKS_BURST + CEEMS_MARKS_RATE + 1,
	   "100000 marks in a second: %u taken, the burst and the rate", taken);
	is_int(r.refused, 100000 - taken, "the rest are counted as refused");
	ok(ceems_marks_rate_take(&r, 60 * SEC), "the rate refills");
}

/* REQ decoded from TEXT: the decoder's result. */
static int
decode(const char *text, struct ceems_agent_request *req)
{
	return ceems_agent_proto_request_decode(text, strlen(text), req, err,
						sizeof(err));
}

static void
test_request(void)
{
	static struct ceems_agent_request req, back;
	static const char *const bad[] = {
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"steps\",\"unit\":\"steps\"}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"steps\",\"unit\":\"steps\",\"add\":1,\"set\":2}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"st eps\",\"unit\":\"steps\",\"add\":1}",
		"{\"op\":\"mark\",\"jobid\":7,\"unit\":\"steps\",\"add\":1}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\",\"unit\":\"steps\",\"add\":-1}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\",\"unit\":\"steps\",\"add\":\"1\"}",
		"{\"op\":\"mark\",\"jobid\":0,\"name\":\"s\",\"unit\":\"steps\",\"add\":1}",
		"{\"op\":\"mark\",\"name\":\"s\",\"unit\":\"steps\",\"add\":1}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\",\"unit\":\"steps\",\"add\":1,\"pid\":1}",
		"{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\",\"unit\":\"steps\",\"add\":1e300}",
	};
	int n;

	is_int(decode("{\"op\":\"mark\",\"jobid\":7,\"name\":\"steps\","
		      "\"unit\":\"timesteps\",\"add\":1000}", &req), 0,
	       "a mark request decodes");
	ok(req.op == CEEMS_AGENT_OP_MARK && req.jobid == 7 &&
	   strcmp(req.mark_name, "steps") == 0 &&
	   strcmp(req.mark_unit, "timesteps") == 0 &&
	   req.mark_mode == CEEMS_MARKS_ADD && req.mark_value == 1000,
	   "with its job, counter, unit, way and value");
	is_int(decode("{\"op\":\"mark\",\"jobid\":7,\"name\":\"ns\","
		      "\"unit\":\"ns_simulated\",\"set\":2.5}", &req), 0,
	       "a cumulative mark decodes");
	ok(req.mark_mode == CEEMS_MARKS_SET && req.mark_value == 2.5, "as a set");
	n = ceems_agent_proto_request_encode(&req, buf, sizeof(buf));
	ok(n > 0 && decode(buf, &back) == 0 &&
	   memcmp(&req, &back, sizeof(req)) == 0, "and round-trips (%s)", buf);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ok(decode(bad[i], &req) == -EINVAL && err[0] != '\0',
		   "refused: %s (%s)", bad[i], err);
	}
	is_int(decode("{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\","
		      "\"unit\":\"u\",\"add\":1,\"tag\":\"lammps\"}", &req), 0,
	       "a mark with a tag decodes");
	n = ceems_agent_proto_request_encode(&req, buf, sizeof(buf));
	ok(strcmp(req.mark_tag, "lammps") == 0 && n > 0 && decode(buf, &back) == 0 &&
	   strcmp(back.mark_tag, "lammps") == 0, "and keeps it both ways (%s)", buf);
	ok(decode("{\"op\":\"mark\",\"jobid\":7,\"name\":\"s\",\"unit\":\"u\","
		  "\"add\":1,\"tag\":\"a b\"}", &req) == -EINVAL,
	   "a tag that is no name is refused (%s)", err);
}

/* The plain-text mark (agent_proto_line.c): the same request as its
 * JSON form, each bad line refused with a sentence and the request left
 * as it was; the answers are one line each. */
static void
test_request_line(void)
{
	static struct ceems_agent_request req, json;
	static const char *const bad[] = {
		"MARK 7 steps 1000 timesteps", "MARK 7 steps 1000 timesteps sum",
		"MARK 7 steps 1000 timesteps add x/y", "MARK 7 s 1 u add t x",
		"MARK 0 steps 1 u add",
		"MARK -7 steps 1 u add", "MARK 7.5 steps 1 u add",
		"MARK 7 st/eps 1 u add", "MARK 7 steps -1 u add",
		"MARK 7 steps nan u add", "MARK 7 steps 0x10 u add",
		"MARK 7 steps 1e300 u add", "MARK 7  steps 1 u add",
		"MARK 7 steps 1 u add ", "MARK 7 steps\t1 u add",
		"MARK 7 steps 1 u add\r", "mark 7 steps 1 u add",
	};
	char out[128];

	is_int(ceems_agent_proto_line_decode("MARK 7 steps 1000 timesteps add\n",
					     32, &req, err, sizeof(err)), 0,
	       "a mark line decodes");
	(void)decode("{\"op\":\"mark\",\"jobid\":7,\"name\":\"steps\","
		     "\"unit\":\"timesteps\",\"add\":1000}", &json);
	ok(memcmp(&req, &json, sizeof(req)) == 0, "into the request its JSON form gives");
	is_int(ceems_agent_proto_line_decode("MARK 7 ns 2.5e3 ns_simulated set", 32,
					     &req, err, sizeof(err)), 0,
	       "a cumulative one, without its newline, decodes");
	ok(req.mark_mode == CEEMS_MARKS_SET && req.mark_value == 2500 &&
	   strcmp(req.mark_unit, "ns_simulated") == 0 && req.mark_tag[0] == '\0',
	   "as a set of 2500, no tag");
	is_int(ceems_agent_proto_line_decode("MARK 7 ns 2 ns set gromacs-2024\n", 32,
					     &req, err, sizeof(err)), 0,
	       "one with a tag decodes");
	is_str(req.mark_tag, "gromacs-2024", "with its tag");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		json = req;
		ok(ceems_agent_proto_line_decode(bad[i], strlen(bad[i]), &req, err,
						 sizeof(err)) == -EINVAL &&
		   err[0] != '\0' && memcmp(&req, &json, sizeof(req)) == 0,
		   "refused, the request unchanged: %s (%s)", bad[i], err);
	}
	ok(!ceems_agent_proto_line_is("{\"op\":\"mark\"}", 13) &&
	   ceems_agent_proto_line_is("MARK ", 5), "a line is told from JSON");
	ok(ceems_agent_proto_line_reply(0, NULL, out, sizeof(out)) == 3 &&
	   strcmp(out, "OK\n") == 0, "taken: OK");
	ok(ceems_agent_proto_line_reply(-EBUSY, "over\nits rate", out,
					sizeof(out)) > 0 &&
	   strcmp(out, "ERR EBUSY over?its rate\n") == 0,
	   "refused: one line, its code and why (%s)", out);
	{
		char small[12];

		memset(small, 'x', sizeof(small));
		ok(ceems_agent_proto_line_reply(-EBUSY, "why", small, 11) == -ENOSPC &&
		   small[11] == 'x', "a buffer that holds the code but not its newline: refused, "
		   "nothing written past it");
		ok(ceems_agent_proto_line_reply(-EBUSY, "why", small, 12) == 11 &&
		   strcmp(small, "ERR EBUSY \n") == 0, "one byte more: the code and its newline");
	}
}

static void
test_reply_and_record(void)
{
	static struct ceems_agent_job_report report, got;
	static struct ceems_job_record rec, back;
	static struct ceems_job_meta meta;
	struct ceems_marks m, out;
	int n;

	memset(&m, 0, sizeof(m));
	(void)ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 12000,
				err, sizeof(err));
	(void)ceems_marks_apply(&m, "samples", "samples", "resnet", CEEMS_MARKS_SET,
				0.125, err, sizeof(err));
	memset(&report, 0, sizeof(report));
	report.jobid = 9;
	report.uid = 1000;
	n = ceems_agent_proto_reply_ok_marks(&report, &m, buf, sizeof(buf));
	ok(n > 0 && ceems_agent_proto_reply_decode_marks(buf, (size_t)n, &got,
				&out, err, sizeof(err)) == 0,
	   "a reply carries the job's work (%s)", err);
	ok(out.n == 2 && strcmp(out.c[0].unit, "timesteps") == 0 &&
	   out.c[0].work == 12000 && out.c[0].marks == 1 &&
	   out.c[1].work == 0.125, "every counter's work as the agent kept it");
	/* The reply's shape is the one the first plugin that knew marks
	 * decodes (its keys checked strictly): no tag, no intervals; the
	 * record keeps them. */
	ok(strstr(buf, "\"tag\"") == NULL && strstr(buf, "\"intervals\"") == NULL &&
	   out.c[1].tag[0] == '\0',
	   "without the tag and intervals an older plugin would refuse");
	n = ceems_agent_proto_reply_ok(&report, buf, sizeof(buf));
	ok(n > 0 && strstr(buf, "marks") == NULL &&
	   ceems_agent_proto_reply_decode_marks(buf, (size_t)n, &got, &out, err,
						sizeof(err)) == 0 && out.n == 0,
	   "a job that never marked has none in its reply");

	ceems_job_meta_init(&meta);
	meta.jobid = 9;
	meta.uid = 1000;
	snprintf(meta.user, sizeof(meta.user), "alice");
	meta.start_time = 1700000000;
	meta.end_time = 1700000600;
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	ceems_record_build(&rec, &meta, &report, "extern", 1700000601);
	rec.marks = m;
	n = ceems_record_encode(&rec, buf, sizeof(buf));
	ok(n > 0 && ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)) == 0,
	   "a record with marks round-trips (%s)", err);
	ok(back.marks.n == 2 && back.marks.c[0].work == 12000 &&
	   strcmp(back.marks.c[1].name, "samples") == 0 &&
	   strcmp(back.marks.c[1].tag, "resnet") == 0, "keeping them, with the tag");
}

static void
test_summary(void)
{
	static struct ceems_agent_job_report report;
	struct ceems_marks m;
	char text[1024];

	memset(&report, 0, sizeof(report));
	memset(&m, 0, sizeof(m));
	is_int(ceems_summary_work_format(&report, &m, text, sizeof(text)), 0,
	       "no marks, no lines");
	(void)ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 12000,
				err, sizeof(err));
	ok(ceems_summary_work_format(&report, &m, text, sizeof(text)) > 0 &&
	   strstr(text, "energy not measured") != NULL,
	   "work without energy says so: %s", text);
	report.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 20000;
	report.ledger.joules[CEEMS_DOMAIN_DRAM] = 3076;
	report.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 60;
	report.ledger.covered_s[CEEMS_DOMAIN_DRAM] = 60;
	report.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	report.ledger.measured[CEEMS_DOMAIN_DRAM] = true;
	ok(ceems_summary_work_format(&report, &m, text, sizeof(text)) > 0 &&
	   strcmp(text, "Work     12000 timesteps (steps), 1.923 J per timestep\n") == 0,
	   "the energy per unit is the ledger's total over the work: %s", text);
	(void)ceems_marks_apply(&m, "samples", "images", NULL, CEEMS_MARKS_SET, 4e8,
				err, sizeof(err));
	ok(ceems_summary_work_format(&report, &m, text, sizeof(text)) > 0 &&
	   strstr(text, "\n         400000000 images (samples), 57.69 uJ per image\n") != NULL,
	   "a second counter on its own line, small figures in uJ: %s", text);
	ok(ceems_summary_work_format(&report, &m, text, 20) == -ENOSPC &&
	   text[0] == '\0', "too small a buffer is an error, not a cut line");
}

/* Whether the comparison of M against HIST for REPORT says WANT (NULL:
 * no comparison line) and the reason WHY (NULL: no reason line). */
static bool
compares(const struct ceems_agent_job_report *report,
	 const struct ceems_marks *m, const struct ceems_marks_history *hist,
	 const char *want, const char *why)
{
	static char out[2048];
	const char *at_why = NULL;

	if (ceems_summary_work_format_history(report, m, hist, "lammps-md", out,
					      sizeof(out)) <= 0)
		return false;
	at_why = strstr(out, "likely why: ");
	if (want == NULL)
		return strstr(out, "median") == NULL && at_why == NULL;
	if (strstr(out, want) == NULL)
		return false;
	if (why == NULL)
		return at_why == NULL;
	return at_why != NULL && strncmp(at_why + 12, why, strlen(why)) == 0;
}

/* The comparison's thresholds and its one likely reason, with the cases
 * where it must say nothing (doc/marks.md): the earlier runs' median is
 * 2 J a step at CPU efficiency 80%; this run did 10000 steps on 4
 * cores for 100 s.  Each figure is the one the summary computes from
 * the report's energy and times. */
static void
test_reasons(struct ceems_agent_job_report *report, const struct ceems_marks *m,
	     struct ceems_marks_history *hist)
{
	hist->c[0].runs = 5;
	hist->c[0].median_cpu_eff = 0.8;
	report->cpu_s = 320;		/* 80%: as busy as before */
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 26000;
	ok(compares(report, m, hist, "30% more energy per timestep", NULL),
	   "30%% more with the cores as busy as before: no reason named");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 21900;
	ok(compares(report, m, hist, NULL, NULL), "9.5%% more is noise: nothing said");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 18200;
	ok(compares(report, m, hist, NULL, NULL), "9%% less is noise: nothing said");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 14000;
	report->cpu_s = 160;
	ok(compares(report, m, hist, "30% less energy per timestep", NULL),
	   "30%% less with fewer cores busy: said, no reason (a cheaper run needs none)");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 26000;
	report->cpu_s = 270;		/* 67.5%: not under 4/5 of 80% */
	ok(compares(report, m, hist, "30% more", NULL),
	   "CPU efficiency 68%% against 80%% is not 'fewer cores busy'");
	report->cpu_s = 160;
	hist->c[0].median_cpu_eff = NAN;
	ok(compares(report, m, hist, "30% more", NULL),
	   "the earlier runs' efficiency unknown: no reason");
	hist->c[0].median_cpu_eff = 0.8;
	report->cpu_s = 320;
	report->ngpus = 2;
	report->gpus[0].have_util = true;
	report->gpus[0].util_pct = 85;
	report->gpus[1].have_util = true;
	report->gpus[1].util_pct = 0.2;
	ok(compares(report, m, hist, "30% more", "a GPU idle, 1 of the 2 GPUs it held busy under 1%"),
	   "30%% more with a GPU idle: that is the reason");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 21000;
	ok(compares(report, m, hist, NULL, NULL),
	   "5%% more with a GPU idle: noise, nothing said");
	report->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 26000;
	report->gpus[1].util_pct = 40;
	ok(compares(report, m, hist, "30% more", NULL),
	   "30%% more with both GPUs busy: no reason");
	report->gpus[1].have_util = false;
	report->gpus[1].util_pct = 0;
	ok(compares(report, m, hist, "30% more", NULL),
	   "a GPU's use unknown is not an idle GPU");
	report->ngpus = 0;
}

/* A user's earlier runs (work_history.h): medians of the last 5, kept
 * per user, job name and counter, through their text form; and the
 * summary's comparison with them: a run 30% dearer a unit says so and
 * why, one within the noise says nothing. */
static void
test_history(void)
{
	static struct ceems_work_history h, back;
	static struct ceems_agent_job_report report;
	static char text[CEEMS_WORK_HISTORY_TEXT_MAX];
	static const double runs[] = { 9.0, 2.0, 2.02, 1.98, 2.0, 2.04 };
	struct ceems_work_history_median med;
	struct ceems_marks_history hist;
	struct ceems_marks m;
	char out[2048];
	int n;

	memset(&h, 0, sizeof(h));
	for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
		ceems_work_history_add(&h, 1000, "lammps-md", "steps", "timesteps",
				       runs[i], 0.8);
	ceems_work_history_add(&h, 1001, "lammps-md", "steps", "timesteps", 50, 0.8);
	ceems_work_history_add(&h, 1000, "other", "steps", "timesteps", 50, 0.8);
	ceems_work_history_median(&h, 1000, "lammps-md", "steps", "timesteps", &med);
	ok(med.runs == 5 && med.epw == 2.0 && med.cpu_eff == 0.8,
	   "the median of the last 5 runs, the oldest (9 J) dropped: %u runs, %g J",
	   med.runs, med.epw);
	ceems_work_history_median(&h, 1000, "lammps-md", "samples", "timesteps", &med);
	is_int(med.runs, 0, "another counter has no runs");
	n = ceems_work_history_format(&h, text, sizeof(text));
	ok(n > 0 && ceems_work_history_parse(&back, text) == 0, "the text form reads back");
	ceems_work_history_median(&back, 1000, "lammps-md", "steps", "timesteps", &med);
	ok(med.runs == 5 && med.epw == 2.0, "with the same runs");
	is_int(ceems_work_history_parse(&back, "1000 zz steps timesteps 2:0.5\n"
		"x\n1 0000000000000001 st\"eps u 1:1\n1 1 s u -1:1\n"
		"1 1 s u 1:1 2:2 3:3 4:4 5:5 6:6\n2 2 s u 1.5:nan\n"), 5,
	       "lines that do not parse in full are skipped");
	ceems_work_history_median(&back, 2, "", "s", "u", &med);
	ok(back.clock == 1, "and the good one is kept");
	ok(!ceems_work_history_seen(&h, 42) && ceems_work_history_seen(&h, 42),
	   "a job's end is added once");

	memset(&m, 0, sizeof(m));
	(void)ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 10000,
				err, sizeof(err));
	memset(&hist, 0, sizeof(hist));
	hist.n = 1;
	snprintf(hist.c[0].name, sizeof(hist.c[0].name), "steps");
	snprintf(hist.c[0].unit, sizeof(hist.c[0].unit), "timesteps");
	hist.c[0].runs = 5;
	hist.c[0].median_j = 2.0;
	hist.c[0].median_cpu_eff = 0.8;
	memset(&report, 0, sizeof(report));
	report.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	report.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 100;
	report.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 26000;
	report.elapsed_s = 100;
	report.alloc_cores = 4;
	report.cpu_s = 160;
	ok(ceems_summary_work_format_history(&report, &m, &hist, "lammps-md", out,
					     sizeof(out)) > 0 &&
	   strstr(out, "\n         30% more energy per timestep than the median of "
		  "your last 5 runs of lammps-md\n") != NULL &&
	   strstr(out, "likely why: fewer cores busy, CPU efficiency 40% against 80%") != NULL,
	   "30%% more a unit: said, with the likely reason:\n%s", out);
	report.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 21000;
	ok(ceems_summary_work_format_history(&report, &m, &hist, "lammps-md", out,
					     sizeof(out)) > 0 &&
	   strstr(out, "median") == NULL, "5%% more is noise: nothing said");
	report.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 26000;
	hist.c[0].runs = 1;
	ok(ceems_summary_work_format_history(&report, &m, &hist, "lammps-md", out,
					     sizeof(out)) > 0 &&
	   strstr(out, "median") == NULL, "one earlier run is too few to compare");
	test_reasons(&report, &m, &hist);
}

/* The work of C's intervals, summed. */
static double
rows_sum(const struct ceems_marks_counter *c)
{
	double sum = 0;

	for (uint32_t k = 0; k < c->nrows; k++)
		sum += c->rows[k].work;
	return sum;
}

/* ROOT-less text of /proc/PID/cgroup with LINE for cpu,cpuacct. */
static const char *
proc_cgroup(const char *cpuacct, char *out, size_t size)
{
	snprintf(out, size, "6:cpu,cpuacct:%s\n7:cpuset:%s\n"
		 "12:freezer:%s\n0::/\n", cpuacct, cpuacct, cpuacct);
	return out;
}

static void
test_admission(void)
{
	struct ceems_agent_job_spec spec;
	struct ceems_config c;
	struct ceems_agent *a;
	const struct ceems_marks *m;
	char text[512], fixture[4096];
	static struct ceems_agent_job_report report;
	int refused = 0;

	make_trees();
	base_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "an agent opens on the simulated node (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	ok(ceems_agent_marks_get(a, 42) == NULL, "a job that never marked has no marks");
	is_int(ceems_agent_marks_admit(a, 42, 1000,
		fixture_text("cgroup/v1/cgroup-localhost-batch.txt", fixture,
			     sizeof(fixture)), err, sizeof(err)), 0,
	       "a process of the job's batch step may mark it");
	is_int(ceems_agent_marks_admit(a, 42, 1000,
		proc_cgroup("/slurm_localhost/uid_1000/job_42/step_0/task_3", text,
			    sizeof(text)), err, sizeof(err)), 0,
	       "so may a task of one of its steps");
	is_int(ceems_agent_marks_admit(a, 42, 1001,
		fixture_text("cgroup/v1/cgroup-localhost-batch.txt", fixture,
			     sizeof(fixture)), err, sizeof(err)), -EPERM,
	       "a process of another user inside it may not");
	is_int(ceems_agent_marks_admit(a, 42, 1000,
		proc_cgroup("/slurm_localhost/uid_1000/job_43/step_0", text,
			    sizeof(text)), err, sizeof(err)), -EPERM,
	       "a process of the owner's other job may not");
	ok(strstr(err, "not inside its cgroup") != NULL, "saying why (%s)", err);
	is_int(ceems_agent_marks_admit(a, 42, 1000,
		proc_cgroup("/user.slice/job_42", text, sizeof(text)), err,
		sizeof(err)), -EPERM,
	       "a cgroup named job_42 elsewhere is not the job's");
	is_int(ceems_agent_marks_admit(a, 42, 1000, "garbage", err, sizeof(err)),
	       -EPERM, "unreadable cgroup text admits nothing");
	is_int(ceems_agent_marks_admit(a, 42, 1000, NULL, err, sizeof(err)),
	       -EPERM, "nor does a process whose cgroup could not be read");
	is_int(ceems_agent_marks_admit(a, 77, 1000,
		fixture_text("cgroup/v1/cgroup-localhost-batch.txt", fixture,
			     sizeof(fixture)), err, sizeof(err)), -ENOENT,
	       "a job not running here is ENOENT");

	is_int(ceems_agent_marks_apply(a, 42, "steps", "timesteps", NULL, CEEMS_MARKS_ADD,
				       100, 11 * SEC, err, sizeof(err)), 0,
	       "job 42 marks 100 timesteps");
	for (int i = 0; i < 2000; i++)
		if (ceems_agent_marks_apply(a, 42, "steps", "timesteps",
					    NULL, CEEMS_MARKS_ADD, 1, 11 * SEC + i,
					    err, sizeof(err)) == -EBUSY)
			refused++;
	ok(refused >= 2000 - CEEMS_MARKS_BURST && refused < 2000,
	   "a flood is bounded by the job's rate: %d of 2000 refused", refused);
	m = ceems_agent_marks_get(a, 42);
	ok(m != NULL && m->n == 1 &&
	   m->c[0].work == 100 + (2000 - refused), "what was taken is counted exactly");
	advance(1500000000ULL);
	ceems_agent_tick(a, 12 * SEC);
	/* An agent restart keeps them: the checkpoint writes them, the
	 * restored job has them. */
	ceems_agent_checkpoint(a, 12 * SEC);
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 13 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "the agent opens again (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 13 * SEC), 1, "job 42 is restored");
	m = ceems_agent_marks_get(a, 42);
	ok(m != NULL && m->n == 1 && m->c[0].work == 100 + (2000 - refused) &&
	   strcmp(m->c[0].unit, "timesteps") == 0,
	   "with the marks it had before the restart");
	ok(m != NULL && m->interval_s == 30 && m->c[0].nrows >= 1 &&
	   rows_sum(&m->c[0]) == m->c[0].work,
	   "and its work per interval (30 s, the series resolution), adding up "
	   "to its work");
	is_int(ceems_agent_deregister(a, 42, 14 * SEC, &report), 0, "job 42 ends");
	m = ceems_agent_marks_get(a, 42);
	ok(m != NULL && m->c[0].work == 100 + (2000 - refused),
	   "its marks stay with its final figures for the record");
	is_int(ceems_agent_marks_apply(a, 42, "steps", "timesteps", NULL, CEEMS_MARKS_ADD,
				       1, 15 * SEC, err, sizeof(err)), -ENOENT,
	       "an ended job takes no more marks");
	ceems_agent_open_close(a);
}

/* The work per interval (marks_series.c): marks of one interval add up,
 * a later interval takes a row, a full counter has every counter's rows
 * merged into intervals twice as long (sums kept), a clock set back adds
 * to the last row; the JSON form reads back and refuses what is not. */
static void
test_series(void)
{
	static struct ceems_marks m, back;
	static char text[16384];
	struct json_object *obj;
	uint32_t i;

	memset(&m, 0, sizeof(m));
	(void)ceems_marks_apply(&m, "steps", "timesteps", NULL, CEEMS_MARKS_ADD, 5,
				err, sizeof(err));
	(void)ceems_marks_apply(&m, "ns", "ns", NULL, CEEMS_MARKS_SET, 1, err,
				sizeof(err));
	ceems_marks_series_add(&m, 0, 5, 1700000015, 30);
	ceems_marks_series_add(&m, 0, 2, 1700000039, 30);
	ceems_marks_series_add(&m, 0, 3, 1700000040, 30);
	ceems_marks_series_add(&m, 0, 0, 1700000090, 30);
	ceems_marks_series_add(&m, 1, 1, 1700000100, 30);
	ok(m.interval_s == 30 && m.c[0].nrows == 2 && m.c[0].rows[0].t == 1700000010 &&
	   m.c[0].rows[0].work == 7 && m.c[0].rows[1].t == 1700000040 &&
	   m.c[0].rows[1].work == 3 && m.c[1].nrows == 1,
	   "marks of one 30-s interval add up, the next takes a row, no work "
	   "takes none");
	ceems_marks_series_add(&m, 0, 4, 1700000000, 30);
	ok(m.c[0].nrows == 2 && m.c[0].rows[1].work == 7,
	   "a clock set back adds to the last row");
	for (i = 0; i < 40; i++)
		ceems_marks_series_add(&m, 0, 1, 1700000100 + (int64_t)i * 30, 30);
	ok(m.interval_s == 60 && m.c[0].nrows <= CEEMS_MARKS_ROWS &&
	   rows_sum(&m.c[0]) == 54 && m.c[1].nrows == 1 &&
	   m.c[1].rows[0].t % 60 == 0,
	   "a full counter has every counter's rows merged into 60-s ones "
	   "(%u rows, %g in all)", m.c[0].nrows, rows_sum(&m.c[0]));
	for (i = 0; i < 5000; i++)
		ceems_marks_series_add(&m, 0, 1, 1700100000 + (int64_t)i * 600, 30);
	ok(m.c[0].nrows <= CEEMS_MARKS_ROWS && rows_sum(&m.c[0]) == 5054,
	   "a month of intervals fits, none lost (%u s each)", m.interval_s);

	obj = ceems_marks_to_json(&m);
	snprintf(text, sizeof(text), "%s", obj != NULL ?
		 json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN) : "");
	ok(obj != NULL && ceems_marks_from_json(obj, &back, err, sizeof(err)) == 0 &&
	   back.interval_s == m.interval_s && back.c[0].nrows == m.c[0].nrows &&
	   rows_sum(&back.c[0]) == 5054 && back.c[1].rows[0].t == m.c[1].rows[0].t,
	   "the rows read back from their JSON (%s)", err);
	json_object_put(obj);
	{
		static const char *const bad[] = {
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"intervals\":[[60,1]]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":30,\"intervals\":[[61,1]]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":30,\"intervals\":[[60,1],[60,1]]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":30,\"intervals\":[[60,0]]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":30,\"intervals\":[]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":0,\"intervals\":[[60,1]]}]",
			"[{\"name\":\"s\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":30,\"intervals\":[[60,1]]},"
			"{\"name\":\"t\",\"unit\":\"u\",\"work\":1,\"marks\":1,\"interval_s\":60,\"intervals\":[[60,1]]}]",
		};

		for (size_t k = 0; k < sizeof(bad) / sizeof(bad[0]); k++) {
			obj = json_tokener_parse(bad[k]);
			back.n = 99;
			ok(obj != NULL && ceems_marks_from_json(obj, &back, err,
								 sizeof(err)) == -EINVAL &&
			   back.n == 99, "refused: %s (%s)", bad[k], err);
			json_object_put(obj);
		}
	}
}

/* A job's marks at their largest (every counter, the longest names and
 * tag, every interval row) are kept in the state directory and read
 * back whole by a restarted agent. */
static void
test_keep_largest(void)
{
	static struct ceems_marks m, back;
	char dir[] = "/tmp/ceems-test-marks-XXXXXX";
	const char *long_name = "a_counter_name_of_31_bytes_....";

	if (mkdtemp(dir) == NULL) {
		ok(0, "a state directory (%s)", strerror(errno));
		return;
	}
	memset(&m, 0, sizeof(m));
	m.n = CEEMS_MARKS_MAX;
	m.interval_s = 60;
	for (uint32_t i = 0; i < CEEMS_MARKS_MAX; i++) {
		struct ceems_marks_counter *c = &m.c[i];

		snprintf(c->name, sizeof(c->name), "%.29s%02u", long_name, i);
		snprintf(c->unit, sizeof(c->unit), "%s", long_name);
		snprintf(c->tag, sizeof(c->tag), "%s", long_name);
		c->nrows = CEEMS_MARKS_ROWS;
		for (uint32_t k = 0; k < CEEMS_MARKS_ROWS; k++) {
			c->rows[k].t = 1796599980 + 60 * (int64_t)k;
			c->rows[k].work = 123456789.123456789 + k;
			c->work += c->rows[k].work;
		}
		c->marks = UINT64_C(18446744073709551) + i;
	}
	ceems_agent_marks_save(dir, 4242, &m);
	is_int(ceems_agent_marks_load(dir, 4242, &back), 0,
	       "the largest marks a job can hold are read back");
	ok(back.n == m.n && back.c[7].nrows == CEEMS_MARKS_ROWS &&
	   strcmp(back.c[7].tag, m.c[7].tag) == 0 &&
	   fabs(back.c[7].work - m.c[7].work) < 1e-3,
	   "whole: %u counters, the last one's %u rows and tag", back.n, back.c[7].nrows);
	ceems_agent_marks_forget(dir, 4242);
	rmdir(dir);
}

int
main(void)
{
	test_counters();
	test_rate();
	test_request();
	test_request_line();
	test_reply_and_record();
	test_summary();
	test_history();
	test_series();
	test_admission();
	test_keep_largest();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
