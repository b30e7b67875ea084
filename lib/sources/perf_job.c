/* perf_job.c - perf counters of one job in cgroup mode (perf_job.h).
 *
 * Per CPU of the job's cpuset, one group per kind: the software group
 * (task-clock leads; context switches, migrations, page faults) and the
 * hardware group (cycles leads; instructions, cache references and
 * misses, branch misses).  A group is read with one read() of its
 * leader (PERF_FORMAT_GROUP), and its members share the leader's
 * enabled and running times, so that a ratio (IPC) is of one interval.
 * The counts of each CPU are scaled on their own, then summed. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include <linux/perf_event.h>

#include "base/log.h"
#include "sources/perf_job.h"

struct perf_group_def {
	uint32_t type;
	uint64_t config;
};

static const struct perf_group_def event_defs[CEEMS_PERF_NEVENTS] = {
	[CEEMS_PERF_TASK_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	[CEEMS_PERF_CONTEXT_SWITCHES] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	[CEEMS_PERF_CPU_MIGRATIONS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	[CEEMS_PERF_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	[CEEMS_PERF_CYCLES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	[CEEMS_PERF_INSTRUCTIONS] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	[CEEMS_PERF_CACHE_REFERENCES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	[CEEMS_PERF_CACHE_MISSES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	[CEEMS_PERF_BRANCH_MISSES] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
};

/* One kind of group (software or hardware) on every CPU. */
struct perf_kind {
	unsigned first, n;		/* its events */
	unsigned status;
	size_t ncpus;
	int *fds;			/* ncpus * n, leader first per CPU */
};

struct ceems_perf_job {
	struct perf_kind kind[2];
	size_t nfds;
	double running_fraction;
	uint32_t present;
	double value[CEEMS_PERF_NEVENTS];
};

size_t
ceems_perf_job_budget_init(struct ceems_perf_budget *b, uint32_t max_fds)
{
	struct rlimit rl;

	b->limit = max_fds;
	b->used = 0;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / 2 < b->limit)
		b->limit = (size_t)(rl.rlim_cur / 2);
	return b->limit;
}

double
ceems_perf_job_scale(uint64_t raw, uint64_t enabled, uint64_t running)
{
	if (running == 0)
		return enabled == 0 ? 0 : -1;
	if (running >= enabled)
		return (double)raw;
	return (double)raw * ((double)enabled / (double)running);
}

static int
perf_open_one(unsigned event, int cgroup_fd, int cpu, int group_fd)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = event_defs[event].type;
	attr.config = event_defs[event].config;
	attr.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	/* The job's own work, in the kernel too (page faults are). */
	attr.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &attr, cgroup_fd, cpu,
			    group_fd, PERF_FLAG_PID_CGROUP | PERF_FLAG_FD_CLOEXEC);
}

/* The status an open's errno stands for. */
static unsigned
status_of_errno(int err)
{
	switch (err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
	case EINVAL:
		return CEEMS_PERF_NOT_SUPPORTED;
	case EACCES:
	case EPERM:
		return CEEMS_PERF_NO_PERMISSION;
	case EBADF:
	case ENOTDIR:
		return CEEMS_PERF_NO_CGROUP;
	default:
		return CEEMS_PERF_FAILED;
	}
}

static void
kind_close(struct perf_kind *k)
{
	if (k->fds == NULL)
		return;
	for (size_t i = 0; i < k->ncpus * k->n; i++)
		if (k->fds[i] >= 0)
			(void)close(k->fds[i]);
	free(k->fds);
	k->fds = NULL;
	k->ncpus = 0;
}

/* Open kind K's group on every CPU of CPUS.  Its status says how it
 * went; on any failure nothing stays open. */
static void
kind_open(struct perf_kind *k, int cgroup_fd, const struct ceems_cpuset *cpus,
	  struct ceems_perf_budget *budget)
{
	size_t want = (size_t)cpus->count * k->n, i = 0;

