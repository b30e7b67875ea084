/* test_io_modes.c - the two ways a job's IO is counted (ebpf = per-call,
 * the eBPF programs of bpf/ceems_io.bpf.c; ebpf = per-tick, the kernel's
 * per-process counters through lib/sources/task_io.c) against the same
 * real workloads, each run by a process of its own as a job's:
 *   dd       dd writes 16 MiB from /dev/zero to a file, 1 MiB blocks;
 *   children 100 short-lived children each write 16 KiB to a file of
 *            its own in four calls, and exit, reaped by the job;
 *   tcp      the job streams 8 MiB over TCP on loopback to a child.
 * Per call counts what reached files, and the network apart, exactly;
 * per tick counts every descriptor (the reads from /dev/zero, the
 * stream's socket, a byte on the test's pipe), all the children's IO
 * through their reaper's counter however briefly they lived: the
 * figures are checked within what doc/gather.md says of each.  Per tick
 * runs as any user; per call needs root and a kernel that loads the
 * programs (else skipped, saying why).
 *
 * And the agent's side of per tick (lib/agent/agent_task_io.c), as root
 * on a cgroup v1 tree: a process of another user moved into a job's
 * cgroup runs short-lived children that write; each tick, light ones
 * included, reads the job's processes from its cgroup.procs, and the
 * job's figures are every child's writes, said to be counted per tick;
 * the process's exit, reaped outside the job, loses nothing read. */
#include "config.h"

#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agent/agent_internal.h"
#include "cgroup/cgroup_path.h"
#include "cgroup/cgroup_stats.h"
#include "model/measure.h"
#include "sources/bpf_io.h"
#include "sources/proc_stats.h"
#include "sources/task_io.h"
#include "../tap.h"

#define MIB (1024 * 1024)
#define DD_BYTES (16 * MIB)
#define CHILDREN 100
#define CHILD_BYTES (16 * 1024)
#define TCP_BYTES (8 * MIB)
/* Per tick: what the job adds beyond the workload's own (the test's
 * pipe, dd's report). */
#define SLACK 4096
#define MAX_PIDS 4096

enum workload { WL_DD, WL_CHILDREN, WL_TCP, WL_N };
static const char *const wl_names[WL_N] = { "dd", "children", "tcp" };

static char dir[] = "/tmp/test_io_modes.XXXXXX";

