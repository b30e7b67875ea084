/* conf.c - strict parser of the ceems configuration file. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/conf.h"
#include "base/fileio.h"

enum key_type {
	KEY_DURATION,	/* uint64_t ns, within [min, max] */
	KEY_UINT32,	/* uint32_t within [min, max] */
	KEY_PATH,	/* absolute path */
	KEY_WORD,	/* one of the words in `words` */
	KEY_BOOL,
	KEY_WATTS,	/* double >= 0, or "learn" (stored as -1) */
	KEY_REAL,	/* double within [min, max] */
	KEY_NAME,	/* [A-Za-z0-9._-]+ */
	KEY_STRING,	/* any printable text, spaces and '=' included */
	KEY_BYTES,	/* uint64_t bytes, K/M/G/T suffixes, within [min, max] */
	KEY_LIBRARY,	/* a library: absolute path, or a name without '/' */
};

struct key {
	const char *name;
	enum key_type type;
	size_t offset;
	size_t size;		/* for strings */
	double min, max;
	const char *words;	/* KEY_WORD: space-separated */
};

#define FIELD(f) offsetof(struct ceems_config, f), sizeof(((struct ceems_config *)0)->f)

static const struct key keys[] = {
	{ "interval", KEY_DURATION, FIELD(interval_ns), 10e6, 3600e9, NULL },
	{ "checkpoint_interval", KEY_DURATION, FIELD(checkpoint_interval_ns), 0, 3600e9, NULL },
	{ "usage_interval", KEY_DURATION, FIELD(usage_interval_ns), 10e6, 3600e9, NULL },
	{ "max_jobs", KEY_UINT32, FIELD(max_jobs), 1, 65536, NULL },
	{ "series_all", KEY_BOOL, FIELD(series_all), 0, 0, NULL },
	{ "series_interval", KEY_DURATION, FIELD(series_interval_ns), 1e9, 86400e9, NULL },
	{ "summary_gpu_min_time", KEY_DURATION, FIELD(summary_gpu_min_ns), 0, 86400e9, NULL },
	{ "finish_grace", KEY_DURATION, FIELD(finish_grace_ns), 10e6, 3600e9, NULL },
	{ "reap_grace", KEY_DURATION, FIELD(reap_grace_ns), 10e6, 86400e9, NULL },
	{ "socket", KEY_PATH, FIELD(socket_path), 0, 0, NULL },
	{ "state_dir", KEY_PATH, FIELD(state_dir), 0, 0, NULL },
	{ "spool_dir", KEY_PATH, FIELD(spool_dir), 0, 0, NULL },
	{ "note_dir", KEY_PATH, FIELD(note_dir), 0, 0, NULL },
	{ "log_level", KEY_WORD, FIELD(log_level), 0, 0, "error warning info debug" },
	{ "database", KEY_STRING, FIELD(database), 0, 0, NULL },
	{ "sacct_database", KEY_STRING, FIELD(sacct_database), 0, 0, NULL },
	{ "database_timeout", KEY_DURATION, FIELD(database_timeout_ns), 100e6, 60e9, NULL },
	{ "spool_max_bytes", KEY_BYTES, FIELD(spool_max_bytes), 4096, 1125899906842624.0, NULL },
	{ "sysfs_root", KEY_PATH, FIELD(sysfs_root), 0, 0, NULL },
	{ "procfs_root", KEY_PATH, FIELD(procfs_root), 0, 0, NULL },
	{ "cgroupfs_prefix", KEY_PATH, FIELD(cgroupfs_prefix), 0, 0, NULL },
	{ "source_rapl", KEY_BOOL, FIELD(source_rapl), 0, 0, NULL },
	{ "source_hwmon", KEY_BOOL, FIELD(source_hwmon), 0, 0, NULL },
	{ "source_pm_counters", KEY_BOOL, FIELD(source_pm_counters), 0, 0, NULL },
	{ "gpu_nvml_library", KEY_LIBRARY, FIELD(gpu_nvml_library), 0, 0, NULL },
	{ "gpu_rocm_smi_library", KEY_LIBRARY, FIELD(gpu_rocm_smi_library), 0, 0, NULL },
	{ "gres_conf", KEY_PATH, FIELD(gres_conf), 0, 0, NULL },
	{ "idle_power_package", KEY_WATTS, FIELD(idle_power_package_w), 0, 100000, NULL },
	{ "idle_power_dram", KEY_WATTS, FIELD(idle_power_dram_w), 0, 100000, NULL },
	{ "cluster", KEY_NAME, FIELD(cluster), 0, 0, NULL },
	{ "zone", KEY_NAME, FIELD(zone), 0, 0, NULL },
	{ "pue", KEY_REAL, FIELD(pue), 1.0, 5.0, NULL },
	{ "emissions_table", KEY_PATH, FIELD(emissions_table), 0, 0, NULL },
	{ "intensity_file", KEY_PATH, FIELD(intensity_file), 0, 0, NULL },
	{ "ebpf", KEY_WORD, FIELD(ebpf), 0, 0, "auto fentry kprobe btf tracepoint off" },
	{ "bmc", KEY_WORD, FIELD(bmc), 0, 0, "none inband lan" },
	{ "bmc_host", KEY_STRING, FIELD(bmc_host), 0, 0, NULL },
	{ "bmc_credentials_file", KEY_PATH, FIELD(bmc_credentials_file), 0, 0, NULL },
	{ "bmc_interval", KEY_DURATION, FIELD(bmc_interval_ns), 10e6, 3600e9, NULL },
	{ "bmc_timeout", KEY_DURATION, FIELD(bmc_timeout_ns), 100e6, 60e9, NULL },
	{ "bmc_sensor", KEY_STRING, FIELD(bmc_sensor), 0, 0, NULL },
	{ "bmc_workarounds", KEY_STRING, FIELD(bmc_workarounds), 0, 0, NULL },
	{ "bmc_privilege", KEY_WORD, FIELD(bmc_privilege), 0, 0, "user operator admin" },
	{ "perf", KEY_BOOL, FIELD(perf), 0, 0, NULL },
	{ "perf_hardware", KEY_BOOL, FIELD(perf_hardware), 0, 0, NULL },
	{ "perf_max_fds", KEY_UINT32, FIELD(perf_max_fds), 0, 16777216, NULL },
	{ "perf_adopt", KEY_BOOL, FIELD(perf_adopt), 0, 0, NULL },
};

