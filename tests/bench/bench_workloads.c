/* bench_workloads.c - what counting a job's IO and network costs the
 * job's own work, on realistic workloads rather than a loop of system
 * calls: each workload timed with the programs of bpf/ceems_io.bpf.c
 * not loaded ("off"), loaded with this process not a job's ("outside":
 * what every other process of the node pays), loaded with it tagged as
 * a job's ("job", its children followed), and with programs that do
 * nothing on the same hooks ("floor", bpf/ceems_floor.bpf.c: what the
 * hooks themselves cost; fexit where the programs got fentry, else BTF
 * tracepoints).  The four alternate in each round, in an
 * order that turns from round to round; a ratio is the median over the
 * rounds of each round's time over its "off" time.  Times are CPU
 * time (the process's and its children's, where the programs' work is
 * charged), not wall time, which on a shared node swings with the
 * others' load.  ebpf = per-tick
 * puts no program on any call (its "job" is "off"): its cost is the
 * agent's reading of the node's tasks, timed last.
 *
 * Workloads (each a fixed amount of work):
 *   seq      128 MiB written over a file in 1 MiB blocks, read back;
 *   read4k   100000 reads of 4 KiB at random places of a cached 16 MiB file;
 *   files    tar extracts a source tree (the repository's lib/), every
 *            file read back, the tree removed;
 *   tcp      128 MiB streamed over TCP on loopback to a child, 64 KiB writes;
 *   rr       20000 requests and responses of 64 bytes over TCP loopback;
 *   cpu      arithmetic, with a 4 KiB write every 2 ms or so.
 * Root (loading needs CAP_BPF and CAP_PERFMON); `make bench-workloads`,
 * figures in doc/performance.md.
 *
 *   bench_workloads [ROUNDS] [SOURCE_DIR] [auto|fentry|kprobe|btf|tracepoint] [SCALE]
 *
 * SCALE (default 1) divides every workload's work but the files' (for
 * the virtual machine, where instructions are emulated). */
#include "config.h"

#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/libbpf.h>

#include "bench_time.h"
#include "sources/bpf_io.h"
#include "sources/task_io.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "ceems_floor.skel.h"
#pragma GCC diagnostic pop

#define MIB (1024 * 1024)
#define MAX_ROUNDS 31

enum mode { OFF, OUTSIDE, JOB, FLOOR, NMODES };
static const char *const mode_names[NMODES] = { "off", "outside", "job", "floor" };

enum workload { SEQ, READ4K, FILES, TCP, RR, CPU, NWORK };
static const char *const work_names[NWORK] = {
	"seq 1 MiB", "read 4 KiB", "files (tar)", "tcp stream", "rr 64 B", "cpu",
};

static char dir[] = "/tmp/bench_workloads.XXXXXX";
static int scale = 1;
static char big[MIB];
static volatile uint64_t sink;

/* The file seq writes over (made once: allocating its pages anew each
 * time made its times swing with the node's memory, not the hooks). */
static int seq_fd = -1;

static void
seq(void)
{
	for (int i = 0; seq_fd >= 0 && i < 128 / scale; i++)
		sink += (uint64_t)pwrite(seq_fd, big, sizeof(big), (off_t)i * MIB);
	for (int i = 0; seq_fd >= 0 && i < 128 / scale; i++)
		sink += (uint64_t)pread(seq_fd, big, sizeof(big), (off_t)i * MIB);
}

static int cached_fd = -1;

static void
read4k(void)
{
	static char buf[4096];
	uint32_t x = 12345;

	for (int i = 0; i < 100000 / scale; i++) {
		x = x * 1103515245u + 12345u;
		sink += (uint64_t)pread(cached_fd, buf, sizeof(buf),
					(off_t)((x >> 8) % 4096) * 4096);
	}
}

static int
read_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	static char buf[65536];
	int fd;

	(void)st;
	(void)f;
	if (type != FTW_F)
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	while (fd >= 0 && read(fd, buf, sizeof(buf)) > 0)
		sink++;
	if (fd >= 0)
		close(fd);
	return 0;
}

