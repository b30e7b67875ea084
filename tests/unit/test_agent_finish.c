/* test_agent_finish.c - the two-phase end of a job in the node agent's
 * engine (lib/agent/agent_finish.c): a deregistered job waits for its release
 * and a repeated deregistration gets the same report; without a release
 * within finish_grace, or when the reply could not be sent, the agent
 * spools the record itself; a job whose cgroup vanished without a
 * deregistration (stale state slot after a restart) is reaped after
 * reap_grace; one whose extern slurmstepd died asks for slurmctld's
 * word.  A record the agent writes has Slurm's start time and
 * cluster when the plugin sent them, else the registration time, and
 * says which.  Fixture trees as in test_agent.c. */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
#include <stdlib.h>
#include <sys/stat.h>

#include "agent/agent.h"
#include "agent/agent_finish.h"
#include "agent/agent_internal.h"
#include "base/fileio.h"
#include "record/job_note.h"
#include "base/log.h"
#include "record/record.h"
#include "record/spool.h"
#include "../tap.h"
#include "fixture.h"
#include "tmptree.h"
#include "agent_sim.h"

static char spool_dir[256];
static int info_reaped;		/* info lines that say a job was reaped */

/* The simulated node of agent_sim.h, its spool beside its state. */
static void
make_finish_trees(void)
{
	make_trees();
	snprintf(spool_dir, sizeof(spool_dir), "%s/spool", proc_root);
}

/* The configuration these tests run the agent with: no idle power
 * configured, a cluster named. */
static void
finish_config(struct ceems_config *c)
{
	ceems_conf_defaults(c);
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "%s", sys_root);
	snprintf(c->procfs_root, sizeof(c->procfs_root), "%s", proc_root);
	snprintf(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix), "%s", cg_root);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	snprintf(c->spool_dir, sizeof(c->spool_dir), "%s", spool_dir);
	snprintf(c->cluster, sizeof(c->cluster), "testcluster");
	c->usage_interval_ns = SEC;
	c->max_jobs = 4;
}


static void
job_runs(unsigned long long cpu_ns)
{
	char text[32];

	job_ns += cpu_ns;
	snprintf(text, sizeof(text), "%llu\n", job_ns);
	tmptree_write(cg_root, JOB42_CPUACCT, text);
}

/* How many records the spool holds; the oldest into R. */
static size_t
spooled(struct ceems_job_record *r)
{
	struct ceems_spool_list list;
	static char text[CEEMS_RECORD_MAX + 1];
	char err[256];
	size_t len, n;

	if (ceems_spool_list(spool_dir, 0, &list) < 0)
		return 0;
	n = list.count;
	if (n > 0 && r != NULL &&
	    ceems_spool_read(spool_dir, list.names[0], r, text, sizeof(text),
			     &len, err, sizeof(err)) < 0) {
		printf("# cannot read %s: %s\n", list.names[0], err);
		n = 0;
	}
	ceems_spool_list_free(&list);
	return n;
}

static void
empty_spool(void)
{
	struct ceems_spool_list list;

	if (ceems_spool_list(spool_dir, 0, &list) < 0)
		return;
	for (size_t i = 0; i < list.count; i++)
		ceems_spool_remove(spool_dir, list.names[i]);
	ceems_spool_list_free(&list);
}

static bool
has_note(const struct ceems_job_record *r, const char *id)
{
	for (size_t i = 0; i < r->nnotes; i++)
		if (strcmp(r->notes[i].id, id) == 0)
			return true;
	return false;
}

/* Does note ID of R say WHAT? */
static bool
note_says(const struct ceems_job_record *r, const char *id, const char *what)
{
	for (size_t i = 0; i < r->nnotes; i++)
		if (strcmp(r->notes[i].id, id) == 0 &&
		    strstr(r->notes[i].text, what) != NULL)
			return true;
	return false;
}

/* The normal end: deregister, the same report again, release. */
static void
test_release(void)
{
	static struct ceems_agent_job_report first, again;
	struct ceems_agent_job_spec spec;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	job_runs(SEC);
	is_int(ceems_agent_deregister(a, 42, 12 * SEC, &first), 0, "job 42 deregisters");
	is_near(first.cpu_s, 1, 1e-9, "its report has its CPU time");
	is_int(ceems_agent_njobs(a), 0, "a finishing job is no longer ticked");
	is_int(ceems_agent_nfinishing(a), 1, "it waits for its release");
	job_runs(SEC);
	ceems_agent_tick(a, 14 * SEC);
	is_int(ceems_agent_deregister(a, 42, 15 * SEC, &again), 0,
	       "a repeated deregistration succeeds");
	ok(memcmp(&first, &again, sizeof(first)) == 0,
	   "and returns the same report, not one taken later");
	is_int(ceems_agent_sweep(a, 15 * SEC), 0, "nothing to write within the grace");
	is_int(ceems_agent_release(a, 42), 0, "release after the record is stored");
	is_int(ceems_agent_nfinishing(a), 0, "the job is forgotten");
	is_int(ceems_agent_release(a, 42), -ENOENT, "a second release: -ENOENT");
	is_int(ceems_agent_deregister(a, 42, 16 * SEC, &again), -ENOENT,
	       "deregistration after the release: -ENOENT");
	is_int(ceems_agent_sweep(a, 100 * SEC), 0, "no record written by the agent");
	is_int((int)spooled(NULL), 0, "the spool is empty");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 101 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 101 * SEC) : -1, 0,
	       "a released job's slot is free: nothing restored");
	ceems_agent_open_close(a);
}

/* No release within finish_grace: the agent spools the record, with the
 * metadata the plugin sent with its deregistration. */
