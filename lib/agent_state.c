/* agent_state.c - the node agent's memory-mapped per-job state file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "agent_state.h"
#include "fileio.h"
#include "log.h"

#define STATE_MAGIC "CEEMSST1"
/* 2: steps carry have_cpu and have_joules[] (in what was padding, so
 * the sizes alone would not tell a version 1 file apart: its steps would
 * come back with every figure marked not measured).  3: a slot may
 * hold a deregistered job's final report ("finishing").  4: the spec
 * holds Slurm's start time and cluster of the job.  An older file is set
 * aside like any foreign one: its jobs are not restored. */
#define STATE_VERSION 4
#define STATE_HEADER_SIZE 4096

struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_size;	/* layout check: sizeof(struct slot) */
	uint32_t nslots;
	uint32_t figures_size;	/* layout check */
	char boot_id[64];
};

struct slot_copy {
	uint64_t seq;		/* 0: being written or never written */
	struct state_figures fig;
};

/* A deregistered job waiting for its release: what the agent needs to
 * write its record if the plugin never confirms it, even after an agent
 * restart. */
struct slot_final {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;	/* cleared while meta is written */
	uint32_t pad;
	struct ceems_agent_job_report report;	/* series: not kept */
	struct ceems_job_meta meta;
};

struct slot {
	uint32_t in_use;	/* written last at claim, first at release */
	uint32_t finishing;	/* written after final: never a live job again */
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
	struct slot_copy copy[2];
	struct slot_final final;
};

struct state_file {
	int fd;
	uint32_t nslots;
	size_t map_size;
	char *map;
	uint64_t *next_seq;	/* per slot */
	char path[CEEMS_CONFIG_PATH_MAX + 32];
};

static struct slot *
slot_at(struct state_file *sf, uint32_t i)
{
	return (struct slot *)(sf->map + STATE_HEADER_SIZE +
			       (size_t)i * sizeof(struct slot));
}

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

/* Map the file; when its header is not ours, set it aside and start a
 * fresh one.  Returns 0 or -errno. */
static int
map_state(struct state_file *sf, const char *dir, const char *boot_id)
{
	struct state_header *h;
	struct stat st;
	bool fresh;

	if (fstat(sf->fd, &st) < 0)
		return -errno;
	fresh = (size_t)st.st_size != sf->map_size;
	if (!fresh) {
		sf->map = mmap(NULL, sf->map_size, PROT_READ | PROT_WRITE,
			       MAP_SHARED, sf->fd, 0);
		if (sf->map == MAP_FAILED)
			return -errno;
		h = (struct state_header *)sf->map;
		if (header_matches(h, sf->nslots, boot_id))
			return 0;
		munmap(sf->map, sf->map_size);
	}
	if (st.st_size > 0) {
		char bad[CEEMS_CONFIG_PATH_MAX + 32];

		snprintf(bad, sizeof(bad), "%s/jobs.state.bad", dir);
		ceems_warning("state file %s is from another boot, version or max_jobs; set aside as %s, its jobs are not restored",
			      sf->path, bad);
		if (rename(sf->path, bad) < 0)
			ceems_warning("cannot rename %s: %s", sf->path, strerror(errno));
		/* The descriptor follows the renamed file: start a new one
		 * under the real name, and leave the old one as it was. */
		close(sf->fd);
		sf->fd = open(sf->path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC |
			      O_NOFOLLOW, 0600);
		if (sf->fd < 0)
			return -errno;
	}
	if (ftruncate(sf->fd, (off_t)sf->map_size) < 0)
		return -errno;
	sf->map = mmap(NULL, sf->map_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		       sf->fd, 0);
	if (sf->map == MAP_FAILED)
		return -errno;
	/* The file was just truncated: it reads as zeros already, and
	 * touching every page would make the whole file resident. */
	h = (struct state_header *)sf->map;
	memcpy(h->magic, STATE_MAGIC, 8);
	h->version = STATE_VERSION;
	h->slot_size = sizeof(struct slot);
	h->nslots = sf->nslots;
	h->figures_size = sizeof(struct state_figures);
	snprintf(h->boot_id, sizeof(h->boot_id), "%s", boot_id);
	return 0;
}

