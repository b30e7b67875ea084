/* bench_marks.c - a job marking its work as fast as it can, for
 * tests/bench/run-marks.sh: what the node agent pays for it.
 *
 *   bench_marks -l -r RATE -w SECONDS   through libceems_mark: RATE calls
 *                                      of ceems_mark_add a second (the
 *                                      library sums them; what reaches
 *                                      the agent is counted by it)
 *   bench_marks -R -w SECONDS -j JOBID -s SOCKET
 *                                      raw requests, one connection each,
 *                                      back to back: a program that skips
 *                                      the library (or means harm)
 *
 * Run inside the job's cgroup, with SLURM_JOB_ID and CEEMS_AGENT_SOCKET
 * set for -l.  Prints "calls N", "taken N", "refused N" (raw: the
 * agent's EBUSY, over the job's rate) and "seconds S". */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "mark/ceems_mark.h"
#include "bench_time.h"

/* One raw mark request to SOCK: 0 taken, 1 refused for its rate, -1
 * any other answer (or none). */
static int
raw_mark(const struct sockaddr_un *addr, uint32_t jobid)
{
	char msg[160], reply[512];
	int fd, n, r = -1;

	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	n = snprintf(msg, sizeof(msg), "{\"op\":\"mark\",\"jobid\":%u,\"name\":"
		     "\"samples\",\"unit\":\"samples\",\"add\":1}", jobid);
	if (connect(fd, (const struct sockaddr *)addr, sizeof(*addr)) == 0 &&
	    send(fd, msg, (size_t)n, MSG_NOSIGNAL) == n &&
	    (n = (int)recv(fd, reply, sizeof(reply) - 1, 0)) > 0) {
		reply[n] = '\0';
		r = strncmp(reply, "{\"ok\":true", 10) == 0 ? 0 :
		    strstr(reply, "\"EBUSY\"") != NULL ? 1 : -1;
	}
	close(fd);
	return r;
}

int
main(int argc, char **argv)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	double seconds = 5, rate = 100000;
	uint64_t calls = 0, taken = 0, refused = 0;
	double start, end, next;
	const char *sock = NULL;
	uint32_t jobid = 0;
	int lib = 0, raw = 0, c;

	while ((c = getopt(argc, argv, "lRr:w:j:s:")) != -1) {
		switch (c) {
		case 'l': lib = 1; break;
		case 'R': raw = 1; break;
		case 'r': rate = atof(optarg); break;
		case 'w': seconds = atof(optarg); break;
		case 'j': jobid = (uint32_t)strtoul(optarg, NULL, 10); break;
		case 's': sock = optarg; break;
		default:
			fprintf(stderr, "usage: bench_marks -l [-r RATE] [-w S] | "
				"-R -j JOBID -s SOCKET [-w S]\n");
			return 2;
		}
	}
	if (lib == raw || (raw && (jobid == 0 || sock == NULL ||
				   strlen(sock) >= sizeof(addr.sun_path)))) {
		fprintf(stderr, "bench_marks: -l, or -R with -j and -s\n");
		return 2;
	}
	if (raw)
		memcpy(addr.sun_path, sock, strlen(sock) + 1);
	start = bench_now_ms();
	end = start + seconds * 1e3;
	next = start;
	while (bench_now_ms() < end) {
		if (raw) {
			int r = raw_mark(&addr, jobid);

			calls++;
			taken += r == 0;
			refused += r == 1;
			continue;
		}
		/* RATE calls a second, in batches of a millisecond's. */
		for (uint64_t k = 0; k < (uint64_t)(rate / 1000); k++, calls++)
			(void)ceems_mark_add("samples", "samples", 1);
		next += 1;
		while (bench_now_ms() < next)
			;
	}
	if (lib && ceems_mark_flush() < 0)
		fprintf(stderr, "bench_marks: %s\n", ceems_mark_error());
	printf("calls %llu\ntaken %llu\nrefused %llu\nseconds %.3f\n",
	       (unsigned long long)calls, (unsigned long long)taken,
	       (unsigned long long)refused,
	       (bench_now_ms() - start) / 1e3);
	return 0;
}
