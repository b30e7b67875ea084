/* test_cgroup.h - cgroups for the drivers that play a job's processes
 * against a running agent (tests/bench/bench_plugin.c,
 * tests/gpu/real_agent_job.c): one relative path made, entered and
 * removed under every hierarchy the agent reads, as Slurm would. */
#ifndef CEEMS_TEST_CGROUP_H
#define CEEMS_TEST_CGROUP_H

/* Nonzero: cgroup v1 (cpuacct, memory, cpuset); zero: the v2 tree.  Set
 * by the driver once it has looked at /sys/fs/cgroup. */
extern int test_cgroup_v1;

/* mkdir PATH in every hierarchy (a v1 cpuset gets its parent's CPUs and
 * memory nodes, or it takes no task).  0 or -errno. */
int test_cgroup_make(const char *path);
/* rmdir PATH in every hierarchy, errors ignored. */
void test_cgroup_remove(const char *path);
/* Move this process into PATH ("": the roots).  0 or negative. */
int test_cgroup_enter(const char *path);

#endif
