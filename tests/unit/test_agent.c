/* test_agent.c - the node agent's engine on fixture trees: a job's share
 * of RAPL energy by the ledger's model, balance of every tick, emissions,
 * registration errors, and restoring jobs after an agent restart. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/agent.h"
#include "model/agent_series.h"
#include "base/fileio.h"
#include "base/log.h"
#include "../tap.h"
#include "log_tap.h"
#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

static void
test_attribution(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	const struct ceems_ledger_tick *t;
	char err[256] = "";
	double pkg, dram, want_pkg, want_dram, total;

	base_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens on fixture trees (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	is_int(ceems_agent_register(a, &spec, 10 * SEC), -EEXIST, "a second registration is refused");

	advance(1500000000ULL);	/* the job used 1.5 of the 2 busy CPU-s */
	ceems_agent_tick(a, 11 * SEC);
	t = ceems_agent_last_tick(a);
	is_near(t->delta_j[CEEMS_DOMAIN_PACKAGE], 100, 1e-9, "package delta: both sockets, 100 J");
	is_near(t->delta_j[CEEMS_DOMAIN_DRAM], 10, 1e-9, "dram delta: 10 J");
	ok(!t->measured[CEEMS_DOMAIN_NODE] || t->delta_j[CEEMS_DOMAIN_NODE] >= 0, "no node source in this tree");

	is_int(ceems_agent_report(a, 42, &r), 0, "report of a running job");
	/* Static 20 W over 4 cores: the job holds 3 (cpuset 2-3,6).
	 * Active 80 J by CPU share 1.5 / 2. */
	want_pkg = 20.0 * 3 / 4 + 80.0 * 1.5 / 2;
	is_near(r.ledger.joules[CEEMS_DOMAIN_PACKAGE], want_pkg, 1e-9, "job's package energy follows the model");
	/* DRAM static 2 W by allocated memory (1 GiB of the node's
	 * MemTotal), active 8 J by RSS over the node's used memory. */
	want_dram = 2.0 * (1073741824.0 / (263842104.0 * 1024)) +
		    8.0 * (134217728.0 / ((263842104.0 - 248765432.0) * 1024));
	is_near(r.ledger.joules[CEEMS_DOMAIN_DRAM], want_dram, 1e-9, "job's dram energy follows the model");
	pkg = r.ledger.joules[CEEMS_DOMAIN_PACKAGE];
	dram = r.ledger.joules[CEEMS_DOMAIN_DRAM];
	is_near(pkg + t->system_j[CEEMS_DOMAIN_PACKAGE] + t->idle_j[CEEMS_DOMAIN_PACKAGE], 100, 1e-9,
		"package: job + system + idle = delta");
	is_near(dram + t->system_j[CEEMS_DOMAIN_DRAM] + t->idle_j[CEEMS_DOMAIN_DRAM], 10, 1e-9,
		"dram: job + system + idle = delta");
	is_near(r.cpu_s, 1.5, 1e-9, "job CPU time since registration");
	is_int(r.alloc_cores, 3, "allocated cores from the cpuset");
	/* Its error bound: each of the two RAPL counters off by a unit of
	 * 2^-14 J, reaching the job by its larger part (3 of 4 cores held,
	 * 1.5 of 2 busy CPU-s used); the idle power configured: none. */
	ok(r.err.known && r.err.have[CEEMS_DOMAIN_PACKAGE] &&
	   r.err.have[CEEMS_DOMAIN_DRAM] && !r.err.have[CEEMS_DOMAIN_NODE],
	   "an error bound for each measured domain");
	is_near(r.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_SOURCE],
		0.75 * 2 / 16384, 1e-15, "package: the counters' resolution");
	ok(r.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_IDLE] == 0 &&
	   r.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_GAPS] == 0 &&
	   r.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_LAG] == 0,
	   "no idle power, gap or lag error");

	advance(500000000ULL);
	is_int(ceems_agent_deregister(a, 42, 12 * SEC, &r), 0, "deregistration takes a last tick");
	total = r.ledger.joules[CEEMS_DOMAIN_PACKAGE] + r.ledger.joules[CEEMS_DOMAIN_DRAM];
	is_near(r.ledger.joules[CEEMS_DOMAIN_PACKAGE], want_pkg + 15 + 80.0 * 0.5 / 2, 1e-9, "second tick added");
	is_near(r.elapsed_s, 2, 1e-9, "elapsed since registration");
	is_near(r.cpu_s, 2.0, 1e-9, "CPU over both ticks");
	ok(r.ledger.have_emissions, "emissions computed with a zone configured");
	is_near(r.ledger.emissions_g, total / 3.6e6 * 1.5 * r.ledger.factor.g_per_kwh, 1e-9,
		"emissions = energy x PUE x intensity");
	is_str(r.ledger.factor.zone, "FR", "factor zone recorded");
	is_int(ceems_agent_njobs(a), 0, "no job left after deregistration");
	is_int(ceems_agent_release(a, 42), 0, "released once its record is stored");
	is_int(ceems_agent_deregister(a, 42, 13 * SEC, &r), -ENOENT, "unknown job");
	ceems_agent_open_close(a);
}