static void
dd(void)
{
	char of[sizeof(dir) + 16];
	pid_t p = fork();

	if (p == 0) {
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		snprintf(of, sizeof(of), "of=%s/dd", dir);
		dup2(null, 1);
		dup2(null, 2);
		execl("/bin/dd", "dd", "if=/dev/zero", of, "bs=1M", "count=16",
		      (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
}

static void
children(void)
{
	static char buf[CHILD_BYTES / 4];

	for (int i = 0; i < CHILDREN; i++) {
		pid_t p = fork();

		if (p == 0) {
			char path[sizeof(dir) + 16];
			int fd;

			snprintf(path, sizeof(path), "%s/c%d", dir, i);
			fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
			for (int k = 0; fd >= 0 && k < 4; k++)
				if (write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
					_exit(1);
			_exit(fd < 0);
		}
		if (p > 0)
			waitpid(p, NULL, 0);
	}
}

static void
tcp(void)
{
	static char buf[64 * 1024];
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), s;
	pid_t p;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&in, len) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&in, &len) < 0)
		return;
	if ((p = fork()) == 0) {
		int c = accept(l, NULL, NULL);

		while (c >= 0 && read(c, buf, sizeof(buf)) > 0)
			;
		_exit(0);
	}
	close(l);
	s = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (s >= 0 && connect(s, (struct sockaddr *)&in, len) == 0)
		for (size_t sent = 0; sent < TCP_BYTES; sent += sizeof(buf))
			if (write(s, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				break;
	if (s >= 0)
		close(s);
	if (p > 0)
		waitpid(p, NULL, 0);
}

/* The job's first process: waits for GO, runs W, says DONE, waits to
 * LEAVE (so that its counts are read while it lives). */
struct job {
	pid_t pid;
	int go, done, leave;
};

static int
job_start(enum workload w, struct job *j)
{
	int go[2], done[2], leave[2];
	char c;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0 ||
	    pipe2(leave, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);		/* nothing of the test's output twice */
	j->pid = fork();
	if (j->pid == 0) {
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		if (w == WL_DD)
			dd();
		else if (w == WL_CHILDREN)
			children();
		else
			tcp();
		if (write(done[1], "d", 1) != 1 || read(leave[0], &c, 1) < 0)
			_exit(1);
		_exit(0);
	}
	close(go[0]);
	close(done[1]);
	close(leave[0]);
	j->go = go[1];
	j->done = done[0];
	j->leave = leave[1];
	return j->pid > 0 ? 0 : -1;
}

static void
job_finish(struct job *j)
{
	if (write(j->leave, "l", 1) != 1)
		kill(j->pid, SIGKILL);
	waitpid(j->pid, NULL, 0);
	close(j->go);
	close(j->done);
	close(j->leave);
}

/* Wait up to MS for the job to say it is done. */
static bool
job_done(struct job *j, int ms)
{
	struct pollfd p = { j->done, POLLIN, 0 };
	char c;

	return poll(&p, 1, ms) == 1 && read(j->done, &c, 1) == 1;
}

/* Every process below ROOT (ROOT too), as the job's cgroup would list
 * them, read into S: their number. */
static size_t
read_tree(pid_t root, struct ceems_task_io_sample *s)
{
	static uint32_t pid[MAX_PIDS], ppid[MAX_PIDS];
	static bool in[MAX_PIDS];
	size_t n = 0, out = 0;
	DIR *d = opendir("/proc");
	struct dirent *e;
	bool grew = true;

	while (d != NULL && (e = readdir(d)) != NULL && n < MAX_PIDS) {
		char text[1024];
		uint64_t pp;
		uint32_t p = (uint32_t)strtoul(e->d_name, NULL, 10);

		if (p == 0 ||
		    ceems_proc_stats_read_pid_file("/proc", p, "stat", text, sizeof(text)) < 0 ||
		    ceems_proc_stats_parse_pid_field(text, 4, &pp) < 0)
			continue;
		pid[n] = p;
		ppid[n] = (uint32_t)pp;
		in[n] = p == (uint32_t)root;
		n++;
	}
	if (d != NULL)
		closedir(d);
	while (grew) {
		grew = false;
		for (size_t i = 0; i < n; i++)
			for (size_t k = 0; !in[i] && k < n; k++)
				if (in[k] && pid[k] == ppid[i])
					in[i] = grew = true;
	}
	for (size_t i = 0; i < n; i++)
		if (in[i] && ceems_task_io_read_pid("/proc", pid[i], (uint32_t)getuid(),
						    &s[out]) == 0)
			out++;
	return out;
}

/* W counted per tick, a reading every 20 ms, into *C. */
static int
per_tick(enum workload w, struct ceems_task_io_counts *c, unsigned *readings)
{
	static struct ceems_task_io_sample s[MAX_PIDS];
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct job j;
	bool done = false;
	int r = -1;

	*readings = 0;
	if (t == NULL || job_start(w, &j) < 0)
		return -1;
	if (write(j.go, "g", 1) == 1) {
		while (!done) {
			done = job_done(&j, 20);
			/* After done: the job's last counts, its children reaped. */
			if ((r = ceems_task_io_job_update(t, s, read_tree(j.pid, s))) < 0)
				break;
			(*readings)++;
		}
	}
	ceems_task_io_job_total(t, c);
	job_finish(&j);
	ceems_task_io_job_free(t);
	return r;
}

static bool
within(uint64_t got, uint64_t want, uint64_t slack)
{
	return got >= want && got <= want + slack;
}

static void
test_per_tick(void)
{
	for (int w = 0; w < WL_N; w++) {
		struct ceems_task_io_counts c;
		unsigned readings;
		int r = per_tick((enum workload)w, &c, &readings);

		ok(r == 0, "%s per tick: %u readings (rchar %llu, wchar %llu, syscr %llu, syscw %llu)",
		   wl_names[w], readings, (unsigned long long)c.rchar,
		   (unsigned long long)c.wchar, (unsigned long long)c.syscr,
		   (unsigned long long)c.syscw);
		if (w == WL_DD)
			ok(within(c.wchar, DD_BYTES, SLACK) && c.rchar >= DD_BYTES &&
			   c.syscw >= 16, "dd per tick: its 16 MiB written; its reads "
			   "of /dev/zero count too");
		else if (w == WL_CHILDREN)
			ok(within(c.wchar, CHILDREN * CHILD_BYTES, SLACK) &&
			   c.syscw >= CHILDREN * 4 && c.syscw <= CHILDREN * 4 + 4,
			   "children per tick: every child's writes, through the job's counter");
		else
			ok(within(c.wchar, TCP_BYTES, SLACK) && within(c.rchar, TCP_BYTES, SLACK),
			   "tcp per tick: the stream's bytes sent and received, as IO");
	}
}

#ifdef HAVE_BPF
static void
per_call(struct ceems_bpf_io *bpf, enum workload w)
{
	struct ceems_agent_io_report rep;
	uint32_t slot;
	struct job j;
	uint64_t tcp_in, tcp_out;
	bool ran;

	if (ceems_bpf_io_job_start(bpf, (uint32_t)getuid(), &slot) < 0 ||
	    job_start(w, &j) < 0) {
		ok(false, "%s per call: a slot and a job", wl_names[w]);
		return;
	}
	memset(&rep, 0, sizeof(rep));
	ran = ceems_bpf_io_tag_pid(bpf, slot, (uint32_t)j.pid, false) == 0 &&
	      write(j.go, "g", 1) == 1 && job_done(&j, 60000) &&
	      ceems_bpf_io_read(bpf, slot, &rep) == 0;
	ok(ran, "%s per call: tagged, run, read (read %llu in %llu calls, written %llu in %llu)",
	   wl_names[w], (unsigned long long)rep.read_bytes,
	   (unsigned long long)rep.read_ops, (unsigned long long)rep.write_bytes,
	   (unsigned long long)rep.write_ops);
	job_finish(&j);
	tcp_in = rep.net_bytes[CEEMS_IO_IN][CEEMS_IO_TCP][CEEMS_IO_IPV4];
	tcp_out = rep.net_bytes[CEEMS_IO_OUT][CEEMS_IO_TCP][CEEMS_IO_IPV4];
	if (w == WL_DD)
		/* What it reads of files: the loader's look at dd's libraries. */
		ok(rep.write_bytes == DD_BYTES && rep.write_ops == 16 &&
		   rep.read_bytes < 64 * 1024, "dd per call: 16 MiB in 16 writes, "
		   "/dev/zero not a file");
	else if (w == WL_CHILDREN)
		ok(rep.write_bytes == CHILDREN * CHILD_BYTES && rep.write_ops == CHILDREN * 4,
		   "children per call: every child's writes, each as it made it");
	else
		ok(tcp_out == TCP_BYTES && tcp_in == TCP_BYTES && rep.write_bytes == 0,
		   "tcp per call: the stream by protocol (in %llu, out %llu), no file IO",
		   (unsigned long long)tcp_in, (unsigned long long)tcp_out);
	ceems_bpf_io_job_end(bpf, slot);
}

static void
test_per_call(void)
{
	char why[768];
	struct ceems_bpf_io *bpf;

	if (geteuid() != 0) {
		ok(true, "# skip per call: loading the programs needs root");
		return;
	}
	bpf = ceems_bpf_io_open(false, CEEMS_BPF_ATTACH_NONE, 8, why, sizeof(why));
	if (bpf == NULL) {
		ok(true, "# skip per call: %s", why);
		return;
	}
	for (int w = 0; w < WL_N; w++)
		per_call(bpf, (enum workload)w);
	ceems_bpf_io_close(bpf);
}
#endif

/* The agent test's job: at each byte on GO, a child that writes
 * CHILD_BYTES to FD and exits, reaped here; then a byte on DONE. */
static void
agent_job_process(int go, int done, int fd)
{
	static char buf[CHILD_BYTES];
	char c;

	while (read(go, &c, 1) == 1) {
		pid_t p = fork();

		if (p == 0)
			_exit(write(fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf));
		if (p < 0 || waitpid(p, NULL, 0) < 0 || write(done, "d", 1) != 1)
			_exit(1);
	}
	_exit(0);
}

/* Make the job's v1 directories (freezer, cpuacct) into CG; how many. */
static int
agent_job_dirs(struct ceems_agent *a, struct agent_job *j,
	       char cg[2][CEEMS_CGROUP_PATH_MAX * 2])
{
	static const enum ceems_cgroup_controller ctl[] = {
		CEEMS_CG_FREEZER, CEEMS_CG_CPUACCT,
	};
	int made = 0;

	for (int i = 0; i < 2; i++) {
		snprintf(j->spec.cgroup.v1[ctl[i]], CEEMS_CGROUP_PATH_MAX,
			 "/ceems_test_io_modes_%d", (int)getpid());
		if (ceems_cgroup_path_job_dir(&j->spec.cgroup, &a->mounts, ctl[i],
					      "", cg[i], sizeof(cg[i])) < 0 ||
		    mkdir(cg[i], 0755) < 0)
			break;
		made++;
	}
	return made;
}

/* The job's process: forked, as uid 65534, moved into CG's cgroups. */
static pid_t
agent_job_spawn(char cg[2][CEEMS_CGROUP_PATH_MAX * 2], const char *path,
		int go[2], int done[2])
{
	pid_t pid;

	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);

		close(go[1]);
		close(done[0]);
		if (fd < 0 || setresgid(65534, 65534, 65534) < 0 ||
		    setresuid(65534, 65534, 65534) < 0)
			_exit(1);
		agent_job_process(go[0], done[1], fd);
	}
	close(go[0]);
	close(done[1]);
	for (int i = 0; pid > 0 && i < 2; i++) {
		char procs[CEEMS_CGROUP_PATH_MAX * 2 + 16];
		int fd;

		if (snprintf(procs, sizeof(procs), "%s/cgroup.procs", cg[i]) >=
		    (int)sizeof(procs))
			fd = -1;
		else
			fd = open(procs, O_WRONLY | O_CLOEXEC);
		if (fd < 0 || dprintf(fd, "%d\n", (int)pid) <= 0)
			ok(false, "agent per tick: the job's process moved into %s", cg[i]);
		if (fd >= 0)
			close(fd);
	}
	return pid;
}

