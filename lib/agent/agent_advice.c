/* agent_advice.c - the carbon-aware advice of a job, where the node's
 * intensity series is: in the agent (lib/model/carbon_advice.h).  The
 * summary's note takes it from the step's reply, the record from the
 * job's final report when it is written; neither keeps the series. */
#include "config.h"

#include <stdbool.h>
#include <stdint.h>

#include "agent/agent_internal.h"
#include "model/carbon_advice.h"
#include "record/record.h"

void
ceems_agent_advice_opts(const struct ceems_config *c,
			struct ceems_advice_opts *o)
{
	o->window_s = (int64_t)(c->advice_window_ns / 1000000000ULL);
	o->min_saving_g = c->advice_min_saving_g;
	o->min_saving_frac = c->advice_min_saving_pct / 100.0;
	o->min_duration_s = (double)c->advice_min_duration_ns / 1e9;
}

int
ceems_agent_advice(const struct ceems_agent *a, uint32_t jobid,
		   const struct ceems_agent_job_report *report,
		   uint64_t now_ns, struct ceems_advice *out)
{
	struct ceems_advice_opts o;
	int64_t start = ceems_agent_end_run_start(a, jobid);

	/* Slurm's start, else the wall-clock time of the registration. */
	if (start <= 0)
		start = ((int64_t)now_ns + a->intensity.wall_offset_ns) /
			1000000000 - (int64_t)report->elapsed_s;
	ceems_agent_advice_opts(&a->config, &o);
	/* The dependency is the job side's to say (its metadata). */
	return ceems_carbon_advice_of_report(&a->intensity.series, report,
					     start, false, &o, out);
}

void
ceems_agent_advice_record(const struct ceems_intensity_series *s,
			  const struct ceems_config *c,
			  struct ceems_job_record *rec)
{
	struct ceems_advice_opts o;
	struct ceems_advice a;

	ceems_agent_advice_opts(c, &o);
	if (ceems_carbon_advice_of_report(s, &rec->report, rec->meta.start_time,
			rec->meta.dependency == CEEMS_JOB_DEPENDENCY_LISTED,
			&o, &a) == 0)
		ceems_record_set_advice(rec, &a);
}
