/* perf_cgroup.c - find, or make and fill, a job's perf_event cgroup
 * (perf_cgroup.h says when each).  Paths come from the job's cgroup as
 * the kernel printed it and from mountinfo; the directory walked for
 * processes is the job's own, opened without following links. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "base/fileio.h"
#include "base/log.h"
#include "base/number.h"
#include "sources/perf_cgroup.h"

/* Slurm's v1 layout is job_J/step_S/task_T: deeper is not walked. */
#define ADOPT_DEPTH 4
/* cgroup.procs of one directory: 4 MiB is over 500000 processes. */
#define PROCS_MAX (4u << 20)

/* Field N (0-based) of the space-separated LINE into OUT.  -1 when
 * missing, too long or escaped (a mount point with a space: not one
 * ceems uses). */
static int
field(const char *line, const char *end, int n, char *out, size_t size)
{
	const char *p = line;

	for (int i = 0; i <= n; i++) {
		const char *s;
		size_t len;

		while (p < end && *p == ' ')
			p++;
		s = p;
		while (p < end && *p != ' ')
			p++;
		if (p == s)
			return -1;
		if (i < n)
			continue;
		len = (size_t)(p - s);
		if (len >= size || memchr(s, '\\', len) != NULL)
			return -1;
		memcpy(out, s, len);
		out[len] = '\0';
	}
	return 0;
}

static bool
has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; *p != '\0';) {
		const char *comma = strchr(p, ',');
		size_t len = comma != NULL ? (size_t)(comma - p) : strlen(p);

		if (len == n && strncmp(p, word, n) == 0)
			return true;
		if (comma == NULL)
			break;
		p = comma + 1;
	}
	return false;
}

int
ceems_perf_cgroup_mount_from_mountinfo(const char *text, char *v1_mount, size_t size)
{
	const char *line = text;

	if (size == 0)
		return -EINVAL;
	v1_mount[0] = '\0';
	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol != NULL ? eol : line + strlen(line);
		const char *sep = strstr(line, " - ");
		char root[8], mnt[CEEMS_CGROUP_PATH_MAX], fstype[16];
		char opts[256];

		if (sep != NULL && sep < end &&
		    field(sep + 3, end, 0, fstype, sizeof(fstype)) == 0 &&
		    strcmp(fstype, "cgroup") == 0 &&
		    field(sep + 3, end, 2, opts, sizeof(opts)) == 0 &&
		    has_word(opts, "perf_event") &&
		    field(line, sep, 3, root, sizeof(root)) == 0 &&
		    strcmp(root, "/") == 0 &&
		    field(line, sep, 4, mnt, sizeof(mnt)) == 0 && mnt[0] == '/') {
			if (strlen(mnt) >= size)
				return -EINVAL;
			snprintf(v1_mount, size, "%s", mnt);
			return 0;
		}
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	return 0;
}

int
ceems_perf_cgroup_root(const struct ceems_cgroup_mounts *mounts,
		const char *perf_v1_mount, const char *prefix, char *out,
		size_t size)
{
	const char *mnt = perf_v1_mount[0] != '\0' ? perf_v1_mount :
			  mounts->unified;
	int n;

	if (mnt[0] == '\0')
		return -ENOENT;
	n = snprintf(out, size, "%s%s", prefix, mnt);
	return n < 0 || (size_t)n >= size ? -ENAMETOOLONG : 0;
}

static int
open_dir(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	return fd < 0 ? -errno : fd;
}

/* The job's own perf_event directory, when a hierarchy holds one. */
static int
open_existing(const struct ceems_cgroup_job *job,
	      const struct ceems_cgroup_mounts *mounts,
	      const char *perf_v1_mount, const char *prefix)
{
	char dir[CEEMS_CGROUP_PATH_MAX * 3];
	const char *rel = NULL;
	int n;

	if (job->version == CEEMS_CGROUP_V2) {
		if (ceems_cgroup_path_job_dir(job, mounts, CEEMS_CG_NCONTROLLERS,
					 prefix, dir, sizeof(dir)) < 0)
			return -ENOENT;
		return open_dir(dir);
	}
	if (perf_v1_mount[0] == '\0')
		return -ENOENT;
	/* Slurm gives a job the same path in every v1 controller. */
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS && rel == NULL; c++)
		if (job->v1[c][0] != '\0')
			rel = job->v1[c];
	if (rel == NULL)
		return -ENOENT;
	n = snprintf(dir, sizeof(dir), "%s%s%s", prefix, perf_v1_mount, rel);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return -ENAMETOOLONG;
	return open_dir(dir);
}

int
ceems_perf_cgroup_open(const struct ceems_cgroup_job *job, uint32_t jobid,
		       const struct ceems_cgroup_mounts *mounts,
		       const char *perf_v1_mount, const char *prefix,
		       bool adopt, char *adopted, size_t adopted_size)
{
	char root[CEEMS_CGROUP_PATH_MAX * 2];
	int fd, n, ret;

	adopted[0] = '\0';
	fd = open_existing(job, mounts, perf_v1_mount, prefix);
	if (fd >= 0 || fd != -ENOENT || !adopt || job->version != CEEMS_CGROUP_V1)
		return fd;
	if ((ret = ceems_perf_cgroup_root(mounts, perf_v1_mount, prefix, root,
				   sizeof(root))) < 0)
		return ret;
	n = snprintf(adopted, adopted_size, "%s/%s/job_%u", root,
		     CEEMS_PERF_ADOPT_DIR, jobid);
	if (n < 0 || (size_t)n >= adopted_size) {
		adopted[0] = '\0';
		return -ENAMETOOLONG;
	}
	if ((ret = ceems_fileio_mkdir_p(adopted, 0755)) < 0 ||
	    (fd = open_dir(adopted)) < 0) {
		ret = ret < 0 ? ret : fd;
		adopted[0] = '\0';
		return ret;
	}
	if ((ret = ceems_perf_cgroup_adopt(adopted, job, mounts, prefix)) < 0) {
		(void)close(fd);
		ceems_perf_cgroup_remove(adopted);
		adopted[0] = '\0';
		return ret;
	}
	return fd;
}

