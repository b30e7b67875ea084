/* agent.h - the node agent's engine: every energy source and every
 * registered job sampled on one timer, each tick's energy split by the
 * ledger, per-job state checkpointed so that an agent restart loses only
 * the interval it was down.  No sockets, signals or timers here:
 * tools/agent/ceems-agent.c drives it, and tests drive it directly on fixture
 * trees (every filesystem root comes from the configuration). */
#ifndef CEEMS_AGENT_H
#define CEEMS_AGENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "base/conf.h"
#include "model/job.h"
#include "model/ledger.h"
#include "sources/perf_job.h"

/* As struct ceems_job_meta's cluster. */
#define CEEMS_AGENT_CLUSTER_MAX 64
/* GPU identifiers a job spec carries, and their length (with the NUL). */
#define CEEMS_AGENT_MAX_GPU_IDS CEEMS_LEDGER_MAX_GPUS
#define CEEMS_AGENT_GPU_ID_MAX 64
/* Latest start time a spec may carry: 9999-12-31, any later is garbage. */
#define CEEMS_AGENT_START_TIME_MAX 253402300799LL

/* What the job-side plugin tells the agent when a job starts. */
struct ceems_agent_job_spec {
	uint32_t jobid;
	uint32_t uid;
	/* The job's cgroup as /proc/PID/cgroup of one of its processes
	 * shows it (relative to each hierarchy's root). */
	struct ceems_cgroup_job cgroup;
	uint32_t alloc_cores;		/* 0: count the cgroup's cpuset */
	uint64_t alloc_mem_bytes;	/* 0: the cgroup's memory limit */
	double gpu_share[CEEMS_LEDGER_MAX_GPUS];	/* per device, 0..1 */
	bool series;			/* keep the job's time series
					 * (--ceems-series; lib/model/agent_series.h) */
	/* Hardware perf counters asked for (--ceems-perf;
	 * lib/sources/perf_job.h).
	 * Here, in what was padding, so that the state file's version 4
	 * slots keep their size (lib/agent/agent_state_migrate.c). */
	bool perf;
	/* The job's identity in the database as the plugin's record will
	 * have it (cluster, jobid, start time): Slurm's start time in Unix
	 * seconds and the cluster name, 0 and "" when not known (yet).  A
	 * record the agent writes itself uses them, so that it is the same
	 * job as the plugin's record, not a second one
	  * (lib/agent/agent_finish.c). */
	int64_t start_time;
	char cluster[CEEMS_AGENT_CLUSTER_MAX];
	/* The GPUs Slurm gave the job on this node, as the plugin found
	 * them (lib/sources/gres.h): "dev:MAJOR:MINOR" (the device file of one
	  * of
	 * its GRES indices), "gres:N" (a GRES index whose file is not
	 * known), a UUID ("GPU-...", "MIG-...") or a PCI bus id.  The agent
	 * matches them to its devices (lib/agent/agent_gpu.c); when it finds
	 * any, they replace gpu_share.  Fields added later go after these:
	 * the state file's migration reads the older layout as a prefix. */
	uint32_t ngpu_ids;
	char gpu_ids[CEEMS_AGENT_MAX_GPU_IDS][CEEMS_AGENT_GPU_ID_MAX];
};

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
	double elapsed_s;
	double cpu_s;
	bool have_mem_peak;
	/* joules[d] measured: a tick covered domain d for the job while
	 * the step's cgroup could be read. */
	bool have_joules[CEEMS_DOMAIN_COUNT];
	uint64_t mem_peak_bytes;
	double joules[CEEMS_DOMAIN_COUNT];
};

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
 * (lib/sources/bpf_io.h), since its registration.  IO is what the read and
  * write
 * system calls moved to and from files (regular files on any file
 * system, block devices; not pipes, sockets or character devices);
 * network is what the job's sockets sent and received, by protocol and
 * family.  Unknown is not zero: have_io and
 * have_net are false when not measured, and absent_why says why. */