	if (cpus->count == 0) {
		k->status = CEEMS_PERF_NO_CGROUP;
		return;
	}
	if (budget->used + want > budget->limit) {
		k->status = CEEMS_PERF_BUDGET;
		return;
	}
	k->fds = malloc(want * sizeof(*k->fds));
	if (k->fds == NULL) {
		k->status = CEEMS_PERF_FAILED;
		return;
	}
	for (size_t f = 0; f < want; f++)
		k->fds[f] = -1;
	for (unsigned cpu = 0; cpu < CEEMS_CPUSET_MAX_CPUS && i < want; cpu++) {
		if (!ceems_cgroup_parse_cpuset_has(cpus, cpu))
			continue;
		for (unsigned e = 0; e < k->n; e++, i++) {
			int leader = e == 0 ? -1 : k->fds[i - e];

			k->fds[i] = perf_open_one(k->first + e, cgroup_fd,
						  (int)cpu, leader);
			if (k->fds[i] < 0) {
				k->status = status_of_errno(errno);
				if (k->status == CEEMS_PERF_FAILED)
					ceems_warning("perf: %s on CPU %u: %s",
						      ceems_measure_perf_event_name(k->first + e),
						      cpu, strerror(errno));
				k->ncpus = i / k->n + 1;
				kind_close(k);
				return;
			}
		}
	}
	k->ncpus = i / k->n;
	k->status = CEEMS_PERF_MEASURED;
	budget->used += i;
}

struct ceems_perf_job *
ceems_perf_job_unmeasured(unsigned sw_status, unsigned hw_status)
{
	struct ceems_perf_job *j = calloc(1, sizeof(*j));

	if (j == NULL)
		return NULL;
	j->kind[0].first = 0;
	j->kind[0].n = CEEMS_PERF_NSW;
	j->kind[0].status = sw_status;
	j->kind[1].first = CEEMS_PERF_FIRST_HW;
	j->kind[1].n = CEEMS_PERF_NHW;
	j->kind[1].status = hw_status;
	j->running_fraction = 1;
	return j;
}

/* Kind K was just opened: its descriptors and counts are the job's
 * (from zero: a job that does nothing has measured zeros). */
static void
note_opened(struct ceems_perf_job *j, const struct perf_kind *k)
{
	if (k->status != CEEMS_PERF_MEASURED)
		return;
	j->nfds += k->ncpus * k->n;
	for (unsigned e = 0; e < k->n; e++)
		j->present |= 1u << (k->first + e);
}

void
ceems_perf_job_open_hardware(struct ceems_perf_job *j, int cgroup_fd,
			     const struct ceems_cpuset *cpus,
			     struct ceems_perf_budget *budget)
{
	if (j->kind[1].status != CEEMS_PERF_OFF)
		return;
	kind_open(&j->kind[1], cgroup_fd, cpus, budget);
	note_opened(j, &j->kind[1]);
}

struct ceems_perf_job *
ceems_perf_job_open(int cgroup_fd, const struct ceems_cpuset *cpus,
		    bool software, bool hardware,
		    struct ceems_perf_budget *budget)
{
	struct ceems_perf_job *j = ceems_perf_job_unmeasured(CEEMS_PERF_OFF,
							      CEEMS_PERF_OFF);

	if (j == NULL)
		return NULL;
	if (software) {
		kind_open(&j->kind[0], cgroup_fd, cpus, budget);
		note_opened(j, &j->kind[0]);
	}
	if (hardware)
		ceems_perf_job_open_hardware(j, cgroup_fd, cpus, budget);
	return j;
}

/* Read kind K on every CPU into SUM (scaled).  False when a read
 * failed or a count could not be estimated (never ran). */
