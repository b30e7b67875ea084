/* agent_advice.c - the carbon-aware advice of a job, where the node's
 * intensity series is: in the agent (lib/model/carbon_advice.h).  The
 * summary's note takes it from the step's reply (ceems_agent_end_advice),
 * the record from the job's final report when it is written; neither
 * keeps the series.  Nothing here calls back into the engine. */
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
