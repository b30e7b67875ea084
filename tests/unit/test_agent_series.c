/* test_agent_series.c - a job's time series (lib/model/agent_series.h): ticks
 * into buckets, coarsening when full without losing time or energy, the
 * differences of a ledger adding up to its totals, the GPU utilisation
 * as a mean by time, the JSON form (strict on garbage, the older form
 * without GPU utilisation still read), and the series through the agent
 * protocol and the job record, coarsened to fit their limits; the
 * agent's coarsening and the database's downsampling
 * (sql/functions/samples.sql) held to the one table of merge rules,
 * ceems_series_merges. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include <json-c/json.h>

#include "client/agent_proto.h"
#include "model/agent_series.h"
#include "base/json_util.h"
#include "record/record.h"
#include "../tap.h"
#include "fixture.h"

/* Sums of a series' columns (unknown cells left out). */
struct sums {
	double interval_s, cpu_s, joules[CEEMS_DOMAIN_COUNT];
	unsigned known[CEEMS_DOMAIN_COUNT];
};

static struct sums
sum_rows(const struct ceems_series *s)
{
	struct sums m;

	memset(&m, 0, sizeof(m));
	for (uint32_t i = 0; i < s->nrows; i++) {
		m.interval_s += s->rows[i].interval_s;
		if (!isnan(s->rows[i].cpu_s))
			m.cpu_s += s->rows[i].cpu_s;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!isnan(s->rows[i].joules[d])) {
				m.joules[d] += s->rows[i].joules[d];
				m.known[d]++;
			}
	}
	return m;
}

static bool
times_increase(const struct ceems_series *s)
{
	for (uint32_t i = 1; i < s->nrows; i++)
		if (s->rows[i].t <= s->rows[i - 1].t)
			return false;
	return true;
}

static void
test_buckets(void)
{
	double j[CEEMS_DOMAIN_COUNT] = { 10, 1, NAN, NAN };
	struct ceems_series *s = ceems_agent_series_new(30, 100);

	if (!ok(s != NULL, "a series of 30 s buckets"))
		return;
	/* Ticks of 10 s from 1000 (bucket 990) to 1100. */
	for (int i = 1; i <= 10; i++)
		ok(ceems_agent_series_add(s, 1000 + 10.0 * i, 10, 5, 1e6 * i, j, NAN) == 0,
		   "tick %d added", i);
	/* Middles 1005..1095: buckets 990 (1005, 1015), 1020, 1050, 1080. */
	is_int(s->nrows, 4, "four buckets");
	is_int(s->rows[0].t, 990, "first bucket starts on a multiple of 30");
	is_int(s->rows[1].t, 1020, "second bucket");
	is_near(s->rows[0].interval_s, 20, 1e-12, "first row covers two ticks");
	is_near(s->rows[1].interval_s, 30, 1e-12, "second row covers three");
	is_near(s->rows[1].cpu_s, 15, 1e-12, "CPU time summed");
	is_near(s->rows[1].mem_bytes, 5e6, 1e-3, "memory at the row's end");
	is_near(s->rows[1].joules[CEEMS_DOMAIN_PACKAGE], 30, 1e-12, "package energy summed");
	ok(isnan(s->rows[1].joules[CEEMS_DOMAIN_GPU]), "an unmeasured domain stays unknown, not 0");
	is_near(sum_rows(s).interval_s, 100, 1e-9, "all the time is in the rows");
	is_int(ceems_agent_series_add(s, NAN, 1, 0, 0, j, NAN), -EINVAL, "a NaN time is refused");
	is_int(ceems_agent_series_add(s, 2000, -1, 0, 0, j, NAN), -EINVAL, "a negative interval is refused");
	/* The wall clock stepping back: the last row takes the tick. */
	is_int(ceems_agent_series_add(s, 900, 10, 1, NAN, NULL, NAN), 0, "a tick before the last row");
	is_int(s->nrows, 4, "no row out of order");
	is_near(s->rows[3].interval_s, 30, 1e-12, "the last row took it");
	ok(times_increase(s), "times still increase");
	ceems_agent_series_free(s);
	ok(ceems_agent_series_new(0, 10) == NULL && ceems_agent_series_new(10, 0) == NULL,
	   "zero resolution or capacity refused");
}

/* A long job in a series of 8 rows: coarsened again and again, its whole
 * span and every joule kept. */
static void
test_full(void)
{
	double j[CEEMS_DOMAIN_COUNT] = { 2.5, NAN, NAN, 1 };
	struct ceems_series *s = ceems_agent_series_new(10, 8);
	struct sums m;
	int ticks = 1000;

	if (!ok(s != NULL, "a series of 8 rows"))
		return;
	for (int i = 1; i <= ticks; i++)
		if (ceems_agent_series_add(s, 5000 + 3.0 * i, 3, 0.5, 100.0 + i, j, NAN) < 0)
			break;
	m = sum_rows(s);
	ok(s->nrows <= 8, "never more than 8 rows (%u)", s->nrows);
	ok(s->nrows >= 4, "at least half full after coarsening (%u)", s->nrows);
	ok(s->resolution_s > 10 && s->resolution_s % 10 == 0,
	   "resolution doubled (%u s)", s->resolution_s);
	is_near(m.interval_s, 3.0 * ticks, 1e-6, "the whole span is kept");
	is_near(m.cpu_s, 0.5 * ticks, 1e-6, "CPU time kept");
	is_near(m.joules[CEEMS_DOMAIN_PACKAGE], 2.5 * ticks, 1e-6, "package energy kept");
	is_near(m.joules[CEEMS_DOMAIN_NODE], 1.0 * ticks, 1e-6, "node energy kept");
	is_int(m.known[CEEMS_DOMAIN_DRAM], 0, "dram stays unknown in every row");
	ok(s->rows[0].t <= 5000 && s->rows[s->nrows - 1].t + (int64_t)s->resolution_s >= 8000,
	   "rows span the job's start and end");
	ok(times_increase(s), "times increase");
	for (uint32_t i = 0; i < s->nrows; i++)
		if (s->rows[i].t % (int64_t)s->resolution_s != 0)
			ok(false, "row %u not aligned on the resolution", i);
	is_near(s->rows[s->nrows - 1].mem_bytes > 0 ? 1 : 0, 1, 0, "memory known");
	ceems_agent_series_free(s);
}