static bool
kind_read(const struct perf_kind *k, double *sum, double *fraction)
{
	/* nr, time_enabled, time_running, then one value per event */
	uint64_t buf[3 + CEEMS_PERF_NEVENTS];
	size_t want = (3 + k->n) * sizeof(uint64_t);

	for (unsigned e = 0; e < k->n; e++)
		sum[e] = 0;
	for (size_t c = 0; c < k->ncpus; c++) {
		ssize_t got = read(k->fds[c * k->n], buf, want);

		if (got != (ssize_t)want || buf[0] != k->n)
			return false;
		for (unsigned e = 0; e < k->n; e++) {
			double v = ceems_perf_job_scale(buf[3 + e], buf[1], buf[2]);

			if (v < 0)
				return false;
			sum[e] += v;
		}
		if (buf[2] < buf[1] && buf[1] > 0 &&
		    (double)buf[2] / (double)buf[1] < *fraction)
			*fraction = (double)buf[2] / (double)buf[1];
	}
	return true;
}

void
ceems_perf_job_read(struct ceems_perf_job *j)
{
	double sum[CEEMS_PERF_NEVENTS];

	if (j == NULL)
		return;
	for (int k = 0; k < 2; k++) {
		const struct perf_kind *kd = &j->kind[k];
		double fraction = j->running_fraction;

		if (kd->fds == NULL)
			continue;
		if (!kind_read(kd, sum, &fraction))
			continue;
		j->running_fraction = fraction;
		/* Cumulative counts never go back; a multiplexed estimate
		 * may: the figure stays at its highest. */
		for (unsigned e = 0; e < kd->n; e++)
			if (sum[e] > j->value[kd->first + e])
				j->value[kd->first + e] = sum[e];
	}
}

void
ceems_perf_job_report(const struct ceems_perf_job *j,
		      struct ceems_perf_report *out)
{
	memset(out, 0, sizeof(*out));
	out->running_fraction = 1;
	if (j == NULL)
		return;
	out->sw_status = (uint8_t)j->kind[0].status;
	out->hw_status = (uint8_t)j->kind[1].status;
	out->present = j->present;
	out->running_fraction = j->running_fraction;
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++)
		if (j->present & (1u << e))
			out->value[e] = j->value[e];
}

/* Group G's status after a restart: BEFORE's and NOW's statuses. */
static uint8_t
resumed_status(uint8_t before, uint8_t now)
{
	if (before == CEEMS_PERF_MEASURED)
		return now == CEEMS_PERF_OFF ? CEEMS_PERF_RESTARTED : now;
	if (before == CEEMS_PERF_OFF && now != CEEMS_PERF_OFF)
		return CEEMS_PERF_RESTARTED;
	return before;
}

void
ceems_perf_job_report_resume(const struct ceems_perf_report *before,
			 const struct ceems_perf_report *now, double down_s,
			 struct ceems_perf_report *out)
{
	struct ceems_perf_report r;

	memset(&r, 0, sizeof(r));
	r.sw_status = resumed_status(before->sw_status, now->sw_status);
	r.hw_status = resumed_status(before->hw_status, now->hw_status);
	r.running_fraction = before->running_fraction < now->running_fraction ?
			     before->running_fraction : now->running_fraction;
	for (unsigned e = 0; e < CEEMS_PERF_NEVENTS; e++) {
		uint8_t status = e < CEEMS_PERF_FIRST_HW ? r.sw_status : r.hw_status;

		if (status != CEEMS_PERF_MEASURED ||
		    !(before->present & (1u << e)))
			continue;
		r.present |= 1u << e;
		r.value[e] = before->value[e] +
			     ((now->present & (1u << e)) ? now->value[e] : 0);
	}
	if (r.present != 0)
		r.unmeasured_s = before->unmeasured_s + now->unmeasured_s +
				 (down_s > 0 ? down_s : 0);
	else
		r.running_fraction = 1;
	*out = r;
}

size_t
ceems_perf_job_nfds(const struct ceems_perf_job *j)
{
	return j != NULL ? j->nfds : 0;
}

void
ceems_perf_job_close(struct ceems_perf_job *j, struct ceems_perf_budget *budget)
{
	if (j == NULL)
		return;
	kind_close(&j->kind[0]);
	kind_close(&j->kind[1]);
	if (budget != NULL)
		budget->used = budget->used >= j->nfds ? budget->used - j->nfds : 0;
	free(j);
}
