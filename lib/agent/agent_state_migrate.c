/* agent_state_migrate.c - a state file written by an older agent is
 * rewritten in the current layout, so that upgrading the agent while
 * jobs run keeps them.  Version 4 (mapped into memory, no checksums, no
 * recovery figures), version 5 (no GPUs), version 6 (no eBPF or perf
 * counts), version 7 (checksummed a byte at a time) and version 8
 * (today's layout but for the final report's energy error bound) are
 * read here; their jobs come back with their figures, a job finishing
 * in them without its bound (unknown).  After a
 * version 4 file the interval the agent was down stays a gap (it does
 * not hold the counters that recovering it needs); after a version 4, 5
 * or 6 file a running job's IO and perf counts are absent, "agent
 * restarted" (those agents did not keep them).
 *
 * tests/fixtures/agent/jobs-v4.state to jobs-v8.state are files written
 * by those agents: tests/unit/test_agent_state.c migrates them. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_state_checksum.h"
#include "agent/agent_state_layout.h"
#include "base/fileio.h"
#include "base/log.h"

/* The spec of versions 4 and 5: today's up to its GPU identifiers.  Their
 * final report: today's up to what follows its series (4), or up to its
 * GPUs (5). */
#define SPEC_V5_SIZE offsetof(struct ceems_agent_job_spec, ngpu_ids)
#define REPORT_V4_SIZE offsetof(struct ceems_agent_job_report, recovered_s)
#define REPORT_V5_SIZE offsetof(struct ceems_agent_job_report, ngpus)

/* Version 4's figures: version 5's without cpu_last_ns, cgroup_ino and
 * have_cpu. */
struct state_figures_v4 {
	uint64_t tick_ns;
	uint64_t cpu_base_ns;
	double cpu_s;
	double gap_s;
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
};

struct slot_copy_v4 {
	uint64_t seq;		/* 0: being written or never written */
	struct state_figures_v4 fig;
};

struct slot_final_v4 {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;
	uint32_t pad;
	_Alignas(8) unsigned char report[REPORT_V4_SIZE];
	struct ceems_job_meta meta;
};

struct slot_v4 {
	uint32_t in_use;
	uint32_t finishing;
	uint64_t registered_ns;
	_Alignas(8) unsigned char spec[SPEC_V5_SIZE];
	struct slot_copy_v4 copy[2];
	struct slot_final_v4 final;
};

/* What the figures of versions 5 and 6 begin with (today's too, but
 * today's may change: these may not). */
struct state_figures_head_v5 {
	uint64_t tick_ns;
	uint64_t cpu_base_ns;
	uint64_t cpu_last_ns;
	uint64_t cgroup_ino;
	uint32_t have_cpu;
	uint32_t pad;
	double cpu_s;
	double gap_s;
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	double recovered_s;
	uint32_t nrecovered;
	struct ceems_agent_gap recovered[CEEMS_AGENT_MAX_GAPS];
};

/* Version 5's figures: today's without the GPUs' accounts. */
struct state_figures_v5 {
	struct state_figures_head_v5 head;
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
};

struct slot_copy_v5 {
	struct slot_copy_head head;
	struct state_figures_v5 fig;
};

struct slot_final_v5 {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;
	uint32_t pad;
	_Alignas(8) unsigned char report[REPORT_V5_SIZE];
	struct ceems_job_meta meta;
};

struct slot_v5 {
	uint32_t in_use;
	uint32_t finishing;
	uint64_t registered_ns;
	_Alignas(8) unsigned char spec[SPEC_V5_SIZE];
	struct slot_copy_v5 copy[2];
	struct slot_final_v5 final;
};

/* Version 6's figures: today's without the eBPF and perf counts. */
struct state_figures_v6 {
	struct state_figures_head_v5 head;
	struct agent_gpu_job gpu;
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
};

struct slot_copy_v6 {
	struct slot_copy_head head;
	struct state_figures_v6 fig;
};

/* Version 6's final report: today's up to its eBPF figures, which had
 * no unmeasured_s, nor had its perf figures. */
#define REPORT_V6_HEAD offsetof(struct ceems_agent_job_report, io)
#define IO_V6_SIZE offsetof(struct ceems_agent_io_report, unmeasured_s)
#define PERF_V6_SIZE offsetof(struct ceems_perf_report, unmeasured_s)

