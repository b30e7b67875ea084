/* cgroup_stats.c - read a job's or a step's usage from its cgroup (v1 and
 * v2): find the job's directories, keep its counter files open and pread
 * them into the reader's own buffer each tick.  The text is handed to the
 * pure parsers of cgroup_parse.c. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cgroup/cgroup_stats.h"
#include "cgroup/cgroup_stepd.h"
#include "base/fileio.h"
#include "base/hotmem.h"
#include "base/number.h"
#include "base/log.h"
#include "base/tick_path.h"

/* ------------------------------------------------------------------ */
/* Directories                                                         */
/* ------------------------------------------------------------------ */

/* The v1 controllers a reader uses (freezer holds no counters). */
static const enum ceems_cgroup_controller v1_used[] = {
	CEEMS_CG_CPUACCT, CEEMS_CG_MEMORY, CEEMS_CG_CPUSET, CEEMS_CG_PIDS,
	CEEMS_CG_BLKIO,
};
#define N_V1_USED (sizeof(v1_used) / sizeof(v1_used[0]))

/* A relative path of plain components: no "", ".", ".." or leading /. */
static bool
subdir_is_safe(const char *s)
{
	while (*s != '\0') {
		size_t n = strcspn(s, "/");

		if (n == 0 || (n == 1 && s[0] == '.') ||
		    (n == 2 && s[0] == '.' && s[1] == '.'))
			return false;
		s += n;
		if (*s == '/') {
			s++;
			if (*s == '\0')
				return false;
		}
	}
	return true;
}

static int
dir_with_subdir(const struct ceems_cgroup_job *job,
		const struct ceems_cgroup_mounts *mounts,
		enum ceems_cgroup_controller c, const char *prefix,
		const char *subdir, char *out)
{
	size_t len;
	int ret;

	ret = ceems_cgroup_path_job_dir(job, mounts, c, prefix, out,
				   CEEMS_CGROUP_DIR_MAX);
	if (ret < 0 || subdir == NULL || subdir[0] == '\0')
		return ret;
	len = strlen(out);
	if (len + 1 + strlen(subdir) >= CEEMS_CGROUP_DIR_MAX)
		return -ENAMETOOLONG;
	out[len] = '/';
	strcpy(out + len + 1, subdir);
	return 0;
}

int
ceems_cgroup_stats_dirs_for_job(const struct ceems_cgroup_job *job,
			  const struct ceems_cgroup_mounts *mounts,
			  const char *prefix, const char *subdir,
			  struct ceems_cgroup_dirs *dirs)
{
	bool any = false;
	int ret;

	memset(dirs, 0, sizeof(*dirs));
	if (subdir != NULL && subdir[0] != '\0' && !subdir_is_safe(subdir))
		return -EINVAL;
	dirs->version = job->version;
	if (job->version == CEEMS_CGROUP_V2) {
		ret = dir_with_subdir(job, mounts, CEEMS_CG_NCONTROLLERS,
				      prefix, subdir,
				      dirs->dir[CEEMS_CG_NCONTROLLERS]);
		return ret;
	}
	if (job->version != CEEMS_CGROUP_V1)
		return -ENOENT;
	for (size_t i = 0; i < N_V1_USED; i++) {
		enum ceems_cgroup_controller c = v1_used[i];

		ret = dir_with_subdir(job, mounts, c, prefix, subdir,
				      dirs->dir[c]);
		if (ret == -ENOENT) {
			dirs->dir[c][0] = '\0';
			continue;
		}
		if (ret < 0)
			return ret;
		any = true;
	}
	return any ? 0 : -ENOENT;
}

/* ------------------------------------------------------------------ */
/* The reader                                                          */
/* ------------------------------------------------------------------ */

/* Every file a reader may keep open.  Alternatives of one source (a
 * newer and an older kernel's name) are tried in order at open. */
