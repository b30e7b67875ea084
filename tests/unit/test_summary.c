/* test_summary.c - the end-of-job summary against golden files: one job
 * per case (a burner, a sleeper, memory-heavy, OOM, timeout, cancelled,
 * failed, too short, no energy source, partial coverage, no emission
 * zone, odd strings, several nodes, GPUs...), each rendered full and
 * short and compared with tests/fixtures/summary/CASE.txt.  Beyond the
 * text: the exact set of notes each job gets (so that a note firing where
 * it must not fails), the savings recomputed from the inputs, the layout
 * rules on every output (80 columns, printable ASCII), unmeasured figures
 * never printed as 0, and garbage reports.
 *
 * CEEMS_UPDATE_GOLDEN=1 rewrites the golden files from the current
 * output (review the diff before committing it). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/conf.h"
#include "summary/summary.h"
#include "../tap.h"
#include "fixture.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)

/* The node every case runs on: 64 cores with 100 W of package idle
 * power (1.5625 W per held core), 256 GiB with 20 W of DRAM idle power
 * (0.078125 W per held GiB), France 2024 at PUE 1.3. */
#define PKG_IDLE_W_PER_CORE (100.0 / 64)
#define DRAM_IDLE_W_PER_GIB (20.0 / 256)
#define ACTIVE_W_PER_CORE 8.0
#define FR_G_PER_KWH 44.179085
#define PUE 1.3

struct job {
	struct ceems_job_meta meta;
	struct ceems_agent_job_report report;
	bool have_report;
};

static struct job J;

/* A finished job of ELAPSED seconds, STATE, holding CORES and MEM on
 * node01, with its usage; the energy follows the ledger's model on the
 * node above, with the emission factor of FR 2024. */
static void
job_new(const char *state, double elapsed, unsigned int cores,
	uint64_t mem, double cpu_s, uint64_t peak)
{
	struct ceems_ledger_job_share share;
	struct ceems_emission_factor fr = { "owid-ember-2025", "FR", 2024,
					     FR_G_PER_KWH, PUE };
	struct ceems_agent_job_report *r = &J.report;

	memset(&J, 0, sizeof(J));
	ceems_job_meta_init(&J.meta);
	snprintf(J.meta.cluster, sizeof(J.meta.cluster), "bedrock");
	snprintf(J.meta.node, sizeof(J.meta.node), "node01");
	snprintf(J.meta.nodes, sizeof(J.meta.nodes), "node01");
	snprintf(J.meta.user, sizeof(J.meta.user), "alice");
	snprintf(J.meta.account, sizeof(J.meta.account), "physics");
	snprintf(J.meta.partition, sizeof(J.meta.partition), "batch");
	snprintf(J.meta.name, sizeof(J.meta.name), "run.sh");
	snprintf(J.meta.state, sizeof(J.meta.state), "%s", state);
	J.meta.jobid = 1234;
	J.meta.uid = 1000;
	J.meta.gid = 1000;
	J.meta.exit_code = 0;
	J.meta.submit_time = 1717236000;
	J.meta.start_time = 1717236005;
	J.meta.end_time = J.meta.start_time + (int64_t)elapsed;
	J.meta.time_limit_min = 60;
	J.meta.alloc_cpus = cores;
	J.meta.req_mem_bytes = mem;
	J.meta.nnodes = 1;

	r->jobid = 1234;
	r->uid = 1000;
	r->alloc_cores = cores;
	r->alloc_mem_bytes = mem;
	r->elapsed_s = elapsed;
	r->cpu_s = cpu_s;
	r->usage.present = CEEMS_CGF_CPU_USAGE | CEEMS_CGF_CPU_USER |
			   CEEMS_CGF_CPU_SYSTEM | CEEMS_CGF_MEM_CURRENT |
			   CEEMS_CGF_MEM_PEAK | CEEMS_CGF_MEM_LIMIT |
			   CEEMS_CGF_OOM_KILLS | CEEMS_CGF_MEM_FAILS |
			   CEEMS_CGF_CPUSET;
	r->usage.cpu_usage_ns = (uint64_t)(cpu_s * 1e9);
	r->usage.mem_peak_bytes = peak;
	r->usage.mem_limit_bytes = mem;
	r->usage.ncpus_allocated = cores;

	/* One tick of the whole job: the ledger's own arithmetic. */
	memset(&share, 0, sizeof(share));
	share.static_j[CEEMS_DOMAIN_PACKAGE] = PKG_IDLE_W_PER_CORE * cores * elapsed;
	share.joules[CEEMS_DOMAIN_PACKAGE] = share.static_j[CEEMS_DOMAIN_PACKAGE] +
					     ACTIVE_W_PER_CORE * cpu_s;
	share.static_j[CEEMS_DOMAIN_DRAM] = DRAM_IDLE_W_PER_GIB *
					    ((double)mem / GIB) * elapsed;
	share.joules[CEEMS_DOMAIN_DRAM] = share.static_j[CEEMS_DOMAIN_DRAM] +
					  0.4 * ((double)peak / GIB) * elapsed;
	share.joules[CEEMS_DOMAIN_NODE] = 0.5 * cores * elapsed;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		share.measured[d] = true;
		share.covered[d] = true;
	}
	ceems_job_figures_ledger_init(&r->ledger);
	ceems_ledger_add_tick(&r->ledger, &share, elapsed, &fr);
	J.have_report = true;
}

static const struct ceems_agent_job_report *
report(void)
{
	return J.have_report ? &J.report : NULL;
}

/* ---- The cases ---- */

static void
case_burner(void)
{
	job_new("COMPLETED", 605, 1, 1 * GIB, 604.2, 5 * MIB);
	J.meta.time_limit_min = 30;
}

static void
case_burner_unused(void)
{
	/* One core, mostly idle: a 1-core job cannot give a core back. */
	job_new("COMPLETED", 605, 1, 1 * GIB, 60.5, 5 * MIB);
	J.meta.time_limit_min = 30;
}

static void
case_sleeper(void)
{
	job_new("COMPLETED", 600, 2, 2 * GIB, 0.31, 2 * MIB);
	J.meta.jobid = J.report.jobid = 1235;
}

static void
case_memheavy(void)
{
	job_new("COMPLETED", 1800, 4, 8 * GIB, 6840, 6656 * MIB);
	J.meta.jobid = J.report.jobid = 1236;
}

static void
case_mem_overrequest(void)
{
	job_new("COMPLETED", 3600, 4, 64 * GIB, 13680, 3482 * MIB);
	J.meta.jobid = J.report.jobid = 1237;
	J.meta.time_limit_min = 120;
}