/* The agent's use: differences of a ledger add up to the ledger. */
static void
test_ledger_differences(void)
{
	struct ceems_config c;
	struct ceems_job_ledger l;
	struct ceems_ledger_job_share share;
	struct ceems_series *s;
	struct sums m;
	double cpu = 0;
	uint64_t now = 1000000000000ULL;

	ceems_conf_defaults(&c);
	ceems_job_figures_ledger_init(&l);
	ok(ceems_agent_series_for_job(&c, false, now, &l, 0) == NULL,
	   "no series unless asked for or series_all");
	c.series_interval_ns = 5000000000ULL;
	c.interval_ns = 1000000000ULL;
	s = ceems_agent_series_for_job(&c, true, now, &l, 0);
	if (!ok(s != NULL, "a series when asked for"))
		return;
	is_int(s->resolution_s, 5, "resolution from series_interval");
	memset(&share, 0, sizeof(share));
	for (int i = 1; i <= 37; i++) {
		share.measured[CEEMS_DOMAIN_PACKAGE] = true;
		share.covered[CEEMS_DOMAIN_PACKAGE] = true;
		share.joules[CEEMS_DOMAIN_PACKAGE] = 3.0 + i % 7;
		/* dram covered only on even ticks: odd ones are gaps */
		share.measured[CEEMS_DOMAIN_DRAM] = true;
		share.covered[CEEMS_DOMAIN_DRAM] = i % 2 == 0;
		share.joules[CEEMS_DOMAIN_DRAM] = i % 2 == 0 ? 0.25 : 0;
		/* node: energy every tick, covered on two ticks in three
		 * (as a job with two GPUs, one of them in a gap) */
		share.measured[CEEMS_DOMAIN_NODE] = true;
		share.covered[CEEMS_DOMAIN_NODE] = i % 3 != 0;
		share.joules[CEEMS_DOMAIN_NODE] = 0.5;
		ceems_ledger_add_tick(&l, &share, 1.0, NULL);
		cpu += 0.1 * i;
		now += 1000000000ULL;
		ceems_agent_series_observe(s, now, &l, cpu, 4096.0 * i, NAN);
	}
	m = sum_rows(s);
	ok(s->nrows >= 7 && s->nrows <= 9, "37 s in 5 s rows (%u)", s->nrows);
	is_near(m.joules[CEEMS_DOMAIN_PACKAGE], l.joules[CEEMS_DOMAIN_PACKAGE], 1e-9,
		"package rows add up to the ledger");
	is_near(m.joules[CEEMS_DOMAIN_DRAM], l.joules[CEEMS_DOMAIN_DRAM], 1e-9,
		"dram rows add up to the ledger");
	is_near(m.joules[CEEMS_DOMAIN_NODE], l.joules[CEEMS_DOMAIN_NODE], 1e-9,
		"energy of ticks that did not cover the domain whole is in the rows too");
	is_near(m.cpu_s, cpu, 1e-9, "CPU rows add up to the job's CPU time");
	is_near(m.interval_s, 37, 1e-12, "time adds up, exactly");
	is_int(m.known[CEEMS_DOMAIN_GPU], 0, "a domain never measured is unknown in every row");
	is_near(s->rows[s->nrows - 1].mem_bytes, 4096.0 * 37, 1e-6, "memory of the last tick");
	ceems_agent_series_observe(NULL, now, &l, cpu, 0, NAN);	/* no series: no crash */
	c.series_all = true;
	c.series_interval_ns = 1000000000ULL;
	c.interval_ns = 3000000000ULL;
	ceems_agent_series_free(s);
	s = ceems_agent_series_for_job(&c, false, now, &l, cpu);
	ok(s != NULL && s->resolution_s == 3, "series_all; never finer than the tick");
	ceems_agent_series_free(s);
}

static struct ceems_series *
sample_series(int rows)
{
	double j[CEEMS_DOMAIN_COUNT] = { 123.456789012345, 7.25, NAN, 0 };
	struct ceems_series *s = ceems_agent_series_new(30, CEEMS_SERIES_MAX_ROWS);

	for (int i = 0; s != NULL && i < rows; i++)
		ceems_agent_series_add(s, 1700000000 + 30.0 * (i + 1), 30, 29.987654321,
				 i == 0 ? NAN : 1073741824.0 + i, j,
				 i == 0 ? NAN : 12.5 * (i % 9));
	return s;
}

