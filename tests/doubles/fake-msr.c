/* fake-msr.c - a test double of the RAPL model-specific registers, for
 * Slurm's own acct_gather_energy/rapl plugin, which reads the package and
 * DRAM energy from /dev/cpu/N/msr (a read at the register's number as
 * offset) rather than from powercap.  It mirrors the counters of
 * tests/doubles/fake-rapl (ROOT/class/powercap/intel-rapl:0 and
 * intel-rapl:0:1) into a regular file laid out as that device: the
 * power-unit register (0x606: energy in units of 2^-14 J), the package
 * energy status (0x611) and the DRAM energy status (0x619), 32-bit
 * counters that wrap as the hardware's do.  The test binds the file over
 * /dev/cpu/0/msr in slurmd's own mount namespace
 * (tests/integration/lib/msr-ns.sh), so that Slurm's plugin and ceems
 * read the same simulated energy.
 *
 * usage: fake-msr --sys ROOT --out FILE [--period-ms 5]
 * Runs until SIGTERM or SIGINT. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSR_RAPL_POWER_UNIT 0x606
#define MSR_PKG_ENERGY_STATUS 0x611
#define MSR_DRAM_ENERGY_STATUS 0x619
/* Energy status unit 2^-14 J (61 uJ), as on most Intel packages; power
 * unit 2^-3 W, time unit 2^-10 s. */
#define ENERGY_UNIT_BITS 14
#define POWER_UNIT_VALUE ((10u << 16) | (ENERGY_UNIT_BITS << 8) | 3u)

static volatile sig_atomic_t stop;

static void
on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

/* One powercap zone, unwrapped: its total since the start, uJ. */
struct zone {
	char energy[4096];
	uint64_t range_uj, last_uj, total_uj;
	int have;
};

static int
read_u64(const char *path, uint64_t *v)
{
	char text[64];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0)
		return -1;
	n = pread(fd, text, sizeof(text) - 1, 0);
	close(fd);
	if (n <= 0)
		return -1;
	text[n] = '\0';
	*v = strtoull(text, NULL, 10);
	return 0;
}

static int
zone_open(struct zone *z, const char *root, const char *name)
{
	char path[4200];

	snprintf(z->energy, sizeof(z->energy),
		 "%s/class/powercap/%s/energy_uj", root, name);
	snprintf(path, sizeof(path), "%s/class/powercap/%s/max_energy_range_uj",
		 root, name);
	return read_u64(path, &z->range_uj);
}

static void
zone_step(struct zone *z)
{
	uint64_t now;

	if (read_u64(z->energy, &now) < 0)
		return;
	if (z->have)
		z->total_uj += now >= z->last_uj ?
				       now - z->last_uj :
				       z->range_uj + 1 - z->last_uj + now;
	z->have = 1;
	z->last_uj = now;
}

static void
put(int fd, off_t reg, uint64_t value)
{
	if (pwrite(fd, &value, sizeof(value), reg) != (ssize_t)sizeof(value)) {
		perror("fake-msr: pwrite");
		exit(1);
	}
}

/* uJ to the register's 32-bit count of 2^-14 J. */
static uint64_t
to_units(uint64_t uj)
{
	return (uint64_t)((double)uj * (double)(1u << ENERGY_UNIT_BITS) / 1e6) &
	       0xffffffffu;
}

int
main(int argc, char **argv)
{
	const char *root = NULL, *out = NULL;
	long period_ms = 5;
	struct zone pkg = { 0 }, dram = { 0 };
	struct timespec ts;
	int fd;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--sys") == 0)
			root = argv[i + 1];
		else if (strcmp(argv[i], "--out") == 0)
			out = argv[i + 1];
		else if (strcmp(argv[i], "--period-ms") == 0)
			period_ms = atol(argv[i + 1]);
	}
	if (root == NULL || out == NULL || period_ms < 1 || period_ms > 1000) {
		fprintf(stderr, "usage: fake-msr --sys ROOT --out FILE [--period-ms 5]\n");
		return 2;
	}
	if (zone_open(&pkg, root, "intel-rapl:0") < 0 ||
	    zone_open(&dram, root, "intel-rapl:0:1") < 0) {
		fprintf(stderr, "fake-msr: no fake-rapl tree under %s\n", root);
		return 1;
	}
	fd = open(out, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0) {
		perror("fake-msr: open");
		return 1;
	}
	signal(SIGTERM, on_signal);
	signal(SIGINT, on_signal);
	put(fd, MSR_RAPL_POWER_UNIT, POWER_UNIT_VALUE);
	ts.tv_sec = period_ms / 1000;
	ts.tv_nsec = (period_ms % 1000) * 1000000L;
	while (!stop) {
		zone_step(&pkg);
		zone_step(&dram);
		put(fd, MSR_PKG_ENERGY_STATUS, to_units(pkg.total_uj));
		put(fd, MSR_DRAM_ENERGY_STATUS, to_units(dram.total_uj));
		nanosleep(&ts, NULL);
	}
	close(fd);
	return 0;
}
