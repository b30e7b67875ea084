/* pm_counters.c - HPE Cray EX pm_counters: accumulated energy in joules
 * per domain, kept by the node controller (the same source as the BMC).
 * The counters are 64-bit and do not wrap; going backwards is a reset
 * (a controller restart).  Files stay open and are pread every sample.
 *
 * The directory's "startup" changes when the controller restarts and
 * its counters start again; it is read before the counters each sample
 * and is the counters' run (struct ceems_energy_reader's identity): a
 * restart is a reset even when a counter has already passed its old
 * value.  "generation" counts power-cap changes, across which the
 * counters go on, and "freshness" moves at every update: neither tells
 * a restart. */
#include "config.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/energy.h"
#include "base/fileio.h"
#include "base/log.h"
#include "base/number.h"
#include "sources/pm_counters.h"

#define PM_COUNTERS_DIR "/cray/pm_counters"

struct pm_counter {
	char *path;		/* for reopening */
	int fd;			/* -1 while closed */
	struct ceems_energy_reader reader;
};

struct pm_priv {
	struct pm_counter *counters;	/* parallel to src->counters */
	struct pm_counter startup;	/* the controller's start; no reader */
	uint64_t last_startup;		/* last value read, 0 none yet */
};

int
ceems_pm_counters_parse(const char *text, uint64_t *joules)
{
	char value[32];
	size_t n = 0;
	const char *p = text;

	while (*p >= '0' && *p <= '9') {
		if (n + 1 >= sizeof(value))
			return -ERANGE;
		value[n++] = *p++;
	}
	value[n] = '\0';
	if (n == 0 || *p != ' ')
		return -EINVAL;
	while (*p == ' ')
		p++;
	if (p[0] != 'J' || (p[1] != '\0' && p[1] != ' ' && p[1] != '\n'))
		return -EINVAL;
	return ceems_number_parse_u64(value, joules);
}

static int
parse_index(const char *s, const char *suffix)
{
	int v = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		v = v * 10 + (*s - '0');
		if (v > 4095)
			return -1;
	}
	return strcmp(s, suffix) == 0 ? v : -1;
}

int
ceems_pm_counters_classify(const char *file, enum ceems_energy_domain *domain,
			   int *device)
{
	int n;

	*device = -1;
	if (strcmp(file, "energy") == 0) {
		*domain = CEEMS_DOMAIN_NODE;
		return 0;
	}
	if (strcmp(file, "cpu_energy") == 0) {
		*domain = CEEMS_DOMAIN_PACKAGE;
		return 0;
	}
	if (strcmp(file, "memory_energy") == 0) {
		*domain = CEEMS_DOMAIN_DRAM;
		return 0;
	}
	if (strncmp(file, "cpu", 3) == 0 &&
	    (n = parse_index(file + 3, "_energy")) >= 0) {
		*domain = CEEMS_DOMAIN_PACKAGE;
		*device = n;
		return 0;
	}
	if (strncmp(file, "accel", 5) == 0 &&
	    (n = parse_index(file + 5, "_energy")) >= 0) {
		*domain = CEEMS_DOMAIN_GPU;
		*device = n;
		return 0;
	}
	return -ENOENT;
}

static int
read_counter(struct pm_counter *pc, uint64_t *joules)
{
	char buf[128];
	ssize_t n;
	int err;

	if (pc->fd < 0) {
		pc->fd = ceems_energy_open_file(pc->path);
		if (pc->fd < 0) {
			err = pc->fd;
			pc->fd = -1;
			return err;
		}
	}
	n = ceems_fileio_pread_text_once(pc->fd, buf, sizeof(buf));
	if (n < 0) {
		if (n != -EFBIG) {
			close(pc->fd);
			pc->fd = -1;
		}
		return (int)n;
	}
	return ceems_pm_counters_parse(buf, joules);
}

/* Read "startup" (reopening it if an error closed it): the run of the
 * counters about to be read, 0 when unknown. */
static uint64_t
read_startup(struct pm_counter *pc)
{
	uint64_t value;

	if (pc->path == NULL)
		return 0;
	if (pc->fd < 0 && (pc->fd = ceems_energy_open_file(pc->path)) < 0) {
		pc->fd = -1;
		return 0;
	}
	if (ceems_energy_pread_u64(pc->fd, &value) < 0) {
		close(pc->fd);
		pc->fd = -1;
		return 0;
	}
	return value;
}

