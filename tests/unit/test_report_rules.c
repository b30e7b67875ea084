/* test_report_rules.c - the rules of ceems-admin report (doc/reports.md):
 * each rule fires on the job it was written for, with its figures, and
 * stays silent on every job of its "must not fire" list; suggestions
 * need several jobs; traffic lights; the wording; nodes that stand out
 * among their group, and identical nodes that do not. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "report/report_collect.h"
#include "report/report_digest.h"
#include "report/report_nodes.h"
#include "report/report_rules.h"
#include "../tap.h"

#define GIB (1024.0 * 1024.0 * 1024.0)

/* A job that tempts every rule: an hour on 16 cores using 2, 64 GiB
 * peaking at 4, a limit of 8 hours; measured, from a known user. */
static struct report_job
tempting(void)
{
	struct report_job j;

	memset(&j, 0, sizeof(j));
	j.jobid = 1;
	snprintf(j.user, sizeof(j.user), "alice");
	snprintf(j.account, sizeof(j.account), "physics");
	snprintf(j.state, sizeof(j.state), "COMPLETED");
	j.elapsed_s = 3600;
	j.time_limit_min = 480;
	j.alloc_cpus = 16;
	j.cpu_time_s = 2 * 3600;
	j.req_mem_bytes = 64 * GIB;
	j.mem_peak_bytes = 4 * GIB;
	j.alloc_gpus = 0;
	j.gpu_util_pct = NAN;
	j.package_static_j = 16000;
	j.dram_static_j = 6400;
	j.gpu_j = NAN;
	j.total_j = 50000;
	j.emissions_g = 5;
	j.coverage = 1;
	j.gap_s = 0;
	j.wait_s = 600;
	j.nnodes = 1;
	j.nodes_reported = 1;
	j.since_first_s = 30 * 86400.0;
	return j;
}

static struct report_verdict
judge(const struct report_job *j)
{
	struct report_verdict v;

	report_rules_judge(j, &v);
	return v;
}

static bool
none_fired(const struct report_verdict *v)
{
	for (int a = 0; a < REPORT_AREAS; a++)
		if (v->area[a].fired)
			return false;
	return true;
}

static void
test_fires(void)
{
	struct report_job j = tempting();
	struct report_verdict v = judge(&j);

	is_int(v.skip, REPORT_JUDGED, "tempting job: judged");
	ok(v.area[REPORT_CPU].fired, "cpu: fires at 2 of 16 cores");
	is_near(v.area[REPORT_CPU].suggested, 3, 0, "cpu: suggests ceil(2 x 1.1) = 3");
	is_near(v.area[REPORT_CPU].held_hours, 13, 1e-9, "cpu: 13 core-hours given back");
	is_near(v.area[REPORT_CPU].saved_j, 16000.0 * 13 / 16, 1e-6, "cpu: static package energy x 13/16");
	is_near(v.area[REPORT_CPU].saved_g, 13000.0 * 5 / 50000, 1e-9, "cpu: grams at the job's own factor");
	ok(v.area[REPORT_MEM].fired, "mem: fires at 4 of 64 GiB");
	is_near(v.area[REPORT_MEM].suggested, 5 * GIB, 0, "mem: suggests ceil(4 x 1.25) = 5 GiB");
	is_near(v.area[REPORT_MEM].saved_j, 6400.0 * 59 / 64, 1e-6, "mem: static DRAM energy x 59/64");
	ok(v.area[REPORT_TIME].fired, "time: fires at 1 h of 8 h");
	is_near(v.area[REPORT_TIME].suggested, 90, 0, "time: 1 h x 1.5 in 15-minute steps");
	ok(isnan(v.area[REPORT_TIME].saved_j), "time: no energy claimed");
	ok(!v.area[REPORT_GPU].fired, "gpu: no GPU, no finding");
}