/* An agent restarted while job J's process (GO, DONE its pipes) runs:
 * the new agent's first reading is a baseline, what the earlier one
 * counted (its checkpoint) and what the job does after add up, the
 * seconds between said; nothing counted twice. */
static void
test_agent_restart(struct ceems_agent *a, const struct agent_job *j, int go,
		   int done, const char *how)
{
	struct agent_job *j2 = calloc(1, sizeof(*j2));
	struct ceems_agent_io_report saved, out;
	char c;

	if (j2 == NULL)
		return;
	ceems_agent_bpf_fill(a, j, &saved);
	j2->spec = j->spec;
	ceems_agent_bpf_resume(a, j2, &saved, 2.0);
	if (write(go, "g", 1) != 1 || read(done, &c, 1) != 1)
		ok(false, "agent per tick (%s): a write after the restart", how);
	ceems_agent_bpf_job_read(a, j2, false);
	ceems_agent_bpf_fill(a, j2, &out);
	ok(out.have_io && out.counting == CEEMS_IO_PER_TICK &&
	   within(out.write_bytes, saved.write_bytes + CHILD_BYTES, 4) &&
	   out.unmeasured_s == 2.0,
	   "agent per tick (%s): restarted: the checkpoint's %llu bytes and the %d "
	   "after, none twice (%llu), the 2 s between said", how,
	   (unsigned long long)saved.write_bytes, CHILD_BYTES,
	   (unsigned long long)out.write_bytes);
	ceems_agent_bpf_job_end(j2);
	free(j2);
}