struct report_v6 {
	_Alignas(8) unsigned char head[REPORT_V6_HEAD];
	_Alignas(8) unsigned char io[IO_V6_SIZE];
	_Alignas(8) unsigned char perf[PERF_V6_SIZE];
};

struct slot_final_v6 {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;
	uint32_t pad;
	struct report_v6 report;
	struct ceems_job_meta meta;
};

struct slot_v6 {
	uint32_t in_use;
	uint32_t finishing;
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
	struct slot_copy_v6 copy[2];
	struct slot_final_v6 final;
};

/* The structures the old versions wrote are partly shared with today's
 * code (ledger, steps, gaps, metadata, the head of the spec and of the
 * report): if one of them changes, these readers need their own copy
 * of the old one (the fixtures' slots are of these sizes). */
_Static_assert(sizeof(struct slot_v4) == 24392,
	       "version 4 state slots are 24392 bytes (jobs-v4.state)");
_Static_assert(sizeof(struct state_figures_v4) == 6016,
	       "version 4 figures are 6016 bytes");
_Static_assert(sizeof(struct slot_v5) == 24904,
	       "version 5 state slots are 24904 bytes (jobs-v5.state)");
_Static_assert(sizeof(struct state_figures_v5) == 6184,
	       "version 5 figures are 6184 bytes");
/* Version 7's and 8's: today's but for the final report's error bound
 * (their checksums differ: agent_state_layout.h). */
#define REPORT_V8_SIZE offsetof(struct ceems_agent_job_report, err)

struct slot_final_v8 {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;
	uint32_t pad;
	_Alignas(8) unsigned char report[REPORT_V8_SIZE];
	struct ceems_job_meta meta;
};

struct slot_v8 {
	uint32_t in_use;
	uint32_t finishing;
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
	struct slot_copy copy[2];
	struct slot_final_v8 final;
};

_Static_assert(sizeof(struct slot_v8) == 37416,
	       "version 7 and 8 state slots are 37416 bytes (jobs-v8.state)");
_Static_assert(sizeof(struct slot_v6) == 36504,
	       "version 6 state slots are 36504 bytes (jobs-v6.state)");
_Static_assert(sizeof(struct state_figures_v6) == 9008,
	       "version 6 figures are 9008 bytes");

static void put_copy(struct slot *new, const struct state_figures *fig,
		     uint64_t seq);

/* The head of version 5's and 6's figures OLD into today's FIG, the
 * rest of it cleared. */
static void
figures_from_head(const struct state_figures_head_v5 *old,
		  struct state_figures *fig)
{
	memset(fig, 0, sizeof(*fig));
	fig->tick_ns = old->tick_ns;
	fig->cpu_base_ns = old->cpu_base_ns;
	fig->cpu_last_ns = old->cpu_last_ns;
	fig->cgroup_ino = old->cgroup_ino;
	fig->have_cpu = old->have_cpu;
	fig->cpu_s = old->cpu_s;
	fig->gap_s = old->gap_s;
	fig->ledger = old->ledger;
	fig->ngaps = old->ngaps;
	memcpy(fig->gaps, old->gaps, sizeof(fig->gaps));
	fig->recovered_s = old->recovered_s;
	fig->nrecovered = old->nrecovered;
	memcpy(fig->recovered, old->recovered, sizeof(fig->recovered));
}

/* Version 6's figures OLD as today's FIG: no eBPF or perf counts. */
static void
figures_from_v6(const struct state_figures_v6 *old, struct state_figures *fig)
{
	figures_from_head(&old->head, fig);
	fig->gpu = old->gpu;
	fig->nsteps = old->nsteps;
	memcpy(fig->steps, old->steps, fig->nsteps * sizeof(fig->steps[0]));
}

/* Whether a copy of an old slot (its HEAD, its figures FIG with NSTEPS
 * steps of STEP_SIZE bytes from STEPS_OFFSET on) was written whole: its
 * length and checksum hold. */
static bool
copy_holds(const struct slot_copy_head *head, const void *fig,
	   uint32_t nsteps, size_t steps_offset, size_t step_size)
{
	size_t want;

	if (head->seq == 0 || nsteps > CEEMS_AGENT_MAX_STEPS)
		return false;
	want = steps_offset + nsteps * step_size;
	return head->len == want &&
	       head->check == ceems_agent_state_checksum_fnv1a(fig, want);
}

/* Version 6's latest copy whose length and checksum hold, as current
 * figures, or false. */