static void
test_skips(void)
{
	struct report_job j = tempting();
	struct report_verdict v;

	j.elapsed_s = 59;
	j.cpu_time_s = 10;
	v = judge(&j);
	is_int(v.skip, REPORT_SKIP_SHORT, "must not fire: a run under a minute");
	ok(none_fired(&v), "must not fire: nothing on a short run");

	j = tempting();
	j.coverage = 0.8;
	v = judge(&j);
	is_int(v.skip, REPORT_SKIP_QUALITY, "must not fire: energy covering 80% of the job");
	ok(none_fired(&v), "must not fire: nothing on poor coverage");
	j = tempting();
	j.gap_s = 400;
	is_int(judge(&j).skip, REPORT_SKIP_QUALITY, "must not fire: 400 s of gaps in an hour");
	j = tempting();
	j.nnodes = 2;
	j.nodes_reported = 1;
	is_int(judge(&j).skip, REPORT_SKIP_QUALITY, "must not fire: a node's record missing");

	j = tempting();
	j.since_first_s = 3 * 86400.0;
	v = judge(&j);
	is_int(v.skip, REPORT_SKIP_NEW_USER, "must not fire: a user's first two weeks");
	ok(none_fired(&v), "must not fire: nothing on a new user's job");

	j = tempting();
	snprintf(j.state, sizeof(j.state), "RUNNING");
	is_int(judge(&j).skip, REPORT_SKIP_RUNNING, "must not fire: a job still running");
}

static void
test_cpu_silent(void)
{
	struct report_job j = tempting();

	j.mem_peak_bytes = 40 * GIB;
	ok(!judge(&j).area[REPORT_CPU].fired,
	   "cpu must not fire: cores held for their memory (peak 40 of 64 GiB)");
	j = tempting();
	j.nnodes = 2;
	j.nodes_reported = 2;
	ok(!judge(&j).area[REPORT_CPU].fired,
	   "cpu must not fire: a 2-node average can hide a busy node");
	j = tempting();
	j.alloc_cpus = 1;
	j.cpu_time_s = 60;
	ok(!judge(&j).area[REPORT_CPU].fired, "cpu must not fire: one core");
	j = tempting();
	j.cpu_time_s = 9 * 3600;
	ok(!judge(&j).area[REPORT_CPU].fired, "cpu must not fire: 9 of 16 cores busy");
	j = tempting();
	j.alloc_cpus = 2;
	j.cpu_time_s = 1.1 * 3600;
	ok(!judge(&j).area[REPORT_CPU].fired, "cpu must not fire: the suggestion is what it held");
	j = tempting();
	j.cpu_time_s = NAN;
	ok(!judge(&j).area[REPORT_CPU].fired, "cpu must not fire: CPU not measured");
	j = tempting();
	j.package_static_j = NAN;
	ok(judge(&j).area[REPORT_CPU].fired && isnan(judge(&j).area[REPORT_CPU].saved_j),
	   "cpu without package energy: fires, claims no energy");
}

