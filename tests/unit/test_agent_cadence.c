/* test_agent_cadence.c - when the node agent's engine reads and writes
 * what it need not at every tick (on the simulated node of agent_sim.h):
 * the steps of a job that used no CPU are left for a tick that moves,
 * and checkpoints go every checkpoint_interval and at the tick after a
 * job or a step came or left. */
#include "config.h"

#include <math.h>

#include "agent/agent.h"
#include "base/log.h"
#include "../tap.h"
#include "log_tap.h"
#include "tmptree.h"
#include "agent_sim.h"

/* A job that used no CPU since the last tick has steps that used none
 * (cgroup CPU time counts the children's): on light ticks they are not
 * read.  A step counter that moves alone, which a real cgroup cannot
 * do, shows it: it is seen only once the job's moves, and nothing is
 * lost, the step's baseline having stayed. */
static void
test_idle_job_steps_not_read(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	const unsigned long long batch = 3000000000ULL;

	base_config(&c);
	c.usage_interval_ns = 10 * SEC;
	a = ceems_agent_open(&c, 500 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	write_u64(cg_root, BATCH_CPUACCT, batch);
	is_int(ceems_agent_register(a, &spec, 500 * SEC), 0, "job registers");
	is_int(ceems_agent_step_start(a, 42, "batch", 500 * SEC), 0, "batch step starts");
	advance(0);
	ceems_agent_tick(a, 501 * SEC);		/* the first: a full reading */
	write_u64(cg_root, BATCH_CPUACCT, batch + 500000000ULL);
	advance(0);
	ceems_agent_tick(a, 502 * SEC);
	ceems_agent_report(a, 42, &r);
	ok(r.nsteps == 1 && r.steps[0].cpu_s == 0,
	   "a light tick of a job that used no CPU does not read its steps (step %.3f s)",
	   r.nsteps == 1 ? r.steps[0].cpu_s : -1.0);
	write_u64(cg_root, BATCH_CPUACCT, batch + 800000000ULL);
	advance(800000000ULL);
	ceems_agent_tick(a, 503 * SEC);
	ceems_agent_report(a, 42, &r);
	is_near(r.cpu_s, 0.8, 1e-9, "the job's CPU time once it moves");
	ok(r.nsteps == 1 && fabs(r.steps[0].cpu_s - 0.8) < 1e-9,
	   "the step's, from the baseline kept (%.3f s)", r.nsteps == 1 ? r.steps[0].cpu_s : -1.0);
	is_int(ceems_agent_deregister(a, 42, 504 * SEC, &r), 0, "job deregisters");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);
}

/* Checkpoints go at the end of a tick: every checkpoint_interval (a
 * tenth of the ticks at 10 s and 1 s ticks), and at the tick after a job
 * or a step came or left whatever the interval, since the state on disk
 * then recovers nothing of the job, or nothing at all, until a new one
 * is written. */
static void
test_checkpoint_cadence(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent_step_report st;
	struct ceems_agent *a;
	char err[256] = "";
	int due = 0;

	base_config(&c);
	c.checkpoint_interval_ns = 10 * SEC;
	a = ceems_agent_open(&c, 600 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 600 * SEC), 0, "job registers");
	advance(500000000ULL);
	ceems_agent_tick(a, 601 * SEC);
	ok(ceems_agent_checkpoint_due(a, 601 * SEC), "the first tick checkpoints");
	is_int(ceems_agent_checkpoint(a, 601 * SEC), 0, "checkpoint");
	for (unsigned long long t = 602; t <= 610; t++) {
		advance(500000000ULL);
		ceems_agent_tick(a, t * SEC);
		due += ceems_agent_checkpoint_due(a, t * SEC);
	}
	is_int(due, 0, "none in the 9 ticks after");
	ok(ceems_agent_checkpoint_due(a, 611 * SEC - SEC / 3),
	   "the tick 10 s after, a little early");
	advance(500000000ULL);
	ceems_agent_tick(a, 611 * SEC);
	is_int(ceems_agent_checkpoint(a, 611 * SEC), 0, "checkpoint");
	ok(!ceems_agent_checkpoint_due(a, 612 * SEC), "not due a second later");
	is_int(ceems_agent_deregister(a, 42, 611 * SEC + SEC / 2, &r), 0,
	       "the job leaves between ticks");
	advance(0);
	ceems_agent_tick(a, 612 * SEC);
	ok(ceems_agent_checkpoint_due(a, 612 * SEC), "the tick after a job left checkpoints");
	is_int(ceems_agent_checkpoint(a, 612 * SEC), 0, "checkpoint");
	ok(!ceems_agent_checkpoint_due(a, 613 * SEC), "then the interval again");
	ceems_agent_release(a, 42);
	is_int(ceems_agent_register(a, &spec, 613 * SEC), 0, "the job registers again");
	advance(0);
	ceems_agent_tick(a, 614 * SEC);
	ok(ceems_agent_checkpoint_due(a, 614 * SEC), "the tick after a job came checkpoints");
	is_int(ceems_agent_checkpoint(a, 614 * SEC), 0, "checkpoint");
	is_int(ceems_agent_step_start(a, 42, "batch", 614 * SEC + SEC / 2), 0, "a step starts");
	advance(0);
	ceems_agent_tick(a, 615 * SEC);
	ok(ceems_agent_checkpoint_due(a, 615 * SEC), "the tick after a step came checkpoints");
	is_int(ceems_agent_checkpoint(a, 615 * SEC), 0, "checkpoint");
	is_int(ceems_agent_step_end(a, 42, "batch", 615 * SEC + SEC / 2, &st), 0, "the step ends");
	advance(0);
	ceems_agent_tick(a, 616 * SEC);
	ok(ceems_agent_checkpoint_due(a, 616 * SEC), "the tick after a step ended checkpoints");
	is_int(ceems_agent_deregister(a, 42, 616 * SEC, &r), 0, "the job leaves");
	ceems_agent_release(a, 42);
	ceems_agent_open_close(a);

	c.checkpoint_interval_ns = 0;
	a = ceems_agent_open(&c, 620 * SEC, err, sizeof(err));
	ok(a != NULL && ceems_agent_checkpoint_due(a, 620 * SEC) &&
	   ceems_agent_checkpoint(a, 620 * SEC) == 0 &&
	   ceems_agent_checkpoint_due(a, 620 * SEC),
	   "checkpoint_interval 0: every tick");
	ceems_agent_open_close(a);
}

