/* conf_keys.c - the table of ceems's settings and the check of one value
 * against it (conf_keys.h).  ceems.conf(5), spank-ceems(8) and
 * ceems-agent(8) document what is here; tests/unit/test_conf_keys holds
 * the table and the pages to the same keys and ranges. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/conf.h"
#include "base/conf_keys.h"
#include "base/conf_value.h"
#include "base/number.h"

#define FIELD(f) offsetof(struct ceems_config, f), \
	sizeof(((struct ceems_config *)0)->f)
/* A key outside ceems.conf: no field, text up to a path's length. */
#define NO_FIELD 0, CEEMS_CONFIG_PATH_MAX

#define CONF CEEMS_KEY_IN_CONF
#define PLUGSTACK CEEMS_KEY_IN_PLUGSTACK
#define AGENT CEEMS_KEY_IN_AGENT

static const struct ceems_key keys[] = {
	{ "interval", NULL, CEEMS_KEY_DURATION, CONF | PLUGSTACK | AGENT, "1s",
	  10e6, 3600e9, NULL, FIELD(interval_ns),
	  "sampling interval of the node agent" },
	{ "checkpoint_interval", NULL, CEEMS_KEY_DURATION, CONF, "10s",
	  0, 3600e9, NULL, FIELD(checkpoint_interval_ns),
	  "how often the agent's state is written" },
	{ "usage_interval", NULL, CEEMS_KEY_DURATION, CONF, "10s",
	  10e6, 3600e9, NULL, FIELD(usage_interval_ns),
	  "how often a job's full cgroup usage is read" },
	/* At most a minute: job notes and adoption wait for a tick. */
	{ "idle_interval", NULL, CEEMS_KEY_DURATION, CONF, "10s",
	  10e6, 60e9, NULL, FIELD(idle_interval_ns),
	  "the agent's tick while it holds no job" },
	{ "max_jobs", NULL, CEEMS_KEY_UINT32, CONF, "1024",
	  1, 65536, NULL, FIELD(max_jobs),
	  "most jobs registered at once" },
	{ "series_all", NULL, CEEMS_KEY_BOOL, CONF, "no",
	  0, 0, NULL, FIELD(series_all),
	  "a time series for every job" },
	{ "series_interval", NULL, CEEMS_KEY_DURATION, CONF, "30s",
	  1e9, 86400e9, NULL, FIELD(series_interval_ns),
	  "resolution of the time series" },
	{ "summary_gpu_min_time", NULL, CEEMS_KEY_DURATION, CONF, "5m",
	  0, 86400e9, NULL, FIELD(summary_gpu_min_ns),
	  "shorter jobs get no GPU notes" },
	/* 30 s: far beyond the plugin's store (database_timeout plus the
	 * agent call); 60 s: beyond the epilog, which slurmd runs within
	 * seconds of the job's cgroup removal. */
	{ "finish_grace", NULL, CEEMS_KEY_DURATION, CONF, "30s",
	  10e6, 3600e9, NULL, FIELD(finish_grace_ns),
	  "wait for the plugin to store a finished job's record" },
	{ "reap_grace", NULL, CEEMS_KEY_DURATION, CONF, "60s",
	  10e6, 86400e9, NULL, FIELD(reap_grace_ns),
	  "wait for a vanished job's deregistration" },
	{ "jobinfo", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(jobinfo),
	  "ceems-jobinfo asks slurmctld for the agent" },
	{ "socket", NULL, CEEMS_KEY_PATH, CONF | AGENT, "/run/ceems/agent.sock",
	  0, 0, NULL, FIELD(socket_path),
	  "the agent's socket" },
	{ "state_dir", NULL, CEEMS_KEY_PATH, CONF, "/var/lib/ceems/agent",
	  0, 0, NULL, FIELD(state_dir),
	  "the agent's per-job state" },
	{ "spool_dir", NULL, CEEMS_KEY_PATH, CONF, "/var/spool/ceems",
	  0, 0, NULL, FIELD(spool_dir),
	  "records waiting for the database" },
	{ "note_dir", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(note_dir),
	  "notes of jobs the agent was not told of (\"\": SPOOL_DIR/notes)" },
	{ "log_level", NULL, CEEMS_KEY_WORD, CONF, "info",
	  0, 0, "error warning info debug", FIELD(log_level),
	  "the agent's log level" },
	{ "database", NULL, CEEMS_KEY_STRING, CONF, "",
	  0, 0, NULL, FIELD(database),
	  "PostgreSQL connection of the nodes" },
	{ "sacct_database", NULL, CEEMS_KEY_STRING, CONF, "",
	  0, 0, NULL, FIELD(sacct_database),
	  "PostgreSQL connection of ceems-sacct" },
	{ "slurm_sacct", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(slurm_sacct),
	  "Slurm's sacct, for the fields ceems does not keep (\"\": empty)" },
	{ "database_timeout", NULL, CEEMS_KEY_DURATION, CONF, "2s",
	  100e6, 60e9, NULL, FIELD(database_timeout_ns),
	  "longest store of one record" },
	{ "spool_max_bytes", NULL, CEEMS_KEY_BYTES, CONF, "1G",
	  4096, 1125899906842624.0, NULL, FIELD(spool_max_bytes),
	  "soft cap of the spool" },
	{ "sysfs_root", NULL, CEEMS_KEY_PATH, CONF, "/sys",
	  0, 0, NULL, FIELD(sysfs_root),
	  "where sysfs is" },
	{ "procfs_root", NULL, CEEMS_KEY_PATH, CONF, "/proc",
	  0, 0, NULL, FIELD(procfs_root),
	  "where procfs is" },
	{ "cgroupfs_prefix", NULL, CEEMS_KEY_PATH, CONF, "/",
	  0, 0, NULL, FIELD(cgroupfs_prefix),
	  "prefix of the cgroup mounts" },
	{ "source_rapl", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(source_rapl),
	  "read RAPL" },
	{ "source_hwmon", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(source_hwmon),
	  "read hwmon" },
	{ "source_pm_counters", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(source_pm_counters),
	  "read Cray pm_counters" },
	{ "gpu_nvml_library", NULL, CEEMS_KEY_LIBRARY, CONF, "",
	  0, 0, NULL, FIELD(gpu_nvml_library),
	  "the NVML library (\"\": the vendor's name, none: no NVIDIA GPUs)" },
	{ "gpu_rocm_smi_library", NULL, CEEMS_KEY_LIBRARY, CONF, "",
	  0, 0, NULL, FIELD(gpu_rocm_smi_library),
	  "the ROCm SMI library (\"\": the vendor's name, none: no AMD GPUs)" },
	{ "gres_conf", NULL, CEEMS_KEY_PATH, CONF, CEEMS_DEFAULT_GRES_CONF,
	  0, 0, NULL, FIELD(gres_conf),
	  "Slurm's gres.conf" },
	{ "idle_power_package", NULL, CEEMS_KEY_WATTS, CONF, "learn",
	  0, 100000, NULL, FIELD(idle_power_package_w),
	  "the packages' idle power" },
	{ "idle_power_dram", NULL, CEEMS_KEY_WATTS, CONF, "learn",
	  0, 100000, NULL, FIELD(idle_power_dram_w),
	  "the DRAM's idle power" },
	{ "cluster", NULL, CEEMS_KEY_NAME, CONF, "",
	  0, 0, NULL, FIELD(cluster),
	  "the cluster's name (\"\": Slurm's ClusterName)" },
	{ "zone", NULL, CEEMS_KEY_NAME, CONF, "",
	  0, 0, NULL, FIELD(zone),
	  "country code of the carbon intensity" },
	{ "pue", NULL, CEEMS_KEY_REAL, CONF, "1.0",
	  1.0, 5.0, NULL, FIELD(pue),
	  "power usage effectiveness" },
	{ "emissions_table", NULL, CEEMS_KEY_PATH, CONF,
	  CEEMS_PKGDATADIR "/carbon-intensity.tsv",
	  0, 0, NULL, FIELD(emissions_table),
	  "yearly carbon intensity per zone" },
	{ "intensity_file", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(intensity_file),
	  "time-varying carbon intensity" },
	/* Carbon-aware advice (doc/attribution.md): the latest start
	 * considered, and what a saving must reach for a note. */
	{ "advice_window", NULL, CEEMS_KEY_DURATION, CONF, "24h",
	  0, 604800e9, NULL, FIELD(advice_window_ns),
	  "latest start the advice considers, after the job's own" },
	{ "advice_min_saving_g", NULL, CEEMS_KEY_REAL, CONF, "50",
	  0, 1e9, NULL, FIELD(advice_min_saving_g),
	  "grams CO2e a saving must reach for a note" },
	{ "advice_min_saving_pct", NULL, CEEMS_KEY_REAL, CONF, "20",
	  0, 100, NULL, FIELD(advice_min_saving_pct),
	  "part of the job's emissions a saving must reach for a note" },
	{ "advice_min_duration", NULL, CEEMS_KEY_DURATION, CONF, "1h",
	  0, 604800e9, NULL, FIELD(advice_min_duration_ns),
	  "shorter jobs get no carbon note" },
	/* per-call by default: it alone splits the network by protocol
	 * and counts files only (doc/gather.md); auto is its old name,
	 * fentry to tracepoint force its attach type. */
	{ "ebpf", NULL, CEEMS_KEY_WORD, CONF, "per-call",
	  0, 0, "per-call per-tick off auto fentry kprobe btf tracepoint", FIELD(ebpf),
	  "per-job IO and network" },
	{ "bmc", NULL, CEEMS_KEY_WORD, CONF, "none",
	  0, 0, "none inband lan", FIELD(bmc),
	  "node power from the BMC" },
	{ "bmc_host", NULL, CEEMS_KEY_STRING, CONF, "",
	  0, 0, NULL, FIELD(bmc_host),
	  "the BMC's host (lan)" },
	{ "bmc_credentials_file", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(bmc_credentials_file),
	  "the BMC's credentials" },
	{ "bmc_interval", NULL, CEEMS_KEY_DURATION, CONF, "10s",
	  10e6, 3600e9, NULL, FIELD(bmc_interval_ns),
	  "between two BMC readings" },
	{ "bmc_timeout", NULL, CEEMS_KEY_DURATION, CONF, "5s",
	  100e6, 60e9, NULL, FIELD(bmc_timeout_ns),
	  "one IPMI exchange" },
	{ "bmc_sensor", NULL, CEEMS_KEY_STRING, CONF, "auto",
	  0, 0, NULL, FIELD(bmc_sensor),
	  "auto, dcmi or an SDR sensor's name" },
	{ "bmc_workarounds", NULL, CEEMS_KEY_STRING, CONF, "none",
	  0, 0, NULL, FIELD(bmc_workarounds),
	  "freeipmi's workarounds" },
	{ "bmc_privilege", NULL, CEEMS_KEY_WORD, CONF, "user",
	  0, 0, "user operator admin", FIELD(bmc_privilege),
	  "the IPMI privilege level" },
	{ "perf", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(perf),
	  "software perf events per job" },
	{ "perf_hardware", NULL, CEEMS_KEY_BOOL, CONF, "no",
	  0, 0, NULL, FIELD(perf_hardware),
	  "hardware perf events for every job" },
	{ "perf_max_fds", NULL, CEEMS_KEY_UINT32, CONF, "65536",
	  0, 16777216, NULL, FIELD(perf_max_fds),
	  "perf descriptors of all jobs" },
	{ "perf_adopt", NULL, CEEMS_KEY_BOOL, CONF, "yes",
	  0, 0, NULL, FIELD(perf_adopt),
	  "make a v1 job's perf_event cgroup" },

	/* The whole-job summary of a multi-node job (doc/gather.md): the
	 * batch node asks the other nodes' agents for their part. */
	{ "gather_port", NULL, CEEMS_KEY_UINT32, CONF, "6826",
	  0, 65535, NULL, FIELD(gather_port),
	  "TCP port of the agents' gather listener (0: none)" },
	{ "gather_host", NULL, CEEMS_KEY_STRING, CONF, "%n",
	  0, 0, NULL, FIELD(gather_host),
	  "a node's host for the gather, %n its name" },
	{ "gather_nodes", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(gather_nodes),
	  "file of NODE HOST[:PORT] lines, before gather_host" },
	/* A 64-node job must not hold its end for more than about a
	 * second. */
	{ "gather_timeout", NULL, CEEMS_KEY_DURATION, CONF, "1s",
	  10e6, 10e9, NULL, FIELD(gather_timeout_ns),
	  "how long the batch node waits for the other nodes" },
	{ "munge_socket", NULL, CEEMS_KEY_PATH, CONF, "",
	  0, 0, NULL, FIELD(munge_socket),
	  "munged's socket (\"\": munge's default)" },

	/* The plugin's and the agent's own. */
	{ "config", NULL, CEEMS_KEY_PATH, PLUGSTACK, CEEMS_DEFAULT_CONFIG_PATH,
	  0, 0, NULL, NO_FIELD,
	  "the configuration file" },
	{ "summary", NULL, CEEMS_KEY_WORD, PLUGSTACK, "full",
	  0, 0, "none short full", NO_FIELD,
	  "the site's summary at the end of a job" },
	{ "agent", NULL, CEEMS_KEY_PATH, PLUGSTACK | AGENT, NULL,
	  0, 0, NULL, NO_FIELD,
	  "the node agent the supervisor runs" },
	{ "agent_log", "log", CEEMS_KEY_PATH, PLUGSTACK | AGENT, NULL,
	  0, 0, NULL, NO_FIELD,
	  "the agent's and its supervisor's log" },
	{ "node", NULL, CEEMS_KEY_NAME, AGENT, "",
	  0, 0, NULL, NO_FIELD,
	  "the Slurm node whose name replaces %n in paths" },
	{ "timeout", NULL, CEEMS_KEY_UINT32, AGENT, "5000",
	  1, 3600000, NULL, NO_FIELD,
	  "how long a call waits, in ms" },
};

