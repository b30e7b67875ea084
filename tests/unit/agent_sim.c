/* agent_sim.c - the simulated node of the agent-engine tests (agent_sim.h):
 * fixture trees copied to temporary directories whose counters the tests
 * move forward, tick by tick. */
#include "config.h"

#include <sys/stat.h>

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

char sys_root[200], cg_root[200], proc_root[200];
char state_dir[256];
static char buf[8192];

/* Write /proc/stat for a 4-CPU node whose busy time is TICKS (in
 * USER_HZ ticks, all as user time). */
void
write_proc_stat(unsigned long long ticks)
{
	char text[512];

	snprintf(text, sizeof(text),
		 "cpu  %llu 0 0 100000 0 0 0 0 0 0\n"
		 "cpu0 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu1 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu2 0 0 0 25000 0 0 0 0 0 0\n"
		 "cpu3 0 0 0 25000 0 0 0 0 0 0\n"
		 "intr 0\n", ticks);
	tmptree_write(proc_root, "stat", text);
}

void
write_u64(const char *root, const char *rel, unsigned long long v)
{
	char text[32];

	snprintf(text, sizeof(text), "%llu\n", v);
	tmptree_write(root, rel, text);
}

void
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

/* A test learning the idle power starts with nothing an earlier test's
 * agent learned (agent_idle_store.c); a test of the kept value opens its
 * second agent without base_config. */
static void
forget_learned_idle_power(void)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/idle-power", state_dir);
	(void)unlink(path);
}

void
base_config(struct ceems_config *c)
{
	ceems_conf_defaults(c);
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "%s", sys_root);
	snprintf(c->procfs_root, sizeof(c->procfs_root), "%s", proc_root);
	snprintf(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix), "%s", cg_root);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	forget_learned_idle_power();
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

void
job42_spec(struct ceems_agent_job_spec *spec)
{
	memset(spec, 0, sizeof(*spec));
	spec->jobid = 42;
	spec->uid = 1000;
	if (ceems_cgroup_path_job_from_proc(fixture_text("cgroup/v1/cgroup-localhost-batch.txt", buf, sizeof(buf)),
				       42, &spec->cgroup) != 0) {
		printf("Bail out! cannot resolve job 42's cgroup fixture\n");
		exit(1);
	}
}

/* The fixture's counters, moved forward by move(): energies in uJ. */
unsigned long long pkg0_uj = 100000000ULL, pkg1_uj = 200000000ULL;
unsigned long long dram0_uj = 20000000ULL, dram1_uj = 30000000ULL;
unsigned long long busy_ticks, job_ns = 2483101234ULL;

/* Add PKG0_J and PKG1_J to the packages, DRAM_J split over the drams,
 * BUSY USER_HZ ticks to the node and CPU_NS to job 42. */
void
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

/* One more second of a known workload: packages +60 J and +40 J, drams
 * +10 J, the node 2 CPU-seconds busy (USER_HZ 100) of which job 42 used
 * CPU_NS. */
void
advance(unsigned long long cpu_ns)
{
	move(60, 40, 10, 200, cpu_ns);
}
