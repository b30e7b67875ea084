/* gpu_nvml.c - NVIDIA GPUs through NVML, loaded at run time (dlopen of
 * libnvidia-ml.so.1 or the path configured): no build dependency, and a
 * node without the driver simply has no NVIDIA backend.  At open the
 * devices are enumerated with their identity (UUID, PCI bus id, minor of
 * /dev/nvidiaN), memory, SM count, power limit, their MIG GPU instances
 * and whether they have the cumulative energy counter (Volta and
 * later, millijoules since the driver was loaded: 64 bits, it does not
 * wrap in practice).  Reads are then one NVML call each; the profiling
 * metrics (GPM, Hopper and later) are computed between this read's
 * sample and the previous one, so the first read has none. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>

#include "sources/gpu.h"
#include "sources/gpu_internal.h"
#include "sources/gpu_nvml_api.h"
#include "base/log.h"

#define NVML_DEFAULT_LIBRARY "libnvidia-ml.so.1"
/* Device files of the whole GPUs: /dev/nvidiaN. */
#define NVIDIA_MAJOR 195

struct nvml_fns {
	nvml_init_fn *init;
	nvml_shutdown_fn *shutdown;
	nvml_count_fn *count;
	nvml_handle_fn *handle;
	nvml_string_fn *uuid;
	nvml_pci_fn *pci;
	nvml_string_fn *name;
	nvml_uint_fn *minor;
	nvml_memory_fn *memory;
	nvml_energy_fn *energy;
	nvml_uint_fn *power;
	nvml_uint_fn *power_limit;
	nvml_util_fn *util;
	/* Optional: MIG (Ampere and later drivers), attributes, GPM. */
	nvml_mig_mode_fn *mig_mode;
	nvml_uint_fn *mig_max;
	nvml_mig_handle_fn *mig_handle;
	nvml_uint_fn *gi_id;
	nvml_attributes_fn *attributes;
	nvml_gpm_alloc_fn *gpm_alloc;
	nvml_gpm_free_fn *gpm_free;
	nvml_gpm_get_fn *gpm_get;
	nvml_gpm_mig_get_fn *gpm_mig_get;
	nvml_gpm_metrics_fn *gpm_metrics;
	nvml_gpm_support_fn *gpm_support;
	nvml_error_string_fn *error_string;
};

#define SYM(name, member, required) \
	{ name, offsetof(struct nvml_fns, member), required }
static const struct ceems_dynlib_symbol nvml_symbols[] = {
	SYM("nvmlInit_v2", init, true),
	SYM("nvmlShutdown", shutdown, true),
	SYM("nvmlDeviceGetCount_v2", count, true),
	SYM("nvmlDeviceGetHandleByIndex_v2", handle, true),
	SYM("nvmlDeviceGetUUID", uuid, true),
	SYM("nvmlDeviceGetPciInfo_v3", pci, true),
	SYM("nvmlDeviceGetName", name, true),
	SYM("nvmlDeviceGetMinorNumber", minor, true),
	SYM("nvmlDeviceGetMemoryInfo", memory, true),
	SYM("nvmlDeviceGetTotalEnergyConsumption", energy, true),
	SYM("nvmlDeviceGetPowerUsage", power, true),
	SYM("nvmlDeviceGetEnforcedPowerLimit", power_limit, true),
	SYM("nvmlDeviceGetUtilizationRates", util, true),
	SYM("nvmlDeviceGetMigMode", mig_mode, false),
	SYM("nvmlDeviceGetMaxMigDeviceCount", mig_max, false),
	SYM("nvmlDeviceGetMigDeviceHandleByIndex", mig_handle, false),
	SYM("nvmlDeviceGetGpuInstanceId", gi_id, false),
	SYM("nvmlDeviceGetAttributes_v2", attributes, false),
	SYM("nvmlGpmSampleAlloc", gpm_alloc, false),
	SYM("nvmlGpmSampleFree", gpm_free, false),
	SYM("nvmlGpmSampleGet", gpm_get, false),
	SYM("nvmlGpmMigSampleGet", gpm_mig_get, false),
	SYM("nvmlGpmMetricsGet", gpm_metrics, false),
	SYM("nvmlGpmQueryDeviceSupport", gpm_support, false),
	SYM("nvmlErrorString", error_string, false),
};
#undef SYM

