/* measure.h - the measurement model: what the node agent measured of one
 * job (usage, energy ledger, steps, gaps, GPUs, IO and network, perf
 * counters) and its data quality (what was not measured, what was
 * recovered, what was estimated), and their JSON form (measure_json.c,
 * measure_io.c, measure_perf.c).  The engine (agent.h) fills it, the protocol
 * (agent_proto.h) carries it, the record (record.h) keeps it as its
 * "measurements", the summary and ceems-sacct read it; none of them needs
 * another's header for it.
 *
 * The JSON form of struct ceems_agent_job_report (the protocol's REPORT,
 * the record's "measurements", doc/record-format.md).  Unknown is not
 * zero: a value that was not measured is left out, never written as 0.
 *   {"jobid":N, "uid":N, "alloc_cores":N, "alloc_mem_bytes":N,
 *    "elapsed_s":x, "cpu_s":x, "gap_s":x, "cgroup_gone":bool,
 *    "usage":{...}, "ledger":{...}, "gaps":[...], "steps":[...]}
 *   alloc_cores and alloc_mem_bytes are left out when 0 (not known);
 *   cpu_s only when the cgroup's CPU time was measured.
 *   steps: [{"id":s, "ended":bool, "elapsed_s":x, "cpu_s":x,
 *   "mem_peak_bytes":N, "oom_kills":N, "joules":{DOMAIN:x}}]; cpu_s,
 *   mem_peak_bytes, oom_kills and each joules entry only when measured
 *   for that step (the have_ flags
 *   of struct ceems_agent_step_report; decoding sets them from presence).
 *   "tasks":N (1..65535), the step's tasks on the node, only when known.
 *   usage: one key per measured field of struct ceems_cgroup_stats, named
 *   as the field (cpu_user_ns, cpu_system_ns, cpu_usage_ns,
 *   mem_current_bytes, mem_peak_bytes, mem_rss_bytes, mem_cache_bytes,
 *   mem_limit_bytes (the string "max" when unlimited), oom_kills,
 *   mem_fail_count, pids_current, io_read_bytes, io_write_bytes,
 *   io_read_ops, io_write_ops, cpuset (a CPU list string, "0-3,8"));
 *   "failed":[names] for fields that could not be read; "peak_sampled",
 *   "cpu_ticks", "partly_gone": true when the flag is set.
 *   ledger: {"lifetime_s":x, DOMAIN:{...} for each domain the node
 *   measured (package, dram, gpu, node), "emissions":{...} when any tick
 *   had a factor}.  DOMAIN: {"joules":x, "static_j":x (package and dram
 *   only), "covered_s":x, "coverage":x (covered_s / lifetime_s, when
 *   known), "idle_unlearned":true (package and dram: some tick split it
 *   with the idle power still to be learned; absent otherwise)}; joules
 *   and static_j are left out when covered_s is 0 (no measurement at
 *   all).  emissions: {"grams":x, "covered_s":x,
 *   "factor":{"source":s, "zone":s, "year":N, "g_per_kwh":x, "pue":x},
 *   "factor_changed":bool, "fallback":x}: fallback (0 to 1) only where
 *   the node has an intensity series: the part of the energy priced at
 *   the yearly figure because the series did not cover its time; with
 *   factor_changed, g_per_kwh is the energy-weighted mean.
 * Numbers are JSON integers for counters and ids, doubles otherwise
 * (written with the fewest digits, up to 17, that round-trip exactly). */
#ifndef CEEMS_MEASURE_H
#define CEEMS_MEASURE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_stats.h"
#include "model/energy.h"
#include "model/energy_err.h"
#include "model/ledger.h"
#include "model/net_kinds.h"

/* ---- Perf counters (lib/sources/perf_job.h counts them) ---- */

enum ceems_perf_event {
	/* software: always there */
	CEEMS_PERF_TASK_CLOCK,		/* ns of CPU time */
	CEEMS_PERF_CONTEXT_SWITCHES,
	CEEMS_PERF_CPU_MIGRATIONS,
	CEEMS_PERF_PAGE_FAULTS,
	/* hardware: a PMU */
	CEEMS_PERF_CYCLES,
	CEEMS_PERF_INSTRUCTIONS,
	CEEMS_PERF_CACHE_REFERENCES,
	CEEMS_PERF_CACHE_MISSES,
	CEEMS_PERF_BRANCH_MISSES,
	CEEMS_PERF_NEVENTS,
};
#define CEEMS_PERF_FIRST_HW CEEMS_PERF_CYCLES
#define CEEMS_PERF_NSW CEEMS_PERF_FIRST_HW
#define CEEMS_PERF_NHW (CEEMS_PERF_NEVENTS - CEEMS_PERF_FIRST_HW)

