/* rocm_double.c - a stand-in for librocm_smi64.so on machines without an
 * AMD GPU: exactly the ROCm SMI entry points the project calls, under
 * their real names and with the declared signatures
  * (lib/sources/gpu_rocm_api.h),
 * reporting what the scenario file says (gpu_scenario.h): bus ids are
 * given as text there and packed here.  Built twice: librocm-double.so,
 * and librocm-double-noenergy.so without rsmi_dev_energy_count_get
 * (ROCM_DOUBLE_WITHOUT_ENERGY). */
#include "config.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "sources/gpu_rocm_api.h"
#include "gpu_scenario.h"

rsmi_init_fn rsmi_init;
rsmi_shut_down_fn rsmi_shut_down;
rsmi_num_devices_fn rsmi_num_monitor_devices;
rsmi_u64_fn rsmi_dev_unique_id_get;
rsmi_u64_fn rsmi_dev_pci_id_get;
rsmi_name_fn rsmi_dev_name_get;
rsmi_u32_fn rsmi_dev_drm_render_minor_get;
rsmi_energy_fn rsmi_dev_energy_count_get;
rsmi_sensor_fn rsmi_dev_power_ave_get;
rsmi_sensor_fn rsmi_dev_power_cap_get;
rsmi_u32_fn rsmi_dev_busy_percent_get;
rsmi_u32_fn rsmi_dev_memory_busy_percent_get;
rsmi_memory_fn rsmi_dev_memory_usage_get;
rsmi_memory_fn rsmi_dev_memory_total_get;
rsmi_status_string_fn rsmi_status_string;

static int initialised;

static struct gpu_scenario *
scenario(void)
{
	return gpu_scenario_get((const void *)rsmi_init);
}

/* Device IDX of the scenario, or NULL with *ERR the status to return. */
static struct gpu_scenario_device *
lookup(uint32_t idx, rsmi_status_t *err)
{
	struct gpu_scenario *sc = scenario();

	*err = RSMI_STATUS_INVALID_ARGS;
	if (initialised == 0) {
		*err = RSMI_STATUS_INIT_ERROR;
		return NULL;
	}
	if (idx >= sc->ndevices)
		return NULL;
	if (sc->dev[idx].lost) {
		/* Its sysfs files are gone. */
		*err = RSMI_STATUS_FILE_ERROR;
		return NULL;
	}
	*err = RSMI_STATUS_SUCCESS;
	return &sc->dev[idx];
}

rsmi_status_t
rsmi_init(uint64_t flags)
{
	struct gpu_scenario *sc = scenario();

	(void)flags;
	if (sc->init != GPU_SCENARIO_INIT_OK)
		return sc->init == GPU_SCENARIO_INIT_DRIVER_NOT_LOADED ?
			RSMI_STATUS_INIT_ERROR : RSMI_STATUS_INTERNAL_EXCEPTION;
	initialised++;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_shut_down(void)
{
	if (initialised == 0)
		return RSMI_STATUS_INIT_ERROR;
	initialised--;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_num_monitor_devices(uint32_t *n)
{
	if (initialised == 0)
		return RSMI_STATUS_INIT_ERROR;
	*n = (uint32_t)scenario()->ndevices;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_unique_id_get(uint32_t idx, uint64_t *id)
{
	struct gpu_scenario_device *d;
	unsigned long long v;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	/* The scenario's uuid is the id in hex. */
	if (sscanf(d->uuid, "%llx", &v) != 1)
		return RSMI_STATUS_NOT_SUPPORTED;
	*id = v;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_pci_id_get(uint32_t idx, uint64_t *bdf)
{
	struct gpu_scenario_device *d;
	unsigned int dom, bus, dev, fn;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (sscanf(d->bus_id, "%x:%x:%x.%x", &dom, &bus, &dev, &fn) != 4)
		return RSMI_STATUS_UNEXPECTED_DATA;
	*bdf = ((uint64_t)dom << 32) | ((uint64_t)(bus & 0xff) << 8) |
		((uint64_t)(dev & 0x1f) << 3) | (fn & 0x7);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_name_get(uint32_t idx, char *name, size_t len)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (strlen(d->name) >= len)
		return RSMI_STATUS_INSUFFICIENT_SIZE;
	memcpy(name, d->name, strlen(d->name) + 1);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_drm_render_minor_get(uint32_t idx, uint32_t *minor)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	*minor = d->minor;
	return RSMI_STATUS_SUCCESS;
}

#ifndef ROCM_DOUBLE_WITHOUT_ENERGY
rsmi_status_t
rsmi_dev_energy_count_get(uint32_t idx, uint64_t *counter, float *res,
			  uint64_t *ts)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (d->no_energy)
		return RSMI_STATUS_NOT_SUPPORTED;
	*res = (float)d->energy_resolution_uj;
	/* Counts of the resolution the caller is told. */
	*counter = gpu_scenario_energy(d, (double)*res * 1e-6);
	*ts = 0;
	return RSMI_STATUS_SUCCESS;
}
#endif

rsmi_status_t
rsmi_dev_power_ave_get(uint32_t idx, uint32_t sensor, uint64_t *uw)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (sensor != 0)
		return RSMI_STATUS_INVALID_ARGS;
	if (d->no_power)
		return RSMI_STATUS_NOT_SUPPORTED;
	*uw = (uint64_t)(d->power_w * 1e6 + 0.5);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_power_cap_get(uint32_t idx, uint32_t sensor, uint64_t *uw)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (sensor != 0)
		return RSMI_STATUS_INVALID_ARGS;
	*uw = (uint64_t)(d->power_limit_w * 1e6 + 0.5);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_busy_percent_get(uint32_t idx, uint32_t *pct)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	*pct = (uint32_t)(d->util + 0.5);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_memory_busy_percent_get(uint32_t idx, uint32_t *pct)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	*pct = (uint32_t)(d->mem_util + 0.5);
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_memory_usage_get(uint32_t idx, rsmi_memory_type_t type, uint64_t *v)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (type != RSMI_MEM_TYPE_VRAM)
		return RSMI_STATUS_NOT_SUPPORTED;
	*v = d->memory_used;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_dev_memory_total_get(uint32_t idx, rsmi_memory_type_t type, uint64_t *v)
{
	struct gpu_scenario_device *d;
	rsmi_status_t s;

	if ((d = lookup(idx, &s)) == NULL)
		return s;
	if (type != RSMI_MEM_TYPE_VRAM)
		return RSMI_STATUS_NOT_SUPPORTED;
	*v = d->memory_total;
	return RSMI_STATUS_SUCCESS;
}

rsmi_status_t
rsmi_status_string(rsmi_status_t status, const char **text)
{
	switch (status) {
	case RSMI_STATUS_SUCCESS:
		*text = "RSMI_STATUS_SUCCESS";
		break;
	case RSMI_STATUS_NOT_SUPPORTED:
		*text = "RSMI_STATUS_NOT_SUPPORTED";
		break;
	case RSMI_STATUS_INIT_ERROR:
		*text = "RSMI_STATUS_INIT_ERROR";
		break;
	case RSMI_STATUS_FILE_ERROR:
		*text = "RSMI_STATUS_FILE_ERROR";
		break;
	default:
		*text = "An unknown error occurred";
		break;
	}
	return RSMI_STATUS_SUCCESS;
}