/* The tick's period: idle_interval while no job is held and the idle
 * power is known (configured, or learned from the quiet ticks, which
 * come at the interval until then), the interval as soon as a job comes
 * and until its record is written. */
static void
test_idle_tick_period(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	uint64_t t = 700 * SEC;

	base_config(&c);
	c.interval_ns = SEC;
	c.idle_interval_ns = 10 * SEC;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	is_int(ceems_agent_tick_period_ns(a), SEC,
	       "before its first ticks (what the node measures unknown): every interval");
	for (int i = 1; i <= 2; i++) {
		advance(0);
		ceems_agent_tick(a, t + (uint64_t)i * SEC);
	}
	is_int(ceems_agent_tick_period_ns(a), 10 * SEC,
	       "no job, idle power configured: a tick every idle_interval");
	t += 2 * SEC;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, t), 0, "job registers");
	is_int(ceems_agent_tick_period_ns(a), SEC, "a job held: every interval");
	advance(SEC);
	ceems_agent_tick(a, t + SEC);
	is_int(ceems_agent_deregister(a, 42, t + SEC, &r), 0, "the job leaves");
	is_int(ceems_agent_tick_period_ns(a), SEC,
	       "its record not written yet: still every interval");
	ceems_agent_release(a, 42);
	is_int(ceems_agent_tick_period_ns(a), 10 * SEC, "its record written: idle_interval again");
	ceems_agent_open_close(a);

	c.idle_interval_ns = SEC / 2;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	ok(a != NULL && ceems_agent_tick_period_ns(a) == SEC,
	   "an idle_interval under the interval: every interval");
	ceems_agent_open_close(a);

	/* The package's idle power to learn: quiet ticks at the interval
	 * until the learner has its first value. */
	base_config(&c);
	c.interval_ns = SEC;
	c.idle_interval_ns = 10 * SEC;
	c.idle_power_package_w = -1;
	a = ceems_agent_open(&c, t, err, sizeof(err));
	if (!ok(a != NULL, "agent learning the idle power opens (%s)", err))
		return;
	for (int i = 1; i <= 2; i++) {
		move(20, 20, 2, 0, 0);
		ceems_agent_tick(a, t + (uint64_t)i * SEC);
	}
	is_int(ceems_agent_tick_period_ns(a), SEC, "learning: every interval");
	for (int i = 3; i <= 8; i++) {
		move(20, 20, 2, 0, 0);
		ceems_agent_tick(a, t + (uint64_t)i * SEC);
	}
	is_int(ceems_agent_tick_period_ns(a), 10 * SEC,
	       "learned from its quiet ticks: idle_interval");
	ceems_agent_open_close(a);
}

int
main(void)
{
	ceems_log_set_handler(log_tap_warnings, NULL);
	make_trees();
	test_idle_job_steps_not_read();
	test_checkpoint_cadence();
	test_idle_tick_period();
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