/* Why a group of events has values or not.  Numbers travel on the agent
 * socket and into records: append only. */
enum ceems_perf_status {
	CEEMS_PERF_OFF = 0,		/* not asked (configuration) */
	CEEMS_PERF_MEASURED = 1,
	CEEMS_PERF_NOT_SUPPORTED = 2,	/* no such event here (no PMU) */
	CEEMS_PERF_NO_PERMISSION = 3,	/* perf_event_paranoid, no CAP_PERFMON */
	CEEMS_PERF_BUDGET = 4,		/* the node's descriptor budget */
	CEEMS_PERF_NO_CGROUP = 5,	/* no perf_event cgroup holds the job */
	CEEMS_PERF_RESTARTED = 6,	/* the agent restarted during the job */
	CEEMS_PERF_FAILED = 7,		/* any other error (logged) */
	CEEMS_PERF_NSTATUS,
};

/* "measured", "not supported", ...; "unknown" for a number out of
 * range.  These and the JSON below are in lib/model/measure_perf.c. */
const char *ceems_measure_perf_status_name(unsigned status);
/* The status named NAME, or -EINVAL. */
int ceems_measure_perf_status_parse(const char *name);
/* "task_clock", "context_switches", ... (record and database names). */
const char *ceems_measure_perf_event_name(unsigned event);

/* A job's perf figures as of its last reading.  value[e] counts since
 * registration (task_clock in ns), valid only when bit e of present is
 * set. */
struct ceems_perf_report {
	uint8_t sw_status;		/* enum ceems_perf_status */
	uint8_t hw_status;
	uint32_t present;
	/* Some count was estimated from a part of its time (multiplexed):
	 * the lowest time_running / time_enabled seen, 1 when none was. */
	double running_fraction;
	double value[CEEMS_PERF_NEVENTS];
	/* Seconds of the job's time no agent counted (it was down between
	 * two of its agents): the counts miss them.  0 when none. */
	double unmeasured_s;
};

struct json_object;

/* False when perf was off for the job (nothing to say about it). */
bool ceems_measure_perf_report_any(const struct ceems_perf_report *r);

/* R as the JSON object of measure_perf.c; *OK false on failure. */
struct json_object *ceems_measure_perf_report_to_json(const struct ceems_perf_report *r,
					      bool *ok);
/* The JSON object OBJ into OUT (untouched on error).  0 or -EINVAL
 * with ERR. */
int ceems_measure_perf_report_from_json(const struct json_object *obj,
				struct ceems_perf_report *out, char *err,
				size_t err_size);

/* ---- The job ---- */

/* A job's steps (batch, extern, each srun step) are accounted apart: each
 * tick, the job's share of every domain is split among its running steps
 * by their CPU time (memory: by their RSS); what no step explains stays
 * with the job alone.  Steps never add up to more than their job. */
/* Steps beyond this many are not accounted apart (their energy stays
 * with the job): memory stays bounded for jobs running thousands. */
#define CEEMS_AGENT_MAX_STEPS 64
#define CEEMS_STEP_ID_MAX 16

/* Unknown is not zero: a figure whose have_ flag is false was not
 * measured (the step's cgroup could not be read, or no tick covered the
 * domain while it ran) and its value is meaningless, not 0. */
struct ceems_agent_step_report {
	/* "batch", "extern", "interactive", "0", "1", ... */
	char id[CEEMS_STEP_ID_MAX];
	bool ended;
	bool have_cpu;		/* cpu_s measured: two readings of its cgroup */
	/* Processes the OOM killer took in the step's cgroup and those
	 * below it, read as the step ended (have_oom_kills).  These two
	 * sit in what was padding, which earlier agents wrote as zeros:
	 * the state file's layout is unchanged. */
	bool have_oom_kills;
	uint32_t oom_kills;
	double elapsed_s;
	double cpu_s;
	bool have_mem_peak;
	/* joules[d] measured: a tick covered domain d for the job while
	 * the step's cgroup could be read. */
	bool have_joules[CEEMS_DOMAIN_COUNT];
	/* The step's tasks on this node, as its slurmstepd counted them
	 * (have_tasks; unknown when an older plugin started the step, or
	 * the step was recovered from an older agent's state).  Slurm caps
	 * a node's tasks below 65534 (MaxTasksPerNode), so 16 bits hold
	 * them, in what was padding: the state file's layout holds.  A
	 * step's tasks over all its nodes are summed where the nodes'
	 * records meet (ceems-sacct, PostgreSQL), not here. */
	bool have_tasks;
	uint16_t tasks;
	uint64_t mem_peak_bytes;
	double joules[CEEMS_DOMAIN_COUNT];
};
_Static_assert(offsetof(struct ceems_agent_step_report, elapsed_s) ==
	       CEEMS_STEP_ID_MAX + 8,
	       "a step's OOM kills took padding only: the state file's layout holds");
