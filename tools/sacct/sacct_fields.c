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
	long long ms;

	if (!isfinite(seconds) || seconds < 0) {
		put_text(buf, size, "");
		return;
	}
	ms = llround(seconds * 1000.0);
	if (ms < 3600000LL)
		put(buf, size, "%02lld:%02lld.%03lld", ms / 60000,
		    ms % 60000 / 1000, ms % 1000);
	else
		sacct_fields_fmt_elapsed((double)(ms / 1000), buf, size);
}

void
sacct_fields_fmt_suffix(double value, double step, char *buf, size_t size)
{
	static const char units[] = "\0KMGTPE";
	int u = 0;

	if (!isfinite(value) || value < 0) {
		put_text(buf, size, "");
		return;
	}
	while (value >= step && u < 6) {
		value /= step;
		u++;
	}
	if (value == floor(value))
		put(buf, size, "%.0f%.1s", value, &units[u]);
	else
		put(buf, size, "%.2f%.1s", value, &units[u]);
}

void
sacct_fields_fmt_reqmem(double bytes, char *buf, size_t size)
{
	static const struct {
		double div;
		char unit;
	} units[] = {
		{ 1099511627776.0, 'T' }, { 1073741824.0, 'G' },
		{ 1048576.0, 'M' },
	};
	size_t i;

	if (!isfinite(bytes) || bytes <= 0) {
		put_text(buf, size, "");
		return;
	}
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (bytes >= units[i].div &&
		    fmod(bytes, units[i].div) == 0.0) {
			put(buf, size, "%.0f%c", bytes / units[i].div,
			    units[i].unit);
			return;
		}
	}
	put(buf, size, "%.0fK", ceil(bytes / 1024.0));
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
TEXT_FIELD(f_name, name)
TEXT_FIELD(f_user, user)
TEXT_FIELD(f_account, account)
TEXT_FIELD(f_partition, partition)
TEXT_FIELD(f_qos, qos)
TEXT_FIELD(f_cluster, cluster)
TEXT_FIELD(f_state, state)
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
	fmt_time(r->start_time, buf, size);
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

