/* test_agent_adopt.c - jobs that started while the agent was away are
 * adopted (on the simulated node of agent_sim.h): the agent learns where
 * Slurm keeps jobs' cgroups from a job that registers, keeps it in its
 * state_dir, and a restarted agent finds there a live job it does not
 * hold, measures it from its first tick and records the time before as
 * a gap; a job without processes, or one whose record was just written,
 * is left alone.  A job registered from cgroups without its cpuacct one
 * (Slurm's extern step without a task) gets it from a later step.  On
 * cgroup v2 with Slurm 26.05's SLUID-named job directories, the job id
 * comes from the job's slurmstepd. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "agent/agent.h"
#include "base/log.h"
#include "../tap.h"
#include "log_tap.h"
#include "tmptree.h"
#include "agent_sim.h"

#define CPU_USERS "sys/fs/cgroup/cpu,cpuacct/slurm_localhost"

static int warnings;
static int refusals;	/* warnings that a job cannot be adopted */

/* Warnings counted, and shown as TAP comments. */
static void
count_warnings(enum ceems_log_level level, const char *message, void *arg)
{
	if (level == CEEMS_LOG_WARNING)
		warnings++;
	if (level == CEEMS_LOG_WARNING && strstr(message, "cannot be adopted") != NULL)
		refusals++;
	log_tap_warnings(level, message, arg);
}
#define MEM_USERS "sys/fs/cgroup/memory/slurm_localhost"

static void
make_dir(const char *root, const char *rel)
{
	char path[PATH_MAX];

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	if (mkdir(path, 0755) < 0 && errno != EEXIST)
		tmptree_die("mkdir", path);
}

/* Process PID of uid UID, started AGO_S seconds ago (by the boot-time
 * clock, as the kernel's /proc/PID/stat counts). */
static void
make_process(unsigned pid, unsigned uid, double ago_s)
{
	struct timespec ts;
	long hz = sysconf(_SC_CLK_TCK);
	char rel[64], text[512];
	double boot_s;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	boot_s = (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
	snprintf(rel, sizeof(rel), "%u", pid);
	make_dir(proc_root, rel);
	/* A command with spaces and a parenthesis, as anyone may name one. */
	snprintf(text, sizeof(text),
		 "%u (a) b c) S 1 %u %u 0 -1 4194560 100 0 0 0 5 3 0 0 20 0 1 0 %llu 1000000 100\n",
		 pid, pid, pid, (unsigned long long)((boot_s - ago_s) * (double)hz));
	snprintf(rel, sizeof(rel), "%u/stat", pid);
	tmptree_write(proc_root, rel, text);
	snprintf(text, sizeof(text), "Name:\ta\nUid:\t%u\t%u\t%u\t%u\n", uid, uid, uid, uid);
	snprintf(rel, sizeof(rel), "%u/status", pid);
	tmptree_write(proc_root, rel, text);
}

/* Job JOBID of uid UID in the cgroup v1 tree, its extern step running
 * PROCS ("" for none). */
static void
make_job(unsigned jobid, unsigned uid, const char *procs)
{
	char rel[256];

	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u", uid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u/job_%u", uid, jobid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u/job_%u/cpuacct.usage", uid, jobid);
	tmptree_write(cg_root, rel, "1000000000\n");
	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u/job_%u/cgroup.procs", uid, jobid);
	tmptree_write(cg_root, rel, "");
	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u/job_%u/step_extern", uid, jobid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), CPU_USERS "/uid_%u/job_%u/step_extern/cgroup.procs", uid, jobid);
	tmptree_write(cg_root, rel, procs);
	snprintf(rel, sizeof(rel), MEM_USERS "/uid_%u", uid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), MEM_USERS "/uid_%u/job_%u", uid, jobid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), MEM_USERS "/uid_%u/job_%u/memory.limit_in_bytes", uid, jobid);
	tmptree_write(cg_root, rel, "1073741824\n");
}

static bool
roots_file_says(const char *want)
{
	char path[PATH_MAX], text[256];
	FILE *f;
	size_t n;

	snprintf(path, sizeof(path), "%s/slurm-cgroups", state_dir);
	f = fopen(path, "r");
	if (f == NULL)
		return false;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	return strcmp(text, want) == 0;
}