void
ceems_config_defaults(struct ceems_config *c)
{
	memset(c, 0, sizeof(*c));
	c->interval_ns = 1000000000ULL;
	c->checkpoint_interval_ns = 1000000000ULL;
	c->usage_interval_ns = 10000000000ULL;
	c->max_jobs = 1024;
	c->series_interval_ns = 30000000000ULL;
	c->summary_gpu_min_ns = CEEMS_SUMMARY_GPU_MIN_S * 1000000000ULL;
	/* 30 s: far beyond the plugin's store (database_timeout, 2 s by
	 * default, plus the agent call); 60 s: beyond the epilog, which
	 * slurmd runs within seconds of the job's cgroup removal. */
	c->finish_grace_ns = 30000000000ULL;
	c->reap_grace_ns = 60000000000ULL;
	snprintf(c->socket_path, sizeof(c->socket_path), "/run/ceems/agent.sock");
	snprintf(c->state_dir, sizeof(c->state_dir), "/var/lib/ceems/agent");
	snprintf(c->spool_dir, sizeof(c->spool_dir), "/var/spool/ceems");
	snprintf(c->log_level, sizeof(c->log_level), "info");
	c->database_timeout_ns = 2000000000ULL;
	c->spool_max_bytes = UINT64_C(1) << 30;
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "/sys");
	snprintf(c->procfs_root, sizeof(c->procfs_root), "/proc");
	snprintf(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix), "/");
	c->source_rapl = true;
	c->source_hwmon = true;
	c->source_pm_counters = true;
	snprintf(c->gres_conf, sizeof(c->gres_conf), "%s",
		 CEEMS_DEFAULT_GRES_CONF);
	c->idle_power_package_w = -1;
	c->idle_power_dram_w = -1;
	c->cluster[0] = '\0';	/* Slurm's ClusterName */
	c->pue = 1.0;
	snprintf(c->emissions_table, sizeof(c->emissions_table),
		 "%s/carbon-intensity.tsv", CEEMS_PKGDATADIR);
	snprintf(c->ebpf, sizeof(c->ebpf), "auto");
	snprintf(c->bmc, sizeof(c->bmc), "none");
	c->bmc_interval_ns = 10000000000ULL;
	c->bmc_timeout_ns = 5000000000ULL;
	snprintf(c->bmc_sensor, sizeof(c->bmc_sensor), "auto");
	snprintf(c->bmc_workarounds, sizeof(c->bmc_workarounds), "none");
	snprintf(c->bmc_privilege, sizeof(c->bmc_privilege), "user");
	c->perf = true;
	c->perf_hardware = false;
	c->perf_max_fds = 65536;
	c->perf_adopt = true;
}

