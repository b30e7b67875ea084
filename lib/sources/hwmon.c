/* hwmon.c - energy from hwmon sensors.  An energy*_input channel is a
 * monotonic microjoule counter with no documented range: going backwards
 * is a reset.  A power*_input channel (microwatts) with no energy counter
 * of the same number is integrated with the trapezoid rule between
 * samples; past the maximum integration interval the power in between is
 * unknown and the interval is a stall.  Files stay open and are pread
 * every sample.  An energy channel's run is its file's inode: a device
 * made again (driver reload) has new sysfs files, and its counter
 * starts again from 0, which a reading alone cannot always tell. */
#include "config.h"

#include <sys/stat.h>

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "model/energy.h"
#include "base/fileio.h"
#include "sources/hwmon.h"
#include "base/log.h"
#include "base/number.h"

#define HWMON_DIR "/class/hwmon"
/* hwmon channel numbers start at 1 and are small. */
#define HWMON_MAX_CHANNEL_NUMBER 64

enum channel_kind { CHANNEL_ENERGY, CHANNEL_POWER };

struct hwmon_channel {
	char *path;		/* the value file, for reopening */
	int fd;			/* -1 while closed */
	enum channel_kind kind;
	struct ceems_energy_reader reader;	/* energy, and the shared state */
	double prev_w;		/* power: last good reading */
};

struct hwmon_priv {
	struct hwmon_channel *channels;	/* parallel to src->counters */
	uint64_t max_power_gap_ns;
	bool have_power;
};

static bool
contains(const char *haystack, const char *needle)
{
	size_t n = strlen(needle);

	for (; *haystack != '\0'; haystack++)
		if (strncasecmp(haystack, needle, n) == 0)
			return true;
	return false;
}

static int
last_number(const char *s)
{
	int value = -1;

	while (*s != '\0') {
		if (isdigit((unsigned char)*s)) {
			long v = 0;

			for (; isdigit((unsigned char)*s); s++)
				if (v <= 65535)
					v = v * 10 + (*s - '0');
			value = v <= 65535 ? (int)v : -1;
		} else {
			s++;
		}
	}
	return value;
}

int
ceems_hwmon_classify(const char *chip, const char *label,
		     enum ceems_energy_domain *domain, int *device)
{
	static const char *const gpu_chips[] = {
		"amdgpu", "nouveau", "i915", "xe",
	};
	static const char *const cpu_chips[] = {
		"amd_energy", "fam15h_power", "zenpower",
	};
	size_t i;

	for (i = 0; i < sizeof(gpu_chips) / sizeof(gpu_chips[0]); i++)
		if (strcasecmp(chip, gpu_chips[i]) == 0)
			return -ENOENT;
	if (contains(label, "gpu") || contains(label, "accel"))
		return -ENOENT;
	/* "core" before "cpu": "CPU core 3" is a core, and its energy is
	 * already in its package's. */
	if (contains(label, "core"))
		return -ENOENT;
	*device = -1;
	if (contains(label, "cpu") || contains(label, "package") ||
	    contains(label, "pkg") || contains(label, "socket")) {
		*domain = CEEMS_DOMAIN_PACKAGE;
		*device = last_number(label);
		return 0;
	}
	if (contains(label, "mem") || contains(label, "dram") ||
	    contains(label, "dimm")) {
		*domain = CEEMS_DOMAIN_DRAM;
		*device = last_number(label);
		return 0;
	}
	for (i = 0; i < sizeof(cpu_chips) / sizeof(cpu_chips[0]); i++)
		if (strcasecmp(chip, cpu_chips[i]) == 0) {
			*domain = CEEMS_DOMAIN_PACKAGE;
			*device = last_number(label);
			return 0;
		}
	*domain = CEEMS_DOMAIN_NODE;
	return 0;
}

/* Open CH's file; an energy channel's run is the file's inode. */
static int
open_value(struct hwmon_channel *ch)
{
	struct stat st;

	ch->fd = ceems_energy_open_file(ch->path);
	if (ch->fd < 0)
		return ch->fd;
	ch->reader.identity = 0;
	if (ch->kind == CHANNEL_ENERGY && fstat(ch->fd, &st) == 0)
		ch->reader.identity = (uint64_t)st.st_ino;
	return 0;
}

/* Read a channel's value, reopening its file if an error closed it. */
static int
read_channel(struct hwmon_channel *ch, uint64_t *value)
{
	int err;

	if (ch->fd < 0) {
		err = open_value(ch);
		if (err < 0) {
			ch->fd = -1;
			return err;
		}
	}
	err = ceems_energy_pread_u64(ch->fd, value);
	if (err < 0 && err != -EINVAL && err != -ERANGE && err != -EFBIG) {
		close(ch->fd);
		ch->fd = -1;
	}
	if (err == 0 && ch->kind == CHANNEL_POWER &&
	    (double)*value / 1e6 > CEEMS_HWMON_MAX_POWER_W)
		err = -ERANGE;
	return err;
}

