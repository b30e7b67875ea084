/* agent_state.c - the node agent's per-job state file, written with
 * pwrite into space reserved up front (agent_state.h).  The layout is in
 * agent_state_layout.h; files of older layouts are migrated by
 * agent_state_migrate.c. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/agent_state.h"
#include "agent/agent_state_checksum.h"
#include "agent/agent_state_layout.h"
#include "base/fileio.h"
#include "base/log.h"

/* What the agent keeps of a slot whose registration is not on disk yet
 * (no space could be had): written as soon as space returns. */
struct pending_claim {
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
};

enum slot_kind { SLOT_FREE = 0, SLOT_LIVE, SLOT_FINISHING };

struct state_file {
	int fd;
	uint32_t nslots;	/* the most slots the file may hold */
	uint32_t nalloc;	/* slots the file holds now */
	unsigned char *kind;	/* enum slot_kind, per slot */
	uint64_t *next_seq;	/* per slot */
	struct pending_claim **pending;	/* per slot, NULL when on disk */
	bool header_on_disk;
	int failed;		/* -errno of the last failed write, or 0 */
	struct state_header header;
	char path[CEEMS_CONFIG_PATH_MAX + 32];
};

static off_t
slot_offset(uint32_t i)
{
	return (off_t)STATE_HEADER_SIZE + (off_t)i * (off_t)sizeof(struct slot);
}

/* One line when the file stops being written, one when it is again:
 * an agent on a full disk must not fill the log as well. */
static void
note_write(struct state_file *sf, int err, const char *what)
{
	if (err < 0 && sf->failed == 0)
		ceems_error("state file %s: cannot %s (%s): jobs are still measured, but an agent restart now would lose their figures; free space under the state_dir",
			    sf->path, what, strerror(-err));
	else if (err == 0 && sf->failed != 0)
		ceems_info("state file %s is written again", sf->path);
	sf->failed = err;
}

/* Both parts whole, in one system call when it writes them all (a write
 * to a regular file does, but for a signal or a full disk). */
static int
pwritev_all(int fd, struct iovec iov[2], off_t off)
{
	ssize_t n = pwritev(fd, iov, 2, off);

	if (n < 0)
		return -errno;
	if ((size_t)n == iov[0].iov_len + iov[1].iov_len)
		return 0;
	if ((size_t)n < iov[0].iov_len)
		return ceems_fileio_pwrite_all(fd, (char *)iov[0].iov_base + n,
				  iov[0].iov_len - (size_t)n, off + n) < 0 ? -EIO :
		       ceems_fileio_pwrite_all(fd, iov[1].iov_base, iov[1].iov_len,
				  off + (off_t)iov[0].iov_len);
	n -= (ssize_t)iov[0].iov_len;
	return ceems_fileio_pwrite_all(fd, (char *)iov[1].iov_base + n,
			  iov[1].iov_len - (size_t)n,
			  off + (off_t)iov[0].iov_len + n);
}

/* The header, once: a file without one is not a state file. */
static int
reserve_header(struct state_file *sf)
{
	int err;

	if (sf->header_on_disk)
		return 0;
	err = posix_fallocate(sf->fd, 0, STATE_HEADER_SIZE);
	if (err != 0)
		return -err;
	err = ceems_fileio_pwrite_all(sf->fd, &sf->header, sizeof(sf->header), 0);
	if (err < 0)
		return err;
	sf->header_on_disk = true;
	return 0;
}

/* Reserve the space of slots up to I: a write into it can then not fail
 * for want of space.  0 or -errno. */
static int
reserve_slot(struct state_file *sf, uint32_t i)
{
	int err = reserve_header(sf);

	if (err < 0)
		return err;
	if (i < sf->nalloc)
		return 0;
	err = posix_fallocate(sf->fd, slot_offset(sf->nalloc),
			      slot_offset(i + 1) - slot_offset(sf->nalloc));
	if (err != 0)
		return -err;
	sf->nalloc = i + 1;
	return 0;
}

