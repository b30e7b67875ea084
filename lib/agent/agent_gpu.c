/* agent_gpu.c - the node's GPUs in the node agent: opening the vendor
 * libraries once, matching each job's GPUs to the devices, reading the
 * devices' usage once per tick, and keeping each job's account of what
 * its GPUs did.  The energy itself is the GPU source's (lib/sources/gpu.h); the
 * ledger splits it by the shares computed here (doc/attribution.md). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "agent/agent_gpu.h"
#include "agent/agent_internal.h"
#include "base/fileio.h"
#include "sources/gres.h"
#include "sources/gpu_internal.h"
#include "base/log.h"
#include "base/tick_path.h"

static void load_mig_minors(struct ceems_agent *a);

/* Open one vendor's backend into LIST.  Why it could not, when that is
 * the normal case of a node without that vendor's GPUs (no library, no
 * driver, no device), goes to WHY for the one line the caller logs;
 * anything else is a warning now. */
static void
open_backend(struct ceems_gpu_backend **list, size_t *n, const char *vendor,
	     const char *library,
	     struct ceems_gpu_backend *(*open_fn)(const char *, int *, char *,
						  size_t),
	     char *why, size_t why_size)
{
	struct ceems_gpu_backend *b;
	char err[256] = "";
	int errnum = 0;
	size_t len = strlen(why);

	if (strcmp(library, "none") == 0)
		return;
	b = open_fn(library, &errnum, err, sizeof(err));
	if (b != NULL && b->ndevices == 0) {
		ceems_gpu_backend_close(b);
		b = NULL;
		errnum = -ENODEV;
		snprintf(err, sizeof(err), "%s: no device", library);
	}
	if (b != NULL) {
		list[(*n)++] = b;
		return;
	}
	if (errnum == -ENOENT || errnum == -ENODEV)
		snprintf(why + len, why_size - len, "%s%s: %s",
			 len > 0 ? "; " : "", vendor, err);
	else
		ceems_warning("%s GPUs: not measured: %s", vendor, err);
}

void
ceems_agent_gpu_open(struct ceems_agent *a, uint64_t now_ns)
{
	struct ceems_gpu_backend *list[2];
	struct agent_gpus *g = &a->gpus;
	struct ceems_energy_source *src;
	char why[600] = "";
	size_t nb = 0;

	memset(g, 0, sizeof(*g));
	g->source = -1;
	open_backend(list, &nb, "NVIDIA", a->config.gpu_nvml_library,
		     ceems_gpu_nvml_open, why, sizeof(why));
	open_backend(list, &nb, "AMD", a->config.gpu_rocm_smi_library,
		     ceems_gpu_rocm_smi_open, why, sizeof(why));
	if (nb == 0) {
		if (why[0] != '\0')
			ceems_info("no GPU measured (%s)", why);
		return;
	}
	if (a->nsources >= MAX_SOURCES) {
		ceems_error("GPUs: not measured: the agent has %d energy sources already, its most",
			    MAX_SOURCES);
		for (size_t i = 0; i < nb; i++)
			ceems_gpu_backend_close(list[i]);
		return;
	}
	/* On failure the source has closed the backends. */
	if ((src = ceems_gpu_source_open(list, nb, now_ns)) == NULL) {
		ceems_error("GPUs: not measured: out of memory for their energy source");
		return;
	}
	for (size_t i = 0; i < src->ncounters && i < CEEMS_GPU_MAX_DEVICES; i++) {
		bool integrated = false;

		if (ceems_gpu_source_device(src, i, &g->dev[i].backend,
					    &g->dev[i].index, &integrated) < 0)
			break;
		g->dev[i].integrated = integrated;
		g->n = i + 1;
	}
	for (size_t i = 0; i < g->n; i++) {
		const struct ceems_gpu_device *d =
			&g->dev[i].backend->dev[g->dev[i].index];

		ceems_info("GPU %zu: %s %s, %s, bus %s, energy from %s", i,
			   ceems_gpu_backend_vendor_name(d->vendor), d->name, d->uuid,
			   d->bus_id, g->dev[i].integrated ?
			   "its power, integrated" : "its energy counter");
	}
	g->source = (int)a->nsources;
	a->sources[a->nsources++] = src;
	load_mig_minors(a);
}