static void
hwmon_sample(struct ceems_energy_source *src, uint64_t now_ns)
{
	struct hwmon_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		struct hwmon_channel *ch = &priv->channels[i];
		struct ceems_energy_counter *c = &src->counters[i];
		uint64_t value;
		int err;

		err = read_channel(ch, &value);
		if (err < 0) {
			ceems_energy_reader_fail(&ch->reader, c, err,
				ch->fd < 0 ? CEEMS_GAP_RESET :
				CEEMS_GAP_READ_ERROR);
			continue;
		}
		if (ch->kind == CHANNEL_ENERGY)
			ceems_energy_reader_update(&ch->reader, c, value,
						   now_ns);
		else
			ceems_energy_reader_power(&ch->reader, c, &ch->prev_w,
						  (double)value / 1e6, now_ns,
						  priv->max_power_gap_ns);
	}
}

static uint64_t
hwmon_max_sample_interval_ns(const struct ceems_energy_source *src)
{
	const struct hwmon_priv *priv = src->priv;

	/* Energy counters have no known wrap; power needs samples closer
	 * than the integration limit, with room for a late one. */
	return priv->have_power ? priv->max_power_gap_ns / 2 : 0;
}

static void
hwmon_close(struct ceems_energy_source *src)
{
	struct hwmon_priv *priv = src->priv;
	size_t i;

	for (i = 0; i < src->ncounters; i++) {
		if (priv->channels[i].fd >= 0)
			close(priv->channels[i].fd);
		free(priv->channels[i].path);
	}
	free(priv->channels);
	free(priv);
	free(src->counters);
	free(src);
}

/* Energy channels are cumulative; power channels are not. */
static struct ceems_energy_reader *
hwmon_reader(struct ceems_energy_source *src, size_t i)
{
	struct hwmon_priv *priv = src->priv;

	if (i >= src->ncounters || priv->channels[i].kind != CHANNEL_ENERGY)
		return NULL;
	return &priv->channels[i].reader;
}

static const struct ceems_energy_source_ops hwmon_ops = {
	.kind = "hwmon",
	.sample = hwmon_sample,
	.max_sample_interval_ns = hwmon_max_sample_interval_ns,
	.close = hwmon_close,
	.reader = hwmon_reader,
};

/* Read a short attribute of DIR into BUF, trailing blanks removed; ""
 * when it is missing or unreadable (labels and names are optional). */
static void
read_label(const char *dir, const char *attr, char *buf, size_t size)
{
	char path[PATH_MAX];
	ssize_t n;

	buf[0] = '\0';
	if (snprintf(path, sizeof(path), "%s/%s", dir, attr) >= (int)sizeof(path))
		return;
	n = ceems_fileio_read_text_file(path, buf, size);
	if (n < 0) {
		buf[0] = '\0';
		return;
	}
	while (n > 0 && isspace((unsigned char)buf[n - 1]))
		buf[--n] = '\0';
}

/* Parse "<prefix><N>_<suffix>" with 1 <= N <= HWMON_MAX_CHANNEL_NUMBER. */
static int
channel_number(const char *name, const char *prefix, const char *suffix)
{
	size_t plen = strlen(prefix);
	int n = 0;

	if (strncmp(name, prefix, plen) != 0)
		return -1;
	name += plen;
	if (*name < '1' || *name > '9')
		return -1;
	for (; *name >= '0' && *name <= '9'; name++) {
		n = n * 10 + (*name - '0');
		if (n > HWMON_MAX_CHANNEL_NUMBER)
			return -1;
	}
	if (*name != '_' || strcmp(name + 1, suffix) != 0)
		return -1;
	return n;
}

/* What a chip offers: bit per channel number and file kind. */
struct chip_files {
	bool energy[HWMON_MAX_CHANNEL_NUMBER + 1];
	bool power_input[HWMON_MAX_CHANNEL_NUMBER + 1];
	bool power_average[HWMON_MAX_CHANNEL_NUMBER + 1];
};

static void
scan_chip_files(const char *dir, struct chip_files *f)
{
	struct dirent *de;
	DIR *d;
	int n;

	memset(f, 0, sizeof(*f));
	d = opendir(dir);
	if (d == NULL)
		return;
	while ((de = readdir(d)) != NULL) {
		if ((n = channel_number(de->d_name, "energy", "input")) > 0)
			f->energy[n] = true;
		else if ((n = channel_number(de->d_name, "power", "input")) > 0)
			f->power_input[n] = true;
		else if ((n = channel_number(de->d_name, "power", "average")) > 0)
			f->power_average[n] = true;
	}
	closedir(d);
}

