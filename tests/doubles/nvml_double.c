/* nvml_double.c - a stand-in for libnvidia-ml.so.1 on machines without
 * an NVIDIA GPU: exactly the NVML entry points the project calls, under
 * their real names and with the declared signatures
  * (lib/sources/gpu_nvml_api.h),
 * reporting what the scenario file says (gpu_scenario.h).  The code under
 * test loads it through its normal dlopen path, given its file name.
 * Built twice: libnvml-double.so, and libnvml-double-noenergy.so without
 * nvmlDeviceGetTotalEnergyConsumption (NVML_DOUBLE_WITHOUT_ENERGY), a
 * library too old for the project. */
#include "config.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sources/gpu_nvml_api.h"
#include "gpu_scenario.h"

nvml_init_fn nvmlInit_v2;
nvml_shutdown_fn nvmlShutdown;
nvml_count_fn nvmlDeviceGetCount_v2;
nvml_handle_fn nvmlDeviceGetHandleByIndex_v2;
nvml_string_fn nvmlDeviceGetUUID;
nvml_pci_fn nvmlDeviceGetPciInfo_v3;
nvml_string_fn nvmlDeviceGetName;
nvml_uint_fn nvmlDeviceGetMinorNumber;
nvml_memory_fn nvmlDeviceGetMemoryInfo;
nvml_energy_fn nvmlDeviceGetTotalEnergyConsumption;
nvml_uint_fn nvmlDeviceGetPowerUsage;
nvml_uint_fn nvmlDeviceGetEnforcedPowerLimit;
nvml_util_fn nvmlDeviceGetUtilizationRates;
nvml_mig_mode_fn nvmlDeviceGetMigMode;
nvml_uint_fn nvmlDeviceGetMaxMigDeviceCount;
nvml_mig_handle_fn nvmlDeviceGetMigDeviceHandleByIndex;
nvml_uint_fn nvmlDeviceGetGpuInstanceId;
nvml_attributes_fn nvmlDeviceGetAttributes_v2;
nvml_gpm_alloc_fn nvmlGpmSampleAlloc;
nvml_gpm_free_fn nvmlGpmSampleFree;
nvml_gpm_get_fn nvmlGpmSampleGet;
nvml_gpm_mig_get_fn nvmlGpmMigSampleGet;
nvml_gpm_metrics_fn nvmlGpmMetricsGet;
nvml_gpm_support_fn nvmlGpmQueryDeviceSupport;
nvml_error_string_fn nvmlErrorString;

/* Handles point into this array: row = device, column 0 the device
 * itself, column 1 + k its MIG instance k. */
static char handles[GPU_SCENARIO_MAX_DEVICES][1 + GPU_SCENARIO_MAX_INSTANCES];
static int initialised;

struct nvmlGpmSample_st {
	size_t dev;
	int inst;		/* -1: the whole device */
	int taken;
};

static struct gpu_scenario *
scenario(void)
{
	return gpu_scenario_get((const void *)nvmlInit_v2);
}

/* The device (and instance, -1 for none) of handle H; NULL when H is
 * not a handle of a device of the scenario, or the library is not
 * initialised.  *ERR is the NVML return for that case. */
static struct gpu_scenario_device *
lookup(nvmlDevice_t h, int *inst, nvmlReturn_t *err)
{
	struct gpu_scenario *sc = scenario();
	const char *p = (const char *)h, *base = &handles[0][0];
	size_t off, d, k;

	*err = NVML_ERROR_INVALID_ARGUMENT;
	if (initialised == 0) {
		*err = NVML_ERROR_UNINITIALIZED;
		return NULL;
	}
	if (p < base || p >= base + sizeof(handles))
		return NULL;
	off = (size_t)(p - base);
	d = off / sizeof(handles[0]);
	k = off % sizeof(handles[0]);
	if (d >= sc->ndevices)
		return NULL;
	if (sc->dev[d].lost) {
		*err = NVML_ERROR_GPU_IS_LOST;
		return NULL;
	}
	if (k > 0 && (!sc->dev[d].mig || k > sc->dev[d].ninstances))
		return NULL;
	*inst = (int)k - 1;
	*err = NVML_SUCCESS;
	return &sc->dev[d];
}

