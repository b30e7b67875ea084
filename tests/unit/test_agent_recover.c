/* test_agent_recover.c - the interval an agent restart leaves is
 * recovered from the cumulative counters when that is unambiguous, and
 * stays a gap when it is not: the rule alone (agent_recover.h), then the
 * engine on fixture trees, a restarted agent against one that never
 * stopped, with RAPL, hwmon energy and pm_counters as the source.  A
 * job's eBPF and perf counts, which die with an agent, come back from its
 * checkpoint: added to, with the time between said, or absent with why. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_recover.h"
#include "agent/agent_state.h"
#include "base/fileio.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

#define HWMON "class/hwmon/"
#define PM "cray/pm_counters/"
#define JOB43_CPUACCT "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_43/cpuacct.usage"

/* The energy source the agents read; the tree holds all three. */
static enum { SOURCE_RAPL, SOURCE_HWMON, SOURCE_PM } source = SOURCE_RAPL;

/* The simulated node of agent_sim.h with hwmon's and Cray's counters
 * beside RAPL's. */
static void
make_recover_trees(void)
{
	char path[PATH_MAX];

	make_trees();
	tmptree_copy(fixture_path("sys/hwmon"), sys_root);
	tmptree_copy(fixture_path("sys/cray"), sys_root);
	/* Energy counters only: the power channels come back in
	 * test_not_cumulative. */
	snprintf(path, sizeof(path), "%s/" HWMON "hwmon0/power1_average", sys_root);
	unlink(path);
	snprintf(path, sizeof(path), "%s/" HWMON "hwmon3/power2_input", sys_root);
	unlink(path);
}

/* Replace ROOT/REL by a new file holding V: what a device made again
 * (driver reload) looks like, the same path with another inode. */
static void
replace_u64(const char *root, const char *rel, unsigned long long v)
{
	char tmp[256], from[PATH_MAX], to[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s.new", rel);
	write_u64(root, tmp, v);
	snprintf(from, sizeof(from), "%s/%s", root, tmp);
	snprintf(to, sizeof(to), "%s/%s", root, rel);
	if (rename(from, to) < 0)
		tmptree_die("rename", from);
}

/* agent_sim.h's configuration, reading the energy source chosen. */
static void
recover_config(struct ceems_config *c)
{
	base_config(c);
	c->source_rapl = source == SOURCE_RAPL;
	c->source_hwmon = source == SOURCE_HWMON;
	c->source_pm_counters = source == SOURCE_PM;
}

/* hwmon (uJ): the sockets follow the packages; the PSU and the Cray
 * node counter (J) count the node. */
static unsigned long long psu_uj = 5000000000ULL;
static double node_j = 123456;

static void
write_pm(const char *file, double joules)
{
	char rel[64], text[64];

	snprintf(rel, sizeof(rel), PM "%s", file);
	snprintf(text, sizeof(text), "%.0f J 1687170683291597 us\n", joules);
	tmptree_write(sys_root, rel, text);
}

/* Add PKG0_J and PKG1_J to the packages, DRAM_J split over the drams,
 * BUSY USER_HZ ticks to the node and CPU_NS to job 42. */
static void
move_sources(double pkg0_j, double pkg1_j, double dram_j, unsigned busy,
	     unsigned long long cpu_ns)
{
	move(pkg0_j, pkg1_j, dram_j, busy, cpu_ns);
	psu_uj += (unsigned long long)((pkg0_j + pkg1_j + dram_j) * 1.5e6);
	node_j += (pkg0_j + pkg1_j + dram_j) * 1.5;
	write_u64(sys_root, HWMON "hwmon1/energy3_input", pkg0_uj);
	write_u64(sys_root, HWMON "hwmon1/energy4_input", pkg1_uj);
	write_u64(sys_root, HWMON "hwmon3/energy1_input", psu_uj);
	write_pm("cpu_energy", (double)((pkg0_uj + pkg1_uj) / 1000000));
	write_pm("memory_energy", (double)((dram0_uj + dram1_uj) / 1000000));
	write_pm("energy", node_j);
}

/* 1 s of the workload at DT_S seconds: job 42 uses 1.5 of 2 busy CPUs. */
static void
run_for(double dt_s)
{
	move_sources(60 * dt_s, 40 * dt_s, 10 * dt_s, (unsigned)(200 * dt_s + 0.5),
	     (unsigned long long)(1.5e9 * dt_s));
}

static void
set_boot_id(const char *id)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/kernel/random", proc_root);
	if (ceems_fileio_mkdir_p(path, 0755) < 0)
		tmptree_die("mkdir", path);
	tmptree_write(proc_root, "sys/kernel/random/boot_id", id);
}