int
ceems_parse_duration(const char *text, uint64_t *ns)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "m", 60e9 }, { "h", 3600e9 }, { "", 1e9 },
	};
	char *end;
	double value;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	value = strtod(text, &end);
	if (errno != 0 || !isfinite(value) || value < 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			double v = value * units[i].scale;

			if (v > 1e18)
				return -1;
			*ns = (uint64_t)(v + 0.5);
			return 0;
		}
	}
	return -1;
}

int
ceems_parse_bytes(const char *text, uint64_t *bytes)
{
	static const struct { const char *suffix; unsigned shift; } units[] = {
		{ "", 0 }, { "K", 10 }, { "M", 20 }, { "G", 30 }, { "T", 40 },
	};
	unsigned long long v;
	char *end;

	if (!isdigit((unsigned char)text[0]))
		return -1;
	errno = 0;
	v = strtoull(text, &end, 10);
	if (errno != 0)
		return -1;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].suffix) == 0) {
			if (v > (UINT64_MAX >> units[i].shift))
				return -1;
			*bytes = (uint64_t)v << units[i].shift;
			return 0;
		}
	}
	return -1;
}

/* A password in a configuration file that every node (and often every
 * user) can read would leak it: libpq finds passwords in ~/.pgpass,
 * PGPASSFILE or a service file instead.  Catches "password=" in a
 * key=value string or a URI's query, and "user:secret@" in a URI. */
static bool
holds_password(const char *s)
{
	const char *scheme = strstr(s, "://");

	for (const char *p = s; *p != '\0'; p++) {
		if (strncasecmp(p, "password", 8) == 0) {
			const char *q = p + 8;

			while (*q == ' ' || *q == '\t')
				q++;
			if (*q == '=')
				return true;
		}
	}
	if (scheme != NULL) {
		const char *auth = scheme + 3;
		size_t len = strcspn(auth, "/?");
		const char *at = memchr(auth, '@', len);

		if (at != NULL && memchr(auth, ':', (size_t)(at - auth)) != NULL)
			return true;
	}
	return false;
}

static int
parse_real(const char *text, double *out)
{
	char *end;

	if (text[0] == '\0')
		return -1;
	errno = 0;
	*out = strtod(text, &end);
	if (errno != 0 || *end != '\0' || !isfinite(*out))
		return -1;
	return 0;
}

static bool
word_in_list(const char *word, const char *list)
{
	size_t n = strlen(word);
	const char *p = list;

	while (*p != '\0') {
		size_t len = strcspn(p, " ");

		if (len == n && strncmp(p, word, n) == 0)
			return true;
		p += len;
		while (*p == ' ')
			p++;
	}
	return false;
}

static bool
is_name(const char *s)
{
	if (*s == '\0')
		return false;
	for (; *s != '\0'; s++)
		if (!isalnum((unsigned char)*s) && *s != '.' && *s != '_' &&
		    *s != '-')
			return false;
	return true;
}

