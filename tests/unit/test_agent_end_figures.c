/* test_agent_end_figures.c - what the node agent's engine reads of a job
 * as its steps end (on the simulated node of agent_sim.h): a step killed
 * by the OOM killer between two full readings gets the kills counted in
 * its tasks' cgroups (cgroup v1 counts them nowhere else) and its job
 * the peak it reached, and a later reading cannot lower either; and how
 * busy a job was over its last minute or two (the report's tail), which
 * the summary's timeout note reads. */
#include "config.h"

#include <json-c/json.h>
#include <math.h>

#include "agent/agent.h"
#include "base/log.h"
#include "model/measure.h"
#include "../tap.h"
#include "log_tap.h"
#include "tmptree.h"
#include "agent_sim.h"

#define MEM_JOB "sys/fs/cgroup/memory/slurm_localhost/uid_1000/job_42"
#define OOM_TEXT(n) "oom_kill_disable 0\nunder_oom 0\noom_kill " n "\n"

/* The job's memory cgroups as the kernel leaves them: NAME's peak and
 * kills. */
static void
set_memory(const char *sub, unsigned long long peak, const char *kills)
{
	char rel[256];

	snprintf(rel, sizeof(rel), "%s%s/memory.max_usage_in_bytes", MEM_JOB, sub);
	write_u64(cg_root, rel, peak);
	snprintf(rel, sizeof(rel), "%s%s/memory.oom_control", MEM_JOB, sub);
	tmptree_write(cg_root, rel, kills);
}

static void
test_oom_between_readings(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent_step_report st;
	struct ceems_agent *a;
	char err[256] = "";

	set_memory("", 10 << 20, OOM_TEXT("0"));
	set_memory("/step_batch", 10 << 20, OOM_TEXT("0"));
	set_memory("/step_batch/task_0", 10 << 20, OOM_TEXT("0"));
	set_memory("/step_extern", 1 << 20, OOM_TEXT("0"));
	set_memory("/step_extern/task_0", 1 << 20, OOM_TEXT("0"));
	base_config(&c);
	/* Light ticks, as in production: memory every 10 s. */
	c.usage_interval_ns = 10 * SEC;
	a = ceems_agent_open(&c, 100 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0, "job registers");
	is_int(ceems_agent_step_start(a, 42, "batch", 100 * SEC), 0, "batch step starts");
	advance(SEC);
	ceems_agent_tick(a, 101 * SEC);
	ceems_agent_report(a, 42, &r);
	is_int(r.usage.mem_peak_bytes, 10 << 20, "the peak as read at the registration");

	/* Between two full readings the job grows to its limit and the
	 * kernel kills two of its processes: cgroup v1 counts them in the
	 * task's cgroup only. */
	set_memory("", 300 << 20, OOM_TEXT("0"));
	set_memory("/step_batch", 290 << 20, OOM_TEXT("0"));
	set_memory("/step_batch/task_0", 290 << 20, OOM_TEXT("2"));
	is_int(ceems_agent_step_end(a, 42, "batch", 101 * SEC + SEC / 2, &st), 0,
	       "the batch step ends");
	ok(st.have_oom_kills && st.oom_kills == 2,
	   "the step's kills, from its task's cgroup (%u)", st.oom_kills);
	ok(st.have_mem_peak && st.mem_peak_bytes == 290u << 20,
	   "the step's peak (%llu)", (unsigned long long)st.mem_peak_bytes);
	is_int(ceems_agent_report_now(a, 42, 101 * SEC + SEC / 2, &r), 0,
	       "the job's report for the step's summary");
	ok((r.usage.present & CEEMS_CGF_OOM_KILLS) && r.usage.oom_kills == 2,
	   "the job's kills are its steps' (%llu)", (unsigned long long)r.usage.oom_kills);
	is_int(r.usage.mem_peak_bytes, 300 << 20, "the job's peak as of the step's end");

	/* Slurm removes the step's cgroups; a later full reading of the
	 * job's own files (its own count 0) lowers nothing. */
	set_memory("/step_batch/task_0", 0, OOM_TEXT("0"));
	advance(SEC);
	ceems_agent_tick(a, 112 * SEC);
	is_int(ceems_agent_deregister(a, 42, 113 * SEC, &r), 0, "the job leaves");
	ok(r.usage.oom_kills == 2 && r.usage.mem_peak_bytes == 300u << 20,
	   "its record keeps the kills and the peak (%llu, %llu)",
	   (unsigned long long)r.usage.oom_kills,
	   (unsigned long long)r.usage.mem_peak_bytes);
	ok(r.nsteps == 1 && r.steps[0].have_oom_kills && r.steps[0].oom_kills == 2,
	   "and its step's kills");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
	set_memory("/step_batch/task_0", 10 << 20, OOM_TEXT("0"));
}

/* Over 150 s, the job busy one core for its first 100 s, then idle. */
static void
test_tail(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r, back;
	struct json_object *obj;
	struct ceems_agent *a;
	char err[256] = "";
	double used;

	base_config(&c);
	a = ceems_agent_open(&c, 1000 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 1000 * SEC), 0, "job registers");
	for (int s = 1; s <= 150; s++) {
		advance(s <= 100 ? SEC : 0);
		ceems_agent_tick(a, (1000 + (uint64_t)s) * SEC);
		if (s == 50) {
			ceems_agent_report(a, 42, &r);
			ok(!r.have_tail, "after 50 s: no tail yet");
		}
	}
	ceems_agent_report(a, 42, &r);
	ok(r.have_tail && r.tail_s >= 60 && r.tail_s <= 120,
	   "after 150 s: a tail of 60 to 120 s (%u)", r.tail_s);
	/* The busy seconds inside the tail: those up to 100. */
	used = r.tail_s > 50 ? r.tail_s - 50 : 0;
	ok(fabs(r.tail_cpu_s - used) < 1e-3,
	   "its CPU time is what the job used in it (%.3f, want %.0f)",
	   (double)r.tail_cpu_s, used);

	obj = ceems_measure_json_report_to_json(&r);
	memset(&back, 0, sizeof(back));
	ok(obj != NULL && ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == 0,
	   "the report goes to JSON and back (%s)", err);
	ok(back.have_tail && back.tail_s == r.tail_s &&
	   fabs(back.tail_cpu_s - r.tail_cpu_s) < 1e-3, "with its tail");
	json_object_put(obj);
	ceems_agent_deregister(a, 42, 1151 * SEC, &r);
	ok(r.have_tail, "the final report has the tail");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(log_tap_warnings, NULL);
	make_trees();
	test_oom_between_readings();
	test_tail();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
