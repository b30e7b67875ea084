/* gpu_source.c - the GPUs' energy as an energy source: one counter per
 * device (domain GPU, numbered over all the backends in order, as the
 * ledger numbers devices).  A device with a cumulative energy counter
 * is read through the shared energy reader (wraps, resets, read errors
 * as everywhere else; its reader is kept at checkpoints).  A device
 * without one (-ENOTSUP at open or at its first read) has its power
 * integrated with the trapezoid rule over samples CEEMS_GPU_POWER_SAMPLE_NS
 * apart, which the source asks the agent for; an interval much longer
 * than that (a stalled agent) is a stall gap, never extrapolated.  A
 * lost device (-ENODEV) is a read error, logged once, and a gap until
 * it comes back, when its first reading is a baseline after a reset. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/energy.h"
#include "sources/gpu.h"
#include "base/log.h"

/* Power samples further apart than this are a stall: ten periods. */
#define GPU_POWER_MAX_GAP_NS (10 * CEEMS_GPU_POWER_SAMPLE_NS)
/* A counter delta needing more than the power limit times this is a
 * reset; the limit is exceeded briefly, and may be changed at run time. */
#define GPU_POWER_SAFETY_FACTOR 2.0
/* When the power limit is unknown: above any single device made. */
#define GPU_DEFAULT_MAX_POWER_W 3000.0
/* The driver updates its counter on its own schedule. */
#define GPU_SLACK_NS 100000000ULL

struct gpu_device {
	struct ceems_gpu_backend *backend;
	size_t index;		/* in the backend */
	bool integrated;	/* power integrated: no energy counter */
	bool measured;		/* a counter reading has been had */
	struct ceems_energy_reader reader;	/* counter, or shared state */
	double prev_w;		/* integrated: last good power */
};

struct gpu_priv {
	struct ceems_gpu_backend **backends;
	size_t nbackends;
	struct gpu_device *dev;	/* parallel to src->counters */
};

static const struct ceems_energy_source_ops gpu_ops;

static double
device_max_power_w(const struct ceems_gpu_device *dev)
{
	return dev->max_power_w > 0.0 ?
		dev->max_power_w * GPU_POWER_SAFETY_FACTOR :
		GPU_DEFAULT_MAX_POWER_W;
}

/* A read of device D failed with ERR: a gap; a lost device is said
 * so, once (the reader logs a change of state only). */
static void
device_fail(struct gpu_device *d, struct ceems_energy_counter *c, int err)
{
	if (err == -ENODEV)
		ceems_energy_reader_set_state(&d->reader, c,
			CEEMS_GAP_READ_ERROR, "the device is lost (fell off "
			"the bus, reset, or its driver was unloaded); check "
			"it with the vendor's tool");
	ceems_energy_reader_fail(&d->reader, c, err, err == -ENODEV ?
				 CEEMS_GAP_RESET : CEEMS_GAP_READ_ERROR);
}

static void
sample_power(struct gpu_device *d, struct ceems_energy_counter *c,
	     uint64_t now_ns)
{
	const struct ceems_gpu_device *dev = &d->backend->dev[d->index];
	double w;
	int err;

	err = d->backend->ops->read_power(d->backend, d->index, &w);
	if (err == 0 && !(w >= 0.0 && w <= device_max_power_w(dev)))
		err = -ERANGE;
	if (err < 0)
		device_fail(d, c, err);
	else
		ceems_energy_reader_power(&d->reader, c, &d->prev_w, w, now_ns,
					  GPU_POWER_MAX_GAP_NS);
}

/* A device whose counter turned out not to exist: its power from now. */
/* What D's figures may be off by (lib/model/energy_err.h): its energy
 * counter's unit, or, integrated, the power reading's accuracy and the
 * time between two samples. */
static void
set_resolution(const struct gpu_device *d, struct ceems_energy_counter *c)
{
	c->resolution_j = d->integrated ? 0 :
	    d->backend->dev[d->index].energy_unit_j;
	c->power_res_w = d->integrated ? CEEMS_GPU_POWER_ACCURACY_W : 0;
	c->power_lag_s = d->integrated ?
	    (double)CEEMS_GPU_POWER_SAMPLE_NS / 1e9 : 0;
}

static void
become_integrated(struct gpu_device *d, struct ceems_energy_counter *c)
{
	ceems_info("energy counter %s (gpu): no energy counter on this "
		   "device, its power is integrated", c->name);
	d->integrated = true;
	set_resolution(d, c);
	memset(&d->reader, 0, sizeof(d->reader));
	d->reader.rebase_gap = CEEMS_GAP_FIRST_READ;
}

static void
sample_device(struct gpu_device *d, struct ceems_energy_counter *c,
	      uint64_t now_ns)
{
	const struct ceems_gpu_device *dev;
	uint64_t counts;
	int err;

	if (d->integrated) {
		sample_power(d, c, now_ns);
		return;
	}
	err = d->backend->ops->read_energy(d->backend, d->index, &counts);
	if (err == -ENOTSUP && !d->measured) {
		become_integrated(d, c);
		sample_power(d, c, now_ns);
		return;
	}
	if (err < 0) {
		device_fail(d, c, err);
		return;
	}
	/* The backend may have learnt the counter is wider (ROCm SMI). */
	dev = &d->backend->dev[d->index];
	d->reader.lim.range = dev->energy_range;
	d->measured = true;
	ceems_energy_reader_update(&d->reader, c, counts, now_ns);
}

static void
gpu_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	struct gpu_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < src->ncounters; i++)
		sample_device(&priv->dev[i], &src->counters[i], now_ns);
}