static void
test_no_release(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	finish_config(&c);
	c.finish_grace_ns = 30 * SEC;
	a = ceems_agent_open(&c, 20 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 20 * SEC), 0, "job 42 registers");
	job_runs(2 * SEC);
	is_int(ceems_agent_deregister(a, 42, 22 * SEC, &report), 0, "job 42 deregisters");
	ceems_job_meta_init(&meta);
	meta.jobid = 42;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "alpha");
	snprintf(meta.node, sizeof(meta.node), "node07");
	snprintf(meta.account, sizeof(meta.account), "physics");
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.start_time = 1700000000;
	meta.end_time = 1700000100;
	is_int(ceems_agent_finishing_meta(a, 42, &meta), 0, "the plugin's metadata is kept");
	is_int(ceems_agent_finishing_meta(a, 43, &meta), -ENOENT, "not for an unknown job");
	is_int(ceems_agent_sweep(a, 51 * SEC), 0, "29 s later: still waiting");
	is_int((int)spooled(NULL), 0, "nothing spooled yet");
	is_int(ceems_agent_sweep(a, 52 * SEC), 1, "30 s later: the agent writes the record");
	is_int(ceems_agent_nfinishing(a), 0, "and forgets the job");
	if (is_int((int)spooled(&rec), 1, "one record in the spool")) {
		is_str(rec.finalized_by, "agent", "finalized_by says the agent wrote it");
		ok(has_note(&rec, "agent-finalized"), "a note says why");
		is_str(rec.meta.account, "physics", "with the plugin's metadata");
		is_str(rec.meta.cluster, "alpha", "its cluster");
		ok(rec.meta.start_time == 1700000000, "and its start time");
		is_near(rec.report.cpu_s, report.cpu_s, 1e-12, "the figures are the final report's");
		is_near(rec.report.elapsed_s, report.elapsed_s, 1e-12, "elapsed too");
		ok(ceems_record_validate(&rec, err, sizeof(err)) == 0,
		   "the record is valid for storage (%s)", err);
	}
	is_int(ceems_agent_deregister(a, 42, 53 * SEC, &report), -ENOENT,
	       "deregistration after the agent wrote it: -ENOENT");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 60 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 60 * SEC) : -1, 0,
	       "its slot was freed: nothing restored");
	ceems_agent_open_close(a);
	empty_spool();
}

/* The reply could not be sent: written at once, from what the agent
 * knows alone.  NODE: the agent's --node (one of several slurmd on a
 * host), which its record names rather than the host; NULL: none. */
static void
test_reply_lost(const char *node)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	finish_config(&c);
	if (node != NULL &&
	    !is_int(ceems_conf_expand_node(&c, node, err, sizeof(err)), 0,
		    "the configuration takes the agent's node name"))
		return;
	a = ceems_agent_open(&c, 30 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 30 * SEC), 0, "job 42 registers");
	is_int(ceems_agent_deregister(a, 42, 31 * SEC, &report), 0, "job 42 deregisters");
	is_int(ceems_agent_reply_lost(a, 42), 0, "its reply is lost");
	is_int(ceems_agent_reply_lost(a, 42), -ENOENT, "once");
	if (is_int((int)spooled(&rec), 1, "the record is spooled at once")) {
		is_str(rec.finalized_by, "agent", "finalized by the agent");
		is_str(rec.meta.cluster, "testcluster", "cluster from the configuration");
		if (node != NULL)
			is_str(rec.meta.node, node, "the agent's node, not the host's name");
		else
			ok(rec.meta.node[0] != '\0', "this node's name (%s)", rec.meta.node);
		ok(rec.meta.start_time > 1600000000 && rec.meta.end_time >= rec.meta.start_time,
		   "start and end times as the agent saw them");
		ok(note_says(&rec, "agent-finalized", "when the agent registered it"),
		   "the note says the start time is the registration's, not Slurm's");
		is_int(rec.meta.jobid == 42 && rec.meta.uid == 1000, 1, "job id and owner");
		ok(ceems_record_validate(&rec, err, sizeof(err)) == 0,
		   "the record is valid for storage (%s)", err);
	}
	ceems_agent_open_close(a);
	empty_spool();
}

/* Slurm's start time and cluster, sent by the plugin's second register
 * once slurmctld told it (plugins/job_start.c): a record the agent
 * writes has them, the database key of the plugin's records of the job,
 * also when the plugin's end-of-job metadata lacks the start time. */
static void
test_slurm_identity(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec, later;
	struct ceems_job_meta meta;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	finish_config(&c);
	c.finish_grace_ns = 30 * SEC;
	a = ceems_agent_open(&c, 700 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 700 * SEC), 0,
	       "job 42 registers, its start time not known yet");
	later = spec;
	later.start_time = 1700000777;
	snprintf(later.cluster, sizeof(later.cluster), "east");
	is_int(ceems_agent_register(a, &later, 701 * SEC), -EEXIST,
	       "a second register with Slurm's start time and cluster: -EEXIST");
	later.start_time = 1700000999;
	snprintf(later.cluster, sizeof(later.cluster), "west");
	is_int(ceems_agent_register(a, &later, 702 * SEC), -EEXIST,
	       "a third with others: -EEXIST");
	job_runs(2 * SEC);
	is_int(ceems_agent_deregister(a, 42, 703 * SEC, &report), 0, "job 42 deregisters");
	is_int(ceems_agent_reply_lost(a, 42), 0, "its reply is lost: the agent writes the record");
	if (is_int((int)spooled(&rec), 1, "one record spooled")) {
		ok(rec.meta.start_time == 1700000777,
		   "under Slurm's start time, the first one sent (%lld)",
		   (long long)rec.meta.start_time);
		is_str(rec.meta.cluster, "east", "and the plugin's cluster, not the configured one");
		ok(rec.meta.end_time >= rec.meta.start_time, "ending after it");
		ok(note_says(&rec, "agent-finalized", "start time is Slurm's"),
		   "the note says the start time is Slurm's");
		ok(ceems_record_validate(&rec, err, sizeof(err)) == 0,
		   "valid for storage (%s)", err);
	}
	empty_spool();

	/* Known at the first register; the plugin's metadata at the end has
	 * no start time (slurmctld did not answer then): Slurm's from the
	 * registration fills it, across an agent restart. */
	later = spec;
	later.start_time = 1700001000;
	is_int(ceems_agent_register(a, &later, 710 * SEC), 0,
	       "job 42 runs again, registered with its start time");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 712 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent restarts (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 712 * SEC), 1, "the job is restored");
	is_int(ceems_agent_deregister(a, 42, 713 * SEC, &report), 0, "and deregisters");
	ceems_job_meta_init(&meta);
	meta.jobid = 42;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "east");
	snprintf(meta.account, sizeof(meta.account), "biology");
	is_int(ceems_agent_finishing_meta(a, 42, &meta), 0,
	       "the plugin's metadata without a start time");
	/* A late register of this run of the job: no new run, no record. */
	is_int(ceems_agent_register(a, &later, 714 * SEC), -EEXIST,
	       "a register with the finishing run's start time: -EEXIST");
	is_int(ceems_agent_nfinishing(a), 1, "the job still waits for its release");
	is_int(ceems_agent_njobs(a), 0, "and is not registered anew");
	is_int((int)spooled(NULL), 0, "nothing spooled by it");
	ceems_agent_open_close(a);	/* and dies again before the release */
	a = ceems_agent_open(&c, 720 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent restarts (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 720 * SEC), 0, "nothing live restored");
	is_int(ceems_agent_nfinishing(a), 1, "the job is finishing again");
	is_int(ceems_agent_sweep(a, 751 * SEC), 1, "after finish_grace the agent writes it");
	if (is_int((int)spooled(&rec), 1, "one record spooled")) {
		ok(rec.meta.start_time == 1700001000,
		   "under Slurm's start time from the registration (%lld)",
		   (long long)rec.meta.start_time);
		is_str(rec.meta.account, "biology", "with the plugin's metadata");
		ok(note_says(&rec, "agent-finalized", "start time is Slurm's"),
		   "the note says the start time is Slurm's");
	}
	empty_spool();

	/* A requeued job: the same id with another start time is a new run;
	 * the last run's record is written. */
	later.start_time = 1700001000;
	is_int(ceems_agent_register(a, &later, 760 * SEC), 0, "job 42 registers");
	is_int(ceems_agent_deregister(a, 42, 761 * SEC, &report), 0, "deregisters");
	later.start_time = 1700002000;
	is_int(ceems_agent_register(a, &later, 762 * SEC), 0,
	       "the requeued run registers (another start time)");
	if (is_int((int)spooled(&rec), 1, "the first run's record is spooled"))
		ok(rec.meta.start_time == 1700001000, "under the first run's start time");
	is_int(ceems_agent_deregister(a, 42, 763 * SEC, &report), 0, "the new run deregisters");
	is_int(ceems_agent_release(a, 42), 0, "and is released");
	ceems_agent_open_close(a);
	empty_spool();
}

