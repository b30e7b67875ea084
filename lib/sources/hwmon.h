/* hwmon.h - node, CPU and memory energy from the kernel's hwmon sensors
 * (/sys/class/hwmon/hwmon*): energy*_input counters, and power*_input
 * (or power*_average) integrated over time where a channel has no
 * energy counter. */
#ifndef CEEMS_HWMON_H
#define CEEMS_HWMON_H

#include <stdint.h>

#include "model/energy.h"

/* Integrating power over a longer interval than this guesses the power
 * in between: such an interval is a CEEMS_GAP_STALL. */
#define CEEMS_HWMON_DEFAULT_MAX_POWER_GAP_NS 10000000000ULL
/* No sensor in one node measures more: a larger power reading, or an
 * energy delta needing more, is garbage (read error) or a reset. */
#define CEEMS_HWMON_MAX_POWER_W 100000.0
/* Timing jitter allowed when judging an energy delta: drivers update
 * their accumulators on their own clock. */
#define CEEMS_HWMON_SLACK_NS 1000000000ULL
/* A power channel's reading lags the node by up to a sample (one tick)
 * and by whatever the driver averages over, taken as a second more. */
#define CEEMS_HWMON_POWER_LAG_S 2.0
/* Bounded memory. */
#define CEEMS_HWMON_MAX_CHANNELS 128

/* Open every usable energy and power channel under
 * SYSFS_ROOT/class/hwmon ("" or "/" for the real /sys) and read each
 * once at NOW_NS as the baseline.  MAX_POWER_GAP_NS bounds the
 * integration of power (0: the default above).  NULL, with a log line,
 * when no channel is found. */
struct ceems_energy_source *ceems_hwmon_open(const char *sysfs_root,
					     uint64_t max_power_gap_ns,
					     uint64_t now_ns);

/* Which domain a channel measures, from the chip's name file and the
 * channel's label file (either may be ""), compared case-insensitively:
 * - labels naming a CPU core ("core", as amd_energy's "Ecore012") are
 *   parts of a package and are left out (-ENOENT);
 * - labels naming a GPU or accelerator, and GPU drivers' chips (amdgpu,
 *   nouveau, i915, xe), are left out (-ENOENT): the GPU sources measure
 *   each device;
 * - "cpu", "package", "pkg", "socket" in the label, or a CPU energy chip
 *   (amd_energy, fam15h_power, zenpower) without such label: PACKAGE;
 * - "mem", "dram", "dimm" in the label: DRAM;
 * - anything else (PSU, node power meters, no label): NODE.
 * *DEVICE is the last number in the label for PACKAGE and DRAM ("Esocket1"
 * is 1), else -1.  Returns 0 or -ENOENT. */
int ceems_hwmon_classify(const char *chip, const char *label,
			 enum ceems_energy_domain *domain, int *device);

#endif