static const struct ceems_gpu_device *
device(const struct ceems_agent *a, size_t i)
{
	return &a->gpus.dev[i].backend->dev[a->gpus.dev[i].index];
}

/* Remember that nvidia-caps file MAJOR:M grants instance GI of the
 * NVIDIA device whose minor is GPU. */
static void
add_cap(struct ceems_agent *a, int major, const struct ceems_mig_minor *m)
{
	struct agent_gpus *g = &a->gpus;

	for (size_t i = 0; i < g->n; i++) {
		struct ceems_gpu_device *d =
			&g->dev[i].backend->dev[g->dev[i].index];

		if (d->vendor != CEEMS_GPU_NVIDIA || d->minor != (int)m->gpu)
			continue;
		for (size_t k = 0; k < d->ninstances; k++) {
			if (d->inst[k].id != m->gi ||
			    g->ncaps >= sizeof(g->caps) / sizeof(g->caps[0]))
				continue;
			g->caps[g->ncaps].major = major;
			g->caps[g->ncaps].minor = (int)m->minor;
			g->caps[g->ncaps].dev = (uint8_t)i;
			g->caps[g->ncaps].inst = (uint8_t)k;
			g->ncaps++;
			if (m->ci < 0) {
				d->inst[k].major = major;
				d->inst[k].minor = (int)m->minor;
			}
		}
	}
}

/* The MIG instances' capability files, from the driver's files under
 * procfs_root; nothing when the node has no MIG (no such files). */
static void
load_mig_minors(struct ceems_agent *a)
{
	char path[CEEMS_CONFIG_PATH_MAX + 48], *text, *line, *save = NULL;
	struct ceems_mig_minor m;
	int major;

	text = malloc(65536);
	if (text == NULL)
		return;
	snprintf(path, sizeof(path), "%s/devices", a->config.procfs_root);
	if (ceems_fileio_read_text_file(path, text, 65536) < 0 ||
	    (major = ceems_gres_proc_devices_major(text, "nvidia-caps")) < 0) {
		free(text);
		return;
	}
	snprintf(path, sizeof(path), "%s/driver/nvidia-caps/mig-minors",
		 a->config.procfs_root);
	if (ceems_fileio_read_text_file(path, text, 65536) >= 0)
		for (line = strtok_r(text, "\n", &save); line != NULL;
		     line = strtok_r(NULL, "\n", &save))
			if (ceems_gres_mig_minor_parse(line, &m) == 0)
				add_cap(a, major, &m);
	free(text);
}

/* "dev:MAJOR:MINOR" into its numbers, or false. */
static bool
parse_dev_id(const char *id, int *major, int *minor)
{
	char tail;

	return sscanf(id, "dev:%d:%d%c", major, minor, &tail) == 2 &&
	       *major >= 0 && *minor >= 0;
}

/* The device (and instance, -1 for the whole) that ID names, or false. */
static bool
match_id(const struct ceems_agent *a, const char *id, size_t *dev, int *inst)
{
	char bus[CEEMS_GPU_ID_MAX];
	int major, minor;
	bool by_dev = parse_dev_id(id, &major, &minor);

	/* A bus id in any spelling ("00000000:3B:00.0") is the backends'. */
	if (ceems_gpu_backend_bus_id_normalise(id, bus, sizeof(bus)) < 0)
		bus[0] = '\0';

	for (size_t c = 0; by_dev && c < a->gpus.ncaps; c++)
		if (a->gpus.caps[c].major == major &&
		    a->gpus.caps[c].minor == minor) {
			*dev = a->gpus.caps[c].dev;
			*inst = a->gpus.caps[c].inst;
			return true;
		}
	for (size_t i = 0; i < a->gpus.n; i++) {
		const struct ceems_gpu_device *d = device(a, i);

		if (by_dev ? d->major == major && d->minor == minor :
		    strcasecmp(d->uuid, id) == 0 ||
		    (bus[0] != '\0' && strcmp(d->bus_id, bus) == 0)) {
			*dev = i;
			*inst = -1;
			return true;
		}
		for (size_t k = 0; k < d->ninstances; k++) {
			const struct ceems_gpu_instance *in = &d->inst[k];

			if (by_dev ? in->major == major && in->minor == minor :
			    in->uuid[0] != '\0' && strcasecmp(in->uuid, id) == 0) {
				*dev = i;
				*inst = (int)k;
				return true;
			}
		}
	}
	return false;
}

