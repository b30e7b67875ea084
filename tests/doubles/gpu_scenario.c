/* gpu_scenario.c - the scenario file of the GPU library doubles: found
 * next to the double's .so (or by CEEMS_GPU_DOUBLE_SCENARIO), parsed,
 * and read again when it changes, keeping the energy each device has
 * integrated so far.  Test code only: see gpu_scenario.h for the format. */
#define _GNU_SOURCE
#include "config.h"

#include <sys/stat.h>

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "gpu_scenario.h"

#define SCENARIO_MAX_BYTES 65536

static struct gpu_scenario current;
static struct {
	bool loaded;
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtime;
} seen;

static uint64_t
monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static void
device_defaults(struct gpu_scenario_device *d, size_t n)
{
	memset(d, 0, sizeof(*d));
	snprintf(d->uuid, sizeof(d->uuid),
		 "GPU-00000000-0000-0000-0000-%012zx", n);
	snprintf(d->bus_id, sizeof(d->bus_id), "00000000:%02zX:00.0", n + 1);
	snprintf(d->name, sizeof(d->name), "Double GPU");
	d->minor = (unsigned int)n;
	d->power_limit_w = 700.0;
	d->energy_wrap_bits = 64;
	d->energy_resolution_uj = 15.3;
}

static int
set_string(char *dst, size_t size, const char *v)
{
	if (strlen(v) >= size)
		return -1;
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int
set_u64(uint64_t *dst, const char *v)
{
	char *end;

	errno = 0;
	*dst = strtoull(v, &end, 0);
	return errno != 0 || end == v || *end != '\0' ? -1 : 0;
}

static int
set_uint(unsigned int *dst, const char *v)
{
	uint64_t x;

	if (set_u64(&x, v) < 0 || x > 0xffffffffULL)
		return -1;
	*dst = (unsigned int)x;
	return 0;
}

static int
set_double(double *dst, const char *v)
{
	char *end;

	*dst = strtod(v, &end);
	return end == v || *end != '\0' ? -1 : 0;
}

static int
set_flag(bool *dst, const char *v)
{
	*dst = strcmp(v, "1") == 0 || strcmp(v, "yes") == 0;
	return 0;
}

static int
instance_key(struct gpu_scenario_instance *in, const char *k, const char *v)
{
	if (strcmp(k, "id") == 0)
		return set_uint(&in->id, v);
	if (strcmp(k, "uuid") == 0)
		return set_string(in->uuid, sizeof(in->uuid), v);
	if (strcmp(k, "sms") == 0)
		return set_uint(&in->sms, v);
	if (strcmp(k, "util") == 0)
		return set_double(&in->util, v);
	if (strcmp(k, "memory_total") == 0)
		return set_u64(&in->memory_total, v);
	if (strcmp(k, "memory_used") == 0)
		return set_u64(&in->memory_used, v);
	return -1;
}

static int
device_key(struct gpu_scenario_device *d, const char *k, const char *v)
{
	static const struct { const char *key; size_t off; } doubles[] = {
		{ "util", offsetof(struct gpu_scenario_device, util) },
		{ "mem_util", offsetof(struct gpu_scenario_device, mem_util) },
		{ "power_w", offsetof(struct gpu_scenario_device, power_w) },
		{ "power_limit_w", offsetof(struct gpu_scenario_device, power_limit_w) },
		{ "energy_resolution_uj", offsetof(struct gpu_scenario_device, energy_resolution_uj) },
		{ "gpm_sm_active", offsetof(struct gpu_scenario_device, gpm_sm_active) },
		{ "gpm_sm_occupancy", offsetof(struct gpu_scenario_device, gpm_sm_occupancy) },
		{ "gpm_tensor", offsetof(struct gpu_scenario_device, gpm_tensor) },
		{ "gpm_fp64", offsetof(struct gpu_scenario_device, gpm_fp64) },
		{ "gpm_fp32", offsetof(struct gpu_scenario_device, gpm_fp32) },
		{ "gpm_fp16", offsetof(struct gpu_scenario_device, gpm_fp16) },
	};
	static const struct { const char *key; size_t off; } flags[] = {
		{ "no_energy", offsetof(struct gpu_scenario_device, no_energy) },
		{ "no_power", offsetof(struct gpu_scenario_device, no_power) },
		{ "no_gpm", offsetof(struct gpu_scenario_device, no_gpm) },
		{ "lost", offsetof(struct gpu_scenario_device, lost) },
		{ "mig", offsetof(struct gpu_scenario_device, mig) },
	};
	size_t i;

	for (i = 0; i < sizeof(doubles) / sizeof(doubles[0]); i++)
		if (strcmp(k, doubles[i].key) == 0)
			return set_double((double *)(void *)((char *)d +
						   doubles[i].off), v);
	for (i = 0; i < sizeof(flags) / sizeof(flags[0]); i++)
		if (strcmp(k, flags[i].key) == 0)
			return set_flag((bool *)(void *)((char *)d +
						flags[i].off), v);
	if (strcmp(k, "uuid") == 0)
		return set_string(d->uuid, sizeof(d->uuid), v);
	if (strcmp(k, "bus_id") == 0)
		return set_string(d->bus_id, sizeof(d->bus_id), v);
	if (strcmp(k, "name") == 0)
		return set_string(d->name, sizeof(d->name), v);
	if (strcmp(k, "minor") == 0)
		return set_uint(&d->minor, v);
	if (strcmp(k, "sms") == 0)
		return set_uint(&d->sms, v);
	if (strcmp(k, "memory_total") == 0)
		return set_u64(&d->memory_total, v);
	if (strcmp(k, "memory_used") == 0)
		return set_u64(&d->memory_used, v);
	if (strcmp(k, "energy_raw") == 0) {
		d->energy_fixed = true;
		return set_u64(&d->energy_raw, v);
	}
	if (strcmp(k, "energy_start") == 0)
		return set_u64(&d->energy_raw, v);
	if (strcmp(k, "energy_wrap_bits") == 0)
		return set_uint(&d->energy_wrap_bits, v) < 0 ||
			d->energy_wrap_bits < 1 || d->energy_wrap_bits > 64 ?
			-1 : 0;
	return -1;
}

static int
global_key(struct gpu_scenario *sc, const char *k, const char *v)
{
	if (strcmp(k, "init") != 0)
		return -1;
	if (strcmp(v, "ok") == 0)
		sc->init = GPU_SCENARIO_INIT_OK;
	else if (strcmp(v, "driver_not_loaded") == 0)
		sc->init = GPU_SCENARIO_INIT_DRIVER_NOT_LOADED;
	else if (strcmp(v, "error") == 0)
		sc->init = GPU_SCENARIO_INIT_ERROR;
	else
		return -1;
	return 0;
}

/* One line, comments and blanks already gone. */
static int
parse_line(struct gpu_scenario *sc, char *line)
{
	struct gpu_scenario_device *d = sc->ndevices > 0 ?
		&sc->dev[sc->ndevices - 1] : NULL;
	char *eq;

	if (strcmp(line, "[device]") == 0) {
		if (sc->ndevices == GPU_SCENARIO_MAX_DEVICES)
			return -1;
		device_defaults(&sc->dev[sc->ndevices], sc->ndevices);
		sc->ndevices++;
		return 0;
	}
	if (strcmp(line, "[instance]") == 0) {
		if (d == NULL || d->ninstances == GPU_SCENARIO_MAX_INSTANCES)
			return -1;
		memset(&d->inst[d->ninstances], 0, sizeof(d->inst[0]));
		d->inst[d->ninstances].id = (unsigned int)d->ninstances + 1;
		d->ninstances++;
		return 0;
	}
	eq = strchr(line, '=');
	if (eq == NULL)
		return -1;
	*eq = '\0';
	if (d == NULL)
		return global_key(sc, line, eq + 1);
	if (d->ninstances > 0)
		return instance_key(&d->inst[d->ninstances - 1], line, eq + 1);
	return device_key(d, line, eq + 1);
}

int
gpu_scenario_parse(const char *text, struct gpu_scenario *sc)
{
	char line[512];
	const char *p = text;
	int n = 0;

	memset(sc, 0, sizeof(*sc));
	while (*p != '\0') {
		size_t len = strcspn(p, "\n");
		char *hash, *s, *e;

		n++;
		if (len >= sizeof(line)) {
			fprintf(stderr, "gpu scenario: line %d too long\n", n);
			return -1;
		}
		memcpy(line, p, len);
		line[len] = '\0';
		p += len + (p[len] == '\n');
		if ((hash = strchr(line, '#')) != NULL)
			*hash = '\0';
		for (s = line; *s == ' ' || *s == '\t'; s++)
			;
		e = s + strlen(s);
		while (e > s && (e[-1] == ' ' || e[-1] == '\t' ||
				 e[-1] == '\r'))
			*--e = '\0';
		if (*s == '\0')
			continue;
		if (parse_line(sc, s) < 0) {
			fprintf(stderr, "gpu scenario: line %d not understood: "
				"%s\n", n, s);
			return -1;
		}
	}
	return 0;
}

/* Bring D's integrated energy up to NOW_NS. */
static void
integrate(struct gpu_scenario_device *d, uint64_t now_ns)
{
	if (d->energy_ns != 0 && now_ns > d->energy_ns)
		d->energy_j += d->power_w * (double)(now_ns - d->energy_ns) / 1e9;
	d->energy_ns = now_ns;
}

uint64_t
gpu_scenario_energy(struct gpu_scenario_device *d, double unit_j)
{
	uint64_t counts = d->energy_raw;

	if (!d->energy_fixed) {
		integrate(d, monotonic_ns());
		counts += (uint64_t)(d->energy_j / unit_j);
	}
	if (d->energy_wrap_bits < 64)
		counts &= (UINT64_C(1) << d->energy_wrap_bits) - 1;
	return counts;
}

static int
scenario_path(const void *self, char *buf, size_t size)
{
	const char *env = getenv("CEEMS_GPU_DOUBLE_SCENARIO");
	Dl_info info;

	if (env != NULL && env[0] != '\0')
		return snprintf(buf, size, "%s", env) < (int)size ? 0 : -1;
	if (dladdr(self, &info) == 0 || info.dli_fname == NULL)
		return -1;
	return snprintf(buf, size, "%s.scenario", info.dli_fname) < (int)size ?
		0 : -1;
}

/* Read the file at PATH (already known to have changed) into CURRENT,
 * keeping each device's integrated energy. */
static void
reload(const char *path)
{
	static struct gpu_scenario next;
	static char text[SCENARIO_MAX_BYTES];
	uint64_t now = monotonic_ns();
	ssize_t n = -1;
	size_t i;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		n = read(fd, text, sizeof(text) - 1);
		close(fd);
	}
	if (n >= 0)
		text[n] = '\0';
	if (n < 0 || gpu_scenario_parse(text, &next) < 0)
		memset(&next, 0, sizeof(next));
	for (i = 0; i < current.ndevices && i < next.ndevices; i++) {
		integrate(&current.dev[i], now);
		next.dev[i].energy_j = current.dev[i].energy_j;
		next.dev[i].energy_ns = current.dev[i].energy_ns;
	}
	current = next;
}

struct gpu_scenario *
gpu_scenario_get(const void *self)
{
	/* Found once: the double is asked for every figure it has. */
	static char path[4096];
	static int have_path;
	struct stat st;

	if (!have_path)
		have_path = scenario_path(self, path, sizeof(path)) == 0 ? 1 : -1;
	if (have_path < 0 || stat(path, &st) < 0) {
		if (seen.loaded)
			memset(&current, 0, sizeof(current));
		seen.loaded = false;
		return &current;
	}
	if (!seen.loaded || st.st_dev != seen.dev || st.st_ino != seen.ino ||
	    st.st_size != seen.size ||
	    st.st_mtim.tv_sec != seen.mtime.tv_sec ||
	    st.st_mtim.tv_nsec != seen.mtime.tv_nsec) {
		reload(path);
		seen.loaded = true;
		seen.dev = st.st_dev;
		seen.ino = st.st_ino;
		seen.size = st.st_size;
		seen.mtime = st.st_mtim;
	}
	return &current;
}