/* The counters are of run STARTUP (0 unknown); a change of a known one
 * is a controller restart, a reset of every counter. */
static void
set_run(struct ceems_energy_source *src, uint64_t startup)
{
	struct pm_priv *priv = src->priv;
	bool restarted = startup != 0 && priv->last_startup != 0 &&
			 startup != priv->last_startup;

	for (size_t i = 0; i < src->ncounters; i++) {
		struct ceems_energy_reader *r = &priv->counters[i].reader;

		r->identity = startup;
		if (!restarted)
			continue;
		ceems_energy_counter_gap(&src->counters[i], CEEMS_GAP_RESET);
		ceems_energy_reader_set_state(r, &src->counters[i],
			CEEMS_GAP_RESET, "the controller restarted (startup changed)");
		r->have_prev = false;
		r->rebase_gap = CEEMS_GAP_RESET;
	}
	if (startup != 0)
		priv->last_startup = startup;
}

static void
pm_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	struct pm_priv *priv = src->priv;
	size_t i;

	set_run(src, read_startup(&priv->startup));
	for (i = 0; i < src->ncounters; i++) {
		struct pm_counter *pc = &priv->counters[i];
		struct ceems_energy_counter *c = &src->counters[i];
		uint64_t joules;
		int err;

		err = read_counter(pc, &joules);
		if (err < 0)
			ceems_energy_reader_fail(&pc->reader, c, err,
				pc->fd < 0 ? CEEMS_GAP_RESET :
				CEEMS_GAP_READ_ERROR);
		else
			ceems_energy_reader_update(&pc->reader, c, joules,
						   now_ns);
	}
}

static uint64_t
pm_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	(void)src;
	return 0;	/* 64-bit joule counters: no wrap to outrun */
}

static struct ceems_energy_reader *
pm_reader(struct ceems_energy_source *src, size_t i)
{
	struct pm_priv *priv = src->priv;

	return i < src->ncounters ? &priv->counters[i].reader : NULL;
}

static void
pm_close(struct ceems_energy_source *src)
{
	struct pm_priv *priv = src->priv;
	size_t i;

	if (priv->startup.fd >= 0)
		close(priv->startup.fd);
	free(priv->startup.path);

	for (i = 0; i < src->ncounters; i++) {
		if (priv->counters[i].fd >= 0)
			close(priv->counters[i].fd);
		free(priv->counters[i].path);
	}
	free(priv->counters);
	free(priv);
	free(src->counters);
	free(src);
}

static const struct ceems_energy_source_ops pm_ops = {
	.kind = "pm_counters",
	.sample = pm_sample,
	.max_sample_interval_ns = pm_max_sample_interval_ns,
	.close = pm_close,
	.reader = pm_reader,
};

static int
compare_names(const void *a, const void *b)
{
	return strcmp((const char *)a, (const char *)b);
}

/* Open the energy file NAME under BASE as counter C (PC its reader),
 * read once: 0, or -1 when it is left out (said why, but for a path
 * too long or no memory).  STARTUP: the firmware's startup count, the
 * counter's identity. */