static void
test_mem_gpu_time_silent(void)
{
	struct report_job j = tempting();

	snprintf(j.state, sizeof(j.state), "OUT_OF_MEMORY");
	ok(!judge(&j).area[REPORT_MEM].fired, "mem must not fire: OUT_OF_MEMORY");
	j = tempting();
	j.req_mem_bytes = 1.5 * GIB;
	j.mem_peak_bytes = 0.1 * GIB;
	ok(!judge(&j).area[REPORT_MEM].fired, "mem must not fire: a request under 2 GiB");
	j = tempting();
	j.mem_peak_bytes = NAN;
	ok(!judge(&j).area[REPORT_MEM].fired, "mem must not fire: peak not measured");
	j = tempting();
	j.req_mem_bytes = 8 * GIB;
	j.mem_peak_bytes = 2.5 * GIB;
	ok(!judge(&j).area[REPORT_MEM].fired, "mem must not fire: a peak at 31 percent of the request");

	j = tempting();
	j.alloc_gpus = 1;
	j.gpu_util_pct = 3;
	j.gpu_j = 900000;
	ok(judge(&j).area[REPORT_GPU].fired && judge(&j).area[REPORT_GPU].suggested == 0,
	   "gpu: an hour on a GPU busy 3%%: fires, suggests none");
	j.elapsed_s = 200;
	j.cpu_time_s = 100;
	ok(!judge(&j).area[REPORT_GPU].fired, "gpu must not fire: under 300 s");
	j = tempting();
	j.alloc_gpus = 1;
	j.gpu_util_pct = 10;
	ok(!judge(&j).area[REPORT_GPU].fired, "gpu must not fire: one GPU busy 10%%");
	j.gpu_util_pct = NAN;
	ok(!judge(&j).area[REPORT_GPU].fired, "gpu must not fire: utilisation not measured");
	j = tempting();
	j.alloc_gpus = 4;
	j.gpu_util_pct = 20;
	j.gpu_j = 4000000;
	ok(judge(&j).area[REPORT_GPU].fired && judge(&j).area[REPORT_GPU].suggested == 1,
	   "gpu: 4 GPUs busy 20%%: fires, suggests 1");
	is_near(judge(&j).area[REPORT_GPU].saved_j, 3000000, 1e-6, "gpu: 3 of 4 GPUs' energy");

	j = tempting();
	snprintf(j.state, sizeof(j.state), "TIMEOUT");
	ok(!judge(&j).area[REPORT_TIME].fired, "time must not fire: TIMEOUT");
	snprintf(j.state, sizeof(j.state), "FAILED");
	ok(!judge(&j).area[REPORT_TIME].fired, "time must not fire: FAILED");
	j = tempting();
	j.time_limit_min = 30;
	j.elapsed_s = 300;
	j.cpu_time_s = 600;
	ok(!judge(&j).area[REPORT_TIME].fired, "time must not fire: a limit under an hour");
}

static void
test_backing(void)
{
	struct report_sums s;
	struct report_job j = tempting();
	double ratio;

	report_rules_sums_init(&s, "alice");
	report_rules_add(&s, &j);
	report_rules_add(&s, &j);
	report_rules_finish(&s);
	is_int(s.n_suggestions, 0, "two jobs back no suggestion");
	is_int(report_rules_light(&s, REPORT_CPU, &ratio), REPORT_LIGHT_NONE,
	       "two jobs: no light");

	report_rules_sums_init(&s, "alice");
	for (int i = 0; i < 3; i++)
		report_rules_add(&s, &j);
	j.since_first_s = 86400;	/* judged out: counts in the totals only */
	report_rules_add(&s, &j);
	report_rules_finish(&s);
	is_int(s.jobs, 4, "four jobs counted");
	is_int(s.judged, 3, "three judged");
	is_near(s.cpu_hours_alloc, 64, 1e-9, "core-hours held over all four");
	is_near(s.energy_j, 200000, 1e-6, "energy over all four");
	is_int(s.n_suggestions, 3, "three jobs back each suggestion (cpu, mem, time)");
	is_int(s.suggestions[0].area, REPORT_CPU, "the most energy first: cpu");
	is_int(s.suggestions[0].jobs, 3, "cpu: three jobs");
	is_near(s.suggestions[0].saved_j, 3 * 13000.0, 1e-6, "cpu: savings summed");
	is_near(s.suggestions[0].held_hours, 39, 1e-9, "cpu: 39 core-hours");
	is_near(s.suggestions[0].wait_s, 600, 1e-9, "cpu: mean wait");
	is_int(s.suggestions[2].area, REPORT_TIME, "no energy: last");
	is_int(report_rules_light(&s, REPORT_CPU, &ratio), REPORT_LIGHT_RED, "cpu 12.5%: red");
	is_near(ratio, 0.125, 1e-12, "cpu light ratio");
	is_int(report_rules_light(&s, REPORT_MEM, &ratio), REPORT_LIGHT_RED, "memory 6%: red");
	is_int(report_rules_light(&s, REPORT_TIME, &ratio), REPORT_LIGHT_RED, "time 12.5%: red");
	is_int(report_rules_light(&s, REPORT_GPU, &ratio), REPORT_LIGHT_NONE, "no GPU jobs: no light");
}

