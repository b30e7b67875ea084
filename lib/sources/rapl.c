/* rapl.c - RAPL energy counters through powercap.  Each zone's energy_uj
 * stays open and is pread every sample, with no allocation on that path.
 * A counter wraps at max_energy_range_uj, a constant of the driver's
 * counter: it is read when the zone is opened, and again only when
 * energy_uj has to be reopened (a driver reload recreates the files and
 * the kept descriptor fails), where a new range means a new counter.
 * The zone's maximum power (from its constraints, see rapl.h) gives the
 * shortest time in which it can wrap, so a delta is trusted only when
 * the samples are closer than that, and the agent is told to sample at
 * least twice per wrap period. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/energy.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/number.h"
#include "sources/rapl.h"
#include "base/tick_path.h"

#define POWERCAP_DIR "/class/powercap"
/* Constraints are numbered from 0; real zones have two or three. */
#define RAPL_MAX_CONSTRAINTS 8

struct rapl_zone {
	char *dir;		/* for reopening after the files went away */
	int energy_fd;		/* -1 while closed */
	struct ceems_energy_reader reader;
};

struct rapl_priv {
	struct rapl_zone *zones;	/* parallel to src->counters */
};

/* Parse "intel-rapl:N" or "intel-rapl:N:M"; anything else (the control
 * type directory "intel-rapl", "intel-rapl-mmio:N") is not a zone. */
static bool
parse_zone_dir(const char *name, unsigned int *pkg, unsigned int *sub,
	       bool *is_sub)
{
	const char *prefix = "intel-rapl:";
	unsigned long v;
	char *end;

	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return false;
	name += strlen(prefix);
	if (*name < '0' || *name > '9')
		return false;
	v = strtoul(name, &end, 10);
	if (v > 9999)
		return false;
	*pkg = (unsigned int)v;
	*is_sub = false;
	*sub = 0;
	if (*end == '\0')
		return true;
	if (*end != ':' || end[1] < '0' || end[1] > '9')
		return false;
	v = strtoul(end + 1, &end, 10);
	if (v > 9999 || *end != '\0')
		return false;
	*sub = (unsigned int)v;
	*is_sub = true;
	return true;
}

/* Parse a small non-negative index at S; -1 if there is none.  *REST
 * is set to what follows it. */
static int
parse_index(const char *s, const char **rest)
{
	long v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > 65535)
			return -1;
	}
	*rest = s;
	return (int)v;
}

int
ceems_rapl_classify_zone(const char *name, enum ceems_energy_domain *domain,
			 int *device)
{
	const char *rest;
	int n;

	if (strncmp(name, "package-", 8) == 0) {
		n = parse_index(name + 8, &rest);
		if (n < 0)
			return -EINVAL;
		/* Multi-die packages have one zone per die; each counts. */
		if (*rest != '\0') {
			if (strncmp(rest, "-die-", 5) != 0 ||
			    parse_index(rest + 5, &rest) < 0 || *rest != '\0')
				return -EINVAL;
		}
		*domain = CEEMS_DOMAIN_PACKAGE;
		*device = n;
		return 0;
	}
	if (strcmp(name, "dram") == 0) {
		*domain = CEEMS_DOMAIN_DRAM;
		*device = -1;
		return 0;
	}
	if (strcmp(name, "psys") == 0) {
		*domain = CEEMS_DOMAIN_NODE;
		*device = -1;
		return 0;
	}
	if (strncmp(name, "psys-", 5) == 0) {
		n = parse_index(name + 5, &rest);
		if (n < 0 || *rest != '\0')
			return -EINVAL;
		*domain = CEEMS_DOMAIN_NODE;
		*device = n;
		return 0;
	}
	if (strcmp(name, "core") == 0 || strcmp(name, "uncore") == 0)
		return -ENOENT;
	return -EINVAL;
}

