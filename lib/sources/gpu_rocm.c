/* gpu_rocm.c - AMD GPUs through ROCm SMI, loaded at run time (dlopen of
 * librocm_smi64.so.1, .so.7, .so.6, .so.5, then .so, or the path
 * configured):
 * a node without the amdgpu driver or the library has no AMD backend.
 * At open the devices are enumerated with their identity (unique id,
 * PCI bus id from the packed BDF, minor of /dev/dri/renderD*), VRAM,
 * power cap and energy counter resolution.  The energy counter's width
 * is not in the API: some parts keep 32 bits (at 15.3 uJ a count it
 * wraps in about a minute at full power), others 64.  It is taken as
 * 32 bits, sampled fast enough for that, until a reading of 2^32 or
 * more proves it wider. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sources/gpu.h"
#include "sources/gpu_internal.h"
#include "sources/gpu_rocm_api.h"
#include "base/log.h"

/* Render nodes: /dev/dri/renderD128 and on. */
#define DRM_MAJOR 226
/* The AMD compute driver's device: ROCm SMI finds no GPU without it. */
#define ROCM_KFD_DEVICE "/dev/kfd"
#define ROCM_NAME_MAX 64
#define ROCM_COUNTER_32BIT (UINT64_C(1) << 32)

struct rocm_fns {
	rsmi_init_fn *init;
	rsmi_shut_down_fn *shut_down;
	rsmi_num_devices_fn *num_devices;
	rsmi_u64_fn *unique_id;
	rsmi_u64_fn *pci_id;
	rsmi_name_fn *name;
	rsmi_u32_fn *render_minor;
	rsmi_energy_fn *energy;
	rsmi_sensor_fn *power_ave;
	rsmi_sensor_fn *power_cap;
	rsmi_u32_fn *busy;
	rsmi_u32_fn *memory_busy;
	rsmi_memory_fn *memory_usage;
	rsmi_memory_fn *memory_total;
	rsmi_status_string_fn *status_string;
};

#define SYM(name, member, required) \
	{ name, offsetof(struct rocm_fns, member), required }
static const struct ceems_dynlib_symbol rocm_symbols[] = {
	SYM("rsmi_init", init, true),
	SYM("rsmi_shut_down", shut_down, true),
	SYM("rsmi_num_monitor_devices", num_devices, true),
	SYM("rsmi_dev_unique_id_get", unique_id, true),
	SYM("rsmi_dev_pci_id_get", pci_id, true),
	SYM("rsmi_dev_name_get", name, true),
	SYM("rsmi_dev_drm_render_minor_get", render_minor, true),
	SYM("rsmi_dev_energy_count_get", energy, true),
	SYM("rsmi_dev_power_ave_get", power_ave, true),
	SYM("rsmi_dev_power_cap_get", power_cap, true),
	SYM("rsmi_dev_busy_percent_get", busy, true),
	SYM("rsmi_dev_memory_busy_percent_get", memory_busy, true),
	SYM("rsmi_dev_memory_usage_get", memory_usage, true),
	SYM("rsmi_dev_memory_total_get", memory_total, true),
	SYM("rsmi_status_string", status_string, false),
};
#undef SYM

struct rocm_priv {
	void *dl;
	const char *library;	/* while opening, for messages */
	struct rocm_fns f;
	uint32_t index[CEEMS_GPU_MAX_DEVICES];	/* ROCm SMI's device index */
};

static int
rocm_errno(rsmi_status_t s)
{
	switch (s) {
	case RSMI_STATUS_SUCCESS:
		return 0;
	case RSMI_STATUS_NOT_SUPPORTED:
	case RSMI_STATUS_NOT_YET_IMPLEMENTED:
		return -ENOTSUP;
	/* The device's sysfs files are gone: it fell off the bus, or the
	 * driver was unloaded. */
	case RSMI_STATUS_FILE_ERROR:
	case RSMI_STATUS_INIT_ERROR:
	case RSMI_STATUS_NOT_FOUND:
		return -ENODEV;
	default:
		return -EIO;
	}
}

