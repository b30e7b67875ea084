/* agent_control.c - an admin's controls of the node agent's supervisor:
 * ceems-agent --start, --stop and --restart.  They find the supervisor
 * by the lock and pid file of lib/client/agent_launch.c, never by process name,
 * so they act on this configuration's supervisor only. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "client/agent_launch.h"
#include "agent_supervise.h"

#define POLL_MS 100

int
agent_control_start(const struct agent_supervise_spec *spec)
{
	struct ceems_launch_spec launch = {
		.agent = spec->agent,
		.config = spec->config,
		.log = spec->log,
		.interval = spec->interval,
		.node = spec->node,
	};
	pid_t sv = 0, agent = 0;
	int fd;

	fd = ceems_agent_launch_lock_take(spec->pid_path);
	if (fd == -EWOULDBLOCK) {
		(void)ceems_agent_launch_lock_probe(spec->pid_path, &sv, &agent);
		printf("ceems-agent: a supervisor runs already: pid %d, agent pid %d (%s)\n",
		       (int)sv, (int)agent, spec->pid_path);
		return 0;
	}
	if (fd < 0) {
		fprintf(stderr, "ceems-agent: cannot lock %s: %s\n", spec->pid_path,
			ceems_agent_launch_lock_strerror(fd));
		return 1;
	}
	sv = ceems_agent_launch(&launch, fd);
	(void)close(fd);
	if (sv < 0) {
		fprintf(stderr, "ceems-agent: cannot start the supervisor %s --supervise: %s\n",
			spec->agent, strerror(-sv));
		return 1;
	}
	printf("ceems-agent: started the supervisor: pid %d, log %s\n", (int)sv,
	       spec->log);
	return 0;
}

/* The running supervisor's pids, or 0 after saying that none runs. */
static int
find(const char *pid_path, pid_t *sv, pid_t *agent)
{
	int r = ceems_agent_launch_lock_probe(pid_path, sv, agent);

	if (r < 0) {
		fprintf(stderr, "ceems-agent: cannot read %s: %s\n", pid_path,
			ceems_agent_launch_lock_strerror(r));
		return -1;
	}
	if (r == 0 || *sv <= 0) {
		printf("ceems-agent: no supervisor runs (%s is not locked)\n",
		       pid_path);
		return 0;
	}
	return 1;
}

int
agent_control_stop(const char *pid_path, int timeout_ms)
{
	pid_t sv, agent;
	int r = find(pid_path, &sv, &agent);

	if (r <= 0)
		return r < 0 ? 1 : 0;
	if (kill(sv, SIGTERM) < 0) {
		fprintf(stderr, "ceems-agent: cannot send SIGTERM to the supervisor (pid %d): %s\n",
			(int)sv, strerror(errno));
		return 1;
	}
	for (int waited = 0; waited < timeout_ms; waited += POLL_MS) {
		pid_t s, a;

		if (ceems_agent_launch_lock_probe(pid_path, &s, &a) == 0) {
			printf("ceems-agent: stopped the supervisor (pid %d) and the agent (pid %d)\n",
			       (int)sv, (int)agent);
			return 0;
		}
		(void)poll(NULL, 0, POLL_MS);
	}
	fprintf(stderr, "ceems-agent: the supervisor (pid %d) is still running after %d ms\n",
		(int)sv, timeout_ms);
	return 1;
}

int
agent_control_restart(const char *pid_path, int timeout_ms)
{
	pid_t sv, agent;
	int r = find(pid_path, &sv, &agent);

	if (r <= 0)
		return 1;
	if (kill(sv, SIGHUP) < 0) {
		fprintf(stderr, "ceems-agent: cannot send SIGHUP to the supervisor (pid %d): %s\n",
			(int)sv, strerror(errno));
		return 1;
	}
	for (int waited = 0; waited < timeout_ms; waited += POLL_MS) {
		pid_t s, a;

		if (ceems_agent_launch_lock_probe(pid_path, &s, &a) == 1 && a > 0 &&
		    a != agent) {
			printf("ceems-agent: restarted: supervisor pid %d, agent pid %d (was %d)\n",
			       (int)s, (int)a, (int)agent);
			return 0;
		}
		(void)poll(NULL, 0, POLL_MS);
	}
	fprintf(stderr, "ceems-agent: no new agent after %d ms; see the log\n",
		timeout_ms);
	return 1;
}