/* Steps share their job's energy by CPU time and never exceed it. */
static void
test_steps(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent_step_report st;
	struct ceems_agent *a;
	char err[256] = "";
	double job_pkg, sum;

	base_config(&c);
	/* Light ticks, as in production: CPU only, memory every 10 s. */
	c.usage_interval_ns = 10 * SEC;
	a = ceems_agent_open(&c, 400 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 400 * SEC), 0, "job registers");
	is_int(ceems_agent_step_start(a, 42, "batch", 400 * SEC), 0, "batch step starts");
	is_int(ceems_agent_step_start(a, 42, "batch", 400 * SEC), -EEXIST, "a step starts once");
	is_int(ceems_agent_step_start(a, 42, "0", 400 * SEC), 0,
	       "a step without a cgroup of its own is still recorded");
	is_int(ceems_agent_step_start(a, 43, "batch", 400 * SEC), -ENOENT, "steps need a registered job");
	is_int(ceems_agent_step_start(a, 42, "../x", 400 * SEC), -EINVAL, "a step name cannot climb the tree");
	is_int(ceems_agent_step_tasks(a, 42, "0", 16), 0, "step 0 runs 16 tasks on the node");
	is_int(ceems_agent_step_tasks(a, 42, "7", 1), -ENOENT, "an unknown step has no tasks");
	is_int(ceems_agent_step_tasks(a, 43, "0", 1), -ENOENT, "nor a step of an unknown job");
	is_int(ceems_agent_step_tasks(a, 42, "0", 0), -EINVAL, "no step runs 0 tasks");
	is_int(ceems_agent_step_tasks(a, 42, "0", 65536), -EINVAL,
	       "nor more than a node can (65535)");

	/* Over one second the job used 1.5 CPU-s, its batch step 1.2. */
	write_u64(cg_root, BATCH_CPUACCT, 2401000000ULL + 1200000000ULL);
	advance(1500000000ULL);
	ceems_agent_tick(a, 401 * SEC);
	is_int(ceems_agent_step_end(a, 42, "batch", 401 * SEC, &st), 0, "batch step ends");
	ok(st.ended, "the step is marked ended");
	is_near(st.cpu_s, 1.2, 1e-9, "step CPU time from its own cgroup");
	is_near(st.elapsed_s, 1, 1e-9, "step elapsed");
	ceems_agent_report(a, 42, &r);
	is_near(r.cpu_s, 1.5, 1e-9, "the job's CPU time is its own, not a step's");
	job_pkg = r.ledger.joules[CEEMS_DOMAIN_PACKAGE];
	is_near(st.joules[CEEMS_DOMAIN_PACKAGE], job_pkg * 1.2 / 1.5, 1e-9,
		"the step's package energy is its CPU share of the job's");
	is_int(r.nsteps, 2, "the report lists both steps");
	ok(st.have_cpu && st.have_joules[CEEMS_DOMAIN_PACKAGE],
	   "the batch step's CPU time and package energy are measured");
	ok(!st.have_joules[CEEMS_DOMAIN_GPU] && !st.have_joules[CEEMS_DOMAIN_NODE],
	   "domains the node lacks are not measured for the step (%d %d)",
	   st.have_joules[CEEMS_DOMAIN_GPU], st.have_joules[CEEMS_DOMAIN_NODE]);
	ok(strcmp(r.steps[1].id, "0") == 0 && !r.steps[1].have_cpu &&
	   !r.steps[1].have_mem_peak,
	   "a step without a cgroup has no CPU time or memory peak, not 0");
	ok(!r.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   !r.steps[1].have_joules[CEEMS_DOMAIN_DRAM],
	   "nor any energy, though its job's was measured");
	ok(r.steps[1].have_tasks && r.steps[1].tasks == 16 && !r.steps[0].have_tasks,
	   "the report has step 0's tasks, the batch step's unknown (not sent)");
	sum = 0;
	for (uint32_t i = 0; i < r.nsteps; i++)
		sum += r.steps[i].joules[CEEMS_DOMAIN_PACKAGE];
	ok(sum <= job_pkg + 1e-9, "steps never add up to more than the job (%.3f <= %.3f)", sum, job_pkg);
	is_int(ceems_agent_step_end(a, 42, "7", 401 * SEC, &st), -ENOENT, "an unknown step cannot end");
	ceems_agent_open_close(a);

	/* The steps survive an agent restart with the job. */
	a = ceems_agent_open(&c, 403 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent reopens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 403 * SEC), 1, "job restored");
	ceems_agent_report(a, 42, &r);
	ok(r.nsteps == 2 && strcmp(r.steps[0].id, "batch") == 0 && r.steps[0].ended &&
	   fabs(r.steps[0].cpu_s - 1.2) < 1e-9, "steps restored with their figures");
	ok(r.steps[0].have_cpu && r.steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   !r.steps[1].have_cpu && !r.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE],
	   "and with what was and was not measured");
	ok(r.steps[1].have_tasks && r.steps[1].tasks == 16 && !r.steps[0].have_tasks,
	   "and with their task counts, where known");
	is_int(ceems_agent_deregister(a, 42, 404 * SEC, &r), 0, "job deregisters");
	ceems_agent_open_close(a);
}