nvmlReturn_t
nvmlInit_v2(void)
{
	struct gpu_scenario *sc = scenario();

	if (sc->init == GPU_SCENARIO_INIT_DRIVER_NOT_LOADED)
		return NVML_ERROR_DRIVER_NOT_LOADED;
	if (sc->init == GPU_SCENARIO_INIT_ERROR)
		return NVML_ERROR_UNKNOWN;
	initialised++;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlShutdown(void)
{
	if (initialised == 0)
		return NVML_ERROR_UNINITIALIZED;
	initialised--;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetCount_v2(unsigned int *count)
{
	if (initialised == 0)
		return NVML_ERROR_UNINITIALIZED;
	*count = (unsigned int)scenario()->ndevices;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *dev)
{
	struct gpu_scenario *sc = scenario();

	if (initialised == 0)
		return NVML_ERROR_UNINITIALIZED;
	if (index >= sc->ndevices)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (sc->dev[index].lost)
		return NVML_ERROR_GPU_IS_LOST;
	*dev = (nvmlDevice_t)(void *)&handles[index][0];
	return NVML_SUCCESS;
}

static nvmlReturn_t
copy_out(char *buf, unsigned int length, const char *s)
{
	if (strlen(s) >= length)
		return NVML_ERROR_INSUFFICIENT_SIZE;
	memcpy(buf, s, strlen(s) + 1);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUUID(nvmlDevice_t h, char *buf, unsigned int length)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	return copy_out(buf, length, k < 0 ? d->uuid : d->inst[k].uuid);
}

nvmlReturn_t
nvmlDeviceGetName(nvmlDevice_t h, char *buf, unsigned int length)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	return copy_out(buf, length, d->name);
}

nvmlReturn_t
nvmlDeviceGetPciInfo_v3(nvmlDevice_t h, nvmlPciInfo_t *pci)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	memset(pci, 0, sizeof(*pci));
	return copy_out(pci->busId, sizeof(pci->busId), d->bus_id);
}

nvmlReturn_t
nvmlDeviceGetMinorNumber(nvmlDevice_t h, unsigned int *minor)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	*minor = d->minor;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMemoryInfo(nvmlDevice_t h, nvmlMemory_t *mem)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	mem->total = k < 0 ? d->memory_total : d->inst[k].memory_total;
	mem->used = k < 0 ? d->memory_used : d->inst[k].memory_used;
	mem->free = mem->total > mem->used ? mem->total - mem->used : 0;
	return NVML_SUCCESS;
}

#ifndef NVML_DOUBLE_WITHOUT_ENERGY
nvmlReturn_t
nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t h, unsigned long long *mj)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (d->no_energy || k >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*mj = gpu_scenario_energy(d, 1e-3);
	return NVML_SUCCESS;
}
#endif

