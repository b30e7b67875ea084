/* agent.c - the node agent's engine: sources, jobs, ledger, state. */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "agent.h"
#include "agent_series.h"
#include "agent_finish.h"
#include "agent_state.h"
#include "emissions.h"
#include "energy.h"
#include "fileio.h"
#include "hwmon.h"
#include "ledger_carry.h"
#include "log.h"
#include "pm_counters.h"
#include "proc_stats.h"
#include "rapl.h"

enum { MAX_SOURCES = 3 };

/* Below this node busy fraction a tick's power counts as idle power when
 * idle power is learned rather than configured.  The learned value is
 * the median of the last IDLE_SAMPLES such ticks, once there are at least
 * IDLE_MIN_SAMPLES: a single lowest reading is at the mercy of one tick
 * whose counter update landed early. */
#define IDLE_BUSY_FRACTION 0.05
#define IDLE_SAMPLES 64
#define IDLE_MIN_SAMPLES 8

struct idle_learner {
	double w[IDLE_SAMPLES];		/* ring of quiet-tick powers */
	unsigned n;			/* samples held, <= IDLE_SAMPLES */
	unsigned next;
	double value;			/* < 0: not learned yet */
};

struct agent_step {
	struct ceems_agent_step_report r;
	struct ceems_cgroup_reader *reader;	/* NULL once ended */
	uint64_t start_ns;
	uint64_t cpu_last_ns;
	bool have_cpu;
	bool have_rss;			/* rss_bytes read at least once */
	uint64_t rss_bytes;
	double tick_cpu_s;		/* CPU time in the current tick */
	bool end_pending;		/* ended in this tick: tick_cpu_s is its last */
};

struct agent_job {
	struct ceems_agent_job_spec spec;
	struct ceems_cgroup_reader *reader;
	int slot;			/* in the state file, -1 if none */
	uint64_t registered_ns;
	uint64_t cpu_base_ns;		/* cgroup usage at registration */
	uint64_t cpu_last_ns;		/* at the last tick */
	bool have_cpu;
	bool gone;
	uint64_t gone_ns;		/* the tick its cgroup was found gone */
	uint32_t alloc_cores;
	uint64_t alloc_mem_bytes;
	double cpu_s;
	double gap_s;
	struct ceems_cgroup_stats usage;	/* last full reading */
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	uint32_t nsteps;
	struct agent_step steps[CEEMS_AGENT_MAX_STEPS];
	struct ceems_series *series;	/* NULL: the job keeps none */
};

struct ceems_agent {
	struct ceems_config config;
	struct ceems_energy_source *sources[MAX_SOURCES];
	size_t nsources;
	/* For each domain, the one source whose counters count (two
	 * sources measuring the same domain would count it twice). */
	int domain_source[CEEMS_DOMAIN_COUNT];
	struct ceems_energy_take *takes[MAX_SOURCES];

	struct ceems_proc_reader *proc;
	struct ceems_node_cpu node_cpu;
	bool have_node_cpu;
	struct ceems_cgroup_mounts mounts;
	const char *cgroup_prefix;

	bool have_factor;
	struct ceems_emission_factor factor;
	struct idle_learner idle[CEEMS_DOMAIN_COUNT];

	struct agent_job **jobs;
	size_t njobs;
	struct ceems_ledger_job_tick *job_ticks;	/* max_jobs each */
	struct ceems_ledger_job_share *shares;
	struct ceems_ledger_tick last_tick;
	struct ceems_cgroup_stats scratch;

	uint64_t last_tick_ns;
	uint64_t tick_ns;		/* the tick being taken */
	uint64_t last_usage_ns;		/* last full cgroup reading */
	struct state_file *state;

	/* Between ticks, a job that ends is split alone (ledger_carry.h):
	 * the energy read for it waits here for the next tick, with what
	 * it took; the node's other figures are the last tick's. */
	struct ceems_ledger_node_tick pending;
	struct ceems_ledger_carry carry;
	struct ceems_ledger_node_tick last_node;
	struct ceems_series *handed_out;	/* the last final report's */
	struct agent_finish *finish;	/* deregistered, not yet released */
};

/* Priority of the sources for each domain: RAPL is the finest for CPU
 * and memory, the node controllers (pm_counters) for the whole node. */
static const char *const domain_priority[CEEMS_DOMAIN_COUNT][MAX_SOURCES] = {
	[CEEMS_DOMAIN_PACKAGE] = { "rapl", "pm_counters", "hwmon" },
	[CEEMS_DOMAIN_DRAM] = { "rapl", "pm_counters", "hwmon" },
	[CEEMS_DOMAIN_GPU] = { "pm_counters", "hwmon", "rapl" },
	[CEEMS_DOMAIN_NODE] = { "pm_counters", "hwmon", "rapl" },
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
		for (int p = 0; p < MAX_SOURCES && a->domain_source[d] < 0; p++)
			for (size_t s = 0; s < a->nsources; s++)
				if (strcmp(a->sources[s]->ops->kind,
					   domain_priority[d][p]) == 0 &&
				    source_has_domain(a->sources[s], d)) {
					a->domain_source[d] = (int)s;
					break;
				}
		if (a->domain_source[d] >= 0)
			ceems_info("%s energy from %s",
				   ceems_energy_domain_name(d),
				   a->sources[a->domain_source[d]]->ops->kind);
	}
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
	n = ceems_read_text_file(path, text, 1 << 20);
	if (n < 0) {
		free(text);
		return (int)n;
	}
	ret = ceems_cgroup_mounts_from_mountinfo(text, &a->mounts);
	free(text);
	return ret;
}

static void
read_boot_id(const struct ceems_config *c, char *buf, size_t size)
{
	char path[CEEMS_CONFIG_PATH_MAX + 32];

	snprintf(path, sizeof(path), "%s/sys/kernel/random/boot_id",
		 c->procfs_root);
	if (ceems_read_text_file(path, buf, size) < 0)
		snprintf(buf, size, "unknown");
	buf[strcspn(buf, "\n")] = '\0';
}