/* Learned idle power: the median of quiet ticks, not their minimum, so
 * one odd tick does not set it. */
static void
test_learned_idle_power(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report before, after;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 500 * SEC;

	base_config(&c);
	c.idle_power_package_w = -1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, t), 0, "job registers");
	/* Twelve quiet seconds at 24 W, one of them read as 8 W. */
	for (int i = 0; i < 12; i++) {
		move(i == 5 ? 4 : 12, i == 5 ? 4 : 12, 0, 0, 0);
		ceems_agent_tick(a, t += SEC);
	}
	ceems_agent_report(a, 42, &before);
	move(30, 30, 0, 100, 500000000ULL);	/* one busy second, 60 W */
	ceems_agent_tick(a, t += SEC);
	ceems_agent_report(a, 42, &after);
	/* The job holds 3 of the node's 4 cores: 3/4 of 24 W for 1 s. */
	is_near(after.ledger.static_j[CEEMS_DOMAIN_PACKAGE] -
		before.ledger.static_j[CEEMS_DOMAIN_PACKAGE], 24.0 * 3 / 4, 1e-9,
		"learned idle power is the quiet ticks' median, not the odd low one");
	ceems_agent_deregister(a, 42, t, &after);
	ceems_agent_open_close(a);
}

/* A simulated node that is never quiet: package power 40 W + 15 W per
 * busy CPU (60/40 over the two sockets) plus noise, DRAM 4 W; other work
 * keeps 0.5 to 3.5 of its 4 CPUs busy, changing every few seconds (or,
 * not VARYING, the node's 4 CPUs are 2 busy all along, job or not).
 * Returns the truth of job 42 over the ticks it was registered (it
 * holds 3 cores and uses JOB_CPU CPUs): 3/4 of 40 W + 15 W x its use. */
static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static double
rnd(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (double)(rng >> 11) / 9007199254740992.0;
}

static double
run_busy_node(struct ceems_agent *a, uint64_t *t, int seconds,
	      bool varying, double job_cpu)
{
	double other = 2 - job_cpu, truth = 0;

	for (int i = 0; i < seconds; i++) {
		double busy, pkg;

		if (varying && i % 4 == 0)
			other = 0.5 + 3 * rnd();
		busy = other + job_cpu;
		pkg = 40 + 15 * busy + (varying ? rnd() - 0.5 : 0);
		move(pkg * 0.6, pkg * 0.4, 4, (unsigned)(busy * 100 + 0.5),
		     (unsigned long long)(job_cpu * 1e9));
		ceems_agent_tick(a, *t += SEC);
		truth += 40.0 * 3 / 4 + 15 * job_cpu;
	}
	return truth;
}