static bool
same_series(const struct ceems_series *a, const struct ceems_series *b)
{
	if (a->resolution_s != b->resolution_s || a->nrows != b->nrows)
		return false;
	for (uint32_t i = 0; i < a->nrows; i++) {
		const struct ceems_series_row *x = &a->rows[i], *y = &b->rows[i];

		if (x->t != y->t || x->interval_s != y->interval_s ||
		    !(x->cpu_s == y->cpu_s || (isnan(x->cpu_s) && isnan(y->cpu_s))) ||
		    !(x->mem_bytes == y->mem_bytes || (isnan(x->mem_bytes) && isnan(y->mem_bytes))))
			return false;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!(x->joules[d] == y->joules[d] ||
			      (isnan(x->joules[d]) && isnan(y->joules[d]))))
				return false;
		if (!(x->gpu_util_pct == y->gpu_util_pct ||
		      (isnan(x->gpu_util_pct) && isnan(y->gpu_util_pct))))
			return false;
	}
	return true;
}

static void
test_json(void)
{
	struct ceems_series *s = sample_series(5), *back = NULL;
	struct json_object *obj;
	const char *text;
	char err[256] = "";

	obj = ceems_agent_series_to_json(s);
	if (!ok(obj != NULL, "series to JSON"))
		return;
	text = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN);
	ok(strstr(text, "\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\","
		      "\"read_bytes\",\"write_bytes\",\"net_in_bytes\",\"net_out_bytes\",\"page_faults\",\"ctx_switches\",\"ipc\"]") != NULL,
	   "columns as documented");
	ok(strstr(text, "[1700000010,30.0,29.987654321,null,123.456789012345,7.25,null,0.0,null,"
		      "null,null,null,null,null,null,null]") != NULL,
	   "first row: unknown memory, GPU energy and utilisation are null, a measured 0 stays 0 (%s)", text);
	ok(strstr(text, "[1700000040,30.0,29.987654321,1073741825,123.456789012345,7.25,null,0.0,12.5,"
		      "null,null,null,null,null,null,null]") != NULL,
	   "second row: its GPU utilisation; no IO or perf counted: null");
	ok(ceems_agent_series_from_json(obj, &back, err, sizeof(err)) == 0, "and back (%s)", err);
	ok(back != NULL && same_series(s, back), "round trip exact");
	ceems_agent_series_free(back);
	json_object_put(obj);
	ceems_agent_series_free(s);
}

static void
test_json_garbage(void)
{
	static const char *const bad[] = {
		"[]", "null", "{}",
		"{\"resolution_s\":30,\"columns\":[],\"rows\":[]}",
		"{\"resolution_s\":0,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"dram_j\",\"package_j\",\"gpu_j\",\"node_j\"],\"rows\":[]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":{}}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[1,2,3]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[null,30,1,1,1,1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[60,30,-1,1,1,1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[60,30,1,1.5,1,1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[60,30,1,1,\"x\",1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[60,30,1,1,1,1,1,1],[60,30,1,1,1,1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[],\"extra\":1}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],\"rows\":[[60,30,1,1,1,1,1,1,100.5]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],\"rows\":[[60,30,1,1,1,1,1,1,-1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],\"rows\":[[60,30,1,1,1,1,1,1]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],\"rows\":[[60,30,1,1,1,1,1,1,50]]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util\"],\"rows\":[]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\",\"x\"],\"rows\":[]}",
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\",\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],\"rows\":[[60,30,1,1,1,1,1,1,\"50\"]]}",
	};
	char err[256];

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct json_object *obj = json_tokener_parse(bad[i]);
		struct ceems_series *s = (struct ceems_series *)&err;	/* must be reset */

		err[0] = '\0';
		ok(ceems_agent_series_from_json(obj, &s, err, sizeof(err)) == -EINVAL &&
		   s == NULL && err[0] != '\0', "refused: %s (%s)", bad[i], err);
		json_object_put(obj);
	}
}

/* The register request carries the wish; the deregister reply the
 * series, coarsened to fit the message. */
static void
test_protocol(void)
{
	static char msg[CEEMS_AGENT_MSG_MAX + 1];
	struct ceems_agent_request req, back;
	static struct ceems_agent_job_report rep, got;
	struct ceems_series *s;
	char err[256] = "";
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_REGISTER;
	req.jobid = req.spec.jobid = 7;
	req.spec.uid = 1000;
	req.spec.cgroup.version = CEEMS_CGROUP_V2;
	snprintf(req.spec.cgroup.unified, sizeof(req.spec.cgroup.unified), "/system.slice/job_7");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "series") == NULL, "no series key unless wanted (old agents)");
	req.spec.series = true;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "\"series\":true") != NULL, "the wish is sent");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0,
	   "register with series decodes (%s)", err);
	ok(back.spec.series, "the wish arrives");
	n = snprintf(msg, sizeof(msg), "{\"op\":\"register\",\"job\":{\"jobid\":7,\"uid\":1,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"series\":1}}");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == -EINVAL,
	   "series must be a boolean (%s)", err);

	memset(&rep, 0, sizeof(rep));
	rep.jobid = 7;
	rep.uid = 1000;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.series = s = sample_series(40);
	n = ceems_agent_proto_reply_ok(&rep, msg, sizeof(msg));
	ok(n > 0, "reply with a series");
	ok(ceems_agent_proto_reply_decode(msg, (size_t)n, &got, err, sizeof(err)) == 0,
	   "reply decodes (%s)", err);
	ok(got.series != NULL && same_series(s, got.series), "series round trip exact");
	ceems_agent_series_free(got.series);
	ceems_agent_series_free(s);

	/* 4096 rows do not fit 64 KiB: coarsened, every joule kept. */
	rep.series = s = sample_series(CEEMS_SERIES_MAX_ROWS);
	n = ceems_agent_proto_reply_ok(&rep, msg, sizeof(msg));
	ok(n > 0 && (size_t)n < sizeof(msg), "a full series still fits the reply (%d bytes)", n);
	ok(ceems_agent_proto_reply_decode(msg, (size_t)n, &got, err, sizeof(err)) == 0,
	   "and decodes (%s)", err);
	if (ok(got.series != NULL && got.series->nrows < s->nrows &&
	       got.series->resolution_s > s->resolution_s,
	       "coarsened: %u rows of %u s", got.series ? got.series->nrows : 0,
	       got.series ? got.series->resolution_s : 0)) {
		struct sums a = sum_rows(s), b = sum_rows(got.series);

		is_near(b.joules[CEEMS_DOMAIN_PACKAGE], a.joules[CEEMS_DOMAIN_PACKAGE],
			1e-6 * a.joules[CEEMS_DOMAIN_PACKAGE], "package energy kept");
		is_near(b.interval_s, a.interval_s, 1e-6, "time kept");
	}
	is_int(s->nrows, CEEMS_SERIES_MAX_ROWS, "the agent's series is untouched");
	ceems_agent_series_free(got.series);
	ceems_agent_series_free(s);
	/* A reply without a series leaves it NULL. */
	rep.series = NULL;
	n = ceems_agent_proto_reply_ok(&rep, msg, sizeof(msg));
	got.series = (struct ceems_series *)msg;
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, &got, err, sizeof(err)), 0, "reply without series");
	ok(got.series == NULL, "no series");
}

