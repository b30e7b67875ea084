/* cgroup_path.c - locate a job's cgroup directories from /proc/PID/cgroup
 * and /proc/self/mountinfo. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cgroup/cgroup_path.h"
#include "cgroup/step_ids.h"

static const char *const controller_names[CEEMS_CG_NCONTROLLERS] = {
	[CEEMS_CG_CPUACCT] = "cpuacct",
	[CEEMS_CG_MEMORY] = "memory",
	[CEEMS_CG_CPUSET] = "cpuset",
	[CEEMS_CG_PIDS] = "pids",
	[CEEMS_CG_BLKIO] = "blkio",
	[CEEMS_CG_FREEZER] = "freezer",
};

const char *
ceems_cgroup_path_controller_name(enum ceems_cgroup_controller c)
{
	if (c >= CEEMS_CG_NCONTROLLERS)
		return "unified";
	return controller_names[c];
}

/* Does the comma-separated LIST (LEN bytes) contain WORD? */
static bool
list_has_word(const char *list, size_t len, const char *word)
{
	size_t wlen = strlen(word);
	const char *p = list, *end = list + len;

	while (p < end) {
		const char *comma = memchr(p, ',', (size_t)(end - p));
		size_t n = comma ? (size_t)(comma - p) : (size_t)(end - p);

		if (n == wlen && memcmp(p, word, wlen) == 0)
			return true;
		p += n + 1;
	}
	return false;
}

/* Copy PATH (LEN bytes) up to and including its job directory into OUT:
 * its job_JOBID component or, where SLUID is true (the unified tree of
 * Slurm 26.05, which names a job's directory by its SLUID), a SLUID
 * component right above a step's directory.  Returns 0, -ENOENT when no
 * such component, -ENAMETOOLONG, or -EINVAL for a "." or ".." component
 * before it: the kernel prints "/.." for a process outside the reader's
 * cgroup namespace, and the agent, as root, must never open a directory
 * outside the hierarchy. */
static int
cut_at_job(const char *path, size_t len, const char *job_component,
	   bool sluid, char *out, size_t out_size)
{
	size_t clen = strlen(job_component);
	size_t i = 0, prev_start = 0, prev_end = 0;

	while (i < len) {
		size_t start, end, cut = 0;

		while (i < len && path[i] == '/')
			i++;
		start = i;
		while (i < len && path[i] != '/')
			i++;
		end = i;
		if ((end - start == 1 && path[start] == '.') ||
		    (end - start == 2 && path[start] == '.' && path[start + 1] == '.'))
			return -EINVAL;
		if (end - start == clen &&
		    memcmp(path + start, job_component, clen) == 0)
			cut = end;
		else if (sluid && ceems_step_ids_is_step_dir(path + start, end - start) &&
			 ceems_step_ids_is_sluid(path + prev_start, prev_end - prev_start))
			cut = prev_end;
		if (cut != 0) {
			if (cut >= out_size)
				return -ENAMETOOLONG;
			memcpy(out, path, cut);
			out[cut] = '\0';
			return 0;
		}
		prev_start = start;
		prev_end = end;
	}
	return -ENOENT;
}

int
ceems_cgroup_path_job_from_proc(const char *text, uint32_t jobid,
			   struct ceems_cgroup_job *job)
{
	char job_component[32];
	const char *line = text;
	bool in_v1 = false, in_v2 = false;

	memset(job, 0, sizeof(*job));
	snprintf(job_component, sizeof(job_component), "job_%u", jobid);

	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		size_t len = eol ? (size_t)(eol - line) : strlen(line);
		const char *c1 = memchr(line, ':', len), *c2, *path;
		size_t ctl_len, path_len;
		int ret;

		if (len == 0)
			goto next;
		if (c1 == NULL)
			return -EINVAL;
		c2 = memchr(c1 + 1, ':', len - (size_t)(c1 + 1 - line));
		if (c2 == NULL)
			return -EINVAL;
		ctl_len = (size_t)(c2 - c1 - 1);
		path = c2 + 1;
		path_len = len - (size_t)(path - line);
		if (path_len == 0 || path[0] != '/')
			return -EINVAL;

		if (ctl_len == 0) {
			ret = cut_at_job(path, path_len, job_component, true,
					 job->unified, sizeof(job->unified));
			if (ret == 0)
				in_v2 = true;
			else if (ret != -ENOENT)
				return ret;
		}
		for (int c = 0; ctl_len > 0 && c < CEEMS_CG_NCONTROLLERS; c++) {
			if (!list_has_word(c1 + 1, ctl_len, controller_names[c]))
				continue;
			ret = cut_at_job(path, path_len, job_component, false,
					 job->v1[c], sizeof(job->v1[c]));
			if (ret == 0)
				in_v1 = true;
			else if (ret != -ENOENT)
				return ret;
		}
next:
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	if (in_v1)
		job->version = CEEMS_CGROUP_V1;
	else if (in_v2)
		job->version = CEEMS_CGROUP_V2;
	else
		return -ENOENT;
	return 0;
}

/* Copy the mountinfo field at *P into OUT, decoding the kernel's \ooo
 * octal escapes, and advance *P past it.  Returns 0 or -1. */
