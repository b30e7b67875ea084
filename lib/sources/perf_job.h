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
 * ceems_perf_budget): a job that would exceed it is not measured.  What
 * a job's counters measured (struct ceems_perf_report, its events and
 * statuses) is the measurement model's (measure.h). */
#ifndef CEEMS_PERF_JOB_H
#define CEEMS_PERF_JOB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cgroup/cgroup_stats.h"
#include "model/measure.h"

/* The report of a job whose agent restarted: BEFORE is what the earlier
 * agent counted (its checkpoint), NOW what this one counted since,
 * DOWN_S the time between, which neither counted.  A group measured by
 * both is the sum, with DOWN_S added to unmeasured_s; a group either did
 * not measure is absent, with a status that says why (the later one's,
 * or "agent restarted" when only the later one measured it, from part
 * of the job's time). */
void ceems_perf_job_report_resume(const struct ceems_perf_report *before,
			      const struct ceems_perf_report *now,
			      double down_s, struct ceems_perf_report *out);

/* The node's descriptor budget, shared by every job. */
struct ceems_perf_budget {
	size_t limit;
	size_t used;
};

/* Set BUDGET's limit: MAX_FDS, lowered to half the process's open-files
 * soft limit (the other half stays for cgroup files, sockets, the
 * database).  Returns the limit. */
size_t ceems_perf_job_budget_init(struct ceems_perf_budget *budget,
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
double ceems_perf_job_scale(uint64_t raw, uint64_t enabled, uint64_t running);

#endif