/* Write LEN bytes at OFFSET inside slot I, reserving its space first. */
static int
slot_write(struct state_file *sf, uint32_t i, size_t offset, const void *buf,
	   size_t len, const char *what)
{
	int err = reserve_slot(sf, i);

	if (err == 0)
		err = ceems_fileio_pwrite_all(sf->fd, buf, len, slot_offset(i) + (off_t)offset);
	note_write(sf, err, what);
	return err;
}

/* Give back the space of the slots above the last one in use. */
static void
trim_file(struct state_file *sf)
{
	uint32_t top = sf->nalloc;

	while (top > 0 && sf->kind[top - 1] == SLOT_FREE)
		top--;
	if (top == sf->nalloc || !sf->header_on_disk)
		return;
	if (ftruncate(sf->fd, slot_offset(top)) == 0)
		sf->nalloc = top;
}

/* Write a claimed slot's registration: the slot zeroed with the job's
 * spec, then in_use, so that a half-written slot is never a job. */
static int
write_claim(struct state_file *sf, uint32_t i, const struct ceems_agent_job_spec *spec,
	    uint64_t registered_ns)
{
	struct slot *s;
	uint32_t one = 1;
	int err;

	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return -ENOMEM;
	s->spec = *spec;
	s->registered_ns = registered_ns;
	err = slot_write(sf, i, 0, s, sizeof(*s), "write a job's registration");
	free(s);
	if (err == 0)
		err = slot_write(sf, i, offsetof(struct slot, in_use), &one,
				 sizeof(one), "write a job's registration");
	return err;
}

/* A claim whose registration is not on disk yet: write it now if the
 * space is back.  0 once it is on disk. */
static int
flush_pending(struct state_file *sf, uint32_t i)
{
	struct pending_claim *p = sf->pending[i];

	if (p == NULL)
		return 0;
	if (write_claim(sf, i, &p->spec, p->registered_ns) < 0)
		return -EAGAIN;
	free(p);
	sf->pending[i] = NULL;
	return 0;
}

static void
fill_header(struct state_header *h, uint32_t nslots, const char *boot_id)
{
	memset(h, 0, sizeof(*h));
	memcpy(h->magic, STATE_MAGIC, 8);
	h->version = STATE_VERSION;
	h->slot_size = sizeof(struct slot);
	h->nslots = nslots;
	h->figures_size = sizeof(struct state_figures);
	snprintf(h->boot_id, sizeof(h->boot_id), "%s", boot_id);
}

/* Whether the file open on SF->fd is a current one of this boot, for as
 * many slots. */
static bool
header_matches(const struct state_header *h, uint32_t nslots,
	       const char *boot_id)
{
	return memcmp(h->magic, STATE_MAGIC, 8) == 0 &&
	       h->version == STATE_VERSION &&
	       h->slot_size == sizeof(struct slot) &&
	       h->figures_size == sizeof(struct state_figures) &&
	       h->nslots == nslots &&
	       strncmp(h->boot_id, boot_id, sizeof(h->boot_id)) == 0;
}

/* Set the file aside as jobs.state.bad and start an empty one. */
static int
set_aside(struct state_file *sf, const char *dir, const char *why)
{
	char bad[CEEMS_CONFIG_PATH_MAX + 32];

	snprintf(bad, sizeof(bad), "%s/jobs.state.bad", dir);
	ceems_warning("state file %s %s; set aside as %s, its jobs are not restored",
		      sf->path, why, bad);
	if (rename(sf->path, bad) < 0)
		ceems_warning("cannot rename %s: %s", sf->path, strerror(errno));
	/* The descriptor follows the renamed file: start a new one under
	 * the real name, and leave the old one as it was. */
	close(sf->fd);
	sf->fd = open(sf->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC |
		      O_NOFOLLOW, 0600);
	return sf->fd < 0 ? -errno : 0;
}