/* Read a small sysfs file of DIR into BUF with its newline removed. */
static int
read_attr(const char *dir, const char *attr, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;
	int len;

	len = snprintf(path, sizeof(path), "%s/%s", dir, attr);
	if (len < 0 || (size_t)len >= sizeof(path))
		return -ENAMETOOLONG;
	n = ceems_fileio_read_text_file(path, buf, size);
	if (n < 0)
		return (int)n;
	if (n > 0 && buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static int
read_attr_u64(const char *dir, const char *attr, uint64_t *value)
{
	char buf[64];
	int err = read_attr(dir, attr, buf, sizeof(buf));

	if (err < 0)
		return err;
	return ceems_number_parse_u64(buf, value);
}

/* The zone's maximum power: see rapl.h for the rule. */
static double
zone_max_power_w(const char *dir)
{
	uint64_t v, best = 0;
	char attr[64];
	int i;

	for (i = 0; i < RAPL_MAX_CONSTRAINTS; i++) {
		snprintf(attr, sizeof(attr), "constraint_%d_max_power_uw", i);
		if (read_attr_u64(dir, attr, &v) == 0 && v > best)
			best = v;
		snprintf(attr, sizeof(attr), "constraint_%d_power_limit_uw", i);
		if (read_attr_u64(dir, attr, &v) == 0 && v > best)
			best = v;
	}
	if (best == 0)
		return CEEMS_RAPL_DEFAULT_MAX_POWER_W;
	return (double)best / 1e6 * CEEMS_RAPL_POWER_SAFETY_FACTOR;
}

static void
close_zone_files(struct rapl_zone *z)
{
	if (z->energy_fd >= 0)
		close(z->energy_fd);
	z->energy_fd = -1;
}

/* Open the zone's counter file; 0 or -errno (nothing left open). */
static int
open_zone_files(struct rapl_zone *z)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/energy_uj", z->dir);
	fd = ceems_energy_open_file(path);
	if (fd < 0)
		return fd;
	z->energy_fd = fd;
	return 0;
}

/* Read energy_uj and the zone's range, reopening the counter file if an
 * earlier error closed it.  The range is the one read at open, or, on
 * reopening, the one the (perhaps reloaded) driver gives now. */
static int
read_zone(struct rapl_zone *z, uint64_t *energy, uint64_t *range)
{
	bool reopened = false;
	int err;

	*range = z->reader.lim.range;
	if (z->energy_fd < 0) {
		reopened = true;
		err = open_zone_files(z);
		if (err < 0)
			return err;
		/* Read after energy_uj is open, so that a reload after
		 * this read fails the new descriptor in turn. */
		err = read_attr_u64(z->dir, "max_energy_range_uj", range);
		if (err == 0 && *range == 0)
			err = -EINVAL;
		if (err < 0) {
			/* Not a counter yet: try afresh next sample. */
			close_zone_files(z);
			return err;
		}
	}
	err = ceems_energy_pread_u64(z->energy_fd, energy);
	if (err == 0 && *energy > *range)
		err = -ERANGE;
	/* A bad value keeps the file open, except right after reopening:
	 * the new range is taken only with a good value, so it must be
	 * read again. */
	if ((err == -EINVAL || err == -ERANGE || err == -EFBIG) && !reopened)
		return err;
	if (err < 0) {
		/* ENODEV and the like: the zone went away under us; the
		 * files are opened afresh at the next sample. */
		close_zone_files(z);
		return err;
	}
	return 0;
}

CEEMS_TICK_PATH static void
rapl_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	struct rapl_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		struct rapl_zone *z = &priv->zones[i];
		struct ceems_energy_counter *c = &src->counters[i];
		uint64_t energy, range;
		int err;

		err = read_zone(z, &energy, &range);
		if (err < 0) {
			/* A zone whose files went away comes back as a new
			 * counter: its first value is not subtracted. */
			ceems_energy_reader_fail(&z->reader, c, err,
				z->energy_fd < 0 ? CEEMS_GAP_RESET :
				CEEMS_GAP_READ_ERROR);
			continue;
		}
		if (range != z->reader.lim.range) {
			/* Another counter now: not comparable to the old. */
			ceems_energy_counter_gap(c, CEEMS_GAP_RESET);
			ceems_energy_reader_set_state(&z->reader, c,
				CEEMS_GAP_RESET, "max_energy_range_uj changed");
			z->reader.lim.range = range;
			z->reader.have_prev = false;
			z->reader.rebase_gap = CEEMS_GAP_RESET;
		}
		ceems_energy_reader_update(&z->reader, c, energy, now_ns);
	}
}

CEEMS_TICK_PATH static uint64_t
rapl_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	const struct rapl_priv *priv = src->priv;
	uint64_t best = 0;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		uint64_t w = ceems_energy_wrap_period_ns(&priv->zones[i].reader.lim);

		if (w != 0 && (best == 0 || w / 2 < best))
			best = w / 2;
	}
	return best;
}