static void
open_state(struct ceems_agent *a)
{
	char boot_id[64];
	int err = 0;

	read_boot_id(&a->config, boot_id, sizeof(boot_id));
	a->state = state_file_open(a->config.state_dir, a->config.max_jobs,
				   boot_id, &err);
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
	if (ceems_proc_read_mem(a->proc, &mem) == 0 &&
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
}

struct ceems_agent *
ceems_agent_open(const struct ceems_config *config, uint64_t now_ns,
		 char *err, size_t err_size)
{
	struct ceems_agent *a;
	int ret = 0;

	a = calloc(1, sizeof(*a));
	if (a == NULL) {
		snprintf(err, err_size, "out of memory");
		return NULL;
	}
	a->config = *config;
	a->cgroup_prefix = strcmp(config->cgroupfs_prefix, "/") == 0 ?
			   "" : a->config.cgroupfs_prefix;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		a->idle[d].value = -1;
	a->jobs = calloc(config->max_jobs, sizeof(*a->jobs));
	a->job_ticks = calloc(config->max_jobs, sizeof(*a->job_ticks));
	a->shares = calloc(config->max_jobs, sizeof(*a->shares));
	if (a->jobs == NULL || a->job_ticks == NULL || a->shares == NULL) {
		snprintf(err, err_size, "out of memory for %u jobs",
			 config->max_jobs);
		goto fail;
	}
	a->proc = ceems_proc_reader_open(config->procfs_root, &ret);
	if (a->proc == NULL) {
		snprintf(err, err_size, "cannot open %s/stat and meminfo: %s",
			 config->procfs_root, strerror(-ret));
		goto fail;
	}
	a->have_node_cpu = ceems_proc_read_cpu(a->proc, &a->node_cpu) == 0;
	ret = read_mounts(a);
	if (ret < 0) {
		snprintf(err, err_size, "cannot read %s/self/mountinfo: %s",
			 config->procfs_root, strerror(-ret));
		goto fail;
	}
	if (load_factor(a, err, err_size) < 0)
		goto fail;
	if (open_sources(a, now_ns) < 0) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	open_state(a);
	init_last_node(a);
	a->finish = agent_finish_new(&a->config, a->state, config->max_jobs);
	if (a->finish == NULL) {
		snprintf(err, err_size, "out of memory");
		goto fail;
	}
	a->last_tick_ns = now_ns;
	a->last_usage_ns = now_ns;
	return a;
fail:
	ceems_agent_close(a);
	return NULL;
}

static void
free_job(struct agent_job *j)
{
	for (uint32_t i = 0; i < j->nsteps; i++)
		ceems_cgroup_reader_close(j->steps[i].reader);
	ceems_cgroup_reader_close(j->reader);
	ceems_series_free(j->series);
	free(j);
}

void
ceems_agent_close(struct ceems_agent *a)
{
	if (a == NULL)
		return;
	for (size_t i = 0; i < a->njobs; i++)
		free_job(a->jobs[i]);
	for (size_t s = 0; s < a->nsources; s++) {
		ceems_energy_source_close(a->sources[s]);
		free(a->takes[s]);
	}
	ceems_proc_reader_close(a->proc);
	agent_finish_free(a->finish);
	state_file_close(a->state);
	ceems_series_free(a->handed_out);
	free(a->jobs);
	free(a->job_ticks);
	free(a->shares);
	free(a);
}

uint64_t
ceems_agent_source_interval_ns(const struct ceems_agent *a)
{
	uint64_t interval = a->config.interval_ns;

	for (size_t s = 0; s < a->nsources; s++) {
		uint64_t max = ceems_energy_source_max_sample_interval_ns(a->sources[s]);

		if (max != 0 && max < interval)
			interval = max;
	}
	return interval;
}

void
ceems_agent_sample_sources(struct ceems_agent *a, uint64_t now_ns)
{
	for (size_t s = 0; s < a->nsources; s++)
		ceems_energy_source_sample(a->sources[s], now_ns);
}

/* Add one counter's tick to a ledger reading: any gap makes the whole
 * reading a gap (a domain split from part of its counters would charge
 * jobs for a wrong total). */
static void
add_to_reading(struct ceems_ledger_reading *r,
	       const struct ceems_energy_take *t)
{
	if (!r->measured) {
		r->measured = true;
		r->gap = CEEMS_GAP_NONE;
		r->joules = 0;
	}
	if (r->gap != CEEMS_GAP_NONE)
		return;
	if (t->gap != CEEMS_GAP_NONE) {
		r->gap = t->gap;
		r->joules = 0;
		return;
	}
	r->joules += t->joules;
}

static void
collect_energy(struct ceems_agent *a, uint64_t now_ns,
	       struct ceems_ledger_node_tick *node)
{
	for (size_t s = 0; s < a->nsources; s++) {
		const struct ceems_energy_source *src = a->sources[s];

		ceems_energy_source_sample(a->sources[s], now_ns);
		ceems_energy_source_take(a->sources[s], a->takes[s]);
		for (size_t i = 0; i < src->ncounters; i++) {
			const struct ceems_energy_counter *c = &src->counters[i];
			const struct ceems_energy_take *t = &a->takes[s][i];

			if (a->domain_source[c->domain] != (int)s)
				continue;
			switch (c->domain) {
			case CEEMS_DOMAIN_PACKAGE:
				add_to_reading(&node->package, t);
				break;
			case CEEMS_DOMAIN_DRAM:
				add_to_reading(&node->dram, t);
				break;
			case CEEMS_DOMAIN_NODE:
				add_to_reading(&node->node, t);
				break;
			case CEEMS_DOMAIN_GPU:
				if (c->device < 0 ||
				    c->device >= CEEMS_LEDGER_MAX_GPUS)
					break;
				add_to_reading(&node->gpu[c->device], t);
				if ((size_t)c->device + 1 > node->ngpus)
					node->ngpus = (size_t)c->device + 1;
				break;
			case CEEMS_DOMAIN_COUNT:
				break;
			}
		}
	}
}

static void
collect_node_usage(struct ceems_agent *a,
		   struct ceems_ledger_node_tick *node)
{
	struct ceems_node_cpu cpu;
	struct ceems_node_mem mem;

	node->node_cores = a->node_cpu.ncpus;
	if (ceems_proc_read_cpu(a->proc, &cpu) == 0) {
		if (a->have_node_cpu && cpu.busy_ns >= a->node_cpu.busy_ns)
			node->node_busy_cpu_s =
				(double)(cpu.busy_ns - a->node_cpu.busy_ns) / 1e9;
		a->node_cpu = cpu;
		a->have_node_cpu = true;
		node->node_cores = cpu.ncpus;
	}
	if (ceems_proc_read_mem(a->proc, &mem) == 0 &&
	    (mem.present & CEEMS_NMF_TOTAL)) {
		node->node_mem_total_bytes = mem.total;
		if ((mem.present & CEEMS_NMF_AVAILABLE) && mem.available <= mem.total)
			node->node_mem_used_bytes = mem.total - mem.available;
	}
}

static void
idle_learner_add(struct idle_learner *l, double w)
{
	double sorted[IDLE_SAMPLES];

	l->w[l->next] = w;
	l->next = (l->next + 1) % IDLE_SAMPLES;
	if (l->n < IDLE_SAMPLES)
		l->n++;
	if (l->n < IDLE_MIN_SAMPLES)
		return;
	/* Insertion sort of at most 64 values, on quiet ticks only. */
	for (unsigned i = 0; i < l->n; i++) {
		unsigned j = i;

		while (j > 0 && sorted[j - 1] > l->w[i]) {
			sorted[j] = sorted[j - 1];
			j--;
		}
		sorted[j] = l->w[i];
	}
	l->value = l->n % 2 ? sorted[l->n / 2] :
		   (sorted[l->n / 2 - 1] + sorted[l->n / 2]) / 2;
}

/* The static power of a domain: configured, else learned from the
 * node's quiet ticks (0 until learned: all energy is then active). */
static void
set_idle_power(struct ceems_agent *a, struct ceems_ledger_node_tick *node)
{
	const double configured[2] = { a->config.idle_power_package_w,
				       a->config.idle_power_dram_w };
	const struct ceems_ledger_reading *readings[2] = { &node->package,
							   &node->dram };
	const int domains[2] = { CEEMS_DOMAIN_PACKAGE, CEEMS_DOMAIN_DRAM };
	double busy_fraction = 1;

	if (node->node_cores > 0)
		busy_fraction = node->node_busy_cpu_s /
				(node->dt_s * node->node_cores);
	for (int i = 0; i < 2; i++) {
		int d = domains[i];
		const struct ceems_ledger_reading *r = readings[i];

		if (configured[i] >= 0) {
			node->idle_power_w[d] = configured[i];
			continue;
		}
		/* Only ticks of about the normal length: the short ones a
		 * registration forces are below the counters' resolution. */
		if (r->measured && r->gap == CEEMS_GAP_NONE &&
		    busy_fraction < IDLE_BUSY_FRACTION &&
		    node->dt_s * 2e9 >= (double)a->config.interval_ns)
			idle_learner_add(&a->idle[d], r->joules / node->dt_s);
		node->idle_power_w[d] = a->idle[d].value > 0 ? a->idle[d].value : 0;
	}
}

/* Read a running step's CPU time for this tick (and its memory on full
 * readings).  A step whose cgroup went away keeps its last figures. */
static void
collect_step(struct ceems_agent *a, struct agent_step *st, bool full)
{
	struct ceems_cgroup_stats *cs = &a->scratch;
	uint32_t want = full ? (CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_RSS |
				CEEMS_CGF_MEM_PEAK) : CEEMS_CGF_CPU_USAGE;

	if (st->reader == NULL) {
		if (!st->end_pending)
			st->tick_cpu_s = 0;
		return;
	}
	st->tick_cpu_s = 0;
	if (ceems_cgroup_reader_read_some(st->reader, want, cs) < 0)
		return;
	if (cs->present & CEEMS_CGF_CPU_USAGE) {
		if (st->have_cpu && cs->cpu_usage_ns >= st->cpu_last_ns) {
			st->tick_cpu_s = (double)(cs->cpu_usage_ns -
						  st->cpu_last_ns) / 1e9;
			/* A baseline alone measures nothing yet. */
			st->r.have_cpu = true;
		}
		st->cpu_last_ns = cs->cpu_usage_ns;
		st->have_cpu = true;
	}
	if (full && (cs->present & CEEMS_CGF_MEM_RSS)) {
		st->rss_bytes = cs->mem_rss_bytes;
		st->have_rss = true;
	}
	if (full && (cs->present & CEEMS_CGF_MEM_PEAK)) {
		st->r.have_mem_peak = true;
		st->r.mem_peak_bytes = cs->mem_peak_bytes;
	}
}

/* Split the job's share of this tick among its running steps: by CPU
 * time, memory by RSS.  The denominator is never below the job's own
 * figure, so the steps never get more than the job. */
static void
split_to_steps(struct agent_job *j, const struct ceems_ledger_job_share *share,
	       const struct ceems_ledger_job_tick *t)
{
	double sum_cpu = 0, sum_rss = 0, wcpu, wrss;

	for (uint32_t i = 0; i < j->nsteps; i++) {
		if (j->steps[i].reader == NULL && !j->steps[i].end_pending)
			continue;	/* ended: holds nothing any more */
		sum_cpu += j->steps[i].tick_cpu_s;
		sum_rss += (double)j->steps[i].rss_bytes;
	}
	wcpu = sum_cpu > t->cpu_s ? sum_cpu : t->cpu_s;
	wrss = sum_rss > (double)t->rss_bytes ? sum_rss : (double)t->rss_bytes;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		struct agent_step *st = &j->steps[i];

		if (st->reader == NULL && !st->end_pending)
			continue;
		/* A step that ended in this tick: its CPU time was counted
		 * when it ended, its energy comes now, once. */
		if (st->end_pending)
			st->end_pending = false;
		else
			st->r.cpu_s += st->tick_cpu_s;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
			double num = d == CEEMS_DOMAIN_DRAM ?
				     (double)st->rss_bytes : st->tick_cpu_s;
			double den = d == CEEMS_DOMAIN_DRAM ? wrss : wcpu;

			/* Its part is known only when the job's was and the
			 * step's own cgroup gave the figure it is split by. */
			if (share->covered[d] &&
			    (d == CEEMS_DOMAIN_DRAM ? st->have_rss : st->have_cpu))
				st->r.have_joules[d] = true;
			if (den > 0 && share->joules[d] > 0)
				st->r.joules[d] += share->joules[d] * num / den;
		}
	}
}

