/* epilog.c - the job_epilog safety net, in the separate "slurmstepd spank
 * epilog" process slurmd runs after every step of a job has ended on this
 * node.  Normally the extern step has already ended the job with the
 * agent and this finds nothing to do.  When the steps died without doing
 * so (slurmstepd killed, no PrologFlags=Contain), the job is still
 * registered with the agent: end it here, with the job's metadata, so
 * that the agent writes its record.  When the agent cannot be reached, a
 * note of the job is left for it (lib/job_note.h).  This is no job's
 * start or end path (slurmd runs it after the job), so slurmctld may be
 * asked for the metadata here. */
#include "config.h"

#include <errno.h>

#include <slurm/spank.h>

#include "agent_proto.h"
#include "agent_series.h"
#include "log.h"
#include "plugin.h"

#define AGENT_TIMEOUT_MS 500

int
ceems_epilog_job(spank_t sp, const struct ceems_plugin_args *args)
{
	static struct ceems_agent_job_report report;
	struct ceems_config config;
	struct ceems_job_meta meta;
	uint32_t jobid;
	char err[256];
	int r;

	if (spank_get_item(sp, S_JOB_ID, &jobid) != ESPANK_SUCCESS)
		return -1;
	ceems_plugin_load_config(args->config_path, &config);
	/* Is the job still registered (its steps died without ending it)? */
	r = ceems_agent_report_job(config.socket_path, jobid, AGENT_TIMEOUT_MS,
				   &report, err, sizeof(err));
	if (r == -ENOENT)
		return 0;	/* the extern step ended it */
	if (r < 0)
		ceems_warning("job %u: epilog cannot reach the node agent: %s",
			      jobid, err);
	else
		ceems_info("job %u: ended by the epilog (its steps ended without it)",
			   jobid);
	ceems_plugin_job_meta(sp, jobid, true, config.cluster, &meta);
	if (ceems_plugin_end_job(&config, &meta, "epilog", AGENT_TIMEOUT_MS,
				 &report) == 0) {
		ceems_series_free(report.series);
		report.series = NULL;
	}
	return 0;
}