static void
test_never_quiet_idle_power(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 900 * SEC;
	double truth;

	base_config(&c);
	c.idle_power_package_w = -1;
	c.idle_power_dram_w = -1;
	/* A fresh agent on a node in ordinary use for two minutes, then
	 * its first job, which burns one CPU for a minute. */
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	run_busy_node(a, &t, 120, true, 0);
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, t), 0, "never quiet: job registers");
	truth = run_busy_node(a, &t, 60, true, 1);
	is_int(ceems_agent_deregister(a, 42, t, &r), 0, "never quiet: job leaves");
	ok(fabs(r.ledger.joules[CEEMS_DOMAIN_PACKAGE] - truth) <= 0.05 * truth,
	   "never quiet: first job's package %.1f J, the model's %.1f J (within 5%%)",
	   r.ledger.joules[CEEMS_DOMAIN_PACKAGE], truth);
	ok(!r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE],
	   "never quiet: package idle power learned before the job: not flagged");
	/* Its DRAM draws a steady 4 W while the CPUs come and go: static
	 * power and steady traffic look the same, and no line on busy CPUs
	 * tells them apart; the job is split by use and flagged. */
	ok(r.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM] &&
	   r.ledger.static_j[CEEMS_DOMAIN_DRAM] == 0,
	   "never quiet: DRAM not learned from busy CPUs, flagged (static %.1f J)",
	   r.ledger.static_j[CEEMS_DOMAIN_DRAM]);
	ceems_agent_open_close(a);

	/* The same node at one constant load (the job takes the place of
	 * other work), a fresh agent with nothing kept by the one before:
	 * nothing can be learned, the job is split by use alone and says
	 * so. */
	base_config(&c);
	c.idle_power_package_w = -1;
	c.idle_power_dram_w = -1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens again (%s)", err))
		return;
	run_busy_node(a, &t, 120, false, 0);
	is_int(ceems_agent_register(a, &spec, t), 0, "constant load: job registers");
	run_busy_node(a, &t, 60, false, 1);
	is_int(ceems_agent_deregister(a, 42, t, &r), 0, "constant load: job leaves");
	ok(r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] &&
	   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE] == 0,
	   "constant load: no idle power learned, the job is flagged (%d, static %.1f J)",
	   r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE],
	   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE]);
	ceems_agent_open_close(a);
}

/* A job that starts with a fresh agent on a node never quiet: its first
 * ticks are split by use until the regression is trusted, then restated
 * with the idle power learned, so that its account, its batch step's
 * (all of its CPU time) and its series' rows come out as if the idle
 * power had been known from its start, and it is not flagged. */
static void
test_first_job_restated(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 1200 * SEC;
	unsigned long long step_ns = 5000000000000ULL;
	double other = 0, truth = 0, rows = 0, pkg;

	base_config(&c);
	c.interval_ns = SEC;
	c.series_interval_ns = SEC;
	c.idle_power_package_w = -1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	spec.series = true;
	write_u64(cg_root, BATCH_CPUACCT, step_ns);
	is_int(ceems_agent_register(a, &spec, t), 0, "restated: the job registers with the agent");
	is_int(ceems_agent_step_start(a, 42, "batch", t), 0, "restated: its batch step starts");
	for (int i = 0; i < 120; i++) {
		double busy, power;

		/* The job uses half a CPU; other work 0 to 2.5. */
		if (i % 4 == 0)
			other = 2.5 * rnd();
		busy = other + 0.5;
		power = 40 + 15 * busy + (rnd() - 0.5);
		write_u64(cg_root, BATCH_CPUACCT, step_ns += 500000000ULL);
		move(power * 0.6, power * 0.4, 4, (unsigned)(busy * 100 + 0.5),
		     500000000ULL);
		ceems_agent_tick(a, t += SEC);
		truth += 40.0 * 3 / 4 + 15 * 0.5;
	}
	is_int(ceems_agent_deregister(a, 42, t, &r), 0, "restated: the job leaves");
	pkg = r.ledger.joules[CEEMS_DOMAIN_PACKAGE];
	ok(fabs(pkg - truth) <= 0.01 * truth,
	   "restated: the package %.1f J, the model's %.1f J (within 1%%)", pkg, truth);
	ok(!r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE],
	   "restated: not flagged: every tick split with the learned idle power");
	ok(r.ledger.static_j[CEEMS_DOMAIN_PACKAGE] > 0.9 * 30 * 120,
	   "restated: its static part is its 3 cores' from its start (%.1f J)",
	   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE]);
	ok(r.nsteps == 1 && fabs(r.steps[0].joules[CEEMS_DOMAIN_PACKAGE] - pkg) <= 1e-6 * pkg,
	   "restated: the batch step, all of its CPU time, has all of its energy (%.3f J)",
	   r.nsteps == 1 ? r.steps[0].joules[CEEMS_DOMAIN_PACKAGE] : 0);
	for (uint32_t i = 0; r.series != NULL && i < r.series->nrows; i++)
		rows += r.series->rows[i].joules[CEEMS_DOMAIN_PACKAGE];
	ok(r.series != NULL && fabs(rows - pkg) <= 1e-6 * pkg,
	   "restated: its series' rows still add up to it (%.3f J)", rows);
	ceems_agent_open_close(a);
}

/* One job of one second at 1 CPU busy on agent A from T: its report. */
static void
one_second_job(struct ceems_agent *a, uint64_t *t,
	       struct ceems_agent_job_report *r)
{
	struct ceems_agent_job_spec spec;

	job42_spec(&spec);
	if (ceems_agent_register(a, &spec, *t) != 0)
		memset(r, 0, sizeof(*r));
	move(33, 22, 4, 100, 1000000000ULL);
	ceems_agent_tick(a, *t += SEC);
	(void)ceems_agent_deregister(a, 42, *t, r);
}

