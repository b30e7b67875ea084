/* bench_wakeup.c - what the machine charges a process for waking up
 * once a second and doing nothing, measured beside the side-by-side
 * benchmark's windows (tests/bench/run-sidebyside.sh): the agent and
 * Slurm's sampler both wake once a second, and on a virtual machine the
 * CPU time charged for a wake-up alone varies by an order of magnitude
 * with the host's state.  The figure tells two runs' machine states
 * apart.
 *
 *   bench_wakeup SECONDS
 *
 * Sleeps on a periodic timerfd of 1 s, SECONDS times, then prints the
 * CPU time (from /proc/self/schedstat, every part of it: the wake-ups,
 * the timer reads) per wake-up in microseconds, and the number of
 * wake-ups. */
#include "config.h"

#include <sys/timerfd.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* This process's CPU time so far, ns; 0 when it cannot be read. */
static uint64_t
cpu_ns(void)
{
	char buf[128];
	ssize_t n;
	int fd = open("/proc/self/schedstat", O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	return strtoull(buf, NULL, 10);
}

int
main(int argc, char **argv)
{
	struct itimerspec its = { { 1, 0 }, { 1, 0 } };
	unsigned long seconds;
	uint64_t expirations, before, after;
	char *end;
	int fd;

	if (argc != 2 || (seconds = strtoul(argv[1], &end, 10)) == 0 ||
	    *end != '\0' || seconds > 86400) {
		fprintf(stderr, "usage: bench_wakeup SECONDS (1 to 86400)\n");
		return 2;
	}
	fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	if (fd < 0 || timerfd_settime(fd, 0, &its, NULL) < 0) {
		fprintf(stderr, "bench_wakeup: timerfd: %s\n", strerror(errno));
		return 1;
	}
	before = cpu_ns();
	for (unsigned long i = 0; i < seconds; i++)
		if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EINTR) {
			fprintf(stderr, "bench_wakeup: read: %s\n", strerror(errno));
			return 1;
		}
	after = cpu_ns();
	if (before == 0 || after < before) {
		fprintf(stderr, "bench_wakeup: /proc/self/schedstat cannot be read\n");
		return 1;
	}
	printf("%.1f %lu\n", (double)(after - before) / 1e3 / (double)seconds, seconds);
	return 0;
}
