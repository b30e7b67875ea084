/* supervisor.h - the process that keeps the node agent running on behalf
 * of slurmd: it starts the agent, restarts it with a backoff when it
 * dies, and stops it when slurmd is gone (slurmd.c starts it). */
#ifndef CEEMS_SUPERVISOR_H
#define CEEMS_SUPERVISOR_H

#include <sys/types.h>

/* What the supervisor runs: AGENT_PATH -c CONFIG_PATH [--interval
 * INTERVAL], with its standard error (and the supervisor's own lines)
 * appended to LOG_PATH.  The three paths are absolute; INTERVAL (a
 * duration of ceems.conf(5), shorter than 32 bytes) is NULL to keep the
 * configuration file's. */
struct ceems_supervisor_spec {
	const char *agent_path;
	const char *config_path;
	const char *log_path;
	const char *interval;
};

/* The supervisor's process, as slurmd sees it.  LIFELINE is the write end
 * of a pipe whose read end the supervisor watches: when every copy of it
 * is closed (slurmd exited, crashed or called ceems_supervisor_stop), the
 * supervisor stops the agent and exits.  DONE is the read end of a pipe the
 * supervisor holds open until it exits.  Both are O_CLOEXEC, so that
 * neither slurmstepd nor any script slurmd runs inherits them. */
struct ceems_supervisor {
	pid_t pid;
	int lifeline;
	int done;
};

#define CEEMS_SUPERVISOR_NAME "ceems-agent-sv"

/* Start the supervisor as a process of its own (in its own session,
 * reparented away from the caller, so that it survives slurmd's
 * daemonization and never becomes slurmd's zombie).  Returns 0 and fills
 * SV, or a negative errno (SV->lifeline and SV->done are then -1). */
int ceems_supervisor_start(const struct ceems_supervisor_spec *spec,
			   struct ceems_supervisor *sv);

/* Ask the supervisor to stop the agent and exit, and wait up to
 * TIMEOUT_MS for it to be gone.  Returns 0 when it is gone, -ETIMEDOUT
 * when it is still stopping (it goes on without us). */
int ceems_supervisor_stop(struct ceems_supervisor *sv, int timeout_ms);

#endif
