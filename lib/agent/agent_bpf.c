/* agent_bpf.c - the node agent's side of the per-job IO and network
 * counters (lib/sources/bpf_io.h): the programs loaded once, while the agent
 * still holds its capabilities; a slot per registered job; the job's
 * processes (cgroup v1) or cgroup (v2) tagged at registration, at each
 * step's start and at each tick; the counters read at each tick and at
 * the job's end, its map entries removed then.
 *
 * On cgroup v1 the kernel cannot tell a job's processes by their cgroup
 * in BPF, so the job's freezer (else cpuacct) directory is walked and
 * every process listed is tagged; the fork hook tags their children at
 * once, between walks.  Processes owned by root there (slurmstepd) are
 * tagged to be followed only: their children are the job's, their own
 * IO (Slurm's) is not.  And only the job's processes running as its
 * user count (the root helpers slurmstepd and plugins fork do not). */
#include "config.h"

#include <sys/stat.h>
#include <sys/utsname.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "sources/bpf_io.h"
#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "base/fileio.h"
#include "base/log.h"
#include "sources/proc_stats.h"

#define WALK_DEPTH 4
#define WALK_DIRS 4096
#define PROCS_MAX 65536
#define MOUNTINFO_MAX (1 << 20)

static struct ceems_bpf_io *preloaded;
static bool preload_done;
static char preload_why[CEEMS_AGENT_WHY_MAX];
/* ebpf = per-tick: the task iterator, loaded at start too. */
static struct ceems_task_iter *preloaded_iter;

/* The task iterator for per-tick IO, or NULL (then /proc, logged). */
static struct ceems_task_iter *
load_iter(void)
{
	char why[256];
	struct ceems_task_iter *it = ceems_task_iter_open(why, sizeof(why));

	if (it != NULL)
		ceems_info("per-tick IO: the jobs' processes read by a BPF task iterator");
	else
		ceems_warning("per-tick IO: no BPF task iterator (%s); /proc/PID/io "
			      "instead, which a confined agent cannot read of other users' "
			      "processes: the jobs' IO will be absent, with the reason", why);
	return it;
}

/* Whether CONFIG wants the programs here; else WHY. */
static bool
wanted(const struct ceems_config *config, char *why, size_t why_size)
{
	if (strcmp(config->ebpf, "off") == 0) {
		snprintf(why, why_size, "eBPF is off (ebpf = off in ceems.conf)");
		return false;
	}
	/* Counted from the kernel's per-process counters (agent_task_io.c):
	 * no program to load. */
	if (ceems_agent_task_io_wanted(config)) {
		why[0] = '\0';
		return false;
	}
	/* A fixture tree: the kernel's cgroups are not the ones read. */
	if (config->cgroupfs_prefix[0] != '\0' &&
	    strcmp(config->cgroupfs_prefix, "/") != 0) {
		snprintf(why, why_size, "the cgroup tree read is not the kernel's "
			 "(cgroupfs_prefix is set)");
		return false;
	}
	return true;
}

/* A host where Slurm's v1 hierarchies are mounted attributes by process;
 * else by cgroup v2 id. */
static bool
host_by_cgroup(const struct ceems_config *config)
{
	struct ceems_cgroup_mounts mounts;
	char path[CEEMS_CONFIG_PATH_MAX + 32];
	char *text = malloc(MOUNTINFO_MAX);
	ssize_t n;
	bool v2 = true;

	snprintf(path, sizeof(path), "%s/self/mountinfo", config->procfs_root);
	if (text != NULL &&
	    (n = ceems_fileio_read_text_file(path, text, MOUNTINFO_MAX)) > 0 &&
	    ceems_cgroup_path_mounts_from_mountinfo(text, &mounts) == 0)
		v2 = mounts.v1[CEEMS_CG_FREEZER][0] == '\0' &&
		     mounts.v1[CEEMS_CG_CPUACCT][0] == '\0';
	free(text);
	return v2;
}

static struct ceems_bpf_io *
load(const struct ceems_config *config, char *why, size_t why_size)
{
	bool by_cgroup = host_by_cgroup(config);
	struct ceems_bpf_io *io;
	char full[768];	/* the log's: each hook's refusals */

	/* wanted() let only the key's other words (base/conf_keys.c) through. */
	io = ceems_bpf_io_open(by_cgroup, (enum ceems_bpf_attach)
			       ceems_bpf_choose_force_from_word(config->ebpf),
			       config->max_jobs, full, sizeof(full));
	if (io == NULL) {
		ceems_warning("per-job IO and network are not measured: %s", full);
		snprintf(why, why_size, "%s", full);
		return NULL;
	}
	ceems_info("eBPF loaded (jobs by %s): io %s, net %s, tcp_retrans %s, proc %s%s%s",
		   by_cgroup ? "cgroup v2 id" : "process",
		   ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_IO)),
		   ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_NET)),
		   ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_RETRANS)),
		   ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_PROC)),
		   ceems_bpf_io_refusals(io)[0] != '\0' ? "; better types refused: " : "",
		   ceems_bpf_io_refusals(io));
	return io;
}

