/* agent_adopt.c - jobs that started while the agent was away (restarted
 * by an upgrade, crashed, stopped for a while): their plugin found no
 * agent to register with, and nothing would measure them.  Slurm's
 * cgroup tree names every job on the node, so the agent looks there, at
 * its first tick and once a minute, and adopts the jobs it does not
 * know: measured from then on, the time before a gap in their data
 * quality (their record's gaps and coverage say what was missed).
 *
 * Where to look is learned, not configured: the directory above each
 * registered job ("/slurm_node1" in cgroup v1, whose jobs sit under
 * uid_U/job_J; "/system.slice/slurmstepd.scope" in v2, jobs as job_J or,
 * from Slurm 26.05, by their SLUID, the job id then read from the title
 * of a slurmstepd of the job),
 * kept in STATE_DIR/slurm-cgroups so that a restarted agent knows it
 * before any job registers.  A job is adopted only when its oldest
 * process (its start) started while no agent listened: after the last
 * checkpoint of the agent before and before this one's first scan (a job
 * that started at another time registered itself, or is one whose record
 * is written and whose cgroup lingers), while processes run in its
 * cgroups, and not while its record is being written or just was.  The
 * first registration of an adopted job (a later step's) gives it what
 * the plugin knows: its owner, memory, GPUs and Slurm's start time. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "base/fileio.h"
#include "base/log.h"
#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "cgroup/step_ids.h"
#include "sources/proc_stats.h"

#define ROOTS_FILE "slurm-cgroups"
#define ROOTS_TEXT_MAX 4096
#define SCAN_NS (60 * UINT64_C(1000000000))
/* Below a job: step_S/task_T, in v2 step_S/user/task_T. */
#define JOB_DEPTH 3
#define JOB_DIRS 256
/* Processes looked at per cgroup, for the job's start and owner. */
#define PIDS_PER_DIR 8

/* The directory above jobs in cgroup v1 ("/slurm_node1" of
 * "/slurm_node1/uid_1000/job_42") or v2 ("/system.slice/x.scope" of
 * ".../job_42" or, from Slurm 26.05, ".../sEKNKTV3WPV500"), into ROOT.
 * False when PATH is not a Slurm job's. */
static bool
root_of(enum ceems_cgroup_version v, const char *path, char *root, size_t size)
{
	const char *job = strrchr(path, '/'), *uid;
	size_t n;

	if (job == NULL || (strncmp(job, "/job_", 5) != 0 &&
			    !(v == CEEMS_CGROUP_V2 &&
			      ceems_step_ids_is_sluid(job + 1, strlen(job + 1)))))
		return false;
	n = (size_t)(job - path);
	if (v == CEEMS_CGROUP_V1) {
		for (uid = job - 1; uid > path && *uid != '/'; uid--)
			;
		if (uid <= path || strncmp(uid, "/uid_", 5) != 0)
			return false;
		n = (size_t)(uid - path);
	}
	if (n == 0 || n >= size)
		return false;
	memcpy(root, path, n);
	root[n] = '\0';
	return true;
}

/* A root read back from disk: absolute, without "." or ".." parts or
 * bytes a path here never has. */
static bool
root_sane(const char *root)
{
	if (root[0] != '/' || strstr(root, "/.") != NULL ||
	    strlen(root) >= CEEMS_CGROUP_PATH_MAX)
		return false;
	for (const char *p = root; *p != '\0'; p++)
		if ((unsigned char)*p <= ' ' || *p == 0x7f)
			return false;
	return true;
}

static bool
known_root(const struct agent_adopt *ad, enum ceems_cgroup_version v,
	   const char *root)
{
	for (unsigned i = 0; i < ad->nroots; i++)
		if (ad->version[i] == v && strcmp(ad->roots[i], root) == 0)
			return true;
	return false;
}

static void
save_roots(const struct ceems_agent *a)
{
	const struct agent_adopt *ad = a->adopt;
	char text[ROOTS_TEXT_MAX];
	size_t len = 0;
	int r;

	text[0] = '\0';
	for (unsigned i = 0; i < ad->nroots; i++) {
		r = snprintf(text + len, sizeof(text) - len, "%s %s\n",
			     ad->version[i] == CEEMS_CGROUP_V2 ? "v2" : "v1",
			     ad->roots[i]);
		if (r < 0 || (size_t)r >= sizeof(text) - len)
			break;
		len += (size_t)r;
	}
	r = ceems_fileio_replace(a->config.state_dir, ROOTS_FILE, text);
	if (r < 0)
		ceems_warning("cannot keep where Slurm's job cgroups are in %s/" ROOTS_FILE
			      " (%s): a restarted agent finds the jobs that started "
			      "meanwhile only once a job registers",
			      a->config.state_dir, strerror(-r));
}