static void
case_mem_sampled(void)
{
	/* v2 before Linux 5.19: the peak is the largest reading seen. */
	job_new("COMPLETED", 3600, 4, 16 * GIB, 13680, 1600 * MIB);
	J.meta.jobid = J.report.jobid = 1238;
	J.meta.time_limit_min = 120;
	J.report.usage.flags |= CEEMS_CGS_PEAK_SAMPLED;
}

static void
case_oom(void)
{
	job_new("OUT_OF_MEMORY", 183, 1, 2 * GIB, 180, 2 * GIB);
	J.meta.jobid = J.report.jobid = 1239;
	J.meta.exit_code = 0;
	J.meta.exit_signal = 9;
	J.report.usage.oom_kills = 1;
	J.report.usage.mem_fail_count = 412;
}

static void
case_timeout(void)
{
	job_new("TIMEOUT", 3600, 2, 4 * GIB, 7020, 1200 * MIB);
	J.meta.jobid = J.report.jobid = 1240;
	J.meta.exit_signal = 15;
}

/* Timed out while busy: its last 90 s as busy as the rest. */
static void
case_timeout_busy(void)
{
	case_timeout();
	J.report.have_tail = true;
	J.report.tail_s = 90;
	J.report.tail_cpu_s = 176;
}

/* Timed out while doing nothing: sleeping in its last 70 s. */
static void
case_timeout_stuck(void)
{
	job_new("TIMEOUT", 7200, 4, 8 * GIB, 9000, 3 * GIB);
	J.meta.jobid = J.report.jobid = 1250;
	J.meta.time_limit_min = 120;
	J.meta.exit_signal = 15;
	J.report.have_tail = true;
	J.report.tail_s = 70;
	J.report.tail_cpu_s = 0.4f;
}

/* Killed in its first second at its limit, which it reached. */
static void
case_oom_early(void)
{
	job_new("OUT_OF_MEMORY", 0, 1, 100 * MIB, 0.07, 100 * MIB);
	J.meta.jobid = J.report.jobid = 1251;
	J.meta.exit_code = 0;
	J.meta.exit_signal = 125;
	J.report.usage.oom_kills = 1;
}

/* Killed well under the job's limit: a step's own --mem. */
static void
case_oom_step(void)
{
	job_new("OUT_OF_MEMORY", 95, 2, 8 * GIB, 150, 1 * GIB);
	J.meta.jobid = J.report.jobid = 1252;
	J.meta.exit_signal = 9;
	J.report.usage.oom_kills = 3;
}

static void
case_node_fail(void)
{
	job_new("NODE_FAIL", 1500, 4, 8 * GIB, 5800, 2 * GIB);
	J.meta.jobid = J.report.jobid = 1253;
	J.meta.exit_code = 1;
}

static void
case_preempted(void)
{
	job_new("PREEMPTED", 40, 4, 8 * GIB, 150, 2 * GIB);
	J.meta.jobid = J.report.jobid = 1254;
	J.meta.exit_signal = 15;
}

static void
case_requeued(void)
{
	job_new("REQUEUED", 200, 2, 4 * GIB, 390, 1 * GIB);
	J.meta.jobid = J.report.jobid = 1255;
	J.meta.exit_signal = 15;
}

static void
case_cancelled(void)
{
	job_new("CANCELLED", 310, 8, 16 * GIB, 155, 900 * MIB);
	J.meta.jobid = J.report.jobid = 1241;
	J.meta.time_limit_min = 1440;
	J.meta.exit_signal = 15;
}

static void
case_failed(void)
{
	job_new("FAILED", 125, 4, 4 * GIB, 110, 300 * MIB);
	J.meta.jobid = J.report.jobid = 1242;
	J.meta.exit_code = 3;
}

static void
case_too_short(void)
{
	job_new("COMPLETED", 21, 8, 16 * GIB, 19, 40 * MIB);
	J.meta.jobid = J.report.jobid = 1243;
	J.meta.time_limit_min = 1440;
}

static void
case_no_energy(void)
{
	job_new("COMPLETED", 600, 2, 2 * GIB, 1140, 900 * MIB);
	J.meta.jobid = J.report.jobid = 1244;
	ceems_job_figures_ledger_init(&J.report.ledger);
	/* Ticks with no domain measured, under a factor: what the agent
	 * records on a node without any energy source. */
	J.report.ledger.lifetime_s = 600;
	J.report.ledger.have_emissions = true;
	J.report.ledger.emissions_covered_s = 600;
	snprintf(J.report.ledger.factor.zone, sizeof(J.report.ledger.factor.zone), "FR");
	J.report.ledger.factor.year = 2024;
	J.report.ledger.factor.g_per_kwh = FR_G_PER_KWH;
	J.report.ledger.factor.pue = PUE;
}

static void
case_partial(void)
{
	/* The agent was down 48 s of the job's 600 s. */
	job_new("COMPLETED", 552, 4, 4 * GIB, 2100, 2 * GIB);
	J.meta.jobid = J.report.jobid = 1245;
	J.meta.end_time = J.meta.start_time + 600;
	J.report.elapsed_s = 600;
	J.report.gap_s = 48;
	ceems_ledger_add_gap(&J.report.ledger, 48);
}

static void
case_no_zone(void)
{
	job_new("COMPLETED", 900, 2, 2 * GIB, 1790, 1 * GIB);
	J.meta.jobid = J.report.jobid = 1246;
	J.report.ledger.have_emissions = false;
	J.report.ledger.emissions_g = 0;
	J.report.ledger.emissions_covered_s = 0;
	memset(&J.report.ledger.factor, 0, sizeof(J.report.ledger.factor));
}

static void
case_odd_strings(void)
{
	job_new("COMPLETED", 605, 1, 1 * GIB, 600, 200 * MIB);
	J.meta.jobid = J.report.jobid = 1247;
	J.meta.time_limit_min = 30;
	snprintf(J.meta.name, sizeof(J.meta.name),
		 "my \"first\" job's\tname \x1b[31mred\x1b[0m\n");
	/* An account with a control byte and a node list longer than any
	 * line: neither may break the layout. */
	snprintf(J.meta.account, sizeof(J.meta.account), "ph\x07ys\xc3\xa9");
	snprintf(J.meta.user, sizeof(J.meta.user),
		 "a_user_with_a_very_long_name_from_ldap_0123456789");
	snprintf(J.meta.nodes, sizeof(J.meta.nodes),
		 "cn[0001-0003,0005,0007-0010,0012,0014-0020,0022,0025-0031,0033,0040-0048]");
	J.meta.array_job_id = 1200;
	J.meta.array_task_id = 47;
}