/* Read one job's usage for this tick into its ledger input. */
static void
collect_job(struct ceems_agent *a, struct agent_job *j, bool full,
	    struct ceems_ledger_job_tick *t)
{
	/* Read into scratch: a failed reading (the cgroup going away at the
	 * job's end) must not wipe the last good one. */
	struct ceems_cgroup_stats *st = &a->scratch;
	uint32_t want = full ? CEEMS_CGF_ALL : CEEMS_CGF_CPU_USAGE;
	int ret;

	memset(t, 0, sizeof(*t));
	/* A job whose cgroup is gone holds nothing any more: it is no longer
	 * charged (it waits only for its deregistration). */
	if (j->gone)
		return;
	t->alloc_cores = j->alloc_cores;
	t->alloc_mem_bytes = j->alloc_mem_bytes;
	memcpy(t->gpu_share, j->spec.gpu_share, sizeof(t->gpu_share));
	if ((j->usage.present & CEEMS_CGF_MEM_RSS) != 0)
		t->rss_bytes = j->usage.mem_rss_bytes;
	ret = ceems_cgroup_reader_read_some(j->reader, want, st);
	if (ret < 0 || (st->present & CEEMS_CGF_CPU_USAGE) == 0) {
		if (ret == -ENODEV) {
			/* It held its resources until some time in this
			 * tick: this tick is its last. */
			j->gone = true;
			j->gone_ns = a->tick_ns;
			ceems_info("job %u: cgroup removed; its figures stop here",
				   j->spec.jobid);
		}
		return;
	}
	if (full) {
		j->usage = *st;
		if ((st->present & CEEMS_CGF_MEM_RSS) != 0)
			t->rss_bytes = st->mem_rss_bytes;
	}
	if (j->have_cpu && st->cpu_usage_ns >= j->cpu_last_ns)
		t->cpu_s = (double)(st->cpu_usage_ns - j->cpu_last_ns) / 1e9;
	j->cpu_last_ns = st->cpu_usage_ns;
	if (!j->have_cpu) {
		j->cpu_base_ns = st->cpu_usage_ns;
		j->have_cpu = true;
	}
	/* Last: the steps' readings reuse the scratch buffer. */
	for (uint32_t i = 0; i < j->nsteps; i++)
		collect_step(a, &j->steps[i], full);
}

