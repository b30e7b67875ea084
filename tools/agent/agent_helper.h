/* agent_helper.h - ceems-jobinfo, run by the agent's supervisor beside
 * the agent and restarted when it dies (agent_helper.c). */
#ifndef AGENT_HELPER_H
#define AGENT_HELPER_H

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

struct agent_helper {
	char path[4096];	/* the program, beside the agent's */
	char *argv[6];
	char *envp[3];
	bool wanted;		/* jobinfo = yes and the program is there */
	pid_t pid;		/* 0: not running */
	long long started_ms, next_start_ms;
	int backoff_s;
};

/* Decide whether to run it: ceems.conf's jobinfo key in CONFIG (the
 * path), the program beside AGENT; argv -c CONFIG [--node NODE]; the
 * environment PATH and the supervisor's own SLURM_CONF.  The strings
 * must outlive H. */
void agent_helper_init(struct agent_helper *h, const char *agent,
		       char *config, char *node, char *env_path);

/* Start it when it is wanted, not running and its restart is due. */
void agent_helper_tick(struct agent_helper *h, long long now_ms);

/* PID died with STATUS: when it is the helper, plan its restart; true
 * then. */
bool agent_helper_reaped(struct agent_helper *h, pid_t pid, int status,
			 long long now_ms);

/* Milliseconds until its next start is due, -1 when none is. */
long long agent_helper_due_ms(const struct agent_helper *h, long long now_ms);

/* SIGTERM to it and wait (WAIT_MASK, as the supervisor's) up to 2 s,
 * then SIGKILL. */
void agent_helper_stop(struct agent_helper *h, const sigset_t *wait_mask);

#endif