void
ceems_agent_bpf_io_preload(const struct ceems_config *config)
{
	if (preload_done)
		return;
	preload_done = true;
	if (ceems_agent_task_io_wanted(config))
		preloaded_iter = load_iter();
	if (!wanted(config, preload_why, sizeof(preload_why)))
		return;
	preloaded = load(config, preload_why, sizeof(preload_why));
}

bool
ceems_agent_bpf_io_preloaded(void)
{
	return preloaded != NULL || preloaded_iter != NULL;
}

struct ceems_bpf_io *
ceems_agent_bpf_io_take(const struct ceems_config *config, char *why,
		  size_t why_size)
{
	struct ceems_bpf_io *io;

	if (preload_done) {
		io = preloaded;
		preloaded = NULL;
		if (io == NULL)
			snprintf(why, why_size, "%s", preload_why[0] != '\0' ?
				 preload_why : "eBPF programs already in use");
		return io;
	}
	if (!wanted(config, why, why_size))
		return NULL;
	return load(config, why, why_size);
}

bool
ceems_agent_bpf_io_maps_need_cap(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	char text[16];

	/* Unreadable: assume the strict setting. */
	if (ceems_fileio_read_text_file("/proc/sys/kernel/unprivileged_bpf_disabled",
				 text, sizeof(text)) > 0 && text[0] == '0')
		return false;
	if (uname(&u) < 0 || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return true;
	return major < 6 || (major == 6 && minor < 5);
}

/* What a walk of a job's cgroups tags, and with what. */
struct tag_walk {
	struct ceems_bpf_io *io;
	uint32_t slot;
	const char *procfs;
	char *buf;		/* PROCS_MAX bytes */
	unsigned tagged;
};

/* Tag every process listed in DIRFD's cgroup.procs (a visit of
 * ceems_cgroup_walk). */
static bool
tag_dir(int dirfd, void *arg)
{
	struct tag_walk *w = arg;
	ssize_t n = ceems_fileio_read_text_file_at(dirfd, "cgroup.procs", w->buf,
						   PROCS_MAX);
	const char *p = w->buf;
	uint32_t pid;

	while (n > 0 && ceems_cgroup_parse_next_pid(&p, &pid)) {
		uint32_t uid;
		int r;

		/* Its real uid (the eBPF programs count by it), not the owner
		 * of /proc/PID: that is the effective uid, root for a
		 * set-user-ID root program the user runs, which would then
		 * be followed only, its IO not counted. */
		if ((r = ceems_proc_stats_pid_uid(w->procfs, pid, &uid)) < 0) {
			if (r != -ENOENT && r != -ESRCH)
				ceems_debug("eBPF: cannot tell who runs pid %u (%s); not followed",
					    pid, strerror(-r));
			continue;
		}
		r = ceems_bpf_io_tag_pid(w->io, w->slot, pid, uid == 0);
		if (r == 0)
			w->tagged++;
		else if (r == -ENOSPC)
			ceems_debug("eBPF: the process map is full; pid %u not followed", pid);
	}
	return true;
}

/* The job's processes (v1) or cgroup (v2) into the maps. */
static void
tag_job(struct ceems_agent *a, struct agent_job *j)
{
	char dir[CEEMS_CGROUP_PATH_MAX * 2];
	struct stat st;
	int fd;

	if (ceems_bpf_io_by_cgroup(a->bpf)) {
		unsigned level = 0;

		/* Once: the job's directory keeps its id. */
		if (j->bpf_tagged ||
		    ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts,
					 CEEMS_CG_NCONTROLLERS, a->cgroup_prefix,
					 dir, sizeof(dir)) < 0 ||
		    stat(dir, &st) < 0)
			return;
		for (const char *p = j->spec.cgroup.unified; *p != '\0'; p++)
			if (*p == '/' && p[1] != '/' && p[1] != '\0')
				level++;
		if (ceems_bpf_io_tag_cgroup(a->bpf, j->bpf_slot, st.st_ino,
					    level) == 0)
			j->bpf_tagged = true;
		return;
	}
	if (ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts, CEEMS_CG_FREEZER,
				 a->cgroup_prefix, dir, sizeof(dir)) < 0 &&
	    ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts, CEEMS_CG_CPUACCT,
				 a->cgroup_prefix, dir, sizeof(dir)) < 0)
		return;
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	if (a->bpf_buf == NULL)
		a->bpf_buf = malloc(PROCS_MAX);
	if (a->bpf_buf != NULL) {
		struct tag_walk w = { a->bpf, j->bpf_slot, a->config.procfs_root,
				      a->bpf_buf, 0 };

		ceems_cgroup_walk(fd, WALK_DEPTH, WALK_DIRS, tag_dir, &w);
		if (w.tagged > 0)
			j->bpf_tagged = true;
	}
	close(fd);
}