/* Two GPM sample buffers: the previous read's and this one's. */
struct nvml_gpm {
	nvmlGpmSample_t sample[2];
	int prev;		/* index of the previous sample */
	bool have_prev;
};

struct nvml_instance {
	nvmlDevice_t handle;	/* the MIG device */
	bool gpm;
	struct nvml_gpm samples;
};

struct nvml_device {
	nvmlDevice_t handle;
	bool gpm;
	struct nvml_gpm samples;
	struct nvml_instance inst[CEEMS_GPU_MAX_INSTANCES];
};

struct nvml_priv {
	void *dl;
	const char *library;	/* the name it was loaded by, for logs */
	struct nvml_fns f;
	struct nvml_device dev[CEEMS_GPU_MAX_DEVICES];
	nvmlGpmMetricsGet_t metrics;	/* scratch: 4 KiB, not on the stack */
};

static int
nvml_errno(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return 0;
	case NVML_ERROR_GPU_IS_LOST:
	case NVML_ERROR_DRIVER_NOT_LOADED:
	case NVML_ERROR_GPU_NOT_FOUND:
		return -ENODEV;
	case NVML_ERROR_NOT_SUPPORTED:
	case NVML_ERROR_FUNCTION_NOT_FOUND:
		return -ENOTSUP;
	default:
		return -EIO;
	}
}

static const char *
nvml_strerror(const struct nvml_priv *p, nvmlReturn_t r, char *buf,
	      size_t size)
{
	const char *s = p->f.error_string != NULL ? p->f.error_string(r) : NULL;

	if (s != NULL)
		snprintf(buf, size, "%.64s (NVML error %d)", s, r);
	else
		snprintf(buf, size, "NVML error %d", r);
	return buf;
}

static int
nvml_read_energy(struct ceems_gpu_backend *b, size_t i, uint64_t *counts)
{
	struct nvml_priv *p = b->priv;
	unsigned long long mj;
	nvmlReturn_t r;

	if (i >= b->ndevices)
		return -EINVAL;
	r = p->f.energy(p->dev[i].handle, &mj);
	if (r != NVML_SUCCESS)
		return nvml_errno(r);
	*counts = (uint64_t)mj;
	return 0;
}

static int
nvml_read_power(struct ceems_gpu_backend *b, size_t i, double *w)
{
	struct nvml_priv *p = b->priv;
	unsigned int mw;
	nvmlReturn_t r;

	if (i >= b->ndevices)
		return -EINVAL;
	r = p->f.power(p->dev[i].handle, &mw);
	if (r != NVML_SUCCESS)
		return nvml_errno(r);
	*w = (double)mw / 1000.0;
	return 0;
}

/* Take a GPM sample into S (of DEV, or of its GPU instance GI when
 * MIG is set) and compute IDS[0..N-1] between it and the previous one:
 * VALUES[k] is NaN for a metric not computed.  0, or -errno when no
 * metric could be had (the first sample included). */
static int
gpm_read(struct nvml_priv *p, struct nvml_gpm *s, nvmlDevice_t dev,
	 bool mig, unsigned int gi, const unsigned int *ids, size_t n,
	 double *values)
{
	int cur = 1 - s->prev;
	nvmlGpmMetricsGet_t *m = &p->metrics;
	nvmlReturn_t r;
	size_t k;

	for (k = 0; k < n; k++)
		values[k] = -1.0;
	r = mig ? p->f.gpm_mig_get(dev, gi, s->sample[cur]) :
		p->f.gpm_get(dev, s->sample[cur]);
	if (r != NVML_SUCCESS) {
		s->have_prev = false;
		return nvml_errno(r);
	}
	if (!s->have_prev) {
		s->have_prev = true;
		s->prev = cur;
		return -EAGAIN;
	}
	m->version = NVML_GPM_METRICS_GET_VERSION;
	m->numMetrics = (unsigned int)n;
	m->sample1 = s->sample[s->prev];
	m->sample2 = s->sample[cur];
	for (k = 0; k < n; k++) {
		m->metrics[k].metricId = ids[k];
		m->metrics[k].nvmlReturn = NVML_ERROR_UNKNOWN;
	}
	s->prev = cur;
	r = p->f.gpm_metrics(m);
	if (r != NVML_SUCCESS)
		return nvml_errno(r);
	for (k = 0; k < n; k++)
		if (m->metrics[k].nvmlReturn == NVML_SUCCESS &&
		    m->metrics[k].value >= 0.0 && m->metrics[k].value <= 100.0)
			values[k] = m->metrics[k].value;
	return 0;
}