static void
test_lights(void)
{
	struct report_sums s;
	struct report_job j = tempting();
	double ratio;

	j.cpu_time_s = 12 * 3600;	/* 75% */
	j.mem_peak_bytes = 40 * GIB;
	j.time_limit_min = 120;		/* 50% */
	report_rules_sums_init(&s, "bob");
	for (int i = 0; i < 3; i++)
		report_rules_add(&s, &j);
	report_rules_finish(&s);
	is_int(report_rules_light(&s, REPORT_CPU, &ratio), REPORT_LIGHT_GREEN, "cpu 75%: green");
	is_int(report_rules_light(&s, REPORT_TIME, &ratio), REPORT_LIGHT_GREEN, "time 50%: green");
	is_int(report_rules_light(&s, REPORT_MEM, &ratio), REPORT_LIGHT_GREEN, "memory 62%: green");
	is_int(s.n_suggestions, 0, "a user who asks what they use: nothing to suggest");
	j.cpu_time_s = 8 * 3600;	/* 50% */
	report_rules_sums_init(&s, "bob");
	for (int i = 0; i < 3; i++)
		report_rules_add(&s, &j);
	is_int(report_rules_light(&s, REPORT_CPU, &ratio), REPORT_LIGHT_AMBER, "cpu 50%: amber");
}

static void
test_wording(void)
{
	struct report_sums s;
	struct report_job j = tempting();
	struct report_doc d;
	char line[1024];

	report_rules_sums_init(&s, "alice");
	for (int i = 0; i < 3; i++)
		report_rules_add(&s, &j);
	report_rules_finish(&s);
	report_digest_suggestion(line, sizeof(line), &s.suggestions[0]);
	ok(strstr(line, "--cpus-per-task=3") != NULL, "cpu suggestion names the option: %s", line);
	ok(strstr(line, "39.0 core-hours") != NULL, "cpu suggestion: core-hours");
	report_digest_suggestion(line, sizeof(line), &s.suggestions[1]);
	ok(strstr(line, "--mem=5G") != NULL, "memory suggestion names --mem=5G");
	report_digest_suggestion(line, sizeof(line), &s.suggestions[2]);
	ok(strstr(line, "--time=01:30:00") != NULL, "time suggestion names --time=01:30:00");
	report_digest_user(&d, &s, "2026-11-02T00:00:00Z", "2026-11-09T00:00:00Z");
	ok(!d.text.failed && !d.html.failed, "digest written");
	ok(strstr(d.text.data, "get more done") != NULL, "text: an offer of help");
	ok(strstr(d.text.data, "waste") == NULL && strstr(d.html.data, "waste") == NULL,
	   "no word of waste");
	ok(strstr(d.html.data, "<th scope=\"col\">Light</th>") != NULL, "html: header cells");
	ok(strstr(d.html.data, "<caption>") != NULL, "html: tables have captions");
	ok(strstr(d.html.data, "<tr class=\"red\"><th scope=\"row\">CPU</th><td>red</td>") != NULL,
	   "html: the light is a word, its colour only a help");
	ok(strstr(d.text.data, "  CPU        red") != NULL, "text: the light row");
	report_doc_free(&d);
}