#define CEEMS_AGENT_WHY_MAX 128
enum { CEEMS_IO_IN = 0, CEEMS_IO_OUT = 1 };
enum { CEEMS_IO_TCP = 0, CEEMS_IO_UDP = 1 };
enum { CEEMS_IO_IPV4 = 0, CEEMS_IO_IPV6 = 1 };
struct ceems_agent_io_report {
	bool have_io;
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

/* The IO and network of a job whose agent restarted: BEFORE counted by
 * the earlier agent (its checkpoint), NOW by this one since, DOWN_S the
 * time between that neither counted.  What both measured is summed, with
 * DOWN_S added to unmeasured_s; what either did not is absent, with
 * absent_why saying why (lib/agent/agent_bpf.c). */
void ceems_agent_io_resume(const struct ceems_agent_io_report *before,
			   const struct ceems_agent_io_report *now,
			   double down_s, struct ceems_agent_io_report *out);

/* What the agent knows of a job: its ledger and its last usage. */
struct ceems_agent_job_report {
	uint32_t jobid;
	uint32_t uid;
	uint32_t alloc_cores;
	uint64_t alloc_mem_bytes;
	double elapsed_s;		/* since registration */
	double cpu_s;			/* CPU time since registration */
	double gap_s;			/* time the agent could not account */
	bool cgroup_gone;		/* the job's cgroup has been removed */
	struct ceems_cgroup_stats usage;	/* last full cgroup reading */
	struct ceems_job_ledger ledger;
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	uint32_t nsteps;
	struct ceems_agent_step_report steps[CEEMS_AGENT_MAX_STEPS];
	/* The job's time series, in the final report of a job that kept
	 * one, else NULL.  Not owned by the report: the agent's is valid
	 * until its next deregistration; a decoded reply's is the caller's
	 * to free (ceems_series_free).  Copying a report copies the pointer
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
};

struct ceems_agent;

/* Open the sources and readers CONFIG enables, at monotonic time NOW_NS.
 * A node without any energy source still accounts usage (the ledger
 * records the domains as not measured).  NULL with ERR filled when the
 * configuration cannot work (unknown emission zone, unreadable /proc). */
struct ceems_agent *ceems_agent_open(const struct ceems_config *config,
				     uint64_t now_ns, char *err,
				     size_t err_size);
void ceems_agent_close(struct ceems_agent *agent);

/* Start measuring at NOW_NS, once open has returned and before any job
 * is registered or restored: opening (eBPF programs tried type by type,
 * GPU libraries, the state file) takes a while after the sources' first
 * reading, and a counter that wraps faster than that would make the
 * first tick a stall gap for every job in it.  The sources and the
 * node's CPU time are read again as the first tick's start.  -EBUSY
 * once a job is held or a tick has run, -EINVAL for a time before the
 * open's (nothing is changed then). */
int ceems_agent_start(struct ceems_agent *agent, uint64_t now_ns);

/* Fix the wall clock of the ticks to their monotonic time + OFFSET_NS
 * (the intensity series is in wall-clock time).  By default the agent
 * takes the offset from the clocks each time it looks at the series. */
void ceems_agent_set_wall_offset(struct ceems_agent *agent,
				 int64_t offset_ns);

/* How often the energy sources must be sampled so that no counter can
 * wrap twice unseen: the main interval, or shorter when a counter needs
 * it (then call ceems_agent_sample_sources on a timer of that period). */
uint64_t ceems_agent_source_interval_ns(const struct ceems_agent *agent);
void ceems_agent_sample_sources(struct ceems_agent *agent, uint64_t now_ns);

/* One main tick: sample every source and job, split the energy since the
 * previous tick, add each job's share to its ledger.  Finishes a tick
 * begun in parts. */
void ceems_agent_tick(struct ceems_agent *agent, uint64_t now_ns);

/* The same tick in parts, so that requests (of any kind) are served
 * between them: ceems_agent_tick_begin, ceems_agent_tick_read until it
 * returns true, ceems_agent_tick_end.  The parts read the jobs' cgroup
 * counters, at most MAX_JOBS jobs each; the end reads the node's
 * counters (energy, busy time) at one instant, splits that energy over
 * the jobs by what each used up to its reading, and charges them: the
 * ledger balances for every tick whatever came between.  A job's usage
 * after its reading falls in the next tick. */
#define CEEMS_AGENT_TICK_PART_JOBS 32
void ceems_agent_tick_begin(struct ceems_agent *agent, uint64_t now_ns);
bool ceems_agent_tick_read(struct ceems_agent *agent, size_t max_jobs);
void ceems_agent_tick_end(struct ceems_agent *agent, uint64_t now_ns);
/* True between ceems_agent_tick_begin and ceems_agent_tick_end. */
bool ceems_agent_tick_open(const struct ceems_agent *agent);

/* Register a job: its CPU baseline is read now; the next tick charges
 * what it holds for the part of that tick it was there (no tick is taken:
 * that would read every job, milliseconds on a node with 1000).  Returns 0, -EEXIST, -ENOSPC (max_jobs
 * reached), -ENOENT (its cgroup cannot be found), -EINVAL.  A job
 * registered already keeps its registration (-EEXIST), but learns from
 * SPEC the start time and cluster it did not know: the plugin sends
 * them again once Slurm has told it (plugins/job_start.c). */
int ceems_agent_register(struct ceems_agent *agent,
			 const struct ceems_agent_job_spec *spec,
			 uint64_t now_ns);

/* Fill OUT with the job's final report and forget the job.  Its part of
 * the time since the last tick is split for it alone (ledger_carry.h),
 * without reading the other jobs; the next tick splits the rest.
 * OUT->series, when the job kept one, stays the agent's until its next
 * deregistration or close.  Returns 0 or -ENOENT. */
int ceems_agent_deregister(struct ceems_agent *agent, uint32_t jobid,
			   uint64_t now_ns,
			   struct ceems_agent_job_report *out);

/* ---- The two-phase end (lib/agent/agent_finish.c) ----
 * ceems_agent_deregister keeps the final report (the job leaves the
 * ticks; its state slot keeps the report, marked finishing, and a restart
 * restores it as finishing) until the plugin, having stored the
 * record, releases the job.  A repeated deregistration returns the same
 * report.  Without a release within config finish_grace, the agent
 * writes the record to the spool itself (finalized_by "agent"). */

/* The plugin stored the record.  0, or -ENOENT (not finishing). */
int ceems_agent_release(struct ceems_agent *agent, uint32_t jobid);

/* The plugin's metadata of a finishing job, for the record the agent
 * may have to write.  0 or -ENOENT. */
int ceems_agent_finishing_meta(struct ceems_agent *agent, uint32_t jobid,
			       const struct ceems_job_meta *meta);

/* The final report could not be sent: write the record now.  0 or
 * -ENOENT. */
int ceems_agent_reply_lost(struct ceems_agent *agent, uint32_t jobid);

/* Call about once a tick: writes the records of finishing jobs past
 * finish_grace, and reaps the jobs whose cgroup has been gone for
 * reap_grace without a deregistration (record written by the agent, slot
 * freed).  Returns how many records the agent wrote. */
int ceems_agent_sweep(struct ceems_agent *agent, uint64_t now_ns);

size_t ceems_agent_nfinishing(const struct ceems_agent *agent);

/* ---- The agent as the only writer of records (lib/agent/agent_end.c) ---- */

/* The plugin's word on the end of job JOBID, with the job's metadata
 * META (a deregistration with BY; call it after ceems_agent_deregister).
 * BY "extern": the extern step ended the job, with what slurmctld said at
 * its start; the record waits for the epilog's word (what slurmctld
 * decided at the end: state, exit code) until finish_grace, then is
 * written finalized_by "extern".  BY "epilog": the record is written now
 * (the spool; the replay takes it into PostgreSQL), the epilog's state
 * and exit code over the extern step's, finalized_by "extern" when the
 * extern step ended the job, else "epilog".  0, -ENOENT, or -errno when
 * not even the spool took it (logged whole). */
int ceems_agent_end(struct ceems_agent *agent, uint32_t jobid,
		    const struct ceems_job_meta *meta, const char *by,
		    uint64_t now_ns);

/* The plugin's word on the end of job JOBID (BY, META as for
 * ceems_agent_end) when the agent does not hold it: the job was never
 * registered here (the agent was not running when it started), so it
 * gets a record of META alone, finalized_by "agent", figures absent,
 * coverage 0, a "not-measured" note saying so; by "extern", that record
 * waits for the epilog's word as a measured one does.  Never a second
 * record of a job whose record was written lately.  OUT gets the
 * report of a job not measured, for the reply.  0 (the record written
 * or waiting), 1 (written already), -EEXIST (the agent holds the job:
 * ceems_agent_end), or -errno when not even the spool took it. */
int ceems_agent_end_unknown(struct ceems_agent *agent, uint32_t jobid,
			    const struct ceems_job_meta *meta, const char *by,
			    uint64_t now_ns,
			    struct ceems_agent_job_report *out);

/* The final report of job JOBID when it is finishing (ended, its record
 * not yet written), its series left out.  0 or -ENOENT. */
int ceems_agent_final_report(const struct ceems_agent *agent, uint32_t jobid,
			     struct ceems_agent_job_report *out);

/* A step of job JOBID ended with the wait status STATUS: the job's
 * record takes its exit code and state from it (a failed step's stands)
 * when the metadata the plugin sent have none (slurmctld is asked at the
 * job's start, before it decides them).  0 or -ENOENT. */
int ceems_agent_step_status(struct ceems_agent *agent, uint32_t jobid,
			    int status);

/* Turn the notes of the note folder (lib/record/job_note.h) into records: the
 * job's own, with its figures, when the agent still holds it; none when
 * its record was written lately; else a record of the note's metadata
 * alone, not measured.  At most CEEMS_NOTES_PER_PASS a call (each costs
 * a record's fsync), the next call going on after the last of them.
 * Returns how many notes were taken, or -errno when the folder cannot be
 * read. */
#define CEEMS_NOTES_PER_PASS 16
int ceems_agent_take_notes(struct ceems_agent *agent, uint64_t now_ns);

/* A step of a registered job starts: its cgroup is the job's directory
 * plus step_<ID> (Slurm's naming on v1 and v2).  Returns 0, -ENOENT (no
 * such job), -EEXIST (already started), -ENOSPC (too many steps),
 * -EINVAL.  A step whose cgroup
 * cannot be opened is still recorded (figures: elapsed only). */
int ceems_agent_step_start(struct ceems_agent *agent, uint32_t jobid,
			   const char *step_id, uint64_t now_ns);

/* A step ends: a last reading of its cgroup (CPU time, memory peak), and
 * OUT filled with its figures (kept in the job's report); its energy
 * since the last tick comes with the next one.  0, -ENOENT. */
int ceems_agent_step_end(struct ceems_agent *agent, uint32_t jobid,
			 const char *step_id, uint64_t now_ns,
			 struct ceems_agent_step_report *out);

/* The job's report as of NOW_NS: the last tick's, with its part of the
 * time since split for it alone and not kept (the next tick splits that
 * time for every job).  0 or -ENOENT. */
int ceems_agent_report_now(struct ceems_agent *agent, uint32_t jobid,
			   uint64_t now_ns,
			   struct ceems_agent_job_report *out);

/* The job's report as of the last tick.  0 or -ENOENT. */
int ceems_agent_report(const struct ceems_agent *agent, uint32_t jobid,
		       struct ceems_agent_job_report *out);

size_t ceems_agent_njobs(const struct ceems_agent *agent);

/* The last tick's split, for checks and logs. */
const struct ceems_ledger_tick *
ceems_agent_last_tick(const struct ceems_agent *agent);

/* Write every job's figures and the node's counters, as of the last
 * tick, to the state file in the configured state_dir.  0, or -ENOENT
 * when there is no state file; a failed write (a full disk) is logged
 * once by the state file, and retried at the next checkpoint. */
int ceems_agent_checkpoint(struct ceems_agent *agent, uint64_t now_ns);

/* Re-register the jobs of a checkpoint written by an earlier agent.  The
 * time between that checkpoint and NOW_NS is recovered from the
 * cumulative counters when that is unambiguous (the next tick spans it;
 * lib/agent/agent_recover.c), else recorded in each job's ledger as a gap.  A missing file restores nothing (0); a damaged or
 * foreign one is set aside as state.bad and logged.  Returns the number
 * of jobs restored (finishing jobs, which go back to waiting for their
 * release, not counted), or -errno. */
int ceems_agent_restore(struct ceems_agent *agent, uint64_t now_ns);

#endif