static struct ceems_agent *
open_agent(const char *state, uint64_t now_ns)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	recover_config(&c);
	snprintf(c.state_dir, sizeof(c.state_dir), "%s/%s", proc_root, state);
	a = ceems_agent_open(&c, now_ns, err, sizeof(err));
	if (a == NULL) {
		printf("Bail out! agent: %s\n", err);
		exit(1);
	}
	return a;
}

static void
test_rule(void)
{
	struct ceems_energy_counter_limits lim = {
		.unit_j = 1e-6, .range = 1000000, .max_power_w = 100,
		.slack_ns = 0,
	};
	struct state_counter saved = {
		.raw = 900000, .range = 1000000, .read_ns = 10 * SEC, .have = 1,
	};
	struct ceems_recover_job job = {
		.figures_tick_ns = 10 * SEC, .node_tick_ns = 10 * SEC,
		.have_cpu_then = true, .have_cpu_now = true,
		.cpu_then_ns = 100, .cpu_now_ns = 200,
		.cgroup_ino_then = 7, .cgroup_ino_now = 7,
	};
	struct ceems_recover_job other;
	double j = -1, direct = -1;

	is_int(ceems_agent_recover_boot("b1", "b1"), CEEMS_RECOVER_OK, "same boot");
	is_int(ceems_agent_recover_boot("b1", "b2"), CEEMS_RECOVER_OTHER_BOOT,
	       "another boot: a gap");
	is_int(ceems_agent_recover_boot("unknown", "unknown"), CEEMS_RECOVER_OTHER_BOOT,
	       "an unknown boot: a gap");
	/* 1 J range, 100 W: it wraps at most once in 10 ms. */
	is_int(ceems_agent_recover_counter(&saved, &lim, 200000, 10 * SEC + 5000000, &j),
	       CEEMS_RECOVER_OK, "one wrap within the wrap period: recovered");
	ceems_energy_counter_delta(&lim, saved.raw, 200000, 5000000, &direct);
	ok(j > 0 && j == direct, "as much energy as two samples would give (%.3f J)", j);
	is_int(ceems_agent_recover_counter(&saved, &lim, 200000, 10 * SEC + 20000000, &j),
	       CEEMS_RECOVER_TOO_LONG, "longer than the wrap period: a gap");
	is_int(ceems_agent_recover_counter(&saved, &lim, 100, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_RESET, "more energy than the power allows: a reset, a gap");
	saved.range = 2000000;
	is_int(ceems_agent_recover_counter(&saved, &lim, 950000, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_RESET, "another range: another counter, a gap");
	saved.range = 1000000;
	saved.have = 0;
	is_int(ceems_agent_recover_counter(&saved, &lim, 950000, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_NO_CHECKPOINT, "no reading at the checkpoint: a gap");

	{
		struct ceems_energy_reader rd = { .needs_identity = true, .identity = 42 };

		saved.identity = 42;
		is_int(ceems_agent_recover_identity(&saved, &rd), CEEMS_RECOVER_OK,
		       "the same run of the counter: recovered");
		rd.identity = 43;
		is_int(ceems_agent_recover_identity(&saved, &rd), CEEMS_RECOVER_OTHER_RUN,
		       "another run (device made again, controller restarted): a gap");
		rd.identity = 0;
		is_int(ceems_agent_recover_identity(&saved, &rd), CEEMS_RECOVER_UNIDENTIFIED,
		       "the run unknown now: a gap");
		rd.identity = 42;
		saved.identity = 0;
		is_int(ceems_agent_recover_identity(&saved, &rd), CEEMS_RECOVER_UNIDENTIFIED,
		       "the run unknown then (a file of an earlier agent): a gap");
		rd.needs_identity = false;
		rd.identity = 0;
		is_int(ceems_agent_recover_identity(&saved, &rd), CEEMS_RECOVER_OK,
		       "a counter whose readings tell a reset needs no run (RAPL)");
	}

	is_int(ceems_agent_recover_job_verdict(&job), CEEMS_RECOVER_OK,
	       "the same cgroup, its CPU time moved on: recovered");
	other = job;
	other.cgroup_ino_now = 8;
	is_int(ceems_agent_recover_job_verdict(&other), CEEMS_RECOVER_CGROUP_REPLACED,
	       "another cgroup under the name: a gap");
	other = job;
	other.gone = true;
	is_int(ceems_agent_recover_job_verdict(&other), CEEMS_RECOVER_CGROUP_REPLACED,
	       "its cgroup gone: a gap");
	other = job;
	other.cpu_now_ns = 50;
	is_int(ceems_agent_recover_job_verdict(&other), CEEMS_RECOVER_RESET,
	       "its CPU time went back: a gap");
	other = job;
	other.figures_tick_ns = 9 * SEC;
	is_int(ceems_agent_recover_job_verdict(&other), CEEMS_RECOVER_NO_CHECKPOINT,
	       "figures of another tick than the node's: a gap");
}

/* A reference agent that never stops and one killed after its
 * checkpoint at 301 s, restarted at 301 + DOWN_S: both tick at 302 +
 * DOWN_S over the same counters.  WHAT is done to the node while the
 * second is down.  Returns the restarted agent's report in R, the
 * reference's in REF. */
enum while_down {
	NOTHING, RESET_COUNTER, NEW_CGROUP, NEW_BOOT,
	NEW_DEVICE,	/* hwmon: the package counter's device made again */
	NEW_RUN,	/* pm_counters: the controller restarted */
	NO_STARTUP,	/* pm_counters: which run it is cannot be read */
};

/* What WHAT does to the node while the agent is down. */
static void
while_down(enum while_down what)
{
	char path[PATH_MAX];

	if (what == RESET_COUNTER && source == SOURCE_RAPL)
		write_u64(sys_root, RAPL "intel-rapl:0/energy_uj", 1000);
	if (what == RESET_COUNTER && source == SOURCE_HWMON)
		write_u64(sys_root, HWMON "hwmon1/energy3_input", 1000);
	if (what == RESET_COUNTER && source == SOURCE_PM)
		write_pm("cpu_energy", 1);
	if (what == NEW_CGROUP) {
		snprintf(path, sizeof(path), "%s/%s", cg_root, JOB42_CPUACCT);
		unlink(path);
		write_u64(cg_root, JOB42_CPUACCT, job_ns);
	}
	if (what == NEW_BOOT)
		set_boot_id("3c1d2e4f-0000-4000-8000-00000000b008\n");
	/* The counters read as if they had gone on: only the device's or
	 * the controller's identity tells. */
	if (what == NEW_DEVICE)
		replace_u64(sys_root, HWMON "hwmon1/energy3_input", pkg0_uj);
	if (what == NEW_RUN)
		write_u64(sys_root, PM "startup", 1687000000000000ULL + job_ns);
	if (what == NO_STARTUP) {
		snprintf(path, sizeof(path), "%s/" PM "startup", sys_root);
		unlink(path);
	}
}

static int
kill_and_restart(double down_s, enum while_down what,
		 struct ceems_agent_job_report *r,
		 struct ceems_agent_job_report *ref)
{
	struct ceems_agent_job_spec spec;
	struct ceems_agent *a, *b;
	uint64_t t0 = 300 * SEC, restart = t0 + SEC + (uint64_t)(down_s * 1e9);
	static int run;
	char state[32], path[PATH_MAX];
	int restored;

	snprintf(state, sizeof(state), "state-%d", run++);
	set_boot_id("3c1d2e4f-0000-4000-8000-00000000b007\n");
	a = open_agent("state-ref", t0);
	b = open_agent(state, t0);
	job42_spec(&spec);
	if (ceems_agent_register(a, &spec, t0) != 0 ||
	    ceems_agent_register(b, &spec, t0) != 0)
		return -1;
	run_for(1);
	ceems_agent_tick(a, t0 + SEC);
	ceems_agent_tick(b, t0 + SEC);
	ceems_agent_checkpoint(b, t0 + SEC);
	ceems_agent_open_close(b);	/* killed: no deregistration */

	run_for(down_s);
	while_down(what);
	b = open_agent(state, restart);
	restored = ceems_agent_restore(b, restart);
	run_for(1);
	ceems_agent_tick(a, restart + SEC);
	ceems_agent_tick(b, restart + SEC);
	ceems_agent_report(a, 42, ref);
	if (ceems_agent_report(b, 42, r) != 0)
		memset(r, 0, sizeof(*r));
	ceems_agent_deregister(a, 42, restart + SEC, ref);
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
	ceems_agent_open_close(b);
	snprintf(path, sizeof(path), "%s/%s", proc_root, state);
	tmptree_remove(path);
	return restored;
}

static void
test_recovered(void)
{
	struct ceems_agent_job_report r, ref;
	double cov;

	is_int(kill_and_restart(5, NOTHING, &r, &ref), 1, "killed, restarted 5 s later: the job is restored");
	is_near(r.gap_s, 0, 0, "no gap");
	is_near(r.recovered_s, 5, 1e-9, "the 5 s it was down are recovered");
	ok(r.nrecovered == 1 && fabs(r.recovered[0].end - r.recovered[0].start - 5) < 1e-6 &&
	   r.recovered[0].end > 1.7e9, "and listed as recovered (Unix times, 5 s)");
	ok(ceems_job_figures_ledger_coverage(&r.ledger, CEEMS_DOMAIN_PACKAGE, &cov) && cov == 1,
	   "package coverage 100%% (%.4f)", cov);
	ok(ceems_job_figures_ledger_coverage(&r.ledger, CEEMS_DOMAIN_DRAM, &cov) && cov == 1,
	   "dram coverage 100%% (%.4f)", cov);
	is_near(r.ledger.joules[CEEMS_DOMAIN_PACKAGE], ref.ledger.joules[CEEMS_DOMAIN_PACKAGE], 1e-6,
		"package energy as an agent that never stopped split it");
	is_near(r.ledger.joules[CEEMS_DOMAIN_DRAM], ref.ledger.joules[CEEMS_DOMAIN_DRAM], 1e-6,
		"dram energy too");
	is_near(r.cpu_s, ref.cpu_s, 1e-9, "and the CPU time over the interval");
	is_near(r.ledger.lifetime_s, ref.ledger.lifetime_s, 1e-9, "the same lifetime");
}

static void
test_gaps(void)
{
	struct ceems_agent_job_report r, ref;

	is_int(kill_and_restart(60, NOTHING, &r, &ref), 1, "down 60 s, longer than a dram counter's wrap period");
	is_near(r.gap_s, 60, 1e-9, "a gap: how many wraps is unknowable");
	is_near(r.recovered_s, 0, 0, "nothing recovered");

	is_int(kill_and_restart(5, RESET_COUNTER, &r, &ref), 1, "a counter reset while down");
	is_near(r.gap_s, 5, 1e-9, "a gap");
	is_near(r.recovered_s, 0, 0, "nothing recovered");

	is_int(kill_and_restart(5, NEW_CGROUP, &r, &ref), 1, "the job's cgroup made again while down");
	is_near(r.gap_s, 5, 1e-9, "a gap");
	is_near(r.recovered_s, 0, 0, "nothing recovered");

	is_int(kill_and_restart(5, NEW_BOOT, &r, &ref), 0,
	       "another boot: nothing restored, nothing recovered");
}

/* Down 5 s with SOURCE's counters going on: recovered, every domain the
 * source measures as the agent that never stopped has it. */
static void
check_recovered(const char *kind)
{
	struct ceems_agent_job_report r, ref;
	char name[160];
	int domains = 0, same = 0;

	snprintf(name, sizeof(name), "%s: killed, restarted 5 s later, restored", kind);
	is_int(kill_and_restart(5, NOTHING, &r, &ref), 1, name);
	snprintf(name, sizeof(name), "%s: no gap", kind);
	is_near(r.gap_s, 0, 0, name);
	snprintf(name, sizeof(name), "%s: the 5 s are recovered", kind);
	is_near(r.recovered_s, 5, 1e-9, name);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		double cov = -1, ref_cov = -1;

		if (!ceems_job_figures_ledger_coverage(&ref.ledger, d, &ref_cov))
			continue;
		domains++;
		if (ceems_job_figures_ledger_coverage(&r.ledger, d, &cov) && cov == 1 &&
		    ref_cov == 1 && fabs(r.ledger.joules[d] - ref.ledger.joules[d]) < 1e-6 &&
		    (d == CEEMS_DOMAIN_GPU || r.ledger.joules[d] > 0))
			same++;
	}
	snprintf(name, sizeof(name), "%s: %d of %d domains covered 100%% with the reference's energy (package %.3f J)",
		 kind, same, domains, r.ledger.joules[CEEMS_DOMAIN_PACKAGE]);
	ok(domains >= 2 && same == domains, "%s", name);
	snprintf(name, sizeof(name), "%s: the same CPU time", kind);
	is_near(r.cpu_s, ref.cpu_s, 1e-9, name);
}

static void
check_gap(enum while_down what, const char *why)
{
	struct ceems_agent_job_report r, ref;
	char name[160];

	snprintf(name, sizeof(name), what == NEW_BOOT ? "%s: nothing restored" :
		 "%s: restored", why);
	is_int(kill_and_restart(5, what, &r, &ref), what == NEW_BOOT ? 0 : 1, name);
	if (what == NEW_BOOT)
		return;
	snprintf(name, sizeof(name), "%s: the 5 s are a gap", why);
	is_near(r.gap_s, 5, 1e-9, name);
	snprintf(name, sizeof(name), "%s: nothing recovered", why);
	is_near(r.recovered_s, 0, 0, name);
}

/* hwmon energy channels and pm_counters are cumulative: recovered when
 * the same run of the counters reads on; a gap over a reset, a device
 * made again, a controller restart (even with counters that read as if
 * they went on), an unknown run, another boot. */
static void
test_other_sources(void)
{
	source = SOURCE_HWMON;
	check_recovered("hwmon");
	check_gap(RESET_COUNTER, "hwmon: a counter went back while down");
	check_gap(NEW_DEVICE, "hwmon: a device made again while down");
	check_gap(NEW_BOOT, "hwmon: another boot");

	source = SOURCE_PM;
	check_recovered("pm_counters");
	check_gap(RESET_COUNTER, "pm_counters: a counter went back while down");
	check_gap(NEW_RUN, "pm_counters: the controller restarted while down");
	check_gap(NO_STARTUP, "pm_counters: startup unreadable at the restart");
	write_u64(sys_root, PM "startup", 1687000000000000ULL);
	check_gap(NEW_BOOT, "pm_counters: another boot");
	source = SOURCE_RAPL;
}

/* A power-only channel is integrated, not cumulative: with one in the
 * source, the interval stays a gap. */
static void
test_not_cumulative(void)
{
	source = SOURCE_HWMON;
	write_u64(sys_root, HWMON "hwmon3/power2_input", 15000000);
	check_gap(NOTHING, "hwmon with a power channel (DIMM)");
	source = SOURCE_RAPL;
}

/* A job registered after the last tick, checkpointed before the next:
 * restored after the restart, its time since registration a gap (its
 * figures are not of the node's checkpoint). */
static void
test_registered_after_tick(void)
{
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *b;

	set_boot_id("3c1d2e4f-0000-4000-8000-00000000b009\n");
	b = open_agent("state-late", 500 * SEC);
	run_for(1);
	ceems_agent_tick(b, 501 * SEC);
	job42_spec(&spec);
	is_int(ceems_agent_register(b, &spec, 501 * SEC + SEC / 2), 0,
	       "a job registers between two ticks");
	ceems_agent_checkpoint(b, 501 * SEC + SEC / 2);
	ceems_agent_open_close(b);
	b = open_agent("state-late", 503 * SEC);
	is_int(ceems_agent_restore(b, 503 * SEC), 1, "it is restored");
	is_int(ceems_agent_report(b, 42, &r), 0, "and reports");
	is_near(r.gap_s, 1.5, 1e-9, "its 1.5 s since registration are a gap");
	ceems_agent_open_close(b);
}

/* Job 43: a copy of job 42's cgroup in every controller. */
static void
job43_make(struct ceems_agent_job_spec *spec)
{
	static const char *const ctl[] = {
		"blkio", "cpu,cpuacct", "cpuset", "freezer", "memory",
	};
	char from[PATH_MAX], to[PATH_MAX];

	for (size_t i = 0; i < sizeof(ctl) / sizeof(ctl[0]); i++) {
		snprintf(from, sizeof(from), "%s/sys/fs/cgroup/%s/slurm_localhost/uid_1000/job_42",
			 cg_root, ctl[i]);
		snprintf(to, sizeof(to), "%s/sys/fs/cgroup/%s/slurm_localhost/uid_1000/job_43",
			 cg_root, ctl[i]);
		if (access(from, F_OK) == 0)
			tmptree_copy(from, to);
	}
	job42_spec(spec);
	spec->jobid = 43;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		char *p = strstr(spec->cgroup.v1[c], "job_42");

		if (p != NULL)
			p[5] = '3';
	}
}

static double
package_j(const struct ceems_agent_job_report *r)
{
	return r->ledger.joules[CEEMS_DOMAIN_PACKAGE];
}

static double
tick_rest_j(const struct ceems_agent *a)
{
	const struct ceems_ledger_tick *t = ceems_agent_last_tick(a);

	return t->system_j[CEEMS_DOMAIN_PACKAGE] + t->idle_j[CEEMS_DOMAIN_PACKAGE];
}

/* Jobs 42 and 43 on the node; a checkpoint at a tick; job 43 leaves
 * 0.5 s later (its record holds its share up to then); the agent is
 * killed before the next tick and restarted.  What the restarted agent
 * charges over the interval from the checkpoint (job 43's last part,
 * job 42's, the system's and idle) is never more than the node's
 * package energy in it, as for an agent that never stopped, which
 * charges exactly that. */
static void
test_job_left_after_checkpoint(void)
{
	struct ceems_agent_job_spec s42, s43;
	struct ceems_agent_job_report a42, a43, b42, b43, tmp;
	struct ceems_agent *a, *b;
	uint64_t t0 = 700 * SEC;
	double a_from[2], b_from[2], a_sum, b_sum, node_j_from, node_delta;

	set_boot_id("3c1d2e4f-0000-4000-8000-00000000b00a\n");
	job42_spec(&s42);
	job43_make(&s43);
	a = open_agent("state-left-ref", t0);
	b = open_agent("state-left", t0);
	if (ceems_agent_register(a, &s42, t0) != 0 || ceems_agent_register(a, &s43, t0) != 0 ||
	    ceems_agent_register(b, &s42, t0) != 0 || ceems_agent_register(b, &s43, t0) != 0) {
		ok(0, "jobs 42 and 43 register");
		return;
	}
	run_for(1);
	write_u64(cg_root, JOB43_CPUACCT, job_ns / 4);
	ceems_agent_tick(a, t0 + SEC);
	ceems_agent_tick(b, t0 + SEC);
	ceems_agent_checkpoint(b, t0 + SEC);
	node_j_from = (double)(pkg0_uj + pkg1_uj) / 1e6;
	ceems_agent_report(a, 42, &tmp);
	a_from[0] = package_j(&tmp);
	ceems_agent_report(a, 43, &tmp);
	a_from[1] = package_j(&tmp);
	ceems_agent_report(b, 42, &tmp);
	b_from[0] = package_j(&tmp);
	ceems_agent_report(b, 43, &tmp);
	b_from[1] = package_j(&tmp);

	run_for(0.5);
	write_u64(cg_root, JOB43_CPUACCT, job_ns / 4);
	ceems_agent_deregister(a, 43, t0 + SEC + SEC / 2, &a43);
	ceems_agent_deregister(b, 43, t0 + SEC + SEC / 2, &b43);
	ceems_agent_release(a, 43);
	ceems_agent_release(b, 43);
	ok(fabs(package_j(&b43) - package_j(&a43)) < 1e-9 && package_j(&b43) > 0,
	   "job 43 leaves 0.5 s after the checkpoint: its record as the reference's (%.3f J)",
	   package_j(&b43));
	/* A checkpoint between its departure and the kill keeps the mark. */
	ceems_agent_checkpoint(b, t0 + SEC + SEC * 7 / 10);
	ceems_agent_open_close(b);	/* killed before the next tick */

	run_for(3.5);
	b = open_agent("state-left", t0 + 5 * SEC);
	is_int(ceems_agent_restore(b, t0 + 5 * SEC), 1, "restarted: job 42 restored");
	run_for(1);
	ceems_agent_tick(a, t0 + 6 * SEC);
	ceems_agent_tick(b, t0 + 6 * SEC);
	node_delta = (double)(pkg0_uj + pkg1_uj) / 1e6 - node_j_from;
	ceems_agent_report(a, 42, &a42);
	if (ceems_agent_report(b, 42, &b42) != 0)
		memset(&b42, 0, sizeof(b42));
	a_sum = package_j(&a42) - a_from[0] + package_j(&a43) - a_from[1] + tick_rest_j(a);
	b_sum = package_j(&b42) - b_from[0] + package_j(&b43) - b_from[1] + tick_rest_j(b);
	ok(fabs(a_sum - node_delta) < 1e-6,
	   "never stopped: the jobs, system and idle add up to the node's %.3f J (%.3f J)",
	   node_delta, a_sum);
	ok(b_sum <= node_delta + 1e-6,
	   "restarted: they add up to %.3f J, not more than the node's (no double count)",
	   b_sum);
	is_near(b42.gap_s, 4, 1e-9, "job 42's 4 s since the checkpoint are a gap");
	is_near(b42.recovered_s, 0, 0, "nothing recovered");
	ceems_agent_open_close(a);
	ceems_agent_open_close(b);
}

/* The eBPF and perf counts a checkpoint holds (the fixture trees have
 * no eBPF or perf: set here as a live agent would have counted them). */
static struct ceems_agent_io_report saved_io;
static struct ceems_perf_report saved_perf;

static int
put_counts(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	   uint64_t registered_ns, const struct state_figures *fig)
{
	struct state_figures *f = malloc(sizeof(*f));

	(void)spec;
	(void)registered_ns;
	if (f == NULL)
		return 0;
	*f = *fig;
	f->io = saved_io;
	f->perf = saved_perf;
	ceems_agent_state_slot_update(arg, slot, f);
	free(f);
	return 0;
}

/* Rename job 42's directory in every hierarchy FROM to TO. */
static void
rename_job42(const char *from, const char *to)
{
	static const char *const hier[] = { "blkio", "cpu,cpuacct", "cpuset",
		"freezer", "memory", NULL };
	char a[PATH_MAX], b[PATH_MAX];

	for (int i = 0; hier[i] != NULL; i++) {
		snprintf(a, sizeof(a), "%s/sys/fs/cgroup/%s/slurm_localhost/uid_1000/%s",
			 cg_root, hier[i], from);
		snprintf(b, sizeof(b), "%s/sys/fs/cgroup/%s/slurm_localhost/uid_1000/%s",
			 cg_root, hier[i], to);
		rename(a, b);
	}
}

/* Killed with eBPF and perf counts in its checkpoint: the restarted
 * agent's report of the job holds them (its cgroup gone meanwhile:
 * nothing more to count) with the time it was down, or, where it cannot
 * count again (no eBPF on these trees), says so: never a part as the
 * whole, never 0. */
static void
test_counts_across_restart(void)
{
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	struct state_file *sf;
	uint64_t t0 = 900 * SEC, restart = t0 + 6 * SEC;
	char dir[PATH_MAX];
	int err = 0;

	set_boot_id("3c1d2e4f-0000-4000-8000-00000000b00a\n");
	memset(&saved_io, 0, sizeof(saved_io));
	saved_io.have_io = saved_io.have_net = true;
	saved_io.read_bytes = (uint64_t)getpid() * 512;
	saved_io.write_bytes = 2 * saved_io.read_bytes;
	memset(&saved_perf, 0, sizeof(saved_perf));
	saved_perf.sw_status = CEEMS_PERF_MEASURED;
	saved_perf.hw_status = CEEMS_PERF_OFF;
	saved_perf.present = (1u << CEEMS_PERF_NSW) - 1;
	saved_perf.running_fraction = 1;
	saved_perf.value[CEEMS_PERF_PAGE_FAULTS] = (double)getpid();

	for (int gone = 1; gone >= 0; gone--) {
		a = open_agent("state-counts", t0);
		job42_spec(&spec);
		if (ceems_agent_register(a, &spec, t0) != 0) {
			ok(false, "job 42 registers");
			return;
		}
		run_for(1);
		ceems_agent_tick(a, t0 + SEC);
		ceems_agent_checkpoint(a, t0 + SEC);
		ceems_agent_open_close(a);	/* killed */

		snprintf(dir, sizeof(dir), "%s/state-counts", proc_root);
		sf = ceems_agent_state_file_open(dir, 8, "3c1d2e4f-0000-4000-8000-00000000b00a",
				     &err);
		if (sf == NULL || ceems_agent_state_file_restore(sf, put_counts, sf) != 1) {
			ok(false, "the checkpoint is there (%d)", err);
			return;
		}
		ceems_agent_state_file_close(sf);

		if (gone)
			rename_job42("job_42", "job_42.gone");
		a = open_agent("state-counts", restart);
		is_int(ceems_agent_restore(a, restart), 1, "the job is restored");
		if (ceems_agent_report_now(a, 42, restart, &r) != 0)
			memset(&r, 0, sizeof(r));
		if (gone) {
			ok(r.io.have_io && r.io.read_bytes == saved_io.read_bytes &&
			   r.io.write_bytes == saved_io.write_bytes,
			   "ended while the agent was down: its IO is the checkpoint's");
			is_near(r.io.unmeasured_s, 5, 1e-9, "the 5 s the agent was down are said (IO)");
			ok(r.perf.sw_status == CEEMS_PERF_MEASURED &&
			   r.perf.value[CEEMS_PERF_PAGE_FAULTS] == (double)getpid(),
			   "its perf counts are the checkpoint's");
			is_near(r.perf.unmeasured_s, 5, 1e-9, "the 5 s are said (perf)");
			rename_job42("job_42.gone", "job_42");
		} else {
			ok(!r.io.have_io && r.io.read_bytes == 0 &&
			   strstr(r.io.absent_why, "after an agent restart") != NULL,
			   "not counted again here: IO absent, and why (%s)", r.io.absent_why);
			ok(r.perf.sw_status != CEEMS_PERF_MEASURED && r.perf.present == 0,
			   "perf not counted again here: absent (%s)",
			   ceems_measure_perf_status_name(r.perf.sw_status));
		}
		ceems_agent_open_close(a);
		tmptree_remove(dir);
	}
}

int
main(void)
{
	ceems_log_set_level(CEEMS_LOG_ERROR);
	make_recover_trees();
	move_sources(0, 0, 0, 0, 0);	/* every source's counters from here */
	test_rule();
	test_recovered();
	test_gaps();
	test_registered_after_tick();
	test_other_sources();
	test_not_cumulative();
	test_job_left_after_checkpoint();
	test_counts_across_restart();
	done_testing();
}