/* The alert at a job's end: an hour or more on GPUs busy under 10%. */
static void
test_alert(void)
{
	struct report_job j = tempting();
	struct report_sums s;
	struct report_doc d;

	j.alloc_gpus = 2;
	j.gpu_util_pct = 4;
	j.gpu_j = 2000000;
	ok(report_rules_alert(&j), "alert: 2 GPUs busy 4%% for an hour");
	j.elapsed_s = 3500;
	ok(!report_rules_alert(&j), "alert must not fire: under an hour");
	j.elapsed_s = 7200;
	j.gpu_util_pct = 10;
	ok(!report_rules_alert(&j), "alert must not fire: busy 10%% of the time");
	j.gpu_util_pct = NAN;
	ok(!report_rules_alert(&j), "alert must not fire: utilisation not measured");
	j.gpu_util_pct = 4;
	j.coverage = 0.5;
	ok(!report_rules_alert(&j), "alert must not fire: incomplete data");
	j.coverage = 1;
	j.since_first_s = 86400;
	ok(!report_rules_alert(&j), "alert must not fire: a new user's first weeks");
	j.since_first_s = 30 * 86400.0;
	j.alloc_gpus = 0;
	ok(!report_rules_alert(&j), "alert must not fire: no GPU");

	j.alloc_gpus = 2;
	report_rules_sums_init(&s, "gina");
	j.jobid = 7;
	report_rules_add(&s, &j);
	j.jobid = 8;
	report_rules_add(&s, &j);
	is_int(s.alerts, 2, "two alerting jobs");
	is_near(s.alert_gpu_hours, 8, 1e-9, "2 GPUs x 2 h x 2 jobs");
	is_near(s.alert_j, 4000000, 1e-6, "the GPUs' energy");
	report_digest_alert(&d, &s, "2026-10-01T10:00:00Z", "2026-10-01T11:00:00Z");
	ok(strstr(d.text.data, "jobs 7, 8.") != NULL, "the jobs named");
	ok(strstr(d.text.data, "8.0 GPU-hours") != NULL, "what they held");
	ok(strstr(d.text.data, "1.11 kWh") != NULL, "what the GPUs drew");
	report_doc_free(&d);
}

/* Jobs of many users in any order: one sum each, ranked by what they
 * could save, then by name. */
static void
test_collect(void)
{
	struct report_collect c = { 0 };
	struct report_job j = tempting();
	int ok_all = 1;

	for (int i = 0; i < 3000; i++) {
		snprintf(j.user, sizeof(j.user), "u%04d", i % 700);
		/* u0000 holds 32 cores: the most to give back */
		j.alloc_cpus = i % 700 == 0 ? 32 : 16;
		ok_all &= report_collect_job(&j, &c) == 0;
	}
	report_collect_finish(&c);
	ok(ok_all && !c.failed, "3000 jobs of 700 users collected");
	is_int(c.n, 700, "one sum per user");
	is_str(c.users[0].user, "u0000", "the most to give back first");
	is_str(c.users[1].user, "u0001", "then by name among equals");
	is_int(c.users[0].jobs, 5, "u0000: jobs 0, 700, ... 2800");
	is_int(c.users[699].jobs, 4, "u0699: four jobs");
	report_collect_free(&c);
}

static struct report_node
node(const char *name, long jobs, double static_w)
{
	struct report_node n;

	memset(&n, 0, sizeof(n));
	snprintf(n.name, sizeof(n.name), "%s", name);
	report_nodes_group(n.group, sizeof(n.group), name);
	n.jobs = jobs;
	n.value[REPORT_NODE_STATIC] = static_w;
	n.value[REPORT_NODE_DYNAMIC] = 1.0;
	n.value[REPORT_NODE_RESIDUAL] = NAN;
	n.gap_share = 0;
	return n;
}