static bool
convert_copy_v6(const struct slot_v6 *old, struct state_figures *fig,
		uint64_t *seq)
{
	const struct slot_copy_v6 *best = NULL;

	for (int c = 0; c < 2; c++) {
		const struct slot_copy_v6 *k = &old->copy[c];

		if ((best == NULL || k->head.seq > best->head.seq) &&
		    copy_holds(&k->head, &k->fig, k->fig.nsteps,
			       offsetof(struct state_figures_v6, steps),
			       sizeof(k->fig.steps[0])))
			best = k;
	}
	if (best == NULL)
		return false;
	figures_from_v6(&best->fig, fig);
	*seq = best->head.seq;
	return ceems_agent_state_check_figures_sane(fig);
}

/* Version 6 slot OLD as a current slot NEW.  False when it holds
 * nothing to keep. */
static bool
convert_slot_v6(const struct slot_v6 *old, struct slot *new)
{
	struct state_figures fig;
	uint64_t seq;

	if (old->in_use != 1 || old->spec.jobid == 0)
		return false;
	memset(new, 0, sizeof(*new));
	new->in_use = 1;
	new->registered_ns = old->registered_ns;
	new->spec = old->spec;
	if (old->finishing == 1) {
		new->finishing = 1;
		new->final.start_time = old->final.start_time;
		new->final.end_time = old->final.end_time;
		new->final.have_meta = old->final.have_meta;
		memcpy(&new->final.report, old->final.report.head, REPORT_V6_HEAD);
		memcpy(&new->final.report.io, old->final.report.io, IO_V6_SIZE);
		memcpy(&new->final.report.perf, old->final.report.perf,
		       PERF_V6_SIZE);
		new->final.meta = old->final.meta;
		return ceems_agent_state_check_final_sane(&new->spec, &new->final);
	}
	if (!convert_copy_v6(old, &fig, &seq))
		return false;
	put_copy(new, &fig, seq);
	return true;
}

/* Version 5's figures OLD as today's FIG: no GPU accounts. */
static void
figures_from_v5(const struct state_figures_v5 *old, struct state_figures *fig)
{
	figures_from_head(&old->head, fig);
	fig->nsteps = old->nsteps;
	memcpy(fig->steps, old->steps, fig->nsteps * sizeof(fig->steps[0]));
}

/* Version 4's latest complete copy, as current figures, or false. */
static bool
convert_copy_v4(const struct slot_v4 *old, struct state_figures *fig,
		uint64_t *seq)
{
	const struct slot_copy_v4 *best = NULL;
	struct state_figures_v5 *v5;

	for (int c = 0; c < 2; c++)
		if (old->copy[c].seq != 0 &&
		    (best == NULL || old->copy[c].seq > best->seq))
			best = &old->copy[c];
	if (best == NULL || best->fig.nsteps > CEEMS_AGENT_MAX_STEPS ||
	    (v5 = calloc(1, sizeof(*v5))) == NULL)
		return false;
	/* Version 5 added the CPU counter and the cgroup's identity:
	 * unknown here, so the interval after stays a gap. */
	v5->head.tick_ns = best->fig.tick_ns;
	v5->head.cpu_base_ns = best->fig.cpu_base_ns;
	v5->head.cpu_s = best->fig.cpu_s;
	v5->head.gap_s = best->fig.gap_s;
	v5->head.ledger = best->fig.ledger;
	v5->head.ngaps = best->fig.ngaps;
	memcpy(v5->head.gaps, best->fig.gaps, sizeof(v5->head.gaps));
	v5->nsteps = best->fig.nsteps;
	memcpy(v5->steps, best->fig.steps, v5->nsteps * sizeof(v5->steps[0]));
	figures_from_v5(v5, fig);
	free(v5);
	*seq = best->seq;
	return ceems_agent_state_check_figures_sane(fig);
}

/* Version 5's latest copy whose length and checksum hold, as current
 * figures, or false. */
static bool
convert_copy_v5(const struct slot_v5 *old, struct state_figures *fig,
		uint64_t *seq)
{
	const struct slot_copy_v5 *best = NULL;

	for (int c = 0; c < 2; c++) {
		const struct slot_copy_v5 *k = &old->copy[c];

		if ((best == NULL || k->head.seq > best->head.seq) &&
		    copy_holds(&k->head, &k->fig, k->fig.nsteps,
			       offsetof(struct state_figures_v5, steps),
			       sizeof(k->fig.steps[0])))
			best = k;
	}
	if (best == NULL)
		return false;
	figures_from_v5(&best->fig, fig);
	*seq = best->head.seq;
	return ceems_agent_state_check_figures_sane(fig);
}

