/* agent_task_io.c - the node agent's side of `ebpf = per-tick`: each
 * registered job's IO read from the kernel's per-process counters
 * (lib/sources/task_io.h), with no program on any call.  At each reading
 * the job's cgroup tree (v1: its freezer, else cpuacct directory; v2:
 * its directory) is walked, every process listed in its cgroup.procs is
 * read from /proc (stat, status, io: three small files), and the job's
 * tracker turns the readings into its total.  Readings happen at every
 * tick (the loss of the mode, a process's IO since the last reading
 * when a process outside the job reaps it, is at most one tick), and
 * at each step's start and end.
 *
 * The processes' counters come from a BPF task iterator, read once per
 * tick for every job (lib/sources/task_iter.c): another user's
 * /proc/PID/io passes a ptrace check that the agent, confined by
 * Landlock, fails whatever its capabilities.  Without the iterator,
 * /proc/PID/io is read (an unconfined agent with CAP_SYS_PTRACE, the
 * tests); a process refused there leaves the job's IO absent, with the
 * reason, never a part passed for the whole. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "base/log.h"
#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "base/fileio.h"
#include "sources/task_io.h"

#define WALK_DEPTH 4
#define WALK_DIRS 4096
#define PROCS_MAX 65536
/* Processes of one job read at one tick, at most. */
#define SAMPLES_MAX 65536

struct read_walk {
	struct ceems_agent *a;
	uint32_t uid;
	size_t n;
	int denied;			/* a process's io file refused */
	/* Not every process could be listed: the reading is not taken
	 * (one left out would count anew, in full, when seen again). */
	bool full;
	bool failed;
};

/* Read every process listed in DIRFD's cgroup.procs (a visit of
 * ceems_cgroup_walk). */
static bool
read_dir(int dirfd, void *arg)
{
	struct read_walk *w = arg;
	struct ceems_agent *a = w->a;
	ssize_t n = ceems_fileio_read_text_file_at(dirfd, "cgroup.procs",
						   a->bpf_buf, PROCS_MAX);
	const char *p = a->bpf_buf;
	uint32_t pid;

	/* A cgroup removed meanwhile: its processes have gone. */
	if (n < 0 && n != -ENOENT && n != -ENODEV)
		w->failed = true;
	while (n > 0 && ceems_cgroup_parse_next_pid(&p, &pid)) {
		int r;

		if (w->n == a->tio_cap) {
			size_t cap = a->tio_cap == 0 ? 256 : a->tio_cap * 2;
			struct ceems_task_io_sample *s;

			if (cap > SAMPLES_MAX ||
			    (s = realloc(a->tio_samples, cap * sizeof(*s))) == NULL) {
				w->full = true;
				return false;
			}
			a->tio_samples = s;
			a->tio_cap = cap;
		}
		if (a->task_iter != NULL)
			r = ceems_task_iter_find(a->task_iter, pid, w->uid,
						 &a->tio_samples[w->n]);
		else
			r = ceems_task_io_read_pid(a->config.procfs_root, pid, w->uid,
						   &a->tio_samples[w->n]);
		if (r == 0)
			w->n++;
		else if (r == -EACCES || r == -EPERM)
			w->denied = r;
		/* Else it went meanwhile (its reaper's counter has it), or
		 * came after the iterator's reading (the next one has it). */
	}
	return true;
}

/* The directory listing job J's processes, open; -1 when none. */
static int
open_job_dir(struct ceems_agent *a, struct agent_job *j)
{
	char dir[CEEMS_CGROUP_PATH_MAX * 2];

	if (j->spec.cgroup.version == CEEMS_CGROUP_V1) {
		if (ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts,
					      CEEMS_CG_FREEZER, a->cgroup_prefix,
					      dir, sizeof(dir)) < 0 &&
		    ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts,
					      CEEMS_CG_CPUACCT, a->cgroup_prefix,
					      dir, sizeof(dir)) < 0)
			return -1;
	} else if (ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts,
					     CEEMS_CG_NCONTROLLERS,
					     a->cgroup_prefix, dir,
					     sizeof(dir)) < 0) {
		return -1;
	}
	return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
}

