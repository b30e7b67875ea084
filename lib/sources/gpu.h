/* gpu.h - the node's GPUs, read through the vendor's management library
 * loaded at run time (NVML for NVIDIA, ROCm SMI for AMD): no build
 * dependency, one build for every node.  A backend enumerates its devices
 * once, at open, with the identity that survives renumbering (UUID, PCI
 * bus id, the minor number of the device file that grants access), and
 * then reads any device on demand: its cumulative energy counter, its
 * power, its utilisation and memory, and the profiling metrics the
 * driver offers.
 *
 * Only the node agent opens backends (once per node); the energy of the
 * devices reaches the ledger through the GPU energy source
 * (ceems_gpu_source_open), the usage through ceems_gpu_backend_read_usage.
 * Unknown is not zero: every figure has its have_ flag. */
#ifndef CEEMS_GPU_H
#define CEEMS_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/energy.h"
#include "model/ledger.h"

/* Devices per node (all backends together): the ledger's device count. */
#define CEEMS_GPU_MAX_DEVICES CEEMS_LEDGER_MAX_GPUS
/* MIG GPU instances (NVIDIA) or compute partitions (AMD) per device. */
#define CEEMS_GPU_MAX_INSTANCES 8
/* UUIDs ("GPU-8c5b..." 40 chars, "MIG-..."), bus ids, model names. */
#define CEEMS_GPU_ID_MAX 96

enum ceems_gpu_vendor {
	CEEMS_GPU_NVIDIA = 1,
	CEEMS_GPU_AMD = 2,
};

const char *ceems_gpu_backend_vendor_name(enum ceems_gpu_vendor v);

/* A MIG GPU instance or an AMD compute partition: a slice of a device
 * that Slurm can hand to a job on its own. */
struct ceems_gpu_instance {
	unsigned int id;		/* GPU instance id / partition index */
	char uuid[CEEMS_GPU_ID_MAX];	/* "MIG-..."; "" when none */
	unsigned int slices;		/* its SMs (NVIDIA) or CUs (AMD) */
	/* The device file that grants access to it (NVIDIA: the
	 * nvidia-caps "access" file of the instance), -1 when unknown. */
	int major;
	int minor;
};

/* What a device is: fixed from open to close. */
struct ceems_gpu_device {
	enum ceems_gpu_vendor vendor;
	char uuid[CEEMS_GPU_ID_MAX];	/* NVIDIA "GPU-...", AMD unique id */
	char bus_id[CEEMS_GPU_ID_MAX];	/* "0000:3b:00.0", lower case */
	char name[CEEMS_GPU_ID_MAX];	/* the model, for logs */
	/* The character device that grants access to the whole device:
	 * /dev/nvidiaN (195:N) or /dev/dri/renderD* (226:N); -1 unknown. */
	int major;
	int minor;
	uint64_t mem_total_bytes;	/* 0: unknown */
	unsigned int slices;		/* SMs or CUs of the whole device, 0 unknown */
	/* The device has a cumulative energy counter (NVML total energy,
	 * Volta and later; ROCm SMI energy count); without one, its
	 * energy is power integrated over fast samples. */
	bool has_energy_counter;
	double energy_unit_j;		/* joules per count of that counter */
	/* The counter wraps to 0 after this many counts; 0: it does not
	 * (NVML: 64-bit millijoules).  ROCm SMI does not say how wide its
	 * counter is: it starts at 2^32 and becomes 0 once a reading
	 * proves the counter wider (the one change after open). */
	uint64_t energy_range;
	double max_power_w;		/* power limit; 0 unknown */
	size_t ninstances;		/* 0: not partitioned */
	struct ceems_gpu_instance inst[CEEMS_GPU_MAX_INSTANCES];
};

/* One reading of a device's usage; percentages are 0..100. */
struct ceems_gpu_usage {
	bool have_util;
	double util_pct;		/* time a kernel ran ("GPU utilisation") */
	bool have_mem_util;
	double mem_util_pct;		/* time memory was read or written */
	bool have_mem_used;
	uint64_t mem_used_bytes;
	bool have_power;
	double power_w;
	/* Profiling metrics, where the driver offers them (NVML GPM on
	 * Hopper and later): what "utilisation" overstates. */
	bool have_sm_active;
	double sm_active_pct;		/* SMs with a warp resident */
	bool have_sm_occupancy;
	double sm_occupancy_pct;	/* warps resident / maximum */
	bool have_tensor_active;
	double tensor_active_pct;	/* tensor pipes busy */
	bool have_fp_active;
	double fp_active_pct;		/* FP64/FP32/FP16 pipes busy, the max */
	/* Per instance (same order as the device's inst[]), where the
	 * driver reports it per instance. */
	bool have_inst_util[CEEMS_GPU_MAX_INSTANCES];
	double inst_util_pct[CEEMS_GPU_MAX_INSTANCES];
	bool have_inst_mem_used[CEEMS_GPU_MAX_INSTANCES];
	uint64_t inst_mem_used_bytes[CEEMS_GPU_MAX_INSTANCES];
};

