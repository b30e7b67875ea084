/* slurm_compat.h - what differs, for the plugin, between the Slurm
 * releases it is built for (22.05 to 26.05), kept in one place so that
 * the plugin's files read the same on all of them. */
#ifndef CEEMS_SLURM_COMPAT_H
#define CEEMS_SLURM_COMPAT_H

#include <stdint.h>

#include <slurm/slurm.h>

/* A host list handle.  Up to Slurm 23.02 `hostlist_t` is a pointer type;
 * from 23.11 on it is the structure itself and the calls take and give
 * `hostlist_t *`.  What slurm_hostlist_create() returns is the handle
 * in both (the expression is not evaluated). */
typedef __typeof__(slurm_hostlist_create(NULL)) ceems_hostlist_t;

/* slurm_get_errno() is gone from 24.11 on; Slurm's calls have set errno
 * itself since before 22.05, which is what it returned. */

/* libslurm's configuration and client plugins (auth, hash...), loaded
 * before a process that slurmd or slurmstepd did not set up asks
 * slurmctld anything: from Slurm 23.11 on, a call made without them
 * fatal()s ("No hash plugins loaded").  slurm_init() came with 22.05;
 * it leaves what is loaded already as it is. */
static inline void
compat_slurm_init(void)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(22, 5, 0)
	slurm_init(NULL);
#endif
}

/* slurm_load_job() of job JOBID: from 26.05 on, the API names a job by
 * a slurm_step_id_t (its SLUID or its job id), no longer by a number. */
static inline int
compat_load_job(job_info_msg_t **msg, uint32_t jobid, uint16_t flags)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	slurm_step_id_t id = SLURM_STEP_ID_INITIALIZER;

	id.job_id = jobid;
	return slurm_load_job(msg, id, flags);
#else
	return slurm_load_job(msg, jobid, flags);
#endif
}

/* The free of slurm_load_ctl_conf()'s answer: renamed in 26.05. */
static inline void
compat_free_conf(slurm_conf_t *conf)
{
#if SLURM_VERSION_NUMBER >= SLURM_VERSION_NUM(26, 5, 0)
	slurm_free_conf(conf);
#else
	slurm_free_ctl_conf(conf);
#endif
}

#endif