static void
test_adopt(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 100 * SEC;

	base_config(&c);
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, t), 0, "job 42 registers");
	/* The agent checkpoints and stops; 4 s later job 43 starts (6 s
	 * before the next agent's first tick), job 44's cgroup holds no
	 * process, and job 45 started before the checkpoint: a job of the
	 * agent before, its record written, its cgroup lingering. */
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	ceems_agent_checkpoint(a, t + SEC);
	ok(roots_file_says("v1 /slurm_localhost\n"),
	   "the agent keeps where Slurm's jobs are in its state_dir, at its checkpoint");
	ceems_agent_open_close(a);
	make_process(4343, 1001, 6);
	make_process(4344, 1001, 5);
	make_job(43, 1001, "4344\n4343\n");
	make_job(44, 1002, "");
	make_process(4545, 1003, 30);
	make_job(45, 1003, "4545\n");

	t += 10 * SEC;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "a second agent opens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, t), 1, "it restores job 42");
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	is_int(ceems_agent_njobs(a), 2,
	       "its first tick adopts job 43, not job 44 (no process) nor 45 (older than the checkpoint)");
	if (!ok(ceems_agent_report(a, 43, &r) == 0, "job 43 is held"))
		goto out;
	is_int(r.uid, 1001, "with its owner from its cgroup");
	ok(fabs(r.gap_s - 6) < 1.5, "the 6 s before are a gap (%.2f s)", r.gap_s);
	ok(r.ngaps == 1 && fabs(r.gaps[0].end - r.gaps[0].start - r.gap_s) < 1e-6,
	   "listed as the record's gap");
	ok(fabs(r.elapsed_s - 6) < 1.5, "its elapsed time counts from its oldest process (%.2f s)",
	   r.elapsed_s);
	/* A later step's plugin registers it: its word is taken, and it is
	 * told the job is new to it (it then says Slurm's start time). */
	memset(&spec, 0, sizeof(spec));
	spec.jobid = 43;
	spec.uid = 1001;
	spec.alloc_mem_bytes = 512ULL << 20;
	snprintf(spec.cgroup.v1[CEEMS_CG_CPUACCT], sizeof(spec.cgroup.v1[0]),
		 "/slurm_localhost/uid_1001/job_43");
	spec.cgroup.version = CEEMS_CGROUP_V1;
	is_int(ceems_agent_register(a, &spec, t + SEC + SEC / 2), 0,
	       "the first plugin to register the adopted job is told it is new");
	is_int(ceems_agent_register(a, &spec, t + SEC + SEC / 2), -EEXIST, "a second is not");
	ceems_agent_report(a, 43, &r);
	is_int(r.alloc_mem_bytes, 512ULL << 20, "the plugin's memory is taken");
	/* A job that starts once the agent listens registers itself. */
	make_process(4646, 1004, 0);
	make_job(46, 1004, "4646\n");
	advance(SEC);
	ceems_agent_tick(a, t + 2 * SEC);
	ceems_agent_report(a, 43, &r);
	ok(r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] > 0 &&
	   r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] < r.ledger.lifetime_s - 5,
	   "measured from its adoption on, coverage said (%.2f of %.2f s)",
	   r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE], r.ledger.lifetime_s);

	/* Its end: the record is written; its cgroup, still there at the
	 * next scan with a process in it, is not taken for a new job. */
	is_int(ceems_agent_deregister(a, 43, t + 3 * SEC, &r), 0, "job 43 leaves");
	is_int(ceems_agent_release(a, 43), 0, "its record is kept");
	advance(SEC);
	ceems_agent_tick(a, t + 70 * SEC);
	ok(ceems_agent_report(a, 43, &r) == -ENOENT,
	   "a job whose record was just written is not adopted again");
	ok(ceems_agent_report(a, 46, &r) == -ENOENT,
	   "a job that started after the agent's first tick is not adopted");
out:
	ceems_agent_open_close(a);
}

/* A damaged roots file is read like any outside input. */
static void
test_bad_roots(void)
{
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "", path[PATH_MAX];
	FILE *f;

	snprintf(path, sizeof(path), "%s/slurm-cgroups", state_dir);
	f = fopen(path, "w");
	if (f == NULL)
		tmptree_die("fopen", path);
	fputs("v1 /slurm_localhost/../../etc\nv3 /x\nv2 relative\n\x01\n", f);
	fclose(f);
	base_config(&c);
	warnings = 0;
	a = ceems_agent_open(&c, 500 * SEC, err, sizeof(err));
	ok(a != NULL, "an agent opens over a damaged roots file (%s)", err);
	is_int(warnings, 4, "each bad line is one warning");
	advance(SEC);
	if (a != NULL)
		ceems_agent_tick(a, 501 * SEC);
	ceems_agent_open_close(a);
}

