/* storage-driver.c - drives libceems storage the way the plugin and the
 * node agent do, without Slurm, for tests/integration/storage.bats:
 *
 *   storage-driver store CONF COUNT FIRST_JOBID [bad|refused|series|perf]
 *       build COUNT records (job ids FIRST_JOBID...) as the plugin does
 *       at job end and store each with ceems_storage_store; "bad" makes
 *       them invalid (end before start), "refused" valid for libceems
 *       but not for the database's constraints (a static energy larger
 *       than the energy it is part of); "series" gives each a time series
 *       of 20 rows of 30 s (cpu_s 60 and package_j 1/20 of the job's
 *       each, dram_j unknown); "perf" gives each perf counters (software
 *       measured: context switches 1000 + the job id, page faults
 *       2000 + it, task clock 1 s, no migration figure; hardware not
 *       supported).  Prints
 *       "database=N spool=N rejected=N failed=N".
 *   storage-driver replay CONF once|all [BATCH [MAX]]
 *       once: one ceems_replay_run with the agent's limits (BATCH records
 *       a statement and MAX records a run if given); all: runs until the
 *       spool is empty or a run fails.  Prints
 *       "stored=N set_aside=N left=N error=E".
 *
 * The records' user is alice (uid 1000), or NAME and UID where
 * STORAGE_DRIVER_USER=NAME:UID says (a real user of this machine, who
 * runs ceems-sacct in storage.bats).
 *
 * Log lines go to stderr ("ceems: LEVEL: ..."). */
#include "config.h"

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/agent_series.h"
#include "base/conf.h"
#include "base/log.h"
#include "record/record.h"
#include "record/replay.h"
#include "record/storage.h"

enum flaw { NONE, BAD, REFUSED, SERIES, PERF };

#define SERIES_ROWS 20

/* Row I's GPU utilisation: unknown in the first row, then 0 to 100. */
static double
series_gpu_util(int i)
{
	return i == 0 ? NAN : 12.5 * (i % 9);
}

/* The records' owner (STORAGE_DRIVER_USER). */
static char owner_name[64] = "alice";
static uint32_t owner_uid = 1000;

static int
owner_from_env(void)
{
	const char *v = getenv("STORAGE_DRIVER_USER"), *colon;
	unsigned long uid;
	char *end;

	if (v == NULL)
		return 0;
	colon = strchr(v, ':');
	if (colon == NULL || colon == v || (size_t)(colon - v) >= sizeof(owner_name))
		return -1;
	uid = strtoul(colon + 1, &end, 10);
	if (*end != '\0' || end == colon + 1 || uid >= UINT32_MAX)
		return -1;
	snprintf(owner_name, sizeof(owner_name), "%.*s", (int)(colon - v), v);
	owner_uid = (uint32_t)uid;
	return 0;
}

static void
build(struct ceems_job_record *r, const struct ceems_config *c,
      uint32_t jobid, int64_t now, enum flaw flaw)
{
	struct ceems_job_meta meta;
	struct ceems_agent_job_report rep;

	ceems_job_meta_init(&meta);
	meta.jobid = jobid;
	meta.uid = owner_uid;
	snprintf(meta.cluster, sizeof(meta.cluster), "%s", c->cluster);
	snprintf(meta.node, sizeof(meta.node), "node01");
	snprintf(meta.user, sizeof(meta.user), "%s", owner_name);
	snprintf(meta.account, sizeof(meta.account), "physics");
	snprintf(meta.partition, sizeof(meta.partition), "cpu");
	snprintf(meta.name, sizeof(meta.name), "job %u", (unsigned)jobid);
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.exit_code = 0;
	meta.submit_time = now - 700;
	meta.start_time = now - 600;
	meta.end_time = flaw == BAD ? now - 900 : now - 1;
	meta.alloc_cpus = 4;
	meta.nnodes = 1;
	snprintf(meta.nodes, sizeof(meta.nodes), "node01");
	memset(&rep, 0, sizeof(rep));
	rep.jobid = jobid;
	rep.uid = owner_uid;
	rep.alloc_cores = 4;
	rep.elapsed_s = 599;
	rep.cpu_s = 1200;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.ledger.lifetime_s = 599;
	rep.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	rep.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 1000.0 + jobid;
	rep.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 599;
	if (flaw == SERIES) {
		static struct ceems_series *series;
		double joules[CEEMS_DOMAIN_COUNT] = { 0 };
		double t0 = (double)(meta.start_time / 30 * 30 + 30);

		ceems_agent_series_free(series);
		series = ceems_agent_series_new(30, CEEMS_SERIES_MAX_ROWS);
		for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
			joules[d] = d == CEEMS_DOMAIN_PACKAGE ?
				    rep.ledger.joules[d] / SERIES_ROWS : NAN;
		for (int i = 0; series != NULL && i < SERIES_ROWS; i++) {
			struct ceems_series_counts delta;

			/* IO and page faults counted, the network not. */
			ceems_agent_series_counts_unknown(&delta);
			delta.v[CEEMS_SC_READ_BYTES] = 1000.0 * i;
			delta.v[CEEMS_SC_PAGE_FAULTS] = 10;
			ceems_agent_series_add_counts(series, t0 + 30.0 * (i + 1), 30, 60,
						1e9 + i, joules, series_gpu_util(i),
						&delta);
		}
		rep.series = series;
	}
	if (flaw == PERF) {
		rep.perf.sw_status = CEEMS_PERF_MEASURED;
		rep.perf.hw_status = CEEMS_PERF_NOT_SUPPORTED;
		rep.perf.running_fraction = 1;
		rep.perf.present = 1u << CEEMS_PERF_CONTEXT_SWITCHES |
				   1u << CEEMS_PERF_PAGE_FAULTS |
				   1u << CEEMS_PERF_TASK_CLOCK;
		rep.perf.value[CEEMS_PERF_CONTEXT_SWITCHES] = 1000.0 + jobid;
		rep.perf.value[CEEMS_PERF_PAGE_FAULTS] = 2000.0 + jobid;
		rep.perf.value[CEEMS_PERF_TASK_CLOCK] = 1e9;
		/* Odd jobs ran across an agent restart: 2.5 s not counted. */
		if (jobid % 2 == 1)
			rep.perf.unmeasured_s = 2.5;
	}
	if (flaw == REFUSED)
		rep.ledger.static_j[CEEMS_DOMAIN_PACKAGE] = 2 * (1000.0 + jobid);
	ceems_record_build(r, &meta, &rep, "extern", now);
}

