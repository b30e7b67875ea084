/* test_agent_gpu.c - the node agent's GPUs, with the NVML double loaded
 * through the agent's own dlopen path: a job's GPUs matched by device
 * file, UUID, bus id or GRES index; each device's energy to the job that
 * holds it and the rest to idle; a MIG instance's part of its device by
 * slices weighted by activity; the usage means and memory peak of the
 * report; the accounts kept over an agent restart; a node without GPUs. */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "agent/agent.h"
#include "../tap.h"
#include "agent_sim.h"
#include "fixture.h"
#include "gpu_double.h"
#include "tmptree.h"

/* NVML counts millijoules. */
#define MJ_PER_J 1000ULL

static char buf[8192];

/* The simulated node of agent_sim.h, with NVIDIA's device files. */
static void
make_gpu_trees(void)
{
	char path[PATH_MAX];

	make_trees();
	/* The NVIDIA driver's MIG capability files of GPU 1's instances. */
	tmptree_write(proc_root, "devices", "Character devices:\n"
		      "195 nvidia-frontend\n237 nvidia-caps\n\n"
		      "Block devices:\n  8 sd\n");
	snprintf(path, sizeof(path), "%s/driver", proc_root);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/driver/nvidia-caps", proc_root);
	mkdir(path, 0755);
	tmptree_write(proc_root, "driver/nvidia-caps/mig-minors",
		      "config 1\nmonitor 2\ngpu1/gi1/access 21\n"
		      "gpu1/gi1/ci0/access 22\ngpu1/gi2/access 30\n"
		      "gpu1/gi2/ci0/access 31\ngpu0/gi5/access 40\n");
}

static void
config_for(struct ceems_config *c, const char *nvml)
{
	ceems_conf_defaults(c);
	snprintf(c->sysfs_root, sizeof(c->sysfs_root), "%s", sys_root);
	snprintf(c->procfs_root, sizeof(c->procfs_root), "%s", proc_root);
	snprintf(c->cgroupfs_prefix, sizeof(c->cgroupfs_prefix), "%s", cg_root);
	snprintf(c->state_dir, sizeof(c->state_dir), "%s", state_dir);
	snprintf(c->spool_dir, sizeof(c->spool_dir), "%s/spool", proc_root);
	snprintf(c->gpu_nvml_library, sizeof(c->gpu_nvml_library), "%s", nvml);
	snprintf(c->gpu_rocm_smi_library, sizeof(c->gpu_rocm_smi_library),
		 "none");
	c->idle_power_package_w = 20;
	c->idle_power_dram_w = 2;
	c->max_jobs = 4;
}

static void
spec_for(struct ceems_agent_job_spec *spec, uint32_t jobid, const char *id)
{
	memset(spec, 0, sizeof(*spec));
	spec->jobid = jobid;
	spec->uid = 1000;
	if (ceems_cgroup_path_job_from_proc(fixture_text("cgroup/v1/cgroup-localhost-batch.txt",
						    buf, sizeof(buf)),
				       42, &spec->cgroup) != 0) {
		printf("Bail out! cannot resolve job 42's cgroup fixture\n");
		exit(1);
	}
	if (id != NULL) {
		snprintf(spec->gpu_ids[0], sizeof(spec->gpu_ids[0]), "%s", id);
		spec->ngpu_ids = 1;
	}
}

/* Three devices: 0 and 2 whole, 1 split into two MIG instances of 4 and
 * 3 slices.  Counters in mJ; E0, E1, E2 their values now; U1A, U1B the
 * instances' utilisation. */
static void
scenario(unsigned long long e0, unsigned long long e1, unsigned long long e2,
	 double u1a, double u1b)
{
	char text[4096];

	snprintf(text, sizeof(text),
		 "init=ok\n"
		 "[device]\nuuid=GPU-aaaa0000-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:3B:00.0\nname=Double\nminor=0\n"
		 "power_limit_w=700\nutil=75\nmem_util=30\n"
		 "memory_total=1000000\nmemory_used=400000\nenergy_raw=%llu\n"
		 "gpm_sm_active=60\ngpm_sm_occupancy=25\ngpm_tensor=10\n"
		 "gpm_fp64=5\ngpm_fp32=40\ngpm_fp16=0\n"
		 "[device]\nuuid=GPU-aaaa1111-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:5E:00.0\nname=Double\nminor=1\n"
		 "power_limit_w=700\nutil=50\nmemory_total=7000000\n"
		 "memory_used=100\nenergy_raw=%llu\nmig=1\nsms=7\n"
		 "[instance]\nid=1\nuuid=MIG-bbbb0000-0000-0000-0000-000000000000\n"
		 "sms=4\nutil=%g\nmemory_total=4000000\nmemory_used=1000\n"
		 "[instance]\nid=2\nuuid=MIG-bbbb1111-0000-0000-0000-000000000000\n"
		 "sms=3\nutil=%g\nmemory_total=3000000\nmemory_used=2000\n"
		 "[device]\nuuid=GPU-aaaa2222-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:86:00.0\nname=Double\nminor=2\n"
		 "power_limit_w=700\nutil=0\nmemory_total=1000000\n"
		 "memory_used=0\nenergy_raw=%llu\n",
		 e0, e1, u1a, u1b, e2);
	gpu_scenario(text);
}

