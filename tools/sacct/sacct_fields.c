/* sacct_fields.c - ceems-sacct's field registry and formatters (see
 * sacct_fields.h).  sacct's own fields keep sacct's units so that
 * scripts written for sacct read them unchanged; the new ones say their
 * unit in the manual (ceems-sacct(1), FIELDS). */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "sacct_fields.h"
#include "sacct_units.h"
#include "model/job.h"
#include "summary/units.h"

static void
put(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void
put(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, size, fmt, ap);
	va_end(ap);
}

/* S into BUF, cut to SIZE - 1 bytes: put's "%s" without printf, for the
 * text fields and the empty cells (a heavy user's month with its steps
 * is 600,000 cells). */
static void
put_text(char *buf, size_t size, const char *s)
{
	size_t n;

	if (size == 0)
		return;
	n = strnlen(s, size - 1);
	memcpy(buf, s, n);
	buf[n] = '\0';
}

void
sacct_fields_fmt_elapsed(double seconds, char *buf, size_t size)
{
	long long s;

	if (!isfinite(seconds) || seconds < 0) {
		put_text(buf, size, "");
		return;
	}
	s = llround(seconds);
	if (s >= 86400)
		put(buf, size, "%lld-%02lld:%02lld:%02lld", s / 86400,
		    s % 86400 / 3600, s % 3600 / 60, s % 60);
	else
		put(buf, size, "%02lld:%02lld:%02lld", s / 3600, s % 3600 / 60,
		    s % 60);
}

void
sacct_fields_fmt_cpu(double seconds, char *buf, size_t size)
{
	long long ms, s;

	if (!isfinite(seconds) || seconds < 0) {
		put_text(buf, size, "");
		return;
	}
	/* Slurm's _elapsed_time: milliseconds cut, not rounded; shown
	 * under an hour only, and only when there are some */
	ms = (long long)floor(seconds * 1000.0 + 1e-6);
	s = ms / 1000;
	if (s >= 3600)
		sacct_fields_fmt_elapsed((double)s, buf, size);
	else if (ms % 1000 != 0)
		put(buf, size, "%02lld:%02lld.%03lld", s / 60, s % 60, ms % 1000);
	else
		put(buf, size, "00:%02lld:%02lld", s / 60, s % 60);
}

void
sacct_fields_fmt_rss(double bytes, char *buf, size_t size)
{
	if (!isfinite(bytes) || bytes < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.0fK", ceil(bytes / 1024.0));
}

void
sacct_fields_fmt_sig3(double value, char *buf, size_t size)
{
	int decimals;

	if (!isfinite(value)) {
		put_text(buf, size, "");
		return;
	}
	if (value == 0.0 || fabs(value) >= 100.0)
		decimals = 0;
	else
		decimals = 2 - (int)floor(log10(fabs(value)));
	if (decimals > 12)
		decimals = 12;
	put(buf, size, "%.*f", decimals, value);
}

void
sacct_fields_fmt_pct(double fraction, char *buf, size_t size)
{
	if (!isfinite(fraction) || fraction < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.1f%%", fraction * 100.0);
}

/* ---- the fields ---- */

static void
fmt_time(int64_t t, char *buf, size_t size)
{
	time_t tt = (time_t)t;
	struct tm tm;

	if (t <= 0 || localtime_r(&tt, &tm) == NULL)
		put_text(buf, size, "");
	else
		strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
}

static void
f_jobid(const struct sacct_row *r, char *buf, size_t size)
{
	char step[SACCT_NODES_MAX + 1] = "";

	if (r->step[0] != '\0')
		put(step, sizeof(step), ".%s", r->step);
	else if (r->part_node != NULL)
		put(step, sizeof(step), "@%s", r->part_node);
	if (r->array_job_id != UINT32_MAX)
		put(buf, size, "%u_%u%s", r->array_job_id, r->array_task_id, step);
	else
		put(buf, size, "%u%s", r->jobid, step);
}

static void
f_jobidraw(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->part_node != NULL)
		put(buf, size, "%u@%s", r->jobid, r->part_node);
	else
		put(buf, size, "%u%s%s", r->jobid, r->step[0] ? "." : "", r->step);
}

#define TEXT_FIELD(fn, member) \
	static void fn(const struct sacct_row *r, char *buf, size_t size) \
	{ put_text(buf, size, r->member); }

/* A step's name in sacct is its command's for an srun step (not kept:
 * empty), batch, extern and interactive for those. */
static void
f_name(const struct sacct_row *r, char *buf, size_t size)
{
	bool numbered = r->step[0] != '\0' &&
			strspn(r->step, "0123456789") == strlen(r->step);

	put_text(buf, size, numbered ? "" : r->name);
}

TEXT_FIELD(f_user, user)
TEXT_FIELD(f_account, account)

/* Job lines only, as sacct fills them (a step's are empty there). */
#define JOB_TEXT_FIELD(fn, member) \
	static void fn(const struct sacct_row *r, char *buf, size_t size) \
	{ put_text(buf, size, r->step[0] == '\0' ? r->member : ""); }
JOB_TEXT_FIELD(f_partition, partition)
JOB_TEXT_FIELD(f_qos, qos)
TEXT_FIELD(f_cluster, cluster)
/* A step's own state is not kept (its row carries its job's): empty. */
JOB_TEXT_FIELD(f_state, state)
TEXT_FIELD(f_nodes, nodes)

static void
f_uid(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->step[0] != '\0')
		put_text(buf, size, "");
	else
		put(buf, size, "%u", r->uid);
}

