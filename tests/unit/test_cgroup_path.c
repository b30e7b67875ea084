/* test_cgroup_path.c - job cgroup discovery from /proc/PID/cgroup and
 * /proc/self/mountinfo, on v1, v2, nested and malformed inputs. */
#include "config.h"

#include <errno.h>

#include "cgroup/cgroup_path.h"
#include "../tap.h"
#include "fixture.h"

static char buf[8192];

static void
test_v1_batch(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	char dir[1024];

	is_int(ceems_cgroup_path_job_from_proc(fixture_text("proc/cgroup-v1-batch.txt", buf, sizeof(buf)), 42, &job), 0,
	       "v1: job found");
	is_int(job.version, CEEMS_CGROUP_V1, "v1: version is 1 even with an empty 0:: line");
	is_str(job.v1[CEEMS_CG_MEMORY], "/slurm_localhost/uid_1000/job_42", "v1: memory path cut at job");
	is_str(job.v1[CEEMS_CG_CPUACCT], "/slurm_localhost/uid_1000/job_42", "v1: cpuacct found in a combined cpu,cpuacct line");
	is_str(job.v1[CEEMS_CG_BLKIO], "", "v1: blkio not holding the job stays empty");
	is_str(job.unified, "", "v1: unified empty");

	is_int(ceems_cgroup_path_mounts_from_mountinfo(fixture_text("proc/mountinfo-v1-hybrid.txt", buf, sizeof(buf)), &mnt), 0,
	       "v1: mountinfo parsed");
	is_str(mnt.v1[CEEMS_CG_CPUACCT], "/sys/fs/cgroup/cpu,cpuacct", "v1: cpuacct mount");
	is_str(mnt.unified, "/sys/fs/cgroup/unified", "v1: hybrid unified mount");
	is_int(ceems_cgroup_path_job_dir(&job, &mnt, CEEMS_CG_MEMORY, "/fix", dir, sizeof(dir)), 0, "v1: memory dir");
	is_str(dir, "/fix/sys/fs/cgroup/memory/slurm_localhost/uid_1000/job_42", "v1: memory dir under prefix");
	is_int(ceems_cgroup_path_job_dir(&job, &mnt, CEEMS_CG_BLKIO, "", dir, sizeof(dir)), -ENOENT,
	       "v1: no blkio dir (controller not mounted, job not in it)");
	is_int(ceems_cgroup_path_job_dir(&job, &mnt, CEEMS_CG_NCONTROLLERS, "", dir, sizeof(dir)), -ENOENT,
	       "v1: no unified dir for a v1 job");
}

static void
test_v2(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	char dir[1024];

	is_int(ceems_cgroup_path_job_from_proc(fixture_text("proc/cgroup-v2-step.txt", buf, sizeof(buf)), 4242, &job), 0,
	       "v2: job found");
	is_int(job.version, CEEMS_CGROUP_V2, "v2: version is 2");
	is_str(job.unified, "/system.slice/node01_slurmstepd.scope/job_4242", "v2: multiple-slurmd scope name kept");
	is_int(ceems_cgroup_path_mounts_from_mountinfo(fixture_text("proc/mountinfo-v2.txt", buf, sizeof(buf)), &mnt), 0,
	       "v2: mountinfo parsed");
	is_str(mnt.unified, "/sys/fs/cgroup", "v2: unified mount");
	is_int(ceems_cgroup_path_job_dir(&job, &mnt, CEEMS_CG_NCONTROLLERS, "", dir, sizeof(dir)), 0, "v2: dir");
	is_str(dir, "/sys/fs/cgroup/system.slice/node01_slurmstepd.scope/job_4242", "v2: absolute dir");

	is_int(ceems_cgroup_path_job_from_proc(fixture_text("proc/cgroup-v2-extern.txt", buf, sizeof(buf)), 7, &job), 0,
	       "v2: extern step (slurmstepd in step_extern/slurm)");
	is_str(job.unified, "/system.slice/slurmstepd.scope/job_7", "v2: extern cut at job");

	/* A cgroup namespace: the mount shows a subtree. */
	is_int(ceems_cgroup_path_mounts_from_mountinfo(fixture_text("proc/mountinfo-v2-container.txt", buf, sizeof(buf)), &mnt), 0,
	       "v2: container mountinfo parsed");
	snprintf(job.unified, sizeof(job.unified), "/kubepods/pod1/job_7");
	is_int(ceems_cgroup_path_job_dir(&job, &mnt, CEEMS_CG_NCONTROLLERS, "", dir, sizeof(dir)), 0, "v2: subtree dir");
	is_str(dir, "/sys/fs/cgroup/job_7", "v2: subtree root stripped");
}