static void
case_multinode(void)
{
	job_new("COMPLETED", 1200, 16, 32 * GIB, 4800, 6 * GIB);
	J.meta.jobid = J.report.jobid = 1248;
	J.meta.nnodes = 2;
	J.meta.alloc_cpus = 32;
	J.meta.req_mem_bytes = 64 * GIB;
	snprintf(J.meta.nodes, sizeof(J.meta.nodes), "node[01-02]");
	J.meta.time_limit_min = 120;
}

static void
case_no_report(void)
{
	job_new("COMPLETED", 700, 4, 8 * GIB, 0, 0);
	J.meta.jobid = 1249;
	J.have_report = false;
}

static void
case_overuse(void)
{
	/* Cores not confined: 8 held, 10.2 busy. */
	job_new("COMPLETED", 1500, 8, 16 * GIB, 15300, 9 * GIB);
	J.meta.jobid = J.report.jobid = 1250;
	J.meta.time_limit_min = 60;
}

static void
case_time_limit(void)
{
	job_new("COMPLETED", 1205, 8, 8 * GIB, 9400, 5 * GIB);
	J.meta.jobid = J.report.jobid = 1251;
	J.meta.time_limit_min = 1440;
}

/* Device I of the report: a whole GPU at BUS with utilisation UTIL and
 * ENERGY (each < 0: not measured). */
static struct ceems_agent_gpu_report *
gpu_add(const char *bus, double util, double energy)
{
	struct ceems_agent_gpu_report *g = &J.report.gpus[J.report.ngpus++];

	memset(g, 0, sizeof(*g));
	snprintf(g->uuid, sizeof(g->uuid), "GPU-%08x-1111-2222-3333-444455556666",
		 J.report.ngpus);
	snprintf(g->bus_id, sizeof(g->bus_id), "%s", bus);
	g->instance = -1;
	g->share = 1;
	g->have_util = util >= 0;
	g->util_pct = util >= 0 ? util : 0;
	g->have_energy = energy >= 0;
	g->energy_j = energy >= 0 ? energy : 0;
	g->mem_total_bytes = 80 * GIB;
	return g;
}

static void
case_gpu_idle(void)
{
	struct ceems_agent_gpu_report *g;

	job_new("COMPLETED", 3600, 8, 32 * GIB, 27000, 20 * GIB);
	J.meta.jobid = J.report.jobid = 1252;
	J.meta.time_limit_min = 120;
	J.meta.alloc_gpus = 2;
	J.report.ledger.joules[CEEMS_DOMAIN_GPU] = 1.26e6;
	g = gpu_add("0000:3b:00.0", 71.5, 1.08e6);
	g->have_sm_active = true;
	g->sm_active_pct = 40.5;
	g->have_mem_peak = true;
	g->mem_peak_bytes = 30 * GIB;
	g = gpu_add("0000:af:00.0", 0.0, 1.8e5);
	g->have_mem_peak = true;
	g->mem_peak_bytes = 0;
}

/* The same idle GPU over two minutes: shorter than GPU start-up. */
static void
case_gpu_idle_short(void)
{
	job_new("COMPLETED", 120, 8, 32 * GIB, 900, 20 * GIB);
	J.meta.jobid = J.report.jobid = 1254;
	J.meta.alloc_gpus = 1;
	J.report.ledger.joules[CEEMS_DOMAIN_GPU] = 6000;
	gpu_add("0000:af:00.0", 0.0, 6000);
}

static void
case_gpu_underuse(void)
{
	struct ceems_agent_gpu_report *g;

	job_new("COMPLETED", 3600, 8, 32 * GIB, 27000, 20 * GIB);
	J.meta.jobid = J.report.jobid = 1253;
	J.meta.time_limit_min = 120;
	J.meta.alloc_gpus = 1;
	J.report.ledger.joules[CEEMS_DOMAIN_GPU] = 4.1e5;
	g = gpu_add("0000:3b:00.0", 12.4, 4.1e5);
	g->have_mem_peak = true;
	g->mem_peak_bytes = 6 * GIB;
}

/* A MIG instance (a seventh of an A100) beside a whole device: the
 * means weigh the slice by its share; the instance's energy is power
 * integrated (no energy counter), which the GPU line says. */
static void
case_gpu_mig(void)
{
	struct ceems_agent_gpu_report *g;

	job_new("COMPLETED", 3600, 8, 32 * GIB, 27000, 20 * GIB);
	J.meta.jobid = J.report.jobid = 1256;
	J.meta.time_limit_min = 120;
	J.meta.alloc_gpus = 2;
	J.report.ledger.joules[CEEMS_DOMAIN_GPU] = 3.0e5;
	g = gpu_add("0000:3b:00.0", 12, 2.7e5);
	g->have_sm_active = true;
	g->sm_active_pct = 10;
	g->have_mem_peak = true;
	g->mem_peak_bytes = 8 * GIB;
	g = gpu_add("0000:af:00.0", 90, 3.0e4);
	snprintf(g->uuid, sizeof(g->uuid), "MIG-1f2e3d4c-0000-4000-8000-123456789abc");
	g->instance = 3;
	g->share = 1.0 / 7;
	g->power_integrated = true;
	g->have_sm_active = true;
	g->sm_active_pct = 80;
	g->have_mem_peak = true;
	g->mem_peak_bytes = 4 * GIB;
	g->mem_total_bytes = 10 * GIB;
}

static void
case_gpu_unmeasured(void)
{
	/* GPUs held, no GPU figures yet (this version): said, not 0. */
	job_new("COMPLETED", 1800, 4, 8 * GIB, 7000, 5 * GIB);
	J.meta.jobid = J.report.jobid = 1254;
	J.meta.alloc_gpus = 1;
	J.report.ledger.measured[CEEMS_DOMAIN_GPU] = false;
}

static void
case_no_dram(void)
{
	/* AMD without DRAM RAPL and no node source: only the package. */
	job_new("COMPLETED", 3600, 4, 64 * GIB, 13680, 3482 * MIB);
	J.meta.jobid = J.report.jobid = 1255;
	J.meta.time_limit_min = 120;
	J.report.ledger.measured[CEEMS_DOMAIN_DRAM] = false;
	J.report.ledger.measured[CEEMS_DOMAIN_NODE] = false;
	J.report.ledger.joules[CEEMS_DOMAIN_DRAM] = 0;
	J.report.ledger.joules[CEEMS_DOMAIN_NODE] = 0;
	J.report.ledger.covered_s[CEEMS_DOMAIN_DRAM] = 0;
	J.report.ledger.covered_s[CEEMS_DOMAIN_NODE] = 0;
}