enum source {
	SRC_CPU_STAT,		/* v2 */
	SRC_MEM_CURRENT,
	SRC_MEM_PEAK,
	SRC_MEM_MAX,
	SRC_MEM_STAT,
	SRC_MEM_EVENTS,
	SRC_PIDS,
	SRC_IO_STAT,
	SRC_CPUSET,
	SRC_CPUACCT_USAGE,	/* v1 */
	SRC_CPUACCT_USER,
	SRC_CPUACCT_SYS,
	SRC_CPUACCT_STAT,
	SRC_V1_MEM_USAGE,
	SRC_V1_MEM_MAX_USAGE,
	SRC_V1_MEM_LIMIT,
	SRC_V1_MEM_STAT,
	SRC_V1_MEM_FAILCNT,
	SRC_V1_OOM_CONTROL,
	SRC_V1_PIDS,
	SRC_V1_CPUSET,
	SRC_V1_BLKIO_BYTES,
	SRC_V1_BLKIO_OPS,
	NSOURCES
};

#define NALT 3
struct source_def {
	enum ceems_cgroup_version version;
	enum ceems_cgroup_controller dir;	/* NCONTROLLERS: the v2 dir */
	uint32_t fields;			/* what it measures */
	const char *names[NALT];
};

static const struct source_def sources[NSOURCES] = {
	[SRC_CPU_STAT] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM,
		{ "cpu.stat" } },
	[SRC_MEM_CURRENT] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_MEM_CURRENT, { "memory.current" } },
	[SRC_MEM_PEAK] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_MEM_PEAK, { "memory.peak" } },
	[SRC_MEM_MAX] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_MEM_LIMIT, { "memory.max" } },
	[SRC_MEM_STAT] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_MEM_RSS | CEEMS_CGF_MEM_CACHE, { "memory.stat" } },
	[SRC_MEM_EVENTS] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_OOM_KILLS | CEEMS_CGF_MEM_FAILS, { "memory.events" } },
	[SRC_PIDS] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_PIDS, { "pids.current" } },
	[SRC_IO_STAT] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_IO_READ_BYTES | CEEMS_CGF_IO_WRITE_BYTES |
		CEEMS_CGF_IO_READ_OPS | CEEMS_CGF_IO_WRITE_OPS, { "io.stat" } },
	/* effective: what the job may really run on. */
	[SRC_CPUSET] = { CEEMS_CGROUP_V2, CEEMS_CG_NCONTROLLERS,
		CEEMS_CGF_CPUSET, { "cpuset.cpus.effective", "cpuset.cpus" } },

	[SRC_CPUACCT_USAGE] = { CEEMS_CGROUP_V1, CEEMS_CG_CPUACCT,
		CEEMS_CGF_CPU_USAGE, { "cpuacct.usage" } },
	[SRC_CPUACCT_USER] = { CEEMS_CGROUP_V1, CEEMS_CG_CPUACCT,
		CEEMS_CGF_CPU_USER, { "cpuacct.usage_user" } },
	[SRC_CPUACCT_SYS] = { CEEMS_CGROUP_V1, CEEMS_CG_CPUACCT,
		CEEMS_CGF_CPU_SYSTEM, { "cpuacct.usage_sys" } },
	/* Opened only when the two above are missing (Linux < 4.7). */
	[SRC_CPUACCT_STAT] = { CEEMS_CGROUP_V1, CEEMS_CG_CPUACCT,
		CEEMS_CGF_CPU_USER | CEEMS_CGF_CPU_SYSTEM, { "cpuacct.stat" } },
	[SRC_V1_MEM_USAGE] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_MEM_CURRENT, { "memory.usage_in_bytes" } },
	[SRC_V1_MEM_MAX_USAGE] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_MEM_PEAK, { "memory.max_usage_in_bytes" } },
	[SRC_V1_MEM_LIMIT] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_MEM_LIMIT, { "memory.limit_in_bytes" } },
	[SRC_V1_MEM_STAT] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_MEM_RSS | CEEMS_CGF_MEM_CACHE, { "memory.stat" } },
	[SRC_V1_MEM_FAILCNT] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_MEM_FAILS, { "memory.failcnt" } },
	[SRC_V1_OOM_CONTROL] = { CEEMS_CGROUP_V1, CEEMS_CG_MEMORY,
		CEEMS_CGF_OOM_KILLS, { "memory.oom_control" } },
	[SRC_V1_PIDS] = { CEEMS_CGROUP_V1, CEEMS_CG_PIDS,
		CEEMS_CGF_PIDS, { "pids.current" } },
	[SRC_V1_CPUSET] = { CEEMS_CGROUP_V1, CEEMS_CG_CPUSET,
		CEEMS_CGF_CPUSET, { "cpuset.effective_cpus", "cpuset.cpus" } },
	/* The throttle files count every bio of the cgroup whatever the IO
	 * scheduler; the plain ones are CFQ's (Linux < 5.0). */
	[SRC_V1_BLKIO_BYTES] = { CEEMS_CGROUP_V1, CEEMS_CG_BLKIO,
		CEEMS_CGF_IO_READ_BYTES | CEEMS_CGF_IO_WRITE_BYTES,
		{ "blkio.throttle.io_service_bytes_recursive",
		  "blkio.io_service_bytes_recursive" } },
	/* Opened with the same alternative as the bytes file. */
	[SRC_V1_BLKIO_OPS] = { CEEMS_CGROUP_V1, CEEMS_CG_BLKIO,
		CEEMS_CGF_IO_READ_OPS | CEEMS_CGF_IO_WRITE_OPS,
		{ "blkio.throttle.io_serviced_recursive",
		  "blkio.io_serviced_recursive" } },
};