/* The running figures FIG (of sequence SEQ) as NEW's copy. */
static void
put_copy(struct slot *new, const struct state_figures *fig, uint64_t seq)
{
	size_t len = offsetof(struct state_figures, steps) +
		     fig->nsteps * sizeof(fig->steps[0]);

	new->copy[seq & 1].fig = *fig;
	new->copy[seq & 1].head.seq = seq;
	new->copy[seq & 1].head.len = len;
	new->copy[seq & 1].head.check = ceems_agent_state_checksum_lanes(fig, len);
}

/* Version 7's or 8's slot OLD as a current slot NEW: the same layout
 * but for the final report's error bound, unknown here.  Version 7's
 * latest copy that holds under its checksum (FNV1A) is written again
 * with today's; version 8's is today's.  False when it holds nothing to
 * keep. */
static bool
convert_slot_v8(const struct slot_v8 *old, struct slot *new, bool fnv1a)
{
	const struct state_figures *fig = NULL;
	uint64_t seq = 0;

	if (old->in_use != 1 || old->spec.jobid == 0)
		return false;
	memset(new, 0, sizeof(*new));
	new->in_use = 1;
	new->finishing = old->finishing;
	new->registered_ns = old->registered_ns;
	new->spec = old->spec;
	if (old->finishing == 1) {
		new->final.start_time = old->final.start_time;
		new->final.end_time = old->final.end_time;
		new->final.have_meta = old->final.have_meta;
		memcpy(&new->final.report, old->final.report, REPORT_V8_SIZE);
		new->final.meta = old->final.meta;
		return ceems_agent_state_check_final_sane(&new->spec, &new->final);
	}
	for (int c = 0; fnv1a && c < 2; c++) {
		const struct slot_copy *k = &old->copy[c];

		if ((fig == NULL || k->head.seq > seq) &&
		    copy_holds(&k->head, &k->fig, k->fig.nsteps,
			       offsetof(struct state_figures, steps),
			       sizeof(k->fig.steps[0]))) {
			fig = &k->fig;
			seq = k->head.seq;
		}
	}
	if (!fnv1a)
		fig = ceems_agent_state_check_best_copy(old->copy, &seq);
	if (fig == NULL || !ceems_agent_state_check_figures_sane(fig))
		return false;
	put_copy(new, fig, seq);
	return true;
}

/* Old slot OLD (of version VERSION) as a current slot NEW.  False when
 * it holds nothing to keep. */
static bool
convert_slot(uint32_t version, const void *old, struct slot *new)
{
	const struct slot_v4 *o4 = old;
	const struct slot_v5 *o5 = old;
	struct state_figures fig;
	uint64_t seq;

	if (version == 7 || version == 8)
		return convert_slot_v8(old, new, version == 7);
	if (version == 6)
		return convert_slot_v6(old, new);
	/* Both versions start alike up to the spec. */
	if (o5->in_use != 1)
		return false;
	memset(new, 0, sizeof(*new));
	new->in_use = 1;
	new->registered_ns = o5->registered_ns;
	memcpy(&new->spec, o5->spec, SPEC_V5_SIZE);
	if (new->spec.jobid == 0)
		return false;
	if (o5->finishing == 1) {
		new->finishing = 1;
		if (version == 4) {
			new->final.start_time = o4->final.start_time;
			new->final.end_time = o4->final.end_time;
			new->final.have_meta = o4->final.have_meta;
			memcpy(&new->final.report, o4->final.report,
			       REPORT_V4_SIZE);
			new->final.meta = o4->final.meta;
		} else {
			new->final.start_time = o5->final.start_time;
			new->final.end_time = o5->final.end_time;
			new->final.have_meta = o5->final.have_meta;
			memcpy(&new->final.report, o5->final.report,
			       REPORT_V5_SIZE);
			new->final.meta = o5->final.meta;
		}
		return ceems_agent_state_check_final_sane(&new->spec, &new->final);
	}
	if (version == 4 ? !convert_copy_v4(o4, &fig, &seq) :
	    !convert_copy_v5(o5, &fig, &seq))
		return false;
	put_copy(new, &fig, seq);
	return true;
}

