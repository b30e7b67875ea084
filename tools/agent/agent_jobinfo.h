/* agent_jobinfo.h - the agent's requests to ceems-jobinfo, the process
 * beside it that asks slurmctld on its behalf (tools/jobinfo): a file
 * per request in STATE_DIR/jobinfo, a folder root's alone. */
#ifndef AGENT_JOBINFO_H
#define AGENT_JOBINFO_H

#include <stdint.h>

#include "base/conf.h"
#include "model/job_spec.h"

/* The request folder's name in state_dir. */
#define AGENT_JOBINFO_DIR "jobinfo"

/* Create (mode 0700) and open the request folder of CONFIG.  Returns
 * its descriptor, or -1 after logging why (no request is then made:
 * the records wait finish_grace and have what the plugin said). */
int agent_jobinfo_open(const struct ceems_config *config);

/* Ask for Slurm's start time, cluster and GPUs of the job SPEC is about
 * (its registration, sent back with them): "start-JOBID", holding the
 * registration's JSON.  0 or -errno (logged). */
int agent_jobinfo_ask_start(int dirfd, const struct ceems_agent_job_spec *spec);

/* Ask for slurmctld's final word on job JOBID's run that started at
 * START_TIME (Slurm's, 0 when not known) (its state, exit code and
 * metadata, sent as the job's end by "epilog"): "end-JOBID", holding
 * START_TIME in decimal.  0 or -errno (logged). */
int agent_jobinfo_ask_end(int dirfd, uint32_t jobid, int64_t start_time);

/* Job JOBID ended: its start request, if still there, is withdrawn
 * (its end request says what slurmctld knows). */
void agent_jobinfo_drop_start(int dirfd, uint32_t jobid);

/* A new run of job JOBID registered (a requeued job): the end request
 * of the last run, if still there, is withdrawn, so that its answer
 * cannot end the new run.  (ceems-jobinfo looks again just before it
 * answers.) */
void agent_jobinfo_drop_end(int dirfd, uint32_t jobid);

#endif