/* Whether process PID (decimal text) runs slurmstepd; its parent's
 * id into *PPID when it does. */
static bool
runs_slurmstepd(const char *pid, char *ppid, size_t size)
{
	char path[48], stat[512];
	const char *p;
	size_t n;

	snprintf(path, sizeof(path), "/proc/%s/stat", pid);
	if (ceems_fileio_read_text_file(path, stat, sizeof(stat)) < 0 ||
	    strncmp(strchr(stat, '(') != NULL ? strchr(stat, '(') : "",
		    "(slurmstepd) ", 13) != 0)
		return false;
	/* "PID (slurmstepd) S PPID ..." */
	p = strchr(stat, '(') + 13;
	if (p[0] == '\0' || p[1] != ' ')
		return false;
	p += 2;
	n = strspn(p, "0123456789");
	if (n == 0 || n >= size)
		return false;
	memcpy(ppid, p, n);
	ppid[n] = '\0';
	return true;
}

/* Slurm's own processes are not the job's work (and one of them, the
 * extern step's, outlives the job's deregistration: its cgroup could
 * not go).  A task that slurmstepd forked and holds until the plugin
 * has seen it runs slurmstepd too, until it runs the user's program:
 * that one is the job's (its parent is slurmstepd). */
static bool
is_slurmstepd(const char *pid)
{
	char ppid[16], grand[16];

	return runs_slurmstepd(pid, ppid, sizeof(ppid)) &&
	       !runs_slurmstepd(ppid, grand, sizeof(grand));
}

/* Write each process id of the cgroup.procs text TEXT into PROCS_FD. */
static int
move_pids(int procs_fd, const char *text)
{
	int moved = 0;

	for (const char *p = text; *p != '\0';) {
		const char *eol = strchr(p, '\n');
		size_t len = eol != NULL ? (size_t)(eol - p) : strlen(p);
		char pid[16];
		uint64_t v;

		if (len > 0 && len < sizeof(pid)) {
			memcpy(pid, p, len);
			pid[len] = '\0';
			/* A process gone since (ESRCH) is not an error. */
			if (ceems_number_parse_u64(pid, &v) == 0 && v > 0 &&
			    !is_slurmstepd(pid) &&
			    write(procs_fd, pid, len) == (ssize_t)len)
				moved++;
		}
		if (eol == NULL)
			break;
		p = eol + 1;
	}
	return moved;
}

/* The processes of directory DIR_FD and its subdirectories. */
static int
adopt_tree(int procs_fd, int dir_fd, int depth, char *buf)
{
	DIR *d;
	struct dirent *de;
	int moved = 0;

	if (ceems_fileio_read_text_file_at(dir_fd, "cgroup.procs", buf, PROCS_MAX) >= 0)
		moved += move_pids(procs_fd, buf);
	if (depth >= ADOPT_DEPTH || (d = fdopendir(dir_fd)) == NULL) {
		(void)close(dir_fd);
		return moved;
	}
	while ((de = readdir(d)) != NULL) {
		int sub;

		if (de->d_type != DT_DIR || de->d_name[0] == '.')
			continue;
		sub = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			moved += adopt_tree(procs_fd, sub, depth + 1, buf);
	}
	(void)closedir(d);
	return moved;
}

int
ceems_perf_cgroup_adopt(const char *adopted, const struct ceems_cgroup_job *job,
			const struct ceems_cgroup_mounts *mounts,
			const char *prefix)
{
	char path[CEEMS_CGROUP_PATH_MAX * 3];
	char *buf;
	int procs_fd, moved = 0;

	if (snprintf(path, sizeof(path), "%s/cgroup.procs", adopted) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	procs_fd = open(path, O_WRONLY | O_NOFOLLOW | O_CLOEXEC);
	if (procs_fd < 0)
		return -errno;
	if ((buf = malloc(PROCS_MAX)) == NULL) {
		(void)close(procs_fd);
		return -ENOMEM;
	}
	/* Every controller: slurmstepd is in some only (cgroup_path.h). */
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		int fd;

		if (ceems_cgroup_path_job_dir(job, mounts, (enum ceems_cgroup_controller)c,
					 prefix, path, sizeof(path)) < 0)
			continue;
		fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (fd >= 0)
			moved += adopt_tree(procs_fd, fd, 0, buf);
	}
	free(buf);
	(void)close(procs_fd);
	return moved;
}

int
ceems_perf_cgroup_sweep(const char *root)
{
	DIR *d;
	struct dirent *de;
	int fd, n = 0;

	fd = open(root, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || (d = fdopendir(fd)) == NULL) {
		if (fd >= 0)
			(void)close(fd);
		return 0;
	}
	while ((de = readdir(d)) != NULL)
		if (de->d_type == DT_DIR && strncmp(de->d_name, "job_", 4) == 0 &&
		    unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR) == 0)
			n++;
	(void)closedir(d);
	return n;
}

void
ceems_perf_cgroup_remove(const char *adopted)
{
	if (adopted[0] != '\0' && rmdir(adopted) < 0 && errno != ENOENT)
		ceems_debug("perf: %s stays (%s)", adopted, strerror(errno));
}