static double
gpu_idle_j(const struct ceems_agent *a)
{
	return ceems_agent_last_tick(a)->idle_j[CEEMS_DOMAIN_GPU];
}

static void
test_matching(const char *nvml)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	static const struct {
		const char *id;
		const char *uuid;
		int instance;
	} cases[] = {
		{ "dev:195:2", "GPU-aaaa2222-0000-0000-0000-000000000000", -1 },
		{ "GPU-AAAA0000-0000-0000-0000-000000000000",
		  "GPU-aaaa0000-0000-0000-0000-000000000000", -1 },
		{ "00000000:86:00.0", "GPU-aaaa2222-0000-0000-0000-000000000000", -1 },
		{ "MIG-bbbb1111-0000-0000-0000-000000000000",
		  "MIG-bbbb1111-0000-0000-0000-000000000000", 2 },
		{ "dev:237:22", "MIG-bbbb0000-0000-0000-0000-000000000000", 1 },
	};

	scenario(1000, 2000, 3000, 0, 0);
	config_for(&c, nvml);
	a = ceems_agent_open(&c, 10 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "the agent opens with the NVML double (%s)", err))
		return;
	is_int(gpu_log_count("GPU 2: nvidia Double, GPU-aaaa2222"), 1,
	       "it logs each device it found");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		spec_for(&spec, 100 + (uint32_t)i, cases[i].id);
		ok(ceems_agent_register(a, &spec, 10 * SEC) == 0,
		   "a job naming %s registers", cases[i].id);
		ceems_agent_deregister(a, spec.jobid, 11 * SEC, &r);
		ok(r.ngpus == 1 && strcmp(r.gpus[0].uuid, cases[i].uuid) == 0 &&
		   r.gpus[0].instance == cases[i].instance,
		   "%s is %s, instance %d (got %u: %s, %d)", cases[i].id,
		   cases[i].uuid, cases[i].instance, r.ngpus,
		   r.ngpus > 0 ? r.gpus[0].uuid : "-",
		   r.ngpus > 0 ? r.gpus[0].instance : -9);
		ceems_agent_release(a, spec.jobid);
	}
	/* A MIG slice as gres.conf names it: its GPU's file and its
	 * capability file.  The job holds the slice, not the GPU. */
	spec_for(&spec, 190, "dev:195:1");
	snprintf(spec.gpu_ids[1], sizeof(spec.gpu_ids[1]), "dev:237:30");
	spec.ngpu_ids = 2;
	ceems_agent_register(a, &spec, 10 * SEC);
	ceems_agent_deregister(a, 190, 11 * SEC, &r);
	ok(r.ngpus == 1 && r.gpus[0].instance == 2,
	   "a slice's GPU and capability file: the slice alone (%u)", r.ngpus);
	ceems_agent_release(a, 190);
	/* On a node with MIG, a GRES index alone names no slice. */
	gpu_log_reset();
	spec_for(&spec, 191, "gres:1");
	ceems_agent_register(a, &spec, 10 * SEC);
	ceems_agent_deregister(a, 191, 11 * SEC, &r);
	is_int(r.ngpus, 0, "gres:1 on a MIG node is not guessed");
	is_int(gpu_log_count("cannot name a MIG slice"), 1, "and says why");
	ceems_agent_release(a, 191);
	gpu_log_reset();
	spec_for(&spec, 200, "GPU-ffffffff-0000-0000-0000-000000000000");
	is_int(ceems_agent_register(a, &spec, 12 * SEC), 0,
	       "a job naming a GPU the node lacks still registers");
	ceems_agent_deregister(a, 200, 13 * SEC, &r);
	is_int(r.ngpus, 0, "it holds no GPU here");
	is_int(gpu_log_count("matches none of this node's 3"), 1,
	       "and the unknown GPU is logged");
	ceems_agent_open_close(a);
}