static void
f_exitcode(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->exit_code < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%d:%d", r->exit_code, r->exit_signal);
}

static void
f_submit(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_time(r->submit_time, buf, size);
}

static void
f_start(const struct sacct_row *r, char *buf, size_t size)
{
	/* a step's row carries its job's start, not its own */
	fmt_time(r->step[0] == '\0' ? r->start_time : 0, buf, size);
}

static void
f_end(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_time(r->end_time, buf, size);
}

static void
f_elapsed(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_elapsed(r->elapsed_s, buf, size);
}

static void
f_elapsedraw(const struct sacct_row *r, char *buf, size_t size)
{
	if (!isfinite(r->elapsed_s))
		put_text(buf, size, "");
	else
		put(buf, size, "%.0f", r->elapsed_s);
}

/* sacct's Timelimit: job lines only; UNLIMITED and Partition_Limit
 * as sacct writes Slurm's INFINITE and NO_VAL. */
static bool
timelimit_word(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->time_limit_min == UINT32_MAX || r->step[0] != '\0' ||
	    r->part_node != NULL) {
		put_text(buf, size, "");
		return true;
	}
	if (r->time_limit_min == CEEMS_TIME_LIMIT_UNLIMITED) {
		put_text(buf, size, "UNLIMITED");
		return true;
	}
	if (r->time_limit_min == CEEMS_TIME_LIMIT_PARTITION) {
		put_text(buf, size, "Partition_Limit");
		return true;
	}
	return false;
}

static void
f_timelimit(const struct sacct_row *r, char *buf, size_t size)
{
	long long m;

	if (timelimit_word(r, buf, size))
		return;
	/* Slurm's mins2time_str: [DD-]HH:MM:SS, or MM:SS under an hour */
	m = r->time_limit_min;
	if (m == 0)
		put_text(buf, size, "");
	else if (m >= 1440)
		put(buf, size, "%lld-%02lld:%02lld:00", m / 1440, m % 1440 / 60,
		    m % 60);
	else
		put(buf, size, "%02lld:%02lld:00", m / 60, m % 60);
}

static void
f_timelimitraw(const struct sacct_row *r, char *buf, size_t size)
{
	if (!timelimit_word(r, buf, size))
		put(buf, size, r->time_limit_min > 0 ? "%u" : "", r->time_limit_min);
}

static void
f_alloccpus(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->alloc_cpus == 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%u", r->alloc_cpus);
}

static void
f_allocgpus(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->alloc_gpus == 0 || r->step[0] != '\0')
		put_text(buf, size, "");
	else
		put(buf, size, "%u", r->alloc_gpus);
}

static void
f_nnodes(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->nnodes == 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%u", r->nnodes);
}

/* NTasks: step lines only, as sacct fills it (a job line's is empty). */
static void
f_ntasks(const struct sacct_row *r, char *buf, size_t size)
{
	if (sacct_row_is_job(r) || !isfinite(r->ntasks))
		put_text(buf, size, "");
	else
		put(buf, size, "%.0f", r->ntasks);
}