/* The plugin took the figures and died, and the agent restarted within
 * finish_grace: the finishing job comes back as finishing (not as a live
 * job to reap), and its record is written once, with the figures and
 * the metadata of before the restart. */
static void
test_finishing_survives_restart(void)
{
	static struct ceems_agent_job_report report, again;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	finish_config(&c);
	c.finish_grace_ns = 30 * SEC;
	c.reap_grace_ns = 5 * SEC;
	a = ceems_agent_open(&c, 200 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 200 * SEC), 0, "job 42 registers");
	job_runs(4 * SEC);
	ceems_agent_tick(a, 202 * SEC);
	is_int(ceems_agent_deregister(a, 42, 204 * SEC, &report), 0, "job 42 deregisters");
	ceems_job_meta_init(&meta);
	meta.jobid = 42;
	meta.uid = 1000;
	snprintf(meta.account, sizeof(meta.account), "chemistry");
	meta.start_time = 1700000500;
	meta.end_time = 1700000504;
	is_int(ceems_agent_finishing_meta(a, 42, &meta), 0, "with the plugin's metadata");
	ceems_agent_open_close(a);	/* the agent dies before any release */

	a = ceems_agent_open(&c, 210 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent restarts (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 210 * SEC), 0, "no live job is restored");
	is_int(ceems_agent_njobs(a), 0, "the job is not ticked again");
	is_int(ceems_agent_nfinishing(a), 1, "it waits for its release again");
	is_int(ceems_agent_deregister(a, 42, 211 * SEC, &again), 0,
	       "a retried deregistration gets its report");
	is_near(again.cpu_s, report.cpu_s, 1e-12, "the same final figures");
	is_int(ceems_agent_sweep(a, 239 * SEC), 0, "nothing written within the grace");
	is_int(ceems_agent_sweep(a, 240 * SEC), 1, "after it, the agent writes the record");
	if (is_int((int)spooled(&rec), 1, "exactly one record in the spool")) {
		is_str(rec.finalized_by, "agent", "finalized by the agent");
		is_str(rec.meta.account, "chemistry", "with the metadata kept across the restart");
		ok(rec.meta.start_time == 1700000500, "under the plugin's start time");
		is_near(rec.report.cpu_s, report.cpu_s, 1e-12, "the final report's CPU time");
		is_near(rec.report.elapsed_s, report.elapsed_s, 1e-12, "and elapsed time");
		is_near(rec.report.ledger.lifetime_s, report.ledger.lifetime_s, 1e-12,
			"and ledger");
		ok(ceems_record_validate(&rec, err, sizeof(err)) == 0,
		   "valid for storage (%s)", err);
	}
	is_int(ceems_agent_sweep(a, 400 * SEC), 0, "nothing more, nothing reaped");
	is_int((int)spooled(NULL), 1, "still one record");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 410 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 410 * SEC) : -1, 0, "its slot was freed");
	is_int(a != NULL ? (int)ceems_agent_nfinishing(a) : -1, 0, "nothing finishing");
	ceems_agent_open_close(a);
	empty_spool();

	/* Released before the restart: nothing comes back. */
	a = ceems_agent_open(&c, 500 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	is_int(ceems_agent_register(a, &spec, 500 * SEC), 0, "job 42 registers again");
	job_runs(SEC);
	is_int(ceems_agent_deregister(a, 42, 502 * SEC, &report), 0, "deregisters");
	is_int(ceems_agent_release(a, 42), 0, "and is released");
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 510 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 510 * SEC) : -1, 0, "nothing live restored");
	is_int(a != NULL ? (int)ceems_agent_nfinishing(a) : -1, 0, "nothing finishing");
	is_int(a != NULL ? ceems_agent_sweep(a, 600 * SEC) : -1, 0, "nothing written");
	is_int((int)spooled(NULL), 0, "the spool is empty");
	ceems_agent_open_close(a);
}

/* A job whose plugin died, and an agent restarted over its stale slot:
 * the job's cgroup is gone; after reap_grace the agent writes its
 * record and frees the slot. */
