/* carbon_advice.h - carbon-aware advice: what a finished job would have
 * emitted had it started at the greenest time within a window the site
 * sets, by the intensities the node's series recorded for those hours.
 * Where the series does not cover a time, no advice is made up for it:
 * the yearly figure is no time-varying intensity, and a start whose
 * hours the series lacks is no candidate.  The rules, and when a note
 * must not fire, are in doc/attribution.md ("Carbon-aware advice").
 *
 * Pure and allocation-free. */
#ifndef CEEMS_CARBON_ADVICE_H
#define CEEMS_CARBON_ADVICE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/intensity.h"

/* What the site sets. */
struct ceems_advice_opts {
	int64_t window_s;	/* latest start considered: start + this */
	double min_saving_g;	/* a note needs at least this saving... */
	double min_saving_frac;	/* ...and this part of the emissions... */
	double min_duration_s;	/* ...from a job at least this long */
};

/* The finished job, as its record says. */
struct ceems_advice_job {
	int64_t start;		/* Unix seconds */
	double duration_s;
	double energy_j;	/* IT energy, all domains */
	double pue;		/* >= 1 */
	/* It waits on another job, or another on it (a dependency): its
	 * start is not its own to move. */
	bool in_chain;
};

/* Why no note fires (CEEMS_ADVICE_WORTH: one does). */
enum ceems_advice_verdict {
	CEEMS_ADVICE_WORTH = 0,
	CEEMS_ADVICE_NO_SERIES,		/* the series does not cover its time */
	CEEMS_ADVICE_BAD_JOB,		/* no energy, no duration, bad values */
	CEEMS_ADVICE_SHORT,		/* under min_duration_s */
	CEEMS_ADVICE_CHAIN,		/* in a dependency chain */
	CEEMS_ADVICE_SMALL,		/* the saving is under a threshold */
};

struct ceems_advice {
	enum ceems_advice_verdict verdict;
	/* With a series over its time (verdict not NO_SERIES or BAD_JOB): */
	double actual_g;	/* at its own start, at its mean power */
	int64_t best_start;	/* the greenest start in the window */
	double best_g;
	double saving_g;	/* actual - best, >= 0 */
	double saving_frac;	/* saving / actual */
};

/* Advise job J by the series S under the site's options O.  Returns 0
 * with OUT filled, or -EINVAL for a NULL argument. */
int ceems_carbon_advice(const struct ceems_intensity_series *s,
			const struct ceems_advice_job *j,
			const struct ceems_advice_opts *o,
			struct ceems_advice *out);

const char *ceems_advice_verdict_name(enum ceems_advice_verdict v);

/* ---- A job's advice from its report (carbon_advice.c), its JSON and
 * what the job side does with it (advice.c) ---- */

struct ceems_agent_job_report;
struct json_object;

/* Whether A says anything: the series covered the job's time, and the
 * job had energy.  Else it is unknown, never a saving of 0. */
bool ceems_advice_known(const struct ceems_advice *a);

/* OUT as "no advice" (no series). */
void ceems_advice_none(struct ceems_advice *out);

/* Advise the job of report R, started at Unix time START (Slurm's), by
 * S under O: its energy over all domains at the PUE of its Carbon line
 * over its elapsed time; IN_CHAIN: it is in a dependency chain.  A job
 * without emissions (no zone, no energy) has none.  0, or -EINVAL for
 * a NULL argument. */
int ceems_carbon_advice_of_report(const struct ceems_intensity_series *s,
				  const struct ceems_agent_job_report *r,
				  int64_t start, bool in_chain,
				  const struct ceems_advice_opts *o,
				  struct ceems_advice *out);

/* What the agent advised without knowing the job's dependency, once it
 * is known to be in a chain: no note (the verdict says so). */
void ceems_advice_in_chain(struct ceems_advice *a);

/* A known advice as {"verdict":s, "actual_g":x, "best_start":N,
 * "best_g":x}, or NULL on allocation failure; and back, strictly (the
 * saving derived): 0, or -EINVAL with ERR. */
struct json_object *ceems_advice_to_json(const struct ceems_advice *a);
int ceems_advice_from_json(const struct json_object *obj,
				  struct ceems_advice *out, char *err,
				  size_t err_size);

#endif