static int
open_counter(struct pm_counter *pc, struct ceems_energy_counter *c,
	     const char *base, const char *name, uint64_t startup,
	     uint64_t now_ns)
{
	char path[PATH_MAX];
	uint64_t joules;
	int err;

	if (snprintf(path, sizeof(path), "%s/%s", base, name) >=
	    (int)sizeof(path))
		return -1;
	pc->fd = ceems_energy_open_file(path);
	if (pc->fd < 0) {
		ceems_warning("pm_counters: cannot open %s: %s; left out",
			      path, strerror(-pc->fd));
		return -1;
	}
	pc->path = strdup(path);
	if (pc->path == NULL) {
		close(pc->fd);
		return -1;
	}
	memset(c, 0, sizeof(*c));
	ceems_pm_counters_classify(name, &c->domain, &c->device);
	/* A counter's file name is short ("cpu_energy"); a longer one is
	 * cut to fit the name, which only labels it. */
	snprintf(c->name, sizeof(c->name), "pm_counters/%.*s",
		 (int)(sizeof(c->name) - sizeof("pm_counters/")), name);
	memset(&pc->reader, 0, sizeof(pc->reader));
	pc->reader.lim.unit_j = 1.0;
	c->resolution_j = 1.0;	/* whole joules */
	pc->reader.lim.max_power_w = CEEMS_PM_COUNTERS_MAX_POWER_W;
	pc->reader.lim.slack_ns = CEEMS_PM_COUNTERS_SLACK_NS;
	pc->reader.needs_identity = true;
	pc->reader.identity = startup;
	err = read_counter(pc, &joules);
	if (err < 0) {
		ceems_energy_reader_fail(&pc->reader, c, err,
					 CEEMS_GAP_READ_ERROR);
	} else {
		pc->reader.prev = joules;
		pc->reader.last_ns = now_ns;
		pc->reader.have_prev = true;
	}
	return 0;
}

struct ceems_energy_source *
ceems_pm_counters_open(const char *sysfs_root, uint64_t now_ns)
{
	char names[CEEMS_PM_COUNTERS_MAX][32];
	struct ceems_energy_source *src;
	struct pm_priv *priv;
	char base[PATH_MAX], path[PATH_MAX];
	uint64_t startup;
	struct dirent *de;
	size_t nnames = 0, i;
	DIR *dir;

	if (ceems_energy_sysfs_path(base, sizeof(base), sysfs_root,
				    PM_COUNTERS_DIR) < 0) {
		ceems_warning("pm_counters: sysfs root too long");
		return NULL;
	}
	dir = opendir(base);
	if (dir == NULL) {
		ceems_info("pm_counters: none at %s: %s", base, strerror(errno));
		return NULL;
	}
	while ((de = readdir(dir)) != NULL) {
		enum ceems_energy_domain domain;
		int device;

		if (strlen(de->d_name) >= sizeof(names[0]) ||
		    ceems_pm_counters_classify(de->d_name, &domain, &device) < 0)
			continue;
		if (nnames == CEEMS_PM_COUNTERS_MAX) {
			ceems_warning("pm_counters: more than %d energy files; "
				      "%s left out", CEEMS_PM_COUNTERS_MAX,
				      de->d_name);
			continue;
		}
		snprintf(names[nnames++], sizeof(names[0]), "%s", de->d_name);
	}
	closedir(dir);
	if (nnames == 0) {
		ceems_info("pm_counters: no energy file under %s", base);
		return NULL;
	}
	qsort(names, nnames, sizeof(names[0]), compare_names);

	src = calloc(1, sizeof(*src));
	priv = calloc(1, sizeof(*priv));
	if (src != NULL)
		src->counters = calloc(nnames, sizeof(*src->counters));
	if (priv != NULL)
		priv->counters = calloc(nnames, sizeof(*priv->counters));
	if (src == NULL || priv == NULL || src->counters == NULL ||
	    priv->counters == NULL) {
		ceems_error("pm_counters: out of memory");
		if (priv != NULL)
			free(priv->counters);
		free(priv);
		if (src != NULL)
			free(src->counters);
		free(src);
		return NULL;
	}
	src->ops = &pm_ops;
	src->priv = priv;
	priv->startup.fd = -1;
	if (snprintf(path, sizeof(path), "%s/startup", base) < (int)sizeof(path))
		priv->startup.path = strdup(path);

	/* Before the counters: their readings are of this run or a later
	 * one, never of an earlier. */
	startup = read_startup(&priv->startup);
	if (startup == 0)
		ceems_info("pm_counters: no startup under %s: a restart of the agent leaves a gap",
			   base);
	priv->last_startup = startup;
	for (i = 0; i < nnames; i++)
		if (open_counter(&priv->counters[src->ncounters],
				 &src->counters[src->ncounters], base, names[i],
				 startup, now_ns) == 0)
			src->ncounters++;
	if (src->ncounters == 0) {
		ceems_info("pm_counters: no readable energy file under %s", base);
		pm_close(src);
		return NULL;
	}
	ceems_info("pm_counters: %zu counter(s) under %s", src->ncounters, base);
	return src;
}
