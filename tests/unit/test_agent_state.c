/* test_agent_state.c - the node agent's state file: sized to the slots in
 * use, a full filesystem under it (a small tmpfs, when the test may mount
 * one) is outlived and logged once, and a file written by the previous
 * version (tests/fixtures/agent/jobs-v4.state to jobs-v8.state) is
 * migrated with its jobs.  A job's eBPF and perf counts
 * go to disk and come back whole. */
#define _GNU_SOURCE
#include "config.h"

#include <sys/mount.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_state.h"
#include "base/log.h"
#include "../tap.h"
#include "fixture.h"

/* The boot id the fixture's agent read. */
#define FIXTURE_BOOT_ID "6b1f0c3e-2d4a-4e8b-9f1a-0c5d7e9b2a41"

static int errors_logged, infos_logged;

static void
count_log(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_ERROR)
		errors_logged++;
	else if (level == CEEMS_LOG_INFO)
		infos_logged++;
	if (level <= CEEMS_LOG_WARNING)
		printf("# log: %s\n", message);
}

static void
die(const char *what, const char *path)
{
	printf("Bail out! %s %s: %s\n", what, path, strerror(errno));
	exit(1);
}

/* Remove DIR and what these tests leave in it. */
static void
remove_dir(const char *dir)
{
	static const char *const names[] = { "jobs.state", "jobs.state.bad",
		"jobs.state.migrating", "filler", NULL };
	char path[PATH_MAX + 32];

	for (int i = 0; names[i] != NULL; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

/* Damaged files are logged at every turn: not worth 300 lines. */
static void
ignore_log(enum ceems_log_level level, const char *message, void *arg)
{
	(void)level;
	(void)message;
	(void)arg;
}

static char *
new_dir(void)
{
	static char dir[PATH_MAX];

	snprintf(dir, sizeof(dir), "%s/ceems-test-state-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(dir) == NULL)
		die("mkdtemp", dir);
	return dir;
}

static off_t
file_size(const char *dir)
{
	char path[PATH_MAX + 16];
	struct stat st;

	snprintf(path, sizeof(path), "%s/jobs.state", dir);
	return stat(path, &st) == 0 ? st.st_size : -1;
}

static void
spec_for(struct ceems_agent_job_spec *spec, uint32_t jobid)
{
	memset(spec, 0, sizeof(*spec));
	spec->jobid = jobid;
	spec->uid = 1000;
	snprintf(spec->cgroup.unified, sizeof(spec->cgroup.unified),
		 "/system.slice/slurmstepd.scope/job_%u", jobid);
}

static void
figures_at(struct state_figures *fig, uint64_t tick_ns, double cpu_s)
{
	memset(fig, 0, sizeof(*fig));
	fig->tick_ns = tick_ns;
	fig->cpu_s = cpu_s;
}

struct seen {
	int n;
	uint32_t jobid[8];
	double cpu_s[8];
	uint64_t tick_ns[8];
	struct ceems_agent_job_spec spec;
	struct state_figures fig;
	bool err_known;		/* a finishing job's report had a bound */
	double energy_j;	/* and its energy */
};

static int
keep_live(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	  uint64_t registered_ns, const struct state_figures *fig)
{
	struct seen *s = arg;

	(void)slot;
	(void)registered_ns;
	if (s->n < 8) {
		s->jobid[s->n] = spec->jobid;
		s->cpu_s[s->n] = fig->cpu_s;
		s->tick_ns[s->n] = fig->tick_ns;
		s->n++;
	}
	s->spec = *spec;
	s->fig = *fig;
	return 0;
}

static int
keep_finishing(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	       const struct ceems_agent_job_report *report, int64_t start_time,
	       int64_t end_time, const struct ceems_job_meta *meta)
{
	struct seen *s = arg;

	(void)slot;
	(void)start_time;
	(void)end_time;
	(void)meta;
	if (s->n < 8)
		s->jobid[s->n++] = spec->jobid;
	s->err_known = report->err.known;
	s->energy_j = ceems_job_figures_ledger_total_j(&report->ledger);
	return 0;
}

/* The file holds its header and the slots in use, no more: its size
 * follows the jobs, and its space is allocated, not a sparse promise. */
static void
test_sized_to_use(void)
{
	struct ceems_agent_job_spec spec;
	struct state_file *sf;
	char *dir = new_dir();
	off_t empty, one, slot_size;
	int err = 0, s[3];
	struct stat st;
	char path[PATH_MAX + 16];

	sf = ceems_agent_state_file_open(dir, 2048, "boot-a", &err);
	if (!ok(sf != NULL, "state file opens with 2048 slots (%d)", err))
		return;
	empty = file_size(dir);
	ok(empty > 0 && empty <= 4096, "with no job it is its header only (%lld bytes)",
	   (long long)empty);
	for (int i = 0; i < 3; i++) {
		spec_for(&spec, 100 + (uint32_t)i);
		s[i] = ceems_agent_state_slot_claim(sf, &spec, 1);
		if (i == 0)
			one = file_size(dir);
	}
	slot_size = one - empty;
	ok(slot_size > 0, "a claim adds one slot (%lld bytes)", (long long)slot_size);
	is_int(file_size(dir), empty + 3 * slot_size, "three jobs, three slots");
	snprintf(path, sizeof(path), "%s/jobs.state", dir);
	ok(stat(path, &st) == 0 && (off_t)st.st_blocks * 512 >= st.st_size,
	   "the slots' space is allocated (%lld of %lld bytes)",
	   (long long)st.st_blocks * 512, (long long)st.st_size);
	ceems_agent_state_slot_release(sf, s[0]);
	is_int(file_size(dir), empty + 3 * slot_size,
	       "a free slot below one in use stays");
	ceems_agent_state_slot_release(sf, s[2]);
	is_int(file_size(dir), empty + 2 * slot_size,
	       "the last slots released are given back");
	ceems_agent_state_slot_release(sf, s[1]);
	is_int(file_size(dir), empty, "no job: the header only");
	ceems_agent_state_file_close(sf);
	remove_dir(dir);
}

/* Fill the filesystem at DIR: a file written until no byte more fits. */
static void
fill(const char *dir)
{
	char path[PATH_MAX + 16], block[4096];
	int fd;

	memset(block, 'x', sizeof(block));
	snprintf(path, sizeof(path), "%s/filler", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		die("open", path);
	while (write(fd, block, sizeof(block)) > 0)
		;
	while (write(fd, block, 1) > 0)
		;
	close(fd);
}

/* A full filesystem under the state file: the jobs are still claimed and
 * updated (no SIGBUS, no failure), the problem is logged once, and the
 * file catches up when space returns. */
static void
test_full_disk(void)
{
	struct ceems_agent_job_spec spec;
	struct state_figures fig;
	struct state_file *sf;
	struct seen seen = { 0 };
	char *dir = new_dir(), path[PATH_MAX + 16];
	int err = 0, slots[2];

	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
	    mount("tmpfs", dir, "tmpfs", 0, "size=128k,mode=0700") < 0) {
		printf("ok %d # SKIP a small tmpfs cannot be mounted here (%s): run as root\n",
		       ++tap_count, strerror(errno));
		rmdir(dir);
		return;
	}
	fill(dir);
	errors_logged = infos_logged = 0;
	sf = ceems_agent_state_file_open(dir, 8, "boot-a", &err);
	if (!ok(sf != NULL, "state file opens on a full filesystem (%d)", err))
		goto out;
	for (int i = 0; i < 2; i++) {
		spec_for(&spec, 200 + (uint32_t)i);
		slots[i] = ceems_agent_state_slot_claim(sf, &spec, 1);
	}
	ok(slots[0] >= 0 && slots[1] >= 0, "jobs are still claimed");
	for (int t = 1; t <= 10; t++)
		for (int i = 0; i < 2; i++) {
			figures_at(&fig, (uint64_t)t * 1000000000ULL, t + i);
			ceems_agent_state_slot_update(sf, slots[i], &fig);
		}
	ok(ceems_agent_state_file_flush(sf) < 0, "the file reports that it is behind");
	is_int(errors_logged, 1, "the problem is logged once, not at every write");

	snprintf(path, sizeof(path), "%s/filler", dir);
	unlink(path);
	infos_logged = 0;
	for (int i = 0; i < 2; i++) {
		figures_at(&fig, 11000000000ULL, 11 + i);
		ceems_agent_state_slot_update(sf, slots[i], &fig);
	}
	is_int(ceems_agent_state_file_flush(sf), 0, "space back: the file is up to date");
	is_int(infos_logged, 1, "and says so once");
	is_int(errors_logged, 1, "with no other error");
	ceems_agent_state_file_close(sf);

	sf = ceems_agent_state_file_open(dir, 8, "boot-a", &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &seen) : -1, 2,
	       "both jobs come back after a restart");
	ok(seen.n == 2 && seen.cpu_s[0] == 11 && seen.cpu_s[1] == 12 &&
	   seen.tick_ns[0] == 11000000000ULL,
	   "with the figures written once space returned");
	ceems_agent_state_file_close(sf);
out:
	umount2(dir, MNT_DETACH);
	rmdir(dir);
}

static void
copy_file(const char *from, const char *to)
{
	char buf[65536];
	ssize_t n;
	int in = open(from, O_RDONLY | O_CLOEXEC);
	int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);

	if (in < 0 || out < 0)
		die("open", in < 0 ? from : to);
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, (size_t)n) != n)
			die("write", to);
	close(in);
	close(out);
}