/* sacct's TRES usage strings (Slurm's slurmdb_make_tres_string_from_simple
 * for usage): "type=value" parts sorted by their text, CPU time as
 * [D-]HH:MM:SS of whole seconds, every other count as a memory figure
 * (1024 steps, exact); step lines only.  Only what ceems keeps of a step
 * is written: a part it does not keep is left out, not written as 0. */
static void
tres_part(char *buf, size_t size, size_t *len, const char *key,
	  const char *value)
{
	if (value[0] == '\0' || *len >= size)
		return;
	*len += (size_t)snprintf(buf + *len, size - *len, "%s%s=%s",
				 *len > 0 ? "," : "", key, value);
	if (*len >= size)
		*len = size;
}

/* TRESUsageInTot: cpu (TotalCPU's, over the nodes) and energy
 * (ConsumedEnergy's); sacct sums both over the step's tasks. */
static void
f_tres_in_tot(const struct sacct_row *r, char *buf, size_t size)
{
	char cpu[32] = "", energy[32] = "";
	size_t len = 0;

	put_text(buf, size, "");
	if (sacct_row_is_job(r) || r->part_node != NULL)
		return;
	/* Slurm keeps milliseconds and writes the whole seconds, cut. */
	if (isfinite(r->cpu_s) && r->cpu_s >= 0)
		sacct_fields_fmt_elapsed(floor(floor(r->cpu_s * 1000.0 + 1e-6) / 1000.0),
					 cpu, sizeof(cpu));
	if (isfinite(r->total_j))
		sacct_units_fmt(round(r->total_j), SACCT_UNIT_NONE, 1024, 1,
				energy, sizeof(energy));
	tres_part(buf, size, &len, "cpu", cpu);
	tres_part(buf, size, &len, "energy", energy);
}

/* A TRES field of sacct's that holds one part ceems keeps, KEY=VALUE,
 * VALUE a count in sacct's units (1024s): on step lines only, as sacct
 * fills them, and left out when unknown (NaN). */
static void
tres_step_one(const struct sacct_row *r, char *buf, size_t size,
	      const char *key, double value)
{
	char text[32] = "";
	size_t len = 0;

	put_text(buf, size, "");
	if (sacct_row_is_job(r) || r->part_node != NULL)
		return;
	if (isfinite(value))
		sacct_units_fmt(value, SACCT_UNIT_NONE, 1024, 1, text, sizeof(text));
	tres_part(buf, size, &len, key, text);
}

/* TRESUsageInMax: mem, MaxRSS's (sacct: its largest task's). */
static void
f_tres_in_max(const struct sacct_row *r, char *buf, size_t size)
{
	tres_step_one(r, buf, size, "mem", r->mem_peak_bytes);
}

/* TRESUsageOutAve and TRESUsageOutTot: Slurm's energy= there is a
 * step's mean power in watts (its energy plugin's average), ceems's the
 * step's energy over its life; fs/disk is not kept. */
static void
f_tres_out_power(const struct sacct_row *r, char *buf, size_t size)
{
	tres_step_one(r, buf, size, "energy",
		      isfinite(r->elapsed_s) && r->elapsed_s >= 1 ?
		      round(r->total_j / r->elapsed_s) : NAN);
}

/* ReqMem: the job's request, counted in MB as Slurm keeps it; job lines
 * only, as sacct fills it. */
static void
f_reqmem(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->req_mem_bytes == 0 || r->step[0] != '\0')
		put_text(buf, size, "");
	else
		sacct_units_fmt((double)(r->req_mem_bytes / 1048576), SACCT_UNIT_MEGA,
				1024, 1, buf, size);
}

/* MaxRSS: sacct has it on step lines only (the job line is empty); a
 * step's is its memory peak on its largest node, in bytes converted as
 * sacct converts them. */
static void
f_maxrss(const struct sacct_row *r, char *buf, size_t size)
{
	if (sacct_row_is_job(r))
		put_text(buf, size, "");
	else
		sacct_units_fmt(r->mem_peak_bytes, SACCT_UNIT_NONE, 1024, 1, buf,
				size);
}