/* A job's end: a full reading of this job alone (its memory peak and IO
 * as of now).  Forcing a full reading of every job instead cost a node
 * with 1000 jobs tens of milliseconds at each job's end, inside the
 * ending step (bench_plugin, doc/performance.md).  The CPU figures are
 * the tick's: this reading does not move the job's CPU baseline. */
static void
full_reading(struct ceems_agent *a, struct agent_job *j)
{
	if (j->gone || j->reader == NULL)
		return;
	if (ceems_cgroup_reader_read_some(j->reader, CEEMS_CGF_ALL,
					  &a->scratch) == 0 &&
	    (a->scratch.present & CEEMS_CGF_CPU_USAGE) != 0)
		j->usage = a->scratch;
}

/* A step's end: its memory peak, without touching its CPU figures. */
static void
step_peak_reading(struct ceems_agent *a, struct agent_step *st)
{
	struct ceems_cgroup_stats *cs = &a->scratch;

	if (st->reader == NULL ||
	    ceems_cgroup_reader_read_some(st->reader, CEEMS_CGF_MEM_PEAK, cs) < 0)
		return;
	if (cs->present & CEEMS_CGF_MEM_PEAK) {
		st->r.have_mem_peak = true;
		st->r.mem_peak_bytes = cs->mem_peak_bytes;
	}
}

/* The part of the tick since the last one that job J was not there
 * (it registered during it), in seconds. */
static double
job_absent_s(const struct ceems_agent *a, const struct agent_job *j)
{
	return j->registered_ns > a->last_tick_ns ?
	       (double)(j->registered_ns - a->last_tick_ns) / 1e9 : 0;
}

static void
save_job(struct ceems_agent *a, const struct agent_job *j, uint64_t now_ns)
{
	struct state_figures fig;

	if (a->state == NULL || j->slot < 0)
		return;
	/* Whole: the unused steps and the padding go to the file too. */
	memset(&fig, 0, sizeof(fig));
	fig.tick_ns = now_ns;
	fig.cpu_base_ns = j->cpu_base_ns;
	fig.cpu_s = j->cpu_s;
	fig.gap_s = j->gap_s;
	fig.ledger = j->ledger;
	fig.ngaps = j->ngaps;
	memcpy(fig.gaps, j->gaps, sizeof(fig.gaps));
	fig.nsteps = j->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		fig.steps[i] = j->steps[i].r;
		if (!j->steps[i].r.ended)
			fig.steps[i].elapsed_s =
				(double)(now_ns - j->steps[i].start_ns) / 1e9;
	}
	state_slot_update(a->state, j->slot, &fig);
}

/* A job's memory in use for its time series, NaN when not known. */
static double
job_mem_bytes(const struct agent_job *j)
{
	if (j->usage.present & CEEMS_CGF_MEM_CURRENT)
		return (double)j->usage.mem_current_bytes;
	if (j->usage.present & CEEMS_CGF_MEM_RSS)
		return (double)j->usage.mem_rss_bytes;
	return NAN;
}

/* Job J's ledger has just been charged up to NOW_NS: that difference
 * goes into its series.  Every charge of the ledger is followed by this,
 * or the rows would not add up to the job's totals. */
static void
observe_series(const struct agent_job *j, uint64_t now_ns)
{
	ceems_series_observe(j->series, now_ns, &j->ledger,
			     j->have_cpu ? j->cpu_s : NAN, job_mem_bytes(j));
}