static void
read_gpm_device(struct nvml_priv *p, struct nvml_device *d,
		struct ceems_gpu_usage *u)
{
	static const unsigned int ids[] = {
		NVML_GPM_METRIC_SM_UTIL, NVML_GPM_METRIC_SM_OCCUPANCY,
		NVML_GPM_METRIC_ANY_TENSOR_UTIL, NVML_GPM_METRIC_FP64_UTIL,
		NVML_GPM_METRIC_FP32_UTIL, NVML_GPM_METRIC_FP16_UTIL,
	};
	double v[sizeof(ids) / sizeof(ids[0])];
	double fp = -1.0;
	size_t k;

	if (!d->gpm || gpm_read(p, &d->samples, d->handle, false, 0, ids,
				sizeof(ids) / sizeof(ids[0]), v) < 0)
		return;
	u->have_sm_active = v[0] >= 0.0;
	u->sm_active_pct = u->have_sm_active ? v[0] : 0.0;
	u->have_sm_occupancy = v[1] >= 0.0;
	u->sm_occupancy_pct = u->have_sm_occupancy ? v[1] : 0.0;
	u->have_tensor_active = v[2] >= 0.0;
	u->tensor_active_pct = u->have_tensor_active ? v[2] : 0.0;
	for (k = 3; k < 6; k++)
		if (v[k] > fp)
			fp = v[k];
	u->have_fp_active = fp >= 0.0;
	u->fp_active_pct = u->have_fp_active ? fp : 0.0;
}

/* Instance K of device I: its memory from its MIG handle, its
 * utilisation from GPM (per GPU instance) or, where the driver gives
 * it, the MIG handle's utilisation rates. */
static void
read_instance(struct nvml_priv *p, const struct ceems_gpu_device *dev,
	      struct nvml_device *d, size_t k, struct ceems_gpu_usage *u)
{
	static const unsigned int ids[] = { NVML_GPM_METRIC_GRAPHICS_UTIL };
	struct nvml_instance *in = &d->inst[k];
	nvmlUtilization_t util;
	nvmlMemory_t mem;
	double v;

	if (p->f.memory(in->handle, &mem) == NVML_SUCCESS) {
		u->have_inst_mem_used[k] = true;
		u->inst_mem_used_bytes[k] = mem.used;
	}
	if (in->gpm && gpm_read(p, &in->samples, d->handle, true,
				dev->inst[k].id, ids, 1, &v) == 0 && v >= 0.0) {
		u->have_inst_util[k] = true;
		u->inst_util_pct[k] = v;
	} else if (p->f.util(in->handle, &util) == NVML_SUCCESS &&
		   util.gpu <= 100) {
		u->have_inst_util[k] = true;
		u->inst_util_pct[k] = util.gpu;
	}
}

static int
nvml_read_usage(struct ceems_gpu_backend *b, size_t i,
		struct ceems_gpu_usage *u)
{
	struct nvml_priv *p = b->priv;
	struct nvml_device *d;
	nvmlUtilization_t util;
	nvmlMemory_t mem;
	unsigned int mw;
	nvmlReturn_t r;
	int err = -EIO;
	size_t k;

