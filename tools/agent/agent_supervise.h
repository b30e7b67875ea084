/* agent_supervise.h - "ceems-agent --supervise": the process that keeps
 * the node agent running, independently of slurmd, and the admin's
 * controls of it (--start, --stop, --restart). */
#ifndef CEEMS_AGENT_SUPERVISE_H
#define CEEMS_AGENT_SUPERVISE_H

struct agent_supervise_spec {
	const char *agent;	/* the agent program, absolute */
	const char *config;	/* its configuration file, absolute */
	const char *interval;	/* --interval for the agent, or NULL */
	const char *node;	/* --node for the agent (the paths' %n), or NULL */
	const char *log;	/* the log (stderr of both), absolute */
	const char *pid_path;	/* STATE_DIR/agent.pid */
	int lock_fd;		/* the lock, taken by whoever exec'ed us;
				 * -1: take it here */
};

/* Run the agent, restart it with a backoff when it dies, stop it on
 * SIGTERM or SIGINT, restart it and re-execute the supervisor (a new
 * version of both) on SIGHUP.  Returns the process's exit status. */
int agent_supervise(const struct agent_supervise_spec *spec);

/* --start: start a supervisor in the background unless one runs (then
 * say which).  --stop: SIGTERM to the running one, wait until it is
 * gone.  --restart: SIGHUP to it, wait until a new agent runs.  Each
 * prints what it did; returns the exit status (0 done, 1 failed). */
int agent_control_start(const struct agent_supervise_spec *spec);
int agent_control_stop(const char *pid_path, int timeout_ms);
int agent_control_restart(const char *pid_path, int timeout_ms);

#endif