void
sacct_fields_fmt_bytes(double bytes, char *buf, size_t size)
{
	static const char units[] = "KMGTPE";
	int u = -1;

	if (!isfinite(bytes) || bytes < 0) {
		put_text(buf, size, "");
		return;
	}
	while (bytes >= 1024 && u < (int)sizeof(units) - 2) {
		bytes /= 1024;
		u++;
	}
	if (u < 0)
		put(buf, size, "%.0f", bytes);
	else
		put(buf, size, "%.2f%c", bytes, units[u]);
}

/* BYTES summed over NODES nodes of R's job: "+" after it when fewer
 * than the job's nodes measured it (at least this much), so that one
 * node's part never passes for the job's. */
static void
fmt_node_sum(const struct sacct_row *r, double bytes, double nodes,
	     char *buf, size_t size)
{
	double want = r->nnodes > 0 ? (double)r->nnodes :
		      (double)r->nodes_reported;
	size_t len;

	sacct_fields_fmt_bytes(bytes, buf, size);
	len = strlen(buf);
	if (len > 0 && !isnan(nodes) && nodes < want && len + 1 < size) {
		buf[len] = '+';
		buf[len + 1] = '\0';
	}
}

static void
f_readbytes(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_node_sum(r, r->io_read_bytes, r->io_nodes, buf, size);
}

static void
f_writebytes(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_node_sum(r, r->io_write_bytes, r->io_nodes, buf, size);
}

static void
f_netin(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_node_sum(r, r->net_in_bytes, r->net_nodes, buf, size);
}

static void
f_netout(const struct sacct_row *r, char *buf, size_t size)
{
	fmt_node_sum(r, r->net_out_bytes, r->net_nodes, buf, size);
}

static void
f_totalcpu(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_cpu(r->cpu_s, buf, size);
}

static double
cpu_time(const struct sacct_row *r)
{
	if (r->alloc_cpus == 0 || !isfinite(r->elapsed_s))
		return NAN;
	return r->elapsed_s * r->alloc_cpus;
}

static void
f_cputime(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_elapsed(cpu_time(r), buf, size);
}

static void
f_cputimeraw(const struct sacct_row *r, char *buf, size_t size)
{
	double t = cpu_time(r);

	if (!isfinite(t))
		put_text(buf, size, "");
	else
		put(buf, size, "%.0f", t);
}

static void
f_energy_raw(const struct sacct_row *r, char *buf, size_t size)
{
	if (!isfinite(r->total_j))
		put_text(buf, size, "");
	else
		put(buf, size, "%.0f", r->total_j);
}

static void
f_consumed(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_units_fmt(isfinite(r->total_j) ? floor(r->total_j) : NAN,
			SACCT_UNIT_NONE, 1000, 0, buf, size);
}

/* ceems's own energy fields, in the unit their amount reads best in. */
#define ENERGY_FIELD(fn, member) \
	static void fn(const struct sacct_row *r, char *buf, size_t size) \
	{ ceems_units_fmt_energy(buf, size, r->member); }
ENERGY_FIELD(f_energy, total_j)
ENERGY_FIELD(f_energy_cpu, package_j)
ENERGY_FIELD(f_energy_dram, dram_j)
ENERGY_FIELD(f_energy_gpu, gpu_j)
ENERGY_FIELD(f_energy_other, node_j)
ENERGY_FIELD(f_energy_err, energy_err_j)