	memset(u, 0, sizeof(*u));
	if (i >= b->ndevices)
		return -EINVAL;
	d = &p->dev[i];
	r = p->f.util(d->handle, &util);
	if (r == NVML_SUCCESS) {
		u->have_util = util.gpu <= 100;
		u->util_pct = u->have_util ? util.gpu : 0.0;
		u->have_mem_util = util.memory <= 100;
		u->mem_util_pct = u->have_mem_util ? util.memory : 0.0;
		err = 0;
	} else if (nvml_errno(r) == -ENODEV) {
		return -ENODEV;
	}
	if (p->f.memory(d->handle, &mem) == NVML_SUCCESS) {
		u->have_mem_used = true;
		u->mem_used_bytes = mem.used;
		err = 0;
	}
	r = p->f.power(d->handle, &mw);
	if (r == NVML_SUCCESS) {
		u->have_power = true;
		u->power_w = (double)mw / 1000.0;
		err = 0;
	} else if (nvml_errno(r) == -ENODEV) {
		return -ENODEV;
	}
	read_gpm_device(p, d, u);
	for (k = 0; k < b->dev[i].ninstances; k++)
		read_instance(p, &b->dev[i], d, k, u);
	return err;
}

static void
gpm_free_samples(struct nvml_priv *p, struct nvml_gpm *s)
{
	int k;

	for (k = 0; k < 2; k++)
		if (s->sample[k] != NULL && p->f.gpm_free != NULL)
			p->f.gpm_free(s->sample[k]);
	memset(s, 0, sizeof(*s));
}

static void
nvml_close(struct ceems_gpu_backend *b)
{
	struct nvml_priv *p = b->priv;
	size_t i, k;

	if (p != NULL) {
		for (i = 0; i < CEEMS_GPU_MAX_DEVICES; i++) {
			gpm_free_samples(p, &p->dev[i].samples);
			for (k = 0; k < CEEMS_GPU_MAX_INSTANCES; k++)
				gpm_free_samples(p, &p->dev[i].inst[k].samples);
		}
		if (p->f.shutdown != NULL)
			p->f.shutdown();
		if (p->dl != NULL)
			dlclose(p->dl);
		free(p);
	}
	free(b);
}

static const struct ceems_gpu_backend_ops nvml_ops = {
	.kind = "nvml",
	.read_energy = nvml_read_energy,
	.read_power = nvml_read_power,
	.read_usage = nvml_read_usage,
	.close = nvml_close,
};

/* Two sample buffers for GPM; false (and none) when the library has no
 * GPM or cannot allocate them. */
static bool
gpm_alloc_samples(struct nvml_priv *p, struct nvml_gpm *s)
{
	memset(s, 0, sizeof(*s));
	if (p->f.gpm_alloc == NULL || p->f.gpm_free == NULL ||
	    p->f.gpm_get == NULL || p->f.gpm_metrics == NULL)
		return false;
	if (p->f.gpm_alloc(&s->sample[0]) != NVML_SUCCESS ||
	    p->f.gpm_alloc(&s->sample[1]) != NVML_SUCCESS) {
		gpm_free_samples(p, s);
		return false;
	}
	return true;
}

static bool
gpm_supported(struct nvml_priv *p, nvmlDevice_t h)
{
	nvmlGpmSupport_t support;

	if (p->f.gpm_support == NULL || p->f.gpm_alloc == NULL)
		return false;
	memset(&support, 0, sizeof(support));
	support.version = NVML_GPM_SUPPORT_VERSION;
	return p->f.gpm_support(h, &support) == NVML_SUCCESS &&
		support.isSupportedDevice != 0;
}

static unsigned int
sm_count(struct nvml_priv *p, nvmlDevice_t h)
{
	nvmlDeviceAttributes_t a;

	memset(&a, 0, sizeof(a));
	if (p->f.attributes == NULL || p->f.attributes(h, &a) != NVML_SUCCESS)
		return 0;
	return a.multiprocessorCount;
}

/* The MIG GPU instances of DEV, when MIG is on. */
static void
open_instances(struct nvml_priv *p, struct ceems_gpu_device *dev,
	       struct nvml_device *d)
{
	unsigned int current = 0, pending = 0, max = 0, k;
	char uuid[NVML_DEVICE_UUID_BUFFER_SIZE];

