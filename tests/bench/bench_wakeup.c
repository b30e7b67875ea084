/* bench_wakeup.c - what the machine charges a process for waking up
 * once a second and doing nothing, measured beside the side-by-side
 * benchmark's windows (tests/bench/run-sidebyside.sh): the agent and
 * Slurm's sampler both wake once a second, and on a virtual machine the
 * CPU time charged for a wake-up alone varies by an order of magnitude
 * with the host's state.  The figure tells two runs' machine states
 * apart.
 *
 *   bench_wakeup SECONDS [PAGES]
 *
 * Sleeps on a periodic timerfd of 1 s, SECONDS times, writing a byte in
 * each of PAGES pages of its own (default 0) at each wake-up, then
 * prints the CPU time (from /proc/self/schedstat, every part of it: the
 * wake-ups, the timer reads, the pages) per wake-up in microseconds,
 * and the number of wake-ups.  With PAGES it tells what touching a page
 * again after a second costs: the agent's tick is charged for every
 * page it touches. */
#include "config.h"

#include <sys/timerfd.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This process's CPU time so far into *NS (0 is a reading: a process
 * just started may not have been charged yet).  0, or -1 when it cannot
 * be read. */
static int
cpu_ns(uint64_t *ns)
{
	char buf[128], *end;
	ssize_t n;
	int fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	*ns = strtoull(buf, &end, 10);
	return end == buf ? -1 : 0;
}

int
main(int argc, char **argv)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	unsigned long seconds, pages = 0;
	uint64_t expirations, before, after;
	volatile char *mem = NULL;
	char *block = NULL;
	long page = sysconf(_SC_PAGESIZE);
	char *end;
	int fd;

	if (argc < 2 || argc > 3 || (seconds = strtoul(argv[1], &end, 10)) == 0 ||
	    *end != '\0' || seconds > 86400 ||
	    (argc == 3 && ((pages = strtoul(argv[2], &end, 10)) > 1000000 ||
			   *end != '\0' || argv[2][0] == '\0'))) {
		fprintf(stderr, "usage: bench_wakeup SECONDS (1 to 86400) [PAGES (0 to 1000000)]\n");
		return 2;
	}
	if (page <= 0)
		page = 4096;
	if (pages > 0) {
		block = calloc(pages, (size_t)page);
		mem = block;
		if (block == NULL) {
			fprintf(stderr, "bench_wakeup: out of memory\n");
			return 1;
		}
		for (unsigned long p = 0; p < pages; p++)
			mem[p * (unsigned long)page] = 1;
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		fprintf(stderr, "bench_wakeup: timerfd: %s\n", strerror(errno));
		return 1;
	}
	if (cpu_ns(&before) < 0) {
		fprintf(stderr, "bench_wakeup: /proc/self/schedstat cannot be read\n");
		return 1;
	}
	for (unsigned long i = 0; i < seconds; i++) {
		if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EINTR) {
			fprintf(stderr, "bench_wakeup: read: %s\n", strerror(errno));
			return 1;
		}
		for (unsigned long p = 0; p < pages; p++)
			mem[p * (unsigned long)page]++;
	}
	if (cpu_ns(&after) < 0 || after < before) {
		fprintf(stderr, "bench_wakeup: /proc/self/schedstat cannot be read\n");
		return 1;
	}
	printf("%.1f %lu\n", (double)(after - before) / 1e3 / (double)seconds, seconds);
	free(block);
	return 0;
}