static void
test_record(void)
{
	static struct ceems_job_record r, back;
	static char text[CEEMS_RECORD_MAX + 1];
	struct ceems_agent_job_report rep;
	struct ceems_job_meta meta;
	static struct ceems_series not_set;
	struct ceems_series *s, *got = NULL;
	char err[256] = "";
	int n;

	ceems_job_meta_init(&meta);
	meta.jobid = 9;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "c");
	snprintf(meta.node, sizeof(meta.node), "n1");
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.submit_time = 1700000000;
	meta.start_time = 1700000000;
	meta.end_time = 1700001200;
	memset(&rep, 0, sizeof(rep));
	rep.jobid = 9;
	rep.uid = 1000;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.series = s = sample_series(40);
	ceems_record_build(&r, &meta, &rep, "extern", 1700001300);
	n = ceems_record_encode(&r, text, sizeof(text));
	ok(n > 0 && strstr(text, "\"series\":{\"resolution_s\":30,") != NULL, "record has the series");
	ok(ceems_record_decode(text, (size_t)n, &back, err, sizeof(err)) == 0,
	   "record with a series decodes (%s)", err);
	ok(back.report.series == NULL, "the decoded record keeps no series of its own");
	is_int(ceems_record_decode_series(text, (size_t)n, &back, &got, err, sizeof(err)), 0,
	       "the record and its series decode in one go");
	ok(back.report.series == NULL && back.meta.jobid == 9,
	   "the record as ceems_record_decode gives it");
	ok(got != NULL && same_series(s, got), "record round trip exact");
	ceems_agent_series_free(got);
	ceems_agent_series_free(s);

	/* A series too long for the record's 256 KiB: coarsened. */
	rep.series = s = sample_series(CEEMS_SERIES_MAX_ROWS);
	ceems_record_build(&r, &meta, &rep, "extern", 1700001300);
	n = ceems_record_encode(&r, text, sizeof(text));
	ok(n > 0 && n <= CEEMS_RECORD_MAX, "a 4096-row series fits the record (%d bytes)", n);
	ok(ceems_record_decode_series(text, (size_t)n, &back, &got, err, sizeof(err)) == 0,
	   "and decodes with its series (%s)", err);
	ok(got != NULL && got->nrows < s->nrows && got->nrows >= s->nrows / 4,
	   "coarsened no more than needed (%u rows)", got ? got->nrows : 0);
	if (got != NULL)
		is_near(sum_rows(got).joules[CEEMS_DOMAIN_DRAM], sum_rows(s).joules[CEEMS_DOMAIN_DRAM],
			1e-6, "dram energy kept");
	ceems_agent_series_free(got);
	ceems_agent_series_free(s);
	/* A record without one. */
	rep.series = NULL;
	ceems_record_build(&r, &meta, &rep, "extern", 1700001300);
	n = ceems_record_encode(&r, text, sizeof(text));
	ok(n > 0 && strstr(text, "series") == NULL, "no series member without a series");
	got = &not_set;
	is_int(ceems_record_decode_series(text, (size_t)n, &back, &got, err, sizeof(err)), 0, "reads");
	ok(got == NULL, "no series");
	/* A malformed series makes the record invalid. */
	n = ceems_record_encode(&r, text, sizeof(text));
	text[n - 1] = '\0';
	strcat(text, ",\"series\":{\"resolution_s\":30}}");
	ok(ceems_record_decode(text, strlen(text), &back, err, sizeof(err)) == -EINVAL,
	   "a malformed series is refused (%s)", err);
	got = &not_set;
	ok(ceems_record_decode_series(text, strlen(text), &back, &got, err, sizeof(err)) == -EINVAL &&
	   got == NULL, "and no series comes out of it");
}

/* Rows further apart than the coarsest bucket (UINT32_MAX s, only in a
 * forged series) cannot merge: a buffer too small for them is -ENOSPC,
 * not an endless coarsening. */
