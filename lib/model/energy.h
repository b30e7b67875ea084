/* energy.h - the one interface every node energy source implements
 * (RAPL, hwmon, HPE Cray pm_counters; later IPMI and GPUs).  A source
 * owns counters; each counter belongs to one energy domain.  The agent
 * samples a source as often as its counters need (fast enough that a
 * counter cannot wrap twice between samples) and takes the accumulated
 * energy once per main tick.  An interval whose energy is unknowable (a
 * stall longer than the wrap period, a reset, a read error) is a gap:
 * reported as such, never guessed (design invariant 2). */
#ifndef CEEMS_ENERGY_H
#define CEEMS_ENERGY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum ceems_energy_domain {
	CEEMS_DOMAIN_PACKAGE = 0,	/* CPU sockets (RAPL package, pm cpu) */
	CEEMS_DOMAIN_DRAM,		/* memory (RAPL dram, pm memory) */
	CEEMS_DOMAIN_GPU,		/* accelerators, per device */
	CEEMS_DOMAIN_NODE,		/* whole node (BMC, pm node, psys) */
	CEEMS_DOMAIN_COUNT,
};

const char *ceems_job_figures_energy_domain_name(enum ceems_energy_domain d);

/* Why a counter's energy since the last take is not a measurement. */
enum ceems_energy_gap {
	CEEMS_GAP_NONE = 0,
	CEEMS_GAP_FIRST_READ,	/* no earlier reading to subtract */
	CEEMS_GAP_STALL,	/* more than one wrap may have happened */
	CEEMS_GAP_RESET,	/* the counter restarted (driver reload) */
	CEEMS_GAP_READ_ERROR,	/* missing, unreadable or garbage file */
};

const char *ceems_energy_gap_name(enum ceems_energy_gap g);

struct ceems_energy_counter {
	enum ceems_energy_domain domain;
	int device;		/* package, socket or GPU index; -1 if none */
	char name[64];		/* e.g. "intel-rapl:0", "hwmon3/power1" */

	/* What the source says of its error (lib/model/energy_err.h): an
	 * energy counter's resolution, J; a power reading's resolution, W,
	 * and lag, s (its averaging window and its age).  0: none known. */
	double resolution_j;
	double power_res_w;
	double power_lag_s;
	/* Kept by the agent between takes: the mean power of the last
	 * one, whose change a lag turns into error. */
	bool err_have_prev;
	double err_prev_w;

	/* Filled by the source's sample(), consumed by take(). */
	double pending_j;		/* accumulated since the last take */
	enum ceems_energy_gap pending_gap;	/* first gap since last take */
};

struct ceems_energy_source;

struct ceems_energy_source_ops {
	const char *kind;	/* "rapl", "hwmon", "pm_counters", ... */
	/* Read every counter at monotonic time NOW_NS and add the energy
	 * since the previous sample to pending_j (or set pending_gap).
	 * Never fails as a whole: a bad counter records its own gap. */
	void (*sample)(struct ceems_energy_source *src, uint64_t now_ns);
	/* Longest safe time between two samples, ns; 0 = no limit. */
	uint64_t (*max_sample_interval_ns)(const struct ceems_energy_source *src);
	void (*close)(struct ceems_energy_source *src);
	/* Counter I's reader, when the counter is cumulative (a checkpoint
	 * keeps its last reading, from which a restarted agent can account
	 * the interval it was down); NULL otherwise.  The op may be NULL. */
	struct ceems_energy_reader *(*reader)(struct ceems_energy_source *src,
					      size_t i);
};

struct ceems_energy_source {
	const struct ceems_energy_source_ops *ops;
	struct ceems_energy_counter *counters;
	size_t ncounters;
	void *priv;
};

/* What a counter measured over one main tick. */
struct ceems_energy_take {
	double joules;			/* >= 0; 0 when gap != NONE */
	enum ceems_energy_gap gap;
};

/* Move every counter's pending energy into OUT[i] (NCOUNTERS entries)
 * and clear it.  A counter with a gap in any sample since the previous
 * take reports the gap and 0 J for the whole tick. */
void ceems_energy_source_take(struct ceems_energy_source *src,
			      struct ceems_energy_take *out);

/* Sample, bound and close through the ops, for callers that hold only
 * the generic source (NULL is accepted by close). */
void ceems_energy_source_sample(struct ceems_energy_source *src,
				uint64_t now_ns);
uint64_t ceems_energy_source_max_sample_interval_ns(
	const struct ceems_energy_source *src);
void ceems_energy_source_close(struct ceems_energy_source *src);
/* Counter I's reader through the ops, NULL when it has none. */
struct ceems_energy_reader *ceems_energy_source_reader(
	struct ceems_energy_source *src, size_t i);

/* --- Helpers shared by the source implementations. --- */