/* Write the current file NEW_FD from the older file OLD_FD. */
static int
write_migrated(int old_fd, int new_fd, const struct state_header *h,
	       size_t old_size, uint32_t nold, int *kept)
{
	struct state_header nh;
	void *old = malloc(old_size);
	struct slot *new = malloc(sizeof(*new));
	uint32_t n = 0;
	int err = 0;

	if (old == NULL || new == NULL) {
		err = -ENOMEM;
		goto out;
	}
	memset(&nh, 0, sizeof(nh));
	memcpy(nh.magic, STATE_MAGIC, 8);
	nh.version = STATE_VERSION;
	nh.slot_size = sizeof(struct slot);
	nh.nslots = h->nslots;
	nh.figures_size = sizeof(struct state_figures);
	memcpy(nh.boot_id, h->boot_id, sizeof(nh.boot_id));
	/* Versions 7 and 8 kept the node's counters as today: they stay,
	 * for the recovery of the interval the agent was down (version
	 * 8's checksum is today's, which the loader checks). */
	if (h->version == 8)
		nh.node = h->node;
	if (h->version == 7 &&
	    h->node.check == ceems_agent_state_checksum_fnv1a(
		    (const char *)&h->node + sizeof(h->node.check),
		    sizeof(h->node) - sizeof(h->node.check))) {
		nh.node = h->node;
		nh.node.check = ceems_agent_state_checksum_lanes(
			(const char *)&nh.node + sizeof(nh.node.check),
			sizeof(nh.node) - sizeof(nh.node.check));
	}
	if ((err = -posix_fallocate(new_fd, 0, STATE_HEADER_SIZE)) != 0 ||
	    (err = ceems_fileio_pwrite_all(new_fd, &nh, sizeof(nh), 0)) != 0)
		goto out;
	for (uint32_t i = 0; i < nold; i++) {
		off_t off = STATE_HEADER_SIZE + (off_t)n * (off_t)sizeof(*new);

		if (ceems_fileio_pread_all(old_fd, old, old_size, STATE_HEADER_SIZE +
				    (off_t)i * (off_t)old_size) < 0 ||
		    !convert_slot(h->version, old, new))
			continue;
		if ((err = -posix_fallocate(new_fd, off, sizeof(*new))) != 0 ||
		    (err = ceems_fileio_pwrite_all(new_fd, new, sizeof(*new),
						   off)) != 0)
			goto out;
		n++;
	}
	*kept = (int)n;
	if (fsync(new_fd) < 0)
		err = -errno;
out:
	free(old);
	free(new);
	return err;
}

int
ceems_agent_state_migrate(int fd, const char *path, const struct state_header *h,
	      off_t size)
{
	char tmp[CEEMS_CONFIG_PATH_MAX + 48];
	uint64_t nold;
	size_t old_size;
	int new_fd, err, kept = 0;

	if (h->version == 4 && h->slot_size == sizeof(struct slot_v4) &&
	    h->figures_size == sizeof(struct state_figures_v4))
		old_size = sizeof(struct slot_v4);
	else if (h->version == 5 && h->slot_size == sizeof(struct slot_v5) &&
		 h->figures_size == sizeof(struct state_figures_v5))
		old_size = sizeof(struct slot_v5);
	else if (h->version == 6 && h->slot_size == sizeof(struct slot_v6) &&
		 h->figures_size == sizeof(struct state_figures_v6))
		old_size = sizeof(struct slot_v6);
	else if ((h->version == 7 || h->version == 8) &&
		 h->slot_size == sizeof(struct slot_v8) &&
		 h->figures_size == sizeof(struct state_figures))
		old_size = sizeof(struct slot_v8);
	else
		return -EINVAL;
	if (size < STATE_HEADER_SIZE)
		return -EINVAL;
	nold = (uint64_t)(size - STATE_HEADER_SIZE) / old_size;
	if (nold > h->nslots)
		nold = h->nslots;
	snprintf(tmp, sizeof(tmp), "%s.migrating", path);
	new_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		      0600);
	if (new_fd < 0)
		return -errno;
	err = write_migrated(fd, new_fd, h, old_size, (uint32_t)nold, &kept);
	close(new_fd);
	if (err == 0 && rename(tmp, path) < 0)
		err = -errno;
	if (err < 0) {
		ceems_error("state file %s: cannot migrate it from version %u (%s): its jobs are not restored; free space under the state_dir",
			    path, h->version, strerror(-err));
		unlink(tmp);
		return err;
	}
	ceems_info("state file %s migrated from version %u: %d job%s kept",
		   path, h->version, kept, kept == 1 ? "" : "s");
	return 0;
}