void
ceems_agent_tick(struct ceems_agent *a, uint64_t now_ns)
{
	struct ceems_ledger_node_tick node;
	bool full;
	int ret;

	if (now_ns <= a->last_tick_ns)
		return;
	/* The energy read for jobs that ended since the last tick. */
	node = a->pending;
	memset(&a->pending, 0, sizeof(a->pending));
	a->tick_ns = now_ns;
	node.dt_s = (double)(now_ns - a->last_tick_ns) / 1e9;
	full = now_ns - a->last_usage_ns >= a->config.usage_interval_ns;
	collect_energy(a, now_ns, &node);
	collect_node_usage(a, &node);
	set_idle_power(a, &node);
	a->last_node = node;
	ceems_ledger_carry_apply(&a->carry, &node);
	for (size_t i = 0; i < a->njobs; i++) {
		collect_job(a, a->jobs[i], full, &a->job_ticks[i]);
		a->job_ticks[i].absent_s = job_absent_s(a, a->jobs[i]);
	}
	if (full)
		a->last_usage_ns = now_ns;

	ret = ceems_ledger_split(&node, a->job_ticks, a->njobs, a->shares,
				 &a->last_tick);
	if (ret < 0) {
		ceems_error("ledger: cannot split this tick (%s); recorded as a gap",
			    strerror(-ret));
		for (size_t i = 0; i < a->njobs; i++) {
			if (a->jobs[i]->gone && a->jobs[i]->gone_ns < now_ns)
				continue;
			ceems_job_ledger_add_gap(&a->jobs[i]->ledger, node.dt_s);
			a->jobs[i]->gap_s += node.dt_s;
		}
	} else {
		for (size_t i = 0; i < a->njobs; i++) {
			struct agent_job *j = a->jobs[i];

			if (j->gone && j->gone_ns < now_ns)
				continue;
			ceems_job_ledger_add_tick(&j->ledger, &a->shares[i],
						  node.dt_s - a->job_ticks[i].absent_s,
						  a->have_factor ? &a->factor : NULL);
			j->cpu_s += a->job_ticks[i].cpu_s;
			split_to_steps(j, &a->shares[i], &a->job_ticks[i]);
		}
	}
	ceems_ledger_carry_restore(&a->carry, &a->last_tick);
	ceems_ledger_carry_clear(&a->carry);
	for (size_t i = 0; i < a->njobs; i++) {
		struct agent_job *j = a->jobs[i];

		if (!(j->gone && j->gone_ns < now_ns))
			observe_series(j, now_ns);
		save_job(a, j, now_ns);
	}
	a->last_tick_ns = now_ns;
}

static struct agent_job *
find_job(const struct ceems_agent *a, uint32_t jobid, size_t *index)
{
	for (size_t i = 0; i < a->njobs; i++)
		if (a->jobs[i]->spec.jobid == jobid) {
			if (index != NULL)
				*index = i;
			return a->jobs[i];
		}
	return NULL;
}

/* Open a job's cgroup and take its baseline.  0 or -errno. */
static int
attach_job(struct ceems_agent *a, struct agent_job *j)
{
	int err = 0;

	j->reader = ceems_cgroup_reader_open(&j->spec.cgroup, &a->mounts,
					     a->cgroup_prefix, &err);
	if (j->reader == NULL)
		return err != 0 ? err : -ENOENT;
	if (ceems_cgroup_reader_read(j->reader, &j->usage) == 0 &&
	    (j->usage.present & CEEMS_CGF_CPU_USAGE)) {
		j->cpu_last_ns = j->usage.cpu_usage_ns;
		j->have_cpu = true;
	}
	j->alloc_cores = j->spec.alloc_cores;
	if (j->alloc_cores == 0 && (j->usage.present & CEEMS_CGF_CPUSET))
		j->alloc_cores = j->usage.ncpus_allocated;
	j->alloc_mem_bytes = j->spec.alloc_mem_bytes;
	if (j->alloc_mem_bytes == 0 && (j->usage.present & CEEMS_CGF_MEM_LIMIT) &&
	    j->usage.mem_limit_bytes != CEEMS_CGROUP_UNLIMITED)
		j->alloc_mem_bytes = j->usage.mem_limit_bytes;
	return 0;
}

static bool
spec_valid(const struct ceems_agent_job_spec *s)
{
	if (s->jobid == 0 || s->cgroup.version == CEEMS_CGROUP_NONE)
		return false;
	for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++)
		if (!isfinite(s->gpu_share[g]) || s->gpu_share[g] < 0 ||
		    s->gpu_share[g] > 1)
			return false;
	return true;
}

int
ceems_agent_register(struct ceems_agent *a,
		     const struct ceems_agent_job_spec *spec, uint64_t now_ns)
{
	struct agent_job *j;
	int ret;

	if (!spec_valid(spec))
		return -EINVAL;
	if ((j = find_job(a, spec->jobid, NULL)) != NULL) {
		/* The step that registered the job first (the extern step)
		 * may not have seen the user's --ceems-series.  The series
		 * starts from the job's registration, as if it had been on
		 * from there: its first row holds what was charged since,
		 * so the rows still add up to the job's totals. */
		if (spec->series && j->series == NULL) {
			struct ceems_job_ledger none;

			ceems_job_ledger_init(&none);
			j->series = ceems_series_for_job(&a->config, true,
							 now_ns, &none, 0);
			ceems_series_backdate(j->series, j->registered_ns);
		}
		return -EEXIST;
	}
	/* The same id again (a requeued job) while the last run waits for
	 * its release: that run's record is written now. */
	agent_finish_expire(a->finish, now_ns, spec->jobid);
	if (a->njobs >= a->config.max_jobs)
		return -ENOSPC;
	/* No tick: the job's CPU baseline is read now, and the next tick
	 * charges what it holds for the part of the tick it was there. */
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return -ENOMEM;
	j->spec = *spec;
	j->slot = -1;
	j->registered_ns = now_ns;
	ceems_job_ledger_init(&j->ledger);
	ret = attach_job(a, j);
	if (ret < 0) {
		free_job(j);
		return ret;
	}
	j->cpu_base_ns = j->cpu_last_ns;
	j->series = ceems_series_for_job(&a->config, spec->series, now_ns,
					 &j->ledger, j->cpu_s);
	if (a->state != NULL) {
		j->slot = state_slot_claim(a->state, spec, now_ns);
		save_job(a, j, now_ns);
	}
	a->jobs[a->njobs++] = j;
	ceems_info("job %u registered (uid %u, %u cores, %llu MiB)",
		   spec->jobid, spec->uid, j->alloc_cores,
		   (unsigned long long)(j->alloc_mem_bytes >> 20));
	return 0;
}

static void fill_report(const struct ceems_agent *, const struct agent_job *,
			uint64_t, struct ceems_agent_job_report *);

/* Between ticks (ledger_carry.h): the node's figures since the last
 * tick, for one job's split at NOW_NS.  The energy is read now and kept
 * for the next tick; the busy time is only looked at (the next tick
 * reads it again); cores, memory and idle power are the last tick's.
 * Net of the jobs that already left.  False when no time has passed. */
static bool
partial_node(struct ceems_agent *a, uint64_t now_ns,
	     struct ceems_ledger_node_tick *node)
{
	struct ceems_node_cpu cpu;