static uint64_t
gpu_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	const struct gpu_priv *priv = src->priv;
	uint64_t min = 0, wrap;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		const struct gpu_device *d = &priv->dev[i];

		if (d->integrated)
			return CEEMS_GPU_POWER_SAMPLE_NS;
		/* Twice per wrap period, so that a late sample is safe. */
		wrap = ceems_energy_wrap_period_ns(&d->reader.lim) / 2;
		if (wrap != 0 && (min == 0 || wrap < min))
			min = wrap;
	}
	return min;
}

static void
gpu_close(struct ceems_energy_source *src)
{
	struct gpu_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < priv->nbackends; i++)
		ceems_gpu_backend_close(priv->backends[i]);
	free(priv->backends);
	free(priv->dev);
	free(priv);
	free(src->counters);
	free(src);
}

static struct ceems_energy_reader *
gpu_reader(struct ceems_energy_source *src, size_t i)
{
	struct gpu_priv *priv = src->priv;

	if (i >= src->ncounters || priv->dev[i].integrated)
		return NULL;
	return &priv->dev[i].reader;
}

static const struct ceems_energy_source_ops gpu_ops = {
	.kind = "gpu",
	.sample = gpu_sample,
	.max_sample_interval_ns = gpu_max_sample_interval_ns,
	.close = gpu_close,
	.reader = gpu_reader,
};

/* Set up device D / counter C (global number N) and take its first
 * reading at NOW_NS as the baseline. */
static void
open_device(struct gpu_device *d, struct ceems_energy_counter *c, size_t n,
	    uint64_t now_ns)
{
	const struct ceems_gpu_device *dev = &d->backend->dev[d->index];
	const char *id = dev->uuid[0] != '\0' ? dev->uuid : dev->bus_id;

	memset(c, 0, sizeof(*c));
	c->domain = CEEMS_DOMAIN_GPU;
	c->device = (int)n;
	if (id[0] != '\0')
		snprintf(c->name, sizeof(c->name), "%.16s/%.46s",
			 d->backend->ops->kind, id);
	else
		snprintf(c->name, sizeof(c->name), "%.16s/%zu",
			 d->backend->ops->kind, d->index);
	memset(&d->reader, 0, sizeof(d->reader));
	d->reader.rebase_gap = CEEMS_GAP_FIRST_READ;
	d->reader.lim.unit_j = dev->energy_unit_j;
	d->reader.lim.range = dev->energy_range;
	d->reader.lim.max_power_w = device_max_power_w(dev);
	d->reader.lim.slack_ns = GPU_SLACK_NS;
	d->integrated = !dev->has_energy_counter || !(dev->energy_unit_j > 0.0);
	set_resolution(d, c);
	sample_device(d, c, now_ns);
	/* The baseline is no measurement: nothing pending from open. */
	c->pending_j = 0.0;
	c->pending_gap = CEEMS_GAP_NONE;
}

struct ceems_energy_source *
ceems_gpu_source_open(struct ceems_gpu_backend **backends, size_t nbackends,
		      uint64_t now_ns)
{
	struct ceems_energy_source *src = NULL;
	struct gpu_priv *priv = NULL;
	size_t b, i, n = 0;

	if (nbackends == 0)
		return NULL;
	src = calloc(1, sizeof(*src));
	priv = calloc(1, sizeof(*priv));
	if (src != NULL && priv != NULL) {
		src->counters = calloc(CEEMS_GPU_MAX_DEVICES,
				       sizeof(*src->counters));
		priv->dev = calloc(CEEMS_GPU_MAX_DEVICES, sizeof(*priv->dev));
		priv->backends = calloc(nbackends, sizeof(*priv->backends));
	}
	if (src == NULL || priv == NULL || src->counters == NULL ||
	    priv->dev == NULL || priv->backends == NULL) {
		ceems_error("gpu: out of memory");
		for (b = 0; b < nbackends; b++)
			ceems_gpu_backend_close(backends[b]);
		if (priv != NULL) {
			free(priv->dev);
			free(priv->backends);
		}
		free(priv);
		if (src != NULL)
			free(src->counters);
		free(src);
		return NULL;
	}
	src->ops = &gpu_ops;
	src->priv = priv;
	memcpy(priv->backends, backends, nbackends * sizeof(*backends));
	priv->nbackends = nbackends;
	for (b = 0; b < nbackends; b++) {
		for (i = 0; backends[b] != NULL && i < backends[b]->ndevices; i++) {
			if (n == CEEMS_GPU_MAX_DEVICES) {
				ceems_warning("gpu: more than %d devices; %s "
					      "device %zu is not measured",
					      CEEMS_GPU_MAX_DEVICES,
					      backends[b]->ops->kind, i);
				continue;
			}
			priv->dev[n].backend = backends[b];
			priv->dev[n].index = i;
			open_device(&priv->dev[n], &src->counters[n], n, now_ns);
			n++;
		}
	}
	src->ncounters = n;
	return src;
}

int
ceems_gpu_source_device(struct ceems_energy_source *src, size_t i,
			struct ceems_gpu_backend **backend,
			size_t *backend_index, bool *power_integrated)
{
	struct gpu_priv *priv;

	if (src == NULL || src->ops != &gpu_ops || i >= src->ncounters)
		return -EINVAL;
	priv = src->priv;
	if (backend != NULL)
		*backend = priv->dev[i].backend;
	if (backend_index != NULL)
		*backend_index = priv->dev[i].index;
	if (power_integrated != NULL)
		*power_integrated = priv->dev[i].integrated;
	return 0;
}
