/* agent_finish_unmeasured.c - the report of a job the agent never
 * measured (it was not running when the job started here): the record
 * the agent writes of it from its metadata alone (agent_finish.c). */
#include "config.h"

#include <string.h>

#include "agent/agent_finish.h"

/* A job the agent never measured: its time is all a gap, each domain
 * the node measures is there with coverage 0, nothing else is. */
void
ceems_agent_finish_unmeasured_report(const struct ceems_job_meta *meta,
				     const bool node_measured[CEEMS_DOMAIN_COUNT],
				     struct ceems_agent_job_report *report)
{
	double lifetime = meta->start_time > 0 && meta->end_time > meta->start_time ?
			  (double)(meta->end_time - meta->start_time) : 0;

	memset(report, 0, sizeof(*report));
	report->jobid = meta->jobid;
	report->uid = meta->uid;
	report->elapsed_s = lifetime;
	report->gap_s = lifetime;
	if (lifetime > 0) {
		report->ngaps = 1;
		report->gaps[0].start = (double)meta->start_time;
		report->gaps[0].end = (double)meta->end_time;
	}
	report->ledger.lifetime_s = lifetime;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		report->ledger.measured[d] = node_measured[d];
}
