/* test_gpu_source.c - the GPU energy source over the NVML and ROCm SMI
 * doubles: counters numbered over the backends, energy from counter
 * deltas, a 32-bit wrap, a reset, a device lost mid-run (a gap, logged
 * once, and a reset when it returns), power integrated by the trapezoid
 * rule for a device without a counter (and a stall when samples are too
 * far apart), and eight devices.  Times are the now_ns passed in; the
 * doubles report fixed counter values that the test rewrites. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "model/energy.h"
#include "sources/gpu.h"
#include "../tap.h"
#include "gpu_double.h"

#define MS 1000000ULL
#define S 1000000000ULL
#define T0 (1000 * S)

static struct ceems_energy_take takes[CEEMS_GPU_MAX_DEVICES];

static struct ceems_gpu_backend *
nvml(void)
{
	char err[512];
	int errnum;
	struct ceems_gpu_backend *b = ceems_gpu_nvml_open(
		gpu_double_path("libnvml-double.so"), &errnum, err, sizeof(err));

	if (b == NULL)
		printf("# nvml double: %s\n", err);
	return b;
}

static struct ceems_gpu_backend *
rocm(void)
{
	char err[512];
	int errnum;
	struct ceems_gpu_backend *b = ceems_gpu_rocm_smi_open(
		gpu_double_path("librocm-double.so"), &errnum, err, sizeof(err));

	if (b == NULL)
		printf("# rocm double: %s\n", err);
	return b;
}

static void
test_numbering(void)
{
	struct ceems_gpu_backend *b[2], *got = NULL;
	struct ceems_energy_source *src;
	size_t index = 99;
	bool integrated = true;

	gpu_scenario("[device]\nuuid=GPU-n0\nenergy_raw=0\n"
		     "[device]\nuuid=GPU-n1\nenergy_raw=0\n");
	b[0] = nvml();
	gpu_scenario("[device]\nuuid=00000000000000ab\nenergy_raw=0\n");
	b[1] = rocm();
	if (!ok(b[0] != NULL && b[1] != NULL, "numbering: backends opened"))
		return;
	/* Both doubles read this one file: each of its devices is read. */
	gpu_scenario("[device]\nenergy_raw=0\n[device]\nenergy_raw=0\n");
	src = ceems_gpu_source_open(b, 2, T0);
	if (!ok(src != NULL, "numbering: source opened"))
		return;
	is_str(src->ops->kind, "gpu", "kind");
	is_int(src->ncounters, 3, "one counter per device, all backends");
	ok(src->counters[0].domain == CEEMS_DOMAIN_GPU &&
	   src->counters[2].domain == CEEMS_DOMAIN_GPU, "domain GPU");
	ok(src->counters[0].device == 0 && src->counters[1].device == 1 &&
	   src->counters[2].device == 2, "devices numbered in order");
	is_str(src->counters[1].name, "nvml/GPU-n1", "named by its uuid");
	is_str(src->counters[2].name, "rocm_smi/0x00000000000000ab",
	       "the ROCm one too");
	is_int(ceems_gpu_source_device(src, 2, &got, &index, &integrated), 0,
	       "device 2 known");
	ok(got == b[1] && index == 0 && !integrated,
	   "device 2 is the ROCm backend's first, a counter");
	is_int(ceems_gpu_source_device(src, 3, &got, &index, &integrated),
	       -EINVAL, "no device 3");
	ok(ceems_energy_source_reader(src, 0) != NULL,
	   "a counter device has a reader (checkpoints)");
	/* 2^32 counts of 15.3 uJ at twice the 700 W limit, halved. */
	is_int(ceems_energy_source_max_sample_interval_ns(src),
	       (uint64_t)(4294967296.0 * ((double)15.3f * 1e-6) / 1400.0 * 1e9) / 2,
	       "sampled twice per wrap period of the 32-bit counter");
	ceems_energy_source_close(src);
	ok(ceems_gpu_source_open(b, 0, T0) == NULL, "no backend: no source");
}

