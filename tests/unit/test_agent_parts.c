/* test_agent_parts.c - a tick taken in parts (ceems_agent_tick_begin,
 * _read, _end) with requests between the parts, as the agent serves
 * them: a step that ends after its job was read, a job that leaves and
 * one that registers mid-tick, reports.  Every job's CPU time is counted
 * once (none lost at the reading's boundary, none twice), and the ledger
 * balances: the energy of every job (the leavers' too) plus the ticks'
 * system and idle is the energy the node's counters moved. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/agent.h"
#include "base/log.h"
#include "../tap.h"
#include "log_tap.h"
#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

static char buf[8192];

/* The batch step's CPU time, ns; the node's other counters are
 * agent_sim.h's. */
static unsigned long long batch_ns = 2401000000ULL;

/* The node spends PKG_J and DRAM_J, is busy BUSY USER_HZ ticks; the job's
 * cgroup uses JOB_CPU_NS, its batch step BATCH_CPU_NS of it. */
static void
move_one_socket(double pkg_j, double dram_j, unsigned busy,
		unsigned long long job_cpu_ns, unsigned long long batch_cpu_ns)
{
	pkg0_uj += (unsigned long long)(pkg_j * 1e6);
	dram0_uj += (unsigned long long)(dram_j * 1e6);
	write_u64(sys_root, RAPL "intel-rapl:0/energy_uj", pkg0_uj);
	write_u64(sys_root, RAPL "intel-rapl:0:1/energy_uj", dram0_uj);
	busy_ticks += busy;
	write_proc_stat(busy_ticks);
	job_ns += job_cpu_ns;
	batch_ns += batch_cpu_ns;
	write_u64(cg_root, JOB42_CPUACCT, job_ns);
	write_u64(cg_root, BATCH_CPUACCT, batch_ns);
}

/* The simulated node of agent_sim.h, its counters written once. */
static void
make_parts_trees(void)
{
	make_trees();
	move_one_socket(0, 0, 0, 0, 0);
}

/* Job JOBID in job 42's cgroup (two jobs of the test may share one:
 * each is charged from its own baseline). */
static void
spec_for(struct ceems_agent_job_spec *spec, uint32_t jobid)
{
	memset(spec, 0, sizeof(*spec));
	spec->jobid = jobid;
	spec->uid = 1000;
	if (ceems_cgroup_path_job_from_proc(fixture_text("cgroup/v1/cgroup-localhost-batch.txt", buf, sizeof(buf)),
				       42, &spec->cgroup) != 0) {
		printf("Bail out! cannot resolve job 42's cgroup fixture\n");
		exit(1);
	}
	spec->jobid = jobid;
}

/* The node's energy per domain over the ticks, split into jobs, system
 * and idle, as the agent's status adds it up. */
struct sums {
	double delta[CEEMS_DOMAIN_COUNT], system[CEEMS_DOMAIN_COUNT],
	       idle[CEEMS_DOMAIN_COUNT], jobs[CEEMS_DOMAIN_COUNT];
};

static void
add_tick(struct sums *s, const struct ceems_agent *a)
{
	const struct ceems_ledger_tick *t = ceems_agent_last_tick(a);

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		s->delta[d] += t->delta_j[d];
		s->system[d] += t->system_j[d];
		s->idle[d] += t->idle_j[d];
	}
}

static void
add_job(struct sums *s, const struct ceems_agent_job_report *r)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		s->jobs[d] += r->ledger.joules[d];
}