bool
ceems_agent_task_io_wanted(const struct ceems_config *config)
{
	return strcmp(config->ebpf, "per-tick") == 0;
}

void
ceems_agent_task_io_job_start(struct ceems_agent *a, struct agent_job *j,
			      bool restored)
{
	/* Restored: the earlier agent counted its processes' past. */
	j->tio = ceems_task_io_job_new(restored);
	if (j->tio == NULL) {
		snprintf(j->bpf_why, sizeof(j->bpf_why),
			 "no memory to count the job's IO");
		return;
	}
	memset(&j->io, 0, sizeof(j->io));
	j->io.have_io = true;
	j->io.counting = CEEMS_IO_PER_TICK;
	ceems_agent_task_io_job_read(a, j, false);
}

void
ceems_agent_task_io_job_read(struct ceems_agent *a, struct agent_job *j,
			     bool in_tick)
{
	struct read_walk w = { a, j->spec.uid, 0, 0, false, false };
	struct ceems_task_io_counts total;
	int fd, r;

	if (j->tio == NULL || j->gone)
		return;
	if (a->bpf_buf == NULL && (a->bpf_buf = malloc(PROCS_MAX)) == NULL)
		return;
	/* Once for all the jobs of a tick; afresh for a reading outside
	 * one (a registration, a step's start or end). */
	if (a->task_iter != NULL &&
	    !(in_tick && a->task_iter_read && a->task_iter_seq == a->tick_seq)) {
		a->task_iter_ret = ceems_task_iter_read(a->task_iter);
		a->task_iter_read = in_tick;
		a->task_iter_seq = a->tick_seq;
		if (a->task_iter_ret < 0)
			ceems_debug("per-tick IO: the task iterator's reading failed (%s)",
				    strerror(-a->task_iter_ret));
	}
	/* No reading of the node's processes: none taken this time. */
	if (a->task_iter != NULL && a->task_iter_ret < 0)
		return;
	if ((fd = open_job_dir(a, j)) < 0)
		return;
	ceems_cgroup_walk(fd, WALK_DEPTH, WALK_DIRS, read_dir, &w);
	close(fd);
	if (w.full || w.failed) {
		ceems_debug("job %u: %s; per-tick IO waits for a whole reading",
			    j->spec.jobid, w.full ? "more than 65536 processes" :
			    "a cgroup.procs file unreadable");
		return;
	}
	if (w.denied != 0 && !j->tio_denied) {
		ceems_warning("job %u: a process's IO counters are not readable (%s): "
			      "the job's IO is not measured", j->spec.jobid,
			      strerror(-w.denied));
		snprintf(j->bpf_why, sizeof(j->bpf_why), "per-tick IO: a process's "
			 "/proc/PID/io was not readable (%s)", strerror(-w.denied));
		j->tio_denied = true;
	}
	if ((r = ceems_task_io_job_update(j->tio, a->tio_samples, w.n)) < 0)
		return;
	j->bpf_tagged = true;
	ceems_task_io_job_total(j->tio, &total);
	j->io.read_bytes = total.rchar;
	j->io.read_ops = total.syscr;
	j->io.write_bytes = total.wchar;
	j->io.write_ops = total.syscw;
}

void
ceems_agent_task_io_job_end(struct agent_job *j)
{
	ceems_task_io_job_free(j->tio);
	j->tio = NULL;
}

void
ceems_agent_task_io_close(struct ceems_agent *a)
{
	ceems_task_iter_close(a->task_iter);
	a->task_iter = NULL;
	free(a->tio_samples);
	a->tio_samples = NULL;
	a->tio_cap = 0;
}
