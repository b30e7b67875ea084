/* bench_syscall.c - what the eBPF programs of bpf/ceems_io.bpf.c cost the
 * processes of a node: a syscall-heavy loop (getppid, a one-byte write
 * to /dev/null, a 4 KiB pread of a cached file: three calls, two of
 * them hooked) timed with the programs not loaded, loaded (the process
 * not a job's: what every process of the node pays) and loaded with the
 * process tagged as a job's (what a job pays).  The three alternate,
 * ROUNDS times, so that the ratios compare runs made side by side.
 * Root (loading needs CAP_BPF and CAP_PERFMON); `make bench-syscall`,
 * figures in doc/performance.md.
 *
 * The first argument picks the attach type as the ebpf key does: auto
 * (the best the kernel accepts), or forced: fentry, kprobe, btf (BTF
 * tracepoints), tracepoint.
 *
 *   bench_syscall [auto|fentry|kprobe|btf|tracepoint] [OPS] [ROUNDS] [blocks] */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench_time.h"
#include "sources/bpf_io.h"

#define MAX_ROUNDS 64

static volatile long sink;

#define BLOCK (64 * 1024)

/* Nanoseconds per loop turn over OPS turns: the syscall-heavy loop, or
 * (BLOCKS) 64 KiB preads of a cached file, as a program reading its
 * input in blocks. */
static double
run_loop(int null_fd, int file_fd, long ops, bool blocks)
{
	static char buf[BLOCK];
	double t0 = bench_now_ms();

	for (long i = 0; i < ops; i++) {
		if (blocks) {
			sink += pread(file_fd, buf, BLOCK, 0);
			continue;
		}
		sink += getppid();
		sink += write(null_fd, buf, 1);
		sink += pread(file_fd, buf, 4096, 0);
	}
	return (bench_now_ms() - t0) * 1e6 / (double)ops;
}

int
main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "auto";
	int force = ceems_bpf_choose_force_from_word(mode);
	bool blocks = argc > 4 && strcmp(argv[4], "blocks") == 0;
	long ops = argc > 2 ? atol(argv[2]) : 200000;
	int rounds = argc > 3 ? atoi(argv[3]) : 11;
	double off[MAX_ROUNDS], on[MAX_ROUNDS], job[MAX_ROUNDS];
	double r_on[MAX_ROUNDS], r_job[MAX_ROUNDS];
	static char buf[BLOCK];
	char path[] = "/tmp/bench_syscall.XXXXXX", why[768];
	int null_fd, file_fd;

	enum ceems_bpf_attach io_attach = CEEMS_BPF_ATTACH_NONE;
	char refusals[512] = "";

	if (force < 0 || rounds < 1 || rounds > MAX_ROUNDS || ops < 1) {
		fprintf(stderr, "usage: bench_syscall [auto|fentry|kprobe|btf|tracepoint] "
			"[OPS] [ROUNDS <= %d] [blocks]\n", MAX_ROUNDS);
		return 2;
	}
	memset(buf, 'x', sizeof(buf));
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	file_fd = mkstemp(path);
	if (null_fd < 0 || file_fd < 0 || write(file_fd, buf, sizeof(buf)) != sizeof(buf)) {
		perror("bench_syscall: setup");
		return 1;
	}
	unlink(path);
	run_loop(null_fd, file_fd, ops, blocks);	/* warm up */
	for (int r = 0; r < rounds; r++) {
		struct ceems_bpf_io *io;
		uint32_t slot;

		off[r] = run_loop(null_fd, file_fd, ops, blocks);
		io = ceems_bpf_io_open(false, (enum ceems_bpf_attach)force, 8,
				       why, sizeof(why));
		if (io == NULL) {
			fprintf(stderr, "bench_syscall: %s\n", why);
			return 1;
		}
		io_attach = ceems_bpf_io_attach(io, CEEMS_BPF_HOOK_IO);
		snprintf(refusals, sizeof(refusals), "%s", ceems_bpf_io_refusals(io));
		on[r] = run_loop(null_fd, file_fd, ops, blocks);
		if (ceems_bpf_io_job_start(io, (uint32_t)getuid(), &slot) < 0 ||
		    ceems_bpf_io_tag_pid(io, slot, (uint32_t)getpid(), false) < 0) {
			fprintf(stderr, "bench_syscall: cannot tag this process\n");
			return 1;
		}
		job[r] = run_loop(null_fd, file_fd, ops, blocks);
		ceems_bpf_io_job_end(io, slot);
		ceems_bpf_io_close(io);
		r_on[r] = on[r] / off[r];
		r_job[r] = job[r] / off[r];
	}
	printf("attach %s: IO by %s, %ld loop turns (%s) x %d rounds\n", mode,
	       ceems_bpf_choose_attach_name(io_attach), ops,
	       blocks ? "one 64 KiB pread each" : "3 calls each", rounds);
	if (refusals[0] != '\0')
		printf("better types refused: %s\n", refusals);
	printf("not loaded:          %7.1f ns/turn (median)\n", bench_sort_median(off, (size_t)rounds));
	printf("loaded, not a job's: %7.1f ns/turn, ratio %.3f (median of rounds)\n",
	       bench_sort_median(on, (size_t)rounds), bench_sort_median(r_on, (size_t)rounds));
	printf("loaded, a job's:     %7.1f ns/turn, ratio %.3f (median of rounds)\n",
	       bench_sort_median(job, (size_t)rounds), bench_sort_median(r_job, (size_t)rounds));
	return 0;
}