static int
store(const struct ceems_config *c, unsigned count, uint32_t first,
      enum flaw flaw)
{
	static struct ceems_job_record r;
	unsigned in_db = 0, spooled = 0, rejected = 0, failed = 0;
	int64_t now = (int64_t)time(NULL);
	char err[1024];

	for (unsigned i = 0; i < count; i++) {
		int ret;

		build(&r, c, first + i, now, flaw);
		ret = ceems_storage_store(c, &r, err, sizeof(err));
		if (ret == CEEMS_STORED_DATABASE)
			in_db++;
		else if (ret == CEEMS_STORED_SPOOL)
			spooled++;
		else if (ret == -EINVAL)
			rejected++;
		else
			failed++;
		if (ret < 0)
			fprintf(stderr, "store: %s\n", err);
	}
	printf("database=%u spool=%u rejected=%u failed=%u\n", in_db, spooled,
	       rejected, failed);
	return 0;
}

static int
replay(const struct ceems_config *c, bool all, unsigned batch, unsigned max)
{
	struct ceems_replay_limits limits;
	struct ceems_replay_stats st, total;
	struct ceems_replay *rp;

	ceems_replay_default_limits(&limits);
	if (batch > 0)
		limits.batch_max = batch;
	if (max > 0)
		limits.max_records = max;
	rp = ceems_replay_new(c, &limits);

	if (rp == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	memset(&total, 0, sizeof(total));
	for (int i = 0; i < 10000; i++) {
		ceems_replay_run(rp, &st);
		total.stored += st.stored;
		total.set_aside += st.set_aside;
		total.left = st.left;
		total.error = st.error;
		if (!all || st.error != 0 || st.left == 0)
			break;
	}
	ceems_replay_free(rp);
	printf("stored=%u set_aside=%u left=%u error=%d\n", total.stored,
	       total.set_aside, total.left, total.error);
	return 0;
}

int
main(int argc, char **argv)
{
	static struct ceems_config c;
	char err[512];

	if (argc < 4) {
		fprintf(stderr, "usage: %s store CONF COUNT FIRST_JOBID [bad] | "
			"replay CONF once|all [BATCH [MAX]]\n", argv[0]);
		return 2;
	}
	if (owner_from_env() < 0) {
		fprintf(stderr, "STORAGE_DRIVER_USER: NAME:UID\n");
		return 2;
	}
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	ceems_conf_defaults(&c);
	if (ceems_conf_load(&c, argv[2], err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return 2;
	}
	if (strcmp(argv[1], "store") == 0 && argc >= 5)
		return store(&c, (unsigned)strtoul(argv[3], NULL, 10),
			     (uint32_t)strtoul(argv[4], NULL, 10),
			     argc <= 5 ? NONE : strcmp(argv[5], "bad") == 0 ? BAD :
			     strcmp(argv[5], "refused") == 0 ? REFUSED :
			     strcmp(argv[5], "series") == 0 ? SERIES :
			     strcmp(argv[5], "perf") == 0 ? PERF : NONE);
	if (strcmp(argv[1], "replay") == 0)
		return replay(&c, strcmp(argv[3], "all") == 0,
			      argc > 4 ? (unsigned)strtoul(argv[4], NULL, 10) : 0,
			      argc > 5 ? (unsigned)strtoul(argv[5], NULL, 10) : 0);
	fprintf(stderr, "unknown command %s\n", argv[1]);
	return 2;
}
