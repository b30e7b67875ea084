/* agent_series.h - a job's optional time series (--ceems-series, or every
 * job with series_all = yes): the node agent folds each tick of the job
 * into buckets of series_interval seconds aligned on the Unix epoch, one
 * row per bucket:
 *
 *   t (bucket start, Unix s), interval_s (time the row covers), cpu_s
 *   (CPU time in it), mem_bytes (memory in use at its end), package_j,
 *   dram_j, gpu_j, node_j (energy charged to the job in it), gpu_util_pct
 *   (the job's GPU utilisation in it: per tick the mean over the GPUs it
 *   holds, then the mean over the row weighted by time), read_bytes,
 *   write_bytes (its read and write system calls on files, eBPF),
 *   net_in_bytes, net_out_bytes (its TCP and UDP sockets, eBPF),
 *   page_faults, ctx_switches (perf software events), ipc (instructions
 *   per cycle, perf hardware events: the row's instructions over its
 *   cycles)
 *
 * The figures are the differences of the job's own ledger and CPU time
 * from one tick to the next, so the rows of a series add up to the job's
 * totals (up to rounding).  Memory is bounded: at most max_rows rows; a
 * full series is coarsened (rows merged two by two into buckets of twice
 * the resolution, as ceems.downsample_job_samples does in SQL: sums, the
 * largest memory, GPU utilisation averaged by time), so a long job keeps
 * its whole span, never a truncated one.  A figure not measured in a row
 * is unknown (NaN here, null in JSON), never 0: GPU utilisation is
 * unknown in the rows of a job that holds no GPU, IO and network where
 * the node has no eBPF, perf figures where perf (its hardware events,
 * for ipc) did not count.  A row's GPU power is gpu_j / interval_s: no
 * column of its own.
 *
 * JSON form (the job record's "series" member and the agent's deregister
 * reply, doc/record-format.md):
 *   {"resolution_s": N, "columns": ["t","interval_s","cpu_s","mem_bytes",
 *    "package_j","dram_j","gpu_j","node_j","gpu_util_pct","read_bytes",
 *    "write_bytes","net_in_bytes","net_out_bytes","page_faults",
 *    "ctx_switches","ipc"],
 *    "rows": [[t, ...], ...]}
 * The reader also takes the older forms, the first 8 columns (before
 * gpu_util_pct) or the first 9 (before the IO, network and perf ones):
 * records written before them, still in spools; unknown there. */
#ifndef CEEMS_AGENT_SERIES_H
#define CEEMS_AGENT_SERIES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf.h"
#include "model/energy.h"
#include "model/ledger.h"

/* Rows an agent keeps per job: 34 hours at the default 30 s before the
 * first coarsening; 144 bytes each. */
#define CEEMS_SERIES_MAX_ROWS 4096
#define CEEMS_SERIES_NCOLUMNS 16
/* Columns of the forms before gpu_util_pct, and before the IO, network
 * and perf ones, still read. */
#define CEEMS_SERIES_NCOLUMNS_V1 8
#define CEEMS_SERIES_NCOLUMNS_V2 9
/* The domains with an idle power to learn: CEEMS_DOMAIN_PACKAGE and
 * CEEMS_DOMAIN_DRAM, the first two. */
#define CEEMS_SERIES_RESTATED 2

/* A job's cumulative IO, network and perf counts since its registration
 * (NaN: not measured), which the series turns into each row's. */
enum ceems_series_count {
	CEEMS_SC_READ_BYTES,
	CEEMS_SC_WRITE_BYTES,
	CEEMS_SC_NET_IN_BYTES,
	CEEMS_SC_NET_OUT_BYTES,
	CEEMS_SC_PAGE_FAULTS,
	CEEMS_SC_CTX_SWITCHES,
	CEEMS_SC_NROW,			/* those a row keeps as they are */
	CEEMS_SC_CYCLES = CEEMS_SC_NROW,	/* these make its ipc */
	CEEMS_SC_INSTRUCTIONS,
	CEEMS_SC_N,
};

struct ceems_series_counts {
	double v[CEEMS_SC_N];
};

/* All unknown. */
void ceems_agent_series_counts_unknown(struct ceems_series_counts *c);

