/* agent_state_migrate.c - a state file written by an older agent is
 * rewritten in the current layout, so that upgrading the agent while
 * jobs run keeps them.  Version 4 (mapped into memory, no checksums, no
 * recovery figures) is read here; its jobs come back with their figures,
 * and the interval the agent was down stays a gap (the version 4 file
 * does not hold the counters that recovering it needs).
 *
 * tests/fixtures/agent/jobs-v4.state is a file written by the version 4
 * agent: tests/unit/test_agent_state.c migrates it. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent_state_layout.h"
#include "log.h"

/* Version 4's figures: the current ones without cpu_last_ns, cgroup_ino
 * and have_cpu. */
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

/* Version 4's final report: today's without what follows its series. */
#define REPORT_V4_SIZE offsetof(struct ceems_agent_job_report, recovered_s)

struct slot_final_v4 {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;
	uint32_t pad;
	unsigned char report[REPORT_V4_SIZE];
	struct ceems_job_meta meta;
};

struct slot_v4 {
	uint32_t in_use;
	uint32_t finishing;
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
	struct slot_copy_v4 copy[2];
	struct slot_final_v4 final;
};

/* The structures version 4 wrote are shared with today's code: if one
 * of them changes, this reader needs its own copy of the old one (the
 * fixture's slots are of this size). */
_Static_assert(sizeof(struct slot_v4) == 24392,
	       "version 4 state slots are 24392 bytes (jobs-v4.state)");
_Static_assert(sizeof(struct state_figures_v4) == 6016,
	       "version 4 figures are 6016 bytes");

/* Version 4's latest complete copy, as current figures, or false. */
static bool
convert_copy(const struct slot_v4 *old, struct state_figures *fig,
	     uint64_t *seq)
{
	const struct slot_copy_v4 *best = NULL;

	for (int c = 0; c < 2; c++)
		if (old->copy[c].seq != 0 &&
		    (best == NULL || old->copy[c].seq > best->seq))
			best = &old->copy[c];
	if (best == NULL || best->fig.nsteps > CEEMS_AGENT_MAX_STEPS)
		return false;
	memset(fig, 0, sizeof(*fig));
	fig->tick_ns = best->fig.tick_ns;
	fig->cpu_base_ns = best->fig.cpu_base_ns;
	fig->cpu_s = best->fig.cpu_s;
	fig->gap_s = best->fig.gap_s;
	fig->ledger = best->fig.ledger;
	fig->ngaps = best->fig.ngaps;
	memcpy(fig->gaps, best->fig.gaps, sizeof(fig->gaps));
	fig->nsteps = best->fig.nsteps;
	memcpy(fig->steps, best->fig.steps,
	       fig->nsteps * sizeof(fig->steps[0]));
	*seq = best->seq;
	return state_figures_sane(fig);
}

/* Old slot OLD as a current slot NEW.  False when it holds nothing to
 * keep. */
static bool
convert_slot(const struct slot_v4 *old, struct slot *new)
{
	struct state_figures fig;
	uint64_t seq;
	size_t len;

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
		memcpy(&new->final.report, old->final.report, REPORT_V4_SIZE);
		new->final.meta = old->final.meta;
		return state_final_sane(&new->spec, &new->final);
	}
	if (!convert_copy(old, &fig, &seq))
		return false;
	len = offsetof(struct state_figures, steps) +
	      fig.nsteps * sizeof(fig.steps[0]);
	new->copy[seq & 1].fig = fig;
	new->copy[seq & 1].head.seq = seq;
	new->copy[seq & 1].head.len = len;
	new->copy[seq & 1].head.check = state_checksum(&fig, len);
	return true;
}

/* Write the current file NEW_FD from the version 4 file OLD_FD. */
static int
write_migrated(int old_fd, int new_fd, const struct state_header *h,
	       uint32_t nold, int *kept)
{
	struct state_header nh;
	struct slot_v4 *old = malloc(sizeof(*old));
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
	if ((err = posix_fallocate(new_fd, 0, STATE_HEADER_SIZE)) != 0 ||
	    pwrite(new_fd, &nh, sizeof(nh), 0) != (ssize_t)sizeof(nh)) {
		err = err != 0 ? -err : -errno;
		goto out;
	}
	for (uint32_t i = 0; i < nold; i++) {
		off_t off = STATE_HEADER_SIZE + (off_t)n * (off_t)sizeof(*new);

		if (state_pread_all(old_fd, old, sizeof(*old), STATE_HEADER_SIZE +
				    (off_t)i * (off_t)sizeof(*old)) < 0 ||
		    !convert_slot(old, new))
			continue;
		if ((err = posix_fallocate(new_fd, off, sizeof(*new))) != 0 ||
		    pwrite(new_fd, new, sizeof(*new), off) != (ssize_t)sizeof(*new)) {
			err = err != 0 ? -err : -errno;
			goto out;
		}
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
state_migrate(int fd, const char *path, const struct state_header *h,
	      off_t size)
{
	char tmp[CEEMS_CONFIG_PATH_MAX + 48];
	uint64_t nold;
	int new_fd, err, kept = 0;

	if (h->version != 4 || h->slot_size != sizeof(struct slot_v4) ||
	    h->figures_size != sizeof(struct state_figures_v4) ||
	    size < STATE_HEADER_SIZE)
		return -EINVAL;
	nold = (uint64_t)(size - STATE_HEADER_SIZE) / sizeof(struct slot_v4);
	if (nold > h->nslots)
		nold = h->nslots;
	snprintf(tmp, sizeof(tmp), "%s.migrating", path);
	new_fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW,
		      0600);
	if (new_fd < 0)
		return -errno;
	err = write_migrated(fd, new_fd, h, (uint32_t)nold, &kept);
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