static void
rapl_close(struct ceems_energy_source *src)
{
	struct rapl_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		close_zone_files(&priv->zones[i]);
		free(priv->zones[i].dir);
	}
	free(priv->zones);
	free(priv);
	free(src->counters);
	free(src);
}

CEEMS_TICK_PATH static struct ceems_energy_reader *
rapl_reader(struct ceems_energy_source *src, size_t i)
{
	struct rapl_priv *priv = src->priv;

	return &priv->zones[i].reader;
}

static const struct ceems_energy_source_ops rapl_ops = {
	.kind = "rapl",
	.sample = rapl_sample,
	.max_sample_interval_ns = rapl_max_sample_interval_ns,
	.close = rapl_close,
	.reader = rapl_reader,
};

struct zone_entry {
	char name[32];		/* "intel-rapl:N[:M]" */
	unsigned int pkg, sub;
	bool is_sub;
};

static int
compare_zone_entries(const void *a, const void *b)
{
	const struct zone_entry *x = a, *y = b;

	if (x->pkg != y->pkg)
		return x->pkg < y->pkg ? -1 : 1;
	if (x->is_sub != y->is_sub)
		return x->is_sub ? 1 : -1;
	if (x->sub != y->sub)
		return x->sub < y->sub ? -1 : 1;
	return 0;
}

/* List the zone directories, sorted, at most CEEMS_RAPL_MAX_ZONES. */
static size_t
list_zones(const char *base, struct zone_entry *zones)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	dir = opendir(base);
	if (dir == NULL) {
		ceems_info("rapl: no powercap interface at %s: %s", base,
			   strerror(errno));
		return 0;
	}
	while ((de = readdir(dir)) != NULL) {
		struct zone_entry e;

		if (strlen(de->d_name) >= sizeof(e.name) ||
		    !parse_zone_dir(de->d_name, &e.pkg, &e.sub, &e.is_sub))
			continue;
		if (n == CEEMS_RAPL_MAX_ZONES) {
			ceems_warning("rapl: more than %d zones under %s; "
				      "ignoring %s", CEEMS_RAPL_MAX_ZONES,
				      base, de->d_name);
			continue;
		}
		snprintf(e.name, sizeof(e.name), "%s", de->d_name);
		zones[n++] = e;
	}
	closedir(dir);
	qsort(zones, n, sizeof(zones[0]), compare_zone_entries);
	return n;
}

/* Set up zone Z / counter C from the directory of entry E; 0, or
 * negative when the zone is left out (logged here). */