static void
test_parts(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r42, r43, r44, now_r;
	struct ceems_agent_step_report st;
	struct ceems_agent *a;
	struct sums s;
	char err[256] = "";

	memset(&s, 0, sizeof(s));
	ceems_conf_defaults(&c);
	snprintf(c.sysfs_root, sizeof(c.sysfs_root), "%s", sys_root);
	snprintf(c.procfs_root, sizeof(c.procfs_root), "%s", proc_root);
	snprintf(c.cgroupfs_prefix, sizeof(c.cgroupfs_prefix), "%s", cg_root);
	snprintf(c.state_dir, sizeof(c.state_dir), "%s/state", proc_root);
	c.idle_power_package_w = 20;
	c.idle_power_dram_w = 2;
	c.usage_interval_ns = SEC;
	c.max_jobs = 8;
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens on fixture trees (%s)", err))
		return;
	spec_for(&spec, 42);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	is_int(ceems_agent_step_start(a, 42, "batch", 10 * SEC), 0, "its batch step starts");
	spec_for(&spec, 43);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 43 registers");

	/* A whole tick first: every job has a reading before. */
	move_one_socket(100, 10, 200, 1500000000ULL, 1000000000ULL);
	ceems_agent_tick(a, 11 * SEC);
	add_tick(&s, a);

	/* A tick in parts: job 42 is read, then the job uses 0.5 s more
	 * CPU (0.4 s in its batch step), which must fall in the next tick,
	 * not be lost. */
	move_one_socket(60, 6, 150, 1000000000ULL, 800000000ULL);
	ceems_agent_tick_begin(a, 12 * SEC);
	ok(ceems_agent_tick_open(a), "a tick is open after its beginning");
	ok(!ceems_agent_tick_read(a, 1), "one part reads one job of two");
	move_one_socket(10, 1, 50, 500000000ULL, 400000000ULL);
	/* Requests between the parts. */
	is_int(ceems_agent_step_end(a, 42, "batch", 12 * SEC + SEC / 5, &st), 0,
	       "job 42's batch step ends between the parts");
	is_near(st.cpu_s, 1.0 + 0.8 + 0.4, 1e-9,
		"the step's CPU time is all it used, read after its job's reading");
	is_int(ceems_agent_report_now(a, 42, 12 * SEC + SEC / 4, &now_r), 0,
	       "a report between the parts");
	is_near(now_r.cpu_s, 1.5 + 1.0 + 0.5, 1e-9,
		"it counts the job's CPU time to now, once");
	is_int(ceems_agent_deregister(a, 43, 12 * SEC + SEC * 3 / 10, &r43), 0,
	       "job 43 leaves between the parts");
	is_near(r43.cpu_s, 1.5 + 1.0 + 0.5, 1e-9,
		"the leaver's CPU time is all it used");
	add_job(&s, &r43);
	spec_for(&spec, 44);
	is_int(ceems_agent_register(a, &spec, 12 * SEC + SEC * 2 / 5), 0,
	       "job 44 registers between the parts");
	move_one_socket(20, 2, 40, 300000000ULL, 0);
	ok(ceems_agent_tick_read(a, 8), "the next part reads the rest");
	ceems_agent_tick_end(a, 12 * SEC + SEC / 2);
	add_tick(&s, a);
	ok(!ceems_agent_tick_open(a), "the tick is closed after its end");

	/* The next whole tick, then both jobs end. */
	move_one_socket(50, 5, 100, 700000000ULL, 0);
	ceems_agent_tick(a, 13 * SEC);
	add_tick(&s, a);
	is_int(ceems_agent_deregister(a, 42, 13 * SEC, &r42), 0, "job 42 deregisters");
	is_int(ceems_agent_deregister(a, 44, 13 * SEC, &r44), 0, "job 44 deregisters");
	add_job(&s, &r42);
	add_job(&s, &r44);
	is_near(r42.cpu_s, 1.5 + 1.0 + 0.5 + 0.3 + 0.7, 1e-9,
		"job 42's CPU time is what its cgroup used, the part after its "
		"reading counted in the next tick");
	is_near(r44.cpu_s, 0.3 + 0.7, 1e-9,
		"job 44, registered mid-tick, from its registration on");
	ok(r42.nsteps == 1 && r42.steps[0].ended &&
	   fabs(r42.steps[0].cpu_s - 2.2) < 1e-9, "the ended step keeps its CPU time");
	ok(r42.steps[0].joules[CEEMS_DOMAIN_PACKAGE] > 0 &&
	   r42.steps[0].joules[CEEMS_DOMAIN_PACKAGE] <= r42.ledger.joules[CEEMS_DOMAIN_PACKAGE],
	   "and its share of its job's energy (%.3f <= %.3f J)",
	   r42.steps[0].joules[CEEMS_DOMAIN_PACKAGE], r42.ledger.joules[CEEMS_DOMAIN_PACKAGE]);
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (d != CEEMS_DOMAIN_PACKAGE && d != CEEMS_DOMAIN_DRAM)
			continue;
		is_near(s.jobs[d] + s.system[d] + s.idle[d], s.delta[d], 1e-6,
			d == CEEMS_DOMAIN_PACKAGE ?
			"package: jobs + system + idle = what the counters moved" :
			"dram: jobs + system + idle = what the counters moved");
	}
	is_near(s.delta[CEEMS_DOMAIN_PACKAGE], 240, 1e-6,
		"the ticks' package delta is every joule the counter moved");
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(log_tap_warnings, NULL);
	make_parts_trees();
	test_parts();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
