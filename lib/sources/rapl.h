/* rapl.h - CPU package and DRAM energy from RAPL through the kernel's
 * powercap interface (/sys/class/powercap/intel-rapl:*), Intel and AMD. */
#ifndef CEEMS_RAPL_H
#define CEEMS_RAPL_H

#include <stdint.h>

#include "model/energy.h"

/* Powercap zones give no maximum power of their own worth trusting: the
 * largest of the zone's constraint_*_max_power_uw and
 * constraint_*_power_limit_uw is multiplied by this factor (short bursts
 * above the long-term limit, limits left at firmware defaults). */
#define CEEMS_RAPL_POWER_SAFETY_FACTOR 2.0
/* A zone with no positive constraint at all (AMD exposes none) is
 * assumed to draw at most this much: more than any socket draws today,
 * so its wrap period, and the sampling it asks for, err short. */
#define CEEMS_RAPL_DEFAULT_MAX_POWER_W 1500.0
/* Timing jitter allowed when judging whether a delta is possible: the
 * kernel updates the counter about every millisecond and the sample's
 * time stamp is taken a little before or after the read. */
#define CEEMS_RAPL_SLACK_NS 50000000ULL
/* The register's unit behind sysfs's microjoules: 2^-14 J, the energy
 * status unit of most Intel parts (AMD's is finer), the resolution the
 * error bound takes (doc/attribution.md). */
#define CEEMS_RAPL_RESOLUTION_J (1.0 / 16384)
/* Bounded memory: zones beyond this are ignored (with a log line). */
#define CEEMS_RAPL_MAX_ZONES 64

/* Open every package, dram and psys zone under SYSFS_ROOT/class/powercap
 * ("" or "/" for the real /sys) and read each counter once at NOW_NS as
 * the baseline.  core and uncore zones are parts of their package and are
 * left out, as are intel-rapl-mmio zones (the same package counter seen
 * through MMIO).  NULL, with a log line, when no zone can be used: the
 * node simply has no RAPL. */
struct ceems_energy_source *ceems_rapl_open(const char *sysfs_root,
					    uint64_t now_ns);

/* Classify a zone by the contents of its name file: "package-N" and
 * "package-N-die-M" are CEEMS_DOMAIN_PACKAGE with device N; "dram" is
 * CEEMS_DOMAIN_DRAM (device -1: the caller takes the parent package's);
 * "psys" and "psys-N" are CEEMS_DOMAIN_NODE (the platform: package,
 * graphics, chipset...), device -1 or N.  Returns 0, or -ENOENT for a
 * zone to leave out (core, uncore: counted in the package), -EINVAL for
 * a name it does not know. */
int ceems_rapl_classify_zone(const char *name, enum ceems_energy_domain *domain,
			     int *device);

#endif