_Static_assert(offsetof(struct ceems_agent_step_report, mem_peak_bytes) ==
	       CEEMS_STEP_ID_MAX + 32,
	       "a step's tasks took padding only: the state file's layout holds");

/* An interval the agent could not account for the job (it was down), in
 * Unix seconds.  At most CEEMS_AGENT_MAX_GAPS are kept; later ones
 * extend the last. */
#define CEEMS_AGENT_MAX_GAPS 8

struct ceems_series;

struct ceems_agent_gap {
	double start;
	double end;
};

/* A GPU the job held on this node (a whole device, a MIG instance or a
 * share of a device), and what it did with it over its time there.
 * Means are over the ticks that read the figure; unknown is not zero. */
#define CEEMS_AGENT_GPU_UUID_MAX 96
#define CEEMS_AGENT_GPU_BUS_MAX 32
struct ceems_agent_gpu_report {
	char uuid[CEEMS_AGENT_GPU_UUID_MAX];	/* the device's, "GPU-..." */
	char bus_id[CEEMS_AGENT_GPU_BUS_MAX];	/* "0000:3b:00.0" */
	int instance;			/* MIG instance / partition id, -1: none */
	double share;			/* of the device, (0, 1] */
	/* Its energy is power integrated over fast samples, not the
	 * device's energy counter (data quality). */
	bool power_integrated;
	bool have_energy;
	double energy_j;		/* charged to the job */
	bool have_util;
	double util_pct;		/* mean "GPU utilisation" */
	bool have_mem_util;
	double mem_util_pct;
	bool have_mem_peak;
	uint64_t mem_peak_bytes;
	uint64_t mem_total_bytes;	/* its memory (the instance's), 0 unknown */
	bool have_sm_active;
	double sm_active_pct;
	bool have_sm_occupancy;
	double sm_occupancy_pct;
	bool have_tensor_active;
	double tensor_active_pct;
	bool have_fp_active;
	double fp_active_pct;
};

/* IO and network of a job's processes from the node's eBPF programs
 * (lib/sources/bpf_io.h), since its registration.  IO is what the read
 * and write system calls moved to and from files (regular files on any
 * file system, block devices; not pipes, sockets or character devices);
 * network is what the job's sockets sent and received, by protocol and
 * family.  Unknown is not zero: have_io and have_net are false when not
 * measured, and absent_why says why. */
#define CEEMS_AGENT_WHY_MAX 128
/* How a report's IO was counted (struct ceems_agent_io_report counting;
 * the ebpf key, doc/ceems.conf.5): by the eBPF programs at each read and
 * write call on a file, with its errors; or once per tick from the
 * kernel's per-process counters, which count every descriptor (pipes,
 * sockets, terminals too) and no errors (sources/task_io.h). */
enum ceems_io_counting {
	CEEMS_IO_PER_CALL = 0,
	CEEMS_IO_PER_TICK = 1,
};

struct ceems_agent_io_report {
	bool have_io;
	/* enum ceems_io_counting, in what was padding: the state file's
	 * layout holds (any other value read back is per-call). */
	uint8_t counting;
	uint64_t read_bytes;
	uint64_t read_ops;
	uint64_t read_errors;
	uint64_t write_bytes;
	uint64_t write_ops;
	uint64_t write_errors;
	bool have_net;
	uint64_t net_bytes[2][2][2];	/* [CEEMS_IO_IN/OUT][TCP/UDP][IPV4/6] */
	uint64_t net_msgs[2][2][2];	/* send/receive calls that moved data */
	bool have_tcp_retrans;
	uint64_t tcp_retrans;
	/* Forks of the node not followed (a full map) while the job ran:
	 * its figures may miss those processes'. */
	uint64_t dropped;
	char absent_why[CEEMS_AGENT_WHY_MAX];	/* "" when measured */
	/* Seconds of the job's time no agent counted (it was down between
	 * two of its agents, whose counts are summed): the figures miss
	 * what the job did then.  0 when none. */
	double unmeasured_s;
};