/* An agent with no room left says once that a job cannot be adopted,
 * not at every scan. */
static void
test_refused_once(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 1000 * SEC;
	int n;

	base_config(&c);
	c.max_jobs = 1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "a one-job agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, t), 0, "job 42 takes its one place");
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	ceems_agent_checkpoint(a, t + SEC);
	ceems_agent_open_close(a);
	make_process(4848, 1005, 3);
	make_job(48, 1005, "4848\n");

	t += 5 * SEC;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "it opens again (%s)", err))
		return;
	ceems_agent_restore(a, t);
	refusals = 0;
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	n = refusals;
	ok(n >= 1, "job 48, started while it was away, cannot be adopted: said (%d job%s)",
	   n, n == 1 ? "" : "s");
	/* The next scans, a minute apart by the agent's clock: the job's
	 * process is made as old on the kernel's clock. */
	make_process(4848, 1005, 3 + 61);
	advance(SEC);
	ceems_agent_tick(a, t + 62 * SEC);
	make_process(4848, 1005, 3 + 122);
	advance(SEC);
	ceems_agent_tick(a, t + 123 * SEC);
	is_int(refusals, n, "the scans after it say nothing more at warning level");
	is_int(ceems_agent_njobs(a), 1, "the agent still holds its one job");
	ceems_agent_open_close(a);
}

/* The extern step registers job 42 from its slurmstepd, in no cpuacct
 * cgroup of the job: its CPU time is unknown, not 0.  The batch step's
 * registration names the cpuacct cgroup; the CPU time counts from
 * there. */
static void
test_later_step_names_cpuacct(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec full, stepd;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";

	make_trees();
	base_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens on fixture trees (%s)", err))
		return;
	job42_spec(&full);
	stepd = full;
	stepd.cgroup.v1[CEEMS_CG_CPUACCT][0] = '\0';
	is_int(ceems_agent_register(a, &stepd, 10 * SEC), 0, "registered without its cpuacct cgroup");
	advance(1000000000ULL);
	ceems_agent_tick(a, 11 * SEC);
	is_int(ceems_agent_report(a, 42, &r), 0, "report");
	ok(!(r.usage.present & CEEMS_CGF_CPU_USAGE) && r.cpu_s == 0, "its CPU time is not measured (%g)", r.cpu_s);
	is_int(ceems_agent_register(a, &full, 11 * SEC), -EEXIST, "the batch step's registration");
	advance(1000000000ULL);
	ceems_agent_tick(a, 12 * SEC);
	advance(500000000ULL);
	ceems_agent_tick(a, 13 * SEC);
	is_int(ceems_agent_report(a, 42, &r), 0, "report");
	is_near(r.cpu_s, 1.5, 1e-9, "CPU time from the step that named the cgroup on");
	/* killed after its checkpoint: the next agent reads the job where
	 * the batch step said */
	is_int(ceems_agent_checkpoint(a, 13 * SEC), 0, "checkpoint");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 14 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "a restarted agent opens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 14 * SEC), 1, "it restores the job");
	advance(500000000ULL);
	ceems_agent_tick(a, 15 * SEC);
	is_int(ceems_agent_report(a, 42, &r), 0, "report");
	ok(r.usage.present & CEEMS_CGF_CPU_USAGE, "its CPU time is read from the cgroup the batch step named");
	ceems_agent_deregister(a, 42, 15 * SEC, &r);
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

#define V2_SCOPE "sys/fs/cgroup/system.slice/slurmstepd.scope"

/* Process PID's title, as slurmstepd sets it ("slurmstepd: [43.0]"). */
static void
make_title(unsigned pid, const char *title)
{
	char rel[64];

	snprintf(rel, sizeof(rel), "%u/cmdline", pid);
	tmptree_write(proc_root, rel, title);
}

/* A job in the v2 tree of Slurm 26.05, named by its SLUID: STEP's
 * slurmstepd STEPD_PID in step_STEP/slurm, its task TASK_PID in
 * step_STEP/user/task_0. */
static void
make_v2_job(const char *sluid, const char *step, unsigned stepd_pid,
	    unsigned task_pid)
{
	char rel[256], text[32];

	make_dir(cg_root, "sys/fs/cgroup/system.slice");
	make_dir(cg_root, V2_SCOPE);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s", sluid);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/cpu.stat", sluid);
	tmptree_write(cg_root, rel, "usage_usec 1000000\nuser_usec 900000\nsystem_usec 100000\n");
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s", sluid, step);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s/slurm", sluid, step);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s/slurm/cgroup.procs", sluid, step);
	snprintf(text, sizeof(text), "%u\n", stepd_pid);
	tmptree_write(cg_root, rel, text);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s/user", sluid, step);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s/user/task_0", sluid, step);
	make_dir(cg_root, rel);
	snprintf(rel, sizeof(rel), V2_SCOPE "/%s/step_%s/user/task_0/cgroup.procs", sluid, step);
	snprintf(text, sizeof(text), "%u\n", task_pid);
	tmptree_write(cg_root, rel, text);
}