/* Read the header of the open file; a file of an older layout is
 * migrated first, one that is not ours set aside.  Returns 0 or
 * -errno. */
static int
load_state(struct state_file *sf, const char *dir, const char *boot_id)
{
	struct state_header h;
	struct stat st;
	int ret;

	if (fstat(sf->fd, &st) < 0)
		return -errno;
	if (st.st_size == 0)
		return 0;
	ret = ceems_fileio_pread_all(sf->fd, &h, sizeof(h), 0);
	if (ret == 0 && memcmp(h.magic, STATE_MAGIC, 8) == 0 &&
	    h.version < STATE_VERSION &&
	    strncmp(h.boot_id, boot_id, sizeof(h.boot_id)) == 0) {
		ret = ceems_agent_state_migrate(sf->fd, sf->path, &h, st.st_size);
		if (ret == 0) {
			/* The migrated file replaced the old one. */
			close(sf->fd);
			sf->fd = open(sf->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
			if (sf->fd < 0 || fstat(sf->fd, &st) < 0)
				return -errno;
			ret = ceems_fileio_pread_all(sf->fd, &h, sizeof(h), 0);
		}
	}
	if (ret < 0 || !header_matches(&h, sf->nslots, boot_id) ||
	    st.st_size < STATE_HEADER_SIZE)
		return set_aside(sf, dir, "is from another boot, version or max_jobs, or damaged");
	sf->header_on_disk = true;
	if (ceems_agent_state_check_node_sane(&h.node))
		sf->header.node = h.node;
	sf->nalloc = (uint32_t)((uint64_t)(st.st_size - STATE_HEADER_SIZE) /
				sizeof(struct slot));
	if (sf->nalloc > sf->nslots)
		sf->nalloc = sf->nslots;
	for (uint32_t i = 0; i < sf->nalloc; i++) {
		uint32_t flags[2];

		if (ceems_fileio_pread_all(sf->fd, flags, sizeof(flags),
				    slot_offset(i)) < 0)
			break;
		if (flags[0] == 1)
			sf->kind[i] = flags[1] == 1 ? SLOT_FINISHING : SLOT_LIVE;
	}
	return 0;
}

struct state_file *
ceems_agent_state_file_open(const char *dir, uint32_t nslots, const char *boot_id,
		int *err)
{
	struct state_file *sf;
	int ret;

	sf = calloc(1, sizeof(*sf));
	if (sf == NULL || nslots == 0) {
		*err = sf == NULL ? -ENOMEM : -EINVAL;
		free(sf);
		return NULL;
	}
	sf->fd = -1;
	sf->nslots = nslots;
	sf->kind = calloc(nslots, sizeof(*sf->kind));
	sf->next_seq = calloc(nslots, sizeof(*sf->next_seq));
	sf->pending = calloc(nslots, sizeof(*sf->pending));
	snprintf(sf->path, sizeof(sf->path), "%s/jobs.state", dir);
	fill_header(&sf->header, nslots, boot_id);
	if (sf->kind == NULL || sf->next_seq == NULL || sf->pending == NULL) {
		*err = -ENOMEM;
		goto fail;
	}
	if ((*err = ceems_fileio_mkdir_p(dir, 0700)) < 0)
		goto fail;
	sf->fd = open(sf->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sf->fd < 0) {
		*err = -errno;
		goto fail;
	}
	ret = load_state(sf, dir, boot_id);
	if (ret < 0) {
		*err = ret;
		goto fail;
	}
	note_write(sf, reserve_header(sf), "write its header");
	trim_file(sf);
	return sf;
fail:
	if (sf->fd >= 0)
		close(sf->fd);
	free(sf->kind);
	free(sf->next_seq);
	free(sf->pending);
	free(sf);
	return NULL;
}

void
ceems_agent_state_file_close(struct state_file *sf)
{
	if (sf == NULL)
		return;
	close(sf->fd);
	for (uint32_t i = 0; i < sf->nslots; i++)
		free(sf->pending[i]);
	free(sf->pending);
	free(sf->kind);
	free(sf->next_seq);
	free(sf);
}

int
ceems_agent_state_slot_claim(struct state_file *sf, const struct ceems_agent_job_spec *spec,
		 uint64_t registered_ns)
{
	for (uint32_t i = 0; i < sf->nslots; i++) {
		if (sf->kind[i] != SLOT_FREE)
			continue;
		sf->kind[i] = SLOT_LIVE;
		sf->next_seq[i] = 1;
		if (write_claim(sf, i, spec, registered_ns) < 0) {
			/* Measured all the same; on disk when space is back. */
			sf->pending[i] = malloc(sizeof(*sf->pending[i]));
			if (sf->pending[i] != NULL) {
				sf->pending[i]->spec = *spec;
				sf->pending[i]->registered_ns = registered_ns;
			}
		}
		return (int)i;
	}
	return -ENOSPC;
}

static bool
slot_valid(const struct state_file *sf, int slot)
{
	return slot >= 0 && (uint32_t)slot < sf->nslots &&
	       sf->kind[slot] != SLOT_FREE;
}

void
ceems_agent_state_slot_update(struct state_file *sf, int slot,
		  const struct state_figures *fig)
{
	struct slot_copy_head head;
	struct iovec iov[2];
	size_t len;
	uint64_t seq;
	int err;

	if (!slot_valid(sf, slot) || flush_pending(sf, (uint32_t)slot) < 0)
		return;
	/* Only the steps in use: most jobs have a few. */
	len = offsetof(struct state_figures, steps) +
	      (fig->nsteps <= CEEMS_AGENT_MAX_STEPS ? fig->nsteps : 0) *
	      sizeof(fig->steps[0]);
	seq = sf->next_seq[slot]++;
	head.seq = seq;
	head.len = len;
	head.check = ceems_agent_state_checksum_lanes(fig, len);
	/* One write of the head and the figures: a kill in its middle
	 * leaves a copy whose checksum does not match, and the other copy
	 * is the latest complete one. */
	iov[0].iov_base = &head;
	iov[0].iov_len = sizeof(head);
	/* pwritev only reads it; struct iovec has no const. */
	iov[1].iov_base = (void *)(uintptr_t)fig;
	iov[1].iov_len = len;
	err = reserve_slot(sf, (uint32_t)slot);
	if (err == 0)
		err = pwritev_all(sf->fd, iov, slot_offset((uint32_t)slot) +
				  (off_t)copy_offset(seq & 1));
	note_write(sf, err, "write a job's figures");
}

void
ceems_agent_state_slot_identity(struct state_file *sf, int slot,
		    const struct ceems_agent_job_spec *spec)
{
	struct pending_claim *p;

	if (!slot_valid(sf, slot) || sf->kind[slot] != SLOT_LIVE)
		return;
	p = sf->pending[slot];
	if (p != NULL) {
		p->spec.start_time = spec->start_time;
		memcpy(p->spec.cluster, spec->cluster, sizeof(p->spec.cluster));
		return;
	}
	/* The start time is one aligned write; a cluster torn by a kill is
	 * terminated when read back, at worst cut short. */
	slot_write(sf, (uint32_t)slot, offsetof(struct slot, spec.start_time),
		   &spec->start_time, sizeof(spec->start_time),
		   "write a job's identity");
	slot_write(sf, (uint32_t)slot, offsetof(struct slot, spec.cluster),
		   spec->cluster, sizeof(spec->cluster), "write a job's identity");
}

void
ceems_agent_state_slot_options(struct state_file *sf, int slot,
		   const struct ceems_agent_job_spec *spec)
{
	struct pending_claim *p;

	if (!slot_valid(sf, slot) || sf->kind[slot] != SLOT_LIVE)
		return;
	p = sf->pending[slot];
	if (p != NULL) {
		p->spec.series = spec->series;
		p->spec.perf = spec->perf;
		return;
	}
	/* Each one byte: a kill leaves it as it was or as it is. */
	slot_write(sf, (uint32_t)slot, offsetof(struct slot, spec.series),
		   &spec->series, sizeof(spec->series), "write a job's options");
	slot_write(sf, (uint32_t)slot, offsetof(struct slot, spec.perf),
		   &spec->perf, sizeof(spec->perf), "write a job's options");
}

void
ceems_agent_state_slot_cgroup(struct state_file *sf, int slot,
		  const struct ceems_agent_job_spec *spec)
{
	struct pending_claim *p;

	if (!slot_valid(sf, slot) || sf->kind[slot] != SLOT_LIVE)
		return;
	p = sf->pending[slot];
	if (p != NULL) {
		p->spec.cgroup = spec->cgroup;
		return;
	}
	/* Only hierarchies the slot had empty (all zero bytes) are written:
	 * each path's tail first, its first byte last, so that a kill
	 * leaves it empty or whole, never a parent directory. */
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++) {
		size_t at = offsetof(struct slot, spec.cgroup.v1) +
			    (size_t)c * sizeof(spec->cgroup.v1[c]);
		size_t len = strnlen(spec->cgroup.v1[c], sizeof(spec->cgroup.v1[c]));

		if (len == 0 || len == sizeof(spec->cgroup.v1[c]))
			continue;
		slot_write(sf, (uint32_t)slot, at + 1, spec->cgroup.v1[c] + 1,
			   len - 1, "write a job's cgroup");
		slot_write(sf, (uint32_t)slot, at, spec->cgroup.v1[c], 1,
			   "write a job's cgroup");
	}
}

