/* acct_gather_energy_ceems.c - the entry points of the Slurm plugin
 * acct_gather_energy/ceems (AcctGatherEnergyType=acct_gather_energy/ceems):
 * Slurm's own energy accounting (sacct, sstat, sreport, scontrol show
 * node) fed by the ceems node agent.  In slurmstepd the energy is the
 * step's attributed share, the job's for the extern step
 * (energy_source.h); in slurmd, the node's.
 * Every reading is bounded in time; an agent that does not answer leaves
 * the last value in place and is logged once per process.  Built from
 * Slurm's public headers; Slurm loads it only if plugin_version is its
 * own SLURM_VERSION_NUMBER, so it is built per Slurm release. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include <slurm/slurm.h>
#include <slurm/slurm_errno.h>
#include <slurm/spank.h>

#include "energy_reading.h"
#include "energy_source.h"

/* The entry points Slurm looks up (src/interfaces/acct_gather_energy.h
 * in Slurm's source; Slurm's option and hash-table types, which are not
 * public, are opaque pointers here). */
int init(void);
int fini(void);
int acct_gather_energy_p_update_node_energy(void);
int acct_gather_energy_p_get_data(enum acct_energy_type data_type, void *data);
int acct_gather_energy_p_set_data(enum acct_energy_type data_type, void *data);
void acct_gather_energy_p_conf_options(void **full_options,
				       int *full_options_cnt);
void acct_gather_energy_p_conf_set(int context_id_in, void *tbl);
void acct_gather_energy_p_conf_values(void **data);

const char plugin_name[] = "AcctGatherEnergy ceems plugin";
const char plugin_type[] = "acct_gather_energy/ceems";
const uint32_t plugin_version = SLURM_VERSION_NUMBER;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool opened;
static struct ceems_energy_source_agent source;
static struct ceems_energy_reading reading;

static double
monotonic_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Under LOCK: find the agent's socket and this process's step once. */
static void
open_source(void)
{
	char err[512] = "";

	if (opened)
		return;
	opened = true;
	ceems_energy_reading_init(&reading);
	if (ceems_energy_source_open(&source, err, sizeof(err)) != 0)
		slurm_info("acct_gather_energy/ceems: no energy figures here: %s", err);
	else if (source.daemon == CEEMS_ENERGY_SLURMSTEPD)
		slurm_debug("acct_gather_energy/ceems: step %" PRIu32 ".%s on node %s, agent at %s",
			    source.jobid, source.step,
			    source.node[0] != '\0' ? source.node : "?",
			    source.socket_path);
}

/* Under LOCK: ask the agent for a new reading; a silence keeps the last. */
static void
refresh(void)
{
	char err[512] = "";
	double joules;
	long pid;
	int rc = -ENOENT;

	open_source();
	if (source.daemon == CEEMS_ENERGY_SLURMSTEPD)
		rc = ceems_energy_source_read_step(&source, &joules, err,
						   sizeof(err));
	else if (source.daemon == CEEMS_ENERGY_SLURMD)
		rc = ceems_energy_source_read_node(&source, &joules, &pid, err,
						   sizeof(err));
	else
		return;
	if (rc == 0) {
		if (source.daemon == CEEMS_ENERGY_SLURMSTEPD)
			ceems_energy_reading_step(&reading, joules, monotonic_s());
		else
			ceems_energy_reading_node(&reading, joules, pid,
						  monotonic_s());
		return;
	}
	if (rc == -ENODATA) {
		/* The agent answers: the step is younger than its tick. */
		slurm_debug("acct_gather_energy/ceems: %s", err);
		return;
	}
	if (ceems_energy_reading_silent(&reading))
		slurm_info("acct_gather_energy/ceems: the node agent at %s gave no energy (%s): the last value is kept",
			   source.socket_path, err);
}

static uint32_t
watts_of(double w)
{
	if (!(w > 0))
		return 0;
	return w >= (double)UINT32_MAX - 1 ? UINT32_MAX - 1 : (uint32_t)lround(w);
}

/* Under LOCK: the reading as Slurm's structure.  Unknown stays unknown:
 * a figure never read is NO_VAL64, not 0 J, and a node's power never
 * read is NO_VAL (scontrol shows n/s), as Slurm's own plugins leave a
 * sensor they cannot read. */
static void
fill(acct_gather_energy_t *e)
{
	memset(e, 0, sizeof(*e));
	if (!reading.known) {
		e->consumed_energy = NO_VAL64;
		if (source.daemon == CEEMS_ENERGY_SLURMD)
			e->current_watts = NO_VAL;
		return;
	}
	e->consumed_energy = (uint64_t)llround(reading.joules);
	e->previous_consumed_energy = (uint64_t)llround(reading.prev_joules);
	e->current_watts = watts_of(reading.watts);
	e->ave_watts = watts_of(reading.ave_watts);
	e->poll_time = time(NULL) - (time_t)(monotonic_s() - reading.last_s);
}

int
init(void)
{
	return SLURM_SUCCESS;
}

int
fini(void)
{
	return SLURM_SUCCESS;
}

int
acct_gather_energy_p_update_node_energy(void)
{
	pthread_mutex_lock(&lock);
	refresh();
	pthread_mutex_unlock(&lock);
	return SLURM_SUCCESS;
}

int
acct_gather_energy_p_get_data(enum acct_energy_type data_type, void *data)
{
	int rc = SLURM_SUCCESS;

	pthread_mutex_lock(&lock);
	switch (data_type) {
	case ENERGY_DATA_JOULES_TASK:
	case ENERGY_DATA_NODE_ENERGY_UP:
		refresh();
		fill(data);
		break;
	case ENERGY_DATA_STRUCT:
	case ENERGY_DATA_NODE_ENERGY:
		/* The last reading: slurmd asks at its registration, before
		 * the SPANK plugin has started the agent; the readings come
		 * with AcctGatherNodeFreq (update_node_energy). */
		open_source();
		fill(data);
		break;
	case ENERGY_DATA_LAST_POLL:
		open_source();
		*(time_t *)data = reading.known ?
			time(NULL) - (time_t)(monotonic_s() - reading.last_s) : 0;
		break;
	case ENERGY_DATA_SENSOR_CNT:
		*(uint16_t *)data = 1;
		break;
	default:
		rc = SLURM_ERROR;
		break;
	}
	pthread_mutex_unlock(&lock);
	return rc;
}

int
acct_gather_energy_p_set_data(enum acct_energy_type data_type, void *data)
{
	(void)data;
	if (data_type == ENERGY_DATA_PROFILE) {
		pthread_mutex_lock(&lock);
		refresh();
		pthread_mutex_unlock(&lock);
	}
	/* ENERGY_DATA_RECONFIG, ENERGY_DATA_STEP_PTR: nothing to keep (the
	 * step is known from this process's own cgroup). */
	return SLURM_SUCCESS;
}

/* No acct_gather.conf option: the agent's socket comes from ceems.conf. */
void
acct_gather_energy_p_conf_options(void **full_options, int *full_options_cnt)
{
	(void)full_options;
	(void)full_options_cnt;
}

void
acct_gather_energy_p_conf_set(int context_id_in, void *tbl)
{
	(void)context_id_in;
	(void)tbl;
}

void
acct_gather_energy_p_conf_values(void **data)
{
	(void)data;
}
