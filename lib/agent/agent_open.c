/* agent_open.c - starting and stopping the node agent's engine: choose
 * the energy source for each domain, load the emission factor, read the
 * cgroup mounts and the boot id, open the state file; and close it all.
 *
 * Separate from the per-tick work (agent_tick.c) and the job requests
 * (agent.c): this runs once per agent, and is where its configuration
 * meets the machine. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "model/agent_series.h"
#include "agent/agent_finish.h"
#include "agent/agent_state.h"
#include "sources/bmc.h"
#include "model/emissions.h"
#include "model/energy.h"
#include "base/fileio.h"
#include "base/hotmem.h"
#include "sources/hwmon.h"
#include "model/ledger_carry.h"
#include "base/log.h"
#include "sources/pm_counters.h"
#include "sources/proc_stats.h"
#include "sources/rapl.h"
#include "base/tick_path.h"

/* Priority of the sources for each domain: RAPL is the finest for CPU
 * and memory, the node controllers (pm_counters) for the whole node,
 * then the BMC (configured on purpose, so before hwmon's meters). */
enum { MAX_KINDS = 4 };
static const char *const domain_priority[CEEMS_DOMAIN_COUNT][MAX_KINDS] = {
	[CEEMS_DOMAIN_PACKAGE] = { "rapl", "pm_counters", "hwmon" },
	[CEEMS_DOMAIN_DRAM] = { "rapl", "pm_counters", "hwmon" },
	[CEEMS_DOMAIN_GPU] = { "gpu", "pm_counters", "hwmon" },
	[CEEMS_DOMAIN_NODE] = { "pm_counters", "bmc", "hwmon", "rapl" },
};

static bool
source_has_domain(const struct ceems_energy_source *src,
		  enum ceems_energy_domain d)
{
	for (size_t i = 0; i < src->ncounters; i++)
		if (src->counters[i].domain == d)
			return true;
	return false;
}

static void
choose_domain_sources(struct ceems_agent *a)
{
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		a->domain_source[d] = -1;
		for (int p = 0; p < MAX_KINDS && domain_priority[d][p] != NULL &&
				a->domain_source[d] < 0; p++)
			for (size_t s = 0; s < a->nsources; s++)
				if (strcmp(a->sources[s]->ops->kind,
					   domain_priority[d][p]) == 0 &&
				    source_has_domain(a->sources[s], d)) {
					a->domain_source[d] = (int)s;
					break;
				}
		if (a->domain_source[d] >= 0)
			ceems_info("%s energy from %s",
				   ceems_job_figures_energy_domain_name(d),
				   a->sources[a->domain_source[d]]->ops->kind);
	}
}

static struct ceems_energy_source *
open_bmc(const struct ceems_config *c, uint64_t now_ns)
{
	struct ceems_bmc_options o = { .mode = CEEMS_BMC_NONE };
	char why[256];

	if (strcmp(c->bmc, "inband") == 0)
		o.mode = CEEMS_BMC_INBAND;
	else if (strcmp(c->bmc, "lan") == 0)
		o.mode = CEEMS_BMC_LAN;
	snprintf(o.host, sizeof(o.host), "%s", c->bmc_host);
	snprintf(o.credentials_file, sizeof(o.credentials_file), "%s",
		 c->bmc_credentials_file);
	snprintf(o.sensor, sizeof(o.sensor), "%s", c->bmc_sensor);
	snprintf(o.privilege, sizeof(o.privilege), "%s", c->bmc_privilege);
	o.interval_ns = c->bmc_interval_ns;
	o.timeout_ns = c->bmc_timeout_ns;
	if (ceems_bmc_ipmi_parse_workarounds(c->bmc_workarounds, &o.workarounds,
					why, sizeof(why)) < 0) {
		ceems_error("bmc_workarounds: %s: node energy from the BMC is off",
			    why);
		return NULL;
	}
	return ceems_bmc_open(&o, now_ns);
}

