/* test_gpu_rocm.c - the ROCm SMI backend: with the usual library names
 * on a node without the AMD compute driver (not loaded at all), against
 * the real librocm_smi64 of this machine named explicitly (the "driver
 * not loaded" path, for real), and against the ROCm SMI double through
 * the same dlopen path: identity (bus id unpacked from the BDF, minor
 * of the render node), energy counter and its width, usage, a lost
 * device, and a library missing or too old. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "sources/gpu.h"
#include "../tap.h"
#include "gpu_double.h"

#define ROCM_DOUBLE "librocm-double.so"

/* The usual names, no /dev/kfd: the library is not even loaded (4 MiB
 * of resident memory with the C++ runtime, never unloaded). */
static void
test_no_driver_not_loaded(void)
{
	struct ceems_gpu_backend *b;
	char err[512];
	int errnum = 0;
	void *h;

	if (access("/dev/kfd", F_OK) == 0) {
		printf("ok %d # SKIP this node has the AMD compute driver\n",
		       ++tap_count);
		return;
	}
	b = ceems_gpu_rocm_smi_open(NULL, &errnum, err, sizeof(err));
	ok(b == NULL, "no AMD driver, usual names: no backend");
	is_int(errnum, -ENODEV, "no AMD driver, usual names: -ENODEV");
	ok(strstr(err, "/dev/kfd") != NULL &&
	   strstr(err, "no AMD GPU is measured") != NULL,
	   "no AMD driver, usual names: said so (%s)", err);
	h = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
	ok(h == NULL, "no AMD driver, usual names: the library not loaded");
	if (h != NULL)
		dlclose(h);
}

static void
test_real_library(void)
{
	struct ceems_gpu_backend *b;
	char err[512];
	int errnum = 0;
	void *h;

	/* Present or not, as the backend would find it. */
	h = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL)
		h = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
	if (h == NULL) {
		printf("ok %d # SKIP librocm_smi64 is not installed\n",
		       ++tap_count);
		return;
	}
	dlclose(h);
	/* Named as ceems.conf would name it: loaded whatever /dev/kfd. */
	b = ceems_gpu_rocm_smi_open("librocm_smi64.so.1", &errnum, err,
				    sizeof(err));
	ok(b == NULL, "real ROCm SMI without the driver: no backend");
	is_int(errnum, -ENODEV, "real ROCm SMI without the driver: -ENODEV");
	ok(strstr(err, "no AMD GPU is measured") != NULL &&
	   strstr(err, "driver is not loaded") != NULL,
	   "real ROCm SMI without the driver: said so (%s)", err);
	ceems_gpu_backend_close(b);
}

static void
test_unusable(void)
{
	struct ceems_gpu_backend *b;
	char err[512];
	int errnum = 0;

	b = ceems_gpu_rocm_smi_open("/nonexistent/librocm_smi64.so", &errnum,
				    err, sizeof(err));
	ok(b == NULL && errnum == -ENOENT, "missing library: -ENOENT");
	ok(strstr(err, "/nonexistent/librocm_smi64.so") != NULL,
	   "missing library: named");
	gpu_scenario("[device]\n");
	b = ceems_gpu_rocm_smi_open(gpu_double_path("librocm-double-noenergy.so"),
				    &errnum, err, sizeof(err));
	ok(b == NULL && errnum == -ENOSYS, "library too old: -ENOSYS");
	ok(strstr(err, "rsmi_dev_energy_count_get") != NULL,
	   "library too old: the entry point named");
	gpu_scenario("init=driver_not_loaded\n[device]\n");
	b = ceems_gpu_rocm_smi_open(gpu_double_path(ROCM_DOUBLE), &errnum,
				    err, sizeof(err));
	ok(b == NULL && errnum == -ENODEV, "driver not loaded: -ENODEV");
	gpu_scenario("\n");
	b = ceems_gpu_rocm_smi_open(gpu_double_path(ROCM_DOUBLE), &errnum,
				    err, sizeof(err));
	ok(b == NULL && errnum == -ENODEV, "no GPU: -ENODEV");
}