static int
remove_one(const char *path, const struct stat *st, int type, struct FTW *f)
{
	(void)st;
	(void)f;
	return type == FTW_DP ? rmdir(path) : unlink(path);
}

static void
files(void)
{
	char tree[sizeof(dir) + 16], tar[sizeof(dir) + 16];
	pid_t p;

	snprintf(tree, sizeof(tree), "%s/tree", dir);
	snprintf(tar, sizeof(tar), "%s/src.tar", dir);
	mkdir(tree, 0700);
	if ((p = fork()) == 0) {
		execl("/bin/tar", "tar", "xf", tar, "-C", tree, (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, NULL, 0);
	nftw(tree, read_one, 16, FTW_PHYS);
	nftw(tree, remove_one, 16, FTW_PHYS | FTW_DEPTH);
}

/* A connected TCP loopback pair's two ends, or -1. */
static int
tcp_pair(int *a, int *b)
{
	struct sockaddr_in in = { .sin_family = AF_INET };
	socklen_t len = sizeof(in);
	int l = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;

	in.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (l < 0 || bind(l, (struct sockaddr *)&in, len) < 0 || listen(l, 1) < 0 ||
	    getsockname(l, (struct sockaddr *)&in, &len) < 0)
		return -1;
	*a = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (*a < 0 || connect(*a, (struct sockaddr *)&in, len) < 0 ||
	    (*b = accept(l, NULL, NULL)) < 0)
		return -1;
	close(l);
	setsockopt(*a, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	setsockopt(*b, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	return 0;
}

static void
tcp(bool rr)
{
	static char buf[65536];
	int a, b;
	pid_t p;

	if (tcp_pair(&a, &b) < 0)
		return;
	if ((p = fork()) == 0) {
		close(a);
		if (rr) {
			while (read(b, buf, 64) == 64 && write(b, buf, 64) == 64)
				;
		} else {
			while (read(b, buf, sizeof(buf)) > 0)
				;
		}
		_exit(0);
	}
	close(b);
	if (rr) {
		for (int i = 0; i < 20000 / scale; i++)
			if (write(a, buf, 64) != 64 || read(a, buf, 64) != 64)
				break;
	} else {
		for (int i = 0; i < 128 * 16 / scale; i++)
			if (write(a, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
				break;
	}
	close(a);
	if (p > 0)
		waitpid(p, NULL, 0);
}

static void
cpu(void)
{
	static char buf[4096];
	char path[sizeof(dir) + 16];
	uint64_t x = 1;
	int fd;

	snprintf(path, sizeof(path), "%s/cpu", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (int i = 0; i < 100 / scale; i++) {
		for (int k = 0; k < 2000000; k++)
			x = x * 6364136223846793005u + 1442695040888963407u;
		if (fd >= 0)
			sink += (uint64_t)write(fd, buf, sizeof(buf));
	}
	sink += x;
	if (fd >= 0)
		close(fd);
	unlink(path);
}

/* CPU time this process and its reaped children used, in ms: on a
 * shared node, wall time measures the other users' load as much as the
 * hooks; the programs run in the calling process, charged to it. */
static double
cpu_ms(void)
{
	struct rusage self, children;

	getrusage(RUSAGE_SELF, &self);
	getrusage(RUSAGE_CHILDREN, &children);
	return (double)(self.ru_utime.tv_sec + self.ru_stime.tv_sec +
			children.ru_utime.tv_sec + children.ru_stime.tv_sec) * 1e3 +
	       (double)(self.ru_utime.tv_usec + self.ru_stime.tv_usec +
			children.ru_utime.tv_usec + children.ru_stime.tv_usec) / 1e3;
}

/* Workload W's CPU time (its children's included), in ms. */
static double
run(enum workload w)
{
	double t0 = cpu_ms();

	switch (w) {
	case SEQ: seq(); break;
	case READ4K: read4k(); break;
	case FILES: files(); break;
	case TCP: tcp(false); break;
	case RR: tcp(true); break;
	case CPU: cpu(); break;
	default: break;
	}
	return cpu_ms() - t0;
}

static double t[NWORK][NMODES][MAX_ROUNDS];

/* The attach types the real programs got (main), which the empty
 * ones take: fentry, else BTF tracepoints. */
static bool io_fentry, net_fentry;

/* The empty programs on the hooks the real ones use, attached. */
static struct ceems_floor *
open_floor(void)
{
	struct ceems_floor *fl = ceems_floor__open();
	struct bpf_program *p;

	if (fl == NULL)
		return NULL;
	bpf_object__for_each_program(p, fl->obj) {
		const char *sec = bpf_program__section_name(p);
		bool net = strstr(sec, "inet") != NULL || strstr(sec, "sock_") != NULL;
		bool fexit = strncmp(sec, "fexit/", 6) == 0;
		bool want = strstr(sec, "sched_process") != NULL ||
			    (net ? fexit == net_fentry : fexit == io_fentry);

		bpf_program__set_autoload(p, want);
	}
	if (ceems_floor__load(fl) < 0 || ceems_floor__attach(fl) < 0) {
		ceems_floor__destroy(fl);
		return NULL;
	}
	return fl;
}

/* Every workload under mode M, round R (FORCE: the attach type). */
static int
run_mode(enum mode m, int r, int force)
{
	struct ceems_bpf_io *io = NULL;
	struct ceems_floor *fl = NULL;
	char why[768];
	uint32_t slot;

	if (m == OUTSIDE || m == JOB) {
		io = ceems_bpf_io_open(false, (enum ceems_bpf_attach)force, 8, why, sizeof(why));
		if (io == NULL) {
			fprintf(stderr, "bench_workloads: %s\n", why);
			return -1;
		}
		if (m == JOB && (ceems_bpf_io_job_start(io, (uint32_t)getuid(), &slot) < 0 ||
				 ceems_bpf_io_tag_pid(io, slot, (uint32_t)getpid(), false) < 0)) {
			fprintf(stderr, "bench_workloads: cannot tag this process\n");
			return -1;
		}
	} else if (m == FLOOR) {
		fl = open_floor();
		if (fl == NULL) {
			fprintf(stderr, "bench_workloads: the empty programs did not load\n");
			return -1;
		}
	}
	for (int w = 0; w < NWORK; w++)
		t[w][m][r] = run((enum workload)w);
	if (io != NULL && m == JOB)
		ceems_bpf_io_job_end(io, slot);
	ceems_bpf_io_close(io);
	ceems_floor__destroy(fl);
	return 0;
}

/* Set up the workloads' files: a cached 16 MiB file, a tarball of
 * SRC/lib. */
static int
prepare(const char *src)
{
	char path[sizeof(dir) + 16];
	pid_t p;
	int status = 1;

	if (mkdtemp(dir) == NULL)
		return -1;
	memset(big, 'x', sizeof(big));
	snprintf(path, sizeof(path), "%s/cached", dir);
	cached_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (int i = 0; cached_fd >= 0 && i < 16; i++)
		if (write(cached_fd, big, sizeof(big)) != (ssize_t)sizeof(big))
			return -1;
	snprintf(path, sizeof(path), "%s/seq", dir);
	seq_fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	for (int i = 0; seq_fd >= 0 && i < 128; i++)
		if (write(seq_fd, big, sizeof(big)) != (ssize_t)sizeof(big))
			return -1;
	snprintf(path, sizeof(path), "%s/src.tar", dir);
	if ((p = fork()) == 0) {
		execl("/bin/tar", "tar", "cf", path, "-C", src, "lib", (char *)NULL);
		_exit(127);
	}
	if (p > 0)
		waitpid(p, &status, 0);
	return cached_fd >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static void
cleanup(void)
{
	char path[sizeof(dir) + 16];

	snprintf(path, sizeof(path), "%s/cached", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/seq", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/src.tar", dir);
	unlink(path);
	rmdir(dir);
}

/* What per tick costs the agent: a reading of every task of the node. */
static void
per_tick_cost(void)
{
	char why[256];
	struct ceems_task_iter *it = ceems_task_iter_open(why, sizeof(why));
	double ms[21];
	int tasks = 0;

	if (it == NULL) {
		printf("per-tick: no task iterator (%s)\n", why);
		return;
	}
	for (int i = 0; i < 21; i++) {
		double t0 = bench_now_ms();

		ceems_task_iter_read(it);
		ms[i] = bench_now_ms() - t0;
	}
	for (uint32_t pid = 1; pid < 4194304; pid++) {
		struct ceems_task_io_sample s;

		if (ceems_task_iter_find(it, pid, 0, &s) == 0)
			tasks++;
	}
	printf("per-tick: no program on any call; the agent's reading of the node's "
	       "%d processes: %.3f ms a tick (median of 21)\n", tasks,
	       bench_sort_median(ms, 21));
	ceems_task_iter_close(it);
}

int
main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	const char *src = argc > 2 ? argv[2] : ".";
	int force = ceems_bpf_choose_force_from_word(argc > 3 ? argv[3] : "auto");

	scale = argc > 4 ? atoi(argv[4]) : 1;
	struct ceems_bpf_io *io;
	char why[768];

	if (rounds < 1 || rounds > MAX_ROUNDS || force < 0 || scale < 1 || scale > 64) {
		fprintf(stderr, "usage: bench_workloads [ROUNDS <= %d] [SOURCE_DIR] "
			"[auto|fentry|kprobe|btf|tracepoint] [SCALE 1..64]\n", MAX_ROUNDS);
		return 2;
	}
	if (prepare(src) < 0) {
		perror("bench_workloads: setup");
		return 1;
	}
	io = ceems_bpf_io_open(false, (enum ceems_bpf_attach)force, 8, why, sizeof(why));
	if (io == NULL) {
		fprintf(stderr, "bench_workloads: %s\n", why);
		return 1;
	}
	io_fentry = ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_IO) == CEEMS_BPF_ATTACH_FENTRY;
	net_fentry = ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_NET) == CEEMS_BPF_ATTACH_FENTRY;
	printf("attach: IO by %s, network by %s; %d rounds\n",
	       ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_IO)),
	       ceems_bpf_choose_attach_name(ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_NET)),
	       rounds);
	ceems_bpf_io_close(io);
	for (int w = 0; w < NWORK; w++)
		run((enum workload)w);	/* warm up */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < NMODES; k++)
			if (run_mode((enum mode)((k + r) % NMODES), r, force) < 0)
				return 1;
	printf("%-12s %9s %9s %9s %9s   (ms of CPU, median; ratios to off: median of rounds)\n",
	       "workload", mode_names[OFF], mode_names[OUTSIDE], mode_names[JOB],
	       mode_names[FLOOR]);
	for (int w = 0; w < NWORK; w++) {
		double ratio[NMODES][MAX_ROUNDS], med[NMODES];

		for (int m = 0; m < NMODES; m++)
			for (int r = 0; r < rounds; r++)
				ratio[m][r] = t[w][m][r] / t[w][OFF][r];
		for (int m = 0; m < NMODES; m++) {
			double copy[MAX_ROUNDS];

			memcpy(copy, t[w][m], sizeof(copy));
			med[m] = bench_sort_median(copy, (size_t)rounds);
		}
		printf("%-12s %9.1f %9.1f %9.1f %9.1f   x%.3f x%.3f x%.3f\n",
		       work_names[w], med[OFF], med[OUTSIDE], med[JOB], med[FLOOR],
		       bench_sort_median(ratio[OUTSIDE], (size_t)rounds),
		       bench_sort_median(ratio[JOB], (size_t)rounds),
		       bench_sort_median(ratio[FLOOR], (size_t)rounds));
	}
	per_tick_cost();
	close(cached_fd);
	close(seq_fd);
	cleanup();
	return 0;
}
