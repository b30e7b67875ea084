/* nvml_probe.c - the project's NVML backend against a real driver, with
 * no Slurm and no database: opens the backend the node agent opens
 * (ceems_gpu_nvml_open on the real libnvidia-ml.so.1), prints what it
 * enumerated, then reads every device's energy counter and usage every
 * PERIOD_MS for SECONDS and prints one CSV line per device and reading.
 * tests/gpu/real-nvml.sh compares those lines with nvidia-smi's own.
 *
 *   nvml_probe SECONDS PERIOD_MS
 *
 * Output: "device,<i>,<uuid>,<bus id>,<name>,<major>:<minor>,<mem bytes>,
 * <slices>,<energy counter 0|1>,<joules per count>,<max W>,<instances>"
 * once per device, then "sample,<i>,<epoch s>,<energy counts>,<power W>,
 * <util %>,<mem util %>,<mem used>,<sm active %>,<sm occupancy %>,
 * <tensor %>,<fp %>" with "-" for a figure the driver did not give. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sources/gpu.h"

static double seconds_since(const struct timespec *t0)
{
	struct timespec now;

	clock_gettime(CLOCK_MONOTONIC, &now);
	return (double)(now.tv_sec - t0->tv_sec) +
	       (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

/* Wall-clock seconds, to line readings up with nvidia-smi's timestamps. */
static double epoch_seconds(void)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return (double)now.tv_sec + (double)now.tv_nsec / 1e9;
}

static void print_figure(bool have, double value)
{
	if (have)
		printf(",%.3f", value);
	else
		printf(",-");
}

static void print_device(size_t i, const struct ceems_gpu_device *d)
{
	printf("device,%zu,%s,%s,%s,%d:%d,%" PRIu64 ",%u,%d,%.6f,%.1f,%zu\n",
	       i, d->uuid, d->bus_id, d->name, d->major, d->minor,
	       d->mem_total_bytes, d->slices, d->has_energy_counter ? 1 : 0,
	       d->energy_unit_j, d->max_power_w, d->ninstances);
}

static void print_sample(struct ceems_gpu_backend *b, size_t i, double t)
{
	struct ceems_gpu_usage u;
	uint64_t counts;
	int rc;

	printf("sample,%zu,%.3f", i, t);
	rc = b->ops->read_energy(b, i, &counts);
	if (rc == 0)
		printf(",%" PRIu64, counts);
	else
		printf(",-");
	rc = ceems_gpu_backend_read_usage(b, i, &u);
	if (rc != 0)
		memset(&u, 0, sizeof(u));
	print_figure(u.have_power, u.power_w);
	print_figure(u.have_util, u.util_pct);
	print_figure(u.have_mem_util, u.mem_util_pct);
	print_figure(u.have_mem_used, (double)u.mem_used_bytes);
	print_figure(u.have_sm_active, u.sm_active_pct);
	print_figure(u.have_sm_occupancy, u.sm_occupancy_pct);
	print_figure(u.have_tensor_active, u.tensor_active_pct);
	print_figure(u.have_fp_active, u.fp_active_pct);
	printf("\n");
}

int main(int argc, char **argv)
{
	struct ceems_gpu_backend *b;
	struct timespec t0, pause;
	char err[512] = "";
	int errnum = 0;
	long seconds, period_ms;
	size_t i;

	if (argc != 3) {
		fprintf(stderr, "usage: nvml_probe SECONDS PERIOD_MS\n");
		return 2;
	}
	seconds = strtol(argv[1], NULL, 10);
	period_ms = strtol(argv[2], NULL, 10);
	if (seconds <= 0 || period_ms <= 0 || period_ms > 60000) {
		fprintf(stderr, "nvml_probe: SECONDS and PERIOD_MS must be "
				"positive (PERIOD_MS at most 60000)\n");
		return 2;
	}
	b = ceems_gpu_nvml_open(NULL, &errnum, err, sizeof(err));
	if (b == NULL) {
		fprintf(stderr, "nvml_probe: %s (%s)\n", err, strerror(-errnum));
		return 1;
	}
	for (i = 0; i < b->ndevices; i++)
		print_device(i, &b->dev[i]);
	fflush(stdout);
	pause.tv_sec = period_ms / 1000;
	pause.tv_nsec = (period_ms % 1000) * 1000000L;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (seconds_since(&t0) < (double)seconds) {
		for (i = 0; i < b->ndevices; i++)
			print_sample(b, i, epoch_seconds());
		fflush(stdout);
		nanosleep(&pause, NULL);
	}
	ceems_gpu_backend_close(b);
	return 0;
}