static bool
add_root(struct agent_adopt *ad, enum ceems_cgroup_version v, const char *root)
{
	if (ad->nroots >= CEEMS_AGENT_ADOPT_ROOTS || known_root(ad, v, root))
		return false;
	ad->version[ad->nroots] = v;
	snprintf(ad->roots[ad->nroots], sizeof(ad->roots[0]), "%s", root);
	ad->nroots++;
	return true;
}

void
ceems_agent_adopt_learn(struct ceems_agent *a, const struct ceems_cgroup_job *cg)
{
	char root[CEEMS_CGROUP_PATH_MAX];
	const char *path = cg->version == CEEMS_CGROUP_V2 ? cg->unified :
			   cg->v1[CEEMS_CG_CPUACCT][0] != '\0' ?
			   cg->v1[CEEMS_CG_CPUACCT] : cg->v1[CEEMS_CG_MEMORY];

	if (a->adopt == NULL || !root_of(cg->version, path, root, sizeof(root)) ||
	    !add_root(a->adopt, cg->version, root))
		return;
	ceems_info("jobs' cgroups under %s: jobs that start while the agent is away are found there",
		   root);
	/* Written at the next checkpoint, not in the registration's reply. */
	a->adopt->roots_dirty = true;
}

void
ceems_agent_adopt_save(struct ceems_agent *a)
{
	if (a->adopt == NULL || !a->adopt->roots_dirty)
		return;
	a->adopt->roots_dirty = false;
	save_roots(a);
}

void
ceems_agent_adopt_away_since(struct ceems_agent *a, uint64_t ns)
{
	if (a->adopt != NULL)
		a->adopt->away_from_ns = ns;
}

static void
load_roots(struct ceems_agent *a)
{
	char path[CEEMS_CONFIG_PATH_MAX + sizeof(ROOTS_FILE) + 1];
	char text[ROOTS_TEXT_MAX], *line, *save = NULL;
	ssize_t n;

	snprintf(path, sizeof(path), "%s/" ROOTS_FILE, a->config.state_dir);
	n = ceems_fileio_read_text_file(path, text, sizeof(text));
	if (n < 0) {
		if (n != -ENOENT)
			ceems_warning("%s: cannot read it (%s): jobs that started while the agent was away are found once a job registers",
				      path, strerror((int)-n));
		return;
	}
	for (line = strtok_r(text, "\n", &save); line != NULL;
	     line = strtok_r(NULL, "\n", &save)) {
		enum ceems_cgroup_version v = strncmp(line, "v2 ", 3) == 0 ?
			CEEMS_CGROUP_V2 : CEEMS_CGROUP_V1;

		if ((strncmp(line, "v1 ", 3) != 0 && strncmp(line, "v2 ", 3) != 0) ||
		    !root_sane(line + 3)) {
			ceems_warning("%s: line '%.60s' is no cgroup root: ignored", path, line);
			continue;
		}
		add_root(a->adopt, v, line + 3);
	}
}

int
ceems_agent_adopt_open(struct ceems_agent *a)
{
	a->adopt = calloc(1, sizeof(*a->adopt));
	if (a->adopt == NULL)
		return -ENOMEM;
	load_roots(a);
	return 0;
}

void
ceems_agent_adopt_close(struct ceems_agent *a)
{
	free(a->adopt);
	a->adopt = NULL;
}

/* ---- One job's processes: alive, its start, its owner ---- */

struct job_procs {
	const char *procfs;
	bool v2;
	unsigned alive;			/* processes found */
	uint64_t start_ticks;		/* the oldest one's, since boot */
	bool have_uid;
	uint32_t uid;
	char buf[16384];
};