/* Slurm 26.05 on cgroup v2 names a job's directory by its SLUID, which
 * does not hold the job id: the agent learns the scope above it from a
 * registered job and, back from being away, takes the job id of a SLUID
 * directory from the title of the root slurmstepd of one of its steps;
 * a title set by the job's own processes, or naming another step, is
 * not believed. */
static void
test_adopt_sluid(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 2000 * SEC;

	make_trees();
	tmptree_write(proc_root, "self/mountinfo",
		      "28 1 0:25 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw\n");
	make_v2_job("sAAAAAAAAAAA42", "batch", 5042, 5142);
	base_config(&c);
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "an agent on cgroup v2 opens (%s)", err))
		return;
	memset(&spec, 0, sizeof(spec));
	spec.jobid = 42;
	spec.uid = 1000;
	if (!ok(ceems_cgroup_path_job_from_proc(
			"0::/system.slice/slurmstepd.scope/sAAAAAAAAAAA42/step_batch/slurm\n",
			42, &spec.cgroup) == 0, "job 42's SLUID cgroup found"))
		goto out;
	is_int(ceems_agent_register(a, &spec, t), 0, "job 42 registers with its SLUID cgroup");
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	ceems_agent_checkpoint(a, t + SEC);
	ok(roots_file_says("v2 /system.slice/slurmstepd.scope\n"),
	   "the scope above SLUID directories is learned");
	ceems_agent_open_close(a);
	/* While it is away: job 43 starts (its stepd root, its task 1001's);
	 * job 44's only "slurmstepd" is a process of the user's own; job
	 * 45's names step 0 in step_batch's directory. */
	make_process(5043, 0, 4);
	make_title(5043, "slurmstepd: [43.0]");
	make_process(5143, 1001, 4);
	make_v2_job("sBBBBBBBBBBB43", "0", 5043, 5143);
	make_process(5044, 1002, 4);
	make_title(5044, "slurmstepd: [44.0]");
	make_process(5144, 1002, 4);
	make_v2_job("sCCCCCCCCCCC44", "0", 5044, 5144);
	make_process(5045, 0, 4);
	make_title(5045, "slurmstepd: [45.0]");
	make_process(5145, 1003, 4);
	make_v2_job("sDDDDDDDDDDD45", "batch", 5045, 5145);

	t += 6 * SEC;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "a second agent opens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, t), 1, "it restores job 42");
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	is_int(ceems_agent_njobs(a), 2, "its first tick adopts job 43, not 44 nor 45");
	if (ok(ceems_agent_report(a, 43, &r) == 0, "job 43 is held, its id from its slurmstepd"))
		is_int(r.uid, 1001, "its owner from its task");
	ok(ceems_agent_report(a, 44, &r) == -ENOENT,
	   "a title set by the job's own process names no job");
	ok(ceems_agent_report(a, 45, &r) == -ENOENT,
	   "a title naming another step than its directory names no job");
out:
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(count_warnings, NULL);
	make_trees();
	test_adopt();
	test_bad_roots();
	test_refused_once();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	test_later_step_names_cpuacct();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	test_adopt_sluid();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