/* Slurm 26.05 names a job's v2 directory by its SLUID unless cgroup.conf
 * sets CgroupJobIdPaths=yes: the directory right above a step's is the
 * job's; a SLUID-looking name elsewhere, or above no step, is not. */
static void
test_v2_sluid(void)
{
	struct ceems_cgroup_job job;

	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_extern/slurm\n",
		       7, &job), 0, "v2 SLUID: slurmstepd of the extern step");
	is_int(job.version, CEEMS_CGROUP_V2, "v2 SLUID: version is 2");
	is_str(job.unified, "/system.slice/slurmstepd.scope/sEKNKTV3WPV500",
	       "v2 SLUID: cut at the SLUID");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/system.slice/n1_slurmstepd.scope/s5K1KKYAYG5D00/step_12/user/task_0\n",
		       7, &job), 0, "v2 SLUID: a task of step 12");
	is_str(job.unified, "/system.slice/n1_slurmstepd.scope/s5K1KKYAYG5D00",
	       "v2 SLUID: the task's job directory");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/system\n",
		       7, &job), -ENOENT, "v2 SLUID: above no step, no job");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/user.slice/sEKNKTV3WPV500/step_x/slurm\n",
		       7, &job), -ENOENT, "v2 SLUID: step_x is no step");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/user.slice/sekNKTV3WPV500/step_0\n",
		       7, &job), -ENOENT, "v2 SLUID: lower case is no SLUID");
	is_int(ceems_cgroup_path_job_from_proc(
		       "4:memory:/slurm/sEKNKTV3WPV500/step_0\n",
		       7, &job), -ENOENT, "v1 lines keep job_J only");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/system.slice/slurmstepd.scope/job_7/step_0/slurm\n",
		       7, &job), 0, "v2 with CgroupJobIdPaths=yes: job_J as before");
	is_str(job.unified, "/system.slice/slurmstepd.scope/job_7", "v2 job_J path");
	is_int(ceems_cgroup_path_job_from_proc(
		       "0::/../sEKNKTV3WPV500/step_0\n", 7, &job), -EINVAL,
	       "v2 SLUID: a path outside the namespace is refused");
}

static void
test_not_this_job(void)
{
	struct ceems_cgroup_job job;

	is_int(ceems_cgroup_path_job_from_proc(fixture_text("proc/cgroup-other-job.txt", buf, sizeof(buf)), 42, &job), -ENOENT,
	       "job_420 is not job_42");
	is_int(ceems_cgroup_path_job_from_proc("", 1, &job), -ENOENT, "empty text: no job");
	is_int(ceems_cgroup_path_job_from_proc("0::/a/job_1x/b\n", 1, &job), -ENOENT, "job_1x is not job_1");
}

