/* energy_err.h - how sure a job's energy is: an error bound in joules
 * for each energy domain of a job, from what is known of the node's
 * figures each tick (the sources' resolution, a power reading's lag,
 * power integrated where a device has no counter, the idle power's own
 * uncertainty, ticks no measurement covered).  The model, and what it
 * does not cover, is in doc/attribution.md ("How sure a figure is").
 *
 * Pure and allocation-free, like the ledger: the agent keeps one
 * account per job and one node view, and adds each tick's figures after
 * the split. */
#ifndef CEEMS_ENERGY_ERR_H
#define CEEMS_ENERGY_ERR_H

#include <stdbool.h>
#include <stddef.h>

#include "model/energy.h"
#include "model/ledger.h"

/* What one tick's node figures may be off by, per domain (gpu: per
 * device), as a bound at about 95%: never negative. */
struct ceems_energy_err_node_tick {
	/* The node's delta, from its source: a counter's resolution, a
	 * power reading's resolution (ceems_energy_err_power). */
	double source_j[CEEMS_DOMAIN_COUNT];
	double gpu_source_j[CEEMS_LEDGER_MAX_GPUS];
	/* Signed: what a power reading's lag moved out of the tick (its
	 * lag times the change of power), which the next ticks get back:
	 * over a job it adds up to its edges and its own changes. */
	double lag_j[CEEMS_DOMAIN_COUNT];
	double gpu_lag_j[CEEMS_LEDGER_MAX_GPUS];
	/* The idle power used (package, dram): 0 when configured, the
	 * learned value's uncertainty when learned.  A tick split before
	 * the idle power was learned (the share's idle_unlearned) takes the
	 * domain's largest power instead: the idle power is somewhere
	 * between 0, which the split used, and that. */
	double idle_w[CEEMS_DOMAIN_COUNT];
};

/* What the node view keeps across ticks: the largest power each domain
 * (gpu: each device) has shown, which bounds what a tick without a
 * measurement could have held. */
struct ceems_energy_err_node {
	double max_w[CEEMS_DOMAIN_COUNT];
	double gpu_max_w[CEEMS_LEDGER_MAX_GPUS];
};

/* Where a job's error comes from, for explaining it. */
enum ceems_energy_err_part {
	CEEMS_ERR_SOURCE = 0,	/* the sources' resolution */
	CEEMS_ERR_LAG,		/* a power reading's lag */
	CEEMS_ERR_IDLE,		/* the idle power, through the static split */
	CEEMS_ERR_GAPS,		/* time no measurement covered */
	CEEMS_ERR_PARTS,
};

const char *ceems_energy_err_part_name(enum ceems_energy_err_part p);

/* A job's account of its error. */
struct ceems_energy_err_account {
	/* False: some of the job's time is not in the account (a job an
	 * agent restart restored), so its error is unknown. */
	bool known;
	bool measured[CEEMS_DOMAIN_COUNT];	/* the node had the domain */
	double source_j[CEEMS_DOMAIN_COUNT];
	/* Signed, as the ticks' lag_j. */
	double lag_signed_j[CEEMS_DOMAIN_COUNT];
	double gpu_lag_signed_j[CEEMS_LEDGER_MAX_GPUS];
	/* Signed: the idle power's error is the same every tick (it is
	 * one value), so the job's static and active parts move against
	 * each other and a job using all it holds has none of it. */
	double idle_signed_j[CEEMS_DOMAIN_COUNT];
	double gaps_j[CEEMS_DOMAIN_COUNT];
	/* A gap came before the node had shown the domain's power: what it
	 * could have held is unknown, and so is the domain's error. */
	bool unbounded[CEEMS_DOMAIN_COUNT];
	/* The largest part of a domain (held or used; gpu: of a device)
	 * the job has had: a tick without a measurement is bounded by it
	 * times the domain's largest power. */
	double max_part[CEEMS_DOMAIN_COUNT];
	double gpu_max_part[CEEMS_LEDGER_MAX_GPUS];
	/* The domain was covered for the job once: before, its part is
	 * not known, and a gap is bounded by the node's whole power. */
	bool parts_seen[CEEMS_DOMAIN_COUNT];
};

/* A job's bound as its report carries it (the protocol, the record):
 * each domain's parts, J.  Unknown is not zero: known false, or a
 * domain without have, is no bound at all. */
struct ceems_energy_err_report {
	bool known;
	bool have[CEEMS_DOMAIN_COUNT];
	double part_j[CEEMS_DOMAIN_COUNT][CEEMS_ERR_PARTS];
};

/* A's bound into R. */
void ceems_energy_err_report_fill(const struct ceems_energy_err_account *a,
				  struct ceems_energy_err_report *r);

/* Domain D's bound, the sum of its parts; false when unknown. */
bool ceems_energy_err_report_domain(const struct ceems_energy_err_report *r,
				    enum ceems_energy_domain d, double *j);

/* The total's, the domains' added; false when none is known. */
bool ceems_energy_err_report_total(const struct ceems_energy_err_report *r,
				   double *j);

void ceems_energy_err_account_init(struct ceems_energy_err_account *a);
void ceems_energy_err_node_init(struct ceems_energy_err_node *n);

/* The node's tick NODE (split into TICK, of DT_S seconds): note each
 * domain's power, for bounding later gaps. */
void ceems_energy_err_node_observe(struct ceems_energy_err_node *n,
				   const struct ceems_ledger_tick *tick,
				   double dt_s);

/* A power-reading source's errors for one tick of DT_S seconds: into
 * *SOURCE_J a reading resolution of RES_W over the tick, into *LAG_J
 * (signed) a lag of LAG_S (the reading's averaging window, its age)
 * times the change of the tick's mean power from the previous tick's
 * (W_NOW, W_PREV). */
void ceems_energy_err_power(double res_w, double lag_s, double dt_s,
			    double w_now, double w_prev, double *source_j,
			    double *lag_j);

/* Add one tick of DT_S seconds: the job's SHARE of it, the node's
 * errors ERR, and the node view N (for what a gap could have held). */
void ceems_energy_err_add_tick(struct ceems_energy_err_account *a,
			       const struct ceems_energy_err_node *n,
			       const struct ceems_energy_err_node_tick *err,
			       const struct ceems_ledger_job_share *share,
			       size_t ngpus, double dt_s);

/* DT_S seconds of the job's life no tick covered (the agent was down,
 * registration came late): bounded by the job's largest parts of the
 * node's largest powers. */
void ceems_energy_err_add_gap(struct ceems_energy_err_account *a,
			      const struct ceems_energy_err_node *n,
			      size_t ngpus, double dt_s);

/* The bound of domain D's figure, J (PART: one contribution, or
 * CEEMS_ERR_PARTS for their sum).  False (*J untouched) when unknown. */
bool ceems_energy_err_domain(const struct ceems_energy_err_account *a,
			     enum ceems_energy_domain d,
			     enum ceems_energy_err_part part, double *j);

/* The bound of the job's total: the domains' bounds added (their
 * errors may have one cause, a BMC's lag and the package's, so they are
 * not taken as independent). */
bool ceems_energy_err_total(const struct ceems_energy_err_account *a,
			    double *j);

#endif