	if (p->f.mig_mode == NULL || p->f.mig_max == NULL ||
	    p->f.mig_handle == NULL || p->f.gi_id == NULL ||
	    p->f.mig_mode(d->handle, &current, &pending) != NVML_SUCCESS ||
	    current != NVML_DEVICE_MIG_ENABLE ||
	    p->f.mig_max(d->handle, &max) != NVML_SUCCESS)
		return;
	for (k = 0; k < max && dev->ninstances < CEEMS_GPU_MAX_INSTANCES; k++) {
		struct ceems_gpu_instance *gi = &dev->inst[dev->ninstances];
		struct nvml_instance *in = &d->inst[dev->ninstances];
		nvmlDevice_t mig;
		unsigned int id;

		if (p->f.mig_handle(d->handle, k, &mig) != NVML_SUCCESS ||
		    p->f.gi_id(mig, &id) != NVML_SUCCESS)
			continue;
		memset(gi, 0, sizeof(*gi));
		gi->id = id;
		if (p->f.uuid(mig, uuid, sizeof(uuid)) == NVML_SUCCESS)
			ceems_gpu_backend_copy_id(gi->uuid, sizeof(gi->uuid), uuid,
					  sizeof(uuid));
		gi->slices = sm_count(p, mig);
		gi->major = -1;
		gi->minor = -1;
		in->handle = mig;
		in->gpm = d->gpm && p->f.gpm_mig_get != NULL &&
			gpm_alloc_samples(p, &in->samples);
		dev->ninstances++;
	}
}

/* Identity, limits and instances of device INDEX into DEV / D.  0, or
 * -errno when the device cannot be used (logged). */
static int
open_device(struct nvml_priv *p, unsigned int index,
	    struct ceems_gpu_device *dev, struct nvml_device *d)
{
	char buf[NVML_DEVICE_UUID_BUFFER_SIZE + NVML_DEVICE_NAME_V2_BUFFER_SIZE];
	unsigned long long mj;
	nvmlPciInfo_t pci;
	unsigned int v;
	nvmlMemory_t mem;
	nvmlReturn_t r;
	char why[96];

	memset(dev, 0, sizeof(*dev));
	memset(d, 0, sizeof(*d));
	dev->vendor = CEEMS_GPU_NVIDIA;
	if ((r = p->f.handle(index, &d->handle)) != NVML_SUCCESS ||
	    (r = p->f.uuid(d->handle, buf, NVML_DEVICE_UUID_BUFFER_SIZE)) !=
	    NVML_SUCCESS) {
		ceems_warning("nvml: GPU %u left out, its identity cannot be "
			      "read: %s", index,
			      nvml_strerror(p, r, why, sizeof(why)));
		return nvml_errno(r);
	}
	ceems_gpu_backend_copy_id(dev->uuid, sizeof(dev->uuid), buf,
			  NVML_DEVICE_UUID_BUFFER_SIZE);
	memset(&pci, 0, sizeof(pci));
	if (p->f.pci(d->handle, &pci) == NVML_SUCCESS) {
		pci.busId[sizeof(pci.busId) - 1] = '\0';
		if (ceems_gpu_backend_bus_id_normalise(pci.busId, dev->bus_id,
					       sizeof(dev->bus_id)) < 0)
			ceems_warning("nvml: GPU %u (%s): bus id not understood",
				      index, dev->uuid);
	}
	if (p->f.name(d->handle, buf, NVML_DEVICE_NAME_V2_BUFFER_SIZE) ==
	    NVML_SUCCESS)
		ceems_gpu_backend_copy_id(dev->name, sizeof(dev->name), buf,
				  NVML_DEVICE_NAME_V2_BUFFER_SIZE);
	dev->major = -1;
	dev->minor = -1;
	if (p->f.minor(d->handle, &v) == NVML_SUCCESS && v <= 0xfffff) {
		dev->major = NVIDIA_MAJOR;
		dev->minor = (int)v;
	}
	if (p->f.memory(d->handle, &mem) == NVML_SUCCESS)
		dev->mem_total_bytes = mem.total;
	if (p->f.power_limit(d->handle, &v) == NVML_SUCCESS)
		dev->max_power_w = (double)v / 1000.0;
	dev->slices = sm_count(p, d->handle);
	r = p->f.energy(d->handle, &mj);
	dev->has_energy_counter = r != NVML_ERROR_NOT_SUPPORTED;
	dev->energy_unit_j = 1e-3;
	dev->energy_range = 0;
	d->gpm = gpm_supported(p, d->handle) &&
		gpm_alloc_samples(p, &d->samples);
	open_instances(p, dev, d);
	ceems_info("nvml: GPU %u %s (%s, %s), %s%s%s", index, dev->uuid,
		   dev->name, dev->bus_id,
		   dev->has_energy_counter ? "energy counter" :
		   "no energy counter: power integrated",
		   d->gpm ? ", profiling metrics" : "",
		   dev->ninstances > 0 ? ", MIG" : "");
	return 0;
}

