/* test_agent_finish_retry.c - a record the spool does not take is not
 * lost (lib/agent/agent_finish.c): the job's entry stays, the failure is
 * logged once, the record is written again at each sweep and arrives
 * exactly once when the spool takes it again; only then does the job
 * count as ended.  And the list of jobs ended lately matches a note of
 * a job by its start time: a run with no known start time does not hide
 * another run of the same id.  The spool is made read-only by a bind
 * mount in a private mount namespace (root), or by its mode (others). */
#include "config.h"

#include <errno.h>
#include <ftw.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include <sys/stat.h>

#include "agent/agent_finish.h"
#include "base/log.h"
#include "record/spool.h"
#include "../tap.h"

#define SEC 1000000000ULL

static char root_dir[200], spool_dir[230];
static int errors_logged;
static bool bind_mounted;

static void
count_errors(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level == CEEMS_LOG_ERROR)
		errors_logged++;
	if (level <= CEEMS_LOG_WARNING && strncmp(message, "ceems-record", 12) != 0)
		printf("# log: %.200s\n", message);
}

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static size_t
spooled(void)
{
	struct ceems_spool_list list;
	size_t n;

	if (ceems_spool_list(spool_dir, 0, &list) < 0)
		return 0;
	n = list.count;
	ceems_spool_list_free(&list);
	return n;
}

/* Make the spool refuse writes; false when this cannot be done here. */
static bool
spool_read_only(void)
{
	if (geteuid() != 0)
		return chmod(spool_dir, 0500) == 0;
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount(spool_dir, spool_dir, NULL, MS_BIND, NULL) < 0)
		return false;
	bind_mounted = true;
	return mount(NULL, spool_dir, NULL, MS_REMOUNT | MS_BIND | MS_RDONLY,
		     NULL) == 0;
}

static void
spool_writable(void)
{
	if (bind_mounted && umount2(spool_dir, 0) == 0)
		bind_mounted = false;
	chmod(spool_dir, 0700);
}

static void
job_42(struct ceems_agent_job_report *report, struct agent_finish_job *job,
       struct ceems_job_meta *meta)
{
	memset(report, 0, sizeof(*report));
	report->jobid = 42;
	report->uid = 1000;
	memset(job, 0, sizeof(*job));
	job->slot = -1;
	job->start_time = 1700000000;
	job->end_time = 1700000600;
	job->start_from_slurm = true;
	ceems_job_meta_init(meta);
	meta->jobid = 42;
	meta->uid = 1000;
	meta->start_time = 1700000000;
	meta->end_time = 1700000600;
	snprintf(meta->state, sizeof(meta->state), "COMPLETED");
}