	if (now_ns <= a->last_tick_ns)
		return false;
	collect_energy(a, now_ns, &a->pending);
	*node = a->pending;
	node->dt_s = (double)(now_ns - a->last_tick_ns) / 1e9;
	node->node_cores = a->last_node.node_cores;
	node->node_mem_used_bytes = a->last_node.node_mem_used_bytes;
	node->node_mem_total_bytes = a->last_node.node_mem_total_bytes;
	memcpy(node->idle_power_w, a->last_node.idle_power_w,
	       sizeof(node->idle_power_w));
	if (ceems_proc_read_cpu(a->proc, &cpu) == 0 && a->have_node_cpu &&
	    cpu.busy_ns >= a->node_cpu.busy_ns) {
		node->node_busy_cpu_s =
			(double)(cpu.busy_ns - a->node_cpu.busy_ns) / 1e9;
		node->node_cores = cpu.ncpus;
	}
	ceems_ledger_carry_apply(&a->carry, node);
	return true;
}

/* Job J leaves at NOW_NS: its part of the tick so far, split for it
 * alone and added to its ledger (and its steps', and its series),
 * remembered so that the next tick splits the rest.  Its reading here
 * may find its cgroup just removed (J is then gone): it is still charged
 * for this last part, as a tick would, so its series is too. */
static void
leave_now(struct ceems_agent *a, struct agent_job *j, uint64_t now_ns)
{
	struct ceems_ledger_node_tick node;
	struct ceems_ledger_job_tick t;
	struct ceems_ledger_job_share share;
	struct ceems_ledger_tick tick;
	double present_s;

	if (j->gone || !partial_node(a, now_ns, &node))
		return;
	a->tick_ns = now_ns;
	collect_job(a, j, false, &t);
	t.absent_s = job_absent_s(a, j);
	present_s = node.dt_s - t.absent_s;
	if (present_s <= 0)
		return;
	if (ceems_ledger_split(&node, &t, 1, &share, &tick) < 0) {
		ceems_job_ledger_add_gap(&j->ledger, present_s);
		j->gap_s += present_s;
		observe_series(j, now_ns);
		return;
	}
	ceems_job_ledger_add_tick(&j->ledger, &share, present_s,
				  a->have_factor ? &a->factor : NULL);
	j->cpu_s += t.cpu_s;
	split_to_steps(j, &share, &t);
	ceems_ledger_carry_add(&a->carry, &t, node.dt_s, &share);
	observe_series(j, now_ns);
}

int
ceems_agent_report_now(struct ceems_agent *a, uint32_t jobid,
		       uint64_t now_ns, struct ceems_agent_job_report *out)
{
	const struct agent_job *j = find_job(a, jobid, NULL);
	struct ceems_ledger_node_tick node;
	struct ceems_ledger_job_tick t;
	struct ceems_ledger_job_share share;
	struct ceems_ledger_tick tick;
	double present_s;

	if (j == NULL)
		return -ENOENT;
	fill_report(a, j, now_ns > a->last_tick_ns ? now_ns : a->last_tick_ns,
		    out);
	if (j->gone || j->reader == NULL || !partial_node(a, now_ns, &node))
		return 0;
	/* The job's CPU time since the last tick, looked at only. */
	memset(&t, 0, sizeof(t));
	t.alloc_cores = j->alloc_cores;
	t.alloc_mem_bytes = j->alloc_mem_bytes;
	memcpy(t.gpu_share, j->spec.gpu_share, sizeof(t.gpu_share));
	if (j->usage.present & CEEMS_CGF_MEM_RSS)
		t.rss_bytes = j->usage.mem_rss_bytes;
	if (ceems_cgroup_reader_read_some(j->reader, CEEMS_CGF_CPU_USAGE,
					  &a->scratch) == 0 &&
	    (a->scratch.present & CEEMS_CGF_CPU_USAGE) && j->have_cpu &&
	    a->scratch.cpu_usage_ns >= j->cpu_last_ns)
		t.cpu_s = (double)(a->scratch.cpu_usage_ns - j->cpu_last_ns) / 1e9;
	t.absent_s = job_absent_s(a, j);
	present_s = node.dt_s - t.absent_s;
	if (present_s <= 0 || ceems_ledger_split(&node, &t, 1, &share, &tick) < 0)
		return 0;
	ceems_job_ledger_add_tick(&out->ledger, &share, present_s,
				  a->have_factor ? &a->factor : NULL);
	out->cpu_s += t.cpu_s;
	return 0;
}

static void
fill_report(const struct ceems_agent *a, const struct agent_job *j,
	    uint64_t asof_ns, struct ceems_agent_job_report *out)
{
	memset(out, 0, sizeof(*out));
	out->jobid = j->spec.jobid;
	out->uid = j->spec.uid;
	out->alloc_cores = j->alloc_cores;
	out->alloc_mem_bytes = j->alloc_mem_bytes;
	(void)a;
	out->elapsed_s = (double)((j->gone ? j->gone_ns : asof_ns) -
				  j->registered_ns) / 1e9;
	out->cpu_s = j->cpu_s;
	out->gap_s = j->gap_s;
	out->cgroup_gone = j->gone;
	out->usage = j->usage;
	out->ledger = j->ledger;
	out->ngaps = j->ngaps;
	memcpy(out->gaps, j->gaps, sizeof(out->gaps));
	out->nsteps = j->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		out->steps[i] = j->steps[i].r;
		if (!j->steps[i].r.ended)
			out->steps[i].elapsed_s =
				(double)(asof_ns - j->steps[i].start_ns) / 1e9;
	}
}

/* Unix seconds of monotonic time T, as of NOW_NS. */
static int64_t
unix_at(uint64_t t, uint64_t now_ns)
{
	int64_t now = (int64_t)time(NULL);
	int64_t ago = t < now_ns ? (int64_t)((now_ns - t) / 1000000000u) : 0;

	return ago < now ? now - ago : now;
}

/* The job leaves the ticks; its report and times go to the finishing
 * table (lib/agent_finish.c) until the plugin releases it. */
