/* agent_extern.c - whether a job's extern step is still there.
 *
 * The extern step ends a job on its node: its slurmstepd deregisters the
 * job as it exits.  Killed (SIGKILL, the OOM killer, a crash), it says
 * nothing, and its cgroup, which it would have removed, lingers, so the
 * agent never sees the job go.  The agent keeps a pidfd of the
 * slurmstepd that started the job's extern step (the peer of that
 * request) and, at each sweep, polls it: an extern slurmstepd gone
 * while the job is still registered, and no other step of the job still
 * running here, is a job whose end nobody will tell; slurmctld's word
 * (asked by ceems-jobinfo) then ends it.  A pidfd, not a pid: a pid can
 * be reused; a pidfd refers to one process only.  Kernels without
 * pidfd_open (before 5.3) fall back to the batch step's end
 * (ceems_agent_sweep).
 *
 * The same watch says when a job whose cgroup went is over.  Until
 * Slurm 24.11 the extern step removes the job's cgroups as it ends; from
 * 25.05 its slurmstepd has no task and the cgroups that hold the job's
 * CPU time (cgroup v1) go with the job's last step that has tasks,
 * while the extern step still runs and is still to deregister the job
 * with its metadata.  Asking slurmctld's word then would end the job
 * first, under the word's metadata alone, and the extern step's
 * deregistration would then find no job: a second record.  So while the
 * extern slurmstepd runs, a job whose cgroup went waits for it. */
#include "config.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "base/log.h"

static int
open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	/* pidfd_open's descriptors are close-on-exec. */
	return (int)syscall(SYS_pidfd_open, pid, 0);
#else
	(void)pid;
	errno = ENOSYS;
	return -1;
#endif
}

void
ceems_agent_extern_watch(struct ceems_agent *a, uint32_t jobid, pid_t pid)
{
	struct agent_job *j = ceems_agent_find_job(a, jobid, NULL);
	static bool told;

	if (j == NULL || pid <= 0 || j->extern_pidfd >= 0)
		return;
	j->extern_pidfd = open_pidfd(pid);
	if (j->extern_pidfd < 0 && !told) {
		/* Once: every job would say the same. */
		ceems_info("cannot watch job %u's extern step (pid %d): %s; "
			   "a job whose extern step is killed ends reap_grace "
			   "after its batch step", jobid, (int)pid,
			   strerror(errno));
		told = true;
	}
}

void
ceems_agent_extern_close(struct agent_job *j)
{
	if (j->extern_pidfd >= 0)
		close(j->extern_pidfd);
	j->extern_pidfd = -1;
}

/* Whether a step other than the extern step still runs here: the job is
 * not over on this node while one does. */
static bool
step_running(const struct agent_job *j)
{
	for (uint32_t i = 0; i < j->nsteps; i++)
		if (!j->steps[i].r.ended &&
		    strcmp(j->steps[i].r.id, "extern") != 0)
			return true;
	return false;
}

bool
ceems_agent_extern_lost(const struct agent_job *j)
{
	struct pollfd pfd = { .fd = j->extern_pidfd, .events = POLLIN };

	if (j->extern_pidfd < 0 || j->end_asked || step_running(j))
		return false;
	/* A pidfd is readable once its process has exited. */
	return poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN) != 0;
}

bool
ceems_agent_extern_alive(const struct agent_job *j)
{
	struct pollfd pfd = { .fd = j->extern_pidfd, .events = POLLIN };

	return j->extern_pidfd >= 0 && poll(&pfd, 1, 0) == 0;
}

void
ceems_agent_extern_ask_end(struct ceems_agent *a, struct agent_job *j,
			   uint64_t now_ns)
{
	if (j->end_asked || a->gone_hook == NULL)
		return;
	j->end_asked = true;
	j->end_asked_ns = now_ns;
	a->gone_hook(a->gone_arg, j->spec.jobid);
}

void
ceems_agent_extern_cgroup_gone(struct ceems_agent *a, struct agent_job *j,
			       uint64_t now_ns)
{
	if (ceems_agent_extern_alive(j)) {
		ceems_info("job %u: its extern step still runs: its end is "
			   "waited for", j->spec.jobid);
		return;
	}
	ceems_agent_extern_ask_end(a, j, now_ns);
}