/* Whether power channel N of the chip in DIR has an energy counter: the
 * energy channel with the same label, or when neither is labelled, the
 * one with the same number (channel numbers of different types are not
 * otherwise related). */
static bool
power_has_energy(const char *dir, const struct chip_files *f, int n)
{
	char attr[32], plabel[64], elabel[64];
	int m;

	snprintf(attr, sizeof(attr), "power%d_label", n);
	read_label(dir, attr, plabel, sizeof(plabel));
	if (plabel[0] == '\0') {
		if (!f->energy[n])
			return false;
		snprintf(attr, sizeof(attr), "energy%d_label", n);
		read_label(dir, attr, elabel, sizeof(elabel));
		return elabel[0] == '\0';
	}
	for (m = 1; m <= HWMON_MAX_CHANNEL_NUMBER; m++) {
		if (!f->energy[m])
			continue;
		snprintf(attr, sizeof(attr), "energy%d_label", m);
		read_label(dir, attr, elabel, sizeof(elabel));
		if (strcmp(plabel, elabel) == 0)
			return true;
	}
	return false;
}

/* Set up channel CH / counter C for FILE of chip directory DIR; 0, or
 * negative when it is left out (logged here). */
static int
open_channel(struct hwmon_priv *priv, const char *hwmon, const char *dir,
	     const char *chip, enum channel_kind kind, int n,
	     const char *file, struct hwmon_channel *ch,
	     struct ceems_energy_counter *c, uint64_t now_ns)
{
	enum ceems_energy_domain domain;
	char path[PATH_MAX], attr[32], label[64];
	const char *type = kind == CHANNEL_ENERGY ? "energy" : "power";
	uint64_t value;
	int device, err;

	snprintf(attr, sizeof(attr), "%s%d_label", type, n);
	read_label(dir, attr, label, sizeof(label));
	if (ceems_hwmon_classify(chip, label, &domain, &device) < 0) {
		ceems_debug("hwmon: %s/%s (chip '%s', label '%s') left out: "
			    "counted by its package or a GPU source", hwmon,
			    file, chip, label);
		return -ENOENT;
	}
	if (snprintf(path, sizeof(path), "%s/%s", dir, file) >= (int)sizeof(path))
		return -ENAMETOOLONG;
	ch->path = strdup(path);
	if (ch->path == NULL)
		return -ENOMEM;
	ch->kind = kind;
	memset(&ch->reader, 0, sizeof(ch->reader));
	err = open_value(ch);
	if (err < 0) {
		ceems_warning("hwmon: cannot open %s: %s; channel left out",
			      path, strerror(-err));
		free(ch->path);
		ch->path = NULL;
		return err;
	}
	ch->reader.needs_identity = kind == CHANNEL_ENERGY;
	ch->reader.lim.unit_j = 1e-6;
	ch->reader.lim.range = 0;
	ch->reader.lim.max_power_w = CEEMS_HWMON_MAX_POWER_W;
	ch->reader.lim.slack_ns = CEEMS_HWMON_SLACK_NS;
	ch->prev_w = 0.0;

	memset(c, 0, sizeof(*c));
	c->domain = domain;
	c->device = device;
	snprintf(c->name, sizeof(c->name), "%s/%s%d", hwmon, type, n);
	/* Both files count micro-units; a power file is a reading of the
	 * moment, which the sampling carries to the next sample. */
	if (kind == CHANNEL_ENERGY) {
		c->resolution_j = 1e-6;
	} else {
		c->power_res_w = 1e-6;
		c->power_lag_s = CEEMS_HWMON_POWER_LAG_S;
	}

	err = read_channel(ch, &value);
	if (err < 0) {
		ceems_energy_reader_fail(&ch->reader, c, err,
					 CEEMS_GAP_READ_ERROR);
	} else {
		ch->reader.prev = value;
		ch->reader.last_ns = now_ns;
		ch->reader.have_prev = true;
		ch->prev_w = (double)value / 1e6;
	}
	if (kind == CHANNEL_POWER)
		priv->have_power = true;
	ceems_debug("hwmon: %s (chip '%s', label '%s') as %s %d", c->name,
		    chip, label, ceems_job_figures_energy_domain_name(domain), device);
	return 0;
}

static int
compare_hwmon_numbers(const void *a, const void *b)
{
	unsigned int x = *(const unsigned int *)a;
	unsigned int y = *(const unsigned int *)b;

	return x < y ? -1 : x > y;
}