static const char *
rocm_strerror(const struct rocm_priv *p, rsmi_status_t s, char *buf,
	      size_t size)
{
	const char *text = NULL;

	if (p->f.status_string != NULL &&
	    p->f.status_string(s, &text) != RSMI_STATUS_SUCCESS)
		text = NULL;
	if (text != NULL)
		snprintf(buf, size, "%.64s (ROCm SMI status %u)", text, s);
	else
		snprintf(buf, size, "ROCm SMI status %u", s);
	return buf;
}

static int
rocm_read_energy(struct ceems_gpu_backend *b, size_t i, uint64_t *counts)
{
	struct rocm_priv *p = b->priv;
	struct ceems_gpu_device *dev;
	uint64_t value, ts;
	rsmi_status_t s;
	float res;

	if (i >= b->ndevices)
		return -EINVAL;
	dev = &b->dev[i];
	s = p->f.energy(p->index[i], &value, &res, &ts);
	if (s != RSMI_STATUS_SUCCESS)
		return rocm_errno(s);
	if (dev->energy_range == ROCM_COUNTER_32BIT &&
	    value >= ROCM_COUNTER_32BIT) {
		dev->energy_range = 0;
		ceems_info("rocm_smi: GPU %zu (%s): the energy counter is "
			   "wider than 32 bits, it is not taken to wrap", i,
			   dev->uuid);
	}
	*counts = value;
	return 0;
}

static int
rocm_read_power(struct ceems_gpu_backend *b, size_t i, double *w)
{
	struct rocm_priv *p = b->priv;
	rsmi_status_t s;
	uint64_t uw;

	if (i >= b->ndevices)
		return -EINVAL;
	s = p->f.power_ave(p->index[i], 0, &uw);
	if (s != RSMI_STATUS_SUCCESS)
		return rocm_errno(s);
	*w = (double)uw / 1e6;
	return 0;
}

static int
rocm_read_usage(struct ceems_gpu_backend *b, size_t i,
		struct ceems_gpu_usage *u)
{
	struct rocm_priv *p = b->priv;
	uint32_t idx, pct;
	rsmi_status_t s;
	uint64_t v;
	int err = -EIO;

	memset(u, 0, sizeof(*u));
	if (i >= b->ndevices)
		return -EINVAL;
	idx = p->index[i];
	s = p->f.busy(idx, &pct);
	if (s == RSMI_STATUS_SUCCESS && pct <= 100) {
		u->have_util = true;
		u->util_pct = pct;
		err = 0;
	} else if (rocm_errno(s) == -ENODEV) {
		return -ENODEV;
	}
	if (p->f.memory_busy(idx, &pct) == RSMI_STATUS_SUCCESS && pct <= 100) {
		u->have_mem_util = true;
		u->mem_util_pct = pct;
		err = 0;
	}
	if (p->f.memory_usage(idx, RSMI_MEM_TYPE_VRAM, &v) ==
	    RSMI_STATUS_SUCCESS) {
		u->have_mem_used = true;
		u->mem_used_bytes = v;
		err = 0;
	}
	if (p->f.power_ave(idx, 0, &v) == RSMI_STATUS_SUCCESS) {
		u->have_power = true;
		u->power_w = (double)v / 1e6;
		err = 0;
	}
	return err;
}

static void
rocm_close(struct ceems_gpu_backend *b)
{
	struct rocm_priv *p = b->priv;

	if (p != NULL) {
		if (p->f.shut_down != NULL)
			p->f.shut_down();
		if (p->dl != NULL)
			dlclose(p->dl);
		free(p);
	}
	free(b);
}

static const struct ceems_gpu_backend_ops rocm_ops = {
	.kind = "rocm_smi",
	.read_energy = rocm_read_energy,
	.read_power = rocm_read_power,
	.read_usage = rocm_read_usage,
	.close = rocm_close,
};

/* Identity and limits of ROCm SMI device IDX into DEV.  0, or -errno
 * when it cannot be used (logged). */