static void
test_counting(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src;

	gpu_scenario("[device]\nenergy_raw=1000\n[device]\nenergy_raw=5000\n");
	b = nvml();
	if (!ok(b != NULL, "counting: backend opened"))
		return;
	src = ceems_gpu_source_open(&b, 1, T0);
	if (!ok(src != NULL, "counting: source opened"))
		return;
	gpu_scenario("[device]\nenergy_raw=3000\n[device]\nenergy_raw=100\n");
	ceems_energy_source_sample(src, T0 + S);
	ceems_energy_source_take(src, takes);
	ok(takes[0].gap == CEEMS_GAP_NONE, "counter: measured");
	is_near(takes[0].joules, 2.0, 1e-9, "counter: 2000 mJ are 2 J");
	is_int(takes[1].gap, CEEMS_GAP_RESET, "counter going back: a reset");
	is_near(takes[1].joules, 0.0, 0.0, "a reset counts nothing");
	gpu_scenario("[device]\nenergy_raw=3000\n[device]\nenergy_raw=1100\n");
	ceems_energy_source_sample(src, T0 + 2 * S);
	ceems_energy_source_take(src, takes);
	ok(takes[1].gap == CEEMS_GAP_NONE, "after the reset: measured again");
	is_near(takes[1].joules, 1.0, 1e-9, "after the reset: 1 J");
	ceems_energy_source_close(src);
}

static void
test_wrap(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src;
	double unit = (double)15.3f * 1e-6;

	gpu_scenario("[device]\nenergy_raw=4294966296\nenergy_wrap_bits=32\n");
	b = rocm();
	if (!ok(b != NULL, "wrap: backend opened"))
		return;
	src = ceems_gpu_source_open(&b, 1, T0);
	if (!ok(src != NULL, "wrap: source opened"))
		return;
	/* 2^32 + 1000 read modulo 2^32: 1000. */
	gpu_scenario("[device]\nenergy_raw=4294968296\nenergy_wrap_bits=32\n");
	ceems_energy_source_sample(src, T0 + S);
	ceems_energy_source_take(src, takes);
	ok(takes[0].gap == CEEMS_GAP_NONE, "wrap: measured");
	is_near(takes[0].joules, 2000 * unit, 1e-12,
		"wrap: 1000 counts before 2^32, 1000 after");
	ceems_energy_source_close(src);
}

static void
test_lost(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src;

	gpu_scenario("[device]\nenergy_raw=0\n[device]\nenergy_raw=0\n");
	b = nvml();
	if (!ok(b != NULL, "lost: backend opened"))
		return;
	src = ceems_gpu_source_open(&b, 1, T0);
	gpu_log_reset();
	gpu_scenario("[device]\nenergy_raw=1000\n[device]\nlost=1\n");
	ceems_energy_source_sample(src, T0 + S);
	ceems_energy_source_take(src, takes);
	ok(takes[0].gap == CEEMS_GAP_NONE && takes[0].joules == 1.0,
	   "the other device goes on");
	is_int(takes[1].gap, CEEMS_GAP_READ_ERROR, "lost device: a read error");
	ceems_energy_source_sample(src, T0 + 2 * S);
	ceems_energy_source_sample(src, T0 + 3 * S);
	ceems_energy_source_take(src, takes);
	is_int(takes[1].gap, CEEMS_GAP_READ_ERROR, "still lost: still a gap");
	is_int(gpu_log_count("the device is lost"), 1, "logged once");
	is_int(gpu_log_warnings, 1, "one warning in all");
	gpu_scenario("[device]\nenergy_raw=1000\n[device]\nenergy_raw=50\n");
	ceems_energy_source_sample(src, T0 + 4 * S);
	ceems_energy_source_take(src, takes);
	is_int(takes[1].gap, CEEMS_GAP_RESET,
	       "back: its first reading is a baseline after a reset");
	gpu_scenario("[device]\nenergy_raw=1000\n[device]\nenergy_raw=550\n");
	ceems_energy_source_sample(src, T0 + 5 * S);
	ceems_energy_source_take(src, takes);
	ok(takes[1].gap == CEEMS_GAP_NONE && fabs(takes[1].joules - 0.5) < 1e-9,
	   "back: measured again");
	ok(gpu_log_count("measuring again") >= 1, "its return is logged");
	ceems_energy_source_close(src);
}