void
ceems_agent_bpf_open(struct ceems_agent *a)
{
	a->task_io = ceems_agent_task_io_wanted(&a->config);
	if (a->task_io) {
		/* Taken once, as the programs are; else loaded now. */
		a->task_iter = preload_done ? preloaded_iter : load_iter();
		preloaded_iter = NULL;
	}
	a->bpf = ceems_agent_bpf_io_take(&a->config, a->bpf_why, sizeof(a->bpf_why));
}

void
ceems_agent_bpf_close(struct ceems_agent *a)
{
	ceems_bpf_io_close(a->bpf);
	a->bpf = NULL;
	ceems_agent_task_io_close(a);
	free(a->bpf_buf);
	a->bpf_buf = NULL;
}

void
ceems_agent_bpf_job_start(struct ceems_agent *a, struct agent_job *j)
{
	int r;

	if (a->task_io) {
		ceems_agent_task_io_job_start(a, j, false);
		return;
	}
	if (a->bpf == NULL)
		return;
	r = ceems_bpf_io_job_start(a->bpf, j->spec.uid, &j->bpf_slot);
	if (r < 0) {
		snprintf(j->bpf_why, sizeof(j->bpf_why),
			 "no eBPF counter slot for the job (%s)", strerror(-r));
		return;
	}
	j->bpf = a->bpf;
	j->bpf_drops = ceems_bpf_io_drops(a->bpf);
	tag_job(a, j);
}

/* Read job J's counts; with FIND_NEW, first look for processes of the
 * job that are not followed yet (cgroup v1: a walk of the job's
 * cgroup.procs files, about a dozen system calls per directory).  The
 * fork hook follows every child of a followed process, and each step's
 * start walks the job as its first task runs, so what a walk still
 * finds is rare (a process moved into the job from outside, such as an
 * adopted ssh session): the tick walks on its full readings only. */
void
ceems_agent_bpf_job_read(struct ceems_agent *a, struct agent_job *j,
			 bool find_new)
{
	if (j->tio != NULL) {
		ceems_agent_task_io_job_read(a, j, false);
		return;
	}
	if (j->bpf == NULL)
		return;
	if (find_new && !j->gone)
		tag_job(a, j);
	if (ceems_bpf_io_read(j->bpf, j->bpf_slot, &j->io) == 0)
		j->io.dropped = ceems_bpf_io_drops(j->bpf) - j->bpf_drops;
}

void
ceems_agent_bpf_job_end(struct agent_job *j)
{
	ceems_agent_task_io_job_end(j);
	if (j->bpf == NULL)
		return;
	ceems_bpf_io_job_end(j->bpf, j->bpf_slot);
	j->bpf = NULL;
}

void
ceems_agent_bpf_resume(struct ceems_agent *a, struct agent_job *j,
		 const struct ceems_agent_io_report *saved, double down_s)
{
	j->have_io_before = true;
	j->io_before = *saved;
	/* What was padding before the field: anything else is per call. */
	if (j->io_before.counting != CEEMS_IO_PER_TICK)
		j->io_before.counting = CEEMS_IO_PER_CALL;
	j->io_before.absent_why[sizeof(j->io_before.absent_why) - 1] = '\0';
	j->io_down_s = down_s;
	if (!j->gone && a->task_io) {
		/* Its processes' counts so far are the earlier agent's. */
		ceems_agent_task_io_job_start(a, j, true);
		return;
	}
	if (!j->gone) {
		ceems_agent_bpf_job_start(a, j);
		/* Its new slot read at once: the counts of a series made
		 * now start from the restored ones, not from unknown. */
		ceems_agent_bpf_job_read(a, j, false);
		return;
	}
	/* It ended while the agent was down: what the earlier agent
	 * counted is all there is, short of the time it was down. */
	memset(&j->io, 0, sizeof(j->io));
	j->bpf_tagged = true;	/* nothing to tag: nothing more to count */
	j->io.have_io = saved->have_io;
	j->io.have_net = saved->have_net;
	j->io.have_tcp_retrans = saved->have_tcp_retrans;
}