static void
test_unmergeable_rows(void)
{
	struct ceems_series *s = ceems_agent_series_new(1, 16);
	struct json_object *obj = json_object_new_object();
	double joules[CEEMS_DOMAIN_COUNT] = { 1, NAN, NAN, NAN };
	char buf[64];

	ok(s != NULL && obj != NULL, "unmergeable: set up");
	if (s == NULL || obj == NULL) {
		ceems_agent_series_free(s);
		json_object_put(obj);
		return;
	}
	is_int(ceems_agent_series_add(s, 1.0, 1.0, 1.0, 1.0, joules, NAN), 0,
	       "unmergeable: a row at 1970");
	is_int(ceems_agent_series_add(s, 7e9, 1.0, 1.0, 1.0, joules, NAN), 0,
	       "unmergeable: a row 220 years later");
	alarm(10);
	is_int(ceems_agent_series_serialize_with(obj, "series", s, buf, sizeof(buf)),
	       -ENOSPC, "unmergeable: too small is -ENOSPC, in bounded time");
	alarm(0);
	ceems_agent_series_free(s);
	json_object_put(obj);
}

/* GPU utilisation: a mean by time over each row, ticks with nothing
 * read left out (not counted as 0), unknown when never read. */
static void
test_gpu_util_means(void)
{
	struct ceems_series *s = ceems_agent_series_new(30, 100);

	if (!ok(s != NULL, "gpu util: a series of 30 s buckets"))
		return;
	/* Three ticks in the bucket of 990: 10 s at 20 %, 10 s unread,
	 * 5 s at 80 %. */
	ceems_agent_series_add(s, 1000, 10, NAN, NAN, NULL, 20);
	ceems_agent_series_add(s, 1010, 10, NAN, NAN, NULL, NAN);
	ceems_agent_series_add(s, 1015, 5, NAN, NAN, NULL, 80);
	is_int(s->nrows, 1, "gpu util: one row");
	is_near(s->rows[0].gpu_util_pct, (20.0 * 10 + 80.0 * 5) / (10 + 5), 1e-12,
		"gpu util: the row's mean weighted by time, the unread tick left out");
	is_near(s->rows[0].interval_s, 25, 1e-12, "gpu util: the row still covers every tick");
	/* A row whose ticks read nothing, or nonsense. */
	ceems_agent_series_add(s, 1035, 5, 1, NAN, NULL, NAN);
	ceems_agent_series_add(s, 1040, 5, 1, NAN, NULL, 100.5);
	ceems_agent_series_add(s, 1045, 5, 1, NAN, NULL, -1);
	is_int(s->nrows, 2, "gpu util: a second row");
	ok(isnan(s->rows[1].gpu_util_pct), "gpu util: unknown when nothing (sane) was read, not 0");
	/* Means of 100 % stay 100 %, whatever the rounding. */
	ceems_agent_series_add(s, 1060, 0.1, NAN, NAN, NULL, 100);
	ceems_agent_series_add(s, 1061, 0.2, NAN, NAN, NULL, 100);
	ok(s->rows[s->nrows - 1].gpu_util_pct == 100,
	   "gpu util: 100 %% over 0.1 s and 0.2 s is 100 %% (%.17g)",
	   s->rows[s->nrows - 1].gpu_util_pct);
	ceems_agent_series_add(s, 1062, 0.7, NAN, NAN, NULL, 100);
	is_int(s->nrows, 3, "gpu util: a third row");
	ok(s->rows[2].gpu_util_pct == 100, "gpu util: a mean of 100 %% is 100 %% (%.17g)",
	   s->rows[2].gpu_util_pct);
	ceems_agent_series_free(s);
}

/* Coarsening (and so a series shrunk to fit a message or record)
 * merges GPU utilisation by the time each row read it. */
static void
test_gpu_util_coarsen(void)
{
	struct ceems_series *s = ceems_agent_series_new(10, 100);
	double util[4] = { 30, 90, NAN, 60 }, dt[4] = { 10, 5, 10, 10 };

	if (!ok(s != NULL, "gpu util coarsen: a series of 10 s buckets"))
		return;
	/* One row in each of the buckets 1000, 1010, 1020, 1030. */
	for (int i = 0; i < 4; i++)
		ceems_agent_series_add(s, 1010 + 10.0 * i, dt[i], NAN, NAN, NULL, util[i]);
	is_int(s->nrows, 4, "gpu util coarsen: four rows");
	ceems_agent_series_coarsen(s);
	is_int(s->nrows, 2, "gpu util coarsen: two rows of 20 s");
	is_near(s->rows[0].gpu_util_pct,
		(util[0] * dt[0] + util[1] * dt[1]) / (dt[0] + dt[1]), 1e-12,
		"gpu util coarsen: merged rows averaged by their time");
	is_near(s->rows[1].gpu_util_pct, util[3], 1e-12,
		"gpu util coarsen: a row that read nothing does not dilute the mean");
	is_near(s->rows[1].interval_s, dt[2] + dt[3], 1e-12,
		"gpu util coarsen: but its time is kept");
	ceems_agent_series_coarsen(s);
	is_near(s->rows[0].gpu_util_pct,
		(util[0] * dt[0] + util[1] * dt[1] + util[3] * dt[3]) /
		(dt[0] + dt[1] + dt[3]), 1e-12,
		"gpu util coarsen: again, the mean of all the time read");
	ceems_agent_series_free(s);
}

