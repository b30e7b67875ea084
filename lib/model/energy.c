/* energy.c - what every energy source shares: the names of domains and
 * gaps, the per-tick take, and the judgement of two readings of a
 * monotonic counter (wrap, stall, reset), kept here as pure functions so
 * that RAPL, hwmon and pm_counters apply one rule and tests can check it
 * without files. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/energy.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/number.h"
#include "base/tick_path.h"

static const char *const gap_names[] = {
	[CEEMS_GAP_NONE] = "none",
	[CEEMS_GAP_FIRST_READ] = "first_read",
	[CEEMS_GAP_STALL] = "stall",
	[CEEMS_GAP_RESET] = "reset",
	[CEEMS_GAP_READ_ERROR] = "read_error",
};

const char *
ceems_energy_gap_name(enum ceems_energy_gap g)
{
	if ((unsigned int)g >= sizeof(gap_names) / sizeof(gap_names[0]))
		return "unknown";
	return gap_names[g];
}

CEEMS_TICK_PATH void
ceems_energy_source_take(struct ceems_energy_source *src,
			 struct ceems_energy_take *out)
{
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		struct ceems_energy_counter *c = &src->counters[i];

		out[i].gap = c->pending_gap;
		out[i].joules = c->pending_gap == CEEMS_GAP_NONE ?
			c->pending_j : 0.0;
		c->pending_j = 0.0;
		c->pending_gap = CEEMS_GAP_NONE;
	}
}

CEEMS_TICK_PATH void
ceems_energy_source_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	src->ops->sample(src, now_ns);
}

CEEMS_TICK_PATH uint64_t
ceems_energy_source_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	return src->ops->max_sample_interval_ns(src);
}

CEEMS_TICK_PATH struct ceems_energy_reader *
ceems_energy_source_reader(struct ceems_energy_source *src, size_t i)
{
	if (src->ops->reader == NULL || i >= src->ncounters)
		return NULL;
	return src->ops->reader(src, i);
}

void
ceems_energy_source_close(struct ceems_energy_source *src)
{
	if (src != NULL)
		src->ops->close(src);
}

CEEMS_TICK_PATH void
ceems_energy_counter_add(struct ceems_energy_counter *c, double j)
{
	/* Energy of a tick that already has a gap is dropped by take();
	 * keep adding anyway, it costs nothing and keeps one code path. */
	c->pending_j += j;
}

void
ceems_energy_counter_gap(struct ceems_energy_counter *c,
			 enum ceems_energy_gap gap)
{
	if (c->pending_gap == CEEMS_GAP_NONE)
		c->pending_gap = gap;
}

CEEMS_TICK_PATH int
ceems_energy_pread_u64(int fd, uint64_t *value)
{
	char buf[64];
	ssize_t n = ceems_fileio_pread_text_once(fd, buf, sizeof(buf));

	if (n < 0)
		return (int)n;
	return ceems_number_parse_u64(buf, value);
}

CEEMS_TICK_PATH uint64_t
ceems_energy_wrap_period_ns(const struct ceems_energy_counter_limits *lim)
{
	double s;

	if (lim->range == 0 || !(lim->max_power_w > 0.0))
		return 0;
	s = (double)lim->range * lim->unit_j / lim->max_power_w;
	if (s * 1e9 >= (double)UINT64_MAX)
		return UINT64_MAX;
	return (uint64_t)(s * 1e9);
}

CEEMS_TICK_PATH enum ceems_energy_gap
ceems_energy_counter_delta(const struct ceems_energy_counter_limits *lim,
			   uint64_t prev, uint64_t cur, uint64_t elapsed_ns,
			   double *joules)
{
	uint64_t wrap_ns = ceems_energy_wrap_period_ns(lim);
	uint64_t counts;
	double j, bound_j;

	*joules = 0.0;
	if (lim->range != 0 && (cur > lim->range || prev > lim->range))
		return CEEMS_GAP_READ_ERROR;
	/* Past the wrap period the counter may have wrapped any number of
	 * times, a forward-looking delta included: nothing can be said. */
	if (wrap_ns != 0 && elapsed_ns > wrap_ns)
		return CEEMS_GAP_STALL;
	if (cur >= prev)
		counts = cur - prev;
	else if (lim->range != 0)
		counts = lim->range - prev + cur;
	else
		return CEEMS_GAP_RESET;

	j = (double)counts * lim->unit_j;
	if (lim->max_power_w > 0.0) {
		bound_j = lim->max_power_w *
			((double)elapsed_ns + (double)lim->slack_ns) / 1e9;
		if (j > bound_j)
			return CEEMS_GAP_RESET;
	}
	*joules = j;
	return CEEMS_GAP_NONE;
}

int
ceems_energy_sysfs_path(char *buf, size_t size, const char *sysfs_root,
			const char *rel)
{
	size_t len = sysfs_root != NULL ? strlen(sysfs_root) : 0;
	int n;

	/* "/" and "" both mean the real /sys; "/x/" and "/x" are alike. */
	while (len > 0 && sysfs_root[len - 1] == '/')
		len--;
	n = snprintf(buf, size, "%.*s%s", (int)len,
		     len > 0 ? sysfs_root : "", rel);
	if (n < 0 || (size_t)n >= size)
		return -ENAMETOOLONG;
	return 0;
}