static void
test_reap_stale_slot(void)
{
	struct ceems_agent_job_spec spec;
	static struct ceems_job_record rec;
	static struct ceems_agent_job_report report;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "", job_dir[PATH_MAX];

	finish_config(&c);
	c.reap_grace_ns = 60 * SEC;
	a = ceems_agent_open(&c, 100 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0, "job 42 registers");
	spec.start_time = 1700003000;
	snprintf(spec.cluster, sizeof(spec.cluster), "north");
	is_int(ceems_agent_register(a, &spec, 101 * SEC), -EEXIST,
	       "the plugin sends Slurm's start time and cluster");
	job_runs(3 * SEC);
	ceems_agent_tick(a, 103 * SEC);
	ceems_agent_checkpoint(a, 103 * SEC);
	ceems_agent_open_close(a);	/* the agent dies; so does the job */

	/* The job's cgroup directories go (cpuacct, memory, cpuset...). */
	snprintf(job_dir, sizeof(job_dir), "%s/sys/fs/cgroup", cg_root);
	{
		static const char *const ctl[] = { "cpu,cpuacct", "memory",
			"cpuset", "pids", "blkio", "freezer", "devices", NULL };

		for (int i = 0; ctl[i] != NULL; i++) {
			char d[PATH_MAX + 64];

			snprintf(d, sizeof(d), "%s/%s/slurm_localhost/uid_1000/job_42",
				 job_dir, ctl[i]);
			tmptree_remove(d);
		}
	}
	a = ceems_agent_open(&c, 110 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent restarts (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 110 * SEC), 1, "the stale job is restored");
	is_int(ceems_agent_report(a, 42, &report), 0, "and reports");
	ok(report.cgroup_gone, "its cgroup is gone");
	is_int(ceems_agent_sweep(a, 162 * SEC), 0, "59 s after it went: kept for the epilog");
	is_int(ceems_agent_njobs(a), 1, "still registered");
	info_reaped = 0;
	is_int(ceems_agent_sweep(a, 163 * SEC), 1, "60 s after: reaped");
	is_int(info_reaped, 1, "logged at info level");
	is_int(ceems_agent_njobs(a), 0, "the job is gone from the agent");
	is_int(ceems_agent_nfinishing(a), 0, "with nothing waiting");
	if (is_int((int)spooled(&rec), 1, "its record is spooled")) {
		is_str(rec.finalized_by, "agent", "finalized by the agent");
		ok(has_note(&rec, "agent-finalized"), "with the note saying why");
		ok(rec.meta.start_time == 1700003000,
		   "under Slurm's start time, kept in the state file (%lld)",
		   (long long)rec.meta.start_time);
		is_str(rec.meta.cluster, "north", "and the plugin's cluster");
		is_near(rec.report.elapsed_s, 3, 1e-9,
			"elapsed up to the last tick that saw it, before the restart");
		ok(ceems_record_validate(&rec, err, sizeof(err)) == 0,
		   "valid for storage (%s)", err);
	}
	ceems_agent_open_close(a);
	a = ceems_agent_open(&c, 170 * SEC, err, sizeof(err));
	is_int(a != NULL ? ceems_agent_restore(a, 170 * SEC) : -1, 0,
	       "the slot was freed: nothing restored");
	ceems_agent_open_close(a);
	empty_spool();
}

/* Job META of job JOBID as the plugin takes it at the job's start. */
static void
plugin_meta(uint32_t jobid, struct ceems_job_meta *meta)
{
	ceems_job_meta_init(meta);
	meta->jobid = jobid;
	meta->uid = 1000;
	snprintf(meta->cluster, sizeof(meta->cluster), "slurmcluster");
	snprintf(meta->node, sizeof(meta->node), "node7");
	snprintf(meta->account, sizeof(meta->account), "physics");
	meta->start_time = 1700000000;
	meta->end_time = 1700000600;
}

/* One call ends a job: the extern step's deregistration with the
 * metadata slurmctld gave at the start; the record waits for the
 * epilog's word (slurmctld's state, decided at the end), then is written
 * finalized by the extern step, the agent's figures with both words;
 * without the epilog's word, it is written after finish_grace. */
static void
test_one_call_end(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta, late;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	job_runs(SEC);
	is_int(ceems_agent_end_step_status(a, 42, 3 << 8), 0,
	       "a step ends with exit code 3");
	is_int(ceems_agent_end_step_status(a, 42, 0), 0, "a later one with 0");
	is_int(ceems_agent_end_step_status(a, 43, 0), -ENOENT,
	       "no status for a job not registered");
	is_int(ceems_agent_deregister(a, 42, 12 * SEC, &report), 0, "job 42 deregisters");
	plugin_meta(42, &meta);
	is_int(ceems_agent_end(a, 42, &meta, "extern", 12 * SEC), 0,
	       "the extern step's one call ends it");
	is_int(ceems_agent_end_final_report(a, 42, &report), 0,
	       "a step ending after the extern step gets the final report");
	is_near(report.cpu_s, 1, 1e-9, "with the job's figures");
	is_int((int)spooled(NULL), 0, "the record waits for the epilog's word");
	is_int(ceems_agent_deregister(a, 42, 13 * SEC, &report), 0,
	       "the epilog's deregistration finds the job");
	ceems_job_meta_init(&late);
	late.jobid = 42;
	snprintf(late.state, sizeof(late.state), "CANCELLED");
	late.exit_code = 0;
	late.exit_signal = 15;
	snprintf(late.account, sizeof(late.account), "other");
	is_int(ceems_agent_end(a, 42, &late, "epilog", 13 * SEC), 0,
	       "its word writes the record");
	is_int((int)ceems_agent_nfinishing(a), 0, "nothing waits any more");
	is_int((int)spooled(&rec), 1, "its record is in the spool");
	is_str(rec.finalized_by, "extern", "finalized by the extern step");
	is_str(rec.meta.account, "physics", "with the start's metadata");
	is_str(rec.meta.state, "CANCELLED", "and the state slurmctld decided");
	is_int(rec.meta.exit_signal, 15, "and its exit signal");
	is_near(rec.report.cpu_s, 1, 1e-9, "and the agent's figures");
	ok(!has_note(&rec, "agent-finalized"), "no agent-finalized note");
	is_int(ceems_agent_end(a, 42, &late, "epilog", 14 * SEC), -ENOENT,
	       "a second word: -ENOENT");
	empty_spool();

	/* No epilog: the record after finish_grace, the steps' status
	 * giving the exit code slurmctld did not. */
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 20 * SEC), 0, "job 42 runs again");
	job_runs(SEC);
	is_int(ceems_agent_deregister(a, 42, 22 * SEC, &report), 0, "deregisters");
	plugin_meta(42, &meta);
	meta.start_time = 1700001000;
	is_int(ceems_agent_end(a, 42, &meta, "extern", 22 * SEC), 0,
	       "the extern step ends it");
	is_int(ceems_agent_end_step_status(a, 42, 3 << 8), 0,
	       "the batch step ends after it, with exit code 3");
	is_int(ceems_agent_sweep(a, 23 * SEC), 0, "nothing within the grace");
	is_int(ceems_agent_sweep(a, 22 * SEC + c.finish_grace_ns), 1,
	       "written at its end");
	is_int((int)spooled(&rec), 1, "one record");
	is_str(rec.finalized_by, "extern", "finalized by the extern step");
	is_int(rec.meta.exit_code, 3, "the failed step's exit code is the job's");
	/* The fixture's cgroup counted OOM kills: they say more. */
	is_str(rec.meta.state,
	       (rec.report.usage.present & CEEMS_CGF_OOM_KILLS) &&
	       rec.report.usage.oom_kills > 0 ? "OUT_OF_MEMORY" : "FAILED",
	       "and so its state (FAILED, or OUT_OF_MEMORY after OOM kills)");
	ok(!has_note(&rec, "agent-finalized"), "no agent-finalized note");
	ceems_agent_open_close(a);
	empty_spool();
}