/* The agent's use: the utilisation of each tick, over its interval. */
static void
test_gpu_util_observe(void)
{
	struct ceems_config c;
	struct ceems_job_ledger l;
	struct ceems_series *s, *none;
	uint64_t now = 2000000000000ULL;
	double sum_pct_s = 0, sum_s = 0, want_sum = 0;
	unsigned want_n = 0;
	uint32_t unknown = 0;

	ceems_conf_defaults(&c);
	ceems_job_figures_ledger_init(&l);
	c.series_interval_ns = 5000000000ULL;
	c.interval_ns = 1000000000ULL;
	s = ceems_agent_series_for_job(&c, true, now, &l, 0);
	none = ceems_agent_series_for_job(&c, true, now, &l, 0);
	if (!ok(s != NULL && none != NULL, "gpu util observe: two series"))
		goto out;
	for (int i = 1; i <= 23; i++) {
		double u = i % 2 == 1 ? 4.0 * i : NAN;	/* even ticks read nothing */

		now += 1000000000ULL;
		ceems_agent_series_observe(s, now, &l, NAN, NAN, u);
		ceems_agent_series_observe(none, now, &l, NAN, NAN, NAN);
		if (!isnan(u)) {
			want_sum += u;
			want_n++;
		}
	}
	for (uint32_t i = 0; i < s->nrows; i++)
		if (!isnan(s->rows[i].gpu_util_pct)) {
			sum_pct_s += s->rows[i].gpu_util_pct * s->rows[i].gpu_util_s;
			sum_s += s->rows[i].gpu_util_s;
		}
	is_near(sum_s, want_n, 1e-9, "gpu util observe: each tick read counts its interval");
	is_near(sum_pct_s / sum_s, want_sum / want_n, 1e-9,
		"gpu util observe: the rows' means are those of the ticks");
	for (uint32_t i = 0; i < none->nrows; i++)
		if (isnan(none->rows[i].gpu_util_pct))
			unknown++;
	ok(none->nrows > 0 && unknown == none->nrows,
	   "gpu util observe: a job without GPUs has no utilisation in any row (%u of %u)",
	   unknown, none->nrows);
out:
	ceems_agent_series_free(s);
	ceems_agent_series_free(none);
}

/* Records written before gpu_util_pct (8 columns) still read: the
 * utilisation unknown; written again, in today's form. */
static void
test_json_older_form(void)
{
	static const char old[] =
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\","
		"\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\"],"
		"\"rows\":[[60,30,1.5,4096,2.5,null,7,9],[90,20,null,null,1,1,1,1]]}";
	static const char weighed[] =
		"{\"resolution_s\":30,\"columns\":[\"t\",\"interval_s\",\"cpu_s\","
		"\"mem_bytes\",\"package_j\",\"dram_j\",\"gpu_j\",\"node_j\",\"gpu_util_pct\"],"
		"\"rows\":[[0,30,null,null,null,null,null,null,20],"
		"[30,10,null,null,null,null,null,null,80]]}";
	struct json_object *obj = json_tokener_parse(old), *again = NULL;
	struct ceems_series *s = NULL;
	char err[256] = "";

	ok(ceems_agent_series_from_json(obj, &s, err, sizeof(err)) == 0,
	   "the 8-column form reads (%s)", err);
	json_object_put(obj);
	if (s == NULL)
		return;
	is_int(s->nrows, 2, "8 columns: both rows");
	ok(s->rows[0].t == 60 && s->rows[0].cpu_s == 1.5 &&
	   s->rows[0].mem_bytes == 4096 &&
	   s->rows[0].joules[CEEMS_DOMAIN_GPU] == 7 &&
	   s->rows[1].joules[CEEMS_DOMAIN_NODE] == 1,
	   "8 columns: the figures are where they were");
	ok(isnan(s->rows[0].gpu_util_pct) && isnan(s->rows[1].gpu_util_pct),
	   "8 columns: GPU utilisation unknown");
	again = ceems_agent_series_to_json(s);
	ok(again != NULL && strstr(json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN),
				   "[60,30.0,1.5,4096,2.5,null,7.0,9.0,null,null,null,null,"
				   "null,null,null,null]") != NULL,
	   "8 columns: written again with gpu_util_pct and the counts null");
	json_object_put(again);
	ceems_agent_series_free(s);

	/* A decoded row's utilisation weighs by the row's time. */
	obj = json_tokener_parse(weighed);
	s = NULL;
	ok(ceems_agent_series_from_json(obj, &s, err, sizeof(err)) == 0, "9 columns read (%s)", err);
	json_object_put(obj);
	if (s == NULL)
		return;
	ceems_agent_series_coarsen(s);
	is_int(s->nrows, 1, "decoded rows merge");
	is_near(s->rows[0].gpu_util_pct, (20.0 * 30 + 80.0 * 10) / (30 + 10), 1e-12,
		"decoded rows' utilisation averaged by their time");
	ceems_agent_series_free(s);
}

/* IO, network and perf counts: the rows hold the differences of the
 * job's cumulative counts, which add up to them; IPC is the rows'
 * instructions over their cycles, merged by cycles; what was never
 * measured stays null, never 0; a series made after a restart counts
 * from the counts restored. */