static void
test_device(void)
{
	struct ceems_gpu_backend *b;
	const struct ceems_gpu_device *d;
	struct ceems_gpu_usage u;
	uint64_t counts = 0;
	char err[512];
	double w = 0;
	int errnum;

	gpu_scenario("[device]\nuuid=1a2b3c4d5e6f7081\nbus_id=0001:c1:1f.3\n"
		     "name=AMD Instinct MI250X\nminor=129\n"
		     "memory_total=68702699520\nmemory_used=4096\n"
		     "util=87\nmem_util=33\npower_w=412.25\n"
		     "power_limit_w=560\nenergy_raw=4000000000\n"
		     "energy_resolution_uj=15.3\n");
	b = ceems_gpu_rocm_smi_open(gpu_double_path(ROCM_DOUBLE), &errnum,
				    err, sizeof(err));
	if (!ok(b != NULL, "opened the double: %s", err))
		return;
	d = &b->dev[0];
	is_str(b->ops->kind, "rocm_smi", "kind");
	is_int(d->vendor, CEEMS_GPU_AMD, "vendor");
	is_str(d->uuid, "0x1a2b3c4d5e6f7081", "unique id");
	is_str(d->bus_id, "0001:c1:1f.3", "bus id from the packed BDF");
	is_str(d->name, "AMD Instinct MI250X", "name");
	ok(d->major == 226 && d->minor == 129, "renderD129 is 226:129");
	is_int(d->mem_total_bytes, 68702699520ULL, "VRAM");
	is_near(d->max_power_w, 560.0, 1e-9, "power cap");
	ok(d->has_energy_counter, "energy counter");
	is_near(d->energy_unit_j, (double)15.3f * 1e-6, 1e-15,
		"unit from the resolution");
	is_int(d->energy_range, UINT64_C(1) << 32, "taken as 32 bits");
	is_int(b->ops->read_energy(b, 0, &counts), 0, "energy read");
	is_int(counts, 4000000000ULL, "the counter as the library has it");
	is_int(b->ops->read_power(b, 0, &w), 0, "power read");
	is_near(w, 412.25, 1e-9, "power in watts");
	is_int(ceems_gpu_backend_read_usage(b, 0, &u), 0, "usage read");
	ok(u.have_util && u.util_pct == 87.0, "busy percent");
	ok(u.have_mem_util && u.mem_util_pct == 33.0, "memory busy percent");
	ok(u.have_mem_used && u.mem_used_bytes == 4096, "VRAM used");
	ok(u.have_power && fabs(u.power_w - 412.25) < 1e-9, "power");
	ok(!u.have_sm_active && !u.have_tensor_active, "no profiling metrics");

	gpu_scenario("[device]\nuuid=1a2b3c4d5e6f7081\nbus_id=0001:c1:1f.3\n"
		     "energy_raw=5000000000\n");
	gpu_log_reset();
	is_int(b->ops->read_energy(b, 0, &counts), 0, "a reading over 2^32");
	is_int(b->dev[0].energy_range, 0, "the counter is wider: no wrap");
	is_int(gpu_log_count("wider than 32 bits"), 1, "said once");

	gpu_scenario("[device]\nlost=1\n");
	is_int(b->ops->read_energy(b, 0, &counts), -ENODEV,
	       "lost device: energy -ENODEV");
	is_int(ceems_gpu_backend_read_usage(b, 0, &u), -ENODEV,
	       "lost device: usage -ENODEV");
	ceems_gpu_backend_close(b);

	gpu_scenario("[device]\nno_energy=1\n[device]\nenergy_raw=5000000000\n");
	b = ceems_gpu_rocm_smi_open(gpu_double_path(ROCM_DOUBLE), &errnum,
				    err, sizeof(err));
	if (!ok(b != NULL && b->ndevices == 2, "two devices"))
		return;
	ok(!b->dev[0].has_energy_counter, "no energy count: no counter");
	is_int(b->ops->read_energy(b, 0, &counts), -ENOTSUP,
	       "no energy count: -ENOTSUP");
	is_int(b->dev[1].energy_range, 0, "64 bits seen at open: no wrap");
	ceems_gpu_backend_close(b);
}

int
main(void)
{
	gpu_double_setup();
	/* First: it checks that nothing loaded the real library. */
	test_no_driver_not_loaded();
	test_real_library();
	test_unusable();
	test_device();
	gpu_double_teardown();
	return done_testing();
}