static int
open_sources(struct ceems_agent *a, uint64_t now_ns)
{
	const struct ceems_config *c = &a->config;
	struct ceems_energy_source *src;

	if (c->source_rapl && (src = ceems_rapl_open(c->sysfs_root, now_ns)))
		a->sources[a->nsources++] = src;
	if (c->source_pm_counters &&
	    (src = ceems_pm_counters_open(c->sysfs_root, now_ns)))
		a->sources[a->nsources++] = src;
	if (c->source_hwmon &&
	    (src = ceems_hwmon_open(c->sysfs_root, 0, now_ns)))
		a->sources[a->nsources++] = src;
	ceems_agent_gpu_open(a, now_ns);
	if (a->nsources < MAX_SOURCES && (src = open_bmc(c, now_ns)))
		a->sources[a->nsources++] = src;
	for (size_t s = 0; s < a->nsources; s++) {
		a->takes[s] = calloc(a->sources[s]->ncounters + 1,
				     sizeof(*a->takes[s]));
		if (a->takes[s] == NULL)
			return -ENOMEM;
	}
	if (a->nsources == 0)
		ceems_warning("no energy source found under %s: jobs get usage figures but no energy",
			      c->sysfs_root);
	choose_domain_sources(a);
	return 0;
}

static int
load_factor(struct ceems_agent *a, char *err, size_t err_size)
{
	struct ceems_emissions_table table;
	struct tm tm;
	time_t now = time(NULL);
	int ret;

	if (a->config.zone[0] == '\0') {
		if (a->config.intensity_file[0] != '\0') {
			snprintf(err, err_size,
				 "intensity_file = %s needs zone = (the yearly figure stands in where the series has no value)",
				 a->config.intensity_file);
			return -1;
		}
		ceems_info("no emission zone configured: jobs get no emissions");
		return 0;
	}
	ret = ceems_emissions_table_load(a->config.emissions_table, &table);
	if (ret < 0) {
		snprintf(err, err_size, "emissions table %s: %s",
			 a->config.emissions_table, strerror(-ret));
		return -1;
	}
	gmtime_r(&now, &tm);
	ret = ceems_emissions_lookup(&table, a->config.zone, tm.tm_year + 1900,
				     &a->factor);
	ceems_emissions_table_free(&table);
	if (ret < 0) {
		snprintf(err, err_size,
			 "zone = %s is not in the emissions table %s (use an ISO 3166-1 country code, or WORLD for the world average)",
			 a->config.zone, a->config.emissions_table);
		return -1;
	}
	a->factor.pue = a->config.pue;
	a->have_factor = true;
	ceems_info("emissions: zone %s, %d, %.1f g/kWh (%s), PUE %.2f",
		   a->factor.zone, a->factor.year, a->factor.g_per_kwh,
		   a->factor.source, a->factor.pue);
	return 0;
}

static int
read_mounts(struct ceems_agent *a)
{
	char path[CEEMS_CONFIG_PATH_MAX + 32];
	char *text;
	ssize_t n;
	int ret;

	text = malloc(1 << 20);
	if (text == NULL)
		return -ENOMEM;
	snprintf(path, sizeof(path), "%s/self/mountinfo", a->config.procfs_root);
	n = ceems_fileio_read_text_file(path, text, 1 << 20);
	if (n < 0) {
		free(text);
		return (int)n;
	}
	ret = ceems_cgroup_path_mounts_from_mountinfo(text, &a->mounts);
	free(text);
	return ret;
}

static void
read_boot_id(const struct ceems_config *c, char *buf, size_t size)
{
	char path[CEEMS_CONFIG_PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id",
		 c->procfs_root);
	if (ceems_fileio_read_text_file(path, buf, size) < 0)
		snprintf(buf, size, "unknown");
	buf[strcspn(buf, "\n")] = '\0';
}