static int
open_device(struct rocm_priv *p, uint32_t idx, struct ceems_gpu_device *dev)
{
	char name[ROCM_NAME_MAX], why[96];
	uint64_t v, ts;
	rsmi_status_t s;
	uint32_t minor;
	float res = 0.0f;

	memset(dev, 0, sizeof(*dev));
	dev->vendor = CEEMS_GPU_AMD;
	s = p->f.pci_id(idx, &v);
	if (s != RSMI_STATUS_SUCCESS ||
	    ceems_gpu_backend_bus_id_from_bdf(v, dev->bus_id, sizeof(dev->bus_id)) < 0) {
		ceems_warning("rocm_smi: GPU %u left out, its PCI id cannot be "
			      "read: %s", idx, rocm_strerror(p, s, why,
							      sizeof(why)));
		return s != RSMI_STATUS_SUCCESS ? rocm_errno(s) : -EIO;
	}
	if (p->f.unique_id(idx, &v) == RSMI_STATUS_SUCCESS)
		snprintf(dev->uuid, sizeof(dev->uuid), "0x%016llx",
			 (unsigned long long)v);
	memset(name, 0, sizeof(name));
	if (p->f.name(idx, name, sizeof(name)) == RSMI_STATUS_SUCCESS)
		ceems_gpu_backend_copy_id(dev->name, sizeof(dev->name), name,
				  sizeof(name));
	dev->major = -1;
	dev->minor = -1;
	if (p->f.render_minor(idx, &minor) == RSMI_STATUS_SUCCESS &&
	    minor <= 0xfffff) {
		dev->major = DRM_MAJOR;
		dev->minor = (int)minor;
	}
	if (p->f.memory_total(idx, RSMI_MEM_TYPE_VRAM, &v) == RSMI_STATUS_SUCCESS)
		dev->mem_total_bytes = v;
	if (p->f.power_cap(idx, 0, &v) == RSMI_STATUS_SUCCESS)
		dev->max_power_w = (double)v / 1e6;
	/* The counter's unit is known from a reading only: without one
	 * (or with a resolution that is no number of microjoules) the
	 * device's energy is its power integrated. */
	s = p->f.energy(idx, &v, &res, &ts);
	dev->has_energy_counter = s == RSMI_STATUS_SUCCESS && isfinite(res) &&
		res > 0.0f && res < 1e6f;
	dev->energy_unit_j = dev->has_energy_counter ? (double)res * 1e-6 : 0.0;
	dev->energy_range = dev->has_energy_counter && v >= ROCM_COUNTER_32BIT ?
		0 : ROCM_COUNTER_32BIT;
	ceems_info("rocm_smi: GPU %u %s (%s, %s), %s", idx, dev->uuid,
		   dev->name, dev->bus_id, dev->has_energy_counter ?
		   "energy counter" : "no energy counter: power integrated");
	return 0;
}

/* rsmi_init, its own chatter kept out of the agent's log: on a node
 * without the amdgpu driver the library writes lines of its own to
 * stdout and stderr ("Failed to open drm root directory", "Exception
 * caught") before it returns the error this backend reports in one
 * line.  The agent is single-threaded while it opens its sources. */
static rsmi_status_t
quiet_init(struct rocm_priv *p)
{
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
	int out = null >= 0 ? fcntl(1, F_DUPFD_CLOEXEC, 3) : -1;
	int errfd = out >= 0 ? fcntl(2, F_DUPFD_CLOEXEC, 3) : -1;
	rsmi_status_t s;

	fflush(stdout);
	fflush(stderr);
	if (errfd >= 0) {
		dup2(null, 1);
		dup2(null, 2);
	}
	s = p->f.init(0);
	if (errfd >= 0) {
		fflush(stdout);
		fflush(stderr);
		dup2(out, 1);
		dup2(errfd, 2);
	}
	if (errfd >= 0)
		close(errfd);
	if (out >= 0)
		close(out);
	if (null >= 0)
		close(null);
	return s;
}

