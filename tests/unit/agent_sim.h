/* agent_sim.h - a simulated node for the tests of the agent's engine: a
 * 4-CPU node with two RAPL packages and their DRAM (sys/rapl-intel), job
 * 42 in a cgroup v1 tree (cgroup/v1), and a /proc of its own, each copied
 * to a temporary directory by make_trees(); move() and advance() move
 * the counters forward as a known workload would.  One copy per test
 * program: the state below is that program's node. */
#ifndef CEEMS_TEST_AGENT_SIM_H
#define CEEMS_TEST_AGENT_SIM_H

#include "agent/agent.h"
#include "base/conf.h"

#define SEC 1000000000ULL
#define RAPL "class/powercap/"
#define JOB42_CPUACCT "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_42/cpuacct.usage"
#define BATCH_CPUACCT "sys/fs/cgroup/cpu,cpuacct/slurm_localhost/uid_1000/job_42/step_batch/cpuacct.usage"

extern char sys_root[200], cg_root[200], proc_root[200];
extern char state_dir[256];

/* The counters as move() left them: energies in uJ, the node's busy
 * USER_HZ ticks, job 42's CPU time in ns. */
extern unsigned long long pkg0_uj, pkg1_uj, dram0_uj, dram1_uj;
extern unsigned long long busy_ticks, job_ns;

/* /proc/stat of the node, busy for BUSY_TICKS USER_HZ ticks (user time). */
void write_proc_stat(unsigned long long ticks);
/* V and a newline into ROOT/REL, in place. */
void write_u64(const char *root, const char *rel, unsigned long long v);
/* The three trees, fresh; the node idle so far. */
void make_trees(void);
/* A configuration reading the trees: FR, PUE 1.5, idle power 20 W and
 * 2 W configured, a 1 s usage interval, 4 jobs at most. */
void base_config(struct ceems_config *c);
/* Job 42's registration, its cgroup resolved from the fixture. */
void job42_spec(struct ceems_agent_job_spec *spec);
/* Add PKG0_J and PKG1_J to the packages, DRAM_J split over the drams,
 * BUSY USER_HZ ticks to the node and CPU_NS to job 42. */
void move(double pkg0_j, double pkg1_j, double dram_j, unsigned busy,
	  unsigned long long cpu_ns);
/* One more second: packages +60 J and +40 J, drams +10 J, the node 2
 * CPU-seconds busy of which job 42 used CPU_NS. */
void advance(unsigned long long cpu_ns);

#endif /* CEEMS_TEST_AGENT_SIM_H */
