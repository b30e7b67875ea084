/* report_rules.h - the rules of the periodic reports (doc/reports.md):
 * which of a job's requests were much larger than its use, what asking
 * for less would have saved, and the per-user sums, traffic lights and
 * suggestions built on them.  Pure functions of the job rows, no I/O:
 * the unit tests hold each rule's "must not fire" list. */
#ifndef REPORT_RULES_H
#define REPORT_RULES_H

#include <stdbool.h>
#include <stddef.h>

/* Below these a run says too little about its steady use (as the
 * end-of-job summary's notes, doc/summary.md). */
#define REPORT_MIN_RUN_S 60.0
#define REPORT_MIN_GPU_RUN_S 300.0
/* A suggestion needs this many jobs behind it, never one. */
#define REPORT_MIN_BACKING 3
/* A job whose measured share of its time is below this is not judged. */
#define REPORT_MIN_COVERAGE 0.9
/* A user's jobs in their first days are not judged. */
#define REPORT_NEW_USER_S (14.0 * 86400.0)

enum report_area {
	REPORT_CPU, REPORT_MEM, REPORT_GPU, REPORT_TIME, REPORT_AREAS
};

enum report_light {
	REPORT_LIGHT_NONE,	/* too few jobs judged: no light */
	REPORT_LIGHT_GREEN, REPORT_LIGHT_AMBER, REPORT_LIGHT_RED
};

/* Why a job was not judged at all (its figures still count in the
 * totals). */
enum report_skip {
	REPORT_JUDGED, REPORT_SKIP_SHORT, REPORT_SKIP_QUALITY,
	REPORT_SKIP_NEW_USER, REPORT_SKIP_RUNNING
};

/* One finished job, as ceems.jobs holds it.  A NaN (or a negative count
 * where noted) is "not measured" (design invariant 5). */
struct report_job {
	long long jobid;
	char user[64];
	char account[64];
	char state[16];
	double elapsed_s;
	double time_limit_min;	/* NaN: none or unknown */
	double alloc_cpus;	/* NaN unknown */
	double cpu_time_s;
	double req_mem_bytes;
	double mem_peak_bytes;
	double alloc_gpus;	/* 0 when none */
	double gpu_util_pct;
	double package_static_j;
	double dram_static_j;
	double gpu_j;
	double total_j;
	double emissions_g;
	double coverage;	/* smallest coverage of the measured domains */
	double gap_s;
	double wait_s;		/* start - submit */
	double nnodes, nodes_reported;
	double since_first_s;	/* start - the user's first job's start */
};

/* What one rule found in one job: the request, the suggestion and the
 * saving.  Units: cores, bytes, GPUs, minutes. */
struct report_finding {
	bool fired;
	double asked, suggested;
	double held_hours;	/* core-, GiB-, GPU-hours given back; 0 for time */
	double saved_j;		/* NaN when the energy is not known */
	double saved_g;
};

struct report_verdict {
	enum report_skip skip;
	struct report_finding area[REPORT_AREAS];
};

/* One suggestion: a request several jobs made, and what the smaller one
 * would have saved over them. */
struct report_suggestion {
	enum report_area area;
	double asked;		/* the request the jobs made */
	double suggested;	/* the largest suggestion among them */
	int jobs;
	double held_hours, saved_j, saved_g;
	bool energy_known;	/* every job's saving in joules was known */
	double wait_s;		/* mean wait of those jobs */
	double max_elapsed_s;
};

#define REPORT_SUGGESTIONS_MAX 32
#define REPORT_ALERT_IDS_MAX 8
/* The alert at a job's end: GPUs held this long ... */
#define REPORT_ALERT_MIN_S 3600.0
/* ... and busy less than this share of the time. */
#define REPORT_ALERT_GPU_PCT 10.0

/* The sums of one user's (or one account's) jobs in a period. */
struct report_sums {
	char user[64];
	int jobs, judged;
	int skipped[REPORT_SKIP_RUNNING + 1];
	double cpu_hours_alloc, cpu_hours_used, gpu_hours;
	double energy_j, emissions_g;
	bool energy_known, emissions_known;
	/* traffic-light terms: used and held, over the judged jobs */
	double used[REPORT_AREAS], held[REPORT_AREAS];
	int area_jobs[REPORT_AREAS], fired[REPORT_AREAS];
	double idle_core_hours, idle_j;	/* over the jobs a rule fired on */
	/* the GPU-idle alert (report_rules_alert), over the jobs it fired on */
	int alerts;
	double alert_gpu_hours, alert_j, alert_g;
	bool alert_energy_known;
	long long alert_jobids[REPORT_ALERT_IDS_MAX];
	size_t n_suggestions;
	struct report_suggestion suggestions[REPORT_SUGGESTIONS_MAX];
};

void report_rules_judge(const struct report_job *job, struct report_verdict *out);

/* The alert at a job's end (doc/reports.md, "Alerts"): a job that held
 * GPUs for an hour or more, judged (long enough, complete data, not a
 * new user's), whose GPUs were busy under REPORT_ALERT_GPU_PCT of the
 * time. */
bool report_rules_alert(const struct report_job *job);

void report_rules_sums_init(struct report_sums *s, const char *user);
void report_rules_add(struct report_sums *s, const struct report_job *job);

/* Keep the suggestions backed by REPORT_MIN_BACKING jobs, most saving
 * first. */
void report_rules_finish(struct report_sums *s);

enum report_light report_rules_light(const struct report_sums *s,
				     enum report_area area, double *ratio);

const char *report_rules_area_name(enum report_area area);
const char *report_rules_light_name(enum report_light light);

/* The figure suggestions are ranked by: idle-allocation energy where
 * known, else the resource-hours given back. */
double report_rules_weight(const struct report_sums *s);

#endif /* REPORT_RULES_H */
