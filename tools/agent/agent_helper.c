/* agent_helper.c - ceems-jobinfo beside the agent (agent_helper.h).
 * The supervisor runs it as it runs the agent: exec'ed anew at each
 * start with a clean environment, /dev/null on 0 and 1, the agent's log
 * on 2, killed if the supervisor dies, restarted with a growing backoff
 * after a quick death. */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_helper.h"
#include "base/clock.h"
#include "base/conf.h"
#include "base/spawn.h"
#include "base/log.h"

#define BACKOFF_MIN_S 1
#define BACKOFF_MAX_S 60
#define STABLE_S 60
#define PROGRAM "ceems-jobinfo"

void
agent_helper_init(struct agent_helper *h, const char *agent, char *config,
		  char *node, char *env_path)
{
	static char opt_config[] = "-c", opt_node[] = "--node";
	static char env_slurm_conf[4096 + 16];
	struct ceems_config conf;
	const char *slash = strrchr(agent, '/'), *slurm_conf;
	char err[512];
	int i = 0;

	memset(h, 0, sizeof(*h));
	h->backoff_s = BACKOFF_MIN_S;
	snprintf(h->path, sizeof(h->path), "%.*s/%s",
		 slash != NULL ? (int)(slash - agent) : 1,
		 slash != NULL ? agent : ".", PROGRAM);
	ceems_conf_defaults(&conf);
	if (ceems_conf_load(&conf, config, err, sizeof(err)) < 0 &&
	    access(config, F_OK) == 0)
		ceems_warning("%s; %s runs as if jobinfo = yes", err, PROGRAM);
	if (!conf.jobinfo) {
		ceems_info("jobinfo = no: %s is not run", PROGRAM);
		return;
	}
	if (access(h->path, X_OK) < 0) {
		ceems_warning("cannot execute %s: %s; the records of jobs have no word of slurmctld at their end",
			      h->path, strerror(errno));
		return;
	}
	h->argv[i++] = h->path;
	h->argv[i++] = opt_config;
	h->argv[i++] = config;
	if (node != NULL && node[0] != '\0') {
		h->argv[i++] = opt_node;
		h->argv[i++] = node;
	}
	h->argv[i] = NULL;
	h->envp[0] = env_path;
	slurm_conf = getenv("SLURM_CONF");
	if (slurm_conf != NULL && slurm_conf[0] == '/' &&
	    strlen(slurm_conf) < 4096) {
		snprintf(env_slurm_conf, sizeof(env_slurm_conf),
			 "SLURM_CONF=%s", slurm_conf);
		h->envp[1] = env_slurm_conf;
	}
	h->wanted = true;
}

void
agent_helper_tick(struct agent_helper *h, long long now_ms)
{
	pid_t self = getpid(), pid;

	if (!h->wanted || h->pid > 0 || now_ms < h->next_start_ms)
		return;
	pid = fork();
	if (pid < 0) {
		ceems_error("cannot fork %s: %s", PROGRAM, strerror(errno));
		h->next_start_ms = now_ms + h->backoff_s * 1000LL;
		return;
	}
	if (pid == 0)
		ceems_spawn_exec_supervised(self, h->argv, h->envp, PROGRAM);
	h->pid = pid;
	h->started_ms = now_ms;
	ceems_info("started %s: pid %d", h->path, (int)pid);
}

bool
agent_helper_reaped(struct agent_helper *h, pid_t pid, int status,
		    long long now_ms)
{
	long long ran_ms;

	if (h->pid <= 0 || pid != h->pid)
		return false;
	ran_ms = now_ms - h->started_ms;
	if (ran_ms >= STABLE_S * 1000LL)
		h->backoff_s = BACKOFF_MIN_S;
	h->next_start_ms = now_ms + h->backoff_s * 1000LL;
	ceems_warning("%s (pid %d) %s %d after %lld s; restarting it in %d s",
		      PROGRAM, (int)pid,
		      WIFSIGNALED(status) ? "was killed by signal" : "exited with status",
		      WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
		      ran_ms / 1000, h->backoff_s);
	h->backoff_s = h->backoff_s * 2 > BACKOFF_MAX_S ? BACKOFF_MAX_S :
		h->backoff_s * 2;
	h->pid = 0;
	return true;
}

long long
agent_helper_due_ms(const struct agent_helper *h, long long now_ms)
{
	if (!h->wanted || h->pid > 0)
		return -1;
	return h->next_start_ms > now_ms ? h->next_start_ms - now_ms : 0;
}

void
agent_helper_stop(struct agent_helper *h, const sigset_t *wait_mask)
{
	long long deadline = ceems_clock_monotonic_ms() + 2000;
	struct timespec ts = { 0, 50 * 1000000L };
	int status;

	if (h->pid <= 0)
		return;
	(void)kill(h->pid, SIGTERM);
	while (waitpid(h->pid, &status, WNOHANG) == 0) {
		if (ceems_clock_monotonic_ms() >= deadline) {
			(void)kill(h->pid, SIGKILL);
			(void)waitpid(h->pid, &status, 0);
			break;
		}
		(void)ppoll(NULL, 0, &ts, wait_mask);
	}
	h->pid = 0;
}
