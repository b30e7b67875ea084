/* perf_job.h - perf counters of one job: perf_event_open in cgroup mode
 * (PERF_FLAG_PID_CGROUP, the job's perf_event cgroup directory), one
 * group of descriptors per CPU of the job's cpuset, opened when the job
 * registers, read at each tick, closed at its end.  Software events
 * always; hardware events (cycles, instructions, cache, branches) when
 * asked and the node has a PMU.  Counts are scaled for multiplexing
 * (time_enabled / time_running).  Unknown is not zero: a group not
 * measured has no values and a status that says why.
 *
 * The descriptors of all jobs are bounded by a node budget (struct
 * ceems_perf_budget): a job that would exceed it is not measured. */
#ifndef CEEMS_PERF_JOB_H
#define CEEMS_PERF_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_stats.h"

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
 * range.  These and the JSON below are in lib/sources/perf_json.c. */
const char *ceems_perf_status_name(unsigned status);
/* The status named NAME, or -EINVAL. */
int ceems_perf_status_parse(const char *name);
/* "task_clock", "context_switches", ... (record and database names). */
const char *ceems_perf_event_name(unsigned event);

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

/* The report of a job whose agent restarted: BEFORE is what the earlier
 * agent counted (its checkpoint), NOW what this one counted since,
 * DOWN_S the time between, which neither counted.  A group measured by
 * both is the sum, with DOWN_S added to unmeasured_s; a group either did
 * not measure is absent, with a status that says why (the later one's,
 * or "agent restarted" when only the later one measured it, from part
 * of the job's time). */
void ceems_perf_report_resume(const struct ceems_perf_report *before,
			      const struct ceems_perf_report *now,
			      double down_s, struct ceems_perf_report *out);

/* False when perf was off for the job (nothing to say about it). */
bool ceems_perf_report_any(const struct ceems_perf_report *r);

/* R as the JSON object of perf_json.c; *OK false on failure. */
struct json_object;
struct json_object *ceems_perf_report_to_json(const struct ceems_perf_report *r,
					      bool *ok);
/* The JSON object OBJ into OUT (untouched on error).  0 or -EINVAL
 * with ERR. */
int ceems_perf_report_from_json(const struct json_object *obj,
				struct ceems_perf_report *out, char *err,
				size_t err_size);

/* The node's descriptor budget, shared by every job. */
struct ceems_perf_budget {
	size_t limit;
	size_t used;
};

/* Set BUDGET's limit: MAX_FDS, lowered to half the process's open-files
 * soft limit (the other half stays for cgroup files, sockets, the
 * database).  Returns the limit. */
size_t ceems_perf_budget_init(struct ceems_perf_budget *budget,
			      uint32_t max_fds);

struct ceems_perf_job;

/* Open the events of the cgroup directory CGROUP_FD (not kept: the
 * kernel holds the cgroup) on each CPU of CPUS: software events when
 * SOFTWARE, hardware events when HARDWARE, within BUDGET.  Never NULL
 * but on memory exhaustion: a job whose events cannot be opened gets a
 * state whose report says why. */
struct ceems_perf_job *ceems_perf_job_open(int cgroup_fd,
					   const struct ceems_cpuset *cpus,
					   bool software, bool hardware,
					   struct ceems_perf_budget *budget);

/* Open the hardware group of JOB now, when it has none (off). */
void ceems_perf_job_open_hardware(struct ceems_perf_job *job, int cgroup_fd,
				  const struct ceems_cpuset *cpus,
				  struct ceems_perf_budget *budget);

/* A job with nothing measured, for STATUS (both groups). */
struct ceems_perf_job *ceems_perf_job_unmeasured(unsigned sw_status,
						 unsigned hw_status);

/* Read every group: the values of the report move to now.  A failed
 * read keeps the last values. */
void ceems_perf_job_read(struct ceems_perf_job *job);

/* The figures as of the last read (all absent for NULL). */
void ceems_perf_job_report(const struct ceems_perf_job *job,
			   struct ceems_perf_report *out);

/* Descriptors held. */
size_t ceems_perf_job_nfds(const struct ceems_perf_job *job);

/* Close the descriptors, give them back to the budget, free.  NULL is
 * fine. */
void ceems_perf_job_close(struct ceems_perf_job *job,
			  struct ceems_perf_budget *budget);

/* Scale a count read with its times: RAW * ENABLED / RUNNING; RUNNING 0
 * with ENABLED 0 is 0 (never scheduled: nothing to count), RUNNING 0
 * with ENABLED > 0 is unknown (-1). */
double ceems_perf_scale(uint64_t raw, uint64_t enabled, uint64_t running);

#endif