static void
case_idle_unlearned(void)
{
	/* A fresh agent had no idle power yet: the energy says so. */
	case_burner();
	J.meta.jobid = J.report.jobid = 1256;
	J.report.ledger.idle_unlearned[CEEMS_DOMAIN_PACKAGE] = true;
}

static void
case_energy_err(void)
{
	/* A learned idle power and a BMC's lag: the energy is known to
	 * within 306 J of its 6120, shown rounded up. */
	case_burner();
	J.meta.jobid = J.report.jobid = 1258;
	J.report.err.known = true;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		J.report.err.have[d] = J.report.ledger.measured[d];
	J.report.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_IDLE] = 100;
	J.report.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_SOURCE] = 0.01;
	J.report.err.part_j[CEEMS_DOMAIN_NODE][CEEMS_ERR_LAG] = 205.99;
}

static void
case_intensity_series(void)
{
	/* An hourly series whose intensity changed during the job, and a
	 * quarter of its energy at the yearly figure (a gap in the series). */
	case_burner();
	J.meta.jobid = J.report.jobid = 1257;
	snprintf(J.report.ledger.factor.source,
		 sizeof(J.report.ledger.factor.source), "series:test-grid");
	J.report.ledger.factor.g_per_kwh = 61.5;
	J.report.ledger.factor_changed = true;
	J.report.ledger.factor_timed = true;
	J.report.ledger.factor_fallback = 0.25f;
}

struct golden_case {
	const char *name;
	void (*setup)(void);
	const char *notes;	/* the note ids, in order, comma-separated */
};

static const struct golden_case cases[] = {
	{ "burner", case_burner, "" },
	{ "burner-unused", case_burner_unused, "" },
	{ "sleeper", case_sleeper, "cpu-underuse,mem-underuse" },
	{ "memheavy", case_memheavy, "" },
	{ "mem-overrequest", case_mem_overrequest, "mem-underuse" },
	{ "mem-sampled", case_mem_sampled, "mem-underuse" },
	{ "oom", case_oom, "oom" },
	{ "timeout", case_timeout, "timeout" },
	{ "timeout-busy", case_timeout_busy, "timeout" },
	{ "timeout-stuck", case_timeout_stuck, "timeout,cpu-underuse" },
	{ "oom-early", case_oom_early, "oom" },
	{ "oom-step", case_oom_step, "oom" },
	{ "node-fail", case_node_fail, "node-fail" },
	{ "preempted", case_preempted, "preempted" },
	{ "requeued", case_requeued, "requeued" },
	{ "cancelled", case_cancelled, "cancelled,cpu-underuse,mem-underuse" },
	{ "failed", case_failed, "cpu-underuse,mem-underuse" },
	{ "too-short", case_too_short, "too-short" },
	{ "no-energy", case_no_energy, "" },
	{ "partial", case_partial, "" },
	{ "no-zone", case_no_zone, "" },
	{ "odd-strings", case_odd_strings, "" },
	{ "multinode", case_multinode, "cpu-underuse,mem-underuse,time-limit" },
	{ "no-report", case_no_report, "" },
	{ "overuse", case_overuse, "cpu-overuse" },
	{ "time-limit", case_time_limit, "time-limit" },
	{ "gpu-idle", case_gpu_idle, "gpu-idle" },
	{ "gpu-underuse", case_gpu_underuse, "gpu-underuse" },
	{ "gpu-unmeasured", case_gpu_unmeasured, "" },
	{ "gpu-mig", case_gpu_mig, "gpu-underuse" },
	{ "no-dram", case_no_dram, "mem-underuse" },
	{ "idle-unlearned", case_idle_unlearned, "" },
	{ "intensity-series", case_intensity_series, "" },
	{ "energy-err", case_energy_err, "" },
};

/* ---- Checks on any output ---- */

/* Every line ends in a newline, is at most 80 columns, printable ASCII
 * without trailing blanks.  Returns a description of the first fault. */
static const char *
layout_fault(const char *text)
{
	static char why[128];
	size_t col = 0, line = 1;

	if (text[0] == '\0')
		return NULL;
	for (const char *p = text; *p; p++) {
		unsigned char c = (unsigned char)*p;

		if (c == '\n') {
			if (col > 0 && p[-1] == ' ') {
				snprintf(why, sizeof(why), "line %zu ends in a blank", line);
				return why;
			}
			col = 0;
			line++;
			continue;
		}
		if (c < 0x20 || c >= 0x7f) {
			snprintf(why, sizeof(why), "line %zu: byte 0x%02x", line, c);
			return why;
		}
		if (++col > 80) {
			snprintf(why, sizeof(why), "line %zu longer than 80", line);
			return why;
		}
	}
	if (text[strlen(text) - 1] != '\n')
		return "no final newline";
	return NULL;
}

static void
render(enum ceems_summary_style style, char *buf, size_t size)
{
	int n = ceems_summary_format(&J.meta, report(), style, buf, size);

	if (n < 0)
		snprintf(buf, size, "(error %d)\n", n);
}

static void
note_ids(char *buf, size_t size)
{
	struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES];
	int n = ceems_summary_notes(&J.meta, report(), notes,
				    CEEMS_SUMMARY_MAX_NOTES);

	buf[0] = '\0';
	for (int i = 0; i < n; i++)
		snprintf(buf + strlen(buf), size - strlen(buf), "%s%s",
			 i ? "," : "", notes[i].id);
}

static bool
update_mode(void)
{
	const char *u = getenv("CEEMS_UPDATE_GOLDEN");

	return u != NULL && strcmp(u, "1") == 0;
}