/* A file of an older version (FIXTURE, of version OLD), as that agent
 * wrote it: its running job and its finishing job survive the upgrade.
 * Version 4 did not keep the job's CPU counter, version 5 did. */
static void
test_migrate(const char *fixture, uint32_t old)
{
	struct seen live = { 0 }, finishing = { 0 };
	struct state_file *sf;
	char *dir = new_dir(), path[PATH_MAX + 32];
	uint32_t version = 0;
	int err = 0, fd;
	struct stat st;

	snprintf(path, sizeof(path), "%s/jobs.state", dir);
	copy_file(fixture_path(fixture), path);
	/* The fixture's agent had max_jobs 2: as many slots again for the
	 * finishing jobs. */
	sf = ceems_agent_state_file_open(dir, 4, FIXTURE_BOOT_ID, &err);
	if (!ok(sf != NULL, "a version %u file opens (%d)", old, err))
		return;
	is_int(ceems_agent_state_file_restore_finishing(sf, keep_finishing, &finishing), 1,
	       "its finishing job is kept");
	ok(finishing.n == 1 && finishing.jobid[0] == 43, "job 43");
	ok(!finishing.err_known && finishing.energy_j > 0,
	   "with its energy (%.1f J) and no error bound: unknown, not 0",
	   finishing.energy_j);
	is_int(ceems_agent_state_file_restore(sf, keep_live, &live), 1,
	       "its running job is kept");
	ok(live.n == 1 && live.jobid[0] == 42, "job 42");
	is_int(live.fig.tick_ns, 1003000000000ULL,
	       "with the figures of its last tick (1003 s)");
	is_int(live.fig.nsteps, 1, "and its step");
	is_str(live.fig.steps[0].id, "batch", "the batch step");
	ok(live.fig.ledger.joules[CEEMS_DOMAIN_PACKAGE] > 0 &&
	   live.fig.ledger.lifetime_s == 3,
	   "its energy over its 3 s (%.1f J)",
	   live.fig.ledger.joules[CEEMS_DOMAIN_PACKAGE]);
	is_int(live.spec.start_time, 1764000000, "Slurm's start time");
	is_str(live.spec.cluster, "localcluster", "and cluster");
	if (old == 4)
		is_int(live.fig.have_cpu, 0, "its CPU counter is not known: no recovery from it");
	else
		ok(live.fig.have_cpu == 1 && live.fig.cpu_last_ns > 0,
		   "its CPU counter is kept, for recovery");
	is_int(live.fig.gpu.n, 0, "it held no GPU");
	if (old >= 7) {
		const struct state_node *node = ceems_agent_state_file_node(sf);

		ok(live.fig.io.have_io && live.fig.io.read_bytes == 4096000 &&
		   live.fig.io.write_bytes == 8192000 &&
		   live.fig.perf.sw_status == CEEMS_PERF_MEASURED &&
		   live.fig.perf.value[CEEMS_PERF_PAGE_FAULTS] == 777,
		   "its eBPF and perf counts are kept");
		ok(node != NULL && node->tick_ns == 1003000000000ULL && node->ncounters > 0,
		   "and the node's counters, for the recovery of the time the agent was down");
	} else {
		/* Those agents kept no eBPF or perf counts: absent, never
		 * zeros. */
		ok(!live.fig.io.have_io && !live.fig.io.have_net &&
		   live.fig.perf.present == 0 &&
		   live.fig.perf.sw_status == CEEMS_PERF_OFF,
		   "no eBPF or perf counts come from a version %u file", old);
	}
	ceems_agent_state_file_close(sf);

	fd = open(path, O_RDONLY | O_CLOEXEC);
	ok(fd >= 0 && pread(fd, &version, sizeof(version), 8) == 4 &&
	   version > old, "the file is now of the current version (%u)", version);
	if (fd >= 0)
		close(fd);
	snprintf(path, sizeof(path), "%s/jobs.state.bad", dir);
	ok(stat(path, &st) < 0, "nothing set aside");

	memset(&live, 0, sizeof(live));
	sf = ceems_agent_state_file_open(dir, 4, FIXTURE_BOOT_ID, &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &live) : -1, 1,
	       "opened again, the migrated file keeps the job");
	ceems_agent_state_file_close(sf);

	/* Another boot: its jobs are dead, migrated or not. */
	snprintf(path, sizeof(path), "%s/jobs.state", dir);
	unlink(path);
	copy_file(fixture_path(fixture), path);
	memset(&live, 0, sizeof(live));
	sf = ceems_agent_state_file_open(dir, 4, "another-boot", &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &live) : -1, 0,
	       "an old file of another boot is set aside");
	ceems_agent_state_file_close(sf);
	remove_dir(dir);
}