static void
hand_to_finish(struct ceems_agent *a, const struct agent_job *j,
	       const struct ceems_agent_job_report *report, uint64_t now_ns)
{
	/* The state slot is freed now, not at the release: an agent
	 * restarted meanwhile would otherwise find the job again and, its
	 * cgroup gone, reap it into a second record beside the plugin's
	 * (under another start time: counted twice).  Losing the figures
	 * needs the plugin and the agent to fail within finish_grace. */
	struct agent_finish_job fj = {
		.slot = -1,
		.start_time = unix_at(j->registered_ns, now_ns),
		.end_time = unix_at(j->gone ? j->gone_ns : now_ns, now_ns),
	};

	if (a->state != NULL)
		state_slot_release(a->state, j->slot);
	agent_finish_add(a->finish, report, &fj, now_ns);
}

int
ceems_agent_deregister(struct ceems_agent *a, uint32_t jobid,
		       uint64_t now_ns, struct ceems_agent_job_report *out)
{
	const struct ceems_agent_job_report *final;
	struct agent_job *j;
	size_t i;

	/* Asked again (a plugin retrying, the epilog): the same report. */
	if ((final = agent_finish_find(a->finish, jobid)) != NULL) {
		*out = *final;
		return 0;
	}
	if (find_job(a, jobid, NULL) == NULL)
		return -ENOENT;
	j = find_job(a, jobid, &i);
	if (j == NULL)
		return -ENOENT;
	/* Its part of the tick so far, split for it alone (and into its
	 * series). */
	leave_now(a, j, now_ns);
	/* A last full reading: peak memory and IO as of the job's end. */
	full_reading(a, j);
	fill_report(a, j, now_ns > a->last_tick_ns ? now_ns : a->last_tick_ns,
		    out);
	/* The finishing table keeps the report without the series: the
	 * series is the agent's only until the next deregistration, and a
	 * record the agent writes itself goes without it. */
	out->series = NULL;
	hand_to_finish(a, j, out, now_ns);
	/* The series goes with the final report; kept until the next
	 * deregistration, so that the caller need not free it. */
	ceems_series_free(a->handed_out);
	a->handed_out = out->series = j->series;
	j->series = NULL;
	a->jobs[i] = a->jobs[--a->njobs];
	free_job(j);
	ceems_info("job %u deregistered: %.1f J in %.1f s",
		   jobid, ceems_job_ledger_total_j(&out->ledger), out->elapsed_s);
	return 0;
}

static bool
step_id_valid(const char *id)
{
	size_t n = strlen(id);

	if (n == 0 || n >= CEEMS_STEP_ID_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((id[i] >= '0' && id[i] <= '9') ||
		      (id[i] >= 'a' && id[i] <= 'z') || id[i] == '+'))
			return false;
	return true;
}

static struct agent_step *
find_step(struct agent_job *j, const char *id)
{
	for (uint32_t i = 0; i < j->nsteps; i++)
		if (strcmp(j->steps[i].r.id, id) == 0)
			return &j->steps[i];
	return NULL;
}

/* Open the cgroup of step ID of job J.  NULL when it cannot be found. */
static struct ceems_cgroup_reader *
open_step_reader(struct ceems_agent *a, struct agent_job *j, const char *id)
{
	struct ceems_cgroup_dirs dirs;
	char subdir[CEEMS_STEP_ID_MAX + 8];
	int err = 0;

	snprintf(subdir, sizeof(subdir), "step_%s", id);
	if (ceems_cgroup_dirs_for_job(&j->spec.cgroup, &a->mounts,
				      a->cgroup_prefix, subdir, &dirs) < 0)
		return NULL;
	return ceems_cgroup_reader_open_dirs(&dirs, &err);
}

int
ceems_agent_step_start(struct ceems_agent *a, uint32_t jobid,
		       const char *step_id, uint64_t now_ns)
{
	struct agent_job *j = find_job(a, jobid, NULL);
	struct agent_step *st;

	if (j == NULL)
		return -ENOENT;
	if (!step_id_valid(step_id))
		return -EINVAL;
	if (find_step(j, step_id) != NULL)
		return -EEXIST;
	if (j->nsteps >= CEEMS_AGENT_MAX_STEPS)
		return -ENOSPC;
	/* No tick: the step's CPU baseline is read now. */
	st = &j->steps[j->nsteps];
	memset(st, 0, sizeof(*st));
	snprintf(st->r.id, sizeof(st->r.id), "%s", step_id);
	st->start_ns = now_ns;
	st->reader = open_step_reader(a, j, step_id);
	if (st->reader == NULL)
		ceems_warning("job %u step %s: cgroup not found; the step gets no figures of its own",
			      jobid, step_id);
	else
		collect_step(a, st, true);
	j->nsteps++;
	return 0;
}

int
ceems_agent_step_end(struct ceems_agent *a, uint32_t jobid,
		     const char *step_id, uint64_t now_ns,
		     struct ceems_agent_step_report *out)
{
	struct agent_job *j = find_job(a, jobid, NULL);
	struct agent_step *st;

	if (j == NULL || (st = find_step(j, step_id)) == NULL)
		return -ENOENT;
	if (!st->r.ended) {
		/* No tick: its CPU time up to now is read, and the next tick
		 * gives it its part of the job's energy by it. */
		if (st->reader != NULL) {
			collect_step(a, st, false);
			st->r.cpu_s += st->tick_cpu_s;
			st->end_pending = true;
		}
		/* A last reading of the step: its memory peak. */
		step_peak_reading(a, st);
		ceems_cgroup_reader_close(st->reader);
		st->reader = NULL;
		st->r.ended = true;
		st->r.elapsed_s = (double)(now_ns - st->start_ns) / 1e9;
		save_job(a, j, a->last_tick_ns);
	}
	*out = st->r;
	return 0;
}

int
ceems_agent_report(const struct ceems_agent *a, uint32_t jobid,
		   struct ceems_agent_job_report *out)
{
	const struct agent_job *j = find_job(a, jobid, NULL);

	if (j == NULL)
		return -ENOENT;
	fill_report(a, j, a->last_tick_ns, out);
	return 0;
}

size_t
ceems_agent_njobs(const struct ceems_agent *a)
{
	return a->njobs;
}

const struct ceems_ledger_tick *
ceems_agent_last_tick(const struct ceems_agent *a)
{
	return &a->last_tick;
}

int
ceems_agent_checkpoint(struct ceems_agent *a, uint64_t now_ns)
{
	(void)now_ns;
	if (a->state == NULL)
		return -ENOENT;
	return state_file_flush(a->state);
}