/* BY_PROC: /proc/PID/io read, not the task iterator. */
static void
test_agent_per_tick(bool by_proc)
{
	const char *how = "/proc";
	struct ceems_agent *a = calloc(1, sizeof(*a));
	struct agent_job *j = calloc(1, sizeof(*j));
	char cg[2][CEEMS_CGROUP_PATH_MAX * 2], path[sizeof(dir) + 16], *text;
	struct ceems_ledger_job_tick t;
	int go[2], done[2], fd, made = 0, err = 0;
	uint64_t want = 3 * CHILD_BYTES;
	pid_t pid;
	char c;

	if (a == NULL || j == NULL || (text = calloc(1, 1 << 20)) == NULL) {
		printf("Bail out! out of memory\n");
		exit(1);
	}
	fd = open("/proc/self/mountinfo", O_RDONLY | O_CLOEXEC);
	if (geteuid() != 0 || fd < 0 || read(fd, text, (1 << 20) - 1) <= 0 ||
	    access("/sys/fs/cgroup/cpuacct/cgroup.procs", W_OK) != 0) {
		ok(true, "# skip the agent per tick (%s): no writable cgroup v1 tree", how);
		goto out;
	}
	ceems_cgroup_path_mounts_from_mountinfo(text, &a->mounts);
	a->cgroup_prefix = "";
	snprintf(a->config.procfs_root, sizeof(a->config.procfs_root), "/proc");
	snprintf(a->config.ebpf, sizeof(a->config.ebpf), "per-tick");
	j->spec.uid = 65534;
	j->spec.cgroup.version = CEEMS_CGROUP_V1;
	if ((made = agent_job_dirs(a, j, cg)) < 2) {
		ok(true, "# skip the agent per tick (%s): no freezer and cpuacct hierarchies", how);
		goto out;
	}
	snprintf(path, sizeof(path), "%s/agent", dir);
	close(open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666));
	chmod(path, 0666);
	ceems_agent_bpf_open(a);
	if (by_proc) {
		ceems_task_iter_close(a->task_iter);
		a->task_iter = NULL;
	} else if (a->task_iter != NULL) {
		how = "iterator";
	} else {
		how = "/proc, no iterator here";
	}
	ok(a->task_io && a->bpf == NULL, "agent per tick (%s): no program on any call", how);
	ceems_agent_bpf_job_start(a, j);
	ok(j->tio != NULL && j->bpf_tagged && j->io.have_io &&
	   j->io.counting == CEEMS_IO_PER_TICK && j->io.write_bytes == 0,
	   "agent per tick (%s): an empty job measured from its start", how);
	if ((pid = agent_job_spawn(cg, path, go, done)) < 0)
		goto stop;
	j->reader = ceems_cgroup_stats_reader_open(&j->spec.cgroup, &a->mounts, "", &err);
	for (int i = 0; i < 3; i++) {
		if (write(go[1], "g", 1) != 1 || read(done[0], &c, 1) != 1)
			ok(false, "agent per tick (%s): a child's writes", how);
		/* Light ticks: per tick reads the job at every one. */
		a->tick_seq++;
		ceems_agent_tick_collect_job(a, j, false, &t);
	}
	ok(within(j->io.write_bytes, want, 16) && j->io.write_ops >= 3 && !j->io.have_net,
	   "agent per tick (%s): three short-lived children's %llu bytes through their "
	   "parent (%llu, light ticks)", how, (unsigned long long)want,
	   (unsigned long long)j->io.write_bytes);
	test_agent_restart(a, j, go[1], done[0], how);
	close(go[1]);
	waitpid(pid, NULL, 0);
	close(done[0]);
	want = j->io.write_bytes;
	ceems_agent_bpf_job_read(a, j, false);
	is_int(j->io.write_bytes, want,
	       "agent per tick: the job's process reaped outside the job: nothing read is lost");
	ceems_cgroup_stats_reader_close(j->reader);
stop:
	ceems_agent_bpf_job_end(j);
	ok(j->tio == NULL, "agent per tick (%s): the job's tracker freed at its end", how);
	ceems_agent_bpf_close(a);
	unlink(path);
out:
	if (fd >= 0)
		close(fd);
	for (int i = made - 1; i >= 0; i--)
		rmdir(cg[i]);
	free(text);
	free(j);
	free(a);
}

static void
cleanup(void)
{
	char path[sizeof(dir) + 16];

	snprintf(path, sizeof(path), "%s/dd", dir);
	unlink(path);
	for (int i = 0; i < CHILDREN; i++) {
		snprintf(path, sizeof(path), "%s/c%d", dir, i);
		unlink(path);
	}
	rmdir(dir);
}

int
main(void)
{
	if (mkdtemp(dir) == NULL) {
		ok(false, "a directory for the workloads");
		return done_testing();
	}
	test_per_tick();
	test_agent_per_tick(false);
	test_agent_per_tick(true);
#ifdef HAVE_BPF
	test_per_call();
#endif
	cleanup();
	return done_testing();
}