/* Numbers N of the hwmonN entries of BASE, sorted; at most MAX. */
static size_t
list_chips(const char *base, unsigned int *numbers, size_t max)
{
	struct dirent *de;
	size_t n = 0;
	DIR *dir;

	dir = opendir(base);
	if (dir == NULL) {
		ceems_info("hwmon: no hwmon class at %s: %s", base,
			   strerror(errno));
		return 0;
	}
	while ((de = readdir(dir)) != NULL && n < max) {
		const char *p = de->d_name;
		unsigned long v;
		char *end;

		if (strncmp(p, "hwmon", 5) != 0 || !isdigit((unsigned char)p[5]))
			continue;
		v = strtoul(p + 5, &end, 10);
		if (*end != '\0' || v > 99999)
			continue;
		numbers[n++] = (unsigned int)v;
	}
	closedir(dir);
	qsort(numbers, n, sizeof(numbers[0]), compare_hwmon_numbers);
	return n;
}

struct ceems_energy_source *
ceems_hwmon_open(const char *sysfs_root, uint64_t max_power_gap_ns,
		 uint64_t now_ns)
{
	struct ceems_energy_source *src;
	struct hwmon_priv *priv;
	unsigned int chips[256];
	struct chip_files files;
	char base[PATH_MAX];
	size_t nchips, i;
	int pass, num;

	if (ceems_energy_sysfs_path(base, sizeof(base), sysfs_root,
				    HWMON_DIR) < 0) {
		ceems_warning("hwmon: sysfs root too long");
		return NULL;
	}
	nchips = list_chips(base, chips, sizeof(chips) / sizeof(chips[0]));
	if (nchips == 0)
		return NULL;

	src = calloc(1, sizeof(*src));
	priv = calloc(1, sizeof(*priv));
	if (src != NULL)
		src->counters = calloc(CEEMS_HWMON_MAX_CHANNELS,
				       sizeof(*src->counters));
	if (priv != NULL)
		priv->channels = calloc(CEEMS_HWMON_MAX_CHANNELS,
					sizeof(*priv->channels));
	if (src == NULL || priv == NULL || src->counters == NULL ||
	    priv->channels == NULL) {
		ceems_error("hwmon: out of memory");
		if (priv != NULL)
			free(priv->channels);
		free(priv);
		if (src != NULL)
			free(src->counters);
		free(src);
		return NULL;
	}
	src->ops = &hwmon_ops;
	src->priv = priv;
	priv->max_power_gap_ns = max_power_gap_ns != 0 ? max_power_gap_ns :
		CEEMS_HWMON_DEFAULT_MAX_POWER_GAP_NS;

	for (i = 0; i < nchips; i++) {
		char dir[PATH_MAX], hwmon[32], chip[64], file[32];

		snprintf(hwmon, sizeof(hwmon), "hwmon%u", chips[i]);
		if (snprintf(dir, sizeof(dir), "%s/%s", base, hwmon) >=
		    (int)sizeof(dir))
			continue;
		read_label(dir, "name", chip, sizeof(chip));
		scan_chip_files(dir, &files);
		/* Energy channels first: a power channel measuring the
		 * same thing is then left out. */
		for (pass = 0; pass < 2; pass++)
		for (num = 1; num <= HWMON_MAX_CHANNEL_NUMBER; num++) {
			enum channel_kind kind;

			if (pass == 0) {
				if (!files.energy[num])
					continue;
				kind = CHANNEL_ENERGY;
				snprintf(file, sizeof(file), "energy%d_input",
					 num);
			} else if (files.power_input[num] ||
				   files.power_average[num]) {
				if (power_has_energy(dir, &files, num)) {
					ceems_debug("hwmon: %s/power%d left out: "
						    "its energy counter is read",
						    hwmon, num);
					continue;
				}
				kind = CHANNEL_POWER;
				snprintf(file, sizeof(file), files.power_input[num] ?
					 "power%d_input" : "power%d_average", num);
			} else {
				continue;
			}
			if (src->ncounters == CEEMS_HWMON_MAX_CHANNELS) {
				ceems_warning("hwmon: more than %d channels; "
					      "%s/%s left out",
					      CEEMS_HWMON_MAX_CHANNELS, hwmon,
					      file);
				continue;
			}
			if (open_channel(priv, hwmon, dir, chip, kind, num, file,
					 &priv->channels[src->ncounters],
					 &src->counters[src->ncounters],
					 now_ns) == 0)
				src->ncounters++;
		}
	}
	if (src->ncounters == 0) {
		ceems_info("hwmon: no energy or power channel under %s", base);
		hwmon_close(src);
		return NULL;
	}
	ceems_info("hwmon: %zu channel(s) under %s", src->ncounters, base);
	return src;
}
