/* test_agent_recover.c - the interval an agent restart leaves is
 * recovered from the cumulative counters when that is unambiguous, and
 * stays a gap when it is not: the rule alone (agent_recover.h), then the
 * engine on fixture trees, a restarted agent against one that never
 * stopped. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent.h"
#include "agent_recover.h"
#include "fileio.h"
#include "log.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define SEC 1000000000ULL
#define RAPL "class/powercap/"
#define JOB42_CPUACCT "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_42/cpuacct.usage"
#define BATCH_CPUACCT "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_42/step_batch/cpuacct.usage"

static char sys_root[200], cg_root[200], proc_root[200];
static char state_dir[256];
static char buf[8192];

/* Write /proc/stat for a 4-CPU node whose busy time is BUSY_TICKS (in
 * USER_HZ ticks, all as user time). */
static void
write_proc_stat(unsigned long long busy_ticks)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "cpu  %llu 0 0 100000 0 0 0 0 0 0\n"
		 "cpu0 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu1 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu2 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu3 0 0 0 25000 0 0 0 0 0 0\n"
		 "intr 0\n", busy_ticks);
	tmptree_write(proc_root, "stat", text);
}

static void
write_u64(const char *root, const char *rel, unsigned long long v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", v);
	tmptree_write(root, rel, text);
}

static void
make_trees(void)
{
	char path[PATH_MAX];

	snprintf(sys_root, sizeof(sys_root), "%s", tmptree_new(fixture_path("sys/rapl-intel")));
	snprintf(cg_root, sizeof(cg_root), "%s", tmptree_new(fixture_path("cgroup/v1")));
	snprintf(proc_root, sizeof(proc_root), "%s/ceems-test-proc-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(proc_root) == NULL)
		tmptree_die("mkdtemp", proc_root);
	snprintf(state_dir, sizeof(state_dir), "%s/state", proc_root);
	snprintf(path, sizeof(path), "%s/self", proc_root);
	mkdir(path, 0755);
	tmptree_write(proc_root, "self/mountinfo",
		      fixture_text("cgroup/v1/mountinfo.txt", buf, sizeof(buf)));
	tmptree_write(proc_root, "meminfo",
		      fixture_text("proc/meminfo", buf, sizeof(buf)));
	write_proc_stat(0);
}

static void
base_config(struct ceems_config *c)
{
	ceems_config_defaults(c);
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "%s", sys_root);
	snprintf(c->procfs_root, sizeof(c->procfs_root), "%s", proc_root);
	snprintf(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix), "%s", cg_root);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	snprintf(c->spool_dir, sizeof(c->spool_dir), "%s/spool", proc_root);
	snprintf(c->emissions_table, sizeof(c->emissions_table),
		 "%s/../../lib/data/carbon-intensity.tsv", fixture_root());
	snprintf(c->zone, sizeof(c->zone), "FR");
	c->pue = 1.5;
	c->idle_power_package_w = 20;
	c->idle_power_dram_w = 2;
	c->usage_interval_ns = SEC;
	c->max_jobs = 4;
}

static void
job42_spec(struct ceems_agent_job_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->jobid = 42;
	spec->uid = 1000;
	if (ceems_cgroup_job_from_proc(fixture_text("cgroup/v1/cgroup-localhost-batch.txt", buf, sizeof(buf)),
				       42, &spec->cgroup) != 0) {
		printf("Bail out! cannot resolve job 42's cgroup fixture\n");
		exit(1);
	}
}

/* The fixture's counters, moved forward by move(): energies in uJ. */
static unsigned long long pkg0_uj = 100000000ULL, pkg1_uj = 200000000ULL;
static unsigned long long dram0_uj = 20000000ULL, dram1_uj = 30000000ULL;
static unsigned long long busy_ticks, job_ns = 2483101234ULL;

/* Add PKG0_J and PKG1_J to the packages, DRAM_J split over the drams,
 * BUSY USER_HZ ticks to the node and CPU_NS to job 42. */
static void
move(double pkg0_j, double pkg1_j, double dram_j, unsigned busy,
     unsigned long long cpu_ns)
{
	pkg0_uj += (unsigned long long)(pkg0_j * 1e6);
	pkg1_uj += (unsigned long long)(pkg1_j * 1e6);
	dram0_uj += (unsigned long long)(dram_j * 0.6e6);
	dram1_uj += (unsigned long long)(dram_j * 0.4e6);
	write_u64(sys_root, RAPL "intel-rapl:0/energy_uj", pkg0_uj);
	write_u64(sys_root, RAPL "intel-rapl:1/energy_uj", pkg1_uj);
	write_u64(sys_root, RAPL "intel-rapl:0:1/energy_uj", dram0_uj);
	write_u64(sys_root, RAPL "intel-rapl:1:1/energy_uj", dram1_uj);
	busy_ticks += busy;
	write_proc_stat(busy_ticks);
	job_ns += cpu_ns;
	write_u64(cg_root, JOB42_CPUACCT, job_ns);
}

/* 1 s of the workload at DT_S seconds: job 42 uses 1.5 of 2 busy CPUs. */
static void
run_for(double dt_s)
{
	move(60 * dt_s, 40 * dt_s, 10 * dt_s, (unsigned)(200 * dt_s + 0.5),
	     (unsigned long long)(1.5e9 * dt_s));
}