static void
test_spool_refuses(struct agent_finish *f)
{
	static const bool measured[CEEMS_DOMAIN_COUNT];
	static struct ceems_agent_job_report report;
	struct agent_finish_job job;
	struct ceems_job_meta meta;
	int first_errors;

	job_42(&report, &job, &meta);
	is_int(ceems_agent_finish_add(f, &report, &job, 10 * SEC), 0,
	       "job 42 waits for its end");
	errors_logged = 0;
	ok(ceems_agent_finish_end_now(f, 42, &meta, "epilog") < 0,
	   "the epilog's end: the spool does not take the record");
	first_errors = errors_logged;
	ok(first_errors > 0, "the failure is logged (%d lines)", first_errors);
	is_int((int)ceems_agent_finish_count(f), 1, "the job's entry is kept");
	ok(!ceems_agent_finish_ended(f, 42, 1700000000),
	   "the job does not count as ended");
	is_int(ceems_agent_finish_expire(f, 11 * SEC, 0), 0,
	       "a sweep tries again: still refused");
	is_int(ceems_agent_finish_expire(f, 12 * SEC, 0), 0, "and another");
	is_int(errors_logged, first_errors, "no error logged again");
	is_int((int)ceems_agent_finish_count(f), 1, "the entry is still kept");

	/* A reaped job: no entry before, one kept now. */
	report.jobid = 43;
	ok(ceems_agent_finish_now(f, &report, &job, "its cgroup was gone") < 0,
	   "a reaped job's record is refused too");
	is_int((int)ceems_agent_finish_count(f), 2, "and kept");
	/* More than the table's 4 jobs waiting for a release. */
	for (uint32_t id = 50; id < 56; id++) {
		report.jobid = id;
		meta.jobid = id;
		ceems_agent_finish_add(f, &report, &job, 13 * SEC);
		ceems_agent_finish_end_now(f, id, &meta, "epilog");
	}
	is_int((int)ceems_agent_finish_count(f), 8,
	       "more records than jobs that wait for a release are kept");
	is_int((int)spooled(), 0, "the spool has nothing");

	/* A job note's record: its note stays, taken again at each tick. */
	meta.jobid = 60;
	ok(ceems_agent_finish_unmeasured(f, &meta, measured, "a test") < 0,
	   "a job note's record is refused");
	first_errors = errors_logged;
	ok(ceems_agent_finish_unmeasured(f, &meta, measured, "a test") < 0,
	   "at the next tick too");
	is_int(errors_logged, first_errors, "logged once, not at every tick");

	spool_writable();
	is_int(ceems_agent_finish_expire(f, 13 * SEC, 0), 8,
	       "the next sweep writes all the records");
	is_int((int)spooled(), 8, "the spool has them");
	is_int((int)ceems_agent_finish_count(f), 0, "nothing is kept any more");
	ok(ceems_agent_finish_ended(f, 42, 1700000000), "job 42 counts as ended now");
	is_int(ceems_agent_finish_unmeasured(f, &meta, measured, "a test"), 0,
	       "the job note's record is written once the spool takes it");
	is_int(ceems_agent_finish_expire(f, 14 * SEC, 0), 0, "a later sweep writes nothing");
	is_int(ceems_agent_finish_end_now(f, 42, &meta, "epilog"), -ENOENT,
	       "a later word of job 42 finds nothing to write");
	is_int((int)spooled(), 9, "each record arrived exactly once");
}

/* A record written with no start time (the note had none) and a note of
 * another run of the same id, with its start time. */
static void
test_ended_runs(struct agent_finish *f)
{
	static const bool measured[CEEMS_DOMAIN_COUNT];
	struct ceems_job_meta meta;

	ceems_job_meta_init(&meta);
	meta.jobid = 77;
	meta.uid = 1000;
	is_int(ceems_agent_finish_unmeasured(f, &meta, measured, "a test"), 0,
	       "job 77's record, with no start time");
	ok(ceems_agent_finish_ended(f, 77, 0), "a note of it with none is its own");
	ok(!ceems_agent_finish_ended(f, 77, 1700005000),
	   "a note of a run with a start time is another run's");
	meta.jobid = 78;
	meta.start_time = 1700006000;
	meta.end_time = 1700006100;
	is_int(ceems_agent_finish_unmeasured(f, &meta, measured, "a test"), 0,
	       "job 78's record, with its start time");
	ok(ceems_agent_finish_ended(f, 78, 1700006000), "the same run matches");
	ok(!ceems_agent_finish_ended(f, 78, 0), "a note with no start time does not");
	ok(!ceems_agent_finish_ended(f, 78, 1700007000), "another run does not");
}

int
main(void)
{
	struct ceems_config c;
	struct agent_finish *f;

	ceems_log_set_handler(count_errors, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	snprintf(root_dir, sizeof(root_dir), "%s/ceems-test-retry-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root_dir) == NULL) {
		printf("Bail out! mkdtemp %s: %s\n", root_dir, strerror(errno));
		return 1;
	}
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", root_dir);
	mkdir(spool_dir, 0700);
	ceems_conf_defaults(&c);
	snprintf(c.spool_dir, sizeof(c.spool_dir), "%s", spool_dir);
	snprintf(c.cluster, sizeof(c.cluster), "testcluster");
	f = ceems_agent_finish_new(&c, NULL, 4);
	if (!ok(f != NULL, "finishing table"))
		return done_testing();
	if (spool_read_only() && access(spool_dir, W_OK) < 0)
		test_spool_refuses(f);
	else
		printf("ok %d # SKIP the spool cannot be made read-only here (%s)\n",
		       ++tap_count, strerror(errno));
	spool_writable();
	test_ended_runs(f);
	ceems_agent_finish_free(f);
	nftw(root_dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
	return done_testing();
}