static void
test_golden(void)
{
	static char full[CEEMS_SUMMARY_SIZE], brief[CEEMS_SUMMARY_SIZE];
	static char want[2 * CEEMS_SUMMARY_SIZE], got[2 * CEEMS_SUMMARY_SIZE];
	char name[128], ids[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct golden_case *c = &cases[i];
		const char *fault;

		c->setup();
		render(CEEMS_SUMMARY_FULL, full, sizeof(full));
		render(CEEMS_SUMMARY_SHORT, brief, sizeof(brief));
		snprintf(got, sizeof(got), "%s\n%s", full, brief);
		snprintf(name, sizeof(name), "summary/%s.txt", c->name);

		if (update_mode()) {
			FILE *fp = fopen(fixture_path(name), "w");

			ok(fp != NULL && fputs(got, fp) >= 0 && fclose(fp) == 0,
			   "%s: golden file rewritten", c->name);
		} else {
			if (ceems_fileio_read_text_file(fixture_path(name), want, sizeof(want)) < 0)
				snprintf(want, sizeof(want), "(missing %s)", fixture_path(name));
			if (!is_str(got, want, c->name))
				printf("#   (CEEMS_UPDATE_GOLDEN=1 rewrites it)\n");
		}
		fault = layout_fault(full);
		ok(fault == NULL, "%s: full layout%s%s", c->name,
		   fault ? ": " : "", fault ? fault : "");
		fault = layout_fault(brief);
		ok(fault == NULL && strchr(brief, '\n') == brief + strlen(brief) - 1,
		   "%s: short is one line%s%s", c->name, fault ? ": " : "",
		   fault ? fault : "");
		note_ids(ids, sizeof(ids));
		snprintf(name, sizeof(name), "%s: notes fire exactly as the rules say",
			 c->name);
		is_str(ids, c->notes, name);
	}
}

/* ---- Targeted checks ---- */

static struct ceems_summary_note *
find_note(struct ceems_summary_note *notes, int n, const char *id)
{
	for (int i = 0; i < n; i++)
		if (strcmp(notes[i].id, id) == 0)
			return &notes[i];
	return NULL;
}

static void
test_savings(void)
{
	struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES], *n;
	double grams_per_j = FR_G_PER_KWH * PUE / 3.6e6;
	int count;

	/* Sleeper: 2 cores held, asked for 1: half its package static. */
	case_sleeper();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "cpu-underuse");
	ok(n != NULL && n->have_saving_j && n->have_saving_g, "sleeper: saving known");
	if (n != NULL) {
		is_near(n->saving_j, PKG_IDLE_W_PER_CORE * 2 * 600 / 2, 1e-9,
			"sleeper: saving = static package energy of 1 of 2 cores");
		is_near(n->saving_g, n->saving_j * grams_per_j, 1e-12,
			"sleeper: grams at the job's factor");
		ok(strstr(n->text, "Asking for 1 (--ntasks=1") != NULL,
		   "sleeper: asks for 1 core");
	}

	/* 64 GiB asked, 3.4 GiB peak: --mem=5G, saving 59/64 of DRAM static. */
	case_mem_overrequest();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "mem-underuse");
	ok(n != NULL && strstr(n->text, "--mem=5G") != NULL,
	   "mem-overrequest: --mem = peak x 1.25 rounded up to a GiB");
	if (n != NULL)
		is_near(n->saving_j, DRAM_IDLE_W_PER_GIB * 64 * 3600 * 59 / 64, 1e-6,
			"mem-overrequest: saving = DRAM static of the memory given back");

	/* Sampled peak: a 50% margin. 1600 MiB x 1.5 = 2400 MiB -> 3G. */
	case_mem_sampled();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "mem-underuse");
	ok(n != NULL && strstr(n->text, "--mem=3G") != NULL &&
	   strstr(n->text, "50% margin") != NULL, "mem-sampled: wider margin");

	/* No DRAM domain: no energy claim, memory freed instead. */
	case_no_dram();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "mem-underuse");
	ok(n != NULL && !n->have_saving_j && !n->have_saving_g &&
	   strstr(n->text, "left 59.0 GiB free") != NULL,
	   "no-dram: no saving claimed without a DRAM measurement");

	/* No zone: the energy saving, no grams. */
	case_no_zone();
	J.report.cpu_s = 200;
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "cpu-underuse");
	ok(n != NULL && n->have_saving_j && !n->have_saving_g &&
	   strstr(n->text, "CO2e") == NULL, "no-zone: energy saving without grams");

	/* GPU idle: the idle device's energy. */
	case_gpu_idle();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "gpu-idle");
	ok(n != NULL && n->have_saving_j && fabs(n->saving_j - 1.8e5) < 1e-6 &&
	   strstr(n->text, "--gpus=1") != NULL &&
	   strstr(n->text, "(GPU af:00.0)") != NULL,
	   "gpu-idle: asks for 1, names the idle device, saves its energy");
	ok(n != NULL && n->have_saving_g &&
	   fabs(n->saving_g - 1.8e5 * grams_per_j) < 1e-9,
	   "gpu-idle: its grams at the job's own factor");

	/* A short job is not judged, unless the site says GPUs start
	 * faster (summary_gpu_min_time). */
	case_gpu_idle_short();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	ok(find_note(notes, count, "gpu-idle") == NULL,
	   "gpu-idle: none for 2 minutes by default (5 min of start-up)");
	ceems_summary_notes_set_gpu_min_time(60ULL * 1000000000ULL);
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	ok(find_note(notes, count, "gpu-idle") != NULL,
	   "gpu-idle: fires for 2 minutes with summary_gpu_min_time = 1min");
	ceems_summary_notes_set_gpu_min_time(CEEMS_SUMMARY_GPU_MIN_S * 1000000000ULL);

	/* GPU under-used: what the devices drew is stated, no saving
	 * claimed; the mean weighs a MIG slice by its share. */
	case_gpu_mig();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "gpu-underuse");
	{
		char want[96], e[32];
		double busy = (12 * 1 + 90 * (1.0 / 7)) / (1 + 1.0 / 7);

		snprintf(want, sizeof(want), "busy %.0f%% of the time", busy);
		ok(n != NULL && strstr(n->text, want) != NULL,
		   "gpu-underuse: the mean weighted by share (%s)", want);
		snprintf(e, sizeof(e), "%.2f g CO2e", 3.0e5 * grams_per_j);
		ok(n != NULL && !n->have_saving_j && strstr(n->text, "drew about 83.3 Wh") != NULL &&
		   strstr(n->text, e) != NULL,
		   "gpu-underuse: states what the GPUs drew (%s), claims no saving", e);
	}

	/* Time limit: 1205 s x 1.5 = 1807.5 s, to 5 min: 00:35:00. */
	case_time_limit();
	count = ceems_summary_notes(&J.meta, report(), notes, 8);
	n = find_note(notes, count, "time-limit");
	ok(n != NULL && strstr(n->text, "--time=00:35:00") != NULL &&
	   !n->have_saving_j, "time-limit: margin, rounded, no energy claim");
}

