/* summary_internal.h - what the parts of the end-of-job summary share
 * (summary.c, summary_figures.c, summary_notes.c, summary_units.c): the
 * computed figures and the helpers that cross those files.  Private to
 * libceems: not installed, and no name here is exported (the shared
 * library exports only ceems_*). */
#ifndef CEEMS_SUMMARY_INTERNAL_H
#define CEEMS_SUMMARY_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/emissions.h"
#include "summary/summary.h"
#include "summary/units.h"

/* A device busier than this on average was used. */
#define GPU_IDLE_PCT 1.0

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

/* No real job reaches these; a larger value is garbage in a report and
 * is treated as not measured rather than printed. */
#define MAX_PLAUSIBLE 1e15
#define MAX_BYTES (1ULL << 52)	/* 4 PiB */
#define MAX_CORES 1e6

struct figures {
	/* Identity, cleaned. */
	char jobid[32];
	char user[40];
	char account[40];
	char state[40];		/* "" unknown */
	char exit[40];		/* "exit 3", "signal 9"; "" for none */
	char nodes[72];		/* hostlist, cut */
	char node[40];		/* this node */
	uint32_t nnodes;
	bool have_report;
	/* COMPLETED, TIMEOUT, RUNNING or unknown: the run shows how the
	 * job behaves; other ends (FAILED, CANCELLED...) may not. */
	bool full_run;

	bool have_elapsed;	/* Slurm's elapsed time, else the agent's */
	double elapsed_s;
	bool have_observed;	/* time the agent accounted: elapsed - gaps */
	double observed_s;
	bool have_limit;
	double limit_s;

	bool have_held;
	unsigned int held;	/* cores held on this node */
	bool have_cpu;
	double used_cores;	/* CPU time / observed time */
	/* The cores it used over its last tail_s seconds (the report's
	 * tail): whether it was still working when it ended. */
	bool have_tail;
	double tail_s;
	double tail_cores;

	bool have_req;
	uint64_t req;		/* memory allocation on this node */
	bool have_peak;
	uint64_t peak;
	bool peak_sampled;
	bool oom;
	bool have_oom_kills;
	uint64_t oom_kills;
	bool hit_limit;

	bool measured[CEEMS_DOMAIN_COUNT];
	double joules[CEEMS_DOMAIN_COUNT];
	double static_j[CEEMS_DOMAIN_COUNT];
	bool any_energy;
	double total_j;
	bool partial;		/* some measured domain below full coverage */
	double cov_min, cov_max;
	/* Some of it split while the node's idle power was unlearned. */
	bool idle_unlearned;
	/* The bound of total_j, J (lib/model/energy_err.h): every domain
	 * in it has one. */
	bool have_err;
	double err_j;

	bool have_carbon;
	double grams;
	struct ceems_emission_factor factor;
	char zone[12];
	bool factor_changed;
	/* Percent of the energy priced at the yearly figure where the
	 * node's intensity series had no value (0: none, or no series). */
	int factor_fallback_pct;
	bool carbon_partial;	/* fewer ticks had a factor than energy */
	double carbon_cov;

	unsigned int gpus_held;
	/* The GPUs of the report (ngpus 0: no GPU figures), and what
	 * summary_figures.c made of them; each figure with its have_. */
	unsigned int ngpus;
	const struct ceems_agent_gpu_report *gpus;
	unsigned int gpu_nmig;		/* MIG instances / partitions */
	unsigned int gpu_nbusy;		/* devices whose utilisation is known */
	double gpu_busy_pct;		/* their mean, weighted by share */
	unsigned int gpu_nidle;		/* of those, busy under 1% */
	char gpu_idle_list[96];		/* "GPU 3b:00.0, GPU af:00.0 MIG 3" */
	bool have_gpu_idle_j;		/* every idle device's energy known */
	double gpu_idle_j;
	bool have_gpu_sm;
	unsigned int gpu_nsm;		/* devices whose SM activity is known */
	double gpu_sm_pct;		/* their SM activity, weighted by share */
	bool have_gpu_mem;		/* every device's peak known */
	uint64_t gpu_mem_peak;		/* summed over the devices */
	uint64_t gpu_mem_total;		/* summed, 0: not known for all */
	bool have_gpu_j;		/* every device's energy known */
	double gpu_j;
	bool gpu_power_integrated;	/* some energy is integrated power */

	/* perf counters (lib/sources/perf_job.h): page faults and the CPU time
	 * of
	 * the same count, when both were measured */
	bool have_faults;
	double page_faults;
	double task_clock_s;

	/* The whole job over its nodes (ceems_summary_format_nodes): the
	 * figures above are the merge of the nodes that answered, NODES
	 * every node of the job, NMEASURED of them with a report. */
	bool whole;
	const struct ceems_job_meta *meta;
	const struct ceems_summary_node *parts;
	unsigned int nparts;
	unsigned int nmeasured;
};

/* summary_units.c */
bool ceems_summary_units_usable(double x);
__attribute__((format(printf, 3, 4))) void
ceems_summary_units_appendf(char *buf, size_t size, const char *fmt, ...);
void ceems_summary_units_fmt_duration(char *buf, size_t size, double s);
void ceems_summary_units_fmt_bytes(char *buf, size_t size, uint64_t b);
int ceems_summary_units_pct(double fraction);
void ceems_summary_units_fmt_pct(char *buf, size_t size, double fraction);
void ceems_summary_units_fmt_cores(char *buf, size_t size, double cores);
int ceems_summary_units_pct_floor(double fraction);

/* summary_figures.c */
bool ceems_summary_figures_state_is(const struct figures *f, const char *state);
void ceems_summary_figures_compute(const struct ceems_job_meta *m,
			     const struct ceems_agent_job_report *r,
			     struct figures *f);
/* A device's utilisation, when it is known and sane. */
bool ceems_summary_figures_gpu_util(const struct ceems_agent_gpu_report *g, double *pct);

/* SRC cleaned for the summary (printable ASCII, cut to KEEP with
 * "..."), into DST of SIZE bytes. */
void ceems_summary_figures_clean(char *dst, size_t size, const char *src,
				 size_t keep);
/* The figures of one node of a whole job (F->whole): as
 * ceems_summary_figures_compute for that node's report alone. */
void ceems_summary_figures_node(const struct figures *f,
				const struct ceems_summary_node *node,
				struct figures *out);

/* summary_notes.c */
size_t ceems_summary_notes_build(const struct figures *f,
			   struct ceems_summary_note *notes, size_t max);

#endif /* CEEMS_SUMMARY_INTERNAL_H */
