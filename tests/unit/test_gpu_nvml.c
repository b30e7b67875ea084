/* test_gpu_nvml.c - the NVML backend against the NVML double, loaded
 * through the backend's own dlopen path: identity (bus id normalised,
 * minor of /dev/nvidiaN), energy and power, usage and GPM profiling
 * metrics, MIG instances, a lost device, and every way the library can
 * be unusable (missing, too old, no driver, no GPU). */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

#include "sources/gpu.h"
#include "../tap.h"
#include "gpu_double.h"

#define NVML_DOUBLE "libnvml-double.so"

static const char two_devices[] =
	"[device]\n"
	"uuid=GPU-11111111-2222-3333-4444-555555555555\n"
	"bus_id=00000000:3B:00.0\n"
	"name=NVIDIA H100 80GB HBM3\n"
	"minor=3\n"
	"memory_total=85899345920\n"
	"memory_used=1073741824\n"
	"util=40\n"
	"mem_util=20\n"
	"power_w=250.5\n"
	"power_limit_w=700\n"
	"sms=132\n"
	"energy_raw=123456789\n"
	"gpm_sm_active=61.5\n"
	"gpm_sm_occupancy=30.25\n"
	"gpm_tensor=12.5\n"
	"gpm_fp64=5\n"
	"gpm_fp32=45\n"
	"gpm_fp16=7\n"
	"[device]\n"
	"uuid=GPU-aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee\n"
	"bus_id=00000000:86:00.0\n"
	"minor=0\n"
	"no_gpm=1\n"
	"no_energy=1\n"
	"power_w=90\n";

static struct ceems_gpu_backend *
open_double(const char *name, int *errnum, char *err, size_t size)
{
	return ceems_gpu_nvml_open(gpu_double_path(name), errnum, err, size);
}

static void
test_unusable(void)
{
	struct ceems_gpu_backend *b;
	char err[512];
	int errnum = 0;

	b = ceems_gpu_nvml_open("/nonexistent/libnvidia-ml.so.1", &errnum,
				err, sizeof(err));
	ok(b == NULL, "missing library: no backend");
	is_int(errnum, -ENOENT, "missing library: -ENOENT");
	ok(strstr(err, "/nonexistent/libnvidia-ml.so.1") != NULL &&
	   strstr(err, "no NVIDIA GPU is measured") != NULL,
	   "missing library: the message names it and what follows");

	gpu_scenario(two_devices);
	b = open_double("libnvml-double-noenergy.so", &errnum, err,
			sizeof(err));
	ok(b == NULL, "library without an entry point: no backend");
	is_int(errnum, -ENOSYS, "library without an entry point: -ENOSYS");
	ok(strstr(err, "nvmlDeviceGetTotalEnergyConsumption") != NULL,
	   "library without an entry point: the message names it");

	gpu_scenario("init=driver_not_loaded\n[device]\n");
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	ok(b == NULL, "driver not loaded: no backend");
	is_int(errnum, -ENODEV, "driver not loaded: -ENODEV");
	ok(strstr(err, "driver is not loaded") != NULL,
	   "driver not loaded: said so");

	gpu_scenario("init=error\n[device]\n");
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	ok(b == NULL && errnum == -EIO, "init failing otherwise: -EIO");

	gpu_scenario("# no device\n");
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	ok(b == NULL && errnum == -ENODEV, "no GPU: -ENODEV");
	ok(strstr(err, "no GPU on this node") != NULL, "no GPU: said so");
}

static void
test_identity(void)
{
	struct ceems_gpu_backend *b;
	const struct ceems_gpu_device *d;
	char err[512];
	int errnum = 1;

	gpu_scenario(two_devices);
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	if (!ok(b != NULL, "opened the double: %s", err))
		return;
	is_int(errnum, 0, "no error");
	is_str(b->ops->kind, "nvml", "kind");
	is_int(b->ndevices, 2, "two devices");
	d = &b->dev[0];
	is_int(d->vendor, CEEMS_GPU_NVIDIA, "vendor");
	is_str(ceems_gpu_backend_vendor_name(d->vendor), "nvidia", "vendor name");
	is_str(d->uuid, "GPU-11111111-2222-3333-4444-555555555555", "uuid");
	is_str(d->bus_id, "0000:3b:00.0", "bus id normalised");
	is_str(d->name, "NVIDIA H100 80GB HBM3", "name");
	ok(d->major == 195 && d->minor == 3, "/dev/nvidia3 is 195:3");
	is_int(d->mem_total_bytes, 85899345920ULL, "memory total");
	/* NVML gives SM counts for MIG instances only. */
	is_int(d->slices, 0, "a whole device's SMs: unknown");
	is_near(d->max_power_w, 700.0, 1e-9, "power limit");
	ok(d->has_energy_counter, "energy counter");
	is_near(d->energy_unit_j, 1e-3, 1e-15, "millijoules");
	is_int(d->energy_range, 0, "no wrap");
	is_int(d->ninstances, 0, "not partitioned");
	is_str(b->dev[1].bus_id, "0000:86:00.0", "second bus id");
	ok(!b->dev[1].has_energy_counter, "second: no energy counter");
	ceems_gpu_backend_close(b);
}

