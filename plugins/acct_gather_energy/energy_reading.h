/* energy_reading.h - what the acct_gather_energy/ceems plugin keeps
 * between Slurm's polls: the last cumulative joules the agent gave, the
 * power between two readings, and whether the agent's silence has been
 * logged.  A poll the agent cannot answer changes nothing (the last value
 * is kept, no joule is invented); a figure never read stays unknown.  No
 * Slurm type here. */
#ifndef CEEMS_ENERGY_READING_H
#define CEEMS_ENERGY_READING_H

#include <stdbool.h>

struct ceems_energy_reading {
	bool known;		/* some reading succeeded */
	double joules;		/* cumulative, J */
	double prev_joules;	/* the reading before, J */
	double first_s;		/* monotonic time of the first reading */
	double last_s;		/* of the last one */
	double watts;		/* between the last two readings */
	double ave_watts;	/* joules over the time since the first */
	/* slurmd: the agent's own figure (since it started) and its pid, so
	 * that an agent restarted (a new pid, or a figure that went back)
	 * adds what it measured since, never a negative delta. */
	bool have_agent;
	long agent_pid;
	double agent_joules;
	bool silence_logged;	/* the agent's silence was logged */
};

void ceems_energy_reading_init(struct ceems_energy_reading *r);

/* A step's cumulative joules read at NOW_S (monotonic seconds).  A
 * figure below the last one is taken as the last one (a step's energy
 * never goes back). */
void ceems_energy_reading_step(struct ceems_energy_reading *r, double joules,
			       double now_s);

/* The node's joules since the agent of pid AGENT_PID started, read at
 * NOW_S: the reading grows by the agent's delta since the last one. */
void ceems_energy_reading_node(struct ceems_energy_reading *r,
			       double agent_joules, long agent_pid,
			       double now_s);

/* A poll the agent did not answer: true the first time only (the caller
 * logs one line), nothing else changes. */
bool ceems_energy_reading_silent(struct ceems_energy_reading *r);

#endif