/* What this agent knows of job J's IO, absent_why saying why not. */
static void
fill_current(const struct ceems_agent *a, const struct agent_job *j,
	     struct ceems_agent_io_report *out)
{
	/* It held a slot (it may have ended since). */
	bool had_slot = j->bpf != NULL || j->io.have_io;

	if (j->tio_denied) {
		memset(out, 0, sizeof(*out));
		snprintf(out->absent_why, sizeof(out->absent_why), "%s", j->bpf_why);
		return;
	}
	if (had_slot && j->bpf_tagged) {
		*out = j->io;
		return;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->absent_why, sizeof(out->absent_why), "%s",
		 had_slot ?
		 "the job's cgroup or processes could not be tagged for eBPF" :
		 j->bpf_why[0] != '\0' ? j->bpf_why :
		 a->bpf_why[0] != '\0' ? a->bpf_why :
		 "the agent restarted while the job ran");
}

void
ceems_agent_bpf_fill(const struct ceems_agent *a, const struct agent_job *j,
	       struct ceems_agent_io_report *out)
{
	struct ceems_agent_io_report now;

	fill_current(a, j, &now);
	if (!j->have_io_before) {
		*out = now;
		return;
	}
	ceems_agent_bpf_io_resume(&j->io_before, &now, j->io_down_s, out);
}

static void
add_counts(struct ceems_agent_io_report *out,
	   const struct ceems_agent_io_report *now)
{
	out->read_bytes += now->read_bytes;
	out->read_ops += now->read_ops;
	out->read_errors += now->read_errors;
	out->write_bytes += now->write_bytes;
	out->write_ops += now->write_ops;
	out->write_errors += now->write_errors;
	for (int d = 0; d < 2; d++)
		for (int p = 0; p < 2; p++)
			for (int f = 0; f < 2; f++) {
				out->net_bytes[d][p][f] += now->net_bytes[d][p][f];
				out->net_msgs[d][p][f] += now->net_msgs[d][p][f];
			}
	out->tcp_retrans += now->tcp_retrans;
	out->dropped += now->dropped;
}

void
ceems_agent_bpf_io_resume(const struct ceems_agent_io_report *before,
		      const struct ceems_agent_io_report *now, double down_s,
		      struct ceems_agent_io_report *out)
{
	struct ceems_agent_io_report r;

	memset(&r, 0, sizeof(r));
	if (!before->have_io) {
		/* Not measured from the job's start: not the job's figure. */
		snprintf(r.absent_why, sizeof(r.absent_why), "%s",
			 before->absent_why[0] != '\0' ? before->absent_why :
			 "the agent restarted while the job ran");
		*out = r;
		return;
	}
	if (!now->have_io) {
		/* Cut short rather than not said. */
		size_t n = (size_t)snprintf(r.absent_why, sizeof(r.absent_why),
					    "not measured after an agent restart: ");

		if (n < sizeof(r.absent_why))
			memcpy(r.absent_why + n, now->absent_why[0] != '\0' ?
			       now->absent_why : "unknown",
			       strnlen(now->absent_why[0] != '\0' ?
				       now->absent_why : "unknown",
				       sizeof(r.absent_why) - 1 - n));
		*out = r;
		return;
	}
	r = *before;
	add_counts(&r, now);
	/* Counted per tick before or after (the key changed across the
	 * restart): the sum has per-tick's meaning. */
	if (now->counting == CEEMS_IO_PER_TICK)
		r.counting = CEEMS_IO_PER_TICK;
	r.have_net = before->have_net && now->have_net;
	r.have_tcp_retrans = before->have_tcp_retrans && now->have_tcp_retrans;
	if (!r.have_net) {
		memset(r.net_bytes, 0, sizeof(r.net_bytes));
		memset(r.net_msgs, 0, sizeof(r.net_msgs));
	}
	if (!r.have_tcp_retrans)
		r.tcp_retrans = 0;
	r.absent_why[0] = '\0';
	r.unmeasured_s = before->unmeasured_s + now->unmeasured_s +
			 (down_s > 0 ? down_s : 0);
	*out = r;
}