static void
test_malformed(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	char longpath[CEEMS_CGROUP_PATH_MAX + 64];

	is_int(ceems_cgroup_path_job_from_proc("garbage\n", 1, &job), -EINVAL, "line without colons");
	is_int(ceems_cgroup_path_job_from_proc("3:memory\n", 1, &job), -EINVAL, "line with one colon");
	is_int(ceems_cgroup_path_job_from_proc("3:memory:relative/job_1\n", 1, &job), -EINVAL, "relative path");
	is_int(ceems_cgroup_path_job_from_proc("0::/../../slurm/job_1\n", 1, &job), -EINVAL,
	       "a path outside the cgroup namespace (/..) is refused");
	is_int(ceems_cgroup_path_job_from_proc("0::/a/./job_1\n", 1, &job), -EINVAL, "a '.' component is refused");
	is_int(ceems_cgroup_path_job_from_proc("0::/a/job_1/../x\n", 1, &job), 0,
	       "components after the job's are cut off, not looked at");
	memset(longpath, 'a', sizeof(longpath));
	memcpy(longpath, "0::/", 4);
	memcpy(longpath + sizeof(longpath) - 8, "/job_1\n", 8);
	is_int(ceems_cgroup_path_job_from_proc(longpath, 1, &job), -ENAMETOOLONG, "overlong path refused, not cut");
	is_int(ceems_cgroup_path_mounts_from_mountinfo("1 2 3\n", &mnt), -EINVAL, "short mountinfo line");
	is_int(ceems_cgroup_path_mounts_from_mountinfo("1 2 0:1 / /x rw\n", &mnt), -EINVAL, "mountinfo line without separator");
	/* Found by fuzzing: a line missing its root field shifted the mount
	 * options into the mount point, and the job's directory became
	 * PREFIX "rw,nosuid" PATH, outside the prefix. */
	is_int(ceems_cgroup_path_mounts_from_mountinfo("28 25 0:25 /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n", &mnt),
	       -EINVAL, "cgroup mount point that is not absolute");
	is_int(ceems_cgroup_path_mounts_from_mountinfo("31 30 0:27 cpu /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu,cpuacct\n", &mnt),
	       -EINVAL, "cgroup root that is not absolute");
	is_int(ceems_cgroup_path_mounts_from_mountinfo("4 2 0:4 net:[4026532281] /run/netns/a rw - nsfs nsfs rw\n", &mnt), 0,
	       "a relative root of another filesystem (nsfs) is fine");
}

/* The extern step's slurmstepd is in memory, cpuset and freezer but not
 * in cpuacct: the job's cpuacct directory is found from its siblings. */
static void
test_fill_siblings(void)
{
	struct ceems_cgroup_job job;
	struct ceems_cgroup_mounts mnt;
	char root[4096];

	snprintf(root, sizeof(root), "%s/cgroup/v1", fixture_root());
	is_int(ceems_cgroup_path_job_from_proc("6:freezer:/slurm_localhost/uid_1000/job_42\n"
					  "4:memory:/slurm_localhost/uid_1000/job_42/step_extern\n"
					  "2:cpuacct:/\n1:cpu:/\n8:pids:/\n", 42, &job), 0,
	       "extern step's membership parsed");
	is_str(job.v1[CEEMS_CG_CPUACCT], "", "slurmstepd is not in the job's cpuacct");
	is_int(ceems_cgroup_path_mounts_from_mountinfo(fixture_text("cgroup/v1/mountinfo.txt", buf, sizeof(buf)), &mnt), 0,
	       "fixture mountinfo");
	is_int(ceems_cgroup_path_job_fill_siblings(&job, &mnt, root), 2,
	       "cpuacct and cpuset filled: their job directories exist");
	is_str(job.v1[CEEMS_CG_CPUACCT], "/slurm_localhost/uid_1000/job_42", "cpuacct from a sibling");
	is_str(job.v1[CEEMS_CG_PIDS], "", "pids has no such directory: left empty, not guessed");
	is_int(ceems_cgroup_path_job_fill_siblings(&job, &mnt, root), 0, "nothing more to fill");
}

int
main(void)
{
	test_v1_batch();
	test_v2();
	test_v2_sluid();
	test_not_this_job();
	test_malformed();
	test_fill_siblings();
	return done_testing();
}
