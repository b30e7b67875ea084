/* agent_launch.h - one supervised node agent per node: the supervisor's
 * lock and pid file, finding a running supervisor (to adopt it) and
 * starting a new one by fork and exec.  Used by the slurmd-side plugin
 * and by ceems-agent's --start, --stop and --restart. */
#ifndef CEEMS_AGENT_LAUNCH_H
#define CEEMS_AGENT_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

/* The lock and pid file, in the agent's state directory. */
#define CEEMS_AGENT_PID_FILE "agent.pid"

/* The supervisor's process name (comm): "ceems-agent --supervise". */
#define CEEMS_SUPERVISOR_NAME "ceems-agent-sv"

/* STATE_DIR/agent.pid into BUF.  0 or -ENAMETOOLONG. */
int ceems_agent_launch_pid_path(const char *state_dir, char *buf, size_t size);

/* Open PATH (creating it 0600 and its directory 0700) and take its lock
 * (an open file description lock: it goes with the descriptor through
 * fork and exec, and is gone when the last copy is closed, so a stale
 * pid file after a crash or a reboot holds no lock).  An existing file
 * must be a regular file of this uid's (not a link): its mode is made
 * 0600, so that no other user can open it to hold a lock.  Returns the
 * descriptor (O_CLOEXEC), -EWOULDBLOCK when a supervisor holds the lock
 * (a write lock), -EBUSY when another process holds a read lock on it
 * (no supervisor: nothing to adopt, and none can start until it is
 * gone), -EPERM for a file that is no regular file of this uid's, or
 * another -errno. */
int ceems_agent_launch_lock_take(const char *path);

/* What an error of ceems_agent_launch_lock_take or ceems_agent_launch_lock_probe
 * means, and for -EBUSY and -EPERM what the admin should do. */
const char *ceems_agent_launch_lock_strerror(int err);

/* Write "SUPERVISOR AGENT\n" into the locked file FD (AGENT 0: none
 * running).  0 or -errno. */
int ceems_agent_launch_lock_write(int fd, pid_t supervisor, pid_t agent);

/* Read the file's "SUPERVISOR AGENT\n" (LEN bytes of BUF, any bytes):
 * a pid it cannot read is 0. */
void ceems_agent_launch_pid_parse(const char *buf, size_t len, pid_t *supervisor,
			   pid_t *agent);

/* Is the lock of PATH held by a supervisor?  1 when it is (*SUPERVISOR
 * and *AGENT read from the file, 0 where it does not say yet), 0 when no
 * one holds it (no supervisor runs: the file's pids, if any, are stale),
 * -EBUSY when a process that is no supervisor holds a read lock on it,
 * or -errno.  Takes no lock, so a probe never makes a starting
 * supervisor fail. */
int ceems_agent_launch_lock_probe(const char *path, pid_t *supervisor, pid_t *agent);

/* What to start: AGENT --supervise --agent AGENT -c CONFIG [--interval
 * INTERVAL] [--node NODE] --log LOG --lock-fd 3.  Paths absolute,
 * INTERVAL NULL to keep the configuration's, NODE (the Slurm node whose
 * name the configuration's %n takes) NULL for none. */
struct ceems_launch_spec {
	const char *agent;
	const char *config;
	const char *log;
	const char *interval;
	const char *node;
};

/* Start the supervisor, which holds the lock of LOCK_FD (taken by the
 * caller with ceems_agent_launch_lock_take; the caller closes its own copy
 * afterwards).  The supervisor is forked twice (the middle process calls
 * setsid and exits), so it is nobody's child and in a session of its
 * own; it gets a clean environment, /dev/null on 0 and 1, LOG on 2, the
 * lock on 3 and no other descriptor.  Safe in a threaded caller: only
 * async-signal-safe calls run between fork and exec, and the forks are
 * _Fork where the C library has it.  Waits at most a few seconds.
 * Returns the supervisor's pid, or -errno (that of a failed exec too). */
pid_t ceems_agent_launch(const struct ceems_launch_spec *spec, int lock_fd);

#endif