/* A visit of ceems_cgroup_walk: the first processes of a cgroup. */
static bool
look_at_procs(int dirfd, void *arg)
{
	struct job_procs *jp = arg;
	ssize_t n = ceems_fileio_read_text_file_at(dirfd, "cgroup.procs", jp->buf,
						   sizeof(jp->buf));
	const char *p = jp->buf;
	unsigned seen = 0;
	uint32_t pid;

	while (n > 0 && seen < PIDS_PER_DIR && ceems_cgroup_parse_next_pid(&p, &pid)) {
		uint64_t ticks;
		uint32_t uid;

		seen++;
		if (ceems_proc_stats_pid_start(jp->procfs, pid, &ticks) < 0)
			continue;
		if (jp->alive == 0 || ticks < jp->start_ticks)
			jp->start_ticks = ticks;
		jp->alive++;
		/* v2 does not name the user: the job's own processes run
		 * as it, Slurm's as root. */
		if (jp->v2 && !(jp->have_uid && jp->uid != 0) &&
		    ceems_proc_stats_pid_uid(jp->procfs, pid, &uid) == 0) {
			jp->have_uid = true;
			jp->uid = uid;
		}
	}
	return true;
}

/* ---- The scan ---- */

/* How long ago, by the boot-time clock, START_TICKS (a process's start
 * in clock ticks since boot) was. */
static uint64_t
ago_ns(uint64_t start_ticks)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	uint64_t boot_now, start;

	if (hz <= 0 || clock_gettime(CLOCK_BOOTTIME, &ts) < 0)
		return 0;
	boot_now = (uint64_t)ts.tv_sec * UINT64_C(1000000000) + (uint64_t)ts.tv_nsec;
	start = start_ticks / (uint64_t)hz * UINT64_C(1000000000) +
		start_ticks % (uint64_t)hz * (UINT64_C(1000000000) / (uint64_t)hz);
	return boot_now > start ? boot_now - start : 0;
}

/* Job JOBID's cgroup at ROOT/SUB (SUB "uid_U/job_J" in v1, "job_J" in
 * v2), whose directory is open on FD: adopted when it is a live job the
 * agent does not hold. */
/* Job JOBID cannot be adopted (R): a warning the first time, then a
 * debug line at each scan, so that a full agent does not fill its log. */
static void
say_refused(struct agent_adopt *ad, uint32_t jobid, int r)
{
	for (unsigned i = 0; i < ad->nrefused && i < CEEMS_AGENT_ADOPT_REFUSED; i++)
		if (ad->refused[i] == jobid) {
			ceems_debug("job %u still cannot be adopted: %s", jobid,
				    strerror(-r));
			return;
		}
	ad->refused[ad->nrefused++ % CEEMS_AGENT_ADOPT_REFUSED] = jobid;
	ceems_warning("job %u started while the agent was away and cannot be adopted: %s",
		      jobid, strerror(-r));
}

static void
consider(struct ceems_agent *a, enum ceems_cgroup_version v, const char *root,
	 const char *sub, uint32_t jobid, int fd, bool have_uid, uint32_t uid,
	 uint64_t now_ns)
{
	static struct job_procs jp;
	struct ceems_agent_job_spec spec;
	uint64_t missed_ns, start_ns;
	char *path;
	int r;

	if (ceems_agent_find_job(a, jobid, NULL) != NULL ||
	    ceems_agent_finish_find(a->finish, jobid) != NULL ||
	    ceems_agent_finish_ended_any(a->finish, jobid))
		return;
	memset(&jp, 0, sizeof(jp));
	jp.procfs = a->config.procfs_root;
	jp.v2 = v == CEEMS_CGROUP_V2;
	ceems_cgroup_walk(fd, JOB_DEPTH, JOB_DIRS, look_at_procs, &jp);
	/* cgroup v2 names no user: a job whose processes are all root's so
	 * far (slurmstepd's, at its start or end) waits for the next scan. */
	if (jp.alive == 0 || (!have_uid && (!jp.have_uid || jp.uid == 0)))
		return;
	missed_ns = ago_ns(jp.start_ticks);
	start_ns = missed_ns < now_ns ? now_ns - missed_ns : 0;
	if (start_ns >= a->adopt->away_until_ns ||
	    (a->adopt->away_from_ns != 0 && start_ns <= a->adopt->away_from_ns))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.jobid = jobid;
	spec.uid = have_uid ? uid : jp.uid;
	spec.cgroup.version = v;
	path = v == CEEMS_CGROUP_V2 ? spec.cgroup.unified : spec.cgroup.v1[CEEMS_CG_CPUACCT];
	if (snprintf(path, CEEMS_CGROUP_PATH_MAX, "%s/%s", root, sub) >= CEEMS_CGROUP_PATH_MAX)
		return;
	if (v == CEEMS_CGROUP_V1)
		ceems_cgroup_path_job_fill_siblings(&spec.cgroup, &a->mounts,
						    a->cgroup_prefix);
	r = ceems_agent_register_adopted(a, &spec, missed_ns, now_ns);
	if (r == 0)
		ceems_info("job %u (uid %u) adopted: it started %.1f s ago while the agent was away; "
			     "measured from now on, the time before is a gap in its record",
			     jobid, spec.uid, (double)missed_ns / 1e9);
	else if (r != -EEXIST)
		say_refused(a->adopt, jobid, r);
}