static void
open_state(struct ceems_agent *a)
{
	char *boot_id = a->boot_id;
	int err = 0;

	read_boot_id(&a->config, boot_id, sizeof(a->boot_id));
	/* As many slots again for the deregistered jobs waiting for their
	 * release (lib/agent/agent_finish.c holds at most max_jobs). */
	a->state = ceems_agent_state_file_open(a->config.state_dir,
				   2 * a->config.max_jobs, boot_id, &err);
	if (a->state == NULL)
		ceems_error("cannot keep job state in %s (%s): an agent restart will lose the running jobs' figures",
			    a->config.state_dir, strerror(-err));
}

/* The node's figures a split between ticks uses before the first tick. */
static void
init_last_node(struct ceems_agent *a)
{
	struct ceems_node_mem mem;

	a->last_node.node_cores = a->node_cpu.ncpus;
	if (ceems_proc_stats_read_mem(a->proc, &mem) == 0 &&
	    (mem.present & CEEMS_NMF_TOTAL)) {
		a->last_node.node_mem_total_bytes = mem.total;
		if ((mem.present & CEEMS_NMF_AVAILABLE) && mem.available <= mem.total)
			a->last_node.node_mem_used_bytes = mem.total - mem.available;
	}
	if (a->config.idle_power_package_w > 0)
		a->last_node.idle_power_w[CEEMS_DOMAIN_PACKAGE] =
			a->config.idle_power_package_w;
	if (a->config.idle_power_dram_w > 0)
		a->last_node.idle_power_w[CEEMS_DOMAIN_DRAM] =
			a->config.idle_power_dram_w;
	/* A domain to be learned has nothing learned yet, unless an
	 * earlier agent kept its value: a job that ends before the first
	 * tick is split by use alone and says so. */
	for (int d = 0; d < 2; d++) {
		double configured = d == CEEMS_DOMAIN_PACKAGE ?
			a->config.idle_power_package_w : a->config.idle_power_dram_w;

		if (configured >= 0)
			continue;
		if (a->idle_source[d] == IDLE_RESTORED)
			a->last_node.idle_power_w[d] = a->idle_restored_w[d];
		else
			a->last_node.idle_power_unlearned[d] = true;
	}
}

struct ceems_agent *
ceems_agent_open(const struct ceems_config *config, uint64_t now_ns,
		 char *err, size_t err_size)
{
	struct ceems_agent *a;
	int ret = 0;

	a = ceems_hotmem_calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	a->config = *config;
	a->cgroup_prefix = strcmp(config->cgroupfs_prefix, "/") == 0 ?
			   "" : a->config.cgroupfs_prefix;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		a->idle[d].value = -1;
	a->jobs = ceems_hotmem_calloc(config->max_jobs, sizeof(*a->jobs));
	a->job_ticks = ceems_hotmem_calloc(config->max_jobs,
					   sizeof(*a->job_ticks));
	a->shares = ceems_hotmem_calloc(config->max_jobs, sizeof(*a->shares));
	if (a->jobs == NULL || a->job_ticks == NULL || a->shares == NULL) {
		snprintf(err, err_size, "out of memory for %u jobs",
			 config->max_jobs);
		goto fail;
	}
	a->proc = ceems_proc_stats_reader_open(config->procfs_root, &ret);
	if (a->proc == NULL) {
		snprintf(err, err_size, "cannot open %s/stat and meminfo: %s",
			 config->procfs_root, strerror(-ret));
		goto fail;
	}
	a->have_node_cpu = ceems_proc_stats_read_cpu(a->proc, &a->node_cpu) == 0;
	ret = read_mounts(a);
	if (ret < 0) {
		snprintf(err, err_size, "cannot read %s/self/mountinfo: %s",
			 config->procfs_root, strerror(-ret));
		goto fail;
	}
	ceems_agent_bpf_open(a);
	ceems_agent_perf_open_node(a);
	if (load_factor(a, err, err_size) < 0)
		goto fail;
	ceems_agent_intensity_open(a, now_ns);
	if (open_sources(a, now_ns) < 0) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	if (ceems_agent_adopt_open(a) < 0) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	open_state(a);
	ceems_agent_idle_store_load(a);
	ceems_agent_marks_history_load(a);
	init_last_node(a);
	a->finish = ceems_agent_finish_new(&a->config, a->state, config->max_jobs);
	if (a->finish != NULL)
		ceems_agent_finish_set_intensity(a->finish, &a->intensity.series);
	if (a->finish == NULL) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	a->last_tick_ns = now_ns;
	a->last_usage_ns = now_ns;
	return a;
fail:
	ceems_agent_open_close(a);
	return NULL;
}

