/* bench_gpu.c - the cost of the GPU energy source per agent tick with
 * eight devices of the NVML double: one sample and one take of the
 * source, and one usage read of every device (bench_gpu_tick, which
 * run-gpu.sh has callgrind count alone).  The double integrates its
 * power over the real clock; the source is given ticks 1 s apart.
 *
 * Usage: bench_gpu LIBNVML_DOUBLE [TICKS] [integrated]
 * "integrated": the devices have no energy counter (power integrated).
 * Prints "key value" lines: ticks, devices, wall_us_median, wall_us_max. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/energy.h"
#include "sources/gpu.h"
#include "base/log.h"
#include "bench_time.h"

#define NDEV 8

static struct ceems_energy_take takes[CEEMS_GPU_MAX_DEVICES];
static struct ceems_gpu_usage usage[NDEV];

/* One tick: what the agent does with the GPUs each second. */
__attribute__((noinline)) static void
bench_gpu_tick(struct ceems_energy_source *src, struct ceems_gpu_backend *b,
	       uint64_t now_ns)
{
	size_t i;

	ceems_energy_source_sample(src, now_ns);
	ceems_energy_source_take(src, takes);
	for (i = 0; i < b->ndevices; i++)
		ceems_gpu_backend_read_usage(b, i, &usage[i]);
}

static void
quiet(enum ceems_log_level level, const char *msg, void *arg)
{
	(void)level;
	(void)msg;
	(void)arg;
}

static int
write_scenario(const char *path, int integrated)
{
	FILE *f = fopen(path, "w");
	int i;

	if (f == NULL)
		return -1;
	for (i = 0; i < NDEV; i++)
		fprintf(f, "[device]\nuuid=GPU-bench-%d\nbus_id=00000000:%02X:00.0\n"
			"power_w=%d\nutil=50\nmem_util=20\nmemory_total=85899345920\n"
			"memory_used=1073741824\ngpm_sm_active=40\n%s",
			i, 0x10 + i, 200 + 10 * i,
			integrated ? "no_energy=1\n" : "");
	return fclose(f);
}

int
main(int argc, char **argv)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src;
	char dir[] = "/tmp/ceems-bench-gpu.XXXXXX", path[64], err[512];
	int ticks = argc > 2 ? atoi(argv[2]) : 1000;
	int integrated = argc > 3 && strcmp(argv[3], "integrated") == 0;
	uint64_t now = 1000000000000ULL;
	double *wall;
	int errnum, t;

	if (argc < 2 || ticks < 1) {
		fprintf(stderr, "usage: bench_gpu LIBNVML_DOUBLE [TICKS] [integrated]\n");
		return 2;
	}
	ceems_log_set_handler(quiet, NULL);
	if (mkdtemp(dir) == NULL)
		return 1;
	snprintf(path, sizeof(path), "%s/scenario", dir);
	if (write_scenario(path, integrated) < 0)
		return 1;
	setenv("CEEMS_GPU_DOUBLE_SCENARIO", path, 1);
	b = ceems_gpu_nvml_open(argv[1], &errnum, err, sizeof(err));
	if (b == NULL) {
		fprintf(stderr, "bench_gpu: %s\n", err);
		return 1;
	}
	src = ceems_gpu_source_open(&b, 1, now);
	wall = calloc((size_t)ticks, sizeof(*wall));
	if (src == NULL || wall == NULL)
		return 1;
	for (t = 0; t < ticks; t++) {
		double t0 = bench_now_ms();

		now += 1000000000ULL;
		bench_gpu_tick(src, b, now);
		wall[t] = (bench_now_ms() - t0) * 1e3;
	}
	printf("ticks %d\ndevices %zu\n", ticks, src->ncounters);
	printf("wall_us_median %.2f\n", bench_sort_median(wall, (size_t)ticks));
	printf("wall_us_max %.2f\n", wall[ticks - 1]);
	ceems_energy_source_close(src);
	free(wall);
	unlink(path);
	rmdir(dir);
	return 0;
}