static void
set_boot_id(const char *id)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/sys/kernel/random", proc_root);
	if (ceems_mkdir_p(path, 0755) < 0)
		tmptree_die("mkdir", path);
	tmptree_write(proc_root, "sys/kernel/random/boot_id", id);
}

static struct ceems_agent *
open_agent(const char *state, uint64_t now_ns)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	base_config(&c);
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

	is_int(ceems_recover_boot("b1", "b1"), CEEMS_RECOVER_OK, "same boot");
	is_int(ceems_recover_boot("b1", "b2"), CEEMS_RECOVER_OTHER_BOOT,
	       "another boot: a gap");
	is_int(ceems_recover_boot("unknown", "unknown"), CEEMS_RECOVER_OTHER_BOOT,
	       "an unknown boot: a gap");
	/* 1 J range, 100 W: it wraps at most once in 10 ms. */
	is_int(ceems_recover_counter(&saved, &lim, 200000, 10 * SEC + 5000000, &j),
	       CEEMS_RECOVER_OK, "one wrap within the wrap period: recovered");
	ceems_energy_counter_delta(&lim, saved.raw, 200000, 5000000, &direct);
	ok(j > 0 && j == direct, "as much energy as two samples would give (%.3f J)", j);
	is_int(ceems_recover_counter(&saved, &lim, 200000, 10 * SEC + 20000000, &j),
	       CEEMS_RECOVER_TOO_LONG, "longer than the wrap period: a gap");
	is_int(ceems_recover_counter(&saved, &lim, 100, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_RESET, "more energy than the power allows: a reset, a gap");
	saved.range = 2000000;
	is_int(ceems_recover_counter(&saved, &lim, 950000, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_RESET, "another range: another counter, a gap");
	saved.range = 1000000;
	saved.have = 0;
	is_int(ceems_recover_counter(&saved, &lim, 950000, 10 * SEC + 1000000, &j),
	       CEEMS_RECOVER_NO_CHECKPOINT, "no reading at the checkpoint: a gap");

	is_int(ceems_recover_job_verdict(&job), CEEMS_RECOVER_OK,
	       "the same cgroup, its CPU time moved on: recovered");
	other = job;
	other.cgroup_ino_now = 8;
	is_int(ceems_recover_job_verdict(&other), CEEMS_RECOVER_CGROUP_REPLACED,
	       "another cgroup under the name: a gap");
	other = job;
	other.gone = true;
	is_int(ceems_recover_job_verdict(&other), CEEMS_RECOVER_CGROUP_REPLACED,
	       "its cgroup gone: a gap");
	other = job;
	other.cpu_now_ns = 50;
	is_int(ceems_recover_job_verdict(&other), CEEMS_RECOVER_RESET,
	       "its CPU time went back: a gap");
	other = job;
	other.figures_tick_ns = 9 * SEC;
	is_int(ceems_recover_job_verdict(&other), CEEMS_RECOVER_NO_CHECKPOINT,
	       "figures of another tick than the node's: a gap");
}

/* A reference agent that never stops and one killed after its
 * checkpoint at 301 s, restarted at 301 + DOWN_S: both tick at 302 +
 * DOWN_S over the same counters.  WHAT is done to the node while the
 * second is down.  Returns the restarted agent's report in R, the
 * reference's in REF. */
enum while_down { NOTHING, RESET_COUNTER, NEW_CGROUP, NEW_BOOT };

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
	ceems_agent_close(b);	/* killed: no deregistration */

	run_for(down_s);
	if (what == RESET_COUNTER)
		write_u64(sys_root, RAPL "intel-rapl:0/energy_uj", 1000);
	if (what == NEW_CGROUP) {
		snprintf(path, sizeof(path), "%s/%s", cg_root, JOB42_CPUACCT);
		unlink(path);
		write_u64(cg_root, JOB42_CPUACCT, job_ns);
	}
	if (what == NEW_BOOT)
		set_boot_id("3c1d2e4f-0000-4000-8000-00000000b008\n");
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
	ceems_agent_close(a);
	ceems_agent_close(b);
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
	ok(ceems_job_ledger_coverage(&r.ledger, CEEMS_DOMAIN_PACKAGE, &cov) && cov == 1,
	   "package coverage 100%% (%.4f)", cov);
	ok(ceems_job_ledger_coverage(&r.ledger, CEEMS_DOMAIN_DRAM, &cov) && cov == 1,
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
	ceems_agent_close(b);
	b = open_agent("state-late", 503 * SEC);
	is_int(ceems_agent_restore(b, 503 * SEC), 1, "it is restored");
	is_int(ceems_agent_report(b, 42, &r), 0, "and reports");
	is_near(r.gap_s, 1.5, 1e-9, "its 1.5 s since registration are a gap");
	ceems_agent_close(b);
}

int
main(void)
{
	ceems_log_set_level(CEEMS_LOG_ERROR);
	make_trees();
	test_rule();
	test_recovered();
	test_gaps();
	test_registered_after_tick();
	done_testing();
}