/* Rules that must not fire, each on the job that tempts it most. */
static void
test_must_not_fire(void)
{
	char ids[256];

	/* 2 cores at 50%, 1.0 used: a serial program, 1 core does. */
	job_new("COMPLETED", 600, 2, 1 * GIB, 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "cpu-underuse", "2 cores, 1.0 used: serial, asks for 1");

	/* 4 cores, 1.9 used (48%): 1.9 x 1.1 rounds up to 3 < 4. */
	job_new("COMPLETED", 600, 4, 1 * GIB, 1.9 * 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "cpu-underuse", "4 cores, 1.9 used: asks for 3");

	/* 3 cores, 1.5 used (50%): 1.65 rounds up to 2 < 3. */
	job_new("COMPLETED", 600, 3, 1 * GIB, 1.5 * 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "cpu-underuse", "3 cores, 1.5 used: asks for 2");

	/* 2 cores, 1.1 used (55%): above the threshold. */
	job_new("COMPLETED", 600, 2, 1 * GIB, 1.1 * 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "2 cores, 1.1 used: no cpu note");

	/* 4 cores, 1.95 used (49%): 2.145 rounds up to 3 < 4, a note; at
	 * 2 cores of 4 with 2.0 used, 2.2 -> 3 still < 4. */
	job_new("COMPLETED", 600, 4, 1 * GIB, 2.0 * 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "cpu-underuse", "4 cores, 2.0 used: asks for 3");

	/* 8 cores at 51%: above the threshold. */
	job_new("COMPLETED", 600, 8, 1 * GIB, 0.51 * 8 * 600, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "8 cores at 51%: no cpu note");

	/* CPU not measured: nothing said about CPU. */
	job_new("COMPLETED", 600, 8, 1 * GIB, 0, 5 * MIB);
	J.report.usage.present &= ~(uint32_t)CEEMS_CGF_CPU_USAGE;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "CPU not measured: no cpu note (not 0% either)");

	/* A 1.5 GiB request mostly unused: below the 2 GiB floor. */
	job_new("COMPLETED", 600, 1, 1536 * MIB, 600, 10 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "1.5 GiB request: no memory note");

	/* Peak not measured. */
	job_new("COMPLETED", 600, 1, 64 * GIB, 600, 0);
	J.report.usage.present &= ~(uint32_t)CEEMS_CGF_MEM_PEAK;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "peak not measured: no memory note");

	/* OOM kill in a job that completed, with a low (sampled) peak. */
	job_new("COMPLETED", 600, 1, 64 * GIB, 600, 1 * GIB);
	J.report.usage.oom_kills = 2;
	J.report.usage.flags |= CEEMS_CGS_PEAK_SAMPLED;
	note_ids(ids, sizeof(ids));
	is_str(ids, "oom", "OOM kill: oom note and no memory under-use note");

	/* Cancelled early with a long limit: no --time advice. */
	job_new("CANCELLED", 600, 1, 1 * GIB, 600, 5 * MIB);
	J.meta.time_limit_min = 1440;
	note_ids(ids, sizeof(ids));
	is_str(ids, "cancelled", "cancelled: no time-limit note");

	/* FAILED with a long limit: no --time advice either. */
	snprintf(J.meta.state, sizeof(J.meta.state), "FAILED");
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "failed: no time-limit note");

	/* A limit 3x the run but less than an hour above it. */
	job_new("COMPLETED", 1200, 1, 1 * GIB, 1200, 5 * MIB);
	J.meta.time_limit_min = 60;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "limit 3x but only 40 min unused: no time note");

	/* Unlimited or unknown limit. */
	J.meta.time_limit_min = CEEMS_UNKNOWN_U32;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "no time limit: no time note");
	J.meta.time_limit_min = CEEMS_UNKNOWN_U32 - 1;	/* Slurm's NO_VAL */
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "NO_VAL time limit: no time note");

	/* Short and OOM: the OOM explains it, no too-short note. */
	job_new("OUT_OF_MEMORY", 12, 1, 2 * GIB, 10, 2 * GIB);
	J.report.usage.oom_kills = 1;
	note_ids(ids, sizeof(ids));
	is_str(ids, "oom", "short OOM: oom only");

	/* Too short: no efficiency note, even at 1% of 8 cores. */
	job_new("COMPLETED", 59, 8, 64 * GIB, 4, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "too-short", "59 s: too-short only");
	job_new("COMPLETED", 60, 8, 64 * GIB, 4, 5 * MIB);
	note_ids(ids, sizeof(ids));
	is_str(ids, "cpu-underuse,mem-underuse", "60 s: judged");

	/* Agent down for most of the job: efficiency not judged on 30 s. */
	job_new("COMPLETED", 600, 8, 64 * GIB, 4, 5 * MIB);
	J.report.gap_s = 570;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "30 s observed of 600: no efficiency notes");

	/* GPU held and idle, but only 4 minutes: GPU start-up. */
	case_gpu_idle();
	J.meta.time_limit_min = 10;
	J.meta.end_time = J.meta.start_time + 240;
	J.report.elapsed_s = 240;
	J.report.cpu_s = 240 * 7.5;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "GPU idle for 4 min: not judged yet");

	/* A GPU without busy figures is not idle. */
	case_gpu_idle();
	J.report.gpus[1].have_util = false;
	note_ids(ids, sizeof(ids));
	is_str(ids, "", "GPU without figures: no gpu note");

	/* Qualifier: a failed run says so, a timed-out run does not. */
	{
		struct ceems_summary_note notes[CEEMS_SUMMARY_MAX_NOTES];
		int n;

		case_failed();
		n = ceems_summary_notes(&J.meta, report(), notes, 8);
		ok(n == 2 && strstr(notes[0].text, "ended in state FAILED") != NULL &&
		   strstr(notes[1].text, "ended in state FAILED") != NULL,
		   "failed: each note says the run did not complete");
		case_timeout();
		J.report.cpu_s = 300;
		n = ceems_summary_notes(&J.meta, report(), notes, 8);
		ok(n == 2 && strcmp(notes[1].id, "cpu-underuse") == 0 &&
		   strstr(notes[1].text, "ended in state") == NULL,
		   "timeout: a full run, no qualifier");
	}
}