nvmlReturn_t
nvmlDeviceGetPowerUsage(nvmlDevice_t h, unsigned int *mw)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (d->no_power || k >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*mw = (unsigned int)(d->power_w * 1000.0 + 0.5);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t h, unsigned int *mw)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	*mw = (unsigned int)(d->power_limit_w * 1000.0 + 0.5);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetUtilizationRates(nvmlDevice_t h, nvmlUtilization_t *u)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	/* As the real one: no utilisation rates for a MIG device. */
	if (k >= 0)
		return NVML_ERROR_NOT_SUPPORTED;
	u->gpu = (unsigned int)(d->util + 0.5);
	u->memory = (unsigned int)(d->mem_util + 0.5);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMigMode(nvmlDevice_t h, unsigned int *current,
		     unsigned int *pending)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	*current = *pending = d->mig ? NVML_DEVICE_MIG_ENABLE : 0;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t h, unsigned int *count)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	*count = GPU_SCENARIO_MAX_INSTANCES - 1;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetMigDeviceHandleByIndex(nvmlDevice_t h, unsigned int index,
				    nvmlDevice_t *mig)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (k >= 0 || !d->mig)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (index >= d->ninstances)
		return NVML_ERROR_NOT_FOUND;
	*mig = (nvmlDevice_t)(void *)((char *)h + 1 + index);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetGpuInstanceId(nvmlDevice_t h, unsigned int *id)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (k < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	*id = d->inst[k].id;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlDeviceGetAttributes_v2(nvmlDevice_t h, nvmlDeviceAttributes_t *a)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	/* As the real library: attributes of MIG device handles only (a
	 * whole H200 on driver 580 answers "not supported"). */
	if (k < 0)
		return NVML_ERROR_NOT_SUPPORTED;
	memset(a, 0, sizeof(*a));
	a->multiprocessorCount = d->inst[k].sms;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlGpmSampleAlloc(nvmlGpmSample_t *sample)
{
	*sample = calloc(1, sizeof(**sample));
	return *sample != NULL ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t
nvmlGpmSampleFree(nvmlGpmSample_t sample)
{
	free(sample);
	return NVML_SUCCESS;
}

static nvmlReturn_t
take_sample(nvmlDevice_t h, int inst, nvmlGpmSample_t sample)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (k >= 0 || d->no_gpm)
		return NVML_ERROR_NOT_SUPPORTED;
	if (inst >= (int)d->ninstances)
		return NVML_ERROR_INVALID_ARGUMENT;
	sample->dev = (size_t)(d - scenario()->dev);
	sample->inst = inst;
	sample->taken = 1;
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlGpmSampleGet(nvmlDevice_t h, nvmlGpmSample_t sample)
{
	return take_sample(h, -1, sample);
}

nvmlReturn_t
nvmlGpmMigSampleGet(nvmlDevice_t h, unsigned int gi, nvmlGpmSample_t sample)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	size_t k;
	int inst;

	if ((d = lookup(h, &inst, &r)) == NULL)
		return r;
	for (k = 0; k < d->ninstances; k++)
		if (d->inst[k].id == gi)
			return take_sample(h, (int)k, sample);
	return NVML_ERROR_NOT_FOUND;
}

static nvmlReturn_t
metric(const struct gpu_scenario_device *d, int inst, unsigned int id,
       double *v)
{
	switch (id) {
	case NVML_GPM_METRIC_GRAPHICS_UTIL:
		*v = inst >= 0 ? d->inst[inst].util : d->util;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_SM_UTIL:
		*v = d->gpm_sm_active;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_SM_OCCUPANCY:
		*v = d->gpm_sm_occupancy;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
		*v = d->gpm_tensor;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_FP64_UTIL:
		*v = d->gpm_fp64;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_FP32_UTIL:
		*v = d->gpm_fp32;
		return NVML_SUCCESS;
	case NVML_GPM_METRIC_FP16_UTIL:
		*v = d->gpm_fp16;
		return NVML_SUCCESS;
	}
	return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t
nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m)
{
	struct gpu_scenario *sc = scenario();
	const struct gpu_scenario_device *d;
	unsigned int i;

	if (m->version != NVML_GPM_METRICS_GET_VERSION)
		return NVML_ERROR_INVALID_ARGUMENT;
	if (m->numMetrics > NVML_GPM_METRIC_MAX || m->sample1 == NULL ||
	    m->sample2 == NULL || !m->sample1->taken || !m->sample2->taken ||
	    m->sample1->dev != m->sample2->dev ||
	    m->sample1->inst != m->sample2->inst ||
	    m->sample2->dev >= sc->ndevices)
		return NVML_ERROR_INVALID_ARGUMENT;
	d = &sc->dev[m->sample2->dev];
	if (d->lost)
		return NVML_ERROR_GPU_IS_LOST;
	for (i = 0; i < m->numMetrics; i++)
		m->metrics[i].nvmlReturn = metric(d, m->sample2->inst,
			m->metrics[i].metricId, &m->metrics[i].value);
	return NVML_SUCCESS;
}

nvmlReturn_t
nvmlGpmQueryDeviceSupport(nvmlDevice_t h, nvmlGpmSupport_t *support)
{
	struct gpu_scenario_device *d;
	nvmlReturn_t r;
	int k;

	if ((d = lookup(h, &k, &r)) == NULL)
		return r;
	if (support->version != NVML_GPM_SUPPORT_VERSION)
		return NVML_ERROR_INVALID_ARGUMENT;
	support->isSupportedDevice = !d->no_gpm;
	return NVML_SUCCESS;
}

const char *
nvmlErrorString(nvmlReturn_t r)
{
	switch (r) {
	case NVML_SUCCESS:
		return "Success";
	case NVML_ERROR_NOT_SUPPORTED:
		return "Not Supported";
	case NVML_ERROR_DRIVER_NOT_LOADED:
		return "Driver Not Loaded";
	case NVML_ERROR_GPU_IS_LOST:
		return "GPU is lost";
	default:
		return "Unknown Error";
	}
}
