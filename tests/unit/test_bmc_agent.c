/* test_bmc_agent.c - the agent engine with its node energy from a
 * simulated BMC: OpenIPMI's ipmi_sim on loopback over LANplus
 * (tests/harness/bmc.sh), whose power sensor the test moves while the
 * agent ticks.  The node's energy matches the simulator's integral
 * within 2%, the residual balances and goes to a job by its allocated
 * cores and the rest to idle; the same through DCMI Get Power Reading
 * (tests/doubles/ipmi_sim_dcmi.c), where a stale reading (the same
 * stamp) makes gaps and a BMC answering 0 W sends the source to the SDR
 * sensor; and every failure (BMC down at
 * start, lost mid-run, wrong password, no such sensor, garbage, a
 * credentials file others can read) is one clear log line and gaps,
 * never a stall of the tick.  Needs root and ipmi_sim; skipped
 * otherwise. */
#include "config.h"

#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "model/ledger.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"

#define SEC 1000000000ULL
#define MS 1000000ULL
#define RAPL "class/powercap/"
#define PKG_W 50.0
#define DRAM_W 5.0
/* A tick that waited for the BMC would take its timeout (1 s): far above
 * this, which leaves room for a loaded test machine. */
#define TICK_BOUND (250 * MS)

static char sys_root[200], cg_root[200], proc_root[200], sim_dir[220];
static char harness[4096], dcmi_module[4096];
static char buf[8192];
static int port;
static unsigned long long pkg_uj = 100000000ULL, dram_uj = 20000000ULL;

/* Log lines about the BMC, as the agent writes them. */
static unsigned bmc_warnings, bmc_infos;
static char last_warning[1024], last_info[1024], chosen_log[1024];

static void
on_log(enum ceems_log_level level, const char *line, void *arg)
{
	(void)arg;
	if (strncmp(line, "BMC", 3) != 0)
		return;
	if (level <= CEEMS_LOG_WARNING) {
		bmc_warnings++;
		snprintf(last_warning, sizeof(last_warning), "%s", line);
	} else {
		bmc_infos++;
		snprintf(last_info, sizeof(last_info), "%s", line);
		if (strstr(line, "node power from") != NULL)
			snprintf(chosen_log, sizeof(chosen_log), "%s", line);
	}
	printf("# log: %s\n", line);
}

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * SEC + (uint64_t)ts.tv_nsec;
}