/* A job's eBPF and perf counts, as the agent checkpoints them, come
 * back from the file as they went: a restarted agent adds to them. */
static void
test_counts_round_trip(void)
{
	struct ceems_agent_job_spec spec;
	struct state_figures *fig = calloc(1, sizeof(*fig));
	struct seen live = { 0 };
	struct state_file *sf;
	char *dir = new_dir();
	int err = 0, slot;

	if (fig == NULL)
		die("calloc", "figures");
	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	if (!ok(sf != NULL, "state file opens (%d)", err))
		return;
	spec_for(&spec, 77);
	slot = ceems_agent_state_slot_claim(sf, &spec, 1);
	figures_at(fig, 5000000000ULL, 2.5);
	fig->io.have_io = true;
	fig->io.read_bytes = (uint64_t)getpid() * 4096;
	fig->io.write_bytes = fig->io.read_bytes / 3;
	fig->io.have_net = true;
	fig->io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6] = fig->io.read_bytes + 1;
	fig->io.unmeasured_s = 1.25;
	fig->perf.sw_status = CEEMS_PERF_MEASURED;
	fig->perf.hw_status = CEEMS_PERF_NOT_SUPPORTED;
	fig->perf.present = (1u << CEEMS_PERF_NSW) - 1;
	fig->perf.running_fraction = 1;
	fig->perf.value[CEEMS_PERF_PAGE_FAULTS] = (double)getpid();
	fig->perf.unmeasured_s = 0.75;
	ceems_agent_state_slot_update(sf, slot, fig);
	ceems_agent_state_file_close(sf);

	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &live) : -1, 1,
	       "the job comes back");
	ok(live.fig.io.have_io && live.fig.io.read_bytes == fig->io.read_bytes &&
	   live.fig.io.write_bytes == fig->io.write_bytes && live.fig.io.have_net &&
	   live.fig.io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6] ==
	   fig->io.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV6],
	   "with its IO and network counts");
	is_near(live.fig.io.unmeasured_s, 1.25, 0, "and the time no agent counted them");
	ok(live.fig.perf.sw_status == CEEMS_PERF_MEASURED &&
	   live.fig.perf.hw_status == CEEMS_PERF_NOT_SUPPORTED &&
	   live.fig.perf.present == fig->perf.present &&
	   live.fig.perf.value[CEEMS_PERF_PAGE_FAULTS] == (double)getpid(),
	   "with its perf counts and statuses");
	ceems_agent_state_file_close(sf);

	/* Options a later step turned on are kept. */
	remove_dir(dir);
	dir = new_dir();
	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	spec.series = spec.perf = false;
	slot = ceems_agent_state_slot_claim(sf, &spec, 1);
	ceems_agent_state_slot_update(sf, slot, fig);
	spec.series = spec.perf = true;
	ceems_agent_state_slot_options(sf, slot, &spec);
	ceems_agent_state_file_close(sf);
	memset(&live, 0, sizeof(live));
	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &live) : -1, 1,
	       "the job comes back");
	ok(live.spec.series && live.spec.perf,
	   "with the --ceems-series and --ceems-perf a later step asked for");
	ceems_agent_state_file_close(sf);

	/* A perf status no agent writes is damage: the copy is refused. */
	remove_dir(dir);
	dir = new_dir();
	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	slot = ceems_agent_state_slot_claim(sf, &spec, 1);
	fig->perf.sw_status = CEEMS_PERF_NSTATUS;
	ceems_agent_state_slot_update(sf, slot, fig);
	ceems_agent_state_file_close(sf);
	memset(&live, 0, sizeof(live));
	ceems_log_set_handler(ignore_log, NULL);
	sf = ceems_agent_state_file_open(dir, 4, "boot-a", &err);
	is_int(sf != NULL ? ceems_agent_state_file_restore(sf, keep_live, &live) : -1, 0,
	       "figures with an unknown perf status are not restored");
	ceems_log_set_handler(count_log, NULL);
	ceems_agent_state_file_close(sf);
	free(fig);
	remove_dir(dir);
}