/* Record that the job was not accounted from START to END (Unix s). */
static void
add_gap_interval(struct agent_job *j, double start, double end)
{
	if (j->ngaps < CEEMS_AGENT_MAX_GAPS) {
		j->gaps[j->ngaps].start = start;
		j->gaps[j->ngaps].end = end;
		j->ngaps++;
	} else {
		j->gaps[CEEMS_AGENT_MAX_GAPS - 1].end = end;
	}
}

struct restore_ctx {
	struct ceems_agent *agent;
	uint64_t now_ns;
};

/* Make every string of a spec read back from disk end inside its buffer. */
static void
terminate_spec_strings(struct ceems_agent_job_spec *s)
{
	s->cgroup.unified[sizeof(s->cgroup.unified) - 1] = '\0';
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		s->cgroup.v1[c][sizeof(s->cgroup.v1[c]) - 1] = '\0';
}

static int
restore_job(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	    uint64_t registered_ns, const struct state_figures *fig)
{
	struct restore_ctx *ctx = arg;
	struct ceems_agent *a = ctx->agent;
	struct agent_job *j;
	double down_s;

	if (a->njobs >= a->config.max_jobs || !spec_valid(spec) ||
	    find_job(a, spec->jobid, NULL) != NULL ||
	    fig->tick_ns > ctx->now_ns || registered_ns > fig->tick_ns)
		return 1;
	j = calloc(1, sizeof(*j));
	if (j == NULL)
		return 1;
	j->spec = *spec;
	terminate_spec_strings(&j->spec);
	j->slot = slot;
	j->registered_ns = registered_ns;
	j->ledger = fig->ledger;
	j->cpu_s = fig->cpu_s;
	j->gap_s = fig->gap_s;
	j->ngaps = fig->ngaps;
	memcpy(j->gaps, fig->gaps, sizeof(j->gaps));
	down_s = (double)(ctx->now_ns - fig->tick_ns) / 1e9;
	if (down_s > 0) {
		struct timespec ts;
		double now_unix;

		ceems_job_ledger_add_gap(&j->ledger, down_s);
		j->gap_s += down_s;
		clock_gettime(CLOCK_REALTIME, &ts);
		now_unix = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
		add_gap_interval(j, now_unix - down_s, now_unix);
	}
	if (attach_job(a, j) < 0) {
		/* The job ended while the agent was down: keep its figures
		 * for the deregistration that will ask for them. */
		j->gone = true;
		j->gone_ns = fig->tick_ns;
	}
	j->cpu_base_ns = fig->cpu_base_ns;
	j->nsteps = fig->nsteps;
	for (uint32_t i = 0; i < j->nsteps; i++) {
		struct agent_step *st = &j->steps[i];

		st->r = fig->steps[i];
		st->r.id[sizeof(st->r.id) - 1] = '\0';
		st->start_ns = st->r.elapsed_s * 1e9 < (double)fig->tick_ns ?
			       fig->tick_ns - (uint64_t)(st->r.elapsed_s * 1e9) : 0;
		st->r.elapsed_s = st->r.ended ? st->r.elapsed_s : 0;
		if (!st->r.ended && !j->gone)
			st->reader = open_step_reader(a, j, st->r.id);
	}
	/* The rows before the restart are not kept (the record's gaps say
	 * when the agent was down): the series restarts here. */
	j->series = ceems_series_for_job(&a->config, j->spec.series,
					 ctx->now_ns, &j->ledger, j->cpu_s);
	a->jobs[a->njobs++] = j;
	ceems_info("job %u restored from state (%.1f s not accounted while the agent was down)",
		   spec->jobid, down_s);
	save_job(a, j, ctx->now_ns);
	return 0;
}

int
ceems_agent_restore(struct ceems_agent *a, uint64_t now_ns)
{
	struct restore_ctx ctx = { a, now_ns };

	if (a->state == NULL)
		return 0;
	a->last_tick_ns = now_ns;
	return state_file_restore(a->state, restore_job, &ctx);
}

/* ---- the two-phase end (lib/agent_finish.c) ---- */

int
ceems_agent_release(struct ceems_agent *a, uint32_t jobid)
{
	return agent_finish_release(a->finish, jobid);
}

int
ceems_agent_finishing_meta(struct ceems_agent *a, uint32_t jobid,
			   const struct ceems_job_meta *meta)
{
	return agent_finish_set_meta(a->finish, jobid, meta);
}

int
ceems_agent_reply_lost(struct ceems_agent *a, uint32_t jobid)
{
	return agent_finish_expire(a->finish, 0, jobid) > 0 ? 0 : -ENOENT;
}

size_t
ceems_agent_nfinishing(const struct ceems_agent *a)
{
	return agent_finish_count(a->finish);
}

/* A job whose cgroup has been gone for reap_grace was never
 * deregistered: its plugin and the epilog are not coming. */
static void
reap(struct ceems_agent *a, size_t i, uint64_t now_ns)
{
	struct ceems_agent_job_report *report = malloc(sizeof(*report));
	struct agent_job *j = a->jobs[i];
	struct agent_finish_job fj = {
		.slot = a->state != NULL ? j->slot : -1,
		.start_time = unix_at(j->registered_ns, now_ns),
		.end_time = unix_at(j->gone_ns, now_ns),
	};
	char why[160];

	if (report == NULL)
		return;		/* tried again at the next sweep */
	fill_report(a, j, a->last_tick_ns, report);
	report->series = j->series;	/* written now, freed with the job */
	snprintf(why, sizeof(why), "its cgroup had been gone for %.0f s and "
		 "no deregistration came (its steps and the epilog ended "
		 "without one)", (double)(now_ns - j->gone_ns) / 1e9);
	ceems_info("job %u: reaped, %s", j->spec.jobid, why);
	agent_finish_now(a->finish, report, &fj, why);
	free(report);
	a->jobs[i] = a->jobs[--a->njobs];
	free_job(j);
}

int
ceems_agent_sweep(struct ceems_agent *a, uint64_t now_ns)
{
	int n = agent_finish_expire(a->finish, now_ns, 0);

	for (size_t i = 0; i < a->njobs;) {
		const struct agent_job *j = a->jobs[i];

		if (j->gone && now_ns >= j->gone_ns &&
		    now_ns - j->gone_ns >= a->config.reap_grace_ns) {
			reap(a, i, now_ns);
			n++;
			continue;	/* I now holds the last job */
		}
		i++;
	}
	return n;
}