/* A requeued job: slurmctld, asked after the job started again, speaks
 * of its new run.  The pure rule first: a word whose start is later
 * than the run's is the later run's (REQUEUED for this one, its own
 * start kept); then the agent: the last run's record keeps its start,
 * a new run's registration writes it REQUEUED, and a late word of the
 * last run does not end the new one. */
static void
test_requeued_runs(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta, word;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	ceems_job_meta_init(&word);
	word.start_time = 1700000100;
	word.end_time = 1700000160;
	snprintf(word.state, sizeof(word.state), "COMPLETED");
	word.exit_code = 2;
	ok(ceems_agent_finish_word_later_run(&word, 1700000000, 1700000050) &&
	   word.start_time == 1700000000 && word.end_time == 0 &&
	   strcmp(word.state, "REQUEUED") == 0 && word.exit_code == 0,
	   "a word of a later run: REQUEUED, the run's start, no end time, no exit code");
	word.start_time = 1700000000;
	snprintf(word.state, sizeof(word.state), "CANCELLED");
	ok(!ceems_agent_finish_word_later_run(&word, 1700000000, 1700000050) &&
	   strcmp(word.state, "CANCELLED") == 0,
	   "a word of the run itself is kept");
	word.start_time = 0;
	ok(!ceems_agent_finish_word_later_run(&word, 1700000000, 1700000050),
	   "a word without a start time is kept");
	word.start_time = 1700000100;
	ok(ceems_agent_finish_word_later_run(&word, 0, 1700000050) &&
	   word.start_time == 0 && strcmp(word.state, "REQUEUED") == 0,
	   "the run's start unknown: a word that starts after the run's end is a later run's");
	word.start_time = 1700000040;
	snprintf(word.state, sizeof(word.state), "COMPLETED");
	ok(!ceems_agent_finish_word_later_run(&word, 0, 1700000050),
	   "one that starts before it, the run's");

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	/* The first run: Slurm's start learnt at its registration; the
	 * extern step's metadata without one (ceems-jobinfo asks). */
	job42_spec(&spec);
	spec.start_time = 1700000000;
	is_int(ceems_agent_register(a, &spec, 10 * SEC), 0, "job 42 registers");
	job_runs(SEC);
	is_int(ceems_agent_deregister(a, 42, 12 * SEC, &report), 0, "deregisters");
	plugin_meta(42, &meta);
	meta.start_time = 0;
	is_int(ceems_agent_end(a, 42, &meta, "extern", 12 * SEC), 0,
	       "the extern step ends it");
	/* slurmctld asked once the job ran again and ended. */
	ceems_job_meta_init(&word);
	word.jobid = 42;
	word.start_time = 1700000100;
	word.end_time = 1700000160;
	snprintf(word.state, sizeof(word.state), "COMPLETED");
	is_int(ceems_agent_end(a, 42, &word, "epilog", 13 * SEC), 0,
	       "slurmctld's word of the next run ends this one");
	is_int((int)spooled(&rec), 1, "its record is in the spool");
	is_int((int)rec.meta.start_time, 1700000000, "with its own start time");
	is_str(rec.meta.state, "REQUEUED", "REQUEUED");
	ok(rec.meta.end_time != 1700000160, "not the next run's end time");
	empty_spool();

	/* The next run registers before slurmctld's word on the last. */
	job42_spec(&spec);
	spec.start_time = 1700000200;
	is_int(ceems_agent_register(a, &spec, 20 * SEC), 0, "job 42 runs");
	job_runs(SEC);
	is_int(ceems_agent_deregister(a, 42, 22 * SEC, &report), 0, "deregisters");
	is_int(ceems_agent_end(a, 42, &meta, "extern", 22 * SEC), 0,
	       "the extern step ends it");
	is_int((int)spooled(NULL), 0, "the record waits for slurmctld's word");
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 25 * SEC), 0,
	       "its next run registers (no start time yet)");
	is_int((int)spooled(&rec), 1, "the last run's record is written");
	is_int((int)rec.meta.start_time, 1700000200, "with its own start time");
	is_str(rec.meta.state, "REQUEUED", "REQUEUED");
	empty_spool();
	/* slurmctld's word on the last run before the new run's start
	 * time is known: the run it names has its record already. */
	ok(ceems_agent_end_of_earlier_run(a, 42, 1700000200),
	   "a late word of the last run, the new run's start not known yet: of an earlier run");
	ok(!ceems_agent_end_of_earlier_run(a, 42, 1700000250),
	   "one of a run never seen here is not");
	is_int((int)ceems_agent_end_run_start(a, 42), 0,
	       "the new run's start, as far as the agent knows");
	spec.start_time = 1700000300;
	is_int(ceems_agent_register(a, &spec, 26 * SEC), -EEXIST,
	       "Slurm's start time of the new run");
	ok(ceems_agent_end_of_earlier_run(a, 42, 1700000200),
	   "a late word of the last run is of an earlier run");
	ok(!ceems_agent_end_of_earlier_run(a, 42, 1700000300) &&
	   !ceems_agent_end_of_earlier_run(a, 42, 0),
	   "one of the run itself, or without a start, is not");
	ok(!ceems_agent_end_of_earlier_run(a, 43, 1700000200),
	   "nor one of a job not held");
	is_int((int)ceems_agent_end_run_start(a, 42), 1700000300,
	       "the held run's start goes with its end request");
	is_int(ceems_agent_deregister(a, 42, 30 * SEC, &report), 0,
	       "the new run deregisters");
	word.start_time = 1700000300;
	is_int((int)ceems_agent_end_run_start(a, 42), 1700000300,
	       "so does the finishing run's");
	is_int(ceems_agent_end(a, 42, &word, "epilog", 30 * SEC), 0,
	       "and its word ends it");
	is_int((int)spooled(&rec), 1, "its record is in the spool");
	ok(strcmp(rec.meta.state, "REQUEUED") != 0 &&
	   rec.meta.start_time == 1700000300,
	   "its own state and start (%s)", rec.meta.state);
	ceems_agent_open_close(a);
	empty_spool();
}

