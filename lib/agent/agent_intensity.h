/* agent_intensity.h - the agent's factor for each tick: the node's
 * carbon-intensity series (intensity_file, lib/model/intensity.h) where it
 * covers the tick's time, else the zone's yearly figure. */
#ifndef CEEMS_AGENT_INTENSITY_H
#define CEEMS_AGENT_INTENSITY_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "model/emissions.h"
#include "model/intensity.h"

/* The file is looked at (stat) at most this often. */
#define AGENT_INTENSITY_CHECK_NS 60000000000ULL

struct agent_intensity {
	struct ceems_intensity_series series;	/* empty until one loads */
	bool checked;			/* checked_ns is set */
	uint64_t checked_ns;
	/* The file last looked at, loaded or refused: a file is read
	 * again only when one of these changes. */
	bool seen;
	struct timespec mtime;
	off_t size;
	ino_t ino;
	bool missing_logged;
	/* Wall clock of a tick = its monotonic time + this; taken from
	 * the clocks at each check unless fixed (tests). */
	int64_t wall_offset_ns;
	bool wall_fixed;
	struct ceems_emission_factor tick;	/* the last one handed out */
};

struct ceems_agent;

/* The factor of the tick that ends at monotonic NOW_NS (NULL when the
 * node has no emission zone).  Re-reads the file when due. */
const struct ceems_emission_factor *
ceems_agent_intensity_tick_factor(struct ceems_agent *a, uint64_t now_ns);

/* Add the tick that ends at NOW_NS to L under that tick's factor (see
 * ceems_ledger_add_tick_timed). */
struct ceems_job_ledger;
struct ceems_ledger_job_share;
int ceems_agent_intensity_charge_tick(struct ceems_agent *a, struct ceems_job_ledger *l,
		      const struct ceems_ledger_job_share *share, double dt_s,
		      uint64_t now_ns);

/* Load the file for the first time (at open); a missing or bad file is
 * logged and the yearly figure applies until a good one appears. */
void ceems_agent_intensity_open(struct ceems_agent *a, uint64_t now_ns);
void ceems_agent_intensity_close(struct ceems_agent *a);

#endif
