/* finish.c - a job is over on this node: build its record from the
 * agent's final figures and the job's metadata, and hand it to storage
 * (PostgreSQL, else the durable spool).  Storage never loses a record:
 * what it cannot store or spool it logs whole (lib/storage.c). */
#include "config.h"

#include <time.h>

#include "log.h"
#include "plugin.h"
#include "jobside.h"
#include "record.h"

void
ceems_plugin_finish_job(const struct ceems_config *config,
			const struct ceems_job_meta *meta,
			const struct ceems_agent_job_report *report,
			const char *by)
{
	static struct ceems_job_record record;
	char err[512];

	if (ceems_jobside_finish(config, meta, report, by, (int64_t)time(NULL),
				 &record, err, sizeof(err)) < 0) {
		ceems_error("job %u: record not stored: %s", meta->jobid, err);
		return;
	}
	ceems_info("job %u finished on %s (%s): %.1f J over %.0f s, record stored",
		   meta->jobid, meta->node, by,
		   ceems_job_ledger_total_j(&report->ledger), report->elapsed_s);
}