/* The idle power one agent learned is used by the next from its first
 * tick (state_dir/idle-power), not learned anew; a file of other
 * counters, or one that is garbage, is not used; a configured value
 * always is. */
static void
test_idle_power_kept(void)
{
	struct ceems_config c;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "", path[PATH_MAX], text[256];
	uint64_t t = 1400 * SEC;
	FILE *f;

	base_config(&c);
	c.idle_power_package_w = -1;
	c.idle_power_dram_w = -1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent opens (%s)", err))
		return;
	for (int i = 0; i < 6; i++) {
		move(12, 12, 4, 0, 0);	/* quiet: 24 W, DRAM 4 W */
		ceems_agent_tick(a, t += SEC);
	}
	ceems_agent_open_close(a);
	snprintf(path, sizeof(path), "%s/idle-power", state_dir);
	f = fopen(path, "r");
	ok(f != NULL && fgets(text, sizeof(text), f) != NULL &&
	   strncmp(text, "package 24.000 quiet ", 21) == 0,
	   "kept: the learned value is in the state_dir (%s)", f != NULL ? text : "none");
	if (f != NULL)
		fclose(f);

	/* A restarted agent, its first job at once: split with it. */
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent reopens (%s)", err))
		return;
	one_second_job(a, &t, &r);
	is_near(r.ledger.static_j[CEEMS_DOMAIN_PACKAGE], 24.0 * 3 / 4, 1e-9,
		"kept: the first tick of the next agent splits the kept 24 W");
	ok(!r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] &&
	   !r.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM], "kept: the job is not flagged");
	ceems_agent_open_close(a);

	/* A node never quiet: the package learned anew by regression, the
	 * DRAM (learned from quiet ticks only) keeps the kept value, and
	 * both are kept for the next agent. */
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent reopens on a busy node (%s)", err))
		return;
	run_busy_node(a, &t, 120, true, 0);
	ceems_agent_open_close(a);
	f = fopen(path, "r");
	text[0] = '\0';
	if (f != NULL) {
		size_t n = fread(text, 1, sizeof(text) - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	ok(strncmp(text, "package 4", 9) == 0 && strstr(text, " fit ") != NULL &&
	   strstr(text, "\ndram 4.000 quiet ") != NULL,
	   "kept: the package relearned by regression, the DRAM's kept value kept (%s)",
	   text);

	/* Learned on other counters (a key of another node): not used. */
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("package 24.000 quiet 0123456789abcdef\n", f);
		fclose(f);
	}
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent opens over another node's value (%s)", err))
		return;
	one_second_job(a, &t, &r);
	ok(r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] &&
	   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE] == 0,
	   "kept: another node's value is not used: split by use, flagged");
	ceems_agent_open_close(a);

	/* Garbage: ignored, nothing used, no crash. */
	f = fopen(path, "w");
	if (f != NULL) {
		fputs("package nan quiet 1\npackage 1e300 fit 2\n\x01\xff garbage\n"
		      "dram -4 quiet 3\npackage 24 guessed 4\n", f);
		fclose(f);
	}
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent opens over a damaged file (%s)", err))
		return;
	one_second_job(a, &t, &r);
	ok(r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE],
	   "kept: a damaged file gives nothing");
	ceems_agent_open_close(a);

	/* A configured value is used as it is, whatever was kept. */
	base_config(&c);
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "kept: agent opens configured (%s)", err))
		return;
	one_second_job(a, &t, &r);
	is_near(r.ledger.static_j[CEEMS_DOMAIN_PACKAGE], 20.0 * 3 / 4, 1e-9,
		"kept: a configured 20 W is used, not a kept value");
	ceems_agent_open_close(a);
}

/* A job that ends before the agent's first tick after a start: with
 * idle power to be learned, nothing is learned yet and the job says so;
 * a configured one is used as it is. */
static void
test_first_interval_flagged(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 1500 * SEC;

	for (int learn = 1; learn >= 0; learn--) {
		base_config(&c);
		if (learn) {
			c.idle_power_package_w = -1;
			c.idle_power_dram_w = -1;
		}
		a = ceems_agent_open(&c, t, err, sizeof(err));
		if (!ok(a != NULL, "agent opens (%s)", err))
			return;
		job42_spec(&spec);
		is_int(ceems_agent_register(a, &spec, t), 0,
		       "first interval: job registers");
		move(30, 30, 4, 100, 500000000ULL);
		is_int(ceems_agent_deregister(a, 42, t += SEC / 2, &r), 0,
		       "first interval: job leaves before the first tick");
		if (learn)
			ok(r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] &&
			   r.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM] &&
			   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE] == 0,
			   "first interval, idle power to learn: flagged (%d %d)",
			   r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE],
			   r.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM]);
		else
			ok(!r.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] &&
			   !r.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM] &&
			   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE] > 0,
			   "first interval, idle power configured: used, not flagged (static %.2f J)",
			   r.ledger.static_j[CEEMS_DOMAIN_PACKAGE]);
		ceems_agent_open_close(a);
		t += 100 * SEC;
	}
}