/* A reader whose last reading was good takes the next one as a
 * baseline, not as the end of an interval: the time since is nobody's. */
static void
rebase_readers(struct ceems_energy_source *src)
{
	for (size_t i = 0; i < src->ncounters; i++) {
		struct ceems_energy_reader *r = ceems_energy_source_reader(src, i);

		if (r != NULL && r->have_prev) {
			r->have_prev = false;
			r->rebase_gap = CEEMS_GAP_NONE;
		}
	}
}

int
ceems_agent_open_start(struct ceems_agent *a, uint64_t now_ns)
{
	if (now_ns < a->last_tick_ns)
		return -EINVAL;
	if (a->njobs > 0 || a->tick_seq > 0)
		return -EBUSY;
	for (size_t s = 0; s < a->nsources; s++) {
		rebase_readers(a->sources[s]);
		ceems_energy_source_sample(a->sources[s], now_ns);
		/* What the open's reading to this one held: charged to no
		 * job and no tick. */
		ceems_energy_source_take(a->sources[s], a->takes[s]);
	}
	a->have_node_cpu = ceems_proc_stats_read_cpu(a->proc, &a->node_cpu) == 0;
	a->last_tick_ns = now_ns;
	a->last_usage_ns = now_ns;
	return 0;
}

void
ceems_agent_open_close(struct ceems_agent *a)
{
	if (a == NULL)
		return;
	ceems_agent_idle_store_save(a, 0, true);
	for (size_t i = 0; i < a->njobs; i++)
		ceems_agent_free_job(a->jobs[i]);
	for (size_t s = 0; s < a->nsources; s++) {
		ceems_energy_source_close(a->sources[s]);
		free(a->takes[s]);
	}
	ceems_agent_bpf_close(a);
	ceems_agent_intensity_close(a);
	ceems_proc_stats_reader_close(a->proc);
	ceems_agent_finish_free(a->finish);
	free(a->work_history);
	ceems_agent_adopt_close(a);
	ceems_agent_state_file_close(a->state);
	ceems_agent_series_free(a->handed_out);
	ceems_hotmem_free(a->jobs);
	ceems_hotmem_free(a->job_ticks);
	ceems_hotmem_free(a->shares);
	ceems_hotmem_free(a);
}

CEEMS_TICK_PATH uint64_t
ceems_agent_open_source_interval_ns(const struct ceems_agent *a)
{
	return ceems_agent_open_source_interval_within_ns(a, a->config.interval_ns);
}

CEEMS_TICK_PATH uint64_t
ceems_agent_open_source_interval_within_ns(const struct ceems_agent *a,
					   uint64_t period_ns)
{
	uint64_t interval = period_ns;

	for (size_t s = 0; s < a->nsources; s++) {
		uint64_t max = ceems_energy_source_max_sample_interval_ns(a->sources[s]);

		if (max != 0 && max < interval)
			interval = max;
	}
	return interval;
}

void
ceems_agent_open_sample_sources(struct ceems_agent *a, uint64_t now_ns)
{
	for (size_t s = 0; s < a->nsources; s++)
		ceems_energy_source_sample(a->sources[s], now_ns);
}
