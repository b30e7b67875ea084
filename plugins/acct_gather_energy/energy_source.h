/* energy_source.h - where the acct_gather_energy/ceems plugin gets its
 * figures: the node agent, over its socket, with a deadline of a few
 * milliseconds.  No Slurm type here: acct_gather_energy_ceems.c maps these
 * figures onto Slurm's acct_gather_energy_t.
 *
 * In slurmstepd the figure is the step's cumulative attributed energy
 * (the agent's "report" of the job, the step's joules over every domain),
 * and for the extern step the job's whole share: with PrologFlags=Contain
 * slurmctld takes a job's energy from its extern step alone (without it,
 * from the sum of its steps, which are disjoint shares).  In slurmd it is
 * the node's energy since the agent started (its "status"). */
#ifndef CEEMS_ENERGY_SOURCE_H
#define CEEMS_ENERGY_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "model/measure.h"

/* Longest time one call to the agent may take, ms. */
#define CEEMS_ENERGY_SOURCE_TIMEOUT_MS 50

/* Which daemon loaded the plugin. */
enum ceems_energy_source_daemon {
	CEEMS_ENERGY_OTHER = 0,	/* slurmctld, a client command: no figures */
	CEEMS_ENERGY_SLURMD,
	CEEMS_ENERGY_SLURMSTEPD,
};

/* The daemon whose /proc/self/comm is COMM ("slurmd", "slurmstepd"). */
enum ceems_energy_source_daemon ceems_energy_source_daemon_of(const char *comm);

/* The job, step and node of a slurmstepd from the whole text of its
 * /proc/self/cgroup: the first line naming a step gives the job and
 * step, and the node when its path is a multiple-slurmd one
 * ("/slurm_NODE/...", ".../NODE_slurmstepd.scope/...", node_name.h).
 * NODE is "" when the path names none (one slurmd on the host).  0, or
 * -EINVAL when no line names a step.  TEXT is modified (split). */
int ceems_energy_source_step_from_cgroups(char *text, uint32_t *jobid,
					  char *step, size_t step_size,
					  char *node, size_t node_size);

/* The agent's socket for NODE: SOCKET (ceems.conf's "socket") with its
 * %n replaced by NODE, as the SPANK plugin that started the node's agent
 * replaced it.  NODE NULL: a %n is an error.  0 with the path in OUT, or
 * -EINVAL with ERR saying why. */
int ceems_energy_source_socket(const char *socket, const char *node,
			       char *out, size_t out_size, char *err,
			       size_t err_size);

/* The step's joules in REPORT: its own over every domain it was measured
 * in; for "extern", the job's total.  Returns 0,
 * or -ENOENT when the report holds no figure for the step (not measured
 * yet, or beyond CEEMS_AGENT_MAX_STEPS: then the job keeps it). */
int ceems_energy_source_step_joules(const struct ceems_agent_job_report *report,
				    const char *step, double *joules);

/* The node's joules since the agent started (every domain of a status
 * reply's "energy", whose node domain holds only the residual) and the
 * agent's pid, from the status reply TEXT.  0, or -EPROTO. */
int ceems_energy_source_node_joules(const char *text, double *joules,
				    long *agent_pid);

/* ---- Calls to the agent, each bounded by the timeout above ---- */

struct ceems_energy_source_agent {
	enum ceems_energy_source_daemon daemon;
	char socket_path[4096];
	uint32_t jobid;		/* slurmstepd */
	char step[CEEMS_STEP_ID_MAX];
	char node[CEEMS_NODE_NAME_MAX];	/* the %n of the socket, "" none */
};

/* Fill SRC for this process: which daemon, the agent's socket from the
 * ceems configuration (CEEMS_CONF in the daemon's environment, else the
 * default) with its %n replaced by this node's name, and in slurmstepd
 * its step.  The node is the one the SPANK plugin names the node's agent
 * after: in slurmd its -N NAME, in slurmstepd the node in its cgroup's
 * path (the multiple-slurmd layout), else the host's short name.  0, or -errno with ERR saying
 * why (then the plugin gives no figures). */
int ceems_energy_source_open(struct ceems_energy_source_agent *src, char *err,
			     size_t err_size);

/* The step's cumulative joules (slurmstepd).  0; -ENODATA when the agent
 * answered but has no figure for the step yet (it just started); or
 * -errno (ERR says why: no agent, no such job). */
int ceems_energy_source_read_step(const struct ceems_energy_source_agent *src,
				  double *joules, char *err, size_t err_size);

/* The node's joules since the agent started, and its pid (slurmd). */
int ceems_energy_source_read_node(const struct ceems_energy_source_agent *src,
				  double *joules, long *agent_pid, char *err,
				  size_t err_size);

#endif
