/* epilog.c - the job_epilog safety net, in the separate "slurmstepd spank
 * epilog" process slurmd runs after every step of a job has ended on this
 * node.  Normally the extern step has already taken the job's final
 * figures and this finds nothing to do.  When the steps died without
 * doing so (slurmstepd killed, no PrologFlags=Contain), the job is still
 * registered with the agent: finalize it here so its record is written
 * and the agent forgets it. */
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
	/* A job still registered, or finishing without a release (the
	 * extern step died storing it): the same final figures either way. */
	r = ceems_agent_deregister_job(config.socket_path, jobid,
				       AGENT_TIMEOUT_MS, &report, err,
				       sizeof(err));
	if (r == -ENOENT)
		return 0;	/* the extern step finalized it */
	if (r < 0) {
		ceems_warning("job %u: epilog cannot reach the node agent: %s",
			      jobid, err);
		return -1;
	}
	ceems_info("job %u: finalized by the epilog (its steps ended without it)",
		   jobid);
	ceems_plugin_job_meta(sp, jobid, true, config.cluster, &meta);
	ceems_plugin_job_outcome(&meta, 0, false,
				 (report.usage.present & CEEMS_CGF_OOM_KILLS) ?
				 report.usage.oom_kills : 0);
	if (ceems_plugin_finish_job(&config, &meta, &report, "epilog") == 0)
		ceems_plugin_release_job(&config, jobid, AGENT_TIMEOUT_MS);
	ceems_series_free(report.series);
	report.series = NULL;
	return 0;
}