static void
test_nodes(void)
{
	struct report_node v[5];
	char g[64];

	report_nodes_group(g, sizeof(g), "n017");
	is_str(g, "n", "group of n017");
	report_nodes_group(g, sizeof(g), "gpu3");
	is_str(g, "gpu", "group of gpu3");

	for (int i = 0; i < 4; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i + 1);
		v[i] = node(name, 20, 2.5);
	}
	report_nodes_judge(v, 4);
	ok(!v[0].stands_out[0] && !v[1].stands_out[0] && !v[2].stands_out[0] &&
	   !v[3].stands_out[0], "must not fire: four identical nodes");
	v[2].value[REPORT_NODE_STATIC] = 3.25;
	report_nodes_judge(v, 4);
	ok(v[2].stands_out[REPORT_NODE_STATIC], "n3's static power 30%% higher stands out");
	ok(!v[0].stands_out[0] && !v[1].stands_out[0] && !v[3].stands_out[0],
	   "the others do not");
	is_near(v[2].median[REPORT_NODE_STATIC], 2.5, 1e-12, "against the group's median");
	v[2].value[REPORT_NODE_STATIC] = 2.75;
	report_nodes_judge(v, 4);
	ok(!v[2].stands_out[0], "must not fire: 10%% above the median");
	v[2].value[REPORT_NODE_STATIC] = 3.25;
	v[2].jobs = 5;
	report_nodes_judge(v, 4);
	ok(!v[2].stands_out[0], "must not fire: a node of 5 jobs");
	v[2].jobs = 20;
	report_nodes_judge(v, 2);
	ok(!v[0].stands_out[0] && !v[1].stands_out[0], "must not fire: a group of two");
	v[3].gap_share = 0.1;
	v[1].gap_share = 0.03;
	report_nodes_judge(v, 4);
	ok(v[3].gaps && !v[1].gaps, "gaps: 10%% stands out, 3%% does not");
	v[4] = node("gpu1", 20, 9.0);
	report_nodes_judge(v, 5);
	ok(!v[4].stands_out[0], "must not fire: a node of other hardware (another group)");
}

/* The two other figures, each judged on its own: energy per busy
 * core-second, and the share of a BMC's node power outside RAPL and the
 * GPUs, where some nodes have no BMC (NaN). */
static void
test_nodes_other_figures(void)
{
	struct report_node v[5];
	bool any = false;

	for (int i = 0; i < 5; i++) {
		char name[8];

		snprintf(name, sizeof(name), "n%d", i + 1);
		v[i] = node(name, 20, 2.5);
		v[i].value[REPORT_NODE_DYNAMIC] = 10.0 + 0.05 * i;
		v[i].value[REPORT_NODE_RESIDUAL] = i == 4 ? NAN : 0.1;
	}
	report_nodes_judge(v, 5);
	for (int i = 0; i < 5; i++)
		for (int m = 0; m < REPORT_NODE_METRICS; m++)
			any |= v[i].stands_out[m];
	ok(!any, "must not fire: five nodes alike in every figure (a 0.5%% spread)");
	v[1].value[REPORT_NODE_DYNAMIC] = 15.0;
	v[3].value[REPORT_NODE_RESIDUAL] = 0.16;
	report_nodes_judge(v, 5);
	ok(v[1].stands_out[REPORT_NODE_DYNAMIC] && !v[1].stands_out[REPORT_NODE_STATIC] &&
	   !v[1].stands_out[REPORT_NODE_RESIDUAL], "n2's 15 J per busy core-second stands out, alone");
	ok(v[3].stands_out[REPORT_NODE_RESIDUAL] && !v[3].stands_out[REPORT_NODE_DYNAMIC],
	   "n4's BMC residual of 16%% against 10%% stands out, alone");
	is_near(v[3].median[REPORT_NODE_RESIDUAL], 0.1, 1e-12,
		"the residual's median over the nodes with a BMC");
	ok(!v[4].stands_out[REPORT_NODE_RESIDUAL], "must not fire: a node without a BMC");
	ok(!v[0].stands_out[REPORT_NODE_DYNAMIC] && !v[2].stands_out[REPORT_NODE_DYNAMIC] &&
	   !v[4].stands_out[REPORT_NODE_DYNAMIC], "the others do not");
	v[3].value[REPORT_NODE_RESIDUAL] = 0.11;
	report_nodes_judge(v, 5);
	ok(!v[3].stands_out[REPORT_NODE_RESIDUAL], "must not fire: a residual 10%% above its group's");
}

int
main(void)
{
	test_fires();
	test_skips();
	test_cpu_silent();
	test_mem_gpu_time_silent();
	test_backing();
	test_lights();
	test_wording();
	test_collect();
	test_alert();
	test_nodes();
	test_nodes_other_figures();
	return done_testing();
}
