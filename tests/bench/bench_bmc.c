/* bench_bmc.c - soak of the BMC energy source: no descriptor and no
 * memory leaks over long runs.
 *
 * Opens the BMC source as the agent does (LANplus to a BMC, here the
 * simulator of tests/harness/bmc.sh) with a fast bmc_interval, samples it
 * every 100 ms (the agent's tick) for the whole run, and every few seconds
 * records the process's open descriptors (the entries of /proc/self/fd)
 * and its VmRSS.  With -b it also stops and restarts the simulator every
 * B seconds, so that the failure, backoff and reconnection paths (a new
 * IPMI context and socket each time) run over and over too.
 *
 * Usage: bench_bmc -H HOST:PORT -c CREDENTIALS [-w WORKAROUNDS]
 *                  [-i INTERVAL_MS] [-t SECONDS] [-p PRINT_EVERY_S]
 *                  [-b BOUNCE_EVERY_S -s SIM_DIR -x HARNESS]
 * Prints one line per record (time, descriptors, VmRSS, readings), then
 * the first and last figures after the warm-up (the first record). */
#include "config.h"

#include <sys/wait.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sources/bmc.h"
#include "model/energy.h"

static uint64_t
mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + (uint64_t)ts.tv_nsec;
}

static int
count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n - 1;		/* the directory's own descriptor */
}

static long
rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (sscanf(line, "VmRSS: %ld kB", &kib) == 1)
			break;
	fclose(f);
	return kib;
}

static void
harness(const char *script, const char *verb, const char *dir,
	const char *arg)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		execl("/bin/bash", "bash", script, verb, dir, arg, (char *)NULL);
		_exit(127);
	}
	if (pid > 0)
		waitpid(pid, &status, 0);
}

struct args {
	struct ceems_bmc_options o;
	unsigned seconds, print_every, bounce_every;
	const char *sim_dir, *script, *port;
};

static int
parse_args(int argc, char **argv, struct args *a)
{
	char why[256];
	int ch;

	memset(a, 0, sizeof(*a));
	a->o.mode = CEEMS_BMC_LAN;
	a->o.interval_ns = 100000000ULL;
	a->o.timeout_ns = 1000000000ULL;
	snprintf(a->o.sensor, sizeof(a->o.sensor), "auto");
	a->seconds = 60;
	a->print_every = 10;
	while ((ch = getopt(argc, argv, "H:c:w:i:t:p:b:s:x:")) != -1) {
		switch (ch) {
		case 'H':
			snprintf(a->o.host, sizeof(a->o.host), "%s", optarg);
			a->port = strchr(optarg, ':') ? strchr(optarg, ':') + 1 : "623";
			break;
		case 'c':
			snprintf(a->o.credentials_file,
				 sizeof(a->o.credentials_file), "%s", optarg);
			break;
		case 'w':
			if (ceems_bmc_ipmi_parse_workarounds(optarg, &a->o.workarounds,
							why, sizeof(why)) < 0) {
				fprintf(stderr, "bench_bmc: %s\n", why);
				return -1;
			}
			break;
		case 'i': a->o.interval_ns = strtoull(optarg, NULL, 10) * 1000000ULL; break;
		case 't': a->seconds = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'p': a->print_every = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': a->bounce_every = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': a->sim_dir = optarg; break;
		case 'x': a->script = optarg; break;
		default: return -1;
		}
	}
	if (a->o.host[0] == '\0' || a->o.credentials_file[0] == '\0' ||
	    a->print_every == 0 || a->o.interval_ns == 0 ||
	    (a->bounce_every != 0 && (a->sim_dir == NULL || a->script == NULL)))
		return -1;
	return 0;
}

int
main(int argc, char **argv)
{
	struct args a;
	struct ceems_energy_source *src;
	struct ceems_energy_take take;
	uint64_t start, next_print, next_bounce, now;
	unsigned measured = 0, gaps = 0, records = 0;
	int fds, first_fds = -1, max_fds = 0;
	long rss, first_rss = -1, max_rss = 0;
	double joules = 0;

	if (parse_args(argc, argv, &a) < 0) {
		fprintf(stderr, "usage: bench_bmc -H HOST:PORT -c CREDENTIALS [-w WORKAROUNDS] [-i INTERVAL_MS] [-t SECONDS] [-p PRINT_EVERY_S] [-b BOUNCE_EVERY_S -s SIM_DIR -x HARNESS]\n");
		return 2;
	}
	start = mono_ns();
	src = ceems_bmc_open(&a.o, start);
	if (src == NULL)
		return 1;
	next_print = start + a.print_every * 1000000000ULL;
	next_bounce = start + a.bounce_every * 1000000000ULL;
	printf("%8s %5s %9s %9s %6s %12s\n", "t_s", "fds", "rss_kib",
	       "measured", "gaps", "energy_j");
	while ((now = mono_ns()) - start < a.seconds * 1000000000ULL) {
		usleep(100000);
		ceems_energy_source_sample(src, mono_ns());
		ceems_energy_source_take(src, &take);
		if (take.gap == CEEMS_GAP_NONE) {
			measured++;
			joules += take.joules;
		} else {
			gaps++;
		}
		if (a.bounce_every != 0 && mono_ns() >= next_bounce) {
			harness(a.script, "stop", a.sim_dir, NULL);
			harness(a.script, "start", a.sim_dir, a.port);
			next_bounce += a.bounce_every * 1000000000ULL;
		}
		if (mono_ns() < next_print)
			continue;
		next_print += a.print_every * 1000000000ULL;
		fds = count_fds();
		rss = rss_kib();
		if (records++ == 0) {
			first_fds = fds;
			first_rss = rss;
		}
		if (fds > max_fds)
			max_fds = fds;
		if (rss > max_rss)
			max_rss = rss;
		printf("%8.0f %5d %9ld %9u %6u %12.1f\n",
		       (double)(mono_ns() - start) / 1e9, fds, rss, measured,
		       gaps, joules);
		fflush(stdout);
	}
	fds = count_fds();
	rss = rss_kib();
	ceems_energy_source_close(src);
	printf("# descriptors: first %d, last %d, most %d; VmRSS KiB: first %ld, last %ld, most %ld; after close: %d descriptors\n",
	       first_fds, fds, max_fds, first_rss, rss, max_rss, count_fds());
	return 0;
}