static void
test_reads(void)
{
	struct ceems_gpu_backend *b;
	struct ceems_gpu_usage u;
	uint64_t counts = 0;
	double w = 0.0;
	char err[512];
	int errnum;

	gpu_scenario(two_devices);
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	if (!ok(b != NULL, "reads: opened"))
		return;
	is_int(b->ops->read_energy(b, 0, &counts), 0, "energy read");
	is_int(counts, 123456789, "energy counter as the library has it");
	is_int(b->ops->read_power(b, 0, &w), 0, "power read");
	is_near(w, 250.5, 1e-9, "power in watts");
	is_int(b->ops->read_energy(b, 1, &counts), -ENOTSUP,
	       "no counter: -ENOTSUP");
	is_int(b->ops->read_energy(b, 2, &counts), -EINVAL, "no device 2");

	is_int(ceems_gpu_backend_read_usage(b, 0, &u), 0, "usage read");
	ok(u.have_util && u.util_pct == 40.0, "utilisation");
	ok(u.have_mem_util && u.mem_util_pct == 20.0, "memory utilisation");
	ok(u.have_mem_used && u.mem_used_bytes == 1073741824ULL, "memory used");
	ok(u.have_power && fabs(u.power_w - 250.5) < 1e-9, "power");
	ok(!u.have_sm_active && !u.have_tensor_active,
	   "no profiling metrics from one sample");
	is_int(ceems_gpu_backend_read_usage(b, 0, &u), 0, "usage read again");
	ok(u.have_sm_active && u.sm_active_pct == 61.5, "SM active");
	ok(u.have_sm_occupancy && u.sm_occupancy_pct == 30.25, "SM occupancy");
	ok(u.have_tensor_active && u.tensor_active_pct == 12.5, "tensor active");
	ok(u.have_fp_active && u.fp_active_pct == 45.0,
	   "FP active: the busiest of FP64/32/16");

	ceems_gpu_backend_read_usage(b, 1, &u);
	is_int(ceems_gpu_backend_read_usage(b, 1, &u), 0, "no GPM: usage read");
	ok(u.have_util && !u.have_sm_active && !u.have_fp_active,
	   "no GPM: utilisation, no profiling metrics");

	gpu_scenario("[device]\nuuid=GPU-1\nbus_id=00000000:3B:00.0\nlost=1\n"
		     "[device]\nuuid=GPU-2\n");
	is_int(b->ops->read_energy(b, 0, &counts), -ENODEV,
	       "lost device: energy -ENODEV");
	is_int(b->ops->read_power(b, 0, &w), -ENODEV,
	       "lost device: power -ENODEV");
	is_int(ceems_gpu_backend_read_usage(b, 0, &u), -ENODEV,
	       "lost device: usage -ENODEV");
	ok(!u.have_util && !u.have_power, "lost device: nothing read");
	ceems_gpu_backend_close(b);
	ceems_gpu_backend_close(NULL);
	ok(1, "closing NULL is fine");
}