int
ceems_energy_open_file(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);

	return fd < 0 ? -errno : fd;
}

CEEMS_TICK_PATH void
ceems_energy_reader_set_state(struct ceems_energy_reader *r,
			      const struct ceems_energy_counter *c,
			      enum ceems_energy_gap state, const char *why)
{
	if (state == r->state)
		return;
	if (state == CEEMS_GAP_NONE)
		ceems_info("energy counter %s (%s): measuring again", c->name,
			   ceems_job_figures_energy_domain_name(c->domain));
	else
		ceems_warning("energy counter %s (%s): %s%s%s; the interval "
			      "is a gap, no energy counted", c->name,
			      ceems_job_figures_energy_domain_name(c->domain),
			      ceems_energy_gap_name(state),
			      why != NULL ? ": " : "", why != NULL ? why : "");
	r->state = state;
}

void
ceems_energy_reader_power(struct ceems_energy_reader *r,
			  struct ceems_energy_counter *c, double *prev_w,
			  double w, uint64_t now_ns, uint64_t max_gap_ns)
{
	uint64_t elapsed_ns;
	char why[96];

	if (!r->have_prev) {
		ceems_energy_counter_gap(c, r->rebase_gap);
		ceems_energy_reader_set_state(r, c, CEEMS_GAP_NONE, NULL);
	} else {
		elapsed_ns = now_ns > r->last_ns ? now_ns - r->last_ns : 0;
		if (elapsed_ns > max_gap_ns) {
			snprintf(why, sizeof(why), "%.3f s between power "
				 "samples, more than the %.3f s allowed",
				 (double)elapsed_ns / 1e9,
				 (double)max_gap_ns / 1e9);
			ceems_energy_counter_gap(c, CEEMS_GAP_STALL);
			ceems_energy_reader_set_state(r, c, CEEMS_GAP_STALL,
						      why);
		} else {
			ceems_energy_counter_add(c, (*prev_w + w) / 2.0 *
						 (double)elapsed_ns / 1e9);
			ceems_energy_reader_set_state(r, c, CEEMS_GAP_NONE,
						      NULL);
		}
	}
	*prev_w = w;
	r->last_ns = now_ns;
	r->have_prev = true;
	r->rebase_gap = CEEMS_GAP_READ_ERROR;
}

void
ceems_energy_reader_fail(struct ceems_energy_reader *r,
			 struct ceems_energy_counter *c, int err,
			 enum ceems_energy_gap rebase)
{
	char why[128];

	if (err == -EINVAL)
		snprintf(why, sizeof(why), "not a counter value");
	else if (err == -ERANGE)
		snprintf(why, sizeof(why), "value out of range");
	else
		snprintf(why, sizeof(why), "%s", strerror(-err));
	ceems_energy_counter_gap(c, CEEMS_GAP_READ_ERROR);
	ceems_energy_reader_set_state(r, c, CEEMS_GAP_READ_ERROR, why);
	r->have_prev = false;
	/* Once a reset is known, a later plain read error must not hide it. */
	if (r->rebase_gap != CEEMS_GAP_RESET)
		r->rebase_gap = rebase;
}

CEEMS_TICK_PATH void
ceems_energy_reader_update(struct ceems_energy_reader *r,
			   struct ceems_energy_counter *c, uint64_t cur,
			   uint64_t now_ns)
{
	enum ceems_energy_gap gap;
	uint64_t elapsed_ns;
	char why[128];
	double j;

	if (!r->have_prev) {
		ceems_energy_counter_gap(c, r->rebase_gap);
		ceems_energy_reader_set_state(r, c, CEEMS_GAP_NONE, NULL);
		goto rebase;
	}
	/* The monotonic clock does not go back; if a caller's does, call
	 * it no time at all rather than an enormous one. */
	elapsed_ns = now_ns > r->last_ns ? now_ns - r->last_ns : 0;
	gap = ceems_energy_counter_delta(&r->lim, r->prev, cur, elapsed_ns,
					 &j);
	if (gap == CEEMS_GAP_NONE) {
		ceems_energy_counter_add(c, j);
		ceems_energy_reader_set_state(r, c, CEEMS_GAP_NONE, NULL);
		goto rebase;
	}
	ceems_energy_counter_gap(c, gap);
	if (gap == CEEMS_GAP_STALL)
		snprintf(why, sizeof(why), "%.3f s between samples, more than "
			 "the %.3f s in which the counter can wrap once",
			 (double)elapsed_ns / 1e9,
			 (double)ceems_energy_wrap_period_ns(&r->lim) / 1e9);
	else
		snprintf(why, sizeof(why), "%" PRIu64 " then %" PRIu64
			 " in %.3f s", r->prev, cur, (double)elapsed_ns / 1e9);
	ceems_energy_reader_set_state(r, c, gap, why);
	if (gap == CEEMS_GAP_READ_ERROR) {
		r->have_prev = false;
		r->rebase_gap = CEEMS_GAP_READ_ERROR;
		return;
	}
rebase:
	r->prev = cur;
	r->last_ns = now_ns;
	r->have_prev = true;
	r->rebase_gap = CEEMS_GAP_READ_ERROR;
}