/* Figures that were not measured must never read as 0. */
static void
test_unknown_not_zero(void)
{
	static char buf[CEEMS_SUMMARY_SIZE];

	/* A job shorter than a tick: its CPU time is measured all the same. */
	job_new("COMPLETED", 0.4, 1, 1 * GIB, 0.2, 5 * MIB);
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "CPU      1 core held, 0.5 used") != NULL &&
	   strstr(buf, "use not measured") == NULL,
	   "a sub-second job's CPU use is shown, not 'not measured'");
	render(CEEMS_SUMMARY_SHORT, buf, sizeof(buf));
	ok(strstr(buf, "CPU not measured") == NULL,
	   "a sub-second job, short: CPU not said to be unmeasured");

	/* A domain in the energy without a bound (a gap before the node
	 * showed its power): the whole figure's bound is unknown. */
	case_energy_err();
	J.report.err.have[CEEMS_DOMAIN_DRAM] = false;
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "Energy   1.70 Wh  (") != NULL,
	   "a domain without a bound: no +/- at all, not a smaller one");

	case_no_energy();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "Energy   not measured (this node has no energy source)") != NULL,
	   "no energy: Energy not measured");
	ok(strstr(buf, "Carbon   not computed (no energy measured)") != NULL,
	   "no energy: Carbon not computed, although the ledger had a factor");
	ok(strstr(buf, "kWh") == NULL && strstr(buf, " J") == NULL &&
	   strstr(buf, "g CO2e") == NULL, "no energy: no energy or grams figure at all");
	render(CEEMS_SUMMARY_SHORT, buf, sizeof(buf));
	ok(strstr(buf, "energy not measured") != NULL && strstr(buf, "CO2e") == NULL,
	   "no energy, short: said, no grams");

	case_no_report();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "efficiency") == NULL && strstr(buf, "0.0 used") == NULL &&
	   strstr(buf, "peak not measured") != NULL &&
	   strstr(buf, "no report from the node agent") != NULL,
	   "no report: CPU and memory use not measured, no efficiency");

	case_no_dram();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "DRAM, other not measured") != NULL &&
	   strstr(buf, "DRAM 0") == NULL && strstr(buf, "other 0") == NULL,
	   "no DRAM/node domain: named as not measured, not 0");

	case_gpu_unmeasured();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "GPU      1 held, use not measured") != NULL &&
	   strstr(buf, "GPU, other") == NULL && strstr(buf, "GPU 0") == NULL &&
	   strstr(buf, "; GPU not measured") != NULL,
	   "GPU held without figures: not measured, not 0");

	/* GPUs in the report, none of their figures measured. */
	case_gpu_idle();
	for (uint32_t i = 0; i < J.report.ngpus; i++) {
		J.report.gpus[i].have_util = J.report.gpus[i].have_energy = false;
		J.report.gpus[i].have_mem_peak = J.report.gpus[i].have_sm_active = false;
	}
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "GPU      2 held, use not measured\n") != NULL &&
	   strstr(buf, "SM active") == NULL && strstr(buf, "memory 0") == NULL &&
	   strstr(buf, "busy") == NULL,
	   "GPUs without figures: held, use not measured, no 0 anywhere");

	case_no_zone();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "Carbon   not computed (no emission zone") != NULL &&
	   strstr(buf, "g CO2e") == NULL, "no zone: no grams anywhere");

	case_partial();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "energy covers 92% of the") != NULL,
	   "partial: coverage 552/600 said as 92%%");
	ok(strstr(buf, "efficiency  95%") != NULL,
	   "partial: efficiency over the 552 s observed (2100 / 552 / 4)");

	case_odd_strings();
	render(CEEMS_SUMMARY_FULL, buf, sizeof(buf));
	ok(strstr(buf, "first") == NULL && strchr(buf, 0x1b) == NULL,
	   "odd strings: the job name is not printed, no escape reaches the text");
	ok(strstr(buf, "ph?ys??") != NULL, "odd strings: control and non-ASCII bytes shown as ?");
	ok(strstr(buf, "job 1200_47") != NULL, "array job shown as ARRAY_TASK");
}

static void
test_api(void)
{
	static char buf[CEEMS_SUMMARY_SIZE];
	char small[64];
	enum ceems_summary_style st = CEEMS_SUMMARY_FULL;
	struct ceems_summary_note notes[2];
	int n;

	case_sleeper();
	is_int(ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_NONE,
				    buf, sizeof(buf)), 0, "none: empty");
	is_str(buf, "", "none: empty string");
	n = ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_FULL,
				 buf, sizeof(buf));
	is_int(n, (long long)strlen(buf), "full: returns its length");
	is_int(ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_FULL,
				    small, sizeof(small)), -ENOSPC, "small buffer: -ENOSPC");
	is_str(small, "", "small buffer: left empty");
	is_int(ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_FULL,
				    buf, (size_t)n), -ENOSPC, "one byte short: -ENOSPC");
	is_int(ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_FULL,
				    buf, (size_t)n + 1), n, "exact size: fits");
	is_int(ceems_summary_format(NULL, report(), CEEMS_SUMMARY_FULL,
				    buf, sizeof(buf)), -EINVAL, "NULL meta: -EINVAL");
	is_int(ceems_summary_format(&J.meta, report(), (enum ceems_summary_style)7,
				    buf, sizeof(buf)), -EINVAL, "bad style: -EINVAL");
	is_int(ceems_summary_notes(&J.meta, report(), NULL, 0), 0,
	       "notes: max 0 fills nothing");
	case_multinode();
	is_int(ceems_summary_notes(&J.meta, report(), notes, 1), 1,
	       "notes: at most MAX filled");
	is_str(notes[0].id, "cpu-underuse", "notes: most important first");

	is_int(ceems_summary_style_parse("Short", &st), 0, "parse short");
	is_int(st, CEEMS_SUMMARY_SHORT, "parse short: value");
	is_int(ceems_summary_style_parse("full", &st), 0, "parse full");
	is_int(ceems_summary_style_parse("none", &st), 0, "parse none");
	is_int(st, CEEMS_SUMMARY_NONE, "parse none: value");
	is_int(ceems_summary_style_parse("fullish", &st), -EINVAL, "parse garbage");
	is_int(ceems_summary_style_parse("", &st), -EINVAL, "parse empty");
}

/* Garbage reports (the report crosses a socket) and extreme values: no
 * crash, no line over 80 columns, no byte outside printable ASCII. */
static uint64_t rng = 88172645463325252ULL;

