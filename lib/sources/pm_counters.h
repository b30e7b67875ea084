/* pm_counters.h - node, CPU, memory and accelerator energy from the HPE
 * Cray node controller (/sys/cray/pm_counters). */
#ifndef CEEMS_PM_COUNTERS_H
#define CEEMS_PM_COUNTERS_H

#include <stdint.h>

#include "model/energy.h"

/* No node draws more: a delta needing more power is a reset. */
#define CEEMS_PM_COUNTERS_MAX_POWER_W 100000.0
/* The controller updates the files about ten times a second, on its own
 * clock: allowed timing jitter when judging a delta. */
#define CEEMS_PM_COUNTERS_SLACK_NS 1000000000ULL
/* Bounded memory: node, cpu, memory and up to this many in all. */
#define CEEMS_PM_COUNTERS_MAX 32

/* Open the energy files under SYSFS_ROOT/cray/pm_counters ("" or "/"
 * for the real /sys) and read each once at NOW_NS as the baseline.  NULL,
 * with a log line, when there is none (not a Cray EX node). */
struct ceems_energy_source *ceems_pm_counters_open(const char *sysfs_root,
						   uint64_t now_ns);

/* Parse an energy file: "<joules> J <timestamp> us" (the value is the
 * first field; the unit must be J; what follows is not used).  0,
 * -EINVAL (garbage, missing or other unit, a line cut short) or -ERANGE. */
int ceems_pm_counters_parse(const char *text, uint64_t *joules);

/* Which domain an energy file measures: "energy" the node (accelerators
 * included), "cpu_energy" (or "cpuN_energy") the CPUs, "memory_energy"
 * the memory, "accelN_energy" GPU device N.  0, or -ENOENT for a file
 * that is not an energy counter (power, power_cap, temp, freshness...). */
int ceems_pm_counters_classify(const char *file,
			       enum ceems_energy_domain *domain, int *device);

#endif