/* rsmi_init and the device count; 0 or -errno with ERR set. */
static int
init_library(struct rocm_priv *p, uint32_t *count, int *errnum, char *err,
	     size_t err_size)
{
	rsmi_status_t s;
	char why[96];

	s = quiet_init(p);
	if (s != RSMI_STATUS_SUCCESS) {
		int e = rocm_errno(s) == -ENODEV ? -ENODEV : -EIO;

		p->f.shut_down = NULL;	/* nothing to shut down */

		ceems_gpu_backend_set_error(errnum, e, err, err_size,
				    "%s: ROCm SMI cannot start (%s): %s; no AMD "
				    "GPU is measured", p->library,
				    rocm_strerror(p, s, why, sizeof(why)),
				    e == -ENODEV ? "the amdgpu driver is not "
				    "loaded or there is no AMD GPU" :
				    "check the driver with rocm-smi");
		return e;
	}
	s = p->f.num_devices(count);
	if (s != RSMI_STATUS_SUCCESS || *count == 0) {
		p->f.shut_down();
		p->f.shut_down = NULL;
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "%s: %s: no AMD GPU is measured", p->library,
				    s != RSMI_STATUS_SUCCESS ?
				    rocm_strerror(p, s, why, sizeof(why)) :
				    "no GPU on this node");
		return -ENODEV;
	}
	return 0;
}

static int
open_devices(struct ceems_gpu_backend *b, struct rocm_priv *p, uint32_t count)
{
	uint32_t i;

	if (count > CEEMS_GPU_MAX_DEVICES) {
		ceems_warning("rocm_smi: %u GPUs, only the first %d are "
			      "measured", count, CEEMS_GPU_MAX_DEVICES);
		count = CEEMS_GPU_MAX_DEVICES;
	}
	for (i = 0; i < count; i++)
		if (open_device(p, i, &b->dev[b->ndevices]) == 0)
			p->index[b->ndevices++] = i;
	return b->ndevices > 0 ? 0 : -ENODEV;
}

struct ceems_gpu_backend *
ceems_gpu_rocm_smi_open(const char *library, int *errnum, char *err,
			size_t err_size)
{
	/* Debian's soname, then ROCm's own across its releases. */
	static const char *const defaults[] = {
		"librocm_smi64.so.1", "librocm_smi64.so.7", "librocm_smi64.so.6",
		"librocm_smi64.so.5", "librocm_smi64.so",
	};
	const char *const *names = defaults;
	struct ceems_gpu_backend *b;
	struct rocm_priv *p;
	size_t nnames = sizeof(defaults) / sizeof(defaults[0]);
	uint32_t count = 0;

	if (library != NULL && library[0] != '\0') {
		names = &library;
		nnames = 1;
	}
	ceems_gpu_backend_set_error(errnum, 0, err, err_size, "%s", "");
	/* ROCm SMI's library and the C++ runtime it brings are 4 MiB of
	 * resident memory that no dlclose gives back: with the usual names
	 * it is loaded only where the AMD compute driver is.  A library
	 * named in ceems.conf is loaded whatever. */
	if (names == defaults && access(ROCM_KFD_DEVICE, F_OK) < 0) {
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "no %s: the amdgpu driver is not loaded "
				    "or there is no AMD GPU; no AMD GPU is "
				    "measured", ROCM_KFD_DEVICE);
		return NULL;
	}
	b = ceems_gpu_backend_new(&rocm_ops, sizeof(*p), errnum, err, err_size);
	if (b == NULL)
		return NULL;
	p = b->priv;
	p->library = names[0];
	p->dl = ceems_gpu_backend_open_library(names, nnames, "AMD", rocm_symbols,
				       sizeof(rocm_symbols) /
				       sizeof(rocm_symbols[0]), &p->f,
				       sizeof(p->f), errnum, err, err_size);
	if (p->dl == NULL)
		goto fail;
	if (init_library(p, &count, errnum, err, err_size) < 0)
		goto fail;
	if (open_devices(b, p, count) < 0) {
		ceems_gpu_backend_set_error(errnum, -ENODEV, err, err_size,
				    "%s: none of the %u GPUs could be read: no "
				    "AMD GPU is measured; check them with "
				    "rocm-smi", names[0], count);
		goto fail;
	}
	p->library = NULL;
	return b;
fail:
	rocm_close(b);
	return NULL;
}