static void
write_note(const struct ceems_config *c, const struct ceems_job_meta *meta,
	   const char *why)
{
	static struct ceems_job_note note;
	char dir[300], err[256] = "";

	memset(&note, 0, sizeof(note));
	note.meta = *meta;
	snprintf(note.by, sizeof(note.by), "extern");
	snprintf(note.why, sizeof(note.why), "%s", why);
	ceems_job_note_dir(c, dir, sizeof(dir));
	if (ceems_job_note_write(dir, &note, err, sizeof(err)) != 0)
		printf("# cannot write the note: %s\n", err);
}

static int
notes_left(const struct ceems_config *c)
{
	char dir[300], name[CEEMS_NOTE_NAME_MAX];

	ceems_job_note_dir(c, dir, sizeof(dir));
	return ceems_job_note_next(dir, "", name, sizeof(name));
}

/* Notes of jobs whose end the agent was not told: a job it never knew
 * gets a record of its metadata alone (figures absent, coverage 0, the
 * reason); a job it still holds gets its own record, with its figures;
 * a job whose record it wrote lately gets no second one. */
static void
test_notes(void)
{
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";
	double coverage = -1;

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	plugin_meta(77, &meta);
	write_note(&c, &meta, "the node agent could not be reached when the job ended");
	is_int(notes_left(&c), 1, "the plugin left a note");
	is_int(ceems_agent_end_take_notes(a, 11 * SEC), 1, "the agent takes it");
	is_int(notes_left(&c), 0, "and removes it");
	is_int((int)spooled(&rec), 1, "a record of the never-measured job");
	is_int((int)rec.meta.jobid, 77, "of job 77");
	is_str(rec.finalized_by, "agent", "written by the agent on its own");
	is_str(rec.meta.account, "physics", "with Slurm's metadata");
	ok(note_says(&rec, "not-measured", "could not be reached"),
	   "the reason is stated");
	ok(!(rec.report.usage.present & CEEMS_CGF_CPU_USAGE), "no CPU figure");
	is_near(ceems_job_figures_ledger_total_j(&rec.report.ledger), 0, 0,
		"no energy");
	ok(ceems_job_figures_ledger_coverage(&rec.report.ledger, CEEMS_DOMAIN_PACKAGE,
				     &coverage) && coverage == 0,
	   "coverage 0 in a domain the node measures");
	empty_spool();
	write_note(&c, &meta, "again");
	is_int(ceems_agent_end_take_notes(a, 12 * SEC), 1, "a second note of job 77");
	is_int((int)spooled(NULL), 0, "makes no second record");

	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 12 * SEC), 0, "job 42 registers");
	job_runs(SEC);
	plugin_meta(42, &meta);
	write_note(&c, &meta, "the node agent could not be reached when the job ended");
	is_int(ceems_agent_end_take_notes(a, 14 * SEC), 1, "a note of job 42, still held");
	is_int((int)ceems_agent_njobs(a), 0, "ends the job");
	is_int((int)spooled(&rec), 1, "one record");
	is_str(rec.finalized_by, "extern", "the plugin's word on its end");
	is_near(rec.report.cpu_s, 1, 1e-9, "with the agent's figures");
	ok(!has_note(&rec, "not-measured"), "measured");
	ceems_agent_open_close(a);
	empty_spool();
}

/* More notes than one pass takes (each costs a record's fsync in the
 * event loop): a bounded batch, the rest at the next pass. */
static void
test_notes_batch(void)
{
	struct ceems_job_meta meta;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";
	int total = CEEMS_NOTES_PER_PASS + 4;

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	for (int i = 0; i < total; i++) {
		plugin_meta(300 + (uint32_t)i, &meta);
		write_note(&c, &meta, "the node agent could not be reached");
	}
	is_int(ceems_agent_end_take_notes(a, 11 * SEC), CEEMS_NOTES_PER_PASS,
	       "a pass takes a bounded batch of the notes");
	is_int((int)spooled(NULL), CEEMS_NOTES_PER_PASS, "one record each");
	is_int(ceems_agent_end_take_notes(a, 12 * SEC), total - CEEMS_NOTES_PER_PASS,
	       "the next pass takes the rest");
	is_int((int)spooled(NULL), total, "a record for every note");
	is_int(notes_left(&c), 0, "no note is left");
	is_int(ceems_agent_end_take_notes(a, 13 * SEC), 0, "then nothing to take");
	ceems_agent_open_close(a);
	empty_spool();
}

/* The plugin's word on the end of a job the agent never knew (it was
 * not running when the job started, and is back by its end): the
 * epilog's makes a record of its metadata alone at once (finalized_by
 * agent, figures absent, coverage 0, the reason); the extern step's
 * makes one that waits for the epilog's word (slurmctld's final state)
 * or finish_grace; never a second record of a job written lately, and
 * a job the agent holds goes the measured way. */