const struct ceems_key *
ceems_conf_keys(size_t *count)
{
	*count = sizeof(keys) / sizeof(keys[0]);
	return keys;
}

const char *
ceems_conf_keys_option(const struct ceems_key *k)
{
	return k->option != NULL ? k->option : k->name;
}

const struct ceems_key *
ceems_conf_keys_find(const char *name, size_t len, unsigned surface)
{
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *kname = surface == CEEMS_KEY_IN_AGENT ?
		    ceems_conf_keys_option(&keys[i]) : keys[i].name;

		if ((keys[i].surfaces & surface) != 0 &&
		    strlen(kname) == len && strncmp(kname, name, len) == 0)
			return &keys[i];
	}
	return NULL;
}

/* A duration as ceems.conf writes it: "10ms", "1h", "60s". */
static void
format_duration(double ns, char *buf, size_t size)
{
	static const struct { const char *unit; double scale; } units[] = {
		{ "h", 3600e9 }, { "s", 1e9 }, { "ms", 1e6 }, { "us", 1e3 },
	};

	if (ns == 0) {
		snprintf(buf, size, "0");
		return;
	}
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (fmod(ns, units[i].scale) == 0) {
			snprintf(buf, size, "%.0f%s", ns / units[i].scale,
				 units[i].unit);
			return;
		}
	snprintf(buf, size, "%.0fns", ns);
}