/* Store VALUE for key K into C.  Returns NULL, or what is wrong. */
static const char *
set_key(struct ceems_config *c, const struct key *k, const char *value)
{
	char *field = (char *)c + k->offset;
	double real;
	uint64_t ns;

	switch (k->type) {
	case KEY_DURATION:
		if (ceems_parse_duration(value, &ns) < 0)
			return "is not a duration (examples: 250ms, 1s, 2m)";
		if ((double)ns < k->min || (double)ns > k->max)
			return "is out of range";
		memcpy(field, &ns, sizeof(ns));
		return NULL;
	case KEY_UINT32: {
		char *end;
		unsigned long long v;

		if (!isdigit((unsigned char)value[0]))
			return "is not a whole number";
		errno = 0;
		v = strtoull(value, &end, 10);
		if (errno != 0 || *end != '\0')
			return "is not a whole number";
		if ((double)v < k->min || (double)v > k->max)
			return "is out of range";
		uint32_t v32 = (uint32_t)v;
		memcpy(field, &v32, sizeof(v32));
		return NULL;
	}
	case KEY_PATH:
		if (value[0] != '/')
			return "must be an absolute path";
		if (strlen(value) >= k->size)
			return "is too long";
		memcpy(field, value, strlen(value) + 1);
		return NULL;
	case KEY_WORD:
		if (!word_in_list(value, k->words))
			return "is not one of the allowed words";
		memcpy(field, value, strlen(value) + 1);
		return NULL;
	case KEY_BOOL: {
		bool b;

		if (strcmp(value, "yes") == 0 || strcmp(value, "true") == 0 ||
		    strcmp(value, "on") == 0 || strcmp(value, "1") == 0)
			b = true;
		else if (strcmp(value, "no") == 0 || strcmp(value, "false") == 0 ||
			 strcmp(value, "off") == 0 || strcmp(value, "0") == 0)
			b = false;
		else
			return "is not yes or no";
		memcpy(field, &b, sizeof(b));
		return NULL;
	}
	case KEY_WATTS: {
		size_t len = strlen(value);
		char number[64];

		if (strcmp(value, "learn") == 0) {
			real = -1;
			memcpy(field, &real, sizeof(real));
			return NULL;
		}
		/* An optional unit: "45W" or "45 W". */
		if (len > 0 && (value[len - 1] == 'W' || value[len - 1] == 'w'))
			len--;
		while (len > 0 && value[len - 1] == ' ')
			len--;
		if (len == 0 || len >= sizeof(number))
			return "is not a power in watts or 'learn'";
		memcpy(number, value, len);
		number[len] = '\0';
		if (parse_real(number, &real) < 0 || real < k->min ||
		    real > k->max)
			return "is not a power in watts or 'learn'";
		memcpy(field, &real, sizeof(real));
		return NULL;
	}
	case KEY_REAL:
		if (parse_real(value, &real) < 0)
			return "is not a number";
		if (real < k->min || real > k->max)
			return "is out of range";
		memcpy(field, &real, sizeof(real));
		return NULL;
	case KEY_NAME:
		if (!is_name(value))
			return "may hold only letters, digits, '.', '_' and '-'";
		if (strlen(value) >= k->size)
			return "is too long";
		memcpy(field, value, strlen(value) + 1);
		return NULL;
	case KEY_LIBRARY:
		/* A relative path would be found from the agent's working
		 * directory: never what root should load. */
		for (const char *p = value; *p != '\0'; p++)
			if ((unsigned char)*p <= 0x20 || *p == 0x7f)
				return "holds a space or a control character";
		if (value[0] != '/' && strchr(value, '/') != NULL)
			return "must be an absolute path, or a library name without '/'";
		if (strlen(value) >= k->size)
			return "is too long";
		memcpy(field, value, strlen(value) + 1);
		return NULL;
	case KEY_STRING:
		for (const char *p = value; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return "holds a control character";
		if (strlen(value) >= k->size)
			return "is too long";
		if (holds_password(value))
			return "holds a password: put it in a pg_service.conf service, "
			       "~/.pgpass or PGPASSFILE instead";
		memcpy(field, value, strlen(value) + 1);
		return NULL;
	case KEY_BYTES:
		if (ceems_parse_bytes(value, &ns) < 0)
			return "is not a size in bytes (examples: 65536, 64K, 512M, 1G)";
		if ((double)ns < k->min || (double)ns > k->max)
			return "is out of range";
		memcpy(field, &ns, sizeof(ns));
		return NULL;
	}
	return "has an unknown type";
}

static const struct key *
find_key(const char *name, size_t len)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i].name) == len &&
		    strncmp(keys[i].name, name, len) == 0)
			return &keys[i];
	return NULL;
}

