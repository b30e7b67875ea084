/* energy.h - the one interface every node energy source implements
 * (RAPL, hwmon, HPE Cray pm_counters; later IPMI and GPUs).  A source
 * owns counters; each counter belongs to one energy domain.  The agent
 * samples a source as often as its counters need (fast enough that a
 * counter cannot wrap twice between samples) and takes the accumulated
 * energy once per main tick.  An interval whose energy is unknowable (a
 * stall longer than the wrap period, a reset, a read error) is a gap:
 * reported as such, never guessed (ARCHITECTURE invariant 2). */
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

const char *ceems_energy_domain_name(enum ceems_energy_domain d);

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

#endif
