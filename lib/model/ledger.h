/* ledger.h - the per-tick energy ledger: split each energy domain's node
 * delta into every running job's share, a `system` share (busy time
 * outside any job) and an `idle` share (resources nobody holds), so that
 * the shares add up to the delta (design invariant 2), and add each
 * job's shares into its own running account.  The model and its formulas
 * are in doc/attribution.md.
 *
 * ceems_ledger_split() is pure and allocates nothing: the agent calls it
 * once per tick with arrays it owns, so the steady-state tick path stays
 * free of malloc. */
#ifndef CEEMS_LEDGER_H
#define CEEMS_LEDGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/emissions.h"
#include "model/energy.h"

/* GPU devices per node the ledger knows of (device index 0..N-1, as the
 * agent numbers them; MIG or shared slices are fractions of a device). */
#define CEEMS_LEDGER_MAX_GPUS 16

/* One domain's (or one GPU device's) energy over the tick. */
struct ceems_ledger_reading {
	bool measured;		/* the node has a source for it at all */
	enum ceems_energy_gap gap;	/* NONE: joules is a measurement */
	double joules;		/* >= 0, meaningful only when gap is NONE */
};

/* What the node measured over one tick. */
struct ceems_ledger_node_tick {
	double dt_s;			/* tick length, > 0 */

	struct ceems_ledger_reading package;	/* sum of all sockets */
	struct ceems_ledger_reading dram;	/* sum of all sockets */
	struct ceems_ledger_reading node;	/* whole-node source (BMC...) */
	size_t ngpus;				/* <= CEEMS_LEDGER_MAX_GPUS */
	struct ceems_ledger_reading gpu[CEEMS_LEDGER_MAX_GPUS];

	unsigned int node_cores;	/* logical CPUs of the node */
	double node_busy_cpu_s;		/* non-idle CPU time, all CPUs */
	uint64_t node_mem_used_bytes;	/* MemTotal - MemAvailable */
	uint64_t node_mem_total_bytes;

	/* Static (idle) power of the node, configured or learned, W;
	 * used for CEEMS_DOMAIN_PACKAGE and CEEMS_DOMAIN_DRAM only. */
	double idle_power_w[CEEMS_DOMAIN_COUNT];
	/* The idle power is to be learned and is not yet: idle_power_w is
	 * then 0, and the jobs' data quality says so. */
	bool idle_power_unlearned[CEEMS_DOMAIN_COUNT];

	/* What jobs that left during this tick held, as a level over the
	 * whole tick (cores x the part of the tick they held them...):
	 * their part was split when they left (ledger_carry.h), so it is
	 * taken out of the node's figures and the others' shares come out
	 * as if the leavers had been split with them.  0 when none left. */
	double left_cores;
	double left_mem_bytes;
	double left_gpu[CEEMS_LEDGER_MAX_GPUS];
	/* With the idle power not learned: the leavers' held and used
	 * seconds per watt of it (ledger_carry.h), which a known idle
	 * power's static part, and the active part net of what they took,
	 * would have been without. */
	double left_unlearned_held_s[CEEMS_DOMAIN_COUNT];
	double left_unlearned_used_s[CEEMS_DOMAIN_COUNT];
};

/* What one running job used over the same tick. */
struct ceems_ledger_job_tick {
	double cpu_s;			/* user + system CPU time in the tick */
	unsigned int alloc_cores;	/* CPUs in its cpuset */
	uint64_t rss_bytes;		/* anonymous memory, no page cache */
	uint64_t alloc_mem_bytes;	/* its memory allocation (limit) */
	/* Fraction of each GPU device the job owns: 1 for a whole device,
	 * the slice for MIG or shared devices, 0 for none. */
	double gpu_share[CEEMS_LEDGER_MAX_GPUS];
	/* Seconds of the tick the job was not there (it registered during
	 * it, or left before its end): what it holds (cores, memory,
	 * GPUs, RSS) counts for the rest of the tick only.  0: all of it. */
	double absent_s;
};