void
ceems_agent_state_slot_release(struct state_file *sf, int slot)
{
	uint32_t zero = 0;

	if (!slot_valid(sf, slot))
		return;
	if (sf->pending[slot] != NULL) {
		free(sf->pending[slot]);
		sf->pending[slot] = NULL;
	} else if ((uint32_t)slot < sf->nalloc) {
		note_write(sf, ceems_fileio_pwrite_all(sf->fd, &zero, sizeof(zero),
					  slot_offset((uint32_t)slot)),
			   "release a job's slot");
	}
	sf->kind[slot] = SLOT_FREE;
	trim_file(sf);
}

int
ceems_agent_state_file_flush(struct state_file *sf)
{
	return sf->failed;
}

void
ceems_agent_state_slot_finishing(struct state_file *sf, int slot,
		     const struct ceems_agent_job_report *report,
		     int64_t start_time, int64_t end_time)
{
	struct slot_final *final;
	uint32_t one = 1;

	if (!slot_valid(sf, slot))
		return;
	sf->kind[slot] = SLOT_FINISHING;
	if (flush_pending(sf, (uint32_t)slot) < 0)
		return;
	final = calloc(1, sizeof(*final));
	if (final == NULL)
		return;
	final->start_time = start_time;
	final->end_time = end_time;
	final->report = *report;
	final->report.series = NULL;
	if (slot_write(sf, (uint32_t)slot, offsetof(struct slot, final), final,
		       sizeof(*final), "write a job's final report") == 0)
		slot_write(sf, (uint32_t)slot, offsetof(struct slot, finishing),
			   &one, sizeof(one), "write a job's final report");
	free(final);
}

