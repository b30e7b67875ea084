/* energy_reading.c - the plugin's cumulative reading and its power
 * between polls (energy_reading.h). */
#include "config.h"

#include <string.h>

#include "energy_reading.h"

void
ceems_energy_reading_init(struct ceems_energy_reading *r)
{
	memset(r, 0, sizeof(*r));
}

/* The reading is JOULES at NOW_S. */
static void
take(struct ceems_energy_reading *r, double joules, double now_s)
{
	double dt;

	if (!r->known) {
		r->known = true;
		r->first_s = now_s;
		r->last_s = now_s;
		r->joules = r->prev_joules = joules;
		return;
	}
	if (joules < r->joules)
		joules = r->joules;
	dt = now_s - r->last_s;
	/* Readings closer than a tenth of a second say little of power. */
	if (dt >= 0.1) {
		r->watts = (joules - r->joules) / dt;
		r->prev_joules = r->joules;
		r->last_s = now_s;
	}
	r->joules = joules;
	if (now_s - r->first_s > 0)
		r->ave_watts = r->joules / (now_s - r->first_s);
}

void
ceems_energy_reading_step(struct ceems_energy_reading *r, double joules,
			  double now_s)
{
	if (joules < 0)
		joules = 0;
	take(r, joules, now_s);
}

void
ceems_energy_reading_node(struct ceems_energy_reading *r, double agent_joules,
			  long agent_pid, double now_s)
{
	double delta;

	if (agent_joules < 0)
		agent_joules = 0;
	if (!r->have_agent) {
		/* The node's figure counts from the plugin's first reading. */
		r->have_agent = true;
		r->agent_pid = agent_pid;
		r->agent_joules = agent_joules;
		take(r, 0, now_s);
		return;
	}
	if (agent_pid != r->agent_pid || agent_joules < r->agent_joules)
		delta = agent_joules;	/* a new agent: its energy since */
	else
		delta = agent_joules - r->agent_joules;
	r->agent_pid = agent_pid;
	r->agent_joules = agent_joules;
	take(r, r->joules + delta, now_s);
}

bool
ceems_energy_reading_silent(struct ceems_energy_reading *r)
{
	if (r->silence_logged)
		return false;
	r->silence_logged = true;
	return true;
}
