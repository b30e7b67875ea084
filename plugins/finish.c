/* finish.c - a job is over on this node: tell the node agent, in one
 * call, with the job's metadata; the agent writes the record (it is the
 * only writer of records).  When it cannot be told, a note of the job is
 * left for it (lib/record/job_note.h): the job still gets its row. */
#include "config.h"

#include <errno.h>

#include "client/agent_proto.h"
#include "record/job_note.h"
#include "client/jobside.h"
#include "base/log.h"
#include "plugin.h"

int
ceems_finish_end_job(const struct ceems_config *config,
		     const struct ceems_job_meta *meta, const char *by,
		     int timeout_ms, struct ceems_agent_job_report *report)
{
	char dir[CEEMS_CONFIG_PATH_MAX + 8], err[768];
	int r;

	if (ceems_job_note_dir(config, dir, sizeof(dir)) < 0) {
		ceems_error("job %u: the note folder's path is too long: set note_dir",
			    meta->jobid);
		dir[0] = '\0';
	}
	r = ceems_jobside_end(config->socket_path, dir, meta, by, timeout_ms,
			      report, err, sizeof(err));
	/* A job the agent never knew (it was away at the job's start):
	 * its reply is all a gap, no figure; its record is Slurm's
	 * metadata alone. */
	if (r == 0 && report->usage.present == 0 &&
	    report->gap_s >= report->elapsed_s) {
		ceems_info("job %u finished on %s (%s): not measured, never "
			   "registered with the node agent; record of its "
			   "metadata left to the node agent", meta->jobid,
			   meta->node, by);
		return 0;
	}
	if (r == 0) {
		ceems_info("job %u finished on %s (%s): %.1f J over %.0f s, "
			   "record left to the node agent", meta->jobid,
			   meta->node, by,
			   ceems_job_figures_ledger_total_j(&report->ledger),
			   report->elapsed_s);
		return 0;
	}
	if (r > 0)
		ceems_warning("job %u: the node agent was not told of the job's end: %s",
			      meta->jobid, err);
	else
		ceems_error("job %u: %s; its record is lost unless the node agent "
			    "still holds the job", meta->jobid, err);
	return r > 0 ? 1 : -1;
}