static void
test_mig(void)
{
	struct ceems_gpu_backend *b;
	const struct ceems_gpu_device *d;
	struct ceems_gpu_usage u;
	char err[512];
	int errnum;

	gpu_scenario("[device]\nuuid=GPU-A\nbus_id=00000000:07:00.0\nsms=132\n"
		     "mig=1\nutil=0\n"
		     "[instance]\nid=1\nuuid=MIG-one\nsms=60\nutil=75\n"
		     "memory_total=42949672960\nmemory_used=1000\n"
		     "[instance]\nid=5\nuuid=MIG-two\nsms=16\nutil=10\n"
		     "memory_total=10737418240\nmemory_used=2000\n");
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	if (!ok(b != NULL, "MIG: opened"))
		return;
	d = &b->dev[0];
	is_int(d->ninstances, 2, "MIG: two GPU instances");
	ok(d->inst[0].id == 1 && d->inst[1].id == 5, "MIG: instance ids");
	is_str(d->inst[0].uuid, "MIG-one", "MIG: first uuid");
	is_str(d->inst[1].uuid, "MIG-two", "MIG: second uuid");
	ok(d->inst[0].slices == 60 && d->inst[1].slices == 16,
	   "MIG: SMs of each instance");
	ok(d->inst[0].major == -1 && d->inst[0].minor == -1,
	   "MIG: no access file known");
	ceems_gpu_backend_read_usage(b, 0, &u);
	ok(u.have_inst_mem_used[0] && u.inst_mem_used_bytes[0] == 1000 &&
	   u.have_inst_mem_used[1] && u.inst_mem_used_bytes[1] == 2000,
	   "MIG: memory used per instance");
	is_int(ceems_gpu_backend_read_usage(b, 0, &u), 0, "MIG: read again");
	ok(u.have_inst_util[0] && u.inst_util_pct[0] == 75.0 &&
	   u.have_inst_util[1] && u.inst_util_pct[1] == 10.0,
	   "MIG: utilisation per instance");
	ok(!u.have_inst_util[2], "MIG: nothing past the instances");
	ceems_gpu_backend_close(b);
}

static void
test_many(void)
{
	struct ceems_gpu_backend *b;
	char text[4096] = "", err[512];
	size_t i, len = 0;
	int errnum, distinct = 1;

	for (i = 0; i < 9; i++)
		len += (size_t)snprintf(text + len, sizeof(text) - len,
			"[device]\nbus_id=00000000:%02zX:00.0\n%s", 0x10 + i,
			i == 4 ? "lost=1\n" : "");
	gpu_scenario(text);
	gpu_log_reset();
	b = open_double(NVML_DOUBLE, &errnum, err, sizeof(err));
	if (!ok(b != NULL, "nine devices, one lost at open: opened"))
		return;
	is_int(b->ndevices, 8, "the lost one left out, eight kept");
	is_int(gpu_log_count("GPU 4 left out"), 1, "the lost one is logged");
	for (i = 1; i < b->ndevices; i++)
		if (strcmp(b->dev[i].bus_id, b->dev[i - 1].bus_id) == 0)
			distinct = 0;
	ok(distinct, "eight distinct bus ids");
	is_str(b->dev[4].bus_id, "0000:15:00.0", "the fifth is the sixth");
	ceems_gpu_backend_close(b);
}

/* Copy the double to DST: a library of its own, whose scenario is
 * DST.scenario. */
static int
copy_double(const char *dst)
{
	char buf[65536];
	FILE *in = fopen(gpu_double_path(NVML_DOUBLE), "rb");
	FILE *out = fopen(dst, "wb");
	size_t n;
	int ret = in != NULL && out != NULL ? 0 : -1;

	while (ret == 0 && (n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			ret = -1;
	if (in != NULL)
		fclose(in);
	if (out != NULL && fclose(out) != 0)
		ret = -1;
	return ret;
}

/* As the agent runs it, with a clean environment: the double finds its
 * scenario next to itself. */
static void
test_scenario_beside(void)
{
	char lib[600], scen[700], err[512];
	struct ceems_gpu_backend *b;
	FILE *f;
	int errnum;

	snprintf(lib, sizeof(lib), "%s/libnvml-beside.so", gpu_scenario_dir);
	snprintf(scen, sizeof(scen), "%s.scenario", lib);
	f = fopen(scen, "w");
	if (!ok(copy_double(lib) == 0 && f != NULL, "beside: copied"))
		return;
	fputs("[device]\nuuid=GPU-beside\n", f);
	fclose(f);
	unsetenv("CEEMS_GPU_DOUBLE_SCENARIO");
	b = ceems_gpu_nvml_open(lib, &errnum, err, sizeof(err));
	ok(b != NULL && b->ndevices == 1 &&
	   strcmp(b->dev[0].uuid, "GPU-beside") == 0,
	   "the double reads <its path>.scenario");
	ceems_gpu_backend_close(b);
	setenv("CEEMS_GPU_DOUBLE_SCENARIO", gpu_scenario_file, 1);
	unlink(scen);
	unlink(lib);
}

int
main(void)
{
	gpu_double_setup();
	test_unusable();
	test_identity();
	test_reads();
	test_mig();
	test_many();
	test_scenario_beside();
	gpu_double_teardown();
	return done_testing();
}
