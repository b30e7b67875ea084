/* slurmd.c - the plugin inside slurmd: start the node agent's supervisor
 * (supervisor.c) when slurmd starts, stop it when slurmd exits.
 *
 * slurm_spank_init runs in slurmd context before slurmd daemonizes (up to
 * Slurm 24.05; research/slurm.md section 1.3), so nothing here may depend
 * on the calling process living on: the supervisor is a process of its own
 * that watches a pipe whose write end every slurmd process inherits.
 * Nothing that goes wrong here reaches slurmd: every failure is logged to
 * the slurmd log and the callbacks return success (the node then runs
 * without measurement). */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <slurm/spank.h>

#include "log.h"
#include "plugin.h"
#include "supervisor.h"

/* How long slurmd's exit waits for the agent to checkpoint and stop, so
 * that a slurmd restarted at once finds the socket free. */
#define STOP_WAIT_MS 5000

static struct ceems_supervisor supervisor = { -1, -1, -1 };

/* Create the log's directory (one level, like /var/log/ceems) if it is
 * missing, and check that the log can be opened: the supervisor has no
 * other way to say that it cannot. */
static void
check_log(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash != NULL && slash != dir) {
		*slash = '\0';
		if (mkdir(dir, 0755) < 0 && errno != EEXIST)
			ceems_warning("cannot create the directory %s of the agent's log: %s",
				      dir, strerror(errno));
	}
	fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NOCTTY |
		  O_CLOEXEC, 0640);
	if (fd < 0) {
		ceems_warning("cannot open the agent's log %s: %s; its messages are lost",
			      path, strerror(errno));
		return;
	}
	(void)close(fd);
}

int
ceems_slurmd_init(spank_t sp, const struct ceems_plugin_args *args)
{
	struct ceems_supervisor_spec spec = {
		.agent_path = args->agent_path,
		.config_path = args->config_path,
		.log_path = args->agent_log,
		.interval = args->interval[0] != '\0' ? args->interval : NULL,
	};
	int r;

	(void)sp;
	if (supervisor.lifeline >= 0) {
		ceems_debug("the node agent's supervisor (pid %d) is running already",
			    (int)supervisor.pid);
		return 0;
	}
	/* Checked here, where the error reaches the slurmd log; the
	 * supervisor would only retry and log into the agent's log. */
	if (access(args->agent_path, X_OK) < 0) {
		ceems_error("cannot execute the node agent %s: %s; jobs on this node are not measured",
			    args->agent_path, strerror(errno));
		return -1;
	}
	check_log(args->agent_log);
	r = ceems_supervisor_start(&spec, &supervisor);
	if (r < 0) {
		ceems_error("cannot start the node agent's supervisor: %s; jobs on this node are not measured",
			    strerror(-r));
		return -1;
	}
	ceems_info("node agent supervisor %s started, pid %d: %s -c %s%s%s, log %s",
		   CEEMS_SUPERVISOR_NAME, (int)supervisor.pid, args->agent_path,
		   args->config_path, spec.interval != NULL ? " --interval " : "",
		   spec.interval != NULL ? spec.interval : "", args->agent_log);
	return 0;
}

int
ceems_slurmd_exit(void)
{
	pid_t pid = supervisor.pid;

	if (supervisor.lifeline < 0)
		return 0;
	if (ceems_supervisor_stop(&supervisor, STOP_WAIT_MS) < 0) {
		ceems_warning("the node agent's supervisor (pid %d) is still stopping the agent after %d ms; not waiting longer",
			      (int)pid, STOP_WAIT_MS);
		return -1;
	}
	ceems_info("the node agent and its supervisor (pid %d) stopped",
		   (int)pid);
	return 0;
}