static void
test_counts(void)
{
	struct ceems_config c;
	struct ceems_job_ledger l;
	struct ceems_series_counts now;
	struct ceems_series *s, *back = NULL;
	struct json_object *obj;
	double sum[CEEMS_SC_NROW] = { 0 }, ins = 0, cyc = 0;
	uint64_t t = 2000000000000ULL;
	char err[256] = "";
	uint32_t i;

	ceems_conf_defaults(&c);
	ceems_job_figures_ledger_init(&l);
	c.series_interval_ns = 4000000000ULL;
	c.interval_ns = 1000000000ULL;
	s = ceems_agent_series_for_job(&c, true, t, &l, 0);
	if (!ok(s != NULL, "a series"))
		return;
	ceems_agent_series_counts_unknown(&now);
	for (int k = 1; k <= 20; k++) {
		/* Cumulative, as the agent reads them: IO from eBPF, faults
		 * and cycles from perf; no network (not measured). */
		now.v[CEEMS_SC_READ_BYTES] = 1e6 * k * k;
		now.v[CEEMS_SC_WRITE_BYTES] = 4096.0 * k;
		now.v[CEEMS_SC_PAGE_FAULTS] = 100.0 * k + (k % 3);
		now.v[CEEMS_SC_CTX_SWITCHES] = 7.0 * k;
		now.v[CEEMS_SC_CYCLES] = 1e9 * k;
		now.v[CEEMS_SC_INSTRUCTIONS] = 1.5e9 * k + (k % 2) * 0.5e9;
		t += 1000000000ULL;
		ceems_agent_series_observe_counts(s, t, &l, NAN, NAN, NAN, &now);
	}
	for (i = 0; i < s->nrows; i++) {
		for (int k = 0; k < CEEMS_SC_NROW; k++)
			if (!isnan(s->rows[i].count[k]))
				sum[k] += s->rows[i].count[k];
		if (!isnan(s->rows[i].ipc)) {
			ins += s->rows[i].ipc * s->rows[i].ipc_w;
			cyc += s->rows[i].ipc_w;
		}
	}
	ok(s->nrows >= 5, "20 s in 4 s rows (%u)", s->nrows);
	is_near(sum[CEEMS_SC_READ_BYTES], now.v[CEEMS_SC_READ_BYTES], 1e-3,
		"read bytes: the rows add up to the job's");
	is_near(sum[CEEMS_SC_PAGE_FAULTS], now.v[CEEMS_SC_PAGE_FAULTS], 1e-9,
		"page faults too");
	is_near(ins, now.v[CEEMS_SC_INSTRUCTIONS], 1e-3 * now.v[CEEMS_SC_INSTRUCTIONS],
		"ipc x cycles adds up to the instructions");
	is_near(cyc, now.v[CEEMS_SC_CYCLES], 1e-6, "its weights to the cycles");
	ok(isnan(s->rows[0].count[CEEMS_SC_NET_IN_BYTES]) &&
	   isnan(s->rows[s->nrows - 1].count[CEEMS_SC_NET_OUT_BYTES]),
	   "network never measured: unknown in every row, not 0");

	obj = ceems_agent_series_to_json(s);
	ok(obj != NULL && ceems_agent_series_from_json(obj, &back, err, sizeof(err)) == 0,
	   "the 16 columns go through JSON (%s)", err);
	json_object_put(obj);
	if (back != NULL) {
		ok(back->nrows == s->nrows &&
		   back->rows[1].count[CEEMS_SC_WRITE_BYTES] == s->rows[1].count[CEEMS_SC_WRITE_BYTES] &&
		   back->rows[1].ipc == s->rows[1].ipc &&
		   isnan(back->rows[1].count[CEEMS_SC_NET_IN_BYTES]),
		   "counts, ipc and unknowns come back");
		ceems_agent_series_free(back);
	}

	/* Read at the job's end, after its last row: that row takes them. */
	now.v[CEEMS_SC_PAGE_FAULTS] += 77;
	ceems_agent_series_last_counts(s, &now);
	{
		double total = 0;

		for (i = 0; i < s->nrows; i++)
			total += s->rows[i].count[CEEMS_SC_PAGE_FAULTS];
		is_near(total, now.v[CEEMS_SC_PAGE_FAULTS], 1e-9,
			"counts read at the end go into the last row: the rows add up");
	}

	/* After a restart: the counts restored are the baseline. */
	ceems_agent_series_free(s);
	s = ceems_agent_series_for_job(&c, true, t, &l, 0);
	ceems_agent_series_set_counts(s, &now);
	now.v[CEEMS_SC_PAGE_FAULTS] += 5;
	t += 1000000000ULL;
	ceems_agent_series_observe_counts(s, t, &l, NAN, NAN, NAN, &now);
	is_near(s->rows[0].count[CEEMS_SC_PAGE_FAULTS], 5, 0,
		"restored: the first row holds what came after, not the whole");
	ceems_agent_series_free(s);
}

/* Column NAME of row I of S's JSON form, NaN when null or absent. */
static double
json_cell(struct json_object *obj, size_t i, const char *name)
{
	struct json_object *cols = json_object_object_get(obj, "columns");
	struct json_object *row = json_object_array_get_idx(
		json_object_object_get(obj, "rows"), i);

	for (size_t c = 0; c < json_object_array_length(cols); c++)
		if (strcmp(json_object_get_string(json_object_array_get_idx(cols, c)),
			   name) == 0) {
			struct json_object *v = json_object_array_get_idx(row, c);

			return v == NULL ? NAN : json_object_get_double(v);
		}
	return NAN;
}

/* Every value cell of row R set to V (its weights to its interval). */
static void
fill_row(struct ceems_series_row *r, int64_t t, double interval_s, double v)
{
	memset(r, 0, sizeof(*r));
	r->t = t;
	r->interval_s = interval_s;
	r->cpu_s = r->mem_bytes = r->gpu_util_pct = r->ipc = v;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		r->joules[d] = v;
	for (int c = 0; c < CEEMS_SC_NROW; c++)
		r->count[c] = v;
	r->gpu_util_s = r->ipc_w = interval_s;
}

