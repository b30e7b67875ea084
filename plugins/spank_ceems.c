/* spank_ceems.c - the SPANK entry points of the ceems plugin.  Each one
 * dispatches on spank_context() to the file of that context.  Every entry
 * point returns success whatever happens to measurement: a measurement
 * problem must never fail, delay or kill a job (design invariant 1). */
#include "config.h"

#include <slurm/spank.h>

#include "plugin.h"

SPANK_PLUGIN(ceems, 1);

static struct ceems_plugin_args plugin_args;

int
slurm_spank_init(spank_t sp, int ac, char **av)
{
	ceems_common_log_to_slurm();
	switch (spank_context()) {
	case S_CTX_LOCAL:
	case S_CTX_ALLOCATOR:
		ceems_options_register(sp);
		break;
	case S_CTX_REMOTE:
		ceems_options_register(sp);
		/* Bad arguments were logged; defaults stand in for them. */
		(void)ceems_common_parse_args(ac, av, &plugin_args);
		(void)ceems_remote_init(sp, &plugin_args);
		break;
	case S_CTX_SLURMD:
		(void)ceems_common_parse_args(ac, av, &plugin_args);
		(void)ceems_slurmd_init(sp, &plugin_args);
		break;
	default:
		break;
	}
	return ESPANK_SUCCESS;
}

int
slurm_spank_user_init(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		(void)ceems_remote_user_init(sp);
	return ESPANK_SUCCESS;
}

int
slurm_spank_task_post_fork(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		(void)ceems_remote_task_post_fork(sp);
	return ESPANK_SUCCESS;
}

int
slurm_spank_task_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		(void)ceems_remote_task_exit(sp);
	return ESPANK_SUCCESS;
}

int
slurm_spank_exit(spank_t sp, int ac, char **av)
{
	(void)ac;
	(void)av;
	if (spank_context() == S_CTX_REMOTE)
		(void)ceems_remote_exit(sp);
	return ESPANK_SUCCESS;
}

/* slurmd context only: slurmd is shutting down. */
int
slurm_spank_slurmd_exit(spank_t sp, int ac, char **av)
{
	(void)sp;
	(void)ac;
	(void)av;
	(void)ceems_slurmd_exit();
	return ESPANK_SUCCESS;
}

#ifdef CEEMS_SPANK_JOB_EPILOG
/* job_script context: every step of the job has ended on this node.
 * Built with --enable-spank-job-epilog only: slurmd runs a process
 * after every job just because a plugin has this callback, and
 * ceems-jobinfo gives the agent slurmctld's final word without it. */
int
slurm_spank_job_epilog(spank_t sp, int ac, char **av)
{
	if (spank_context() != S_CTX_JOB_SCRIPT)
		return ESPANK_SUCCESS;
	/* Slurm does not call slurm_spank_init in this context (a fresh
	 * "slurmstepd spank epilog" process): set up here. */
	ceems_common_log_to_slurm();
	(void)ceems_common_parse_args(ac, av, &plugin_args);
	(void)ceems_epilog_job(sp, &plugin_args);
	return ESPANK_SUCCESS;
}
#endif