static int
take_field(const char **p, const char *end, char *out, size_t out_size)
{
	size_t n = 0;

	while (*p < end && **p == ' ')
		(*p)++;
	if (*p >= end)
		return -1;
	while (*p < end && **p != ' ') {
		char ch = **p;

		if (ch == '\\' && end - *p >= 4 &&
		    (*p)[1] >= '0' && (*p)[1] <= '3' &&
		    (*p)[2] >= '0' && (*p)[2] <= '7' &&
		    (*p)[3] >= '0' && (*p)[3] <= '7') {
			ch = (char)(((*p)[1] - '0') * 64 + ((*p)[2] - '0') * 8 +
				    ((*p)[3] - '0'));
			*p += 3;
		}
		if (n + 1 >= out_size)
			return -1;
		out[n++] = ch;
		(*p)++;
	}
	out[n] = '\0';
	return 0;
}

static void
record_mount(char *dst, char *dst_root, size_t size, const char *mnt,
	     const char *root)
{
	/* Prefer a mount of the hierarchy's root over a bind of a subtree. */
	if (dst[0] != '\0' && !(strcmp(dst_root, "/") != 0 &&
				strcmp(root, "/") == 0))
		return;
	snprintf(dst, size, "%s", mnt);
	snprintf(dst_root, size, "%s", root);
}

int
ceems_cgroup_path_mounts_from_mountinfo(const char *text,
				   struct ceems_cgroup_mounts *mounts)
{
	const char *line = text;

	memset(mounts, 0, sizeof(*mounts));
	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *p = line, *sep;
		char skip[64], root[CEEMS_CGROUP_PATH_MAX];
		char mnt[CEEMS_CGROUP_PATH_MAX], fstype[32], source[64];
		char opts[256];

		if (end == line)
			goto next;
		/* id, parent id, major:minor */
		for (int i = 0; i < 3; i++)
			if (take_field(&p, end, skip, sizeof(skip)) < 0)
				return -EINVAL;
		if (take_field(&p, end, root, sizeof(root)) < 0 ||
		    take_field(&p, end, mnt, sizeof(mnt)) < 0)
			return -EINVAL;
		sep = strstr(p, " - ");
		if (sep == NULL || sep >= end)
			return -EINVAL;
		p = sep + 3;
		if (take_field(&p, end, fstype, sizeof(fstype)) < 0 ||
		    take_field(&p, end, source, sizeof(source)) < 0 ||
		    take_field(&p, end, opts, sizeof(opts)) < 0)
			goto next;	/* not a cgroup line we can use */
		/* The kernel prints a cgroup mount's root and mount point as
		 * absolute paths; a relative one would put the job's
		 * directory outside the hierarchy, under any prefix. */
		if ((strcmp(fstype, "cgroup2") == 0 ||
		     strcmp(fstype, "cgroup") == 0) &&
		    (root[0] != '/' || mnt[0] != '/'))
			return -EINVAL;
		if (strcmp(fstype, "cgroup2") == 0) {
			record_mount(mounts->unified, mounts->unified_root,
				     sizeof(mounts->unified), mnt, root);
		} else if (strcmp(fstype, "cgroup") == 0) {
			for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
				if (list_has_word(opts, strlen(opts),
						  controller_names[c]))
					record_mount(mounts->v1[c],
						     mounts->v1_root[c],
						     sizeof(mounts->v1[c]), mnt,
						     root);
		}
next:
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	return 0;
}

int
ceems_cgroup_path_job_dir(const struct ceems_cgroup_job *job,
		     const struct ceems_cgroup_mounts *mounts,
		     enum ceems_cgroup_controller c, const char *prefix,
		     char *out, size_t out_size)
{
	const char *rel, *mnt, *root;
	size_t root_len;
	int n;

	if (c >= CEEMS_CG_NCONTROLLERS) {
		rel = job->unified;
		mnt = mounts->unified;
		root = mounts->unified_root;
	} else {
		rel = job->v1[c];
		mnt = mounts->v1[c];
		root = mounts->v1_root[c];
	}
	if (rel[0] == '\0' || mnt[0] == '\0')
		return -ENOENT;
	/* A mount of a subtree (a container's view) shows paths below it. */
	root_len = strlen(root);
	if (root_len > 1 && strncmp(rel, root, root_len) == 0 &&
	    (rel[root_len] == '/' || rel[root_len] == '\0'))
		rel += root_len;
	n = snprintf(out, out_size, "%s%s%s", prefix, mnt, rel);
	if (n < 0 || (size_t)n >= out_size)
		return -ENAMETOOLONG;
	return 0;
}

int
ceems_cgroup_path_job_fill_siblings(struct ceems_cgroup_job *job,
			       const struct ceems_cgroup_mounts *mounts,
			       const char *prefix)
{
	const char *sibling = NULL;
	int filled = 0;

	if (job->version != CEEMS_CGROUP_V1)
		return 0;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS && sibling == NULL; c++)
		if (job->v1[c][0] != '\0')
			sibling = job->v1[c];
	if (sibling == NULL)
		return 0;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		struct ceems_cgroup_job probe;
		char dir[CEEMS_CGROUP_PATH_MAX * 2];
		struct stat st;

		if (job->v1[c][0] != '\0' || mounts->v1[c][0] == '\0')
			continue;
		probe = *job;
		snprintf(probe.v1[c], sizeof(probe.v1[c]), "%s", sibling);
		if (ceems_cgroup_path_job_dir(&probe, mounts, (enum ceems_cgroup_controller)c,
					 prefix, dir, sizeof(dir)) < 0 ||
		    stat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		snprintf(job->v1[c], sizeof(job->v1[c]), "%s", sibling);
		filled++;
	}
	return filled;
}