void
ceems_agent_state_slot_finishing_meta(struct state_file *sf, int slot,
			  const struct ceems_job_meta *meta)
{
	uint32_t flag = 0;

	if (!slot_valid(sf, slot) || sf->kind[slot] != SLOT_FINISHING ||
	    sf->pending[slot] != NULL)
		return;
	if (slot_write(sf, (uint32_t)slot, offsetof(struct slot, final.have_meta),
		       &flag, sizeof(flag), "write a job's metadata") < 0 ||
	    slot_write(sf, (uint32_t)slot, offsetof(struct slot, final.meta),
		       meta, sizeof(*meta), "write a job's metadata") < 0)
		return;
	flag = 1;
	slot_write(sf, (uint32_t)slot, offsetof(struct slot, final.have_meta),
		   &flag, sizeof(flag), "write a job's metadata");
}

/* Read slot I whole into S (a buffer of the caller's).  0 or -errno. */
static int
read_slot(struct state_file *sf, uint32_t i, struct slot *s)
{
	if (i >= sf->nalloc)
		return -ENODATA;
	return ceems_fileio_pread_all(sf->fd, s, sizeof(*s), slot_offset(i));
}

int
ceems_agent_state_file_restore(struct state_file *sf, state_restore_fn fn, void *arg)
{
	struct slot *s = malloc(sizeof(*s));
	int kept = 0;

	if (s == NULL)
		return 0;
	for (uint32_t i = 0; i < sf->nalloc; i++) {
		const struct state_figures *best;
		uint64_t seq;

		if (sf->kind[i] != SLOT_LIVE || read_slot(sf, i, s) < 0)
			continue;
		best = ceems_agent_state_check_best_copy(s->copy, &seq);
		if (best == NULL || s->spec.jobid == 0) {
			ceems_warning("state slot %u (job %u) has no complete figures; dropped",
				      i, s->spec.jobid);
			ceems_agent_state_slot_release(sf, (int)i);
			continue;
		}
		sf->next_seq[i] = seq + 1;
		if (fn(arg, (int)i, &s->spec, s->registered_ns, best) != 0)
			ceems_agent_state_slot_release(sf, (int)i);
		else
			kept++;
	}
	free(s);
	return kept;
}