static uint64_t
xorshift(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

static double
wild_double(void)
{
	static const double specials[] = { 0, -1, 1e300, -1e300, 1e14, 1e16,
					   0.5, 59.99, 60, 3600, 86400 * 400.0 };
	uint64_t r = xorshift();

	switch (r % 4) {
	case 0: {
		double d;
		uint64_t bits = xorshift();

		memcpy(&d, &bits, sizeof(d));	/* NaN, inf, denormals... */
		return d;
	}
	case 1:
		return specials[(r >> 8) % (sizeof(specials) / sizeof(specials[0]))];
	default:
		return (double)(xorshift() % 100000000) / 100.0;
	}
}

static void
test_garbage(void)
{
	static char full[CEEMS_SUMMARY_SIZE], brief[CEEMS_SUMMARY_SIZE];
	int bad_layout = 0, errors = 0, max_len = 0;

	for (int iter = 0; iter < 3000; iter++) {
		unsigned char *m = (unsigned char *)&J.meta;
		unsigned char *r = (unsigned char *)&J.report;
		int n1, n2;

		/* Random bytes everywhere, then some plausible fields. */
		for (size_t i = 0; i < sizeof(J.meta); i++)
			m[i] = (unsigned char)xorshift();
		for (size_t i = 0; i < offsetof(struct ceems_agent_job_report, steps); i++)
			r[i] = (unsigned char)xorshift();
		J.report.nsteps = 0;
		if (iter % 2) {
			J.report.elapsed_s = wild_double();
			J.report.cpu_s = wild_double();
			J.report.gap_s = wild_double();
			for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
				J.report.ledger.joules[d] = wild_double();
				J.report.ledger.static_j[d] = wild_double();
				J.report.ledger.covered_s[d] = wild_double();
			}
			J.report.ledger.lifetime_s = wild_double();
			J.report.ledger.emissions_g = wild_double();
			J.report.ledger.factor.g_per_kwh = wild_double();
			J.report.ledger.factor.pue = 1 + wild_double();
		}
		J.have_report = iter % 7 != 0;
		for (size_t i = 0; i < sizeof(J.report.gpus); i++)
			((unsigned char *)J.report.gpus)[i] = (unsigned char)xorshift();
		J.report.ngpus = iter % 3 == 0 ? 0 :
				 (uint32_t)(xorshift() % (CEEMS_LEDGER_MAX_GPUS + 2));
		/* A bool holds 0 or 1 (a decoder produces nothing else);
		 * any other byte would be undefined behaviour in the test. */
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			J.report.ledger.measured[d] = xorshift() & 1;
		J.report.ledger.have_emissions = xorshift() & 1;
		J.report.ledger.factor_changed = xorshift() & 1;
		J.report.ledger.factor_timed = xorshift() & 1;
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			J.report.ledger.idle_unlearned[d] = xorshift() & 1;
		J.report.cgroup_gone = xorshift() & 1;
		J.report.have_tail = xorshift() & 1;
		for (int g = 0; g < CEEMS_LEDGER_MAX_GPUS; g++) {
			struct ceems_agent_gpu_report *d = &J.report.gpus[g];
			bool *flags[] = { &d->power_integrated, &d->have_energy,
				&d->have_util, &d->have_mem_util, &d->have_mem_peak,
				&d->have_sm_active, &d->have_sm_occupancy,
				&d->have_tensor_active, &d->have_fp_active };

			for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++)
				*flags[k] = xorshift() & 1;
			if (iter % 2) {
				d->util_pct = wild_double();
				d->energy_j = wild_double();
				d->sm_active_pct = wild_double();
				d->share = wild_double();
			}
		}

		n1 = ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_FULL,
					  full, sizeof(full));
		n2 = ceems_summary_format(&J.meta, report(), CEEMS_SUMMARY_SHORT,
					  brief, sizeof(brief));
		if (n1 < 0 || n2 < 0) {
			errors++;
			continue;
		}
		if (n1 > max_len)
			max_len = n1;
		if (layout_fault(full) != NULL || layout_fault(brief) != NULL ||
		    strchr(brief, '\n') != brief + strlen(brief) - 1) {
			if (bad_layout++ == 0)
				printf("# first bad layout (%s / %s):\n%s%s",
				       layout_fault(full) ? layout_fault(full) : "-",
				       layout_fault(brief) ? layout_fault(brief) : "-",
				       full, brief);
		}
	}
	is_int(errors, 0, "garbage: every report formats within CEEMS_SUMMARY_SIZE");
	is_int(bad_layout, 0, "garbage: layout rules hold on every output");
	ok(max_len < CEEMS_SUMMARY_SIZE / 2, "garbage: longest summary %d bytes", max_len);
}

/* The page-faults note: fires on a job whose perf counters show more
 * than 100000 faults per CPU-second; not on a job below that, nor on
 * one without perf figures (unknown is not zero). */
static void
test_page_faults(void)
{
	char ids[256];

	/* 30 cores busy for an hour, 8 GiB peak of 16: no other note. */
	job_new("COMPLETED", 3600, 32, 16 * GIB, 30 * 3600.0, 8 * GIB);
	J.meta.time_limit_min = 90;
	note_ids(ids, sizeof(ids));
	ok(strstr(ids, "page-faults") == NULL, "no perf figures: no page-faults note (%s)", ids);
	J.report.perf.sw_status = CEEMS_PERF_MEASURED;
	J.report.perf.present = 1u << CEEMS_PERF_PAGE_FAULTS |
				1u << CEEMS_PERF_TASK_CLOCK;
	J.report.perf.value[CEEMS_PERF_TASK_CLOCK] = 30 * 3600.0 * 1e9;
	J.report.perf.value[CEEMS_PERF_PAGE_FAULTS] = 30 * 3600.0 * 50000;
	note_ids(ids, sizeof(ids));
	ok(strstr(ids, "page-faults") == NULL, "50000 faults per CPU-second: no note (%s)", ids);
	J.report.perf.value[CEEMS_PERF_PAGE_FAULTS] = 30 * 3600.0 * 200000;
	note_ids(ids, sizeof(ids));
	ok(strstr(ids, "page-faults") != NULL, "200000 faults per CPU-second: the note (%s)", ids);
	J.report.perf.present &= ~(1u << CEEMS_PERF_TASK_CLOCK);
	note_ids(ids, sizeof(ids));
	ok(strstr(ids, "page-faults") == NULL, "no CPU time counted: no note (%s)", ids);
}

int
main(void)
{
	test_page_faults();
	test_golden();
	test_savings();
	test_must_not_fire();
	test_unknown_not_zero();
	test_api();
	test_garbage();
	done_testing();
}