_Static_assert(offsetof(struct ceems_agent_io_report, read_bytes) == 8,
	       "counting took padding only: the state file's layout holds");

/* What the agent knows of a job: its ledger and its last usage. */
/* The least and most time over which a report says how busy a job was
 * at its end (struct ceems_agent_job_report tail_s): the marks the tick
 * keeps are CEEMS_AGENT_TAIL_S apart, and a tail longer than the most
 * (after the agent stalled) says nothing of the job's end. */
#define CEEMS_AGENT_TAIL_S 60
#define CEEMS_AGENT_TAIL_MAX_S 130

struct ceems_agent_job_report {
	uint32_t jobid;
	uint32_t uid;
	uint32_t alloc_cores;
	uint64_t alloc_mem_bytes;
	double elapsed_s;		/* since registration */
	double cpu_s;			/* CPU time since registration */
	double gap_s;			/* time the agent could not account */
	bool cgroup_gone;		/* the job's cgroup has been removed */
	/* The CPU time the job used over the last tail_s seconds of the
	 * report (have_tail: the job was measured that long; tail_s is
	 * CEEMS_AGENT_TAIL_S to CEEMS_AGENT_TAIL_MAX_S): whether it was still
	 * working when it ended.  These three sit in what was padding,
	 * which earlier agents wrote as zeros: the state file's layout is
	 * unchanged. */
	bool have_tail;
	uint16_t tail_s;
	float tail_cpu_s;
	struct ceems_cgroup_stats usage;	/* last full cgroup reading */
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
	/* The job's time series, in the final report of a job that kept
	 * one, else NULL.  Not owned by the report: the agent's is valid
	 * until its next deregistration; a decoded reply's is the caller's
	 * to free (ceems_agent_series_free).  Copying a report copies the pointer
	 * only. */
	struct ceems_series *series;
	/* Intervals the agent was down (restarted) that the cumulative
	 * counters accounted exactly after all (lib/agent/agent_recover.c): in
	 * the ledger like any tick, listed here as recovered, not gaps.
	 * At most CEEMS_AGENT_MAX_GAPS; a later one extends the last. */
	double recovered_s;
	uint32_t nrecovered;
	struct ceems_agent_gap recovered[CEEMS_AGENT_MAX_GAPS];
	/* The GPUs it held on this node, in the agent's device order. */
	uint32_t ngpus;
	struct ceems_agent_gpu_report gpus[CEEMS_LEDGER_MAX_GPUS];
	/* IO and network from eBPF (lib/sources/bpf_io.h). */
	struct ceems_agent_io_report io;
	/* Its perf counters since registration, and why a group has none
	 * (lib/sources/perf_job.h). */
	struct ceems_perf_report perf;
	/* How sure its energy is: each domain's error bound
	 * (lib/model/energy_err.h).  Last: a state file of version 8 holds
	 * the report up to here (agent_state_migrate.c). */
	struct ceems_energy_err_report err;
};

_Static_assert(offsetof(struct ceems_agent_job_report, usage) == 56,
	       "a job's tail took padding only: the state file's layout holds");

/* Add PART, one node's report of a job, to WHOLE, the job's over its
 * nodes (FIRST: PART is the first, WHOLE is overwritten): sums, memory
 * the largest node's, a figure some node lacks absent
 * (measure_merge.c).  WHOLE keeps no steps, gaps or series. */
void ceems_measure_merge_report(struct ceems_agent_job_report *whole,
				const struct ceems_agent_job_report *part,
				bool first);

/* A new JSON object of REPORT (its series left out: the record and the
 * reply write it apart), or NULL on allocation failure. */
struct json_object *
ceems_measure_json_report_to_json(const struct ceems_agent_job_report *report);

/* Type-checked, but unknown keys are ignored (an agent newer than its
 * client may add some).  0, or -EINVAL with ERR filled. */
int ceems_measure_json_report_from_json(const struct json_object *obj,
				     struct ceems_agent_job_report *report,
				     char *err, size_t err_size);

#endif