/* An agent whose opening took longer than a counter's wrap period (the
 * fixture's package: 262143 J at 150 W, 1748 s) and that is started
 * when open: its first tick is measured for a job registered before it.
 * Not started, the reading at open and the first tick's are a stall
 * apart, and that tick is a gap for the job. */
static void
test_start_after_slow_open(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	double coverage;
	uint64_t t = 5000 * SEC;

	for (int started = 1; started >= 0; started--) {
		base_config(&c);
		a = ceems_agent_open(&c, t, err, sizeof(err));
		if (!ok(a != NULL, "slow open: agent opens (%s)", err))
			return;
		move(30, 20, 4, 100, 0);
		t += 1800 * SEC;
		if (started)
			is_int(ceems_agent_open_start(a, t), 0,
			       "slow open: the agent starts once open");
		job42_spec(&spec);
		is_int(ceems_agent_register(a, &spec, t), 0,
		       "slow open: job registers");
		if (started)
			is_int(ceems_agent_open_start(a, t), -EBUSY,
			       "slow open: no second start once a job is held");
		advance(1500000000ULL);
		ceems_agent_tick(a, t += SEC);
		advance(1500000000ULL);
		ceems_agent_tick(a, t += SEC);
		is_int(ceems_agent_deregister(a, 42, t, &r), 0,
		       "slow open: job leaves");
		coverage = -1;
		ceems_job_figures_ledger_coverage(&r.ledger, CEEMS_DOMAIN_PACKAGE,
					  &coverage);
		if (started)
			ok(coverage == 1 && r.gap_s == 0,
			   "slow open, started: the job's whole life measured (coverage %.3f)",
			   coverage);
		else
			ok(coverage > 0.49 && coverage < 0.51,
			   "slow open, not started: the first tick a stall gap (coverage %.3f)",
			   coverage);
		ceems_agent_open_close(a);
		t += 100 * SEC;
	}
}

static void
test_register_errors(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent *a;
	char err[256] = "";

	base_config(&c);
	c.max_jobs = 1;
	a = ceems_agent_open(&c, 100 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	spec.jobid = 0;
	is_int(ceems_agent_register(a, &spec, 100 * SEC), -EINVAL, "job id 0 refused");
	job42_spec(&spec);
	spec.gpu_share[0] = 1.5;
	is_int(ceems_agent_register(a, &spec, 100 * SEC), -EINVAL, "GPU share above 1 refused");
	job42_spec(&spec);
	spec.jobid = 43;
	snprintf(spec.cgroup.v1[CEEMS_CG_CPUACCT], sizeof(spec.cgroup.v1[0]), "/slurm_localhost/uid_1/job_43");
	snprintf(spec.cgroup.v1[CEEMS_CG_MEMORY], sizeof(spec.cgroup.v1[0]), "/slurm_localhost/uid_1/job_43");
	snprintf(spec.cgroup.v1[CEEMS_CG_CPUSET], sizeof(spec.cgroup.v1[0]), "/slurm_localhost/uid_1/job_43");
	snprintf(spec.cgroup.v1[CEEMS_CG_FREEZER], sizeof(spec.cgroup.v1[0]), "/slurm_localhost/uid_1/job_43");
	is_int(ceems_agent_register(a, &spec, 100 * SEC), -ENOENT, "a job without a cgroup is refused");
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0, "job 42 registers");
	spec.jobid = 44;
	is_int(ceems_agent_register(a, &spec, 100 * SEC), -ENOSPC, "max_jobs bounds the agent");
	ceems_agent_open_close(a);
}

static void
test_bad_zone(void)
{
	struct ceems_config c;
	char err[512] = "";

	base_config(&c);
	snprintf(c.zone, sizeof(c.zone), "XQ");
	ok(ceems_agent_open(&c, SEC, err, sizeof(err)) == NULL &&
	   strstr(err, "zone = XQ") != NULL, "unknown zone is a configuration error: %s", err);
}