/* tests/harness/bmc.sh VERB SIM_DIR [ARG]. */
static int
run_harness_arg(const char *verb, const char *arg)
{
	pid_t pid;
	int status;

	pid = fork();
	if (pid == 0) {
		execl("/bin/bash", "bash", harness, verb, sim_dir, arg,
		      (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int
run_harness(const char *verb)
{
	char port_text[16];

	snprintf(port_text, sizeof(port_text), "%d", port);
	return run_harness_arg(verb, strcmp(verb, "start") == 0 ?
			       port_text : NULL);
}

/* The sensor's raw byte, through the simulator's console: the power is
 * twice it. */
static void
set_power_raw(const char *raw)
{
	if (run_harness_arg("set", raw) != 0)
		printf("# cannot set the simulated power to %s\n", raw);
}

static void
write_u64(const char *rel, unsigned long long v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", v);
	tmptree_write(sys_root, rel, text);
}

/* Package and DRAM spend their constant power over DT seconds. */
static void
move_rapl(double dt)
{
	pkg_uj += (unsigned long long)(PKG_W * dt * 1e6);
	dram_uj += (unsigned long long)(DRAM_W * dt * 1e6);
	write_u64(RAPL "intel-rapl:0/energy_uj", pkg_uj);
	write_u64(RAPL "intel-rapl:0:1/energy_uj", dram_uj);
}

static void
make_trees(void)
{
	char path[PATH_MAX];

	const char *tree = tmptree_new(fixture_path("sys/rapl-intel"));

	if (strlen(tree) >= sizeof(sys_root))
		tmptree_die("path too long", tree);
	memcpy(sys_root, tree, strlen(tree) + 1);
	tree = tmptree_new(fixture_path("cgroup/v1"));
	if (strlen(tree) >= sizeof(cg_root))
		tmptree_die("path too long", tree);
	memcpy(cg_root, tree, strlen(tree) + 1);
	snprintf(proc_root, sizeof(proc_root), "%s/ceems-test-proc-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(proc_root) == NULL)
		tmptree_die("mkdtemp", proc_root);
	snprintf(path, sizeof(path), "%s/self", proc_root);
	mkdir(path, 0755);
	tmptree_write(proc_root, "self/mountinfo",
		      fixture_text("cgroup/v1/mountinfo.txt", buf, sizeof(buf)));
	tmptree_write(proc_root, "meminfo",
		      fixture_text("proc/meminfo", buf, sizeof(buf)));
	tmptree_write(proc_root, "stat",
		      "cpu  0 0 0 100000 0 0 0 0 0 0\n"
		      "cpu0 0 0 0 25000 0 0 0 0 0 0\ncpu1 0 0 0 25000 0 0 0 0 0 0\n"
		      "cpu2 0 0 0 25000 0 0 0 0 0 0\ncpu3 0 0 0 25000 0 0 0 0 0 0\n"
		      "intr 0\n");
	snprintf(sim_dir, sizeof(sim_dir), "%s/bmc", proc_root);
	mkdir(sim_dir, 0700);
	move_rapl(0);
}

static const char *privilege = "user";
static const char *bmc_mode = "lan";

static struct ceems_agent *
open_agent(const char *creds, const char *sensor)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	ceems_conf_defaults(&c);
	snprintf(c.sysfs_root, sizeof(c.sysfs_root), "%s", sys_root);
	snprintf(c.procfs_root, sizeof(c.procfs_root), "%s", proc_root);
	snprintf(c.cgroupfs_prefix, sizeof(c.cgroupfs_prefix), "%s", cg_root);
	snprintf(c.state_dir, sizeof(c.state_dir), "%s/state", proc_root);
	c.idle_power_package_w = 20;
	c.idle_power_dram_w = 2;
	c.max_jobs = 4;
	snprintf(c.bmc, sizeof(c.bmc), "%s", bmc_mode);
	snprintf(c.bmc_host, sizeof(c.bmc_host), "127.0.0.1:%d", port);
	snprintf(c.bmc_credentials_file, sizeof(c.bmc_credentials_file), "%s",
		 creds);
	snprintf(c.bmc_sensor, sizeof(c.bmc_sensor), "%s", sensor);
	snprintf(c.bmc_workarounds, sizeof(c.bmc_workarounds), "opensesspriv");
	snprintf(c.bmc_privilege, sizeof(c.bmc_privilege), "%s", privilege);
	c.bmc_interval_ns = 100 * MS;
	c.bmc_timeout_ns = 1000 * MS;
	a = ceems_agent_open(&c, mono_ns(), err, sizeof(err));
	if (a == NULL)
		printf("# agent open: %s\n", err);
	return a;
}

/* What ticking for a while saw. */
struct run {
	unsigned ticks, measured, gaps;
	uint64_t slowest_ns;		/* the longest tick call */
	double node_j, want_j;		/* measured, and the simulator's */
	double worst_balance;		/* |residual + clamped - (node - inner)| */
	double idle_system_j, residual_j, idle_j, clamped_j;
};

/* Called before every tick when set: the DCMI double's BMC moves on. */
static void (*before_tick)(void);

/* Tick every 100 ms for SECONDS; the simulator's power is WATTS (for
 * want_j) over the measured ticks.  Stops early at the first measured
 * tick when UNTIL_MEASURED. */
static void
tick_for(struct ceems_agent *a, double seconds, double watts,
	 bool until_measured, struct run *r)
{
	uint64_t end = mono_ns() + (uint64_t)(seconds * 1e9), last = mono_ns();

	while (mono_ns() < end) {
		const struct ceems_ledger_tick *t;
		uint64_t now, took;
		double dt;

		usleep(100000);
		if (before_tick != NULL)
			before_tick();
		now = mono_ns();
		dt = (double)(now - last) / 1e9;
		last = now;
		move_rapl(dt);
		ceems_agent_tick(a, now);
		took = mono_ns() - now;
		if (took > r->slowest_ns)
			r->slowest_ns = took;
		t = ceems_agent_last_tick(a);
		r->ticks++;
		if (t->measured[CEEMS_DOMAIN_NODE] &&
		    t->gap[CEEMS_DOMAIN_NODE] == CEEMS_GAP_NONE) {
			double inner = t->delta_j[CEEMS_DOMAIN_PACKAGE] +
				       t->delta_j[CEEMS_DOMAIN_DRAM];
			double bal = fabs(t->delta_j[CEEMS_DOMAIN_NODE] +
					  t->residual_clamped_j -
					  (t->node_source_j - inner));

			r->measured++;
			r->node_j += t->node_source_j;
			r->want_j += watts * dt;
			r->residual_j += t->delta_j[CEEMS_DOMAIN_NODE];
			r->idle_system_j += t->idle_j[CEEMS_DOMAIN_NODE] +
					    t->system_j[CEEMS_DOMAIN_NODE];
			r->idle_j += t->idle_j[CEEMS_DOMAIN_NODE];
			r->clamped_j += t->residual_clamped_j;
			if (bal > r->worst_balance)
				r->worst_balance = bal;
			if (until_measured)
				return;
		} else {
			r->gaps++;
		}
	}
}

/* Job 42 of the cgroup fixture, holding ALLOC of the node's 4 cores. */
static int
register_job(struct ceems_agent *a, uint32_t alloc)
{
	struct ceems_agent_job_spec spec;

	memset(&spec, 0, sizeof(spec));
	if (ceems_cgroup_path_job_from_proc(fixture_text("cgroup/v1/cgroup-localhost-batch.txt",
						    buf, sizeof(buf)),
				       42, &spec.cgroup) != 0)
		return -1;
	spec.jobid = 42;
	spec.uid = 1000;
	spec.alloc_cores = alloc;
	return ceems_agent_register(a, &spec, mono_ns());
}

static void
test_down_then_up_then_lost(const char *creds)
{
	struct ceems_agent *a;
	struct ceems_agent_job_report job;
	struct run r = { 0 };
	unsigned warnings;

	bmc_warnings = bmc_infos = 0;
	a = open_agent(creds, "auto");
	if (!ok(a != NULL, "the agent opens with bmc = lan"))
		return;
	tick_for(a, 2.5, 200, false, &r);
	is_int(r.measured, 0, "BMC down at start: no tick measures the node");
	ok(r.gaps == r.ticks && r.ticks >= 10, "every tick is a node gap (%u of %u)",
	   r.gaps, r.ticks);
	is_int(bmc_warnings, 1, "one warning for the BMC down, not one per tick");
	ok(r.slowest_ns < TICK_BOUND, "no tick waits for the BMC (slowest %.1f ms)",
	   (double)r.slowest_ns / 1e6);

	if (!ok(run_harness("start") == 0, "the simulated BMC starts"))
		goto out;
	memset(&r, 0, sizeof(r));
	tick_for(a, 8, 200, true, &r);
	ok(r.measured == 1, "once it answers, the node measures again");
	ok(bmc_infos >= 2, "and the agent says so, and how it reads (%u lines)", bmc_infos);

	/* Now the integral: 200 W for 5 s, then 300 W for 5 s, while a job
	 * holds one core of four. */
	is_int(register_job(a, 1), 0, "a job holding 1 core of 4 registers");
	memset(&r, 0, sizeof(r));
	tick_for(a, 5, 200, false, &r);
	set_power_raw("150");
	tick_for(a, 5, 300, false, &r);
	memset(&job, 0, sizeof(job));
	is_int(ceems_agent_deregister(a, 42, mono_ns(), &job), 0, "the job leaves");
	ok(r.gaps == 0, "no gap while the BMC answers (%u)", r.gaps);
	ok(fabs(r.node_j - r.want_j) <= 0.02 * r.want_j,
	   "node energy %.1f J is the simulator's integral %.1f J within 2%%",
	   r.node_j, r.want_j);
	ok(r.worst_balance < 1e-6,
	   "every tick: residual + clamped = BMC - package - DRAM (worst %g J)",
	   r.worst_balance);
	/* Within 0.5%: the job's first tick counts from its registration,
	 * and what it used after the last tick is split at its leaving
	 * (ledger_carry.h), outside the ticks summed here. */
	ok(fabs(job.ledger.joules[CEEMS_DOMAIN_NODE] - r.residual_j / 4) <
	   0.005 * r.residual_j,
	   "the job gets its cores' share of the residual: %.1f J of %.1f J",
	   job.ledger.joules[CEEMS_DOMAIN_NODE], r.residual_j);
	ok(fabs(r.idle_j - r.residual_j * 3 / 4) < 0.005 * r.residual_j,
	   "idle gets the unallocated cores' share: %.1f J", r.idle_j);
	ok(fabs(job.ledger.joules[CEEMS_DOMAIN_NODE] + r.idle_system_j -
		r.residual_j) < 0.005 * r.residual_j,
	   "job + idle + system = the residual");
	ok(r.residual_j > 0.6 * r.node_j, "the residual is the BMC's share beyond package and DRAM");

	/* A BMC reading below package + DRAM (40 W < 55 W): the residual
	 * is negative, clamped to 0 and recorded. */
	set_power_raw("20");
	memset(&r, 0, sizeof(r));
	tick_for(a, 1, 40, false, &r);	/* the new reading takes over */
	memset(&r, 0, sizeof(r));
	tick_for(a, 3, 40, false, &r);
	ok(r.measured >= 20 && r.residual_j == 0,
	   "a negative residual is clamped: no node energy to split (%.3f J)",
	   r.residual_j);
	ok(fabs(r.clamped_j - (PKG_W + DRAM_W - 40) * r.want_j / 40) <
	   0.05 * r.clamped_j,
	   "and recorded: %.1f J clamped, %.1f J of package and DRAM beyond the BMC",
	   r.clamped_j, (PKG_W + DRAM_W - 40) * r.want_j / 40);
	set_power_raw("100");

	/* Garbage: the sensor reads 0 W. */
	warnings = bmc_warnings;
	set_power_raw("0");
	memset(&r, 0, sizeof(r));
	tick_for(a, 2.5, 0, false, &r);
	ok(r.gaps > 0, "a 0 W reading is garbage: the node is a gap (%u ticks)", r.gaps);
	is_int(bmc_warnings, warnings + 1, "one warning for the garbage");
	ok(strstr(last_warning, "not a node's power") != NULL, "it says why: %s",
	   last_warning);
	set_power_raw("100");
	memset(&r, 0, sizeof(r));
	tick_for(a, 6, 200, true, &r);
	ok(r.measured == 1, "a good reading again: it measures again");

	/* Lost mid-run. */
	warnings = bmc_warnings;
	run_harness("stop");
	memset(&r, 0, sizeof(r));
	tick_for(a, 3, 200, false, &r);
	ok(r.gaps >= 10, "BMC lost mid-run: the node's ticks become gaps (%u)", r.gaps);
	ok(r.measured <= 15, "after at most the hold time (%u measured)", r.measured);
	is_int(bmc_warnings, warnings + 1, "one warning for the loss");
	ok(r.slowest_ns < TICK_BOUND, "no tick waits for the lost BMC (slowest %.1f ms)",
	   (double)r.slowest_ns / 1e6);
out:
	ceems_agent_open_close(a);
}

/* The DCMI double's answer: WATTS, a stamp that moves every other tick
 * (a BMC updating its reading every 200 ms) unless frozen. */
static unsigned dcmi_watts = 250, dcmi_stamp = 1000, dcmi_ticks;
static bool dcmi_frozen;

static void
dcmi_move(void)
{
	char text[64], from[PATH_MAX], to[PATH_MAX];

	if (!dcmi_frozen && dcmi_ticks++ % 2 == 0)
		dcmi_stamp++;
	snprintf(text, sizeof(text), "%u %u 1\n", dcmi_watts, dcmi_stamp);
	tmptree_write(sim_dir, "dcmi.new", text);
	snprintf(from, sizeof(from), "%s/dcmi.new", sim_dir);
	snprintf(to, sizeof(to), "%s/dcmi", sim_dir);
	rename(from, to);
}

static int
start_dcmi_sim(void)
{
	pid_t pid;
	int status;
	char port_text[16];

	dcmi_move();
	snprintf(port_text, sizeof(port_text), "%d", port);
	pid = fork();
	if (pid == 0) {
		execl("/bin/bash", "bash", harness, "start", sim_dir, port_text,
		      dcmi_module, (char *)NULL);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void
test_dcmi(const char *creds)
{
	struct ceems_agent *a;
	struct run r = { 0 };
	unsigned warnings;

	if (access(dcmi_module, R_OK) != 0) {
		printf("ok - # SKIP no DCMI double at %s (OpenIPMI's headers, libopenipmi-dev, were missing at configure)\n",
		       dcmi_module);
		return;
	}
	if (!ok(start_dcmi_sim() == 0, "the simulated BMC starts with DCMI"))
		return;
	privilege = "admin";
	bmc_warnings = bmc_infos = 0;
	last_warning[0] = '\0';
	before_tick = dcmi_move;
	a = open_agent(creds, "auto");
	privilege = "user";
	if (!ok(a != NULL, "the agent opens"))
		goto out;
	tick_for(a, 6, 250, true, &r);
	ok(r.measured == 1, "DCMI: the node measures");
	ok(strstr(last_info, "DCMI Get Power Reading") != NULL,
	   "through DCMI, and the agent says so: %s", last_info);

	/* 250 W for 5 s, then 350 W for 5 s, a new stamp every 200 ms. */
	memset(&r, 0, sizeof(r));
	tick_for(a, 5, 250, false, &r);
	dcmi_watts = 350;
	tick_for(a, 5, 350, false, &r);
	ok(r.gaps == 0, "no gap while the stamps move (%u)", r.gaps);
	ok(fabs(r.node_j - r.want_j) <= 0.02 * r.want_j,
	   "DCMI: node energy %.1f J is the simulator's integral %.1f J within 2%%",
	   r.node_j, r.want_j);

	/* The same stamp again and again: stale, never used as new. */
	warnings = bmc_warnings;
	dcmi_frozen = true;
	tick_for(a, 0.5, 350, false, &r);	/* its last stamp is read */
	dcmi_watts = 900;
	memset(&r, 0, sizeof(r));
	tick_for(a, 3, 350, false, &r);
	ok(r.gaps >= 10, "a stale DCMI reading: the node becomes a gap (%u ticks)", r.gaps);
	ok(r.node_j <= 350 * 1.5,
	   "the held power is the last fresh reading, not the stale 900 W (%.1f J)",
	   r.node_j);
	is_int(bmc_warnings, warnings + 1, "one warning for the stale readings");
	ok(strstr(last_warning, "same DCMI reading") != NULL, "it says why: %s",
	   last_warning);

	dcmi_frozen = false;
	dcmi_watts = 350;
	memset(&r, 0, sizeof(r));
	tick_for(a, 6, 350, true, &r);
	ok(r.measured == 1, "the stamps move again: the node measures again");

	/* 0 W with moving stamps: no meter behind DCMI; the SDR sensor
	 * (200 W) takes over. */
	warnings = bmc_warnings;
	dcmi_watts = 0;
	memset(&r, 0, sizeof(r));
	tick_for(a, 6, 200, false, &r);
	ok(bmc_warnings == warnings + 1 && strstr(last_warning, "0 W") != NULL,
	   "DCMI answering 0 W: one warning saying why: %s", last_warning);
	ok(strstr(chosen_log, "SDR sensor") != NULL,
	   "the SDR sensor takes over, and the agent says so: %s", chosen_log);
	memset(&r, 0, sizeof(r));
	tick_for(a, 2, 200, false, &r);
	ok(r.gaps == 0 && fabs(r.node_j - r.want_j) <= 0.05 * r.want_j,
	   "and the node measures its 200 W (%.1f J of %.1f J)", r.node_j,
	   r.want_j);
out:
	before_tick = NULL;
	ceems_agent_open_close(a);
	run_harness("stop");
}

/* An agent whose BMC never measures: its one warning holds NEEDLE. */
static void
expect_failure(const char *creds, const char *sensor, const char *needle,
	       const char *what)
{
	struct ceems_agent *a;
	struct run r = { 0 };

	bmc_warnings = 0;
	last_warning[0] = '\0';
	a = open_agent(creds, sensor);
	if (!ok(a != NULL, "%s: the agent opens", what))
		return;
	tick_for(a, 2.5, 0, false, &r);
	is_int(r.measured, 0, "no tick measures the node");
	is_int(bmc_warnings, 1, "one warning");
	ok(strstr(last_warning, needle) != NULL, "%s: it says so: %s", what,
	   last_warning);
	ok(r.slowest_ns < TICK_BOUND, "no tick waits (slowest %.1f ms)",
	   (double)r.slowest_ns / 1e6);
	ceems_agent_open_close(a);
}

static void
write_creds(const char *name, const char *text, mode_t mode)
{
	char path[PATH_MAX];

	tmptree_write(sim_dir, name, text);
	snprintf(path, sizeof(path), "%s/%s", sim_dir, name);
	chmod(path, mode);
}

int
main(void)
{
	char creds[240], wrong[240], open_creds[240];

	if (geteuid() != 0 || access("/usr/bin/ipmi_sim", X_OK) != 0) {
		printf("1..0 # SKIP needs root and OpenIPMI's ipmi_sim (Debian package openipmi)\n");
		return 0;
	}
	snprintf(harness, sizeof(harness), "%s/../harness/bmc.sh", fixture_root());
	snprintf(dcmi_module, sizeof(dcmi_module),
		 "%s/tests/doubles/.libs/ipmi_sim_dcmi.so",
		 getenv("CEEMS_TOP_BUILDDIR") != NULL ?
		 getenv("CEEMS_TOP_BUILDDIR") : ".");
	port = 16000 + (int)(getpid() % 4000);
	ceems_log_set_handler(on_log, NULL);
	make_trees();
	snprintf(creds, sizeof(creds), "%s/credentials", sim_dir);
	snprintf(wrong, sizeof(wrong), "%s/wrong", sim_dir);
	snprintf(open_creds, sizeof(open_creds), "%s/readable", sim_dir);
	write_creds("credentials", "username ceems\npassword ceems-test-pw\n", 0600);
	write_creds("wrong", "username ceems\npassword not-the-pw\n", 0600);
	write_creds("readable", "username ceems\npassword ceems-test-pw\n", 0644);

	test_down_then_up_then_lost(creds);
	test_dcmi(creds);

	if (ok(run_harness("start") == 0, "the simulated BMC starts again")) {
		expect_failure(wrong, "auto", "password", "wrong password");
		expect_failure(creds, "No Such Sensor", "No Such Sensor",
			       "sensor missing");
		expect_failure(open_creds, "auto", "chmod 600",
			       "credentials others can read");
		if (access("/dev/ipmi0", F_OK) != 0) {
			bmc_mode = "inband";
			expect_failure(creds, "auto", "kernel IPMI device",
				       "in band without /dev/ipmi0");
			bmc_mode = "lan";
		}
		run_harness("stop");
	}
	tmptree_remove(cg_root);
	tmptree_remove(sys_root);
	tmptree_remove(proc_root);
	return done_testing();
}