struct state_file *
state_file_open(const char *dir, uint32_t nslots, const char *boot_id,
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
	sf->nslots = nslots;
	sf->map_size = STATE_HEADER_SIZE + (size_t)nslots * sizeof(struct slot);
	sf->map = MAP_FAILED;
	sf->next_seq = calloc(nslots, sizeof(*sf->next_seq));
	snprintf(sf->path, sizeof(sf->path), "%s/jobs.state", dir);
	if (sf->next_seq == NULL) {
		*err = -ENOMEM;
		goto fail;
	}
	if ((*err = ceems_mkdir_p(dir, 0700)) < 0)
		goto fail;
	sf->fd = open(sf->path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (sf->fd < 0) {
		*err = -errno;
		goto fail;
	}
	ret = map_state(sf, dir, boot_id);
	if (ret < 0) {
		*err = ret;
		close(sf->fd);
		goto fail;
	}
	return sf;
fail:
	free(sf->next_seq);
	free(sf);
	return NULL;
}

void
state_file_close(struct state_file *sf)
{
	if (sf == NULL)
		return;
	if (sf->map != MAP_FAILED) {
		msync(sf->map, sf->map_size, MS_ASYNC);
		munmap(sf->map, sf->map_size);
	}
	close(sf->fd);
	free(sf->next_seq);
	free(sf);
}

int
state_slot_claim(struct state_file *sf, const struct ceems_agent_job_spec *spec,
		 uint64_t registered_ns)
{
	for (uint32_t i = 0; i < sf->nslots; i++) {
		struct slot *s = slot_at(sf, i);

		if (s->in_use)
			continue;
		memset(s, 0, sizeof(*s));
		s->spec = *spec;
		s->registered_ns = registered_ns;
		sf->next_seq[i] = 1;
		__atomic_store_n(&s->in_use, 1, __ATOMIC_RELEASE);
		return (int)i;
	}
	return -ENOSPC;
}

void
state_slot_update(struct state_file *sf, int slot,
		  const struct state_figures *fig)
{
	struct slot *s;
	struct slot_copy *c;
	uint64_t seq;

	if (slot < 0 || (uint32_t)slot >= sf->nslots)
		return;
	s = slot_at(sf, (uint32_t)slot);
	seq = sf->next_seq[slot]++;
	c = &s->copy[seq & 1];
	/* Mark the copy incomplete, write it, then publish it: a kill in
	 * between leaves the other copy as the latest complete one. */
	__atomic_store_n(&c->seq, 0, __ATOMIC_RELEASE);
	memcpy(&c->fig, fig, offsetof(struct state_figures, steps) +
	       (fig->nsteps <= CEEMS_AGENT_MAX_STEPS ? fig->nsteps : 0) *
	       sizeof(fig->steps[0]));
	__atomic_store_n(&c->seq, seq, __ATOMIC_RELEASE);
}

void
state_slot_identity(struct state_file *sf, int slot,
		    const struct ceems_agent_job_spec *spec)
{
	struct slot *s;

	if (slot < 0 || (uint32_t)slot >= sf->nslots)
		return;
	s = slot_at(sf, (uint32_t)slot);
	if (!s->in_use || s->finishing)
		return;
	/* One aligned store for the time; a cluster torn by a kill is
	 * terminated when read back, at worst cut short. */
	__atomic_store_n(&s->spec.start_time, spec->start_time,
			 __ATOMIC_RELEASE);
	memcpy(s->spec.cluster, spec->cluster, sizeof(s->spec.cluster));
}

void
state_slot_release(struct state_file *sf, int slot)
{
	if (slot < 0 || (uint32_t)slot >= sf->nslots)
		return;
	__atomic_store_n(&slot_at(sf, (uint32_t)slot)->in_use, 0,
			 __ATOMIC_RELEASE);
}

int
state_file_flush(struct state_file *sf)
{
	if (msync(sf->map, sf->map_size, MS_ASYNC) < 0)
		return -errno;
	return 0;
}

/* A bool read back from disk holds 0 or 1, or it is not a bool: look at
 * its byte, since loading any other value as a bool is undefined. */
static bool
flag_sane(const bool *flag)
{
	unsigned char byte;

	memcpy(&byte, flag, 1);
	return byte <= 1;
}

/* The parts that figures and final reports share, read back from disk,
 * are checked like any outside input. */
static bool
parts_sane(uint32_t ngaps, const struct ceems_agent_gap *gaps,
	   uint32_t nsteps, const struct ceems_agent_step_report *steps,
	   double cpu_s, double gap_s, const struct ceems_job_ledger *l)
{
	if (nsteps > CEEMS_AGENT_MAX_STEPS || ngaps > CEEMS_AGENT_MAX_GAPS)
		return false;
	for (uint32_t i = 0; i < ngaps; i++)
		if (!isfinite(gaps[i].start) || !isfinite(gaps[i].end) ||
		    gaps[i].start > gaps[i].end)
			return false;
	for (uint32_t i = 0; i < nsteps; i++) {
		const struct ceems_agent_step_report *st = &steps[i];

		if (memchr(st->id, '\0', sizeof(st->id)) == NULL ||
		    !isfinite(st->cpu_s) || st->cpu_s < 0 ||
		    !isfinite(st->elapsed_s) || st->elapsed_s < 0)
			return false;
		if (!flag_sane(&st->ended) || !flag_sane(&st->have_cpu) ||
		    !flag_sane(&st->have_mem_peak))
			return false;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			if (!isfinite(st->joules[d]) || st->joules[d] < 0 ||
			    !flag_sane(&st->have_joules[d]))
				return false;
	}
	if (!isfinite(cpu_s) || cpu_s < 0 || !isfinite(gap_s) ||
	    gap_s < 0 || !isfinite(l->lifetime_s) || l->lifetime_s < 0 ||
	    !isfinite(l->emissions_g) || l->emissions_g < 0)
		return false;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (!isfinite(l->joules[d]) || l->joules[d] < 0 ||
		    !isfinite(l->covered_s[d]) || l->covered_s[d] < 0)
			return false;
	return true;
}

static bool
figures_sane(const struct state_figures *f)
{
	return parts_sane(f->ngaps, f->gaps, f->nsteps, f->steps, f->cpu_s,
			  f->gap_s, &f->ledger);
}

static bool
final_sane(const struct slot *s)
{
	const struct ceems_agent_job_report *r = &s->final.report;

	return s->spec.jobid != 0 && r->jobid == s->spec.jobid &&
	       flag_sane(&r->cgroup_gone) && isfinite(r->elapsed_s) &&
	       r->elapsed_s >= 0 && s->final.start_time > 0 &&
	       s->final.end_time >= s->final.start_time &&
	       parts_sane(r->ngaps, r->gaps, r->nsteps, r->steps, r->cpu_s,
			  r->gap_s, &r->ledger);
}

int
state_file_restore(struct state_file *sf, state_restore_fn fn, void *arg)
{
	int kept = 0;

	for (uint32_t i = 0; i < sf->nslots; i++) {
		struct slot *s = slot_at(sf, i);
		const struct slot_copy *best = NULL;

		if (!s->in_use || s->finishing)
			continue;
		for (int c = 0; c < 2; c++)
			if (s->copy[c].seq != 0 &&
			    (best == NULL || s->copy[c].seq > best->seq) &&
			    figures_sane(&s->copy[c].fig))
				best = &s->copy[c];
		if (best == NULL || s->spec.jobid == 0) {
			ceems_warning("state slot %u (job %u) has no complete figures; dropped",
				      i, s->spec.jobid);
			state_slot_release(sf, (int)i);
			continue;
		}
		sf->next_seq[i] = best->seq + 1;
		if (fn(arg, (int)i, &s->spec, s->registered_ns, &best->fig) != 0)
			state_slot_release(sf, (int)i);
		else
			kept++;
	}
	return kept;
}

void
state_slot_finishing(struct state_file *sf, int slot,
		     const struct ceems_agent_job_report *report,
		     int64_t start_time, int64_t end_time)
{
	struct slot *s;

	if (slot < 0 || (uint32_t)slot >= sf->nslots)
		return;
	s = slot_at(sf, (uint32_t)slot);
	s->final.start_time = start_time;
	s->final.end_time = end_time;
	s->final.have_meta = 0;
	s->final.report = *report;
	s->final.report.series = NULL;
	__atomic_store_n(&s->finishing, 1, __ATOMIC_RELEASE);
}

void
state_slot_finishing_meta(struct state_file *sf, int slot,
			  const struct ceems_job_meta *meta)
{
	struct slot *s;

	if (slot < 0 || (uint32_t)slot >= sf->nslots)
		return;
	s = slot_at(sf, (uint32_t)slot);
	if (!s->in_use || !s->finishing)
		return;
	__atomic_store_n(&s->final.have_meta, 0, __ATOMIC_RELEASE);
	s->final.meta = *meta;
	__atomic_store_n(&s->final.have_meta, 1, __ATOMIC_RELEASE);
}

/* Every string of metadata read back from disk ends inside its buffer. */
static void
terminate_meta(struct ceems_job_meta *m)
{
	m->cluster[sizeof(m->cluster) - 1] = '\0';
	m->node[sizeof(m->node) - 1] = '\0';
	m->user[sizeof(m->user) - 1] = '\0';
	m->account[sizeof(m->account) - 1] = '\0';
	m->partition[sizeof(m->partition) - 1] = '\0';
	m->qos[sizeof(m->qos) - 1] = '\0';
	m->name[sizeof(m->name) - 1] = '\0';
	m->state[sizeof(m->state) - 1] = '\0';
	m->nodes[sizeof(m->nodes) - 1] = '\0';
}

int
state_file_restore_finishing(struct state_file *sf, state_finish_fn fn,
			     void *arg)
{
	int kept = 0;

	for (uint32_t i = 0; i < sf->nslots; i++) {
		struct slot *s = slot_at(sf, i);
		struct ceems_job_meta meta;
		bool have_meta;

		if (!s->in_use || !s->finishing)
			continue;
		if (s->finishing != 1 || !final_sane(s)) {
			ceems_warning("state slot %u (job %u) has a damaged final report; dropped",
				      i, s->spec.jobid);
			state_slot_release(sf, (int)i);
			continue;
		}
		have_meta = s->final.have_meta == 1;
		if (have_meta) {
			meta = s->final.meta;
			terminate_meta(&meta);
		}
		s->final.report.series = NULL;
		if (fn(arg, (int)i, &s->spec, &s->final.report,
		       s->final.start_time,
		       s->final.end_time, have_meta ? &meta : NULL) != 0)
			state_slot_release(sf, (int)i);
		else
			kept++;
	}
	return kept;
}