/* "gres:N": the N-th device by minor number, Slurm's order when
 * gres.conf does not say (the device files' numeric suffixes). */
static bool
match_gres_index(const struct ceems_agent *a, const char *id, size_t *dev)
{
	unsigned int n, seen = 0;
	char tail;

	if (sscanf(id, "gres:%u%c", &n, &tail) != 1)
		return false;
	for (int minor = 0; minor < 4096 && seen <= n; minor++)
		for (size_t i = 0; i < a->gpus.n; i++)
			if (device(a, i)->minor == minor && seen++ == n) {
				*dev = i;
				return true;
			}
	return false;
}

/* "dev:195:0/1/4" or "gres:2/1/4": the job holds 1 of the device's 4
 * shared units (shards, MPS).  ID without the suffix into BASE; the
 * share, 1 without one.  False for a malformed suffix. */
static bool
split_share(const char *id, char *base, size_t size, double *share)
{
	const char *slash = strchr(id, '/');
	unsigned long long a, b;
	char tail;

	*share = 1;
	snprintf(base, size, "%s", id);
	if (slash == NULL || (strncmp(id, "dev:", 4) != 0 &&
			      strncmp(id, "gres:", 5) != 0))
		return true;
	base[slash - id < (ptrdiff_t)size ? slash - id : 0] = '\0';
	if (sscanf(slash, "/%llu/%llu%c", &a, &b, &tail) != 2 || a == 0 ||
	    b == 0)
		return false;
	*share = a >= b ? 1 : (double)a / (double)b;
	return true;
}

static double
instance_share(const struct ceems_gpu_device *d, int inst)
{
	unsigned int all = 0;

	if (inst < 0)
		return 1;
	for (size_t k = 0; k < d->ninstances; k++)
		all += d->inst[k].slices;
	if (all > 0 && d->inst[inst].slices > 0)
		return (double)d->inst[inst].slices / all;
	return 1.0 / (double)d->ninstances;
}

