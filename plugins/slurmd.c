/* slurmd.c - the plugin inside slurmd: make sure the node agent's
 * supervisor runs, adopting the one that runs already or starting one
 * (lib/client/agent_launch.c); leave it running when slurmd exits.
 *
 * The supervisor ("ceems-agent --supervise") outlives slurmd, so that a
 * slurmd restart (an upgrade, a reconfiguration, slurmd -D or
 * daemonized, a crash) does not interrupt the measurement of the jobs
 * that survive it.  Which supervisor runs is decided by the lock of
 * STATE_DIR/agent.pid: the slurmd that takes it starts the supervisor and
 * hands the lock to it; every later slurmd (or the second of two
 * starting at once) finds the lock held and adopts the supervisor.  An
 * admin stops or restarts the agent with ceems-agent --stop / --restart.
 *
 * slurm_spank_init runs in slurmd context before slurmd daemonizes (up to
 * Slurm 24.05), and again when slurmd
 * re-executes itself on scontrol reconfigure: both find the lock held.
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

#include "client/agent_launch.h"
#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "base/log.h"
#include "base/node_name.h"
#include "plugin.h"

/* How long slurmd's start waits for the adopted agent's status. */
#define STATUS_WAIT_MS 500

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

/* A supervisor holds the lock: say which, and whether its agent answers
 * (it may be between two runs: its supervisor restarts it). */
static void
adopt(const char *pid_path, const char *socket_path)
{
	static const char request[] = "{\"op\":\"status\"}";
	char reply[4096];
	pid_t sv, agent;
	int n;

	(void)ceems_agent_launch_lock_probe(pid_path, &sv, &agent);
	n = ceems_agent_client_call_buf(socket_path, request, sizeof(request) - 1,
					STATUS_WAIT_MS, reply, sizeof(reply));
	if (n >= 0 || n == -EMSGSIZE)
		ceems_info("adopted the running node agent: supervisor pid %d, agent pid %d, answering on %s",
			   (int)sv, (int)agent, socket_path);
	else
		ceems_info("adopted the running node agent supervisor pid %d (agent pid %d); the agent does not answer on %s yet (%s): its supervisor restarts it",
			   (int)sv, (int)agent, socket_path, strerror(-n));
}

/* This slurmd's node name (node_name.h), NULL when it cannot go into a
 * path. */
static const char *
slurmd_node(char *buf, size_t size)
{
	return ceems_node_name_of_slurmd(buf, size) == 0 ? buf : NULL;
}

/* The agent's log, with its %n (one log per node of a host). */
static int
agent_log_path(const char *log, const char *node, char *out, size_t size)
{
	char err[512];

	if (ceems_conf_expand_path(log, node, out, size, err, sizeof(err)) == 0)
		return 0;
	ceems_error("agent_log: %s; jobs on this node are not measured", err);
	return -1;
}

int
ceems_slurmd_init(spank_t sp, const struct ceems_plugin_args *args)
{
	static char node_buf[CEEMS_NODE_NAME_MAX], log[PATH_MAX];
	const char *node = slurmd_node(node_buf, sizeof(node_buf));
	static struct ceems_config config;
	struct ceems_launch_spec spec = {
		.agent = args->agent_path,
		.config = args->config_path,
		.log = log,
		.interval = args->interval[0] != '\0' ? args->interval : NULL,
		.node = node,
	};
	char pid_path[PATH_MAX];
	pid_t sv;
	int fd;

	(void)sp;
	ceems_common_load_config(args->config_path, &config);
	if (ceems_common_expand_config(&config, node) < 0 ||
	    agent_log_path(args->agent_log, node, log, sizeof(log)) < 0)
		return -1;
	if (ceems_agent_launch_pid_path(config.state_dir, pid_path, sizeof(pid_path)) < 0) {
		ceems_error("state_dir %s is too long; jobs on this node are not measured",
			    config.state_dir);
		return -1;
	}
	fd = ceems_agent_launch_lock_take(pid_path);
	if (fd == -EWOULDBLOCK) {
		adopt(pid_path, config.socket_path);
		return 0;
	}
	if (fd < 0) {
		ceems_error("cannot lock %s: %s; jobs on this node are not measured",
			    pid_path, ceems_agent_launch_lock_strerror(fd));
		return -1;
	}
	/* Checked here, where the error reaches the slurmd log; the
	 * supervisor would only retry and log into the agent's log. */
	if (access(args->agent_path, X_OK) < 0) {
		ceems_error("cannot execute the node agent %s: %s; jobs on this node are not measured",
			    args->agent_path, strerror(errno));
		(void)close(fd);
		return -1;
	}
	check_log(log);
	sv = ceems_agent_launch(&spec, fd);
	(void)close(fd);
	if (sv < 0) {
		ceems_error("cannot start the node agent's supervisor %s --supervise: %s; jobs on this node are not measured",
			    args->agent_path, strerror(-sv));
		return -1;
	}
	ceems_info("node agent supervisor %s started, pid %d: %s -c %s%s%s%s%s, log %s",
		   CEEMS_SUPERVISOR_NAME, (int)sv, args->agent_path,
		   args->config_path, spec.interval != NULL ? " --interval " : "",
		   spec.interval != NULL ? spec.interval : "",
		   node != NULL ? " --node " : "", node != NULL ? node : "", log);
	return 0;
}

int
ceems_slurmd_exit(void)
{
	ceems_info("slurmd exits; the node agent keeps running (ceems-agent --stop stops it)");
	return 0;
}
