/* sim_rand.h - the random numbers of the simulated nodes of the unit
 * tests: a fixed-seed xorshift, so that a run is the same every time,
 * and normal deviates from it.  One copy per test program. */
#ifndef CEEMS_TEST_SIM_RAND_H
#define CEEMS_TEST_SIM_RAND_H

#include <math.h>
#include <stdint.h>

static uint64_t sim_seed = 0x2545f4914f6cdd1dULL;

/* A uniform deviate in [0, 1). */
static inline double
uniform(void)
{
	sim_seed ^= sim_seed << 13;
	sim_seed ^= sim_seed >> 7;
	sim_seed ^= sim_seed << 17;
	return (double)(sim_seed >> 11) / 9007199254740992.0;
}

/* A standard normal deviate (Box-Muller). */
static inline double
gauss(void)
{
	double u = uniform(), v = uniform();

	if (u < 1e-300)
		u = 1e-300;
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

#endif