static void
test_energy_and_usage(const char *nvml)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	unsigned long long e0 = 5000, e1 = 9000, e2 = 100;
	double idle = 0, part;

	scenario(e0, e1, e2, 80, 20);
	config_for(&c, nvml);
	a = ceems_agent_open(&c, 99 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "the agent opens (%s)", err))
		return;
	/* A first tick: the instances' activity is a difference of two
	 * profiling samples. */
	ceems_agent_tick(a, 100 * SEC);
	spec_for(&spec, 42, "dev:195:0");
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0, "job 42 holds GPU 0");
	spec_for(&spec, 43, "MIG-bbbb0000-0000-0000-0000-000000000000");
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0,
	       "job 43 holds a MIG instance of GPU 1");
	spec_for(&spec, 46, "dev:195:2/1/4");
	is_int(ceems_agent_register(a, &spec, 100 * SEC), 0,
	       "job 46 holds one of GPU 2's four shards");
	for (int t = 1; t <= 4; t++) {
		e0 += 250 * MJ_PER_J;	/* 250 W */
		e1 += 100 * MJ_PER_J;	/* 100 W */
		e2 += 40 * MJ_PER_J;	/* 40 W, nobody's */
		scenario(e0, e1, e2, 80, 20);
		ceems_agent_tick(a, (100 + (uint64_t)t) * SEC);
		idle += gpu_idle_j(a);
	}
	/* Instance 1 (4 slices at 80%) against instance 2 (3 at 20%). */
	part = 4 * 0.8 / (4 * 0.8 + 3 * 0.2);
	is_near(idle, 4 * (40 * 0.75 + 100 * (1 - part)), 1e-6,
		"the unheld shards and the unheld instance's part went to idle");
	ceems_agent_deregister(a, 42, 104 * SEC, &r);
	ok(r.ngpus == 1 && r.gpus[0].have_energy, "job 42's GPU has energy");
	is_near(r.gpus[0].energy_j, 4 * 250, 1e-6, "all of GPU 0's: 1000 J");
	is_near(r.ledger.joules[CEEMS_DOMAIN_GPU], 4 * 250, 1e-6,
		"its ledger's GPU domain says the same");
	ok(r.gpus[0].have_util && fabs(r.gpus[0].util_pct - 75) < 1e-9,
	   "its utilisation: 75%%");
	ok(r.gpus[0].have_mem_peak && r.gpus[0].mem_peak_bytes == 400000 &&
	   r.gpus[0].mem_total_bytes == 1000000, "its memory: 400000 of 1000000");
	ok(r.gpus[0].have_sm_active && fabs(r.gpus[0].sm_active_pct - 60) < 1e-9 &&
	   r.gpus[0].have_sm_occupancy && r.gpus[0].have_tensor_active,
	   "its profiling metrics (SM activity 60%%)");
	ok(!r.gpus[0].power_integrated, "from the device's energy counter");
	ceems_agent_release(a, 42);
	ceems_agent_deregister(a, 43, 104 * SEC, &r);
	ok(r.ngpus == 1 && r.gpus[0].instance == 1, "job 43 held instance 1");
	is_near(r.gpus[0].energy_j, 4 * 100 * part, 1e-6,
		"its part of GPU 1: slices weighted by activity");
	ok(r.gpus[0].have_util && fabs(r.gpus[0].util_pct - 80) < 1e-9,
	   "the instance's own utilisation, 80%%, not the device's");
	ok(r.gpus[0].have_mem_peak && r.gpus[0].mem_peak_bytes == 1000,
	   "and its own memory");
	is_near(r.gpus[0].share, 4.0 / 7.0, 1e-9, "its share is 4 of 7 slices");
	ceems_agent_release(a, 43);
	ceems_agent_deregister(a, 46, 104 * SEC, &r);
	ok(r.ngpus == 1 && fabs(r.gpus[0].share - 0.25) < 1e-12,
	   "job 46's share of GPU 2 is a quarter");
	is_near(r.gpus[0].energy_j, 4 * 40 * 0.25, 1e-6,
		"and so is its energy: 40 J");
	ceems_agent_release(a, 46);
	ceems_agent_open_close(a);
}