/* Overwrite N bytes of the file at PATH at offsets and with values from
 * a fixed pseudo-random sequence SEED (the same every run). */
static void
damage(const char *path, unsigned seed, int n)
{
	struct stat st;
	int fd = open(path, O_RDWR | O_CLOEXEC);

	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size == 0)
		die("open", path);
	for (int i = 0; i < n; i++) {
		unsigned char b;

		seed = seed * 1103515245u + 12345u;
		b = (unsigned char)(seed >> 16);
		seed = seed * 1103515245u + 12345u;
		if (pwrite(fd, &b, 1, (off_t)((seed >> 4) % (unsigned)st.st_size)) != 1)
			die("pwrite", path);
	}
	close(fd);
}

static int
count_any(void *arg, int slot, const struct ceems_agent_job_spec *spec,
	  uint64_t registered_ns, const struct state_figures *fig)
{
	int *bad = arg;

	(void)slot;
	(void)registered_ns;
	if (spec->jobid == 0 || fig->nsteps > CEEMS_AGENT_MAX_STEPS ||
	    fig->ngaps > CEEMS_AGENT_MAX_GAPS ||
	    fig->nrecovered > CEEMS_AGENT_MAX_GAPS)
		(*bad)++;
	return 0;
}

static int
count_finishing(void *arg, int slot, const struct ceems_agent_job_spec *spec,
		const struct ceems_agent_job_report *report, int64_t start_time,
		int64_t end_time, const struct ceems_job_meta *meta)
{
	int *bad = arg;

	(void)slot;
	(void)start_time;
	(void)end_time;
	if (report->jobid != spec->jobid || report->nsteps > CEEMS_AGENT_MAX_STEPS ||
	    (meta != NULL && memchr(meta->user, '\0', sizeof(meta->user)) == NULL))
		(*bad)++;
	return 0;
}