/* One job's part of one tick. */
struct ceems_ledger_job_share {
	double joules[CEEMS_DOMAIN_COUNT];
	/* Of joules, the static part (held but unused resources); package
	 * and dram only. */
	double static_j[CEEMS_DOMAIN_COUNT];
	double gpu_device_j[CEEMS_LEDGER_MAX_GPUS];	/* GPU, per device */
	/* The domain was measured for this job this tick (for GPU: every
	 * device it owns); false for a gap or a domain the node lacks. */
	bool covered[CEEMS_DOMAIN_COUNT];
	bool measured[CEEMS_DOMAIN_COUNT];	/* the node has the domain */
	/* Covered, with a static part from an idle power not learned yet. */
	bool idle_unlearned[CEEMS_DOMAIN_COUNT];
	/* With idle_unlearned: per watt of the idle power, the static
	 * joules the share would have had (the tick's length x the job's
	 * part of what is held) and the active joules it would have had
	 * fewer (x its part of the use).  The split is linear in the idle
	 * power, so that one learned later can restate the tick
	 * (ledger_restate.h). */
	double unlearned_held_s[CEEMS_DOMAIN_COUNT];
	double unlearned_used_s[CEEMS_DOMAIN_COUNT];
	/* Covered: the job's part of what is held (h_j) and of the use
	 * (u_j) this tick, the weights of the split over their
	 * denominators (node: its cores' part, both; gpu: per device).  A
	 * change dE of the domain's delta moves its share by u_j dE, and
	 * one dP of the idle power by dt (h_j - u_j): how errors of the
	 * node's figures reach the job's (energy_err.h). */
	double held_part[CEEMS_DOMAIN_COUNT];
	double used_part[CEEMS_DOMAIN_COUNT];
	double gpu_part[CEEMS_LEDGER_MAX_GPUS];
};

/* The node-wide side of one tick.  For every domain,
 * sum(job joules) + system_j + idle_j == delta_j up to rounding. */
struct ceems_ledger_tick {
	bool measured[CEEMS_DOMAIN_COUNT];
	/* NONE when the whole domain was measured; else the first gap
	 * (for GPU, a device's; for NODE, also an inner domain's gap,
	 * since the residual needs them all). */
	enum ceems_energy_gap gap[CEEMS_DOMAIN_COUNT];
	/* The energy split this tick: 0 for a gap; for GPU the sum of the
	 * devices without a gap; for NODE the residual attributed,
	 * max(0, node - package - dram - gpu). */
	double delta_j[CEEMS_DOMAIN_COUNT];
	double system_j[CEEMS_DOMAIN_COUNT];
	double idle_j[CEEMS_DOMAIN_COUNT];
	double gpu_device_j[CEEMS_LEDGER_MAX_GPUS];	/* split, per device */
	/* The node source's own delta (0 if not measured or a gap). */
	double node_source_j;
	/* A negative residual, made positive: energy the domains measured
	 * beyond the node source, clamped away and attributed to no one. */
	double residual_clamped_j;
	/* With the idle power not learned: per watt of it, the static
	 * joules that would have been idle's (what no job held). */
	double unlearned_idle_s[CEEMS_DOMAIN_COUNT];
	/* Set by the agent, not the split: the joules a restatement of
	 * earlier ticks moved this tick (ledger_restate.h) to idle and to
	 * the system, balancing what the jobs' accounts gained.  Not in
	 * delta_j, which is this tick's energy. */
	double restated_idle_j[CEEMS_DOMAIN_COUNT];
	double restated_system_j[CEEMS_DOMAIN_COUNT];
};

/* Split NODE's tick among NJOBS jobs (JOBS[i] -> SHARES[i], both caller
 * arrays of NJOBS entries) and fill TICK.  Bad values in an input (NaN,
 * negative) are treated as 0, or as a gap for an energy reading, so no
 * output is negative.  Returns 0, or -EINVAL when the call itself is
 * malformed (NULL pointers, dt_s not > 0, ngpus too large); outputs are
 * then zeroed where they can be. */
