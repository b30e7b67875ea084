/* cgroup_path.h - find a Slurm job's cgroup directories from what the
 * kernel reports for one of the job's processes (/proc/PID/cgroup) and
 * where the hierarchies are mounted (/proc/self/mountinfo).  Layouts are
 * never guessed: Debian's Slurm names them slurm_<node>/uid_U/job_J (v1)
 * and system.slice/<node>_slurmstepd.scope/job_J (v2; from Slurm 26.05
 * .../<SLUID> unless cgroup.conf sets CgroupJobIdPaths=yes), others
 * differ. */
#ifndef CEEMS_CGROUP_PATH_H
#define CEEMS_CGROUP_PATH_H

#include <stddef.h>
#include <stdint.h>

#define CEEMS_CGROUP_PATH_MAX 512

enum ceems_cgroup_version {
	CEEMS_CGROUP_NONE = 0,
	CEEMS_CGROUP_V1 = 1,
	CEEMS_CGROUP_V2 = 2,
};

/* The v1 controllers ceems reads; on v2 everything is in one tree. */
enum ceems_cgroup_controller {
	CEEMS_CG_CPUACCT,
	CEEMS_CG_MEMORY,
	CEEMS_CG_CPUSET,
	CEEMS_CG_PIDS,
	CEEMS_CG_BLKIO,
	CEEMS_CG_FREEZER,
	CEEMS_CG_NCONTROLLERS,
};

const char *ceems_cgroup_path_controller_name(enum ceems_cgroup_controller c);

/* A job's cgroup paths, relative to each hierarchy's root ("" = the job
 * is not in that v1 controller). */
struct ceems_cgroup_job {
	enum ceems_cgroup_version version;
	char unified[CEEMS_CGROUP_PATH_MAX];
	char v1[CEEMS_CG_NCONTROLLERS][CEEMS_CGROUP_PATH_MAX];
};

/* Parse the text of /proc/PID/cgroup of a process of job JOBID and cut
 * every path after its job_JOBID component or, in the unified tree, a
 * SLUID component right above a step's directory (step_ids.h): a SLUID
 * does not name the job, so the caller must know that the process is
 * job JOBID's (slurmstepd itself, or a process whose path is compared
 * with the job's registered one).  A host where the v1 controllers hold
 * the job is v1, even if an (empty) v2 tree is also mounted.  Returns 0,
 * -ENOENT when no line names the job, -EINVAL on malformed text,
 * -ENAMETOOLONG when a path does not fit. */
int ceems_cgroup_path_job_from_proc(const char *text, uint32_t jobid,
			       struct ceems_cgroup_job *job);

/* Where each hierarchy is mounted, from /proc/self/mountinfo. */
struct ceems_cgroup_mounts {
	char unified[CEEMS_CGROUP_PATH_MAX];	/* "" when not mounted */
	char unified_root[CEEMS_CGROUP_PATH_MAX];
	char v1[CEEMS_CG_NCONTROLLERS][CEEMS_CGROUP_PATH_MAX];
	char v1_root[CEEMS_CG_NCONTROLLERS][CEEMS_CGROUP_PATH_MAX];
};

/* Returns 0, or -EINVAL on malformed text. */
int ceems_cgroup_path_mounts_from_mountinfo(const char *text,
				       struct ceems_cgroup_mounts *mounts);

/* Absolute directory of the job in hierarchy C (CEEMS_CG_NCONTROLLERS
 * means the unified tree), under the filesystem root PREFIX ("" for the
 * real one; tests point it at a fixture tree).  Returns 0, -ENOENT when
 * that hierarchy does not hold the job, -ENAMETOOLONG. */
int ceems_cgroup_path_job_dir(const struct ceems_cgroup_job *job,
			 const struct ceems_cgroup_mounts *mounts,
			 enum ceems_cgroup_controller c, const char *prefix,
			 char *out, size_t out_size);

/* Slurm gives a job the same relative path in every v1 controller it
 * uses, but places slurmstepd itself (the only process of the extern
 * step) in some of them only: cpuacct holds the tasks, not slurmstepd.
 * Fill each v1 controller JOB lacks with a sibling controller's path,
 * when that directory exists under the controller's mount (PREFIX as in
 * ceems_cgroup_path_job_dir): seen, not guessed.  Returns how many were
 * filled. */
int ceems_cgroup_path_job_fill_siblings(struct ceems_cgroup_job *job,
				   const struct ceems_cgroup_mounts *mounts,
				   const char *prefix);

#endif