struct ceems_series_row {
	int64_t t;			/* bucket start, Unix s */
	double interval_s;		/* time covered, s */
	double cpu_s;			/* NaN: unknown */
	double mem_bytes;		/* NaN: unknown */
	double joules[CEEMS_DOMAIN_COUNT];	/* NaN: not measured */
	double gpu_util_pct;		/* 0..100, NaN: unknown */
	/* The time gpu_util_pct is the mean of: its weight in a merge. */
	double gpu_util_s;
	double count[CEEMS_SC_NROW];	/* in the row; NaN: unknown */
	double ipc;			/* NaN: unknown */
	/* What ipc's mean is weighed by in a merge: the row's cycles (the
	 * row's time when read back from JSON). */
	double ipc_w;
	/* Package and DRAM joules per watt of an idle power learned later
	 * (model/ledger_restate.h): what the row gains when its ticks are
	 * restated.  Not in JSON: 0 once restated or for good. */
	float unlearned_w[CEEMS_SERIES_RESTATED];
};

struct ceems_series {
	uint32_t resolution_s;		/* bucket length, s */
	uint32_t max_rows;
	uint32_t nrows;
	uint32_t cap;			/* rows allocated */
	struct ceems_series_row *rows;

	/* Where the last observation left the job, for the next
	 * difference. */
	double unix_offset_s;		/* Unix time = now_ns / 1e9 + this */
	/* Monotonic, in ns: the rows' intervals are differences of it,
	 * exact, not of Unix seconds (whose doubles are 0.2 us apart). */
	uint64_t last_ns;
	double last_cpu_s;
	double last_joules[CEEMS_DOMAIN_COUNT];
	double last_covered_s[CEEMS_DOMAIN_COUNT];
	struct ceems_series_counts last_counts;	/* NaN: none yet */
	/* The job's ticks since the last observation, per watt of the idle
	 * power not learned (ceems_agent_series_unlearned): the next row's. */
	double pending_unlearned_w[CEEMS_SERIES_RESTATED];
};

/* The column names, in order. */
extern const char *const ceems_series_columns[CEEMS_SERIES_NCOLUMNS];

/* How two rows of one bucket merge, column by column (unknown is NaN
 * here, NULL in PostgreSQL): the bucket's start; the sum, unknown only
 * when both are; the greatest, likewise; the mean weighed by time (by
 * cycles for ipc), kept between the two.  The one statement of the
 * rules that the agent's coarsening (ceems_agent_series_coarsen) and the
 * database's downsampling (ceems.downsample_job_samples,
 * sql/functions/samples.sql) follow: test_agent_series holds both to
 * it. */
enum ceems_series_merge {
	CEEMS_SERIES_MERGE_BUCKET,
	CEEMS_SERIES_MERGE_SUM,
	CEEMS_SERIES_MERGE_MAX,
	CEEMS_SERIES_MERGE_MEAN,
};
extern const enum ceems_series_merge ceems_series_merges[CEEMS_SERIES_NCOLUMNS];

/* A new empty series.  NULL when out of memory or RESOLUTION_S or
 * MAX_ROWS is 0. */
struct ceems_series *ceems_agent_series_new(uint32_t resolution_s,
				      uint32_t max_rows);
void ceems_agent_series_free(struct ceems_series *s);
/* A deep copy, or NULL. */
struct ceems_series *ceems_agent_series_dup(const struct ceems_series *s);

/* Add DT_S seconds ending at Unix time END with these figures (NaN for
 * unknown ones; JOULES may be NULL: none measured; GPU_UTIL_PCT outside
 * 0..100 is unknown) to the bucket of the interval's middle.  A full
 * series is coarsened first.  0, or -EINVAL for a negative or non-finite
 * DT_S or END. */
int ceems_agent_series_add(struct ceems_series *s, double end, double dt_s,
		     double cpu_s, double mem_bytes,
		     const double joules[CEEMS_DOMAIN_COUNT],
		     double gpu_util_pct);

/* ceems_agent_series_add with the row's IO, network and perf counts DELTA
 * (the interval's, not cumulative; NULL: none measured). */
int ceems_agent_series_add_counts(struct ceems_series *s, double end, double dt_s,
			    double cpu_s, double mem_bytes,
			    const double joules[CEEMS_DOMAIN_COUNT],
			    double gpu_util_pct,
			    const struct ceems_series_counts *delta);