int
ceems_agent_state_file_restore_finishing(struct state_file *sf, state_finish_fn fn,
			     void *arg)
{
	struct slot *s = malloc(sizeof(*s));
	int kept = 0;

	if (s == NULL)
		return 0;
	for (uint32_t i = 0; i < sf->nalloc; i++) {
		struct ceems_job_meta meta;
		bool have_meta;

		if (sf->kind[i] != SLOT_FINISHING || read_slot(sf, i, s) < 0)
			continue;
		if (!ceems_agent_state_check_final_sane(&s->spec, &s->final)) {
			ceems_warning("state slot %u (job %u) has a damaged final report; dropped",
				      i, s->spec.jobid);
			ceems_agent_state_slot_release(sf, (int)i);
			continue;
		}
		have_meta = s->final.have_meta == 1;
		if (have_meta) {
			meta = s->final.meta;
			ceems_agent_state_check_terminate_meta(&meta);
		}
		s->final.report.series = NULL;
		if (fn(arg, (int)i, &s->spec, &s->final.report,
		       s->final.start_time, s->final.end_time,
		       have_meta ? &meta : NULL) != 0)
			ceems_agent_state_slot_release(sf, (int)i);
		else
			kept++;
	}
	free(s);
	return kept;
}

const struct state_node *
ceems_agent_state_file_node(const struct state_file *sf)
{
	return &sf->header.node;
}

const char *
ceems_agent_state_file_boot_id(const struct state_file *sf)
{
	return sf->header.boot_id;
}

void
ceems_agent_state_file_set_node(struct state_file *sf, const struct state_node *node)
{
	struct state_node n = *node;

	n.check = ceems_agent_state_checksum_lanes((const char *)&n + sizeof(n.check),
				 sizeof(n) - sizeof(n.check));
	if (reserve_header(sf) == 0)
		note_write(sf, ceems_fileio_pwrite_all(sf->fd, &n, sizeof(n),
					  offsetof(struct state_header, node)),
			   "write the node's counters");
}
