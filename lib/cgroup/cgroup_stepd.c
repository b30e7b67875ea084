/* cgroup_stepd.c - on cgroup v2, take the CPU time of Slurm's step
 * daemons (the slurm/ sub-cgroup of each step) out of the CPU time read
 * from a job's or a step's cgroup.  See cgroup_stepd.h for the layout
 * and why; doc/ceems-agent.8 says what a job's CPU time is. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup_stepd.h"
#include "base/fileio.h"
#include "base/hotmem.h"
#include "base/log.h"
#include "base/tick_path.h"

/* A step directory's name: "step_" and Slurm's step id. */
#define NAME_MAX_LEN 64

struct stepd {
	int fd;				/* its cpu.stat */
	char name[NAME_MAX_LEN];	/* "" for DIR/slurm, else step_S */
	uint64_t usage_ns, user_ns, system_ns;	/* its last reading */
};

struct ceems_cgroup_stepd {
	unsigned n;
	bool warned_full;
	/* The last readings of the slurm/ cgroups removed since: the
	 * job's cpu.stat keeps what a removed child used. */
	uint64_t gone_usage_ns, gone_user_ns, gone_system_ns;
	/* What was last given, for never giving less. */
	uint64_t out_usage_ns, out_user_ns, out_system_ns;
	struct stepd e[CEEMS_CGROUP_STEPD_MAX];
};

static bool
followed(const struct ceems_cgroup_stepd *s, const char *name)
{
	if (s == NULL)
		return false;
	for (unsigned i = 0; i < s->n; i++)
		if (strcmp(s->e[i].name, name) == 0)
			return true;
	return false;
}

/* Follow DIRFD's NAME/slurm (NAME "": DIRFD's slurm) if it is there.
 * True when added. */
static bool
add(struct ceems_cgroup_stepd **sp, int dirfd, const char *name,
    const char *dir)
{
	char rel[NAME_MAX_LEN + 24];
	struct ceems_cgroup_stepd *s;
	int fd;

	if (strlen(name) >= NAME_MAX_LEN || followed(*sp, name))
		return false;
	snprintf(rel, sizeof(rel), "%s%sslurm/cpu.stat", name,
		 name[0] != '\0' ? "/" : "");
	fd = openat(dirfd, rel, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (fd < 0)
		return false;
	if (*sp == NULL && (*sp = ceems_hotmem_calloc(1, sizeof(**sp))) == NULL) {
		close(fd);
		return false;
	}
	s = *sp;
	if (s->n == CEEMS_CGROUP_STEPD_MAX) {
		if (!s->warned_full) {
			s->warned_full = true;
			ceems_warning("cgroup %s: more than %d step daemons; "
				      "the CPU time of the others is counted "
				      "as the job's", dir, CEEMS_CGROUP_STEPD_MAX);
		}
		close(fd);
		return false;
	}
	memset(&s->e[s->n], 0, sizeof(s->e[s->n]));
	s->e[s->n].fd = fd;
	snprintf(s->e[s->n].name, NAME_MAX_LEN, "%s", name);
	s->n++;
	return true;
}

unsigned
ceems_cgroup_stepd_scan(struct ceems_cgroup_stepd **sp, const char *dir)
{
	struct ceems_dir_reader d;
	const struct dirent64 *e;
	unsigned added = 0;
	int dirfd;

	dirfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC | O_NOFOLLOW);
	if (dirfd < 0)
		return 0;
	/* A step's own daemon. */
	added += add(sp, dirfd, "", dir);
	/* A job's steps' daemons. */
	ceems_fileio_dir_open(&d, dirfd);
	while ((e = ceems_fileio_dir_next(&d)) != NULL)
		if (e->d_type == DT_DIR && strncmp(e->d_name, "step_", 5) == 0)
			added += add(sp, dirfd, e->d_name, dir);
	close(dirfd);
	return added;
}

/* Read every followed cpu.stat; a removed cgroup's (its open file
 * answers ENODEV) last reading moves to the gone sums. */
CEEMS_TICK_PATH static void
read_all(struct ceems_cgroup_stepd *s, char *buf, size_t size)
{
	for (unsigned i = 0; i < s->n;) {
		struct stepd *p = &s->e[i];
		struct ceems_cgroup_stats st;
		ssize_t n;

		n = ceems_fileio_pread_text_once(p->fd, buf, size);
		if (n == -ENODEV || n == -ENOENT) {
			s->gone_usage_ns += p->usage_ns;
			s->gone_user_ns += p->user_ns;
			s->gone_system_ns += p->system_ns;
			close(p->fd);
			s->e[i] = s->e[--s->n];
			continue;
		}
		/* A reading that fails keeps the last one: it only grows. */
		memset(&st, 0, sizeof(st));
		if (n >= 0 && ceems_cgroup_parse_cgroup2_cpu_stat(buf, &st) == 0) {
			if ((st.present & CEEMS_CGF_CPU_USAGE) && st.cpu_usage_ns > p->usage_ns)
				p->usage_ns = st.cpu_usage_ns;
			if ((st.present & CEEMS_CGF_CPU_USER) && st.cpu_user_ns > p->user_ns)
				p->user_ns = st.cpu_user_ns;
			if ((st.present & CEEMS_CGF_CPU_SYSTEM) && st.cpu_system_ns > p->system_ns)
				p->system_ns = st.cpu_system_ns;
		}
		i++;
	}
}

/* *V less EXCL (not below 0), not below *OUT; *OUT becomes it. */
static void
take_out(uint64_t *v, uint64_t excl, uint64_t *out)
{
	uint64_t x = *v > excl ? *v - excl : 0;

	if (x < *out)
		x = *out;
	*out = x;
	*v = x;
}

CEEMS_TICK_PATH void
ceems_cgroup_stepd_subtract(struct ceems_cgroup_stepd *s, char *buf,
			    size_t size, struct ceems_cgroup_stats *st)
{
	uint64_t usage, user, sys;

	if (s == NULL || !(st->present & (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER |
					  CEEMS_CGF_CPU_SYSTEM)))
		return;
	read_all(s, buf, size);
	usage = s->gone_usage_ns;
	user = s->gone_user_ns;
	sys = s->gone_system_ns;
	for (unsigned i = 0; i < s->n; i++) {
		usage += s->e[i].usage_ns;
		user += s->e[i].user_ns;
		sys += s->e[i].system_ns;
	}
	if (st->present & CEEMS_CGF_CPU_USAGE)
		take_out(&st->cpu_usage_ns, usage, &s->out_usage_ns);
	if (st->present & CEEMS_CGF_CPU_USER)
		take_out(&st->cpu_user_ns, user, &s->out_user_ns);
	if (st->present & CEEMS_CGF_CPU_SYSTEM)
		take_out(&st->cpu_system_ns, sys, &s->out_system_ns);
}

unsigned
ceems_cgroup_stepd_nfiles(const struct ceems_cgroup_stepd *s)
{
	return s != NULL ? s->n : 0;
}

void
ceems_cgroup_stepd_free(struct ceems_cgroup_stepd *s)
{
	if (s == NULL)
		return;
	for (unsigned i = 0; i < s->n; i++)
		close(s->e[i].fd);
	ceems_hotmem_free(s);
}