static void
f_timelimit(const struct sacct_row *r, char *buf, size_t size)
{
	if (r->time_limit_min == UINT32_MAX || r->step[0] != '\0')
		put_text(buf, size, "");
	else
		sacct_fields_fmt_elapsed(r->time_limit_min * 60.0, buf, size);
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

static void
f_reqmem(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_reqmem(r->req_mem_bytes > 0 ? (double)r->req_mem_bytes : NAN,
			 buf, size);
}

static void
f_maxrss(const struct sacct_row *r, char *buf, size_t size)
{
	sacct_fields_fmt_rss(r->mem_peak_bytes, buf, size);
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
	sacct_fields_fmt_suffix(r->total_j, 1000.0, buf, size);
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

static const struct sacct_field fields[] = {
	{ "JobID", 12, false, f_jobid, 0,
	  "job id (ARRAYJOB_TASK for array jobs), .STEP for a step" },
	{ "JobIDRaw", 12, false, f_jobidraw, 0,
	  "Slurm's job id, .STEP for a step" },
	{ "JobName", 10, false, f_name, SACCT_NEED_NAME,
	  "job name (the step's name on a step line)" },
	{ "User", 9, false, f_user, 0,
	  "owner's user name" },
	{ "UID", 6, true, f_uid, SACCT_NEED_UID,
	  "owner's uid" },
	{ "Account", 10, false, f_account, SACCT_NEED_ACCOUNT,
	  "Slurm account" },
	{ "Partition", 10, false, f_partition, SACCT_NEED_PARTITION,
	  "Slurm partition" },
	{ "QOS", 10, false, f_qos, SACCT_NEED_QOS,
	  "quality of service" },
	{ "Cluster", 10, false, f_cluster, 0,
	  "Slurm cluster" },
	{ "State", 10, false, f_state, SACCT_NEED_STATE,
	  "job state at its end" },
	{ "ExitCode", 8, true, f_exitcode, SACCT_NEED_EXIT,
	  "exit status:signal" },
	{ "Submit", 19, false, f_submit, SACCT_NEED_SUBMIT,
	  "submit time (local)" },
	{ "Start", 19, false, f_start, 0,
	  "start time (local)" },
	{ "End", 19, false, f_end, SACCT_NEED_END,
	  "end time (local)" },
	{ "Elapsed", 10, true, f_elapsed, SACCT_NEED_ELAPSED,
	  "run time, [DD-]HH:MM:SS" },
	{ "ElapsedRaw", 10, true, f_elapsedraw, SACCT_NEED_ELAPSED,
	  "run time, seconds" },
	{ "Timelimit", 10, true, f_timelimit, SACCT_NEED_TIMELIMIT,
	  "time limit, [DD-]HH:MM:SS" },
	{ "AllocCPUS", 10, true, f_alloccpus, SACCT_NEED_ALLOC_CPUS,
	  "CPUs allocated" },
	{ "AllocGPUS", 9, true, f_allocgpus, SACCT_NEED_ALLOC_GPUS,
	  "GPUs allocated" },
	{ "NNodes", 8, true, f_nnodes, SACCT_NEED_NNODES,
	  "nodes allocated" },
	{ "NodeList", 15, false, f_nodes, SACCT_NEED_NODELIST,
	  "nodes, as a Slurm hostlist" },
	{ "ReqMem", 10, true, f_reqmem, SACCT_NEED_REQ_MEM,
	  "memory requested for the job, K/M/G/T (powers of 1024)" },
	{ "MaxRSS", 10, true, f_maxrss, SACCT_NEED_MEM_PEAK,
	  "memory peak of the largest node, K" },
	{ "TotalCPU", 10, true, f_totalcpu, SACCT_NEED_CPU_S,
	  "CPU time used, [DD-][HH:]MM:SS[.mmm]" },
	{ "CPUTime", 10, true, f_cputime, SACCT_NEED_ELAPSED | SACCT_NEED_ALLOC_CPUS,
	  "Elapsed x AllocCPUS, [DD-]HH:MM:SS" },
	{ "CPUTimeRAW", 10, true, f_cputimeraw, SACCT_NEED_ELAPSED | SACCT_NEED_ALLOC_CPUS,
	  "Elapsed x AllocCPUS, seconds" },
	{ "ConsumedEnergy", 14, true, f_consumed, SACCT_NEED_TOTAL,
	  "energy, J with K/M/G suffixes (powers of 1000)" },
	{ "ConsumedEnergyRaw", 17, true, f_energy_raw, SACCT_NEED_TOTAL,
	  "energy, J" },
	{ "CPUEff", 7, true, f_cpueff, SACCT_NEED_CPU_EFF,
	  "CPU efficiency: TotalCPU / CPUTime, %" },
	{ "MemEff", 7, true, f_memeff, SACCT_NEED_MEM_EFF,
	  "memory efficiency: sum of node peaks / ReqMem, %" },
	{ "GPUUtil", 7, true, f_gpuutil, SACCT_NEED_GPU_UTIL,
	  "mean GPU utilisation, %" },
	{ "GPUEff", 6, true, f_gpueff, SACCT_NEED_GPU_SM | SACCT_NEED_GPU_UTIL,
	  "GPU efficiency: GPUSMAct where known, else GPUUtil, %" },
	{ "GPUMemEff", 9, true, f_gpumemeff,
	  SACCT_NEED_GPU_MEM | SACCT_NEED_GPU_MEM_TOTAL,
	  "GPU memory peak / GPU memory held, %" },
	{ "GPUSMAct", 8, true, f_gpusmact, SACCT_NEED_GPU_SM,
	  "mean SM activity of the GPUs, %" },
	{ "GPUMem", 10, true, f_gpumem, SACCT_NEED_GPU_MEM,
	  "GPU memory peak, summed over the GPUs, K" },
	{ "EnergyCPU", 9, true, f_energy_cpu, SACCT_NEED_PACKAGE,
	  "CPU package energy, J/Wh/kWh/MWh" },
	{ "EnergyDRAM", 10, true, f_energy_dram, SACCT_NEED_DRAM,
	  "DRAM energy, J/Wh/kWh/MWh" },
	{ "EnergyGPU", 9, true, f_energy_gpu, SACCT_NEED_GPU,
	  "GPU energy, J/Wh/kWh/MWh" },
	{ "EnergyOther", 11, true, f_energy_other, SACCT_NEED_NODE,
	  "rest of the node (BMC total minus the above), J/Wh/kWh/MWh" },
	{ "Energy", 8, true, f_energy, SACCT_NEED_TOTAL,
	  "energy, all domains, J/Wh/kWh/MWh by amount" },
	{ "EnergyRaw", 9, true, f_energy_joules, SACCT_NEED_TOTAL,
	  "energy, all domains, J (a number, for scripts)" },
	{ "CO2e", 8, true, f_co2, SACCT_NEED_EMISSIONS,
	  "emissions, g/kg/t CO2e (energy x PUE x carbon intensity)" },
	{ "CO2eRaw", 7, true, f_co2_grams, SACCT_NEED_EMISSIONS,
	  "emissions, g CO2e (a number, for scripts)" },
	{ "CIFactor", 8, true, f_cifactor, SACCT_NEED_G_PER_KWH,
	  "carbon intensity used, g CO2e/kWh" },
	{ "PUE", 5, true, f_pue, SACCT_NEED_PUE,
	  "power usage effectiveness used" },
	{ "Quality", 7, true, f_quality, SACCT_NEED_QUALITY,
	  "data quality: share of the job's time its least covered energy domain was measured, %" },
	{ "ReadBytes", 10, true, f_readbytes, SACCT_NEED_IO | SACCT_NEED_NNODES |
	  SACCT_NEED_NODES_REPORTED,
	  "bytes read from files (any file system), K/M/G (powers of 1024)" },
	{ "WriteBytes", 10, true, f_writebytes, SACCT_NEED_IO | SACCT_NEED_NNODES |
	  SACCT_NEED_NODES_REPORTED,
	  "bytes written to files (any file system), K/M/G" },
	{ "NetIn", 10, true, f_netin, SACCT_NEED_NET | SACCT_NEED_NNODES |
	  SACCT_NEED_NODES_REPORTED,
	  "bytes received by the job's TCP and UDP sockets, K/M/G" },
	{ "NetOut", 10, true, f_netout, SACCT_NEED_NET | SACCT_NEED_NNODES |
	  SACCT_NEED_NODES_REPORTED,
	  "bytes sent by the job's TCP and UDP sockets, K/M/G" },
	{ "IPC", 5, true, f_ipc, SACCT_NEED_PERF,
	  "instructions per cycle (perf hardware events: perf_hardware or --ceems-perf, and a PMU)" },
	{ "CtxSw", 10, true, f_ctxsw, SACCT_NEED_PERF,
	  "context switches of the job's tasks (perf)" },
	{ "PageFaults", 10, true, f_pagefaults, SACCT_NEED_PERF,
	  "page faults of the job's tasks, minor and major (perf)" },
	{ "CPUMigr", 8, true, f_migrations, SACCT_NEED_PERF,
	  "migrations of the job's tasks between CPUs (perf)" },
	{ "CIFallback", 10, true, f_cifallback, SACCT_NEED_CI_FALLBACK,
	  "data quality: share of the energy whose emissions used the yearly carbon intensity, the node's intensity series not covering the time, % (empty: no series)" },
	{ "IdleUnlearned", 13, false, f_idleunlearned, SACCT_NEED_IDLE_UNLEARNED,
	  "data quality: energy domains (package, dram) split before the node's idle power was learned, all by use" },
};

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
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strcasecmp(fields[i].name, name) == 0)
			return &fields[i];
	return NULL;
}

void
sacct_fields_help(FILE *out)
{
	size_t i;

	for (i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		fprintf(out, "%-18s %s\n", fields[i].name, fields[i].help);
}

int
sacct_fields_format_parse(const char *spec, struct sacct_column *cols, size_t max,
		   size_t *n, char *err, size_t err_size)
{
	struct sacct_column tmp[SACCT_MAX_COLUMNS];
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
			if (sacct_fields_find(name) == NULL) {
				snprintf(err, err_size, "unknown field '%s' (ceems-sacct -e lists them)", name);
				return -1;
			}
			if (count >= max) {
				snprintf(err, err_size, "too many fields (at most %zu)", max);
				return -1;
			}
			tmp[count].field = sacct_fields_find(name);
			tmp[count].width = (int)width;
			count++;
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