/* A state file is outside input: damaged anywhere (version 4, migrated;
 * or current), it is read without a crash, and what comes back is
 * within bounds or dropped. */
static void
test_damaged_files(void)
{
	char *dir = new_dir(), path[PATH_MAX + 32];
	int bad = 0, opened = 0;

	snprintf(path, sizeof(path), "%s/jobs.state", dir);
	ceems_log_set_handler(ignore_log, NULL);
	for (unsigned seed = 1; seed <= 300; seed++) {
		struct state_file *sf;
		int err = 0;

		remove_dir(dir);
		if (mkdir(dir, 0700) < 0)
			die("mkdir", dir);
		copy_file(fixture_path("agent/jobs-v4.state"), path);
		if (seed > 150) {
			/* A current file: the fixture migrated once. */
			sf = ceems_agent_state_file_open(dir, 4, FIXTURE_BOOT_ID, &err);
			ceems_agent_state_file_close(sf);
		}
		damage(path, seed, 1 + (int)(seed % 64));
		sf = ceems_agent_state_file_open(dir, 4, FIXTURE_BOOT_ID, &err);
		if (sf == NULL)
			continue;
		opened++;
		ceems_agent_state_file_restore_finishing(sf, count_finishing, &bad);
		ceems_agent_state_file_restore(sf, count_any, &bad);
		ceems_agent_state_file_close(sf);
	}
	ceems_log_set_handler(count_log, NULL);
	ok(opened > 0, "300 damaged files read without a crash (%d opened)", opened);
	is_int(bad, 0, "nothing out of bounds restored from them");
	remove_dir(dir);
}

int
main(void)
{
	ceems_log_set_handler(count_log, NULL);
	ceems_log_set_level(CEEMS_LOG_INFO);
	test_sized_to_use();
	test_migrate("agent/jobs-v4.state", 4);
	test_migrate("agent/jobs-v5.state", 5);
	test_migrate("agent/jobs-v6.state", 6);
	test_migrate("agent/jobs-v7.state", 7);
	test_migrate("agent/jobs-v8.state", 8);
	test_counts_round_trip();
	test_damaged_files();
	test_full_disk();
	done_testing();
}
