/* test_step_ids.c - Slurm's names for jobs and steps (lib/cgroup/step_ids.c):
 * a job's and a step's cgroup directories, a SLUID, a slurmstepd's
 * process title. */
#include "config.h"

#include <errno.h>
#include <string.h>

#include "cgroup/step_ids.h"
#include "../tap.h"

#define STEP_MAX 16

static void
test_step_ids(void)
{
	uint32_t id = 0;
	char step[STEP_MAX];

	ok(ceems_step_ids_from_cgroup(
		   "4:cpuacct,cpu:/slurm_localhost/uid_65534/job_42/step_batch",
		   &id, step, sizeof(step)) == 0 && id == 42 &&
		   strcmp(step, "batch") == 0,
	   "v1 cgroup line: job 42, step batch");
	ok(ceems_step_ids_from_cgroup(
		   "0::/system.slice/localhost_slurmstepd.scope/job_7/step_0/slurm",
		   &id, step, sizeof(step)) == 0 && id == 7 &&
		   strcmp(step, "0") == 0,
	   "v2 cgroup line (stepd in step_0/slurm): job 7, step 0");
	ok(ceems_step_ids_from_cgroup(
		   "0::/system.slice/slurmd.service", &id, step,
		   sizeof(step)) == -EINVAL,
	   "a cgroup line without a job is no step");
	ok(ceems_step_ids_from_cgroup(
		   "4:cpu:/slurm/uid_0/job_0/step_batch", &id, step,
		   sizeof(step)) == -EINVAL,
	   "job 0 is no job");
	ok(ceems_step_ids_from_cgroup(
		   "4:cpu:/slurm/uid_0/job_99999999999/step_batch", &id, step,
		   sizeof(step)) == -EINVAL,
	   "a job id beyond 32 bits is refused");
	ok(ceems_step_ids_from_cgroup(
		   "0::/system.slice/slurmstepd.scope/sEKNKTV3WPV500/step_0/slurm",
		   &id, step, sizeof(step)) == -EINVAL,
	   "a SLUID path names no job id (its slurmstepd's title does)");
	ok(ceems_step_ids_from_title("slurmstepd: [1234.extern]", &id,
					       step, sizeof(step)) == 0 &&
		   id == 1234 && strcmp(step, "extern") == 0,
	   "process title: job 1234, step extern");
	ok(ceems_step_ids_from_title("slurmstepd: [1234.extern", &id,
					       step, sizeof(step)) == -EINVAL,
	   "an unclosed title is no step");
	ok(ceems_step_ids_from_title("/usr/sbin/slurmd -D", &id, step,
					       sizeof(step)) == -EINVAL,
	   "slurmd's command line is no step");
}

static void
test_names(void)
{
	ok(ceems_step_ids_is_sluid("sEKNKTV3WPV500", 14), "sEKNKTV3WPV500 is a SLUID");
	ok(!ceems_step_ids_is_sluid("sEKNKTV3WPV50", 13), "13 characters are not");
	ok(!ceems_step_ids_is_sluid("xEKNKTV3WPV500", 14), "nor one without its s");
	ok(!ceems_step_ids_is_sluid("sEKNKTV3WPV5/0", 14), "nor one with a slash");
	ok(!ceems_step_ids_is_sluid("job_4242", 8), "job_4242 is not");
	ok(ceems_step_ids_is_step_dir("step_batch", 10) &&
	   ceems_step_ids_is_step_dir("step_extern", 11) &&
	   ceems_step_ids_is_step_dir("step_interactive", 16) &&
	   ceems_step_ids_is_step_dir("step_12", 7), "steps: batch, extern, interactive, 12");
	ok(!ceems_step_ids_is_step_dir("step_", 5) && !ceems_step_ids_is_step_dir("step_1a", 7) &&
	   !ceems_step_ids_is_step_dir("step_batch2", 11) && !ceems_step_ids_is_step_dir("slurm", 5),
	   "step_, step_1a, step_batch2, slurm are not steps");
	ok(ceems_step_ids_name_ok("0+1") && !ceems_step_ids_name_ok("") &&
	   !ceems_step_ids_name_ok("Batch") && !ceems_step_ids_name_ok("a/b"),
	   "step names: lower case, digits and + only");
}

/* Only a whole title with a step the agent can name gives ids. */
static void
test_title_edges(void)
{
	uint32_t id = 0;
	char step[STEP_MAX];

	ok(ceems_step_ids_from_title("slurmstepd: [42.0]", &id, step, sizeof(step)) == 0 &&
	   id == 42 && strcmp(step, "0") == 0, "title: job 42, step 0");
	is_int(ceems_step_ids_from_title("slurmstepd: [.0]", &id, step, sizeof(step)), -EINVAL,
	       "no job id: none");
	is_int(ceems_step_ids_from_title("slurmstepd: [0.0]", &id, step, sizeof(step)), -EINVAL,
	       "job 0: none");
	is_int(ceems_step_ids_from_title("slurmstepd: [42.averyveryverylongstepname]", &id, step,
					 sizeof(step)), -EINVAL, "a step too long: none");
}

int
main(void)
{
	test_step_ids();
	test_names();
	test_title_edges();
	return done_testing();
}
