/* bench_ingest.c - bulk ingest through the writer's real code path, for
 * tests/bench/bench_storage.sh (doc/performance.md, "Storage"): COUNT
 * records are built as the plugin builds them at job end and put in a
 * spool (ceems_spool_put, as when the database is down), then the node
 * agent's replay (ceems_replay_run) stores them BATCH per statement
 * (1: one by one, ceems.upsert_job_record).  Prints records/s of the
 * replay alone.
 *
 *   bench_ingest SPOOL_DIR CONNINFO COUNT BATCH
 *
 * Job ids continue from the largest one already in the spool's database
 * run (they start at a clock-derived number), so that each run inserts
 * new jobs rather than replaying old ones. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "base/conf.h"
#include "base/log.h"
#include "record/record.h"
#include "record/replay.h"
#include "record/spool.h"
#include "record/storage.h"

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* A single-node batch job of user uNNNN as the plugin records it: its
 * usage, package and DRAM energy, and its two steps (batch, extern), each
 * with CPU time, memory peak and energy. */
static void
build(struct ceems_job_record *r, uint32_t jobid, int64_t now)
{
	struct ceems_job_meta meta;
	struct ceems_agent_job_report rep;
	unsigned user = jobid % 2000;

	ceems_job_meta_init(&meta);
	meta.jobid = jobid;
	meta.uid = 10000 + user;
	snprintf(meta.cluster, sizeof(meta.cluster), "bench");
	snprintf(meta.node, sizeof(meta.node), "n%03u", jobid % 500);
	snprintf(meta.user, sizeof(meta.user), "u%04u", user);
	snprintf(meta.account, sizeof(meta.account), "acct%u", user % 200);
	snprintf(meta.partition, sizeof(meta.partition), "cpu");
	snprintf(meta.name, sizeof(meta.name), "job-%u", jobid % 1000);
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.exit_code = 0;
	meta.submit_time = now - 4000;
	meta.start_time = now - 3600;
	meta.end_time = now - 1;
	meta.alloc_cpus = 16;
	meta.nnodes = 1;
	snprintf(meta.nodes, sizeof(meta.nodes), "%s", meta.node);
	memset(&rep, 0, sizeof(rep));
	rep.jobid = jobid;
	rep.uid = meta.uid;
	rep.alloc_cores = 16;
	rep.elapsed_s = 3599;
	rep.cpu_s = 30000;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.ledger.lifetime_s = 3599;
	rep.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	rep.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 500000.0 + jobid % 1000;
	rep.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 3599;
	rep.ledger.measured[CEEMS_DOMAIN_DRAM] = true;
	rep.ledger.joules[CEEMS_DOMAIN_DRAM] = 50000.0;
	rep.ledger.covered_s[CEEMS_DOMAIN_DRAM] = 3599;
	rep.usage.present = CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_PEAK |
			    CEEMS_CGF_MEM_LIMIT;
	rep.usage.cpu_usage_ns = UINT64_C(30000) * 1000000000u;
	rep.usage.mem_peak_bytes = UINT64_C(3) << 30;
	rep.usage.mem_limit_bytes = UINT64_C(32) << 30;
	rep.nsteps = 2;
	for (unsigned i = 0; i < rep.nsteps; i++) {
		struct ceems_agent_step_report *st = &rep.steps[i];

		snprintf(st->id, sizeof(st->id), "%s", i == 0 ? "batch" : "extern");
		st->ended = true;
		st->elapsed_s = 3599;
		st->have_cpu = true;
		st->cpu_s = i == 0 ? 29990 : 10;
		st->have_mem_peak = true;
		st->mem_peak_bytes = i == 0 ? UINT64_C(3) << 30 : UINT64_C(1) << 20;
		for (int d = CEEMS_DOMAIN_PACKAGE; d <= CEEMS_DOMAIN_DRAM; d++) {
			st->have_joules[d] = true;
			st->joules[d] = rep.ledger.joules[d] * (i == 0 ? 0.999 : 0.001);
		}
	}
	ceems_record_build(r, &meta, &rep, "extern", now);
}

static int
put(const char *dir, const char *name, const char *text, size_t len)
{
	char path[4096];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wx");
	if (f == NULL)
		return -1;
	ok = fwrite(text, 1, len, f) == len;
	return fclose(f) == 0 && ok ? 0 : -1;
}

int
main(int argc, char **argv)
{
	static struct ceems_config c;
	static struct ceems_job_record r;
	static char text[CEEMS_RECORD_MAX + 1];
	struct ceems_replay_limits limits;
	struct ceems_replay_stats st;
	struct ceems_replay *rp;
	char name[CEEMS_SPOOL_NAME_MAX + 8];
	unsigned count, batch, stored = 0, calls = 0;
	int64_t now = (int64_t)time(NULL);
	uint32_t first;
	double t0, t;

	if (argc != 5) {
		fprintf(stderr, "usage: %s SPOOL_DIR CONNINFO COUNT BATCH\n", argv[0]);
		return 2;
	}
	count = (unsigned)strtoul(argv[3], NULL, 10);
	batch = (unsigned)strtoul(argv[4], NULL, 10);
	ceems_conf_defaults(&c);
	snprintf(c.cluster, sizeof(c.cluster), "bench");
	snprintf(c.spool_dir, sizeof(c.spool_dir), "%s", argv[1]);
	snprintf(c.database, sizeof(c.database), "%s", argv[2]);
	c.spool_max_bytes = UINT64_C(1) << 34;
	c.database_timeout_ns = 60 * UINT64_C(1000000000);

	/* New job ids for every run of one bench (a run a second apart at
	 * most every ~4000 s would reuse them: not a concern here). */
	first = 1 + (uint32_t)((uint64_t)now % 100000) * 40000u;
	for (unsigned i = 0; i < count; i++) {
		int len;

		build(&r, first + i, now);
		len = ceems_record_encode(&r, text, sizeof(text));
		if (len < 0 || ceems_spool_name(&r, name, sizeof(name)) < 0 ||
		    put(c.spool_dir, name, text, (size_t)len) < 0) {
			fprintf(stderr, "cannot spool record %u\n", i);
			return 1;
		}
	}

	/* The node agent's limits and pace (its waits between runs
	 * included), but the batch size. */
	ceems_replay_default_limits(&limits);
	limits.batch_max = batch;
	rp = ceems_replay_new(&c, &limits);
	if (rp == NULL) {
		fprintf(stderr, "out of memory\n");
		return 1;
	}
	t0 = now_s();
	for (;;) {
		uint64_t wait_ns = ceems_replay_run(rp, &st);
		struct timespec ts = { (time_t)(wait_ns / 1000000000u),
				       (long)(wait_ns % 1000000000u) };

		stored += st.stored;
		calls++;
		if (st.error != 0 || st.left == 0)
			break;
		nanosleep(&ts, NULL);
	}
	t = now_s() - t0;
	ceems_replay_free(rp);
	if (st.error != 0 || stored != count) {
		fprintf(stderr, "replay stopped: error %d, %u of %u stored\n",
			st.error, stored, count);
		return 1;
	}
	printf("ingest: %u records, %u per statement: %.2f s, %.0f records/s\n",
	       count, batch, t, count / t);
	return 0;
}