static void
test_integrated(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src;
	bool integrated = false;
	int i;

	gpu_scenario("[device]\nno_energy=1\npower_w=100\n"
		     "[device]\nenergy_raw=0\npower_w=100\n");
	b = nvml();
	if (!ok(b != NULL, "integrated: backend opened"))
		return;
	/* The second loses its counter before the source's first read. */
	gpu_scenario("[device]\nno_energy=1\npower_w=100\n"
		     "[device]\nno_energy=1\npower_w=50\n");
	gpu_log_reset();
	src = ceems_gpu_source_open(&b, 1, T0);
	if (!ok(src != NULL, "integrated: source opened"))
		return;
	ceems_gpu_source_device(src, 0, NULL, NULL, &integrated);
	ok(integrated, "no counter at open: power integrated");
	ceems_gpu_source_device(src, 1, NULL, NULL, &integrated);
	ok(integrated, "-ENOTSUP at the first read: power integrated");
	is_int(gpu_log_count("its power is integrated"), 1, "that is logged");
	ok(ceems_energy_source_reader(src, 0) == NULL,
	   "an integrated device has no reader");
	is_int(ceems_energy_source_max_sample_interval_ns(src),
	       CEEMS_GPU_POWER_SAMPLE_NS, "the agent is asked for fast samples");

	/* 100 W, then 200 W 100 ms later, then 300 W: a ramp, whose
	 * trapezoids are exact: 15 J + 25 J; the second device 50 W flat
	 * for 200 ms: 10 J. */
	for (i = 1; i <= 2; i++) {
		char text[256];

		snprintf(text, sizeof(text), "[device]\nno_energy=1\n"
			 "power_w=%d\n[device]\nno_energy=1\npower_w=50\n",
			 100 + 100 * i);
		gpu_scenario(text);
		ceems_energy_source_sample(src, T0 + (uint64_t)i * 100 * MS);
	}
	ceems_energy_source_take(src, takes);
	ok(takes[0].gap == CEEMS_GAP_NONE, "ramp: measured");
	is_near(takes[0].joules, 40.0, 1e-6, "ramp: 15 J + 25 J");
	is_near(takes[1].joules, 10.0, 1e-6, "flat: 50 W for 0.2 s");

	/* The agent stalled for 5 s: no extrapolation. */
	ceems_energy_source_sample(src, T0 + 5200 * MS);
	ceems_energy_source_take(src, takes);
	is_int(takes[0].gap, CEEMS_GAP_STALL, "5 s between samples: a stall");
	is_near(takes[0].joules, 0.0, 0.0, "a stall counts nothing");
	ceems_energy_source_sample(src, T0 + 5300 * MS);
	ceems_energy_source_take(src, takes);
	ok(takes[0].gap == CEEMS_GAP_NONE &&
	   fabs(takes[0].joules - 30.0) < 1e-6, "then measured again: 300 W "
	   "for 0.1 s");

	gpu_scenario("[device]\nno_energy=1\npower_w=2000\n"
		     "[device]\nno_energy=1\nlost=1\n");
	ceems_energy_source_sample(src, T0 + 5400 * MS);
	ceems_energy_source_take(src, takes);
	is_int(takes[0].gap, CEEMS_GAP_READ_ERROR,
	       "power over twice the limit: not a reading");
	is_int(takes[1].gap, CEEMS_GAP_READ_ERROR, "lost, integrated: a gap");
	ceems_energy_source_close(src);
}

static void
test_eight(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_energy_source *src = NULL;
	char text[2048];
	size_t i, len;
	int pass;
	bool all = true;

	for (pass = 0; pass < 2; pass++) {
		len = 0;
		for (i = 0; i < 8; i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len,
				"[device]\nenergy_raw=%zu\n",
				(size_t)pass * 1000 * (i + 1));
		gpu_scenario(text);
		if (pass == 1)
			break;
		b = nvml();
		if (!ok(b != NULL, "eight: opened"))
			return;
		src = ceems_gpu_source_open(&b, 1, T0);
		if (!ok(src != NULL, "eight: source opened"))
			return;
	}
	is_int(src->ncounters, 8, "eight counters");
	ceems_energy_source_sample(src, T0 + S);
	ceems_energy_source_take(src, takes);
	for (i = 0; i < 8; i++)
		if (takes[i].gap != CEEMS_GAP_NONE ||
		    fabs(takes[i].joules - (double)(i + 1)) > 1e-9)
			all = false;
	ok(all, "each device its own energy");
	ceems_energy_source_close(src);
}

int
main(void)
{
	gpu_double_setup();
	test_numbering();
	test_counting();
	test_wrap();
	test_lost();
	test_integrated();
	test_eight();
	gpu_double_teardown();
	return done_testing();
}