/* Large enough for memory.stat (about 2 KiB on 6.x) and io.stat with
 * some hundred devices; a larger file fails that source with -EFBIG. */
#define READ_BUF_SIZE 16384

/* What a reading touches first, together: a CPU reading uses the
 * descriptors and the head of the buffer, which then share a page (on a
 * virtual machine, a page not touched for a second can cost tens of
 * microseconds to touch again, and the agent reads every job each
 * second); the directories, for log lines only, come last. */
struct ceems_cgroup_reader {
	enum ceems_cgroup_version version;
	int fd[NSOURCES];
	uint8_t alt[NSOURCES];		/* which name was opened */
	uint32_t warned_failed;		/* sources already logged */
	bool warned_gone;
	long clk_tck;
	uint64_t peak_seen;		/* for CEEMS_CGS_PEAK_SAMPLED */
	/* v2: the step daemons' cgroups whose CPU time is not the job's
	 * (cgroup_stepd.h); NULL where there is none. */
	struct ceems_cgroup_stepd *stepd;
	char buf[READ_BUF_SIZE];
	struct ceems_cgroup_dirs dirs;	/* for log lines */
};
_Static_assert(offsetof(struct ceems_cgroup_reader, buf) <= 256,
	       "a reading's descriptors and buffer head drifted apart");

