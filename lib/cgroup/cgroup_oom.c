/* cgroup_oom.c - how many processes the OOM killer took in a cgroup v1
 * memory subtree.  cgroup v1 counts an OOM kill (memory.oom_control,
 * oom_kill) only in the memory cgroup of the process it killed: under
 * Slurm that is a task's cgroup (job_N/step_S/task_T), not the step's or
 * the job's whose limit was hit, and Slurm removes the task and step
 * cgroups as the step ends.  So a step's kills are the sum over its
 * subtree, read before Slurm removes it.  (cgroup v2 counts every kill
 * in memory.events of each cgroup up the tree: one file says it.) */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "cgroup/cgroup_stats.h"

/* Slurm's tree below a step is one or two levels deep; these bound a
 * tree that is not Slurm's. */
#define OOM_WALK_DEPTH 4
#define OOM_WALK_DIRS 1024

struct oom_count {
	uint64_t kills;
	unsigned counted;	/* memory.oom_control files counted */
};

/* Add the kills of the cgroup open on DIRFD. */
static bool
count_dir(int dirfd, void *arg)
{
	struct oom_count *c = arg;
	struct ceems_cgroup_stats st;
	char text[256];

	memset(&st, 0, sizeof(st));
	if (ceems_fileio_read_text_file_at(dirfd, "memory.oom_control", text,
					   sizeof(text)) > 0 &&
	    ceems_cgroup_parse_cgroup1_oom_control(text, &st) == 0) {
		c->kills += st.oom_kills;
		c->counted++;
	}
	return true;
}

int
ceems_cgroup_oom_kills_v1_tree(const char *dir, uint64_t *kills)
{
	struct oom_count c = { 0, 0 };
	int fd;

	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	ceems_cgroup_walk(fd, OOM_WALK_DEPTH, OOM_WALK_DIRS, count_dir, &c);
	close(fd);
	if (c.counted == 0)
		return -ENOENT;
	*kills = c.kills;
	return 0;
}