static void
test_end_unknown(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta, late;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";
	double coverage = -1;

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	is_int(ceems_agent_deregister(a, 88, 11 * SEC, &report), -ENOENT,
	       "job 88 was never registered");
	plugin_meta(88, &meta);
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	is_int(ceems_agent_end_unknown(a, 88, &meta, "epilog", 11 * SEC, &report),
	       0, "the epilog's word on it keeps a record");
	is_near(report.elapsed_s, 600, 1e-9, "the reply: the job's lifetime");
	is_near(report.gap_s, 600, 1e-9, "all of it a gap");
	ok(!(report.usage.present & CEEMS_CGF_CPU_USAGE), "and no figure");
	is_int((int)spooled(&rec), 1, "the record is in the spool");
	is_int((int)rec.meta.jobid, 88, "of job 88");
	is_str(rec.finalized_by, "agent", "finalized by the agent");
	is_str(rec.meta.account, "physics", "with Slurm's metadata");
	is_str(rec.meta.state, "COMPLETED", "and its state");
	ok(note_says(&rec, "not-measured", "never registered with the node agent"),
	   "the reason is stated");
	ok(!(rec.report.usage.present & CEEMS_CGF_CPU_USAGE), "no CPU figure");
	ok(ceems_job_figures_ledger_coverage(&rec.report.ledger, CEEMS_DOMAIN_PACKAGE,
				     &coverage) && coverage == 0,
	   "coverage 0 in a domain the node measures");
	empty_spool();
	is_int(ceems_agent_end_unknown(a, 88, &meta, "epilog", 12 * SEC, &report),
	       1, "a second word on it: written already");
	is_int(ceems_agent_end_take_notes(a, 12 * SEC), 0, "no note");
	is_int((int)spooled(NULL), 0, "no second record");

	/* The extern step's word: the record waits for the epilog's. */
	plugin_meta(89, &meta);
	is_int(ceems_agent_end_unknown(a, 89, &meta, "extern", 13 * SEC, &report),
	       0, "the extern step's word on job 89, never registered");
	is_int((int)spooled(NULL), 0, "the record waits for the epilog's word");
	is_int((int)ceems_agent_nfinishing(a), 1, "job 89 is finishing");
	is_int(ceems_agent_end_final_report(a, 89, &report), -ENOENT,
	       "a step ending now gets no figures for a summary");
	is_int(ceems_agent_deregister(a, 89, 14 * SEC, &report), 0,
	       "the epilog's deregistration finds it");
	ceems_job_meta_init(&late);
	late.jobid = 89;
	late.start_time = meta.start_time;	/* the job's key: Slurm's */
	snprintf(late.state, sizeof(late.state), "CANCELLED");
	late.exit_signal = 9;
	late.end_time = 1700000700;
	is_int(ceems_agent_end(a, 89, &late, "epilog", 14 * SEC), 0,
	       "its word writes the record");
	is_int((int)spooled(&rec), 1, "one record");
	is_str(rec.finalized_by, "agent", "finalized by the agent");
	is_str(rec.meta.state, "CANCELLED", "the state slurmctld decided");
	is_str(rec.meta.account, "physics", "the start's metadata");
	is_near(rec.report.gap_s, 700, 1e-9, "a gap to the epilog's end time");
	ok(note_says(&rec, "not-measured", "never registered with the node agent"),
	   "the reason is stated");
	ok(!has_note(&rec, "agent-finalized"), "no agent-finalized note");
	empty_spool();
	is_int(ceems_agent_end_unknown(a, 89, &late, "epilog", 15 * SEC, &report),
	       1, "a later word: written already");
	is_int((int)spooled(NULL), 0, "no second record");

	/* No epilog's word: written after finish_grace. */
	plugin_meta(90, &meta);
	is_int(ceems_agent_end_unknown(a, 90, &meta, "extern", 20 * SEC, &report),
	       0, "the extern step's word on job 90");
	is_int(ceems_agent_sweep(a, 21 * SEC), 0, "nothing within the grace");
	is_int(ceems_agent_sweep(a, 20 * SEC + c.finish_grace_ns), 1,
	       "written at its end");
	is_int((int)spooled(&rec), 1, "one record");
	ok(rec.meta.jobid == 90 && strcmp(rec.finalized_by, "agent") == 0 &&
	   has_note(&rec, "not-measured"), "job 90's, not measured");
	empty_spool();

	/* A job the agent holds is not this path's. */
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 30 * SEC), 0, "job 42 registers");
	plugin_meta(42, &meta);
	is_int(ceems_agent_end_unknown(a, 42, &meta, "epilog", 31 * SEC, &report),
	       -EEXIST, "a job the agent holds: -EEXIST");
	is_int((int)spooled(NULL), 0, "and no record");
	is_int(ceems_agent_deregister(a, 42, 32 * SEC, &report), 0,
	       "it deregisters");
	is_int(ceems_agent_release(a, 42), 0, "and is released");
	ceems_agent_open_close(a);
	empty_spool();
}

static void
quiet(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level == CEEMS_LOG_INFO && strstr(message, "reaped") != NULL)
		info_reaped++;
	if (level <= CEEMS_LOG_WARNING)
		printf("# log: %s\n", message);
}

/* A time limit kills every step at once: the extern step's end, and
 * slurmctld's word, can come before the batch step's.  The word waits
 * for that step's end (its summary gets the job's final figures), or 2
 * s when that end never comes. */
