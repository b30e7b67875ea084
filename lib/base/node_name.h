/* node_name.h - which Slurm node this process serves, when several
 * slurmd run on one host (Slurm's multiple-slurmd mode): the name the
 * configuration's %n takes (base/conf.h), learned from what root set up,
 * never from a job's environment, which its user controls. */
#ifndef CEEMS_NODE_NAME_H
#define CEEMS_NODE_NAME_H

#include <stddef.h>

/* slurmd's node name from its command line (the NUL-separated text of
 * /proc/PID/cmdline, LEN bytes): the NAME of "-N NAME" or "-NNAME".
 * Returns 0 with the name in NODE (SIZE bytes), -1 when the command
 * line gives none or one that cannot go into a path. */
int ceems_node_name_from_slurmd_cmdline(const char *cmdline, size_t len,
					char *node, size_t size);

/* The node whose slurmd made the job cgroup PATH (one of Slurm's
 * job paths as /proc/PID/cgroup shows them): "/slurm_NODE/uid_U/job_J"
 * in cgroup v1, ".../NODE_slurmstepd.scope/job_J" in v2, the names of a
 * slurmd built for multiple slurmd per host.  0 with the name in NODE,
 * -1 when PATH names no node (a slurmd of one node per host: "/slurm",
 * "slurmstepd.scope") or one that cannot go into a path. */
int ceems_node_name_from_cgroup(const char *path, char *node, size_t size);

/* This slurmd's node name: the -N NAME of its own command line
 * (/proc/self/cmdline), which each of several slurmd on one host has,
 * else the host's short name, whose NodeName slurmd takes without -N.
 * 0 with the name in NODE, or -1 when neither can go into a path. */
int ceems_node_name_of_slurmd(char *node, size_t size);

/* The node whose slurmd made the cgroup of one line of /proc/PID/cgroup
 * ("4:memory:/slurm_n1/uid_0/job_7/step_0", "0::/.../n1_slurmstepd.scope/
 * job_7/step_0/slurm"), as ceems_node_name_from_cgroup.  0 or -1. */
int ceems_node_name_from_cgroup_line(const char *line, char *node,
				     size_t size);

/* The host's short name (up to the first '.'), Slurm's usual node name
 * when nothing says otherwise.  0, or -1 when it cannot go into a path. */
int ceems_node_name_of_host(char *node, size_t size);

#endif
