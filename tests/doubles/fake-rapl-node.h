/* fake-rapl-node.h - the per-node mode of tests/doubles/fake-rapl: a
 * simulated node that is one Slurm node's cgroup of a host running
 * several slurmd (tests/harness/slurm.sh, CEEMS_TEST_NODES).  Its busy
 * time is that cgroup's CPU time, not the host's /proc/stat; its jobs
 * are found under it as they come and go, each with its ground truth;
 * and its own /proc/stat (the CPU time the node would show, were it a
 * machine of its own) is written for the agent's procfs_root.
 *
 * It parses the cgroup files itself, not with libceems, so that the
 * truth does not share the code it judges. */
#ifndef CEEMS_FAKE_RAPL_NODE_H
#define CEEMS_FAKE_RAPL_NODE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define FR_NODE_MAX_JOBS 256

struct fr_job {
	unsigned long id;
	char rel[PATH_MAX / 2];	/* under the node's cgroup: uid_U/job_J or job_J */
	unsigned int cores;	/* CPUs of its cpuset; 0 until Slurm sets it */
	uint64_t first_ns, last_ns;	/* first and last sight (monotonic) */
	uint64_t usage_ns;	/* its CPU time at the last sight */
	bool ended;		/* its cgroup is gone */
};

struct fr_node {
	char cgroup[PATH_MAX / 2];	/* the node's cgroup, with its CPU time */
	char cpuset[PATH_MAX / 2];	/* where its jobs' cpusets are */
	bool v2;			/* cpu.stat, cpuset.cpus.effective */
	bool present;			/* the node's cgroup was there last step */
	uint64_t last_usage_ns;
	uint64_t busy_ns;		/* since the start, never going back */
	struct fr_job jobs[FR_NODE_MAX_JOBS];
	size_t njobs;

	int stat_fd;			/* the node's /proc/stat, or -1 */
	unsigned int ncpus;
	long clk_tck;
	uint64_t start_ns;
	uint64_t idle_ticks;
};

/* Set up N for the node cgroup CGROUP (v1: the cpuacct hierarchy's
 * slurm_NODE; v2: NODE_slurmstepd.scope), whose jobs' cpusets are under
 * CPUSET (v1: the cpuset hierarchy's slurm_NODE; NULL: CGROUP, as in
 * v2).  The cgroup may not exist yet: slurmd makes it for its first job.
 * STAT_PATH: the file to keep the node's /proc/stat in (NULL: none).  Exits
 * on a bad path or an unwritable STAT_PATH. */
void fr_node_init(struct fr_node *n, const char *cgroup, const char *cpuset,
		  const char *stat_path, unsigned int ncpus, long clk_tck,
		  uint64_t now);

/* One step at NOW: the node's busy time (n->busy_ns) and its jobs (new
 * ones found, gone ones ended).  Returns how many jobs ended this step. */
unsigned int fr_node_step(struct fr_node *n, uint64_t now);

/* The jobs' ground truth as key=value lines: job_J_cores, job_J_life_s,
 * job_J_cpu_s, job_J_package_j (P_IDLE x cores / ncpus x life + K x cpu)
 * and job_J_ended (1 once its cgroup is gone: its figures are final).
 * DRAM has no truth per job: its static power is split by memory
 * allocated (doc/attribution.md), which the model does not follow. */
void fr_node_write_jobs(const struct fr_node *n, FILE *f, double idle_w,
			double k_w);

#endif