/* For scripts: the number alone, in a fixed unit, to nine digits. */
static void
put_raw(double value, char *buf, size_t size)
{
	if (!isfinite(value) || value < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.9g", value);
}

static void
f_energy_joules(const struct sacct_row *r, char *buf, size_t size)
{
	put_raw(r->total_j, buf, size);
}

static void
f_co2_grams(const struct sacct_row *r, char *buf, size_t size)
{
	put_raw(r->emissions_g, buf, size);
}

static void
f_work(const struct sacct_row *r, char *buf, size_t size)
{
	if (!isfinite(r->work) || r->work < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.15g", r->work);
}

static void
f_workunit(const struct sacct_row *r, char *buf, size_t size)
{
	put_text(buf, size, r->work_unit);
}

static void
f_energy_per_work(const struct sacct_row *r, char *buf, size_t size)
{
	put_raw(r->energy_per_work, buf, size);
}

#define PCT_FIELD(fn, member) \
	static void fn(const struct sacct_row *r, char *buf, size_t size) \
	{ sacct_fields_fmt_pct(r->member, buf, size); }
PCT_FIELD(f_cpueff, cpu_eff)
PCT_FIELD(f_memeff, mem_eff)
PCT_FIELD(f_quality, quality)
PCT_FIELD(f_cifallback, ci_fallback)

/* The domains flagged, "package,dram"; empty when none is (or none was
 * measured). */
static void
f_idleunlearned(const struct sacct_row *r, char *buf, size_t size)
{
	int flags;

	if (!isfinite(r->idle_unlearned)) {
		put_text(buf, size, "");
		return;
	}
	flags = (int)r->idle_unlearned;
	put(buf, size, "%s%s%s",
	    (flags & SACCT_IDLE_UNLEARNED_PACKAGE) ? "package" : "",
	    (flags & SACCT_IDLE_UNLEARNED_PACKAGE) &&
	    (flags & SACCT_IDLE_UNLEARNED_DRAM) ? "," : "",
	    (flags & SACCT_IDLE_UNLEARNED_DRAM) ? "dram" : "");
}

static void
f_gpuutil(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_pct(r->gpu_util_pct / 100.0, buf, size);
}

/* GPU memory peak / GPU memory, empty unless both are known. */
static void
f_gpumemeff(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_pct(r->gpu_mem_total_bytes > 0 ?
		      r->gpu_mem_peak_bytes / r->gpu_mem_total_bytes : NAN,
		      buf, size);
}

static void
f_gpusmact(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_pct(r->gpu_sm_pct / 100.0, buf, size);
}

/* The truest measure of use the job's GPUs give: SM activity where the
 * driver offers profiling metrics, else utilisation. */
static void
f_gpueff(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_pct((isnan(r->gpu_sm_pct) ? r->gpu_util_pct :
		       r->gpu_sm_pct) / 100.0, buf, size);
}

static void
f_gpumem(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_rss(r->gpu_mem_peak_bytes, buf, size);
}

static void
f_co2_saving(const struct sacct_row *r, char *buf, size_t size)
{
	ceems_units_fmt_grams(buf, size, r->saving_g, NULL);
}

static void
f_co2(const struct sacct_row *r, char *buf, size_t size)
{
	ceems_units_fmt_grams(buf, size, r->emissions_g, NULL);
}

static void
f_cifactor(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_sig3(r->g_per_kwh, buf, size);
}

static void
f_pue(const struct sacct_row *r, char *buf, size_t size)
{
	if (!isfinite(r->pue))
		put_text(buf, size, "");
	else
		put(buf, size, "%.2f", r->pue);
}

static void
f_count(double v, char *buf, size_t size)
{
	if (!isfinite(v) || v < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.0f", v);
}

#define COUNT_FIELD(fn, member) \
	static void fn(const struct sacct_row *r, char *buf, size_t size) \
	{ f_count(r->member, buf, size); }
COUNT_FIELD(f_ctxsw, perf_ctxsw)
COUNT_FIELD(f_pagefaults, perf_page_faults)
COUNT_FIELD(f_migrations, perf_migrations)

static void
f_ipc(const struct sacct_row *r, char *buf, size_t size)
{
	if (!isfinite(r->perf_cycles) || !isfinite(r->perf_instructions) ||
	    !(r->perf_cycles > 0) || r->perf_instructions < 0)
		put_text(buf, size, "");
	else
		put(buf, size, "%.2f", r->perf_instructions / r->perf_cycles);
}

/* The table is data (sacct_fields.def): sacct's fields in sacct's
 * order, then ceems's.  A field ceems does not keep has no formatter,
 * and its cell is empty. */
#define FILLED SACCT_FIELD_FILLED
#define EMPTY SACCT_FIELD_EMPTY
#define CEEMS SACCT_FIELD_CEEMS
#define SACCT_FIELD(name, width, right, fmt, needs, status, help) \
	{ #name, width, right, fmt, needs, status, help },
static const struct sacct_field fields[] = {
#include "sacct_fields.def"
};
#undef SACCT_FIELD
#undef FILLED
#undef EMPTY
#undef CEEMS

const struct sacct_field *
sacct_fields_all(size_t *n)
{
	*n = sizeof(fields) / sizeof(fields[0]);
	return fields;
}

uint64_t
sacct_fields_columns_need(const struct sacct_column *cols, size_t n)
{
	uint64_t needs = 0;
	size_t i;

	for (i = 0; i < n; i++)
		needs |= cols[i].field->needs;
	return needs;
}

const struct sacct_field *
sacct_fields_find(const char *name)
{
	size_t i, len = strlen(name);

	if (len == 0)
		return NULL;
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcasecmp(fields[i].name, name) == 0)
			return &fields[i];
	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strncasecmp(fields[i].name, name, len) == 0)
			return &fields[i];
	return NULL;
}

/* -e: the names alone, four to a line, as sacct prints them: clients
 * read every word as a field name. */
void
sacct_fields_help(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		if (i & 3)
			fputc(' ', out);
		else if (i > 0)
			fputc('\n', out);
		fprintf(out, "%-19s", fields[i].name);
	}
	fputc('\n', out);
}

const char *
sacct_fields_status_name(enum sacct_field_status status)
{
	switch (status) {
	case SACCT_FIELD_FILLED:
		return "sacct";
	case SACCT_FIELD_EMPTY:
		return "empty";
	case SACCT_FIELD_CEEMS:
		return "ceems";
	}
	return "?";
}

void
sacct_fields_explain(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		fprintf(out, "%-19s %-5s %s\n", fields[i].name,
			sacct_fields_status_name(fields[i].status), fields[i].help);
}

/* Add NAME's column, or every field's for sacct's ALL (any prefix of
 * it: sacct tests ALL before the names), with WIDTH to TMP.  0 or -1
 * with ERR. */
static int
add_named(const char *name, int width, struct sacct_column *tmp,
	  size_t *count, size_t max, char *err, size_t err_size)
{
	const struct sacct_field *f = sacct_fields_find(name);
	size_t i, nall = sizeof(fields) / sizeof(fields[0]);
	bool all = name[0] != '\0' && strncasecmp("ALL", name, strlen(name)) == 0;

	if (!all && f == NULL) {
		snprintf(err, err_size, "unknown field '%s' (ceems-sacct -e lists them)", name);
		return -1;
	}
	if (*count + (all ? nall : 1) > max) {
		snprintf(err, err_size, "too many fields (at most %zu)", max);
		return -1;
	}
	for (i = 0; i < (all ? nall : 1); i++) {
		tmp[*count].field = all ? &fields[i] : f;
		tmp[*count].width = width;
		(*count)++;
	}
	return 0;
}

int
sacct_fields_format_parse(const char *spec, struct sacct_column *cols, size_t max,
		   size_t *n, char *err, size_t err_size)
{
	static struct sacct_column tmp[SACCT_MAX_COLUMNS];
	size_t count = *n, len;
	const char *p = spec, *end, *pct;
	char name[64];
	long width;
	char *stop;

	if (max > SACCT_MAX_COLUMNS)
		max = SACCT_MAX_COLUMNS;
	if (count > max)
		count = max;
	memcpy(tmp, cols, count * sizeof(tmp[0]));
	for (;;) {
		while (isspace((unsigned char)*p))
			p++;	/* as sacct: "JobID, State" */
		end = strchr(p, ',');
		len = end != NULL ? (size_t)(end - p) : strlen(p);
		if (len > 0) {
			pct = memchr(p, '%', len);
			width = 0;
			if (pct != NULL) {
				errno = 0;
				width = strtol(pct + 1, &stop, 10);
				if (stop == pct + 1 || stop != p + len ||
				    width < 1 || width > 1000 || errno != 0) {
					snprintf(err, err_size, "bad width in field '%.*s' (expected NAME%%N, N from 1 to 1000)",
						 (int)(len > 60 ? 60 : len), p);
					return -1;
				}
				len = (size_t)(pct - p);
			}
			if (len >= sizeof(name)) {
				snprintf(err, err_size, "unknown field '%.40s...' (ceems-sacct -e lists them)", p);
				return -1;
			}
			memcpy(name, p, len);
			name[len] = '\0';
			if (add_named(name, (int)width, tmp, &count, max, err,
				      err_size) < 0)
				return -1;
		}
		if (end == NULL)
			break;
		p = end + 1;
	}
	if (count == *n) {
		snprintf(err, err_size, "no field in --format '%.60s'", spec);
		return -1;
	}
	memcpy(cols, tmp, count * sizeof(tmp[0]));
	*n = count;
	return 0;
}
