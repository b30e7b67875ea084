/* cgroup_oom.c - how many processes the OOM killer took in a cgroup v1
 * memory subtree.  cgroup v1 counts an OOM kill (memory.oom_control,
 * oom_kill) only in the memory cgroup of the process it killed: under
 * Slurm that is a task's cgroup (job_N/step_S/task_T), not the step's or
 * the job's whose limit was hit, and Slurm removes the task and step
 * cgroups as the step ends.  So a step's kills are the sum over its
 * subtree, read before Slurm removes it.  (cgroup v2 counts every kill
 * in memory.events of each cgroup up the tree: one file says it.) */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "cgroup/cgroup_stats.h"

/* Slurm's tree below a step is one or two levels deep (task_T, and in
 * v2 user/task_T); these bound a tree that is not Slurm's. */
#define OOM_WALK_DEPTH 4
#define OOM_WALK_DIRS 1024

struct oom_walk {
	uint64_t kills;
	unsigned dirs;		/* directories read, up to OOM_WALK_DIRS */
	unsigned counted;	/* memory.oom_control files counted */
};

/* Add the kills of the cgroup open on DIRFD and of those below it (to
 * DEPTH more levels).  Closes DIRFD.  A cgroup removed meanwhile (Slurm
 * cleaning up as the step ends) is skipped, not an error. */
static void
walk(int dirfd, int depth, struct oom_walk *w)
{
	struct ceems_cgroup_stats st;
	struct dirent *e;
	char text[256];
	DIR *d;

	w->dirs++;
	memset(&st, 0, sizeof(st));
	if (ceems_fileio_read_text_file_at(dirfd, "memory.oom_control", text,
					   sizeof(text)) > 0 &&
	    ceems_cgroup_parse_cgroup1_oom_control(text, &st) == 0) {
		w->kills += st.oom_kills;
		w->counted++;
	}
	if (depth == 0 || (d = fdopendir(dirfd)) == NULL) {
		close(dirfd);
		return;
	}
	while (w->dirs < OOM_WALK_DIRS && (e = readdir(d)) != NULL) {
		int sub;

		if (e->d_type != DT_DIR || strcmp(e->d_name, ".") == 0 ||
		    strcmp(e->d_name, "..") == 0)
			continue;
		sub = openat(dirfd, e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0)
			walk(sub, depth - 1, w);
	}
	closedir(d);
}

int
ceems_cgroup_oom_kills_v1_tree(const char *dir, uint64_t *kills)
{
	struct oom_walk w = { 0, 0, 0 };
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	walk(fd, OOM_WALK_DEPTH, &w);
	if (w.counted == 0)
		return -ENOENT;
	*kills = w.kills;
	return 0;
}