/* NVML loaded, initialised and its devices counted: enumerate them. */
static int
open_devices(struct ceems_gpu_backend *b, struct nvml_priv *p,
	     unsigned int count)
{
	unsigned int i;

	if (count > CEEMS_GPU_MAX_DEVICES) {
		ceems_warning("nvml: %u GPUs, only the first %d are measured",
			      count, CEEMS_GPU_MAX_DEVICES);
		count = CEEMS_GPU_MAX_DEVICES;
	}
	for (i = 0; i < count; i++)
		if (open_device(p, i, &b->dev[b->ndevices],
				&p->dev[b->ndevices]) == 0)
			b->ndevices++;
	return b->ndevices > 0 ? 0 : -ENODEV;
}

/* nvmlInit_v2 and the device count; 0 or -errno with ERR set. */
static int
init_library(struct nvml_priv *p, unsigned int *count, int *errnum,
	     char *err, size_t err_size)
{
	char why[96];
	nvmlReturn_t r;

	r = p->f.init();
	if (r != NVML_SUCCESS)
		p->f.shutdown = NULL;	/* nothing to shut down */
	if (r == NVML_ERROR_DRIVER_NOT_LOADED ||
	    r == NVML_ERROR_LIBRARY_NOT_FOUND) {
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "%s: the NVIDIA driver is not loaded (%s): "
				    "no NVIDIA GPU is measured; load the nvidia "
				    "kernel module on GPU nodes", p->library,
				    nvml_strerror(p, r, why, sizeof(why)));
		return -ENODEV;
	}
	if (r != NVML_SUCCESS) {
		ceems_gpu_backend_set_error(errnum, -EIO, err, err_size,
				    "%s: NVML cannot start (%s): no NVIDIA GPU "
				    "is measured; check the driver with "
				    "nvidia-smi", p->library,
				    nvml_strerror(p, r, why, sizeof(why)));
		return -EIO;
	}
	r = p->f.count(count);
	if (r != NVML_SUCCESS || *count == 0) {
		p->f.shutdown();
		p->f.shutdown = NULL;
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "%s: %s: no NVIDIA GPU is measured",
				    p->library, r != NVML_SUCCESS ?
				    nvml_strerror(p, r, why, sizeof(why)) :
				    "no GPU on this node");
		return -ENODEV;
	}
	return 0;
}

struct ceems_gpu_backend *
ceems_gpu_nvml_open(const char *library, int *errnum, char *err,
		    size_t err_size)
{
	const char *name = library != NULL && library[0] != '\0' ?
		library : NVML_DEFAULT_LIBRARY;
	struct ceems_gpu_backend *b;
	struct nvml_priv *p;
	unsigned int count = 0;

	ceems_gpu_backend_set_error(errnum, 0, err, err_size, "%s", "");
	b = ceems_gpu_backend_new(&nvml_ops, sizeof(*p), errnum, err, err_size);
	if (b == NULL)
		return NULL;
	p = b->priv;
	p->library = name;
	p->dl = ceems_gpu_backend_open_library(&name, 1, "NVIDIA", nvml_symbols,
				       sizeof(nvml_symbols) /
				       sizeof(nvml_symbols[0]), &p->f,
				       sizeof(p->f), errnum, err, err_size);
	if (p->dl == NULL)
		goto fail;
	if (init_library(p, &count, errnum, err, err_size) < 0)
		goto fail;
	if (open_devices(b, p, count) < 0) {
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "%s: none of the %u GPUs could be read: no "
				    "NVIDIA GPU is measured; check them with "
				    "nvidia-smi", name, count);
		goto fail;
	}
	p->library = NULL;	/* the caller's string may go */
	return b;
fail:
	nvml_close(b);
	return NULL;
}