/* Merge rows two by two into buckets of twice the resolution. */
void ceems_agent_series_coarsen(struct ceems_series *s);

/* ---- The agent's use: differences of a job's ledger ---- */

/* The series of a job registered (or restored) at monotonic NOW_NS, the
 * current time (the rows' Unix times are reckoned from it), or
 * NULL when the job does not keep one (neither WANTED nor series_all) or
 * memory is short (logged).  The ledger and CPU time as they are now are
 * the baseline: only what comes after is in the series. */
struct ceems_series *ceems_agent_series_for_job(const struct ceems_config *c,
					  bool wanted, uint64_t now_ns,
					  const struct ceems_job_ledger *l,
					  double cpu_s);

/* Move the baseline's time back to monotonic SINCE_NS (before the
 * series was made), keeping its figures: a series turned on after the
 * job's registration (by a later step's) starts from that registration
 * with a zero ledger, so that its first row holds what was charged
 * since.  A SINCE_NS after the baseline is ignored. */
void ceems_agent_series_backdate(struct ceems_series *s, uint64_t since_ns);

/* A tick of the job split with the idle power of domain D not learned:
 * the joules per watt of it the tick would gain restated, for the row
 * the next observation goes to. */
void ceems_agent_series_unlearned(struct ceems_series *s, int d, double per_w);

/* Domain D's idle power learned, IDLE_W: every row restated with it, and
 * the baseline moved by GAINED_J (the job ledger's restatement), so
 * that the rows still add up to the ledger and the next row is its own
 * tick's. */
void ceems_agent_series_restate(struct ceems_series *s, int d, double idle_w,
				double gained_j);

/* A tick of the job at monotonic NOW_NS, after its ledger was updated:
 * the differences since the last observation go into the series.  CPU_S
 * is the job's CPU time so far (NaN: unknown), MEM_BYTES its memory in
 * use (NaN: unknown), GPU_UTIL_PCT the mean utilisation of its GPUs this
 * tick (NaN: none, or none read), taken for the whole interval since the
 * last observation.  S may be NULL (nothing done). */
void ceems_agent_series_observe(struct ceems_series *s, uint64_t now_ns,
			  const struct ceems_job_ledger *l, double cpu_s,
			  double mem_bytes, double gpu_util_pct);
/* The same with the job's cumulative counts NOW (NULL: none): each row
 * gets their difference from the last observation that had them (the
 * first, from the job's registration: they count from it). */
void ceems_agent_series_observe_counts(struct ceems_series *s, uint64_t now_ns,
				 const struct ceems_job_ledger *l, double cpu_s,
				 double mem_bytes, double gpu_util_pct,
				 const struct ceems_series_counts *now);
/* The job's cumulative counts NOW as read at its end, after its last
 * observation: what they gained since goes into the last row (no time
 * added), so that the rows add up to the job's final counts. */
void ceems_agent_series_last_counts(struct ceems_series *s,
			      const struct ceems_series_counts *now);
/* The counts the next row's differ from: a series made after a restart
 * starts from the counts restored, not from the job's registration. */
void ceems_agent_series_set_counts(struct ceems_series *s,
			     const struct ceems_series_counts *now);

/* ---- JSON ---- */

struct json_object;

/* A new JSON object (the form above), or NULL when out of memory. */
struct json_object *ceems_agent_series_to_json(const struct ceems_series *s);

/* Strict: exactly the three members, the columns in order (all 16, or
 * the first 9 or 8 of the older forms), at most CEEMS_SERIES_MAX_ROWS
 * rows of as many values, times increasing, no negative figure, GPU
 * utilisation at most 100.  0 with *OUT a new series, or -EINVAL with ERR (or -ENOMEM). */
int ceems_agent_series_from_json(const struct json_object *obj,
			   struct ceems_series **out, char *err,
			   size_t err_size);

/* Serialize OBJ into BUF (SIZE bytes, NUL included) with S added to it
 * as KEY (S may be NULL: OBJ as it is).  When the text does not fit, S
 * is coarsened (on a copy) until it does: a series never makes a
 * message or record fail.  OBJ stays the caller's.  Returns the length,
 * -ENOSPC when not even OBJ alone fits, or -ENOMEM. */
int ceems_agent_series_serialize_with(struct json_object *obj, const char *key,
				const struct ceems_series *s, char *buf,
				size_t size);

#endif
