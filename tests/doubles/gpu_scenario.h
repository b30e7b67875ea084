/* gpu_scenario.h - what the GPU library doubles (NVML, ROCm SMI) report,
 * read from a scenario file that tests write and rewrite while the code
 * under test runs.  One parser and one state for both doubles.
 *
 * The file: the file named by CEEMS_GPU_DOUBLE_SCENARIO when that is
 * set, else "<path of the double's .so>.scenario" (the agent runs with
 * a clean environment).  It is read again whenever it changes (inode,
 * size or mtime), so a test rewrites it (write a new file and rename it
 * over) to change what the GPUs do.  No file: no device.
 *
 * Lines are "key=value"; '#' starts a comment.  Before any section:
 *   init=ok | driver_not_loaded | error
 * "[device]" starts the next device, "[instance]" the next MIG instance
 * of the current device.  Device keys (all optional):
 *   uuid, bus_id (as the library writes it), name, minor
 *   memory_total, memory_used (bytes), util, mem_util (percent)
 *   power_w, power_limit_w, sms
 *   energy_raw=N   the counter reads N (counts) until rewritten; without
 *                  it the double integrates power_w over CLOCK_MONOTONIC
 *                  from energy_start=N counts
 *   energy_wrap_bits=B   the counter is read modulo 2^B (default 64)
 *   energy_resolution_uj  ROCm SMI's counter resolution (default 15.3)
 *   no_energy=1, no_power=1, no_gpm=1, lost=1 (GPU_IS_LOST from now on)
 *   gpm_sm_active, gpm_sm_occupancy, gpm_tensor, gpm_fp64, gpm_fp32,
 *   gpm_fp16 (percent), mig=1
 * Instance keys: id, uuid, sms, util, memory_total, memory_used. */
#ifndef CEEMS_GPU_SCENARIO_H
#define CEEMS_GPU_SCENARIO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GPU_SCENARIO_MAX_DEVICES 16
#define GPU_SCENARIO_MAX_INSTANCES 8
#define GPU_SCENARIO_ID_MAX 96

enum gpu_scenario_init {
	GPU_SCENARIO_INIT_OK = 0,
	GPU_SCENARIO_INIT_DRIVER_NOT_LOADED,
	GPU_SCENARIO_INIT_ERROR,
};

struct gpu_scenario_instance {
	unsigned int id;
	char uuid[GPU_SCENARIO_ID_MAX];
	unsigned int sms;
	double util;
	uint64_t memory_total, memory_used;
};

struct gpu_scenario_device {
	char uuid[GPU_SCENARIO_ID_MAX];
	char bus_id[GPU_SCENARIO_ID_MAX];
	char name[GPU_SCENARIO_ID_MAX];
	unsigned int minor;
	uint64_t memory_total, memory_used;
	double util, mem_util;
	double power_w, power_limit_w;
	unsigned int sms;
	bool energy_fixed;
	uint64_t energy_raw;		/* fixed value, or the start */
	unsigned int energy_wrap_bits;	/* 1..64 */
	double energy_resolution_uj;
	bool no_energy, no_power, no_gpm, lost, mig;
	double gpm_sm_active, gpm_sm_occupancy, gpm_tensor;
	double gpm_fp64, gpm_fp32, gpm_fp16;
	size_t ninstances;
	struct gpu_scenario_instance inst[GPU_SCENARIO_MAX_INSTANCES];
	/* Integration state, carried over when the file is read again. */
	double energy_j;
	uint64_t energy_ns;
};

struct gpu_scenario {
	enum gpu_scenario_init init;
	size_t ndevices;
	struct gpu_scenario_device dev[GPU_SCENARIO_MAX_DEVICES];
};

/* The scenario now (read again if the file changed).  SELF is the
 * address of a function of the calling double, to find its .so. */
struct gpu_scenario *gpu_scenario_get(const void *self);

/* Parse TEXT into SC (reset first).  0, or -1 with a line on stderr. */
int gpu_scenario_parse(const char *text, struct gpu_scenario *sc);

/* Device D's energy counter now, in counts of UNIT_J joules, modulo
 * its wrap width. */
uint64_t gpu_scenario_energy(struct gpu_scenario_device *d, double unit_j);

#endif