static int
open_file_at(int dirfd, const char *name)
{
	return openat(dirfd, name,
		      O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
}

static void
open_source(struct ceems_cgroup_reader *r, enum source s, int dirfd)
{
	const struct source_def *def = &sources[s];

	if (s == SRC_V1_BLKIO_OPS) {
		if (r->fd[SRC_V1_BLKIO_BYTES] < 0)
			return;
		r->alt[s] = r->alt[SRC_V1_BLKIO_BYTES];
		r->fd[s] = open_file_at(dirfd, def->names[r->alt[s]]);
		return;
	}
	if (s == SRC_CPUACCT_STAT &&
	    r->fd[SRC_CPUACCT_USER] >= 0 && r->fd[SRC_CPUACCT_SYS] >= 0)
		return;
	for (int i = 0; i < NALT && def->names[i] != NULL; i++) {
		r->fd[s] = open_file_at(dirfd, def->names[i]);
		if (r->fd[s] >= 0) {
			r->alt[s] = (uint8_t)i;
			return;
		}
	}
}

struct ceems_cgroup_reader *
ceems_cgroup_stats_reader_open_dirs(const struct ceems_cgroup_dirs *dirs, int *err)
{
	struct ceems_cgroup_reader *r;
	int dirfd[CEEMS_CG_NCONTROLLERS + 1];
	bool any_dir = false;
	long hz;

	if (dirs->version != CEEMS_CGROUP_V1 &&
	    dirs->version != CEEMS_CGROUP_V2) {
		*err = -EINVAL;
		return NULL;
	}
	r = ceems_hotmem_calloc(1, sizeof(*r));
	if (r == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	r->version = dirs->version;
	r->dirs = *dirs;
	hz = sysconf(_SC_CLK_TCK);
	r->clk_tck = hz > 0 ? hz : 100;
	for (int s = 0; s < NSOURCES; s++)
		r->fd[s] = -1;

	for (int c = 0; c <= CEEMS_CG_NCONTROLLERS; c++) {
		const char *path = dirs->dir[c];

		dirfd[c] = -1;
		/* Only the tree of this version counts. */
		if (path[0] == '\0' ||
		    (c == CEEMS_CG_NCONTROLLERS) != (r->version == CEEMS_CGROUP_V2))
			continue;
		dirfd[c] = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
				O_NOFOLLOW);
		if (dirfd[c] < 0) {
			ceems_debug("cgroup %s: %s", path, strerror(errno));
			continue;
		}
		any_dir = true;
	}
	if (!any_dir) {
		ceems_hotmem_free(r);
		*err = -ENOENT;
		return NULL;
	}
	for (int s = 0; s < NSOURCES; s++) {
		const struct source_def *def = &sources[s];

		if (def->version != r->version || dirfd[def->dir] < 0)
			continue;
		open_source(r, (enum source)s, dirfd[def->dir]);
	}
	/* The files stay usable without their directory's descriptor. */
	for (int c = 0; c <= CEEMS_CG_NCONTROLLERS; c++)
		if (dirfd[c] >= 0)
			close(dirfd[c]);
	ceems_cgroup_stats_reader_rescan(r);
	*err = 0;
	return r;
}

struct ceems_cgroup_reader *
ceems_cgroup_stats_reader_open(const struct ceems_cgroup_job *job,
			 const struct ceems_cgroup_mounts *mounts,
			 const char *root_prefix, int *err)
{
	struct ceems_cgroup_dirs dirs;
	int ret;

	ret = ceems_cgroup_stats_dirs_for_job(job, mounts, root_prefix, NULL, &dirs);
	if (ret < 0) {
		*err = ret;
		return NULL;
	}
	return ceems_cgroup_stats_reader_open_dirs(&dirs, err);
}

unsigned
ceems_cgroup_stats_reader_rescan(struct ceems_cgroup_reader *r)
{
	if (r->version != CEEMS_CGROUP_V2 || r->fd[SRC_CPU_STAT] < 0)
		return 0;
	return ceems_cgroup_stepd_scan(&r->stepd,
				       r->dirs.dir[CEEMS_CG_NCONTROLLERS]);
}

unsigned
ceems_cgroup_stats_reader_nfiles(const struct ceems_cgroup_reader *r)
{
	unsigned n = ceems_cgroup_stepd_nfiles(r->stepd);

	for (int s = 0; s < NSOURCES; s++)
		if (r->fd[s] >= 0)
			n++;
	return n;
}

int
ceems_cgroup_stats_reader_cpu_ino(const struct ceems_cgroup_reader *r, uint64_t *ino)
{
	int fd = r->version == CEEMS_CGROUP_V2 ? r->fd[SRC_CPU_STAT] :
		 r->fd[SRC_CPUACCT_USAGE];
	struct stat st;

	if (fd < 0)
		return -ENOENT;
	if (fstat(fd, &st) < 0)
		return -errno;
	*ino = (uint64_t)st.st_ino;
	return 0;
}

int
ceems_cgroup_stats_reader_oom_kills(struct ceems_cgroup_reader *r,
			      uint64_t *kills)
{
	struct ceems_cgroup_stats st;
	int ret;

	if (r->version == CEEMS_CGROUP_V1) {
		if (r->dirs.dir[CEEMS_CG_MEMORY][0] == '\0')
			return -ENOENT;
		return ceems_cgroup_oom_kills_v1_tree(r->dirs.dir[CEEMS_CG_MEMORY],
						      kills);
	}
	ret = ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_OOM_KILLS, &st);
	if (ret < 0)
		return ret;
	if (!(st.present & CEEMS_CGF_OOM_KILLS))
		return -ENOENT;
	*kills = st.oom_kills;
	return 0;
}