/* A size as ceems.conf writes it: "4K", "1024T". */
static void
format_bytes(double bytes, char *buf, size_t size)
{
	static const char units[] = "TGMK";

	for (int i = 0; i < 4; i++) {
		double scale = ldexp(1, 10 * (4 - i));

		if (bytes >= scale && fmod(bytes, scale) == 0) {
			snprintf(buf, size, "%.0f%c", bytes / scale, units[i]);
			return;
		}
	}
	snprintf(buf, size, "%.0f", bytes);
}

void
ceems_conf_keys_range(const struct ceems_key *k, char *buf, size_t size)
{
	char lo[32], hi[32];

	switch (k->type) {
	case CEEMS_KEY_DURATION:
		format_duration(k->min, lo, sizeof(lo));
		format_duration(k->max, hi, sizeof(hi));
		break;
	case CEEMS_KEY_BYTES:
		format_bytes(k->min, lo, sizeof(lo));
		format_bytes(k->max, hi, sizeof(hi));
		break;
	case CEEMS_KEY_WATTS:
		snprintf(buf, size, "%g to %g watts, or learn", k->min, k->max);
		return;
	case CEEMS_KEY_UINT32:
	case CEEMS_KEY_REAL:
		snprintf(lo, sizeof(lo), "%g", k->min);
		snprintf(hi, sizeof(hi), "%.15g", k->max);
		break;
	case CEEMS_KEY_WORD: {
		/* "error, warning, info, debug" */
		size_t o = 0;

		for (const char *p = k->words; *p != '\0' && o + 3 < size; p++) {
			if (*p == ' ') {
				buf[o++] = ',';
				buf[o++] = ' ';
			} else {
				buf[o++] = *p;
			}
		}
		if (size > 0)
			buf[o] = '\0';
		return;
	}
	default:
		if (size > 0)
			buf[0] = '\0';
		return;
	}
	snprintf(buf, size, "%s to %s", lo, hi);
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

static int
parse_uint(const char *text, double *out)
{
	const char *end = text;
	uint64_t v;

	if (ceems_number_take_u64(&end, &v) < 0 || *end != '\0')
		return -1;
	*out = (double)v;
	return 0;
}

/* "45", "45W", "45 W", or "learn" (-1). */
static int
parse_watts(const char *value, double *out)
{
	size_t len = strlen(value);
	char number[64];

	if (strcmp(value, "learn") == 0) {
		*out = -1;
		return 0;
	}
	if (len > 0 && (value[len - 1] == 'W' || value[len - 1] == 'w'))
		len--;
	while (len > 0 && value[len - 1] == ' ')
		len--;
	if (len == 0 || len >= sizeof(number))
		return -1;
	memcpy(number, value, len);
	number[len] = '\0';
	return parse_real(number, out);
}

static int
parse_bool(const char *value, bool *out)
{
	static const char *const yes[] = { "yes", "true", "on", "1" };
	static const char *const no[] = { "no", "false", "off", "0" };

	for (size_t i = 0; i < 4; i++) {
		if (strcmp(value, yes[i]) == 0) {
			*out = true;
			return 0;
		}
		if (strcmp(value, no[i]) == 0) {
			*out = false;
			return 0;
		}
	}
	return -1;
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

/* What is wrong with VALUE for a text key K, or NULL. */
static const char *
text_problem(const struct ceems_key *k, const char *value)
{
	switch (k->type) {
	case CEEMS_KEY_PATH:
		return value[0] != '/' ? "must be an absolute path" : NULL;
	case CEEMS_KEY_WORD:
		return !word_in_list(value, k->words) ?
		    "is not an allowed word" : NULL;
	case CEEMS_KEY_NAME:
		return !is_name(value) ?
		    "may hold only letters, digits, '.', '_' and '-'" : NULL;
	case CEEMS_KEY_LIBRARY:
		/* A relative path would be found from the agent's working
		 * directory: never what root should load. */
		for (const char *p = value; *p != '\0'; p++)
			if ((unsigned char)*p <= 0x20 || *p == 0x7f)
				return "holds a space or a control character";
		if (value[0] != '/' && strchr(value, '/') != NULL)
			return "must be an absolute path, or a library name without '/'";
		return NULL;
	case CEEMS_KEY_STRING:
		for (const char *p = value; *p != '\0'; p++)
			if ((unsigned char)*p < 0x20 || *p == 0x7f)
				return "holds a control character";
		if (holds_password(value))
			return "holds a password: put it in a pg_service.conf service, "
			       "~/.pgpass or PGPASSFILE instead";
		return NULL;
	default:
		return "has an unknown type";
	}
}

/* A number of K from VALUE into *V (not yet checked against the
 * bounds), or what is wrong. */
static const char *
number_problem(const struct ceems_key *k, const char *value, double *v)
{
	uint64_t u;

	switch (k->type) {
	case CEEMS_KEY_DURATION:
		if (ceems_conf_value_duration(value, &u) < 0)
			return "is not a duration (examples: 250ms, 1s, 2m)";
		*v = (double)u;
		return NULL;
	case CEEMS_KEY_BYTES:
		if (ceems_conf_value_bytes(value, &u) < 0)
			return "is not a size in bytes (examples: 65536, 64K, 512M, 1G)";
		*v = (double)u;
		return NULL;
	case CEEMS_KEY_UINT32:
		return parse_uint(value, v) < 0 ? "is not a whole number" : NULL;
	case CEEMS_KEY_WATTS:
		return parse_watts(value, v) < 0 ?
		    "is not a power in watts or 'learn'" : NULL;
	case CEEMS_KEY_REAL:
		return parse_real(value, v) < 0 ? "is not a number" : NULL;
	default:
		return "has an unknown type";
	}
}

/* Store the number V of K into OUT in K's C type. */
static int
store_number(const struct ceems_key *k, const char *value, double v,
	     void *out, size_t out_size)
{
	uint64_t u64;
	uint32_t u32;

	switch (k->type) {
	case CEEMS_KEY_DURATION:
	case CEEMS_KEY_BYTES:
		/* Again from the text: a double loses the last digits. */
		if (out_size != sizeof(u64) ||
		    (k->type == CEEMS_KEY_DURATION ?
		     ceems_conf_value_duration(value, &u64) :
		     ceems_conf_value_bytes(value, &u64)) < 0)
			return -1;
		memcpy(out, &u64, sizeof(u64));
		return 0;
	case CEEMS_KEY_UINT32:
		if (out_size != sizeof(u32))
			return -1;
		u32 = (uint32_t)v;
		memcpy(out, &u32, sizeof(u32));
		return 0;
	default:
		if (out_size != sizeof(v))
			return -1;
		memcpy(out, &v, sizeof(v));
		return 0;
	}
}

static int
say(char *problem, size_t size, const char *what, const char *range)
{
	if (range[0] != '\0')
		snprintf(problem, size, "%s; allowed: %s", what, range);
	else
		snprintf(problem, size, "%s", what);
	return -1;
}

int
ceems_conf_keys_parse(const struct ceems_key *k, const char *value, void *out,
		size_t out_size, char *problem, size_t problem_size)
{
	const char *what;
	char range[80];
	double v = 0;
	bool b;

	ceems_conf_keys_range(k, range, sizeof(range));
	if (k->type == CEEMS_KEY_BOOL) {
		if (parse_bool(value, &b) < 0)
			return say(problem, problem_size, "is not yes or no", "");
		if (out_size != sizeof(b))
			return say(problem, problem_size, "has no place to go", "");
		memcpy(out, &b, sizeof(b));
		return 0;
	}
	if (k->type == CEEMS_KEY_DURATION || k->type == CEEMS_KEY_BYTES ||
	    k->type == CEEMS_KEY_UINT32 || k->type == CEEMS_KEY_WATTS ||
	    k->type == CEEMS_KEY_REAL) {
		if ((what = number_problem(k, value, &v)) != NULL)
			return say(problem, problem_size, what, range);
		/* "learn" (-1) is a watts key's other allowed value. */
		if ((v < k->min || v > k->max) &&
		    !(k->type == CEEMS_KEY_WATTS && v == -1 &&
		      strcmp(value, "learn") == 0))
			return say(problem, problem_size, "is out of range", range);
		if (store_number(k, value, v, out, out_size) < 0)
			return say(problem, problem_size, "has no place to go", "");
		return 0;
	}
	if ((what = text_problem(k, value)) != NULL)
		return say(problem, problem_size, what, range);
	if (strlen(value) >= out_size || strlen(value) >= k->size) {
		char longest[48];

		snprintf(longest, sizeof(longest), "at most %zu bytes",
			 k->size - 1);
		return say(problem, problem_size, "is too long", longest);
	}
	memcpy(out, value, strlen(value) + 1);
	return 0;
}