struct ceems_gpu_backend;

struct ceems_gpu_backend_ops {
	const char *kind;		/* "nvml", "rocm_smi" */
	/* Device I's cumulative energy counter, in energy_unit_j counts.
	 * 0; -ENOTSUP (no counter); -ENODEV (device lost: fell off the
	 * bus, driver unloaded); -EIO (any other failure). */
	int (*read_energy)(struct ceems_gpu_backend *b, size_t i,
			   uint64_t *counts);
	/* Device I's power now, W.  0, -ENOTSUP, -ENODEV or -EIO. */
	int (*read_power)(struct ceems_gpu_backend *b, size_t i, double *w);
	/* Device I's usage: fills what the driver gives (have_ flags; the
	 * rest cleared).  0, or -ENODEV / -EIO when nothing could be read. */
	int (*read_usage)(struct ceems_gpu_backend *b, size_t i,
			  struct ceems_gpu_usage *u);
	void (*close)(struct ceems_gpu_backend *b);
};

struct ceems_gpu_backend {
	const struct ceems_gpu_backend_ops *ops;
	size_t ndevices;
	struct ceems_gpu_device dev[CEEMS_GPU_MAX_DEVICES];
	void *priv;
};

/* Load LIBRARY (NULL or "": the vendor's default name, found by the
 * dynamic linker: "libnvidia-ml.so.1", "librocm_smi64.so.1" -- the
 * ROCm one also tried as librocm_smi64.so), initialise it and enumerate
 * the devices.  NULL when there is nothing to measure, with ERR (one line
 * for the admin: which library, what went wrong, what to do) and *ERRNUM:
 * -ENOENT (the library is not installed), -ENOSYS (an entry point the
 * project calls is missing), -ENODEV (driver not loaded, or no device),
 * -EIO (the library failed otherwise). */
struct ceems_gpu_backend *ceems_gpu_nvml_open(const char *library,
					      int *errnum, char *err,
					      size_t err_size);
struct ceems_gpu_backend *ceems_gpu_rocm_smi_open(const char *library,
						  int *errnum, char *err,
						  size_t err_size);

/* Through the ops, for callers holding the generic backend. */
int ceems_gpu_backend_read_usage(struct ceems_gpu_backend *b, size_t i,
				 struct ceems_gpu_usage *u);
void ceems_gpu_backend_close(struct ceems_gpu_backend *b);

/* The GPU energy source over NBACKENDS backends: one counter per device
 * (domain GPU, device = its index over all the backends in order, as
 * the ledger numbers devices), from the device's energy counter, or
 * from its power integrated (trapezoid) over samples at most
 * CEEMS_GPU_POWER_SAMPLE_NS apart when it has none (the source then asks
 * the agent for that sampling period).  Counters follow the energy
 * reader rules (wraps, resets, gaps; a lost device is a read error).
 * The source owns the backends from then on and closes them.  NULL when
 * NBACKENDS is 0, or on memory exhaustion (the backends closed). */
#define CEEMS_GPU_POWER_SAMPLE_NS 100000000ULL
/* How far a board's power reading may be off: NVIDIA documents its
 * power draw as accurate to within +/- 5 W (nvidia-smi); the error
 * bound of integrated power takes it (doc/attribution.md). */
#define CEEMS_GPU_POWER_ACCURACY_W 5.0
struct ceems_energy_source *ceems_gpu_source_open(
	struct ceems_gpu_backend **backends, size_t nbackends,
	uint64_t now_ns);

/* The source's device I (0..ncounters-1): its backend and index there,
 * and whether its energy is integrated power (for the job's data
 * quality).  0, or -EINVAL for a source that is not the GPU source or
 * I out of range. */
int ceems_gpu_source_device(struct ceems_energy_source *src, size_t i,
			    struct ceems_gpu_backend **backend,
			    size_t *backend_index, bool *power_integrated);

#endif
