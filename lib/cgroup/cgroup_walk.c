/* cgroup_walk.c - visit a cgroup and the cgroups below it.  Slurm's tree
 * below a job is two or three levels deep (step_S/task_T, in v2
 * step_S/user/task_T); a directory removed while the walk runs (Slurm
 * cleaning up a step) is skipped, not an error.  Nothing is allocated:
 * the agent's ticks walk jobs' cgroups. */
#include "config.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "cgroup/cgroup_stats.h"

struct walk {
	ceems_cgroup_visit_fn *visit;
	void *arg;
	unsigned left;		/* directories the walk may still visit */
	unsigned visited;
	bool stop;
};

static void
walk_dir(struct walk *w, int dirfd, int depth)
{
	struct ceems_dir_reader d;
	const struct dirent64 *e;

	if (w->left == 0 || w->stop)
		return;
	w->left--;
	w->visited++;
	if (!w->visit(dirfd, w->arg)) {
		w->stop = true;
		return;
	}
	if (depth == 0)
		return;
	ceems_fileio_dir_open(&d, dirfd);
	while (!w->stop && (e = ceems_fileio_dir_next(&d)) != NULL) {
		int sub;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		sub = openat(dirfd, e->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub < 0)
			continue;
		walk_dir(w, sub, depth - 1);
		close(sub);
	}
}

unsigned
ceems_cgroup_walk(int dirfd, int depth, unsigned max_dirs,
		  ceems_cgroup_visit_fn *visit, void *arg)
{
	struct walk w = { visit, arg, max_dirs, 0, false };

	walk_dir(&w, dirfd, depth);
	return w.visited;
}