/* Add J joules to C, or record GAP (the first gap since the last take
 * wins: it is the reason the tick is not a measurement). */
void ceems_energy_counter_add(struct ceems_energy_counter *c, double j);
void ceems_energy_counter_gap(struct ceems_energy_counter *c,
			      enum ceems_energy_gap gap);


/* What is known about a monotonic energy counter, for judging the
 * difference of two readings. */
struct ceems_energy_counter_limits {
	double unit_j;		/* joules per count: 1e-6 for uJ counters */
	uint64_t range;		/* wraps to 0 after this value; 0 = never */
	double max_power_w;	/* a delta needing more power is a reset */
	uint64_t slack_ns;	/* timing jitter allowed in that check */
};

/* Longest time, ns, in which the counter can wrap at most once
 * (range / max power); 0 when it does not wrap. */
uint64_t ceems_energy_wrap_period_ns(
	const struct ceems_energy_counter_limits *lim);

/* Where a source reads a counter file: SYSFS_ROOT ("" or "/" for the
 * real one) joined with the absolute path REL into BUF.  0 or -ENAMETOOLONG. */
int ceems_energy_sysfs_path(char *buf, size_t size, const char *sysfs_root,
			    const char *rel);

/* Open a counter file to be kept open and pread each sample (no symlink
 * as last component, close-on-exec).  The fd, or -errno. */
int ceems_energy_open_file(const char *path);

/* pread the kept-open sysfs counter FD (one show() call, so one pread)
 * and parse it with ceems_number_parse_u64.  0 or a negative errno. */
int ceems_energy_pread_u64(int fd, uint64_t *value);

/* Judge the readings PREV then CUR taken ELAPSED_NS apart.  Returns
 * CEEMS_GAP_NONE with *JOULES set (>= 0), or the gap: READ_ERROR when
 * CUR exceeds the range, STALL when ELAPSED_NS exceeds the wrap period
 * (an unknown number of wraps), RESET when the counter went backwards
 * without a range, or when the delta (wrapped or not) needs more than
 * max_power_w over ELAPSED_NS + slack_ns. */
enum ceems_energy_gap ceems_energy_counter_delta(
	const struct ceems_energy_counter_limits *lim, uint64_t prev,
	uint64_t cur, uint64_t elapsed_ns, double *joules);


/* The sampling state of one monotonic counter, shared by the sources so
 * that they all treat errors, resets and stalls alike. */
struct ceems_energy_reader {
	struct ceems_energy_counter_limits lim;
	uint64_t prev;		/* last good reading, counts */
	uint64_t last_ns;	/* when it was taken */
	bool have_prev;		/* false: the next good reading is a baseline */
	enum ceems_energy_gap rebase_gap;	/* gap of that baseline */
	enum ceems_energy_gap state;	/* last outcome; logged on change */
	/* Which run of the counter prev belongs to, for a source whose
	 * readings alone cannot tell a reset from a counter that went on
	 * (hwmon: its file's inode, new when the device is made again;
	 * pm_counters: the controller's startup).  A checkpoint keeps it,
	 * and a restarted agent recovers the interval only over the same
	 * one.  needs_identity false: the range and the readings tell a
	 * reset (RAPL), identity is 0. */
	bool needs_identity;
	uint64_t identity;	/* 0: unknown */
};

/* A good reading CUR at NOW_NS: add the energy since the previous one to
 * C, or record why it cannot be known, and make CUR the baseline. */
void ceems_energy_reader_update(struct ceems_energy_reader *r,
				struct ceems_energy_counter *c, uint64_t cur,
				uint64_t now_ns);

/* A good power reading of W watts at NOW_NS, for a source that reads
 * power, not energy: the energy since the previous reading (*PREV_W,
 * which W replaces) is the trapezoid's, added to C; more than
 * MAX_GAP_NS since it, the interval is a stall, and W the baseline. */
void ceems_energy_reader_power(struct ceems_energy_reader *r,
			       struct ceems_energy_counter *c, double *prev_w,
			       double w, uint64_t now_ns, uint64_t max_gap_ns);

/* No usable reading (ERR is a -errno from the read or the parse): record
 * a read error for C; the next good reading becomes a baseline whose
 * interval is a gap of kind REBASE (READ_ERROR, or RESET when the
 * counter file went away and came back).  Logged when C enters the bad
 * state, not at every sample. */
void ceems_energy_reader_fail(struct ceems_energy_reader *r,
			      struct ceems_energy_counter *c, int err,
			      enum ceems_energy_gap rebase);

/* Log a change of C's state (one line when it goes bad or the kind of
 * problem changes, one when it measures again).  WHY may be NULL. */
void ceems_energy_reader_set_state(struct ceems_energy_reader *r,
				   const struct ceems_energy_counter *c,
				   enum ceems_energy_gap state,
				   const char *why);

#endif