/* The job id of a directory named job_J, or 0. */
static uint32_t
job_id_of(const char *name)
{
	char *end;
	unsigned long id;

	if (strncmp(name, "job_", 4) != 0 || name[4] < '1' || name[4] > '9')
		return 0;
	id = strtoul(name + 4, &end, 10);
	return *end == '\0' && id <= UINT32_MAX ? (uint32_t)id : 0;
}

/* The job id in the title ("slurmstepd: [J.S]") of process PID, when
 * it runs as root and S is STEP; 0 otherwise.  Both files are read
 * through one descriptor of /proc/PID, so that a pid reused between the
 * two reads gives nothing (the descriptor then reads ESRCH).  Only
 * root's processes are believed: a job's own can set their titles. */
static uint32_t
title_job_id(const char *procfs, uint32_t pid, const char *step)
{
	static char text[4096];
	char path[CEEMS_CONFIG_PATH_MAX + 16], got[CEEMS_STEP_ID_MAX];
	uint32_t uid, jobid = 0;
	int fd;

	if (snprintf(path, sizeof(path), "%s/%u", procfs, pid) >= (int)sizeof(path) ||
	    (fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return 0;
	if (ceems_fileio_read_text_file_at(fd, "cmdline", text, sizeof(text)) <= 0 ||
	    ceems_step_ids_from_title(text, &jobid, got, sizeof(got)) < 0 ||
	    strcmp(got, step) != 0 ||
	    ceems_fileio_read_text_file_at(fd, "status", text, sizeof(text)) <= 0 ||
	    ceems_proc_stats_parse_proc_status_uid(text, &uid) < 0 || uid != 0)
		jobid = 0;
	close(fd);
	return jobid;
}

/* The job id that a root process of STEP_DIR/slurm (a slurmstepd) gives
 * in its title, when it names that step; 0 when none. */
static uint32_t
stepd_job_id(const struct ceems_agent *a, int jobfd, const char *step_dir)
{
	static char text[4096];
	char path[sizeof(((struct dirent64 *)0)->d_name) + 32];
	const char *p = text;
	uint32_t pid, jobid;

	if (snprintf(path, sizeof(path), "%s/slurm/cgroup.procs", step_dir) >= (int)sizeof(path) ||
	    ceems_fileio_read_text_file_at(jobfd, path, text, sizeof(text)) <= 0)
		return 0;
	while (ceems_cgroup_parse_next_pid(&p, &pid))
		if ((jobid = title_job_id(a->config.procfs_root, pid,
					  step_dir + strlen("step_"))) != 0)
			return jobid;
	return 0;
}

/* The job id of a SLUID-named job directory open on FD (Slurm 26.05 on
 * cgroup v2): the name does not hold it, a slurmstepd of one of its steps
 * does.  0 when none says. */
static uint32_t
sluid_job_id(const struct ceems_agent *a, int fd)
{
	static struct ceems_dir_reader d;
	const struct dirent64 *e;
	uint32_t jobid = 0;

	ceems_fileio_dir_open(&d, fd);
	while (jobid == 0 && (e = ceems_fileio_dir_next(&d)) != NULL)
		if (e->d_type == DT_DIR &&
		    ceems_step_ids_is_step_dir(e->d_name, strlen(e->d_name)))
			jobid = stepd_job_id(a, fd, e->d_name);
	return jobid;
}

/* Every job_J (or SLUID-named) directory in DIRFD (under ROOT/PREFIX). */
static void
scan_jobs(struct ceems_agent *a, enum ceems_cgroup_version v, const char *root,
	  const char *prefix, int dirfd, bool have_uid, uint32_t uid,
	  uint64_t now_ns)
{
	static struct ceems_dir_reader d;
	char sub[sizeof(((struct dirent64 *)0)->d_name) + 32];
	const struct dirent64 *e;

	ceems_fileio_dir_open(&d, dirfd);
	while ((e = ceems_fileio_dir_next(&d)) != NULL) {
		uint32_t jobid = job_id_of(e->d_name);
		bool sluid = jobid == 0 && v == CEEMS_CGROUP_V2 &&
			     ceems_step_ids_is_sluid(e->d_name, strlen(e->d_name));
		int fd;

		if ((jobid == 0 && !sluid) || e->d_type != DT_DIR ||
		    snprintf(sub, sizeof(sub), "%s%s", prefix, e->d_name) >= (int)sizeof(sub))
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (sluid)
			jobid = sluid_job_id(a, fd);
		if (jobid != 0)
			consider(a, v, root, sub, jobid, fd, have_uid, uid, now_ns);
		close(fd);
	}
}

/* Every uid_U directory of a v1 root open on DIRFD. */
static void
scan_users(struct ceems_agent *a, const char *root, int dirfd, uint64_t now_ns)
{
	struct ceems_dir_reader d;
	const struct dirent64 *e;
	char prefix[32];

	ceems_fileio_dir_open(&d, dirfd);
	while ((e = ceems_fileio_dir_next(&d)) != NULL) {
		unsigned long uid;
		char *end;
		int fd;

		if (strncmp(e->d_name, "uid_", 4) != 0 || e->d_type != DT_DIR ||
		    e->d_name[4] < '0' || e->d_name[4] > '9')
			continue;
		uid = strtoul(e->d_name + 4, &end, 10);
		if (*end != '\0' || uid > UINT32_MAX)
			continue;
		fd = openat(dirfd, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0)
			continue;
		if (snprintf(prefix, sizeof(prefix), "%s/", e->d_name) >= (int)sizeof(prefix))
			continue;
		scan_jobs(a, CEEMS_CGROUP_V1, root, prefix, fd, true, (uint32_t)uid, now_ns);
		close(fd);
	}
}

/* The absolute directory of ROOT in the hierarchy that holds jobs' CPU
 * time (v1 cpuacct, v2 the unified tree). */
static int
root_dir(const struct ceems_agent *a, enum ceems_cgroup_version v,
	 const char *root, char *dir, size_t size)
{
	struct ceems_cgroup_job at;

	memset(&at, 0, sizeof(at));
	at.version = v;
	snprintf(v == CEEMS_CGROUP_V2 ? at.unified : at.v1[CEEMS_CG_CPUACCT],
		 CEEMS_CGROUP_PATH_MAX, "%s", root);
	return ceems_cgroup_path_job_dir(&at, &a->mounts,
					 v == CEEMS_CGROUP_V2 ? CEEMS_CG_NCONTROLLERS :
					 CEEMS_CG_CPUACCT,
					 a->cgroup_prefix, dir, size);
}

void
ceems_agent_adopt_scan(struct ceems_agent *a, uint64_t now_ns)
{
	struct agent_adopt *ad = a->adopt;
	char dir[CEEMS_CGROUP_DIR_MAX];

	if (ad == NULL || (ad->next_ns != 0 && now_ns < ad->next_ns))
		return;
	ad->next_ns = now_ns + SCAN_NS;
	/* From the first scan on the agent listens: a job that starts
	 * now registers itself. */
	if (ad->away_until_ns == 0)
		ad->away_until_ns = now_ns;
	for (unsigned i = 0; i < ad->nroots; i++) {
		int fd;

		if (root_dir(a, ad->version[i], ad->roots[i], dir, sizeof(dir)) < 0 ||
		    (fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
			continue;
		if (ad->version[i] == CEEMS_CGROUP_V1)
			scan_users(a, ad->roots[i], fd, now_ns);
		else
			scan_jobs(a, CEEMS_CGROUP_V2, ad->roots[i], "", fd, false, 0, now_ns);
		close(fd);
	}
}