static void
test_restart(const char *nvml)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	unsigned long long e0 = 1000;

	scenario(e0, 0, 0, 0, 0);
	config_for(&c, nvml);
	c.checkpoint_interval_ns = SEC;
	a = ceems_agent_open(&c, 300 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "the agent opens (%s)", err))
		return;
	spec_for(&spec, 44, "dev:195:0");
	ceems_agent_register(a, &spec, 300 * SEC);
	ceems_agent_tick(a, 300 * SEC);
	e0 += 200 * MJ_PER_J;
	scenario(e0, 0, 0, 0, 0);
	ceems_agent_tick(a, 301 * SEC);
	ceems_agent_checkpoint(a, 301 * SEC);
	ceems_agent_open_close(a);

	a = ceems_agent_open(&c, 302 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "a new agent opens (%s)", err))
		return;
	is_int(ceems_agent_restore(a, 302 * SEC), 1, "and restores the job");
	ceems_agent_tick(a, 302 * SEC);
	e0 += 200 * MJ_PER_J;
	scenario(e0, 0, 0, 0, 0);
	ceems_agent_tick(a, 303 * SEC);
	ceems_agent_deregister(a, 44, 303 * SEC, &r);
	ok(r.ngpus == 1 && r.gpus[0].have_energy &&
	   r.gpus[0].energy_j >= 200 - 1e-6,
	   "its GPU account came back with the job (%.1f J)",
	   r.ngpus > 0 ? r.gpus[0].energy_j : -1);
	ok(r.ngpus == 1 && fabs(r.gpus[0].energy_j -
				r.ledger.joules[CEEMS_DOMAIN_GPU]) < 1e-6,
	   "and agrees with the restored ledger");
	ceems_agent_open_close(a);
}

/* A job's two GPUs, one lost for a tick: the other's energy is still
 * its own. */
static void
test_one_device_gap(const char *nvml)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";
	char text[2048];

	scenario(1000, 0, 1000, 0, 0);
	config_for(&c, nvml);
	a = ceems_agent_open(&c, 500 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "the agent opens (%s)", err))
		return;
	spec_for(&spec, 47, "dev:195:0");
	snprintf(spec.gpu_ids[1], sizeof(spec.gpu_ids[1]), "dev:195:2");
	spec.ngpu_ids = 2;
	ceems_agent_register(a, &spec, 500 * SEC);
	ceems_agent_tick(a, 501 * SEC);
	/* GPU 0 draws 100 J; GPU 2 is lost. */
	snprintf(text, sizeof(text),
		 "init=ok\n[device]\nuuid=GPU-aaaa0000-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:3B:00.0\nminor=0\npower_limit_w=700\n"
		 "energy_raw=%llu\n[device]\nuuid=GPU-aaaa1111-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:5E:00.0\nminor=1\nenergy_raw=0\n"
		 "[device]\nuuid=GPU-aaaa2222-0000-0000-0000-000000000000\n"
		 "bus_id=00000000:86:00.0\nminor=2\nlost=1\nenergy_raw=1000\n",
		 1000 + 100 * MJ_PER_J);
	gpu_scenario(text);
	ceems_agent_tick(a, 502 * SEC);
	ceems_agent_deregister(a, 47, 502 * SEC, &r);
	ok(r.ngpus == 2 && r.gpus[0].have_energy &&
	   fabs(r.gpus[0].energy_j - 100) < 1e-6,
	   "GPU 0's 100 J are the job's though GPU 2 was lost (%.1f J)",
	   r.ngpus > 0 ? r.gpus[0].energy_j : -1);
	ceems_agent_release(a, 47);
	ceems_agent_open_close(a);
}

static void
test_no_gpu(void)
{
	struct ceems_config c;
	struct ceems_agent_job_spec spec;
	struct ceems_agent_job_report r;
	struct ceems_agent *a;
	char err[256] = "";

	config_for(&c, "/nonexistent/libnvidia-ml.so.1");
	gpu_log_reset();
	a = ceems_agent_open(&c, 400 * SEC, err, sizeof(err));
	if (!ok(a != NULL, "without the library the agent opens all the same (%s)",
		err))
		return;
	is_int(gpu_log_count("no GPU measured (NVIDIA: "), 1,
	       "one line says so");
	is_int(gpu_log_warnings, 0, "and nothing is a warning");
	spec_for(&spec, 45, "dev:195:0");
	ceems_agent_register(a, &spec, 400 * SEC);
	ceems_agent_tick(a, 400 * SEC);
	ceems_agent_tick(a, 401 * SEC);
	ceems_agent_deregister(a, 45, 401 * SEC, &r);
	ok(r.ngpus == 0 && !r.ledger.measured[CEEMS_DOMAIN_GPU],
	   "the GPU domain is absent, not zero");
	ceems_agent_open_close(a);
}

int
main(void)
{
	char trees[3][sizeof(sys_root)];

	const char *nvml = gpu_double_path("libnvml-double.so");

	gpu_double_setup();
	make_gpu_trees();
	mkdir(state_dir, 0700);
	test_matching(nvml);
	test_energy_and_usage(nvml);
	test_restart(nvml);
	test_one_device_gap(nvml);
	test_no_gpu();
	gpu_double_teardown();
	memcpy(trees[0], sys_root, sizeof(sys_root));
	memcpy(trees[1], cg_root, sizeof(cg_root));
	memcpy(trees[2], proc_root, sizeof(proc_root));
	for (int i = 0; i < 3; i++)
		tmptree_remove(trees[i]);
	return done_testing();
}