void
ceems_cgroup_stats_reader_close(struct ceems_cgroup_reader *r)
{
	if (r == NULL)
		return;
	for (int s = 0; s < NSOURCES; s++)
		if (r->fd[s] >= 0)
			close(r->fd[s]);
	ceems_cgroup_stepd_free(r->stepd);
	ceems_hotmem_free(r);
}

/* Parse the text of source S (in r->buf) into ST. */
static int
parse_source(struct ceems_cgroup_reader *r, enum source s,
	     struct ceems_cgroup_stats *st)
{
	const char *text = r->buf;
	uint64_t a, b;
	int ret;

	switch (s) {
	case SRC_CPU_STAT:
		return ceems_cgroup_parse_cgroup2_cpu_stat(text, st);
	case SRC_MEM_STAT:
		return ceems_cgroup_parse_cgroup2_memory_stat(text, st);
	case SRC_MEM_EVENTS:
		return ceems_cgroup_parse_cgroup2_memory_events(text, st);
	case SRC_IO_STAT:
		return ceems_cgroup_parse_cgroup2_io_stat(text, st);
	case SRC_CPUACCT_STAT:
		ret = ceems_cgroup_parse_cgroup1_cpuacct_stat(text, r->clk_tck, st);
		if (ret == 0)
			st->flags |= CEEMS_CGS_CPU_TICKS;
		return ret;
	case SRC_V1_MEM_STAT:
		return ceems_cgroup_parse_cgroup1_memory_stat(text, st);
	case SRC_V1_OOM_CONTROL:
		return ceems_cgroup_parse_cgroup1_oom_control(text, st);
	case SRC_CPUSET:
	case SRC_V1_CPUSET:
		ret = ceems_cgroup_parse_cpu_list(text, &st->cpuset);
		if (ret < 0)
			return ret;
		/* An empty v2 cpuset.cpus means "the parent's": unknown. */
		if (st->cpuset.count == 0)
			return -ENODATA;
		st->ncpus_allocated = st->cpuset.count;
		st->present |= CEEMS_CGF_CPUSET;
		return 0;
	case SRC_V1_BLKIO_BYTES:
	case SRC_V1_BLKIO_OPS:
		if ((ret = ceems_cgroup_parse_cgroup1_blkio(text, &a, &b)) < 0)
			return ret;
		if (s == SRC_V1_BLKIO_BYTES) {
			st->io_read_bytes = a;
			st->io_write_bytes = b;
		} else {
			st->io_read_ops = a;
			st->io_write_ops = b;
		}
		st->present |= sources[s].fields;
		return 0;
	case SRC_MEM_MAX:
		ret = ceems_cgroup_parse_u64_or_max(text, &a);
		break;
	case SRC_V1_MEM_LIMIT:
		ret = ceems_cgroup_parse_cgroup1_limit(text, &a);
		break;
	default:
		ret = ceems_number_parse_u64(text, &a);
		break;
	}
	if (ret < 0)
		return ret;
	/* The single-value files. */
	switch (s) {
	case SRC_MEM_CURRENT:
	case SRC_V1_MEM_USAGE:
		st->mem_current_bytes = a;
		break;
	case SRC_MEM_PEAK:
	case SRC_V1_MEM_MAX_USAGE:
		st->mem_peak_bytes = a;
		break;
	case SRC_MEM_MAX:
	case SRC_V1_MEM_LIMIT:
		st->mem_limit_bytes = a;
		break;
	case SRC_PIDS:
	case SRC_V1_PIDS:
		st->pids_current = a;
		break;
	case SRC_V1_MEM_FAILCNT:
		st->mem_fail_count = a;
		break;
	case SRC_CPUACCT_USAGE:
		st->cpu_usage_ns = a;
		break;
	case SRC_CPUACCT_USER:
		st->cpu_user_ns = a;
		break;
	case SRC_CPUACCT_SYS:
		st->cpu_system_ns = a;
		break;
	default:
		return -EINVAL;
	}
	st->present |= sources[s].fields;
	return 0;
}