/* Two rows of one bucket, 2 over 10 s and B over 30 s, coarsened by the
 * agent: each column as ceems_series_merges says, read back by name. */
static void
test_merge_rules_agent(void)
{
	struct ceems_series *s = ceems_agent_series_new(5, 16);
	struct json_object *obj;
	const double b_values[2] = { 6, NAN };

	for (int k = 0; k < 2; k++) {
		double b = b_values[k];

		s->rows = calloc(2, sizeof(s->rows[0]));
		s->cap = s->nrows = 2;
		s->resolution_s = 5;
		fill_row(&s->rows[0], 0, 10, 2);
		fill_row(&s->rows[1], 5, 30, b);
		ceems_agent_series_coarsen(s);
		obj = ceems_agent_series_to_json(s);
		is_int(s->nrows, 1, "merge rules: the agent merges the two rows");
		for (int c = 0; c < CEEMS_SERIES_NCOLUMNS; c++) {
			const char *name = ceems_series_columns[c];
			double want = 2, got = json_cell(obj, 0, name);
			char label[160];

			switch (ceems_series_merges[c]) {
			case CEEMS_SERIES_MERGE_BUCKET:
				want = 0;
				break;
			case CEEMS_SERIES_MERGE_SUM:
				want = isnan(b) && strcmp(name, "interval_s") != 0 ? 2 :
				       strcmp(name, "interval_s") == 0 ? 40 : 2 + b;
				break;
			case CEEMS_SERIES_MERGE_MAX:
				want = isnan(b) ? 2 : fmax(2, b);
				break;
			case CEEMS_SERIES_MERGE_MEAN:
				want = isnan(b) ? 2 : (2 * 10 + b * 30) / 40;
				break;
			}
			snprintf(label, sizeof(label), "merge rules: agent, %s, %s",
				 name, isnan(b) ? "one unknown" : "both known");
			is_near(got, want, 1e-9, label);
		}
		json_object_put(obj);
		free(s->rows);
		s->rows = NULL;
		s->nrows = s->cap = 0;
	}
	ceems_agent_series_free(s);
}

/* Whether TEXT, its white space made single spaces, holds PATTERN with
 * each "@" in it made NAME. */
static bool
sql_has(const char *text, const char *pattern, const char *name)
{
	char want[256];
	size_t n = 0, len = strlen(name);

	for (const char *p = pattern; *p != '\0' && n + len + 1 < sizeof(want); p++) {
		if (*p == '@') {
			memcpy(want + n, name, len);
			n += len;
		} else {
			want[n++] = *p;
		}
	}
	want[n] = '\0';
	return strstr(text, want) != NULL;
}

/* The database's side of the same rules: ceems.add_job_samples takes
 * every column, ceems.downsample_job_samples merges each as the table
 * says, in its buckets and when a late sample meets a merged bucket. */
static void
test_merge_rules_sql(void)
{
	static char raw[65536], text[65536];
	size_t n = 0;
	bool space = false;

	fixture_text("../../sql/functions/samples.sql", raw, sizeof(raw));
	for (const char *p = raw; *p != '\0' && n + 1 < sizeof(text); p++) {
		bool ws = *p == ' ' || *p == '\t' || *p == '\n';

		if (ws && !space)
			text[n++] = ' ';
		if (!ws)
			text[n++] = *p;
		space = ws;
	}
	text[n] = '\0';
	for (int c = 1; c < CEEMS_SERIES_NCOLUMNS; c++) {
		const char *name = ceems_series_columns[c];
		bool bucket = false, late = false;
		char label[160];

		switch (ceems_series_merges[c]) {
		case CEEMS_SERIES_MERGE_BUCKET:
			break;
		case CEEMS_SERIES_MERGE_SUM:
			bucket = sql_has(text, "sum(@) AS @", name);
			late = sql_has(text, "@ = ceems.add_known(ceems.job_samples.@, EXCLUDED.@)", name);
			break;
		case CEEMS_SERIES_MERGE_MAX:
			bucket = sql_has(text, "max(@) AS @", name);
			late = sql_has(text, "@ = greatest(ceems.job_samples.@, EXCLUDED.@)", name);
			break;
		case CEEMS_SERIES_MERGE_MEAN:
			bucket = sql_has(text, "sum(@ * interval_s)", name);
			late = sql_has(text, "@ = ceems.mean_by_time(ceems.job_samples.@,", name);
			break;
		}
		snprintf(label, sizeof(label), "merge rules: SQL stores %s", name);
		ok(sql_has(text, "'@', 'samples[]')", name), "%s", label);
		snprintf(label, sizeof(label), "merge rules: SQL downsamples %s by the rule", name);
		ok(bucket, "%s", label);
		snprintf(label, sizeof(label), "merge rules: SQL merges a late %s by the rule", name);
		ok(late, "%s", label);
	}
}

int
main(void)
{
	test_buckets();
	test_full();
	test_ledger_differences();
	test_json();
	test_json_garbage();
	test_protocol();
	test_record();
	test_unmergeable_rows();
	test_gpu_util_means();
	test_gpu_util_coarsen();
	test_gpu_util_observe();
	test_json_older_form();
	test_counts();
	test_merge_rules_agent();
	test_merge_rules_sql();
	return done_testing();
}