static int
open_zone(const char *base, const struct zone_entry *e,
	  struct rapl_zone *z, struct ceems_energy_counter *c,
	  uint64_t now_ns)
{
	char dir[PATH_MAX], name[64];
	enum ceems_energy_domain domain;
	uint64_t range, energy;
	int device, err;

	if (snprintf(dir, sizeof(dir), "%s/%s", base, e->name) >=
	    (int)sizeof(dir))
		return -ENAMETOOLONG;
	err = read_attr(dir, "name", name, sizeof(name));
	if (err < 0) {
		ceems_warning("rapl: %s: cannot read its name: %s; zone left out",
			      e->name, strerror(-err));
		return err;
	}
	err = ceems_rapl_classify_zone(name, &domain, &device);
	if (err == -ENOENT) {
		ceems_debug("rapl: %s (%s) is part of its package; not counted "
			    "apart", e->name, name);
		return err;
	}
	if (err < 0) {
		ceems_info("rapl: %s: unknown zone name '%s'; left out",
			   e->name, name);
		return err;
	}
	if (domain == CEEMS_DOMAIN_DRAM) {
		/* A dram subzone belongs to its parent package. */
		char parent[PATH_MAX], pname[64];
		enum ceems_energy_domain pdomain;
		int pdevice;

		device = (int)e->pkg;
		if (e->is_sub &&
		    snprintf(parent, sizeof(parent), "%s/intel-rapl:%u", base,
			     e->pkg) < (int)sizeof(parent) &&
		    read_attr(parent, "name", pname, sizeof(pname)) == 0 &&
		    ceems_rapl_classify_zone(pname, &pdomain, &pdevice) == 0 &&
		    pdomain == CEEMS_DOMAIN_PACKAGE)
			device = pdevice;
	}

	err = read_attr_u64(dir, "max_energy_range_uj", &range);
	if (err == 0 && range == 0)
		err = -EINVAL;
	if (err < 0) {
		ceems_warning("rapl: %s: no usable max_energy_range_uj (%s); "
			      "a wrap could not be told from a reset, zone left "
			      "out", e->name, err == -EINVAL ? "not a counter "
			      "range" : strerror(-err));
		return err;
	}

	z->dir = strdup(dir);
	if (z->dir == NULL)
		return -ENOMEM;
	z->energy_fd = -1;
	err = open_zone_files(z);
	if (err < 0) {
		ceems_warning("rapl: %s: cannot open its counter: %s%s; zone "
			      "left out", e->name, strerror(-err),
			      err == -EACCES ? " (energy_uj is root-only "
			      "since Linux 5.10: needs CAP_DAC_READ_SEARCH)" :
			      "");
		free(z->dir);
		z->dir = NULL;
		return err;
	}

	memset(c, 0, sizeof(*c));
	c->domain = domain;
	c->device = device;
	memcpy(c->name, e->name, sizeof(e->name));
	z->reader.lim.unit_j = 1e-6;
	/* sysfs counts microjoules of a register whose unit is coarser. */
	c->resolution_j = CEEMS_RAPL_RESOLUTION_J;
	z->reader.lim.range = range;
	z->reader.lim.max_power_w = zone_max_power_w(dir);
	z->reader.lim.slack_ns = CEEMS_RAPL_SLACK_NS;
	z->reader.state = CEEMS_GAP_NONE;

	/* The baseline, so that the first sample already measures. */
	err = ceems_energy_pread_u64(z->energy_fd, &energy);
	if (err == 0 && energy > range)
		err = -ERANGE;
	if (err < 0) {
		ceems_energy_reader_fail(&z->reader, c, err,
					 CEEMS_GAP_READ_ERROR);
	} else {
		z->reader.prev = energy;
		z->reader.last_ns = now_ns;
		z->reader.have_prev = true;
	}
	ceems_debug("rapl: %s (%s) as %s %d, range %.3f J, max %.1f W",
		    e->name, name, ceems_job_figures_energy_domain_name(domain), device,
		    (double)range / 1e6, z->reader.lim.max_power_w);
	return 0;
}

struct ceems_energy_source *
ceems_rapl_open(const char *sysfs_root, uint64_t now_ns)
{
	struct zone_entry entries[CEEMS_RAPL_MAX_ZONES];
	struct ceems_energy_source *src = NULL;
	struct rapl_priv *priv = NULL;
	char base[PATH_MAX];
	size_t i, nentries;

	if (ceems_energy_sysfs_path(base, sizeof(base), sysfs_root,
				    POWERCAP_DIR) < 0) {
		ceems_warning("rapl: sysfs root too long");
		return NULL;
	}
	nentries = list_zones(base, entries);
	if (nentries == 0) {
		ceems_info("rapl: no RAPL zone under %s; no RAPL energy", base);
		return NULL;
	}
	src = calloc(1, sizeof(*src));
	priv = calloc(1, sizeof(*priv));
	if (src != NULL)
		src->counters = calloc(nentries, sizeof(*src->counters));
	if (priv != NULL)
		priv->zones = calloc(nentries, sizeof(*priv->zones));
	if (src == NULL || priv == NULL || src->counters == NULL ||
	    priv->zones == NULL) {
		ceems_error("rapl: out of memory");
		goto fail;
	}
	src->ops = &rapl_ops;
	src->priv = priv;
	for (i = 0; i < nentries; i++) {
		if (open_zone(base, &entries[i], &priv->zones[src->ncounters],
			      &src->counters[src->ncounters], now_ns) == 0)
			src->ncounters++;
	}
	if (src->ncounters == 0) {
		ceems_info("rapl: no usable package, dram or psys zone under "
			   "%s; no RAPL energy", base);
		rapl_close(src);
		return NULL;
	}
	ceems_info("rapl: %zu zone(s) under %s, sampled at least every %.3f s",
		   src->ncounters, base,
		   (double)rapl_max_sample_interval_ns(src) / 1e9);
	return src;
fail:
	if (priv != NULL)
		free(priv->zones);
	free(priv);
	if (src != NULL)
		free(src->counters);
	free(src);
	return NULL;
}