static void
trim(const char **start, const char **end)
{
	while (*start < *end && isspace((unsigned char)**start))
		(*start)++;
	while (*end > *start && isspace((unsigned char)(*end)[-1]))
		(*end)--;
}

__attribute__((format(printf, 5, 6))) static int
fail(char *err, size_t err_size, const char *name, unsigned line,
     const char *fmt, ...)
{
	va_list ap;
	int n;

	n = snprintf(err, err_size, "%s:%u: ", name, line);
	if (n > 0 && (size_t)n < err_size) {
		va_start(ap, fmt);
		vsnprintf(err + n, err_size - (size_t)n, fmt, ap);
		va_end(ap);
	}
	return -1;
}

int
ceems_config_parse(struct ceems_config *config, const char *text,
		   const char *name, char *err, size_t err_size)
{
	struct ceems_config work = *config;
	const char *line = text;
	unsigned lineno = 0;

	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *hash = memchr(line, '#', (size_t)(end - line));
		const char *eq, *kstart = line, *kend, *vstart, *vend;
		const struct key *k;
		const char *problem;
		char value[CEEMS_CONFIG_STRING_MAX];

		lineno++;
		if (hash != NULL)
			end = hash;
		eq = memchr(line, '=', (size_t)(end - line));
		kend = eq ? eq : end;
		trim(&kstart, &kend);
		if (eq == NULL) {
			if (kstart != kend)
				return fail(err, err_size, name, lineno,
					    "expected 'key = value'");
			goto next;
		}
		if (kstart == kend)
			return fail(err, err_size, name, lineno, "missing key before '='");
		k = find_key(kstart, (size_t)(kend - kstart));
		if (k == NULL)
			return fail(err, err_size, name, lineno, "unknown key '%.*s'",
				    (int)(kend - kstart), kstart);
		vstart = eq + 1;
		vend = end;
		trim(&vstart, &vend);
		if ((size_t)(vend - vstart) >= sizeof(value))
			return fail(err, err_size, name, lineno, "value of %s is too long",
				    k->name);
		memcpy(value, vstart, (size_t)(vend - vstart));
		value[vend - vstart] = '\0';
		problem = set_key(&work, k, value);
		if (problem != NULL)
			return fail(err, err_size, name, lineno, "%s = '%s' %s",
				    k->name, value, problem);
next:
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	*config = work;
	return 0;
}

int
ceems_config_load_text(struct ceems_config *config, const char *path,
		       char *text, size_t text_size, char *err, size_t err_size)
{
	ssize_t n = ceems_read_text_file(path, text, text_size);

	if (n < 0) {
		snprintf(err, err_size, "%s: %s", path,
			 n == -EFBIG ? "file larger than 64 KiB" : strerror((int)-n));
		return -1;
	}
	if ((size_t)n != strlen(text)) {
		snprintf(err, err_size, "%s: NUL byte in the file", path);
		return -1;
	}
	return ceems_config_parse(config, text, path, err, err_size);
}

int
ceems_config_load(struct ceems_config *config, const char *path, char *err,
		  size_t err_size)
{
	char *text = malloc(CEEMS_CONFIG_TEXT_MAX);
	int ret;

	if (text == NULL) {
		snprintf(err, err_size, "%s: out of memory", path);
		return -1;
	}
	ret = ceems_config_load_text(config, path, text, CEEMS_CONFIG_TEXT_MAX,
				     err, err_size);
	free(text);
	return ret;
}