/* The first directory of the reader, to name the cgroup in logs. */
static const char *
first_dir(const struct ceems_cgroup_reader *r)
{
	for (int c = 0; c <= CEEMS_CG_NCONTROLLERS; c++)
		if (r->dirs.dir[c][0] != '\0')
			return r->dirs.dir[c];
	return "?";
}

static const char *
source_name(const struct ceems_cgroup_reader *r, enum source s)
{
	return sources[s].names[r->alt[s]];
}

int
ceems_cgroup_stats_reader_read(struct ceems_cgroup_reader *r,
			 struct ceems_cgroup_stats *st)
{
	return ceems_cgroup_stats_reader_read_some(r, CEEMS_CGF_ALL, st);
}

CEEMS_TICK_PATH int
ceems_cgroup_stats_reader_read_some(struct ceems_cgroup_reader *r, uint32_t wanted,
			      struct ceems_cgroup_stats *st)
{
	bool sample_peak = r->version == CEEMS_CGROUP_V2 &&
			   r->fd[SRC_MEM_PEAK] < 0 &&
			   (wanted & CEEMS_CGF_MEM_PEAK);
	unsigned gone = 0;

	memset(st, 0, sizeof(*st));
	if (sample_peak)
		wanted |= CEEMS_CGF_MEM_CURRENT;
	for (int i = 0; i < NSOURCES; i++) {
		enum source s = (enum source)i;
		ssize_t n;
		int ret;

		if (r->fd[s] < 0 || !(sources[s].fields & wanted))
			continue;
		n = ceems_fileio_pread_text_once(r->fd[s], r->buf, sizeof(r->buf));
		/* A removed cgroup's open files answer ENODEV. */
		if (n == -ENODEV) {
			gone++;
			continue;
		}
		ret = n < 0 ? (int)n : parse_source(r, s, st);
		if (ret == 0)
			continue;
		/* Keep what the file measured out of present: a half-parsed
		 * file must not pass for a measurement. */
		st->failed |= sources[s].fields;
		if (!(r->warned_failed & (1u << s))) {
			r->warned_failed |= 1u << s;
			ceems_warning("cgroup file %s/%s: %s; what it measures "
				      "is left unmeasured",
				      r->dirs.dir[sources[s].dir],
				      source_name(r, s), strerror(-ret));
		}
	}
	st->present &= ~st->failed;
	/* The buffer is free again for the step daemons' files. */
	ceems_cgroup_stepd_subtract(r->stepd, r->buf, sizeof(r->buf), st);

	if (sample_peak && (st->present & CEEMS_CGF_MEM_CURRENT)) {
		if (st->mem_current_bytes > r->peak_seen)
			r->peak_seen = st->mem_current_bytes;
		st->mem_peak_bytes = r->peak_seen;
		st->present |= CEEMS_CGF_MEM_PEAK;
		st->flags |= CEEMS_CGS_PEAK_SAMPLED;
	}
	if (gone > 0) {
		if (st->present == 0) {
			memset(st, 0, sizeof(*st));
			return -ENODEV;
		}
		st->flags |= CEEMS_CGS_PARTLY_GONE;
		if (!r->warned_gone) {
			r->warned_gone = true;
			ceems_info("cgroup %s: partly removed (job ending?), "
				   "reading what is left", first_dir(r));
		}
	}
	return 0;
}