int ceems_ledger_split(const struct ceems_ledger_node_tick *node,
		       const struct ceems_ledger_job_tick *jobs, size_t njobs,
		       struct ceems_ledger_job_share *shares,
		       struct ceems_ledger_tick *tick);

/* A job's running account, kept by the agent for the job's life. */
struct ceems_job_ledger {
	double joules[CEEMS_DOMAIN_COUNT];
	double static_j[CEEMS_DOMAIN_COUNT];
	double covered_s[CEEMS_DOMAIN_COUNT];	/* time the domain covered */
	bool measured[CEEMS_DOMAIN_COUNT];	/* the node ever had it */
	/* Data quality: some tick split the domain with an idle power not
	 * learned yet (all of it by use).  In the padding before
	 * lifetime_s: the size, and so the state file's layout, is the
	 * same. */
	bool idle_unlearned[CEEMS_DOMAIN_COUNT];
	double lifetime_s;			/* ticks and gaps alike */

	/* Emissions: only ticks with a factor add to them. */
	bool have_emissions;
	/* A tick's factor came from a node with an intensity series: then
	 * factor_fallback is the part of the energy (0 to 1) charged at the
	 * yearly figure because the series did not cover its time.  In the
	 * padding before emissions_g (a float is ample for a fraction):
	 * the state file's layout is the same. */
	bool factor_timed;
	float factor_fallback;
	double emissions_g;
	/* Time that had a factor and the energy of every domain the node
	 * measures: never more than any measured domain's covered_s. */
	double emissions_covered_s;
	/* The factor used: the first one while every tick had the same;
	 * once a tick had another (factor_changed), g_per_kwh is the
	 * energy-weighted mean of the ticks' intensities (emissions /
	 * (energy x PUE)), and the source is the series' when any tick
	 * used it. */
	struct ceems_emission_factor factor;
	bool factor_changed;	/* a later tick used another factor */
};

void ceems_job_figures_ledger_init(struct ceems_job_ledger *l);

/* Add one tick of DT_S seconds: SHARE's energy and coverage, and, when
 * FACTOR is not NULL, emissions = energy x PUE x intensity at that time.
 * Returns 0, or -EINVAL (nothing added) for a bad DT_S or share. */
int ceems_ledger_add_tick(struct ceems_job_ledger *l,
			      const struct ceems_ledger_job_share *share,
			      double dt_s,
			      const struct ceems_emission_factor *factor);

/* The same, on a node with an intensity series (TIMED): a FACTOR whose
 * source is not the series' ("series:...") is the yearly figure standing
 * in where the series has no value, and its energy counts in
 * factor_fallback. */
int ceems_ledger_add_tick_timed(struct ceems_job_ledger *l,
				    const struct ceems_ledger_job_share *share,
				    double dt_s,
				    const struct ceems_emission_factor *factor,
				    bool timed);

/* Add DT_S seconds of the job's life that no tick covered (the agent was
 * down, or registration came late): lowers every domain's coverage. */
int ceems_ledger_add_gap(struct ceems_job_ledger *l, double dt_s);

/* The job's data quality for domain D: covered time / lifetime, in
 * [0, 1].  False (FRACTION untouched) when it is unknown: no lifetime
 * yet, or the node never measured the domain. */
bool ceems_job_figures_ledger_coverage(const struct ceems_job_ledger *l,
			       enum ceems_energy_domain d, double *fraction);

/* Whether the job has an energy figure at all: a domain measured over
 * some covered time.  Emissions are energy x factor, so without one they
 * are unknown (absent), not 0 g, whatever the factor. */
bool ceems_job_figures_ledger_energy_known(const struct ceems_job_ledger *l);

/* Sum of the job's energy over all domains, J.  The NODE domain holds the
 * residual only, so nothing is counted twice. */
double ceems_job_figures_ledger_total_j(const struct ceems_job_ledger *l);

#endif
