/* test_agent_status.c - tools/agent/agent_status.c's totals: ticks add
 * up once each, a restatement's amounts go to idle and the system, and
 * the system's total never goes below 0: what it cannot give back is
 * counted in restated_over_j. */
#include "config.h"

#include <string.h>

#include "agent/agent_status.h"
#include "../tap.h"

static void
tick_of(struct ceems_ledger_tick *t, double delta, double system, double idle)
{
	memset(t, 0, sizeof(*t));
	t->measured[CEEMS_DOMAIN_PACKAGE] = true;
	t->delta_j[CEEMS_DOMAIN_PACKAGE] = delta;
	t->system_j[CEEMS_DOMAIN_PACKAGE] = system;
	t->idle_j[CEEMS_DOMAIN_PACKAGE] = idle;
}

int
main(void)
{
	struct agent_totals tot;
	struct ceems_ledger_tick t;
	const int pkg = CEEMS_DOMAIN_PACKAGE;

	memset(&tot, 0, sizeof(tot));
	tick_of(&t, 100, 30, 20);
	agent_status_totals_add(&tot, &t, 1);
	agent_status_totals_add(&tot, &t, 1);
	is_int((int)tot.ticks, 1, "a tick is added once");
	is_near(tot.system_j[pkg], 30, 0, "its system part");

	/* A restatement: idle gains 15 J, the system gives 15 J and the
	 * 25 J the running jobs gain. */
	tick_of(&t, 100, 30, 20);
	t.restated_idle_j[pkg] = 15;
	t.restated_system_j[pkg] = -40;
	agent_status_totals_add(&tot, &t, 2);
	is_near(tot.idle_j[pkg], 55, 1e-12, "restated: idle takes its part");
	is_near(tot.system_j[pkg], 20, 1e-12, "restated: the system gives what the others gain");
	is_near(tot.restated_over_j[pkg], 0, 0, "restated: nothing over while the system can give it");

	/* More than the system has: it stops at 0, the rest is said. */
	tick_of(&t, 100, 10, 20);
	t.restated_system_j[pkg] = -50;
	agent_status_totals_add(&tot, &t, 3);
	is_near(tot.system_j[pkg], 0, 0, "over: the system's total stops at 0");
	is_near(tot.restated_over_j[pkg], 20, 1e-12, "over: the 20 J it could not give are counted");
	tick_of(&t, 100, 5, 20);
	agent_status_totals_add(&tot, &t, 4);
	is_near(tot.system_j[pkg], 5, 1e-12, "over: later ticks add to the system again");
	return done_testing();
}