static void
test_word_waits_for_step(void)
{
	static struct ceems_agent_job_report report;
	static struct ceems_job_record rec;
	struct ceems_agent_step_report step;
	struct ceems_agent_job_spec spec;
	struct ceems_job_meta meta, late;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";

	empty_spool();
	finish_config(&c);
	a = ceems_agent_open(&c, 900 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	ceems_job_meta_init(&late);
	late.jobid = 42;
	snprintf(late.state, sizeof(late.state), "TIMEOUT");
	for (int run = 0; run < 2; run++) {
		uint64_t t = (900 + 10 * (uint64_t)run) * SEC;

		job42_spec(&spec);
		is_int(ceems_agent_register(a, &spec, t), 0, "job 42 registers");
		is_int(ceems_agent_step_start(a, 42, "batch", t), 0,
		       "its batch step starts");
		job_runs(SEC);
		is_int(ceems_agent_deregister(a, 42, t + 2 * SEC, &report), 0,
		       "the extern step deregisters it, the batch step still running");
		plugin_meta(42, &meta);
		is_int(ceems_agent_end(a, 42, &meta, "extern", t + 2 * SEC), 0,
		       "and ends it");
		is_int(ceems_agent_end(a, 42, &late, "epilog", t + 2 * SEC), 0,
		       "slurmctld's word comes");
		is_int((int)spooled(NULL), 0, "and waits for the batch step's end");
		if (run == 0) {
			ok(ceems_agent_step_end(a, 42, "batch", t + 3 * SEC, &step) < 0 &&
			   ceems_agent_end_final_report(a, 42, &report) == 0,
			   "the batch step ends: the job's final report");
			is_int(ceems_agent_end_step_late(a, 42, "batch"), 1,
			       "then the record is written");
		} else {
			is_int(ceems_agent_sweep(a, t + 3 * SEC), 0,
			       "a second later: still waiting");
			is_int(ceems_agent_sweep(a, t + 5 * SEC), 1,
			       "2 s after the word: written without the step");
		}
		is_int((int)spooled(&rec), 1, "its record is in the spool");
		is_str(rec.meta.state, "TIMEOUT", "with slurmctld's state");
		is_str(rec.finalized_by, "extern", "finalized by the extern step");
		empty_spool();
	}
	ceems_agent_open_close(a);
}

static int asked_end;

static void
ask_end(void *arg, uint32_t jobid)
{
	(void)arg;
	if (jobid == 42)
		asked_end++;
}

/* A job whose extern slurmstepd dies (killed) without deregistering
 * it: slurmctld's word is asked for at the next sweep, once, and not
 * while another of its steps still runs.  The slurmstepd is a child
 * process of the test. */
static void
test_extern_lost(void)
{
	struct ceems_agent_job_spec spec;
	struct ceems_config c;
	struct ceems_agent *a;
	char err[256] = "";
	pid_t child;
	int status;

	finish_config(&c);
	a = ceems_agent_open(&c, 800 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	ceems_agent_set_gone_hook(a, ask_end, NULL);
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 800 * SEC), 0, "job 42 registers");
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	is_int(ceems_agent_step_start(a, 42, "extern", 800 * SEC), 0,
	       "its extern step starts");
	ceems_agent_extern_watch(a, 42, child);
	is_int(ceems_agent_step_start(a, 42, "0", 801 * SEC), 0,
	       "a step starts");
	ceems_agent_sweep(a, 802 * SEC);
	is_int(asked_end, 0, "extern step alive: nothing asked");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ceems_agent_sweep(a, 803 * SEC);
	is_int(asked_end, 0, "extern step killed, step 0 running: nothing asked");
	static struct ceems_agent_step_report step;
	is_int(ceems_agent_step_end(a, 42, "0", 804 * SEC, &step), 0,
	       "step 0 ends");
	ceems_agent_sweep(a, 805 * SEC);
	is_int(asked_end, 1, "then slurmctld's word is asked for");
	ceems_agent_sweep(a, 806 * SEC);
	is_int(asked_end, 1, "once");
	is_int((int)ceems_agent_njobs(a), 1, "the job is held until the word comes");
	ceems_agent_extern_watch(a, 43, getpid());
	ceems_agent_open_close(a);
	empty_spool();
}

/* A job whose cgroup goes while its extern slurmstepd still runs (from
 * Slurm 25.05 on cgroup v1, its last step with tasks removes the job's
 * CPU cgroup): slurmctld's word is not asked for, and the job is not
 * reaped, until that slurmstepd ends; asked, the job waits reap_grace
 * for the word.  Without a watched extern step, the word is asked for
 * at once.  The tick's finding (ENODEV from the removed cgroup) is set
 * on the job as the tick sets it. */
static void
test_cgroup_gone_extern_alive(void)
{
	struct ceems_agent_job_spec spec;
	struct ceems_config c;
	struct ceems_agent *a;
	struct agent_job *j;
	char err[256] = "";
	pid_t child;
	int status;

	finish_config(&c);
	c.reap_grace_ns = 5 * SEC;
	a = ceems_agent_open(&c, 900 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "agent opens (%s)", err))
		return;
	ceems_agent_set_gone_hook(a, ask_end, NULL);
	asked_end = 0;
	job42_spec(&spec);
	is_int(ceems_agent_register(a, &spec, 900 * SEC), 0, "job 42 registers");
	child = fork();
	if (child == 0) {
		pause();
		_exit(0);
	}
	is_int(ceems_agent_step_start(a, 42, "extern", 900 * SEC), 0,
	       "its extern step starts");
	ceems_agent_extern_watch(a, 42, child);
	j = ceems_agent_find_job(a, 42, NULL);
	j->gone = true;
	j->gone_ns = 901 * SEC;
	ceems_agent_extern_cgroup_gone(a, j, 901 * SEC);
	is_int(asked_end, 0, "cgroup gone, extern step running: nothing asked");
	ceems_agent_sweep(a, 910 * SEC);
	is_int(asked_end, 0, "nor at the sweeps after");
	is_int((int)ceems_agent_njobs(a), 1, "not reaped past reap_grace while it runs");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
	ceems_agent_sweep(a, 911 * SEC);
	is_int(asked_end, 1, "the extern step dies: slurmctld's word is asked for");
	is_int((int)ceems_agent_njobs(a), 1, "the job held for it");
	ceems_agent_sweep(a, 915 * SEC);
	is_int(asked_end, 1, "asked once");
	is_int((int)ceems_agent_njobs(a), 1, "held reap_grace after the asking");
	is_int(ceems_agent_sweep(a, 916 * SEC), 1, "then reaped");
	empty_spool();

	/* No extern step watched: asked at once, as before. */
	asked_end = 0;
	spec.jobid = 42;
	is_int(ceems_agent_register(a, &spec, 920 * SEC), 0, "job 42 registers again");
	j = ceems_agent_find_job(a, 42, NULL);
	j->gone = true;
	j->gone_ns = 921 * SEC;
	ceems_agent_extern_cgroup_gone(a, j, 921 * SEC);
	is_int(asked_end, 1, "no extern step watched: the word is asked for at once");
	ceems_agent_open_close(a);
	empty_spool();
}

int
main(void)
{
	ceems_log_set_handler(quiet, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	make_finish_trees();
	test_release();
	test_no_release();
	test_reply_lost(NULL);
	test_reply_lost("n2");
	test_finishing_survives_restart();
	test_slurm_identity();
	test_one_call_end();
	test_requeued_runs();
	test_notes();
	test_end_unknown();
	test_notes_batch();
	test_extern_lost();
	test_cgroup_gone_extern_alive();
	test_word_waits_for_step();
	test_reap_stale_slot();	/* removes job 42's cgroup: last */
	tmptree_remove(sys_root);
	tmptree_remove(cg_root);
	tmptree_remove(proc_root);
	return done_testing();
}
