/* finish.c - a job is over on this node: build its record from the
 * agent's final figures and the job's metadata, and hand it to storage
 * (PostgreSQL, else the durable spool).  Storage never loses a record:
 * what it cannot store or spool it logs whole (lib/storage.c). */
#include "config.h"

#include <errno.h>
#include <time.h>

#include "agent_proto.h"

#include "log.h"
#include "plugin.h"
#include "jobside.h"
#include "record.h"

int
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
		return -1;
	}
	ceems_info("job %u finished on %s (%s): %.1f J over %.0f s, record stored",
		   meta->jobid, meta->node, by,
		   ceems_job_ledger_total_j(&report->ledger), report->elapsed_s);
	return 0;
}

void
ceems_plugin_release_job(const struct ceems_config *config, uint32_t jobid,
			 int timeout_ms)
{
	char err[256];
	int r;

	r = ceems_agent_release_job(config->socket_path, jobid, timeout_ms,
				    err, sizeof(err));
	/* -ENOENT: an agent older than release, or one that already wrote
	 * the record after finish_grace (then it is there twice, the same
	 * figures: the later one stands). */
	if (r < 0 && r != -ENOENT && r != -EINVAL)
		ceems_warning("job %u: record stored, but the node agent was not told (%s): "
			      "it will write the record again after finish_grace",
			      jobid, err);
}