static void
test_restart(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report before, after;
	struct ceems_agent *a;
	char err[256] = "";

	base_config(&c);
	a = ceems_agent_open(&c, 200 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "first agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 200 * SEC), 0, "job registers with the first agent");
	advance(1000000000ULL);
	ceems_agent_tick(a, 201 * SEC);
	ceems_agent_report(a, 42, &before);
	ok(before.ledger.joules[CEEMS_DOMAIN_PACKAGE] > 0, "first agent accounted energy");
	/* The agent dies here, after its checkpoint: no deregistration,
	 * no clean close of the job; the state file stays as the last
	 * checkpoint left it. */
	is_int(ceems_agent_checkpoint(a, 201 * SEC), 0, "checkpoint");
	ceems_agent_open_close(a);

	a = ceems_agent_open(&c, 206 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "second agent opens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 206 * SEC), 1, "one job restored");
	is_int(ceems_agent_report(a, 42, &after), 0, "restored job reports");
	is_near(after.ledger.joules[CEEMS_DOMAIN_PACKAGE], before.ledger.joules[CEEMS_DOMAIN_PACKAGE], 1e-9,
		"energy accounted before the restart is kept");
	is_near(after.gap_s, 5, 1e-9, "the 5 s the agent was down are a gap");
	ok(after.ngaps == 1 && fabs(after.gaps[0].end - after.gaps[0].start - 5) < 1e-6 &&
	   after.gaps[0].end > 1.7e9,
	   "the record says which interval is missing (Unix times, 5 s long)");
	is_near(after.ledger.lifetime_s, 6, 1e-9, "lifetime covers the gap");
	ok(before.err.known && !after.err.known,
	   "its error bound is unknown after the restart, not 0");
	ok(after.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] < after.ledger.lifetime_s,
	   "data quality shows the gap (%.1f of %.1f s covered)",
	   after.ledger.covered_s[CEEMS_DOMAIN_PACKAGE], after.ledger.lifetime_s);
	is_int(ceems_agent_deregister(a, 42, 207 * SEC, &after), 0, "restored job deregisters");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);

	a = ceems_agent_open(&c, 208 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 208 * SEC) : -1, 0, "a deregistered job is not restored");
	ceems_agent_open_close(a);
}

static void
test_damaged_state(void)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "", path[PATH_MAX + 32];
	struct stat st;

	base_config(&c);
	tmptree_write(state_dir, "jobs.state", "this is not a state file\n");
	a = ceems_agent_open(&c, 300 * SEC, err, sizeof(err));
	ok(a != NULL, "agent opens over a damaged state file (%s)", a ? "" : err);
	is_int(a != NULL ? ceems_agent_restore(a, 300 * SEC) : -1, 0, "nothing restored from it");
	snprintf(path, sizeof(path), "%s/jobs.state.bad", state_dir);
	ok(stat(path, &st) == 0 && st.st_size == 25,
	   "the damaged file is kept aside, untouched, for inspection");
	snprintf(path, sizeof(path), "%s/jobs.state", state_dir);
	ok(stat(path, &st) == 0 && st.st_size == 4096,
	   "a fresh state file is in use under the real name, its header only");
	ceems_agent_open_close(a);
}

/* A state file of an older layout version (version 1: steps without
 * their have_ flags, the same sizes) is set aside, never restored with
 * every step figure read as not measured. */
static void
test_old_state_version(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent *a;
	char err[256] = "", path[PATH_MAX + 32], bad[PATH_MAX + 32];
	struct stat st, st_bad;
	uint32_t version = 1;
	int fd;

	base_config(&c);
	snprintf(path, sizeof(path), "%s/jobs.state", state_dir);
	snprintf(bad, sizeof(bad), "%s/jobs.state.bad", state_dir);
	unlink(path);
	unlink(bad);
	a = ceems_agent_open(&c, 500 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 500 * SEC), 0, "job registers");
	is_int(ceems_agent_step_start(a, 42, "batch", 500 * SEC), 0, "its step starts");
	ceems_agent_open_close(a);
	/* The header: 8 bytes of magic, then the version. */
	fd = open(path, O_WRONLY | O_CLOEXEC);
	ok(fd >= 0 && pwrite(fd, &version, sizeof(version), 8) == sizeof(version) &&
	   close(fd) == 0, "test setup: the file made version 1");
	if (stat(path, &st) < 0)
		st.st_size = -1;
	a = ceems_agent_open(&c, 501 * SEC, err, sizeof(err));
	ok(a != NULL, "agent opens over a version 1 state file (%s)", a ? "" : err);
	is_int(a != NULL ? ceems_agent_restore(a, 501 * SEC) : -1, 0,
	       "its job is not restored");
	ok(stat(bad, &st_bad) == 0 && st_bad.st_size == st.st_size,
	   "the version 1 file is set aside whole");
	ceems_agent_open_close(a);
	unlink(bad);
}

/* DT_S seconds of advance()'s workload (at its power), job 42 using
 * 1.5 of the node's 2 busy CPUs. */