uint64_t
ceems_agent_gpu_device_key(const struct ceems_agent *a, size_t i)
{
	const struct ceems_gpu_device *d = device(a, i);
	uint64_t h = 14695981039346656037ULL;	/* FNV-1a */

	for (const char *p = d->uuid; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	h = (h ^ '|') * 1099511628211ULL;
	for (const char *p = d->bus_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return h;
}

static void
add_account(const struct ceems_agent *a, struct agent_gpu_job *out,
	    size_t dev, int inst, double share)
{
	const struct ceems_gpu_device *d = device(a, dev);
	struct agent_gpu_account *acc;

	for (uint32_t k = 0; k < out->n; k++)
		if (out->acc[k].device == (int32_t)dev &&
		    out->acc[k].instance == inst)
			return;
	if (out->n >= CEEMS_LEDGER_MAX_GPUS)
		return;
	acc = &out->acc[out->n++];
	memset(acc, 0, sizeof(*acc));
	acc->device = (int32_t)dev;
	acc->instance = inst;
	acc->share = inst >= 0 ? instance_share(d, inst) : share;
	acc->power_integrated = a->gpus.dev[dev].integrated;
	acc->device_key = ceems_agent_gpu_device_key(a, dev);
	acc->mem_total_bytes = d->mem_total_bytes;
	if (inst >= 0 && d->ninstances > 0)
		acc->mem_total_bytes = (uint64_t)(acc->share *
						  (double)d->mem_total_bytes);
}

/* Any device split into MIG instances: then a GRES index is a slice,
 * not a device, and "gres:N" cannot say which. */
static bool
any_partitioned(const struct ceems_agent *a)
{
	for (size_t i = 0; i < a->gpus.n; i++)
		if (device(a, i)->ninstances > 0)
			return true;
	return false;
}

/* A job named both a partitioned device (its /dev/nvidiaN, which every
 * MIG slice's gres.conf line lists) and one of its instances: it holds
 * the instance.  Drop the whole-device accounts of such devices. */
static void
keep_instances(struct agent_gpu_job *out)
{
	uint32_t k = 0;

	while (k < out->n) {
		bool slice = false;

		for (uint32_t m = 0; m < out->n && out->acc[k].instance < 0; m++)
			slice |= out->acc[m].device == out->acc[k].device &&
				 out->acc[m].instance >= 0;
		if (!slice) {
			k++;
			continue;
		}
		memmove(&out->acc[k], &out->acc[k + 1],
			(out->n - k - 1) * sizeof(out->acc[0]));
		out->n--;
	}
}

/* "gres:N" ids, when no id named a device: the N-th device by minor. */
static void
resolve_gres_indices(const struct ceems_agent *a,
		     const struct ceems_agent_job_spec *spec, bool exact,
		     struct agent_gpu_job *out)
{
	for (uint32_t i = 0; i < spec->ngpu_ids && i < CEEMS_AGENT_MAX_GPU_IDS;
	     i++) {
		char id[CEEMS_AGENT_GPU_ID_MAX];
		double share;
		size_t dev;

		if (!split_share(spec->gpu_ids[i], id, sizeof(id), &share) ||
		    strncmp(id, "gres:", 5) != 0)
			continue;
		if (exact)
			ceems_info("job %u: GPU %s has no device file in gres.conf while its others do: its energy goes to idle",
				   spec->jobid, id);
		else if (any_partitioned(a))
			ceems_info("job %u: GPU %s: a GRES index alone cannot name a MIG slice (give each slice its files in gres.conf): its energy goes to idle",
				   spec->jobid, id);
		else if (match_gres_index(a, id, &dev))
			add_account(a, out, dev, -1, share);
		else
			ceems_info("job %u: GPU %s matches none of this node's %zu",
				   spec->jobid, id, a->gpus.n);
	}
}

int
ceems_agent_gpu_resolve(const struct ceems_agent *a,
		  const struct ceems_agent_job_spec *spec,
		  struct agent_gpu_job *out)
{
	bool exact = false;

	memset(out, 0, sizeof(*out));
	for (uint32_t i = 0; i < spec->ngpu_ids && i < CEEMS_AGENT_MAX_GPU_IDS;
	     i++) {
		char id[CEEMS_AGENT_GPU_ID_MAX];
		double share;
		size_t dev;
		int inst;

		if (!split_share(spec->gpu_ids[i], id, sizeof(id), &share)) {
			ceems_info("job %u: GPU %s: not a share ceems knows",
				   spec->jobid, spec->gpu_ids[i]);
			continue;
		}
		if (strncmp(id, "gres:", 5) == 0)
			continue;
		if (match_id(a, id, &dev, &inst)) {
			add_account(a, out, dev, inst, share);
			exact = true;
		} else {
			ceems_info("job %u: GPU %s matches none of this node's %zu",
				   spec->jobid, id, a->gpus.n);
		}
	}
	resolve_gres_indices(a, spec, exact, out);
	keep_instances(out);
	return (int)out->n;
}

CEEMS_TICK_PATH void
ceems_agent_gpu_read_usage(struct ceems_agent *a)
{
	struct agent_gpus *g = &a->gpus;

	for (size_t i = 0; i < g->n; i++) {
		int r = ceems_gpu_backend_read_usage(g->dev[i].backend,
						     g->dev[i].index,
						     &g->usage[i]);

		g->have_usage[i] = r == 0;
		if (r < 0 && !g->lost_logged[i]) {
			ceems_warning("GPU %zu (%s): cannot read its usage (%s); "
				      "its jobs' GPU figures stop until it answers",
				      i, device(a, i)->uuid, strerror(-r));
			g->lost_logged[i] = true;
		} else if (r == 0 && g->lost_logged[i]) {
			ceems_info("GPU %zu (%s): usage read again", i,
				   device(a, i)->uuid);
			g->lost_logged[i] = false;
		}
	}
}

/* Instance K's activity weight on device I this tick: its slices, times
 * its utilisation when the driver gives each instance's. */
static double
instance_weight(const struct ceems_agent *a, size_t i, size_t k, bool by_use)
{
	const struct ceems_gpu_device *d = device(a, i);
	double slices = d->inst[k].slices > 0 ? d->inst[k].slices : 1;

	if (!by_use)
		return slices;
	return slices * a->gpus.usage[i].inst_util_pct[k] / 100.0;
}

/* Instance INST's part of device I this tick: by slices weighted by
 * activity when every instance's activity is known and any is busy,
 * else by slices alone. */
static double
instance_part(const struct ceems_agent *a, size_t i, int inst)
{
	const struct ceems_gpu_device *d = device(a, i);
	const struct ceems_gpu_usage *u = &a->gpus.usage[i];
	bool by_use = a->gpus.have_usage[i];
	double all = 0;

	if (inst < 0)
		return 1;
	for (size_t k = 0; k < d->ninstances && by_use; k++)
		by_use = u->have_inst_util[k] && isfinite(u->inst_util_pct[k]) &&
			 u->inst_util_pct[k] >= 0;
	for (size_t k = 0; k < d->ninstances; k++)
		all += instance_weight(a, i, k, by_use);
	if (by_use && all <= 0) {
		by_use = false;
		all = 0;
		for (size_t k = 0; k < d->ninstances; k++)
			all += instance_weight(a, i, k, false);
	}
	return all > 0 ? instance_weight(a, i, (size_t)inst, by_use) / all : 0;
}

/* Account ACC's part of its device this tick: a MIG instance's by
 * activity, a shared device's by its share. */
static double
account_part(const struct ceems_agent *a, const struct agent_gpu_account *acc)
{
	if (acc->instance < 0)
		return acc->share;
	return instance_part(a, (size_t)acc->device, acc->instance);
}

void
ceems_agent_gpu_shares(const struct ceems_agent *a, const struct agent_gpu_job *g,
		 double share[CEEMS_LEDGER_MAX_GPUS])
{
	memset(share, 0, CEEMS_LEDGER_MAX_GPUS * sizeof(share[0]));
	for (uint32_t k = 0; k < g->n; k++) {
		const struct agent_gpu_account *acc = &g->acc[k];

		if (acc->device < 0 || (size_t)acc->device >= a->gpus.n)
			continue;
		share[acc->device] += account_part(a, acc);
		if (share[acc->device] > 1)
			share[acc->device] = 1;
	}
}

/* Device I's figures this tick, as the account of instance INST sees
 * them: the instance's own where the driver gives them. */
static void
tick_figures(const struct ceems_agent *a, size_t i, int inst, double part,
	     bool have[GPU_NFIGURES], double v[GPU_NFIGURES],
	     bool *have_mem, uint64_t *mem)
{
	const struct ceems_gpu_usage *u = &a->gpus.usage[i];

	memset(have, 0, GPU_NFIGURES * sizeof(have[0]));
	*have_mem = false;
	if (!a->gpus.have_usage[i])
		return;
	have[GPU_FIG_UTIL] = u->have_util;
	v[GPU_FIG_UTIL] = u->util_pct;
	have[GPU_FIG_MEM_UTIL] = u->have_mem_util;
	v[GPU_FIG_MEM_UTIL] = u->mem_util_pct;
	have[GPU_FIG_SM_ACTIVE] = u->have_sm_active;
	v[GPU_FIG_SM_ACTIVE] = u->sm_active_pct;
	have[GPU_FIG_SM_OCCUPANCY] = u->have_sm_occupancy;
	v[GPU_FIG_SM_OCCUPANCY] = u->sm_occupancy_pct;
	have[GPU_FIG_TENSOR] = u->have_tensor_active;
	v[GPU_FIG_TENSOR] = u->tensor_active_pct;
	have[GPU_FIG_FP] = u->have_fp_active;
	v[GPU_FIG_FP] = u->fp_active_pct;
	have[GPU_FIG_POWER] = u->have_power;
	v[GPU_FIG_POWER] = u->power_w * part;
	*have_mem = u->have_mem_used;
	*mem = u->mem_used_bytes;
	if (inst >= 0) {
		/* A device-wide figure says nothing of one instance. */
		have[GPU_FIG_UTIL] = u->have_inst_util[inst];
		v[GPU_FIG_UTIL] = u->inst_util_pct[inst];
		for (int f = GPU_FIG_MEM_UTIL; f < GPU_FIG_POWER; f++)
			have[f] = false;
		*have_mem = u->have_inst_mem_used[inst];
		*mem = u->inst_mem_used_bytes[inst];
	}
}

CEEMS_TICK_PATH void
ceems_agent_gpu_charge(const struct ceems_agent *a, struct agent_gpu_job *g,
		 const struct ceems_ledger_node_tick *node,
		 const struct ceems_ledger_job_share *share, double dt_s)
{
	double part[CEEMS_LEDGER_MAX_GPUS];

	if (g->n == 0 || !(dt_s > 0))
		return;
	ceems_agent_gpu_shares(a, g, part);
	for (uint32_t k = 0; k < g->n; k++) {
		struct agent_gpu_account *acc = &g->acc[k];
		size_t i = (size_t)acc->device;
		bool have[GPU_NFIGURES], have_mem;
		double v[GPU_NFIGURES];
		uint64_t mem = 0;

		if (acc->device < 0 || i >= a->gpus.n)
			continue;
		/* The device's energy for the job, split among its
		 * accounts on that device by their parts: whenever this
		 * device was measured, whatever the job's other GPUs did. */
		if (i < node->ngpus && node->gpu[i].measured &&
		    node->gpu[i].gap == CEEMS_GAP_NONE && part[i] > 0) {
			acc->energy_j += share->gpu_device_j[i] *
					 account_part(a, acc) / part[i];
			acc->have_energy = 1;
		}
		tick_figures(a, i, acc->instance, account_part(a, acc), have,
			     v, &have_mem, &mem);
		for (int f = 0; f < GPU_NFIGURES; f++)
			if (have[f] && isfinite(v[f]) && v[f] >= 0) {
				acc->sum[f] += v[f] * dt_s;
				acc->secs[f] += dt_s;
			}
		if (have_mem && (!acc->have_mem_peak || mem > acc->mem_peak_bytes)) {
			acc->mem_peak_bytes = mem;
			acc->have_mem_peak = 1;
		}
	}
}

static bool
mean(const struct agent_gpu_account *acc, int f, double *out)
{
	if (!(acc->secs[f] > 0))
		return false;
	*out = acc->sum[f] / acc->secs[f];
	return isfinite(*out);
}

void
ceems_agent_gpu_fill_report(const struct ceems_agent *a, const struct agent_gpu_job *g,
		 struct ceems_agent_job_report *r)
{
	r->ngpus = 0;
	for (uint32_t k = 0; k < g->n && k < CEEMS_LEDGER_MAX_GPUS; k++) {
		const struct agent_gpu_account *acc = &g->acc[k];
		struct ceems_agent_gpu_report *o = &r->gpus[r->ngpus];
		const struct ceems_gpu_device *d;

		if (acc->device < 0 || (size_t)acc->device >= a->gpus.n)
			continue;
		d = device(a, (size_t)acc->device);
		memset(o, 0, sizeof(*o));
		snprintf(o->uuid, sizeof(o->uuid), "%s",
			 acc->instance >= 0 && d->inst[acc->instance].uuid[0] ?
			 d->inst[acc->instance].uuid : d->uuid);
		snprintf(o->bus_id, sizeof(o->bus_id), "%s", d->bus_id);
		o->instance = acc->instance >= 0 ?
			      (int)d->inst[acc->instance].id : -1;
		o->share = acc->share;
		o->power_integrated = acc->power_integrated != 0;
		o->have_energy = acc->have_energy != 0;
		o->energy_j = acc->energy_j;
		o->have_util = mean(acc, GPU_FIG_UTIL, &o->util_pct);
		o->have_mem_util = mean(acc, GPU_FIG_MEM_UTIL, &o->mem_util_pct);
		o->have_sm_active = mean(acc, GPU_FIG_SM_ACTIVE, &o->sm_active_pct);
		o->have_sm_occupancy = mean(acc, GPU_FIG_SM_OCCUPANCY,
					    &o->sm_occupancy_pct);
		o->have_tensor_active = mean(acc, GPU_FIG_TENSOR,
					     &o->tensor_active_pct);
		o->have_fp_active = mean(acc, GPU_FIG_FP, &o->fp_active_pct);
		o->have_mem_peak = acc->have_mem_peak != 0;
		o->mem_peak_bytes = acc->mem_peak_bytes;
		o->mem_total_bytes = acc->mem_total_bytes;
		r->ngpus++;
	}
}

void
ceems_agent_gpu_series_figures(const struct ceems_agent *a,
			 const struct agent_gpu_job *g, double *power_w,
			 double *util_pct)
{
	double p = 0, u = 0;
	unsigned int np = 0, nu = 0;

	for (uint32_t k = 0; k < g->n; k++) {
		const struct agent_gpu_account *acc = &g->acc[k];
		bool have[GPU_NFIGURES], have_mem;
		double v[GPU_NFIGURES];
		uint64_t mem;

		if (acc->device < 0 || (size_t)acc->device >= a->gpus.n)
			continue;
		tick_figures(a, (size_t)acc->device, acc->instance,
			     account_part(a, acc), have, v, &have_mem, &mem);
		if (have[GPU_FIG_POWER] && isfinite(v[GPU_FIG_POWER])) {
			p += v[GPU_FIG_POWER];
			np++;
		}
		if (have[GPU_FIG_UTIL] && isfinite(v[GPU_FIG_UTIL])) {
			u += v[GPU_FIG_UTIL];
			nu++;
		}
	}
	*power_w = np > 0 ? p : NAN;
	*util_pct = nu > 0 ? u / nu : NAN;
}

bool
ceems_agent_gpu_job_sane(const struct agent_gpu_job *g)
{
	if (g->n > CEEMS_LEDGER_MAX_GPUS)
		return false;
	for (uint32_t k = 0; k < g->n; k++) {
		const struct agent_gpu_account *acc = &g->acc[k];

		if (acc->device < 0 || acc->device >= CEEMS_GPU_MAX_DEVICES ||
		    acc->instance < -1 ||
		    acc->instance >= CEEMS_GPU_MAX_INSTANCES ||
		    !isfinite(acc->share) || acc->share <= 0 ||
		    acc->share > 1 || !isfinite(acc->energy_j) ||
		    acc->energy_j < 0 || acc->have_energy > 1 ||
		    acc->have_mem_peak > 1 || acc->power_integrated > 1)
			return false;
		for (int f = 0; f < GPU_NFIGURES; f++)
			if (!isfinite(acc->sum[f]) || !isfinite(acc->secs[f]) ||
			    acc->secs[f] < 0)
				return false;
	}
	return true;
}