static void
run_for(double dt_s)
{
	move(60 * dt_s, 40 * dt_s, 10 * dt_s, (unsigned)(200 * dt_s + 0.5),
	     (unsigned long long)(1.5e9 * dt_s));
}

/* A series row sum against the ledger's figure: within 1e-9 of it,
 * relative (absolute near 0). */
static void
is_sum(double sum, double ledger, const char *name)
{
	is_near(sum, ledger, 1e-9 * (fabs(ledger) > 1 ? fabs(ledger) : 1), name);
}

/* A --ceems-series job's rows add up to its final ledger, whatever
 * happens between ticks: the series turned on by a later registration
 * (the batch step's, after the extern step's), a step's end, another
 * job coming and going between two ticks, and the job itself leaving
 * between ticks. */
static void
test_series_adds_up(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec, other;
	struct ceems_agent_job_report r;
	struct ceems_agent_step_report st;
	struct ceems_agent *a;
	const struct ceems_series *s;
	double interval = 0, joules[CEEMS_DOMAIN_COUNT] = { 0 };
	int known[CEEMS_DOMAIN_COUNT] = { 0 };
	char err[256] = "", name[96];
	const uint64_t ms = 1000000ULL;

	base_config(&c);
	c.interval_ns = SEC;
	c.series_interval_ns = SEC;
	a = ceems_agent_open(&c, 600 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	/* The extern step registers the job without the option... */
	run_for(0.2);
	is_int(ceems_agent_register(a, &spec, 600 * SEC + 200 * ms), 0,
	       "job registers between ticks, without a series");
	/* ... the batch step with it, a moment later. */
	spec.series = true;
	run_for(0.1);
	is_int(ceems_agent_register(a, &spec, 600 * SEC + 300 * ms), -EEXIST,
	       "a later registration with --ceems-series turns the series on");
	is_int(ceems_agent_step_start(a, 42, "batch", 600 * SEC + 300 * ms), 0,
	       "batch step starts");
	run_for(0.7);
	ceems_agent_tick(a, 601 * SEC);
	run_for(1);
	ceems_agent_tick(a, 602 * SEC);
	/* Another job comes and goes between two ticks. */
	other = spec;
	other.jobid = 43;
	other.series = false;
	run_for(0.2);
	is_int(ceems_agent_register(a, &other, 602 * SEC + 200 * ms), 0,
	       "another job registers between ticks");
	run_for(0.3);
	is_int(ceems_agent_deregister(a, 43, 602 * SEC + 500 * ms, &r), 0,
	       "and deregisters before the next");
	run_for(0.1);
	is_int(ceems_agent_step_end(a, 42, "batch", 602 * SEC + 600 * ms, &st), 0,
	       "the batch step ends between ticks");
	is_int(ceems_agent_report_now(a, 42, 602 * SEC + 600 * ms, &r), 0,
	       "the job's report as of the step's end");
	run_for(0.28);
	is_int(ceems_agent_deregister(a, 42, 602 * SEC + 880 * ms, &r), 0,
	       "the job deregisters between ticks");
	s = r.series;
	if (!ok(s != NULL && s->nrows >= 2, "the final report holds the series (%u rows)",
		s != NULL ? s->nrows : 0)) {
		ceems_agent_open_close(a);
		return;
	}
	for (uint32_t i = 0; i < s->nrows; i++) {
		interval += s->rows[i].interval_s;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!isnan(s->rows[i].joules[d])) {
				joules[d] += s->rows[i].joules[d];
				known[d]++;
			}
	}
	ok(r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] > 2.6 &&
	   r.ledger.joules[CEEMS_DOMAIN_PACKAGE] > 0, "the job was charged (%.3f s)",
	   r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE]);
	is_sum(interval, r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE],
	       "the rows' intervals add up to the job's covered time");
	is_sum(interval, r.ledger.lifetime_s, "and to its lifetime");
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		snprintf(name, sizeof(name), "domain %d: the rows add up to the ledger's joules", d);
		is_sum(joules[d], r.ledger.joules[d], name);
		snprintf(name, sizeof(name), "domain %d: known in some row iff covered", d);
		ok((known[d] > 0) == (r.ledger.covered_s[d] > 0), "%s", name);
	}
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(log_tap_warnings, NULL);
	make_trees();
	test_attribution();
	test_steps();
	test_learned_idle_power();
	test_never_quiet_idle_power();
	test_first_job_restated();
	test_idle_power_kept();
	test_first_interval_flagged();
	test_register_errors();
	test_bad_zone();
	test_restart();
	test_damaged_state();
	test_old_state_version();
	test_series_adds_up();
	test_start_after_slow_open();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
