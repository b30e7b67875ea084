/* test_agent_proto.c - the node agent's wire protocol: round trips of job
 * specs and reports (every field, and what is left out when unknown), a
 * table of malformed requests, seeded random mutations of valid messages
 * through both decoders, and the client call against small servers
 * forked here (absent agent, silent agent, oversized reply, refusal). */
#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <json-c/json.h>

#include "client/agent_client.h"
#include "client/agent_proto.h"
#include "client/jobside.h"
#include "base/json_util.h"
#include "../tap.h"

static char msg[CEEMS_AGENT_MSG_MAX + 1];
static char err[512];

static void
fill_spec_v1(struct ceems_agent_job_spec *s)
{
	memset(s, 0, sizeof(*s));
	s->jobid = 4242;
	s->uid = 1000;
	s->cgroup.version = CEEMS_CGROUP_V1;
	snprintf(s->cgroup.v1[CEEMS_CG_CPUACCT], CEEMS_CGROUP_PATH_MAX,
		 "/slurm_node01/uid_1000/job_4242");
	snprintf(s->cgroup.v1[CEEMS_CG_MEMORY], CEEMS_CGROUP_PATH_MAX,
		 "/slurm_node01/uid_1000/job_4242");
	snprintf(s->cgroup.v1[CEEMS_CG_FREEZER], CEEMS_CGROUP_PATH_MAX,
		 "/slurm/uid_1000/job_4242");
	s->alloc_cores = 32;
	s->alloc_mem_bytes = UINT64_C(0xffffffffffffff00);	/* > INT64_MAX */
	s->gpu_share[0] = 1.0;
	s->gpu_share[3] = 1.0 / 7.0;
}

static bool
same_spec(const struct ceems_agent_job_spec *a,
	  const struct ceems_agent_job_spec *b)
{
	if (a->jobid != b->jobid || a->uid != b->uid ||
	    a->alloc_cores != b->alloc_cores ||
	    a->alloc_mem_bytes != b->alloc_mem_bytes ||
	    a->cgroup.version != b->cgroup.version ||
	    strcmp(a->cgroup.unified, b->cgroup.unified) != 0)
		return false;
	for (int c = 0; c < CEEMS_CG_NCONTROLLERS; c++)
		if (strcmp(a->cgroup.v1[c], b->cgroup.v1[c]) != 0)
			return false;
	for (int i = 0; i < CEEMS_LEDGER_MAX_GPUS; i++)
		if (a->gpu_share[i] != b->gpu_share[i])
			return false;
	return a->start_time == b->start_time &&
	       strcmp(a->cluster, b->cluster) == 0;
}

/* The two-phase end: release, and deregister carrying the job's
 * metadata (lib/agent/agent_finish.h). */
static void
test_finish_requests(void)
{
	static struct ceems_agent_request req, back;
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_RELEASE;
	req.jobid = 7;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	is_str(msg, "{\"op\":\"release\",\"jobid\":7}", "release request text");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.op == CEEMS_AGENT_OP_RELEASE && back.jobid == 7, "release round-trips");
	req.op = CEEMS_AGENT_OP_DEREGISTER;
	req.have_meta = true;
	ceems_job_meta_init(&req.meta);
	req.meta.jobid = 7;
	req.meta.uid = 1000;
	snprintf(req.meta.cluster, sizeof(req.meta.cluster), "alpha");
	snprintf(req.meta.name, sizeof(req.meta.name), "a \"quoted\" name");
	req.meta.start_time = 1700000000;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "\"meta\":{") != NULL, "deregister carries the job's metadata");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0,
	   "and decodes (%s)", err);
	ok(back.op == CEEMS_AGENT_OP_DEREGISTER && back.have_meta &&
	   strcmp(back.meta.cluster, "alpha") == 0 &&
	   strcmp(back.meta.name, "a \"quoted\" name") == 0 &&
	   back.meta.start_time == 1700000000 && back.meta.uid == 1000,
	   "the metadata round-trips");
	ok(ceems_agent_proto_request_decode("{\"op\":\"deregister\",\"jobid\":7}", 29,
				      &back, err, sizeof(err)) == 0 && !back.have_meta,
	   "a deregister without metadata (older plugins) still decodes");
}

static void
test_spec_round_trip(void)
{
	struct ceems_agent_request req, back;
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_REGISTER;
	fill_spec_v1(&req.spec);
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0, "register request encodes (%d bytes)", n);
	is_int(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "register request decodes");
	is_int(back.op, CEEMS_AGENT_OP_REGISTER, "op is register");
	is_int(back.jobid, 4242, "request jobid is the spec's");
	ok(same_spec(&req.spec, &back.spec), "v1 spec round-trips field for field");
	ok(strstr(msg, "\"pids\"") == NULL, "controllers without a path are left out");

	/* With its step: registered and started in one request. */
	snprintf(req.step, sizeof(req.step), "extern");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "\"step\":\"extern\"") != NULL, "a register carries its step");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.op == CEEMS_AGENT_OP_REGISTER && strcmp(back.step, "extern") == 0 &&
	   same_spec(&req.spec, &back.spec), "and decodes with it");
	snprintf(req.step, sizeof(req.step), "../x");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "Slurm step name") != NULL, "a register's step that is no step name is refused");
	req.step[0] = '\0';
	n = ceems_agent_proto_reply_started(true, msg, sizeof(msg));
	is_str(msg, "{\"ok\":true,\"registered\":true}", "started, the job registered by it");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), 1,
	       "decodes to 1");
	n = ceems_agent_proto_reply_started(false, msg, sizeof(msg));
	is_str(msg, "{\"ok\":true}", "started, the job known");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), 0,
	       "decodes to 0");

	/* v2 with the defaults left to the agent: those keys are omitted. */
	memset(&req.spec, 0, sizeof(req.spec));
	req.spec.jobid = UINT32_MAX;
	req.spec.uid = 0;
	req.spec.cgroup.version = CEEMS_CGROUP_V2;
	snprintf(req.spec.cgroup.unified, CEEMS_CGROUP_PATH_MAX,
		 "/system.slice/node01_slurmstepd.scope/job_4294967295");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "alloc_cores") == NULL &&
	   strstr(msg, "alloc_mem_bytes") == NULL && strstr(msg, "gpu_share") == NULL,
	   "v2 spec: alloc 0 (agent reads the cgroup) and no GPU are left out");
	is_int(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "v2 register decodes");
	ok(same_spec(&req.spec, &back.spec), "v2 spec round-trips, jobid 2^32-1 kept");
	ok(strstr(msg, "start_time") == NULL && strstr(msg, "cluster") == NULL &&
	   back.spec.start_time == 0 && back.spec.cluster[0] == '\0',
	   "no start time or cluster known: none sent, none decoded (unknown)");

	/* Slurm's start time and cluster, when the plugin knows them. */
	req.spec.start_time = 1700000123;
	memset(req.spec.cluster, 'c', sizeof(req.spec.cluster) - 1);
	req.spec.cluster[sizeof(req.spec.cluster) - 1] = '\0';
	is_int((int)strlen(req.spec.cluster), 63, "cluster of the largest length");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "\"start_time\":1700000123") != NULL,
	   "start time sent as Unix seconds");
	is_int(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "register with start time and cluster decodes");
	ok(same_spec(&req.spec, &back.spec) && back.spec.start_time == 1700000123 &&
	   strcmp(back.spec.cluster, req.spec.cluster) == 0,
	   "start time and cluster round-trip");
	req.spec.start_time = CEEMS_AGENT_START_TIME_MAX;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.spec.start_time == CEEMS_AGENT_START_TIME_MAX,
	   "the latest start time allowed decodes");

	/* The other ops. */
	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_DEREGISTER;
	req.jobid = 7;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	is_str(msg, "{\"op\":\"deregister\",\"jobid\":7}", "deregister request text");
	is_int(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "deregister decodes");
	ok(back.op == CEEMS_AGENT_OP_DEREGISTER && back.jobid == 7, "deregister fields");
	req.op = CEEMS_AGENT_OP_REPORT;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.op == CEEMS_AGENT_OP_REPORT && back.jobid == 7, "report request round-trips");
	req.op = CEEMS_AGENT_OP_STATUS;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	is_str(msg, "{\"op\":\"status\"}", "status request text");
	is_int(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "status decodes");
	is_int(ceems_agent_proto_request_encode(&req, msg, 8), -ENOSPC,
	       "encoding into a buffer too small is -ENOSPC");
	req.op = CEEMS_AGENT_OP_STEP_END;
	req.jobid = 7;
	snprintf(req.step, sizeof(req.step), "batch");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	is_str(msg, "{\"op\":\"step_end\",\"jobid\":7,\"step\":\"batch\"}", "step_end request text");
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.op == CEEMS_AGENT_OP_STEP_END && back.jobid == 7 &&
	   strcmp(back.step, "batch") == 0, "step_end request round-trips");
	req.have_status = true;
	req.status = 3 << 8;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.have_status && back.status == 3 << 8,
	   "step_end's wait status round-trips");
	req.have_status = false;
	req.op = CEEMS_AGENT_OP_DEREGISTER;
	snprintf(req.by, sizeof(req.by), "extern");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   strcmp(back.by, "extern") == 0, "deregister's \"by\" round-trips");
	req.by[0] = '\0';
	req.op = CEEMS_AGENT_OP_STEP_END;
	req.op = CEEMS_AGENT_OP_STEP_START;
	snprintf(req.step, sizeof(req.step), "0+1");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.op == CEEMS_AGENT_OP_STEP_START && strcmp(back.step, "0+1") == 0,
	   "step_start of a heterogeneous step round-trips");
	ok(strstr(msg, "tasks") == NULL && back.tasks == 0,
	   "a step_start without a task count writes none and reads 0");
	req.tasks = 65535;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(strstr(msg, "\"tasks\":65535") != NULL &&
	   ceems_agent_proto_request_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.tasks == 65535, "step_start's task count round-trips");
	req.op = CEEMS_AGENT_OP_STEP_END;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(strstr(msg, "tasks") == NULL, "a step_end carries no task count");
	req.tasks = 0;
}

/* A register that starts a step carries its task count; one without a
 * step does not. */
static void
test_register_tasks(void)
{
	struct ceems_agent_request req, back;
	int n;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_REGISTER;
	req.spec.jobid = 5;
	req.spec.cgroup.version = CEEMS_CGROUP_V2;
	snprintf(req.spec.cgroup.unified, sizeof(req.spec.cgroup.unified), "/job_5");
	req.tasks = 4;
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "tasks") == NULL,
	   "a register without a step writes no task count");
	snprintf(req.step, sizeof(req.step), "0");
	n = ceems_agent_proto_request_encode(&req, msg, sizeof(msg));
	ok(n > 0 && ceems_agent_proto_request_decode(msg, (size_t)n, &back, err,
						     sizeof(err)) == 0 &&
	   back.tasks == 4 && strcmp(back.step, "0") == 0,
	   "a register's step and its task count round-trip");
}

static void
fill_report(struct ceems_agent_job_report *r)
{
	memset(r, 0, sizeof(*r));
	r->jobid = 99;
	r->uid = 1234;
	r->alloc_cores = 4;
	r->alloc_mem_bytes = UINT64_C(8) << 30;
	r->elapsed_s = 3601.25;
	r->cpu_s = 1.0 / 3.0;
	r->gap_s = 2.5;
	r->cgroup_gone = true;
	r->usage.present = CEEMS_CGF_ALL & ~CEEMS_CGF_MEM_FAILS;
	r->usage.failed = CEEMS_CGF_MEM_FAILS;
	r->usage.flags = CEEMS_CGS_PEAK_SAMPLED | CEEMS_CGS_PARTLY_GONE;
	r->usage.cpu_user_ns = 123456789012ULL;
	r->usage.cpu_system_ns = 2;
	r->usage.cpu_usage_ns = 123456789015ULL;
	r->usage.mem_current_bytes = 1 << 20;
	r->usage.mem_peak_bytes = 3 << 20;
	r->usage.mem_rss_bytes = 0;	/* measured zero: must be written */
	r->usage.mem_cache_bytes = 4096;
	r->usage.mem_limit_bytes = CEEMS_CGROUP_UNLIMITED;
	r->usage.oom_kills = 1;
	r->usage.pids_current = 17;
	r->usage.io_read_bytes = UINT64_MAX - 1;
	r->usage.io_write_bytes = 5;
	r->usage.io_read_ops = 6;
	r->usage.io_write_ops = 7;
	ceems_cgroup_parse_cpu_list("0-3,8,10-11,8191", &r->usage.cpuset);
	r->usage.ncpus_allocated = r->usage.cpuset.count;

	ceems_job_figures_ledger_init(&r->ledger);
	r->ledger.lifetime_s = 3601.25;
	r->ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	r->ledger.joules[CEEMS_DOMAIN_PACKAGE] = 123456.789;
	r->ledger.static_j[CEEMS_DOMAIN_PACKAGE] = 0.1 + 0.2;
	r->ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 3598.75;
	r->ledger.measured[CEEMS_DOMAIN_DRAM] = true;
	r->ledger.joules[CEEMS_DOMAIN_DRAM] = 1e-9;
	r->ledger.static_j[CEEMS_DOMAIN_DRAM] = 0;
	r->ledger.covered_s[CEEMS_DOMAIN_DRAM] = 3601.25;
	r->ngaps = 1;
	r->gaps[0].start = 1763790000.25;
	r->gaps[0].end = 1763790005.5;
	r->recovered_s = 1.25;
	r->nrecovered = 1;
	r->recovered[0].start = 1763790100;
	r->recovered[0].end = 1763790101.25;
	r->nsteps = 2;
	snprintf(r->steps[0].id, sizeof(r->steps[0].id), "batch");
	r->steps[0].ended = true;
	r->steps[0].elapsed_s = 12.5;
	r->steps[0].have_cpu = true;
	r->steps[0].cpu_s = 1.0 / 3;
	r->steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] = true;
	r->steps[0].have_joules[CEEMS_DOMAIN_DRAM] = true;
	r->steps[0].have_mem_peak = true;
	r->steps[0].mem_peak_bytes = 1ULL << 33;
	r->steps[0].joules[CEEMS_DOMAIN_PACKAGE] = 100.25;
	r->steps[0].joules[CEEMS_DOMAIN_DRAM] = 5;
	/* A step nothing measured: values set but flags not, so that a
	 * value written anyway would show. */
	snprintf(r->steps[1].id, sizeof(r->steps[1].id), "0");
	r->steps[1].elapsed_s = 3;
	r->steps[1].cpu_s = 7;
	r->steps[1].joules[CEEMS_DOMAIN_PACKAGE] = 9;
	r->ledger.measured[CEEMS_DOMAIN_GPU] = true;	/* never covered */
	r->ledger.have_emissions = true;
	r->ledger.emissions_g = 12.5;
	r->ledger.emissions_covered_s = 3000;
	snprintf(r->ledger.factor.source, sizeof(r->ledger.factor.source),
		 "owid-ember-2025");
	snprintf(r->ledger.factor.zone, sizeof(r->ledger.factor.zone), "FR");
	r->ledger.factor.year = 2024;
	r->ledger.factor.g_per_kwh = 44.1;
	r->ledger.factor.pue = 1.35;
	r->ledger.factor_changed = true;
	r->ledger.idle_unlearned[CEEMS_DOMAIN_DRAM] = true;
}

static void
test_report_round_trip(void)
{
	static struct ceems_agent_job_report r, back;
	struct json_object *obj, *ledger, *gpu;
	int n;

	fill_report(&r);
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0, "reply with a report encodes (%d bytes)", n);
	memset(&back, 0xa5, sizeof(back));
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "reply decodes");
	ok(back.jobid == 99 && back.uid == 1234 && back.alloc_cores == 4 &&
	   back.alloc_mem_bytes == r.alloc_mem_bytes, "ids and allocation");
	ok(back.elapsed_s == r.elapsed_s && back.cpu_s == r.cpu_s &&
	   back.gap_s == r.gap_s, "elapsed, cpu and gap doubles exact (1/3 too)");
	ok(back.cgroup_gone, "cgroup_gone");
	ok(back.ngaps == 1 && back.gaps[0].start == 1763790000.25 &&
	   back.gaps[0].end == 1763790005.5, "gap intervals round-trip");
	ok(back.recovered_s == 1.25 && back.nrecovered == 1 &&
	   back.recovered[0].start == 1763790100 &&
	   back.recovered[0].end == 1763790101.25,
	   "recovered intervals round-trip");
	ok(back.nsteps == 2 && strcmp(back.steps[0].id, "batch") == 0 &&
	   back.steps[0].ended && back.steps[0].cpu_s == r.steps[0].cpu_s &&
	   back.steps[0].have_mem_peak && back.steps[0].mem_peak_bytes == 1ULL << 33 &&
	   back.steps[0].joules[CEEMS_DOMAIN_PACKAGE] == 100.25 &&
	   strcmp(back.steps[1].id, "0") == 0 && !back.steps[1].ended &&
	   !back.steps[1].have_mem_peak, "steps round-trip");
	ok(back.steps[0].have_cpu && back.steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   back.steps[0].have_joules[CEEMS_DOMAIN_DRAM] &&
	   !back.steps[0].have_joules[CEEMS_DOMAIN_GPU] &&
	   back.steps[0].joules[CEEMS_DOMAIN_DRAM] == 5,
	   "a measured step's figures come back marked measured");
	ok(!back.steps[1].have_cpu && back.steps[1].cpu_s == 0 &&
	   !back.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   back.steps[1].joules[CEEMS_DOMAIN_PACKAGE] == 0,
	   "an unmeasured step's CPU time and energy come back absent, not 0");
	ok(strstr(msg, "{\"id\":\"0\",\"ended\":false,\"elapsed_s\":3.0,\"joules\":{}}") != NULL,
	   "an unmeasured step is written with neither cpu_s nor joules (%s)",
	   strstr(msg, "{\"id\":\"0\"") ? strstr(msg, "{\"id\":\"0\"") : "none");
	is_int(back.usage.present, r.usage.present, "usage present bits");
	is_int(back.usage.failed, r.usage.failed, "usage failed bits");
	is_int(back.usage.flags, r.usage.flags, "usage flags");
	ok(back.usage.cpu_user_ns == r.usage.cpu_user_ns &&
	   back.usage.cpu_system_ns == 2 &&
	   back.usage.cpu_usage_ns == r.usage.cpu_usage_ns, "CPU times");
	ok(back.usage.mem_current_bytes == r.usage.mem_current_bytes &&
	   back.usage.mem_peak_bytes == r.usage.mem_peak_bytes &&
	   back.usage.mem_rss_bytes == 0 && back.usage.mem_cache_bytes == 4096,
	   "memory, a measured 0 kept as 0");
	ok(back.usage.mem_limit_bytes == CEEMS_CGROUP_UNLIMITED,
	   "unlimited memory round-trips (as \"max\")");
	ok(strstr(msg, "\"mem_limit_bytes\":\"max\"") != NULL, "unlimited is written \"max\"");
	ok(strstr(msg, "\"elapsed_s\":3601.25,") != NULL &&
	   strstr(msg, "\"pue\":1.35}") != NULL && strstr(msg, "\"gap_s\":2.5,") != NULL,
	   "doubles are written with the fewest digits that read back (1.35, not 1.3500000000000001)");
	ok(back.usage.oom_kills == 1 && back.usage.pids_current == 17, "oom and pids");
	ok(back.usage.io_read_bytes == UINT64_MAX - 1 && back.usage.io_write_bytes == 5 &&
	   back.usage.io_read_ops == 6 && back.usage.io_write_ops == 7,
	   "IO counters, one above INT64_MAX");
	ok(memcmp(&back.usage.cpuset, &r.usage.cpuset, sizeof(r.usage.cpuset)) == 0 &&
	   back.usage.ncpus_allocated == 8, "cpuset round-trips (8 CPUs, up to 8191)");
	ok(strstr(msg, "\"cpuset\":\"0-3,8,10-11,8191\"") != NULL, "cpuset as a CPU list");
	ok(strstr(msg, "\"mem_fail_count\":") == NULL &&
	   strstr(msg, "\"failed\":[\"mem_fail_count\"]") != NULL,
	   "an unreadable field is listed as failed, not written");

	ok(back.ledger.lifetime_s == r.ledger.lifetime_s, "lifetime");
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		ok(back.ledger.measured[d] == r.ledger.measured[d] &&
		   back.ledger.joules[d] == r.ledger.joules[d] &&
		   back.ledger.static_j[d] == r.ledger.static_j[d] &&
		   back.ledger.covered_s[d] == r.ledger.covered_s[d] &&
		   back.ledger.idle_unlearned[d] == r.ledger.idle_unlearned[d],
		   "ledger domain %s round-trips", ceems_job_figures_energy_domain_name(d));
	}
	ok(back.ledger.have_emissions && back.ledger.emissions_g == 12.5 &&
	   back.ledger.emissions_covered_s == 3000 && back.ledger.factor_changed,
	   "emissions");
	ok(strcmp(back.ledger.factor.source, "owid-ember-2025") == 0 &&
	   strcmp(back.ledger.factor.zone, "FR") == 0 && back.ledger.factor.year == 2024 &&
	   back.ledger.factor.g_per_kwh == 44.1 && back.ledger.factor.pue == 1.35,
	   "emission factor");

	/* What the JSON holds for domains: node absent (never measured), gpu
	 * without energy (measured domain, nothing covered). */
	obj = json_tokener_parse(msg);
	ledger = json_object_object_get(json_object_object_get(obj, "report"), "ledger");
	ok(ledger != NULL && json_object_object_get(ledger, "node") == NULL,
	   "a domain the node never measured is absent");
	gpu = json_object_object_get(ledger, "gpu");
	ok(gpu != NULL && json_object_object_get(gpu, "joules") == NULL &&
	   json_object_object_get(gpu, "covered_s") != NULL,
	   "a domain never covered has no joules (unknown, not 0)");
	ok(json_object_object_get(json_object_object_get(ledger, "package"), "coverage") != NULL &&
	   fabs(json_object_get_double(json_object_object_get(
		json_object_object_get(ledger, "package"), "coverage")) - 3598.75 / 3601.25) < 1e-12,
	   "coverage = covered_s / lifetime_s");
	ok(json_object_object_get(json_object_object_get(ledger, "gpu"), "static_j") == NULL,
	   "no static_j outside package and dram");
	json_object_put(obj);

	/* Nothing measured at all: only what is known is written. */
	memset(&r, 0, sizeof(r));
	ceems_job_figures_ledger_init(&r.ledger);
	r.jobid = 5;
	r.uid = 6;
	r.elapsed_s = 0.5;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "cpu_s") == NULL && strstr(msg, "alloc_cores") == NULL &&
	   strstr(msg, "\"usage\":{}") != NULL && strstr(msg, "emissions") == NULL &&
	   strstr(msg, "package") == NULL,
	   "an unmeasured report has no CPU, allocation, usage, energy or emissions");
	ok(ceems_agent_proto_reply_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.usage.present == 0 && !back.ledger.measured[CEEMS_DOMAIN_PACKAGE] &&
	   !back.ledger.have_emissions, "and decodes back to nothing measured");

	/* A zone configured on a node with no energy source: the factor
	 * priced no energy, the emissions are unknown, not 0 g. */
	r.ledger.measured[CEEMS_DOMAIN_GPU] = true;	/* never covered */
	r.ledger.lifetime_s = 60;
	r.ledger.have_emissions = true;
	r.ledger.emissions_covered_s = 0;
	snprintf(r.ledger.factor.zone, sizeof(r.ledger.factor.zone), "FR");
	r.ledger.factor.year = 2024;
	r.ledger.factor.g_per_kwh = 44;
	r.ledger.factor.pue = 1.3;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "emissions") == NULL && strstr(msg, "grams") == NULL,
	   "a factor without measured energy writes no emissions (%s)", msg);
	/* As a record written before that rule carries them. */
	{
		static const char old[] =
			"{\"ok\":true,\"report\":{\"jobid\":5,\"uid\":6,\"ledger\":{"
			"\"lifetime_s\":60.0,\"gpu\":{\"covered_s\":0.0},"
			"\"emissions\":{\"grams\":0.0,\"covered_s\":0.0,\"factor\":{"
			"\"source\":\"s\",\"zone\":\"FR\",\"year\":2024,\"g_per_kwh\":44.0,"
			"\"pue\":1.3},\"factor_changed\":false,\"fallback\":0.0}}}}";

		memset(&back, 0xa5, sizeof(back));
		is_int(ceems_agent_proto_reply_decode(old, sizeof(old) - 1, &back, err,
						       sizeof(err)), 0,
		       "an older report with 0 g and no energy decodes");
		ok(!back.ledger.have_emissions && back.ledger.emissions_g == 0 &&
		   !back.ledger.factor_timed && back.ledger.factor.zone[0] == '\0',
		   "and its 0 g is read as unknown");
		memcpy(msg, old, sizeof(old));
		msg[strstr(msg, "\"gpu\":{\"covered_s\":0.0}") - msg + 19] = '5';
		is_int(ceems_agent_proto_reply_decode(msg, strlen(msg), &back, err,
						       sizeof(err)), 0,
		       "the same with a covered domain decodes");
		ok(back.ledger.have_emissions && back.ledger.factor_timed &&
		   strcmp(back.ledger.factor.zone, "FR") == 0,
		   "and keeps its emissions: measured energy priced at 0 g is 0 g");
	}

	/* Non-finite doubles are not measurements: left out, JSON stays valid. */
	r.cpu_s = NAN;
	r.usage.present = CEEMS_CGF_CPU_USAGE;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "cpu_s") == NULL && strstr(msg, "NaN") == NULL,
	   "a NaN is left out, never written");

	{
		struct json_object *d = ceems_json_util_double(5);

		is_str(json_object_to_json_string(d), "5.0", "an integral double stays a JSON double");
		json_object_put(d);
		ok(ceems_json_util_double(INFINITY) == NULL, "infinity is no JSON number");
	}

	n = ceems_agent_proto_reply_ok(NULL, msg, sizeof(msg));
	is_str(msg, "{\"ok\":true}", "bare ok reply");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), 0,
	       "bare ok decodes");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, &back, err, sizeof(err)), -EPROTO,
	       "an ok reply without the report asked for is -EPROTO");
}

/* idle_unlearned belongs to the domains with an idle power (package,
 * dram): on gpu or node it is refused, not kept. */
static void
test_idle_unlearned_domains(void)
{
	static struct ceems_agent_job_report back;
	static const char *const reports[] = {
		"{\"jobid\":5,\"uid\":1,\"ledger\":{\"dram\":{\"joules\":1,"
		"\"covered_s\":1,\"idle_unlearned\":true}}}",
		"{\"jobid\":5,\"uid\":1,\"ledger\":{\"gpu\":{\"joules\":1,"
		"\"covered_s\":1,\"idle_unlearned\":true}}}",
		"{\"jobid\":5,\"uid\":1,\"ledger\":{\"node\":{\"joules\":1,"
		"\"covered_s\":1,\"idle_unlearned\":false}}}",
	};

	for (int i = 0; i < 3; i++) {
		struct json_object *obj = json_tokener_parse(reports[i]);
		int r;

		if (!ok(obj != NULL, "test setup: report %d parses", i))
			return;
		memset(&back, 0, sizeof(back));
		err[0] = '\0';
		r = ceems_measure_json_report_from_json(obj, &back, err, sizeof(err));
		json_object_put(obj);
		if (i == 0)
			ok(r == 0 && back.ledger.idle_unlearned[CEEMS_DOMAIN_DRAM],
			   "idle_unlearned on dram decodes (%s)", err);
		else
			ok(r < 0 && strstr(err, "idle_unlearned") != NULL,
			   "idle_unlearned on %s refused: %s",
			   i == 1 ? "gpu" : "node", err);
	}
}

/* Presence alone says what was measured: a report written before the
 * flags existed (every step value present) decodes as measured, a measured
 * 0 stays a measured 0, and a missing value is not measured. */
static void
test_step_presence(void)
{
	static struct ceems_agent_job_report back;
	static const char old_style[] =
		"{\"jobid\":5,\"uid\":1,\"steps\":["
		"{\"id\":\"batch\",\"ended\":true,\"elapsed_s\":4,\"cpu_s\":0,"
		"\"joules\":{\"package\":0,\"dram\":1.5}},"
		"{\"id\":\"extern\",\"ended\":true,\"elapsed_s\":4,"
		"\"joules\":{\"package\":2}},"
		"{\"id\":\"0\",\"elapsed_s\":1}]}";
	struct json_object *obj = json_tokener_parse(old_style), *again;

	if (!ok(obj != NULL, "test setup: the old-style report parses"))
		return;
	is_int(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)), 0,
	       "an old-style report decodes");
	json_object_put(obj);
	ok(back.nsteps == 3 && back.steps[0].have_cpu && back.steps[0].cpu_s == 0 &&
	   back.steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   back.steps[0].have_joules[CEEMS_DOMAIN_DRAM] &&
	   !back.steps[0].have_joules[CEEMS_DOMAIN_NODE],
	   "values present: measured, a 0 included");
	ok(!back.steps[1].have_cpu && back.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   !back.steps[1].have_joules[CEEMS_DOMAIN_DRAM],
	   "cpu_s missing: CPU time not measured, energy still measured");
	ok(!back.steps[2].have_cpu && !back.steps[2].have_mem_peak &&
	   !back.steps[2].have_joules[CEEMS_DOMAIN_PACKAGE],
	   "no figures at all: nothing measured");
	/* And back out: only what was measured is written again.  The
	 * ledger measured package and dram (the encoder writes a step's
	 * energy only for domains the node had). */
	back.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	back.ledger.measured[CEEMS_DOMAIN_DRAM] = true;
	again = ceems_measure_json_report_to_json(&back);
	if (!ok(again != NULL, "the decoded report encodes"))
		return;
	snprintf(msg, sizeof(msg), "%s",
		 json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN));
	json_object_put(again);
	ok(strstr(msg, "{\"id\":\"batch\",\"ended\":true,\"elapsed_s\":4.0,\"cpu_s\":0.0,"
		       "\"joules\":{\"package\":0.0,\"dram\":1.5}}") != NULL &&
	   strstr(msg, "{\"id\":\"extern\",\"ended\":true,\"elapsed_s\":4.0,"
		       "\"joules\":{\"package\":2.0}}") != NULL,
	   "re-encoded with the measured zeros and without the missing values: %s", msg);
	ok(!back.steps[0].have_tasks && !back.steps[2].have_tasks,
	   "steps of a report without task counts: their tasks unknown");
}

/* A step's task count on the node: written when known, read back,
 * refused out of 1..65535. */
static void
test_step_tasks(void)
{
	static struct ceems_agent_job_report back;
	static const char *const bad[] = {
		"{\"jobid\":5,\"uid\":1,\"steps\":[{\"id\":\"0\",\"tasks\":0}]}",
		"{\"jobid\":5,\"uid\":1,\"steps\":[{\"id\":\"0\",\"tasks\":65536}]}",
		"{\"jobid\":5,\"uid\":1,\"steps\":[{\"id\":\"0\",\"tasks\":1.5}]}",
	};
	static const char good[] =
		"{\"jobid\":5,\"uid\":1,\"steps\":[{\"id\":\"0\",\"elapsed_s\":1,"
		"\"tasks\":65535},{\"id\":\"batch\",\"elapsed_s\":1}]}";
	struct json_object *obj = json_tokener_parse(good), *again;

	is_int(obj != NULL ? ceems_measure_json_report_from_json(obj, &back, err,
								 sizeof(err)) : -1,
	       0, "a report with a step's task count decodes");
	json_object_put(obj);
	ok(back.nsteps == 2 && back.steps[0].have_tasks && back.steps[0].tasks == 65535 &&
	   !back.steps[1].have_tasks, "the count is read where written, unknown elsewhere");
	again = ceems_measure_json_report_to_json(&back);
	snprintf(msg, sizeof(msg), "%s", again == NULL ? "" :
		 json_object_to_json_string_ext(again, JSON_C_TO_STRING_PLAIN));
	json_object_put(again);
	ok(strstr(msg, "\"id\":\"0\",\"ended\":false,\"elapsed_s\":1.0,\"tasks\":65535,") != NULL &&
	   strstr(msg, "{\"id\":\"batch\",\"ended\":false,\"elapsed_s\":1.0,\"joules\":{}}") != NULL,
	   "written back where known only: %s", msg);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		obj = json_tokener_parse(bad[i]);
		err[0] = '\0';
		ok(obj != NULL &&
		   ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == -EINVAL &&
		   strstr(err, "steps[].tasks") != NULL, "refused: %s (%s)", bad[i], err);
		json_object_put(obj);
	}
}

/* The GPUs a job held: a whole device with every figure, a MIG instance
 * whose energy is integrated power and whose profiling metrics are
 * unknown; what is unknown comes back absent. */
static void
test_gpu_report(void)
{
	static struct ceems_agent_job_report r, back;
	static const struct {
		const char *gpus;
		const char *want;
	} bad[] = {
		{ "{}", "must be an array" },
		{ "[1]", "must be objects" },
		{ "[{\"share\":1}]", "neither uuid nor bus_id" },
		{ "[{\"uuid\":\"GPU-1\"}]", "share is missing" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":0}]", "above 0" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1.5}]", "share" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"util_pct\":100.5}]", "util_pct" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"sm_active_pct\":-1}]", "sm_active_pct" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"energy_j\":-2}]", "energy_j" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"energy_j\":\"5\"}]", "energy_j" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"instance\":-1}]", "instance" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"mem_peak_bytes\":9223372036854775808}]",
		  "mem_peak_bytes" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"mem_total_bytes\":0}]", "mem_total_bytes" },
		{ "[{\"uuid\":\"GPU\\u0001\",\"share\":1}]", "uuid" },
		{ "[{\"uuid\":\"GPU-1\",\"share\":1,\"power_integrated\":1}]", "power_integrated" },
	};
	struct ceems_agent_gpu_report *g;
	int n;

	memset(&r, 0, sizeof(r));
	ceems_job_figures_ledger_init(&r.ledger);
	r.jobid = 8;
	r.uid = 9;
	r.ngpus = 2;
	g = &r.gpus[0];
	snprintf(g->uuid, sizeof(g->uuid), "GPU-8c5b1d3e-0000-1111-2222-333344445555");
	snprintf(g->bus_id, sizeof(g->bus_id), "0000:3b:00.0");
	g->instance = -1;
	g->share = 1;
	g->have_energy = true;
	g->energy_j = 123456.5;
	g->have_util = true;
	g->util_pct = 1.0 / 3;
	g->have_mem_util = true;
	g->mem_util_pct = 0;		/* measured 0: written */
	g->have_mem_peak = true;
	g->mem_peak_bytes = UINT64_C(40) << 30;
	g->mem_total_bytes = UINT64_C(80) << 30;
	g->have_sm_active = true;
	g->sm_active_pct = 12.5;
	g->have_sm_occupancy = true;
	g->sm_occupancy_pct = 6.25;
	g->have_tensor_active = true;
	g->tensor_active_pct = 100;
	g->have_fp_active = true;
	g->fp_active_pct = 3;
	g = &r.gpus[1];
	snprintf(g->uuid, sizeof(g->uuid), "GPU-aa");
	g->instance = 3;
	g->share = 1.0 / 7;
	g->power_integrated = true;
	g->have_energy = true;
	g->energy_j = 50;
	g->sm_active_pct = 77;		/* not measured: must not be written */
	g->util_pct = 55;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0, "a report with GPUs encodes");
	memset(&back, 0xa5, sizeof(back));
	if (!ok(ceems_agent_proto_reply_decode(msg, (size_t)n, &back, err, sizeof(err)) == 0,
		"and decodes (%s)", err))
		return;
	is_int(back.ngpus, 2, "both GPUs come back");
	g = &back.gpus[0];
	ok(strcmp(g->uuid, r.gpus[0].uuid) == 0 && strcmp(g->bus_id, "0000:3b:00.0") == 0 &&
	   g->instance == -1 && g->share == 1 && !g->power_integrated,
	   "a whole device's identity round-trips");
	ok(g->have_energy && g->energy_j == 123456.5 && g->have_util &&
	   g->util_pct == 1.0 / 3 && g->have_mem_util && g->mem_util_pct == 0 &&
	   g->have_mem_peak && g->mem_peak_bytes == r.gpus[0].mem_peak_bytes &&
	   g->mem_total_bytes == r.gpus[0].mem_total_bytes,
	   "its energy, utilisation and memory round-trip (a measured 0 too)");
	ok(g->have_sm_active && g->sm_active_pct == 12.5 && g->have_sm_occupancy &&
	   g->sm_occupancy_pct == 6.25 && g->have_tensor_active &&
	   g->tensor_active_pct == 100 && g->have_fp_active && g->fp_active_pct == 3,
	   "its profiling metrics round-trip");
	g = &back.gpus[1];
	ok(strcmp(g->uuid, "GPU-aa") == 0 && g->bus_id[0] == '\0' && g->instance == 3 &&
	   g->share == 1.0 / 7 && g->power_integrated && g->have_energy && g->energy_j == 50,
	   "a MIG instance with integrated power round-trips");
	ok(!g->have_util && !g->have_mem_util && !g->have_mem_peak &&
	   !g->have_sm_active && !g->have_sm_occupancy && !g->have_tensor_active &&
	   !g->have_fp_active && g->mem_total_bytes == 0 && g->sm_active_pct == 0,
	   "its unknown figures come back unknown, not as sent");
	ok(strstr(msg, "\"sm_active_pct\":77") == NULL && strstr(msg, "\"util_pct\":55") == NULL,
	   "figures without their have_ flag are not written");

	r.ngpus = 0;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "gpus") == NULL, "a job without GPUs has no gpus member");

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char text[512];
		struct json_object *obj;

		snprintf(text, sizeof(text), "{\"jobid\":1,\"uid\":2,\"gpus\":%s}", bad[i].gpus);
		obj = json_tokener_parse(text);
		memset(&back, 0, sizeof(back));
		back.ngpus = 77;
		ok(obj != NULL &&
		   ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == -EINVAL &&
		   strstr(err, bad[i].want) != NULL && back.ngpus == 77,
		   "gpus %s refused (%s), the report untouched", bad[i].gpus, err);
		json_object_put(obj);
	}
	{
		char text[8192];
		size_t o = (size_t)snprintf(text, sizeof(text), "{\"jobid\":1,\"uid\":2,\"gpus\":[");
		struct json_object *obj;

		for (int i = 0; i <= CEEMS_LEDGER_MAX_GPUS; i++)
			o += (size_t)snprintf(text + o, sizeof(text) - o,
					      "%s{\"bus_id\":\"b%d\",\"share\":1}",
					      i > 0 ? "," : "", i);
		snprintf(text + o, sizeof(text) - o, "]}");
		obj = json_tokener_parse(text);
		ok(obj != NULL &&
		   ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == -EINVAL &&
		   strstr(err, "more than") != NULL, "more GPUs than a node has are refused");
		json_object_put(obj);
	}
}

static void
test_reply_errors(void)
{
	int n;

	n = ceems_agent_proto_reply_error(-EEXIST, "job 42 is already registered", msg,
				    sizeof(msg));
	ok(n > 0, "error reply encodes");
	is_str(msg, "{\"ok\":false,\"error\":\"job 42 is already registered\",\"code\":\"EEXIST\"}",
	       "error reply text");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), -EEXIST,
	       "a refusal decodes to its errno");
	is_str(err, "job 42 is already registered", "and its sentence");
	n = snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":\"x\",\"code\":\"EWHATEVER\"}");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), -EREMOTEIO,
	       "an unknown code is -EREMOTEIO");
	n = snprintf(msg, sizeof(msg), "{\"ok\":false}");
	ok(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)) == -EREMOTEIO &&
	   strstr(err, "without saying why") != NULL, "a refusal without words");
	n = snprintf(msg, sizeof(msg), "{\"ok\":false,\"error\":\"\",\"code\":\"EPERM\"}");
	ok(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)) == -EPERM &&
	   strstr(err, "without saying why") != NULL, "a refusal with empty words says so");
	n = snprintf(msg, sizeof(msg), "{\"ok\":1}");
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, NULL, err, sizeof(err)), -EPROTO,
	       "ok must be a boolean");
	n = snprintf(msg, sizeof(msg), "{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":2,\"cpu_s\":-1}}");
	is_int(ceems_agent_client_report_job("/nonexistent", 1, 10, NULL, err, sizeof(err)), -ENOENT,
	       "typed call without an agent: -ENOENT");
	{
		static struct ceems_agent_job_report rep;

		ok(ceems_agent_proto_reply_decode(msg, (size_t)n, &rep, err, sizeof(err)) == -EPROTO &&
		   strstr(err, "cpu_s") != NULL, "a negative CPU time in a report is refused");
	}
	is_int(ceems_agent_proto_code_from_name(ceems_agent_proto_code_name(-ENOSPC)), -ENOSPC,
	       "ENOSPC name round-trips");
	is_str(ceems_agent_proto_code_name(-12345), "EIO", "unknown errno is written EIO");
}

/* One malformed request and a word its error must contain. */
static const struct {
	const char *text;
	const char *want;
} bad_requests[] = {
	{ "", "empty" },
	{ "{\"op\":\"release\"}", "needs \"jobid\"" },
	{ "{\"op\":\"release\",\"jobid\":7,\"meta\":{}}", "unknown field" },
	{ "{\"op\":\"deregister\",\"jobid\":7,\"meta\":[]}", "job must be an object" },
	{ "{\"op\":\"deregister\",\"jobid\":7,\"meta\":{\"jobid\":8,\"uid\":1}}",
	  "meta.jobid is not jobid" },
	{ "{\"op\":\"deregister\",\"jobid\":7,\"meta\":{\"jobid\":7}}",
	  "job.uid is missing" },
	{ "{\"op\":\"deregister\",\"jobid\":7,\"meta\":{\"jobid\":7,\"uid\":1,\"x\":1}}",
	  "unknown field" },
	{ "garbage", "not valid JSON" },
	{ "{", "not complete" },
	{ "[]", "must be a JSON object" },
	{ "42", "must be a JSON object" },
	{ "{\"op\":\"status\"} x", "not valid JSON" },
	{ "{\"op\":\"status\"}{}", "not valid JSON" },
	{ "{'op':'status'}", "not valid JSON" },
	{ "{}", "needs \"op\"" },
	{ "{\"op\":1}", "needs \"op\"" },
	{ "{\"op\":\"dance\"}", "unknown op 'dance'" },
	{ "{\"op\":\"status\",\"x\":1}", "unknown field 'x'" },
	{ "{\"op\":\"report\"}", "needs \"jobid\"" },
	{ "{\"op\":\"report\",\"jobid\":\"7\"}", "whole number" },
	{ "{\"op\":\"report\",\"jobid\":7.0}", "whole number" },
	{ "{\"op\":\"report\",\"jobid\":-7}", "negative" },
	{ "{\"op\":\"report\",\"jobid\":0}", "between 1 and 4294967295" },
	{ "{\"op\":\"report\",\"jobid\":4294967296}", "between 1 and 4294967295" },
	{ "{\"op\":\"report\",\"jobid\":99999999999999999999999}", "" },
	{ "{\"op\":\"deregister\",\"jobid\":null}", "field 'jobid' is null" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"alloc_cores\":null}}",
	  "field 'alloc_cores' is null" },
	{ "{\"op\":\"deregister\",\"jobid\":1,\"job\":{}}", "unknown field 'job'" },
	{ "{\"op\":\"register\"}", "needs \"job\"" },
	{ "{\"op\":\"step_start\",\"jobid\":1}", "needs \"step\"" },
	{ "{\"op\":\"step_start\",\"step\":\"0\"}", "needs \"jobid\"" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"../x\"}", "Slurm step name" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"\"}", "Slurm step name" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"abcdefghijklmnopq\"}", "longer than" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":7}", "must be a string" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"0\",\"x\":1}", "unknown field 'x'" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"0\",\"status\":65536}", "status" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"0\",\"status\":-1}", "status" },
	{ "{\"op\":\"step_start\",\"jobid\":1,\"step\":\"0\",\"status\":0}", "status" },
	{ "{\"op\":\"step_start\",\"jobid\":1,\"step\":\"0\",\"tasks\":0}", "tasks" },
	{ "{\"op\":\"step_start\",\"jobid\":1,\"step\":\"0\",\"tasks\":65536}", "tasks" },
	{ "{\"op\":\"step_start\",\"jobid\":1,\"step\":\"0\",\"tasks\":\"2\"}", "tasks" },
	{ "{\"op\":\"step_end\",\"jobid\":1,\"step\":\"0\",\"tasks\":2}",
	  "unknown key \"tasks\"" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"}},\"tasks\":2}",
	  "\"tasks\" needs \"step\"" },
	{ "{\"op\":\"deregister\",\"jobid\":1,\"by\":\"agent\"}", "\"by\" must be" },
	{ "{\"op\":\"deregister\",\"jobid\":1,\"by\":1}", "by" },
	{ "{\"op\":\"register\",\"job\":[]}", "job must be an object" },
	{ "{\"op\":\"register\",\"job\":{}}", "job.jobid is missing" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1}}", "job.uid is missing" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":4294967295}}", "job.uid" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0}}", "job.cgroup is missing" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":\"/a\"}}",
	  "job.cgroup must be an object" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{}}}",
	  "job.cgroup.version is missing" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":3}}}",
	  "between 1 and 2" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2}}}",
	  "unified is missing" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":1}}}",
	  "names no controller" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"a/b\"}}}",
	  "absolute path" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/\"}}}",
	  "hierarchy's root" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a/../../etc\"}}}",
	  "'..'" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a//b\"}}}",
	  "empty" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a/./b\"}}}",
	  "'.'" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\\nb\"}}}",
	  "control character" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\\u0000b\"}}}",
	  "control character" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":5}}}",
	  "must be a string" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":1,\"v1\":{\"cpu\":\"/a\"}}}}",
	  "unknown controller 'cpu'" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":1,\"v1\":[]}}}",
	  "v1 must be an object" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\",\"x\":1}}}",
	  "unknown field 'x'" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"alloc_cores\":8193}}",
	  "job.alloc_cores" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"alloc_mem_bytes\":-1}}",
	  "negative" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"gpu_share\":{}}}",
	  "must be an array" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"gpu_share\":[1.5]}}",
	  "gpu_share[0]" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"gpu_share\":[0,\"1\"]}}",
	  "gpu_share[1] must be a number" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"gpu_share\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0]}}",
	  "more than 16" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"gpu_share\":[NaN]}}",
	  "gpu_share[0]" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"colour\":\"red\"}}",
	  "unknown field 'colour'" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":0}}",
	  "job.start_time" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":-5}}",
	  "negative" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":1.5}}",
	  "whole number" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":\"1700000000\"}}",
	  "whole number" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":253402300800}}",
	  "job.start_time" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"start_time\":null}}",
	  "field 'start_time' is null" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"cluster\":\"\"}}",
	  "job.cluster is empty" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"cluster\":7}}",
	  "job.cluster must be a string" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"cluster\":\"a\\tb\"}}",
	  "job.cluster holds a control character" },
	{ "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/a\"},\"cluster\":\"0123456789012345678901234567890123456789012345678901234567890123\"}}",
	  "job.cluster is longer than 63 bytes" },
	{ "{\"op\":\"status\"\xff}", "" },
	{ "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]", "" },
};

static void
test_bad_requests(void)
{
	struct ceems_agent_request req;
	char *huge;
	size_t n;
	int r;

	for (size_t i = 0; i < sizeof(bad_requests) / sizeof(bad_requests[0]); i++) {
		err[0] = '\0';
		r = ceems_agent_proto_request_decode(bad_requests[i].text,
					       strlen(bad_requests[i].text), &req,
					       err, sizeof(err));
		if (!ok(r == -EINVAL && err[0] != '\0' &&
			strstr(err, bad_requests[i].want) != NULL,
			"bad request %zu refused: %s", i, err))
			printf("#   request: %s\n#   want: '%s' in the error (returned %d)\n",
			       bad_requests[i].text, bad_requests[i].want, r);
	}
	r = ceems_agent_proto_request_decode("{\"op\":\"status\"}\0x", 17, &req, err, sizeof(err));
	ok(r == -EINVAL && strstr(err, "NUL") != NULL, "a NUL byte inside the message");
	r = ceems_agent_proto_request_decode("{\"op\":\"status\"}\n", 16, &req, err, sizeof(err));
	is_int(r, 0, "trailing newline is fine");

	/* A path longer than the spec can hold, then a message too large. */
	n = 8 * CEEMS_CGROUP_PATH_MAX;
	huge = malloc(CEEMS_AGENT_MSG_MAX + 64);
	snprintf(huge, CEEMS_AGENT_MSG_MAX + 64,
		 "{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/");
	memset(huge + strlen(huge), 'a', n);
	huge[strlen("{\"op\":\"register\",\"job\":{\"jobid\":1,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"/") + n] = '\0';
	strcat(huge, "\"}}}");
	r = ceems_agent_proto_request_decode(huge, strlen(huge), &req, err, sizeof(err));
	ok(r == -EINVAL && strstr(err, "longer than 511 bytes") != NULL,
	   "a 4 KiB path is refused: %s", err);
	memset(huge, ' ', CEEMS_AGENT_MSG_MAX + 1);
	memcpy(huge, "{\"op\":\"status\"}", 15);
	r = ceems_agent_proto_request_decode(huge, CEEMS_AGENT_MSG_MAX + 1, &req, err, sizeof(err));
	ok(r == -EMSGSIZE && strstr(err, "larger than 65536") != NULL,
	   "a message over 64 KiB is -EMSGSIZE");
	free(huge);
}

/* xorshift64*: a fixed seed, so a failure is reproducible. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ULL;

static uint64_t
rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dULL;
}

/* Apply 1..4 random edits to BUF (LEN bytes, room for SIZE). */
static size_t
mutate(char *buf, size_t len, size_t size)
{
	static const char *const tokens[] = {
		"\"", "{", "}", "[", "]", ",", ":", "-", "1e400", "null", "true",
		"99999999999999999999", "-1", "0", "\\u0000", "\\", "/../", "\"op\"",
		"\"jobid\"", "4294967296", "0.5", "\"register\"", "\xc3\x28",
	};
	int edits = 1 + (int)(rng() % 4);

	for (int e = 0; e < edits; e++) {
		size_t pos = len > 0 ? rng() % (len + 1) : 0;

		switch (rng() % 5) {
		case 0:		/* flip a byte */
			if (pos < len)
				buf[pos] = (char)(rng() & 0xff);
			break;
		case 1:		/* delete a run */
			if (pos < len) {
				size_t n = 1 + rng() % 8;

				if (n > len - pos)
					n = len - pos;
				memmove(buf + pos, buf + pos + n, len - pos - n);
				len -= n;
			}
			break;
		case 2: {	/* insert a token */
			const char *t = tokens[rng() % (sizeof(tokens) / sizeof(tokens[0]))];
			size_t n = strlen(t);

			if (len + n < size) {
				memmove(buf + pos + n, buf + pos, len - pos);
				memcpy(buf + pos, t, n);
				len += n;
			}
			break;
		}
		case 3:		/* cut */
			len = pos;
			break;
		default:	/* duplicate a chunk */
			if (pos < len) {
				size_t n = 1 + rng() % 16;

				if (n > len - pos)
					n = len - pos;
				if (len + n < size) {
					memmove(buf + pos + n, buf + pos, len - pos);
					len += n;
				}
			}
			break;
		}
	}
	return len;
}

static void
test_fuzz(void)
{
	static char seeds[4][2048];
	static char buf[4096];
	static struct ceems_agent_job_report rep;
	struct ceems_agent_request req;
	int nseeds = 0, accepted = 0, refused = 0, unclear = 0, reencode_bad = 0;
	int reply_ok = 0, reply_refused = 0, reply_bad = 0;
	char reply_seed[8192];
	size_t reply_len;

	memset(&req, 0, sizeof(req));
	req.op = CEEMS_AGENT_OP_REGISTER;
	fill_spec_v1(&req.spec);
	ceems_agent_proto_request_encode(&req, seeds[nseeds++], sizeof(seeds[0]));
	req.spec.cgroup.version = CEEMS_CGROUP_V2;
	snprintf(req.spec.cgroup.unified, CEEMS_CGROUP_PATH_MAX, "/system.slice/x/job_1");
	ceems_agent_proto_request_encode(&req, seeds[nseeds++], sizeof(seeds[0]));
	req.op = CEEMS_AGENT_OP_DEREGISTER;
	req.jobid = 12;
	ceems_agent_proto_request_encode(&req, seeds[nseeds++], sizeof(seeds[0]));
	req.op = CEEMS_AGENT_OP_STATUS;
	ceems_agent_proto_request_encode(&req, seeds[nseeds++], sizeof(seeds[0]));

	for (int i = 0; i < 4000; i++) {
		const char *seed = seeds[rng() % (uint64_t)nseeds];
		size_t len = strlen(seed);
		int r;

		memcpy(buf, seed, len);
		len = mutate(buf, len, sizeof(buf));
		err[0] = '\0';
		r = ceems_agent_proto_request_decode(buf, len, &req, err, sizeof(err));
		if (r == 0) {
			char again[4096];
			struct ceems_agent_request back;
			int n = ceems_agent_proto_request_encode(&req, again, sizeof(again));

			accepted++;
			/* Whatever was accepted must be valid: it re-encodes
			 * and decodes to the same thing. */
			if (n < 0 ||
			    ceems_agent_proto_request_decode(again, (size_t)n, &back, err,
						       sizeof(err)) != 0 ||
			    back.op != req.op || back.jobid != req.jobid ||
			    (req.op == CEEMS_AGENT_OP_REGISTER &&
			     !same_spec(&req.spec, &back.spec)))
				reencode_bad++;
		} else {
			refused++;
			if (r != -EINVAL || strlen(err) < 10)
				unclear++;
		}
	}
	ok(refused > 1000 && accepted > 10,
	   "4000 mutated requests decoded without a crash (%d refused, %d accepted)",
	   refused, accepted);
	is_int(unclear, 0, "every refusal is -EINVAL with a sentence");
	is_int(reencode_bad, 0, "every accepted mutation is a valid request");

	fill_report(&rep);
	reply_len = (size_t)ceems_agent_proto_reply_ok(&rep, reply_seed, sizeof(reply_seed));
	for (int i = 0; i < 3000; i++) {
		size_t len = reply_len;
		int r;

		memcpy(buf, reply_seed, len);
		len = mutate(buf, len, sizeof(buf));
		err[0] = '\0';
		r = ceems_agent_proto_reply_decode(buf, len, &rep, err, sizeof(err));
		if (r == 0)
			reply_ok++;
		else if (err[0] != '\0')
			reply_refused++;
		else
			reply_bad++;
	}
	ok(reply_refused > 500, "3000 mutated replies decoded without a crash "
	   "(%d refused, %d accepted)", reply_refused, reply_ok);
	is_int(reply_bad, 0, "every refused reply comes with a sentence");
}

/* ---- client ---- */

static double
now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

enum server_mode { SERVE_ECHO_OK, SERVE_SILENT, SERVE_HUGE, SERVE_REFUSE, SERVE_CLOSE,
		   SERVE_OLD, SERVE_OLD_TASKS };

/* An agent older than a register's step (SERVE_OLD), or older than a
 * step's task count only (SERVE_OLD_TASKS): it refuses the key, as its
 * strict decoding did, and takes the rest; every op it is sent goes to
 * the file LOG, a line each, with the keys it refused or would have. */
static void
serve_old(int lfd, const char *log, enum server_mode mode)
{
	static char in[CEEMS_AGENT_MSG_MAX + 1], out[CEEMS_AGENT_MSG_MAX];
	static struct ceems_agent_job_report ended;
	FILE *f = fopen(log, "w");

	for (int i = 0; i < 4 && f != NULL; i++) {
		int fd = accept(lfd, NULL, NULL);
		ssize_t n = recv(fd, in, sizeof(in) - 1, 0);
		bool reg, end, step_key, tasks_key, dep_key;

		if (n < 0)
			_exit(1);
		in[n] = '\0';
		reg = strstr(in, "\"op\":\"register\"") != NULL;
		end = strstr(in, "\"op\":\"deregister\"") != NULL;
		step_key = reg && strstr(in, "\"step\"") != NULL;
		tasks_key = strstr(in, "\"tasks\"") != NULL;
		dep_key = strstr(in, "\"dependency\"") != NULL;
		fprintf(f, "%s%s%s%s\n", reg ? "register" : end ? "deregister" : "step_start",
			step_key ? "+step" : "", tasks_key ? "+tasks" : "",
			dep_key ? "+dependency" : "");
		fflush(f);
		if (dep_key)
			n = ceems_agent_proto_reply_error(-EINVAL,
				"deregister request: meta: unknown key \"dependency\"",
				out, sizeof(out));
		else if (end) {
			ended.jobid = 42;
			n = ceems_agent_proto_reply_ok(&ended, out, sizeof(out));
		}
		else if (tasks_key || (step_key && mode == SERVE_OLD))
			n = ceems_agent_proto_reply_error(-EINVAL, tasks_key ?
				"request: unknown key \"tasks\"" :
				"register request: unknown key \"step\"", out, sizeof(out));
		else
			n = snprintf(out, sizeof(out), "{\"ok\":true}");
		send(fd, out, (size_t)n, 0);
		close(fd);
	}
	_exit(0);
}

/* Fork a server on PATH answering one client as MODE; returns its pid. */
static pid_t
serve_once(const char *path, enum server_mode mode)
{
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	int lfd;
	pid_t pid;

	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	unlink(path);
	lfd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(lfd, 4) < 0) {
		printf("Bail out! cannot set up a test server on %s\n", path);
		exit(1);
	}
	pid = fork();
	if (pid == 0 && (mode == SERVE_OLD || mode == SERVE_OLD_TASKS)) {
		char log[128];

		snprintf(log, sizeof(log), "%s.log", path);
		serve_old(lfd, log, mode);
	}
	if (pid == 0) {
		static char in[CEEMS_AGENT_MSG_MAX + 1], out[2 * CEEMS_AGENT_MSG_MAX];
		int fd = accept(lfd, NULL, NULL);
		ssize_t n = recv(fd, in, sizeof(in) - 1, 0);

		if (n < 0)
			_exit(1);
		in[n] = '\0';
		switch (mode) {
		case SERVE_ECHO_OK:
			n = snprintf(out, sizeof(out), "{\"ok\":true,\"got\":%zd}", n);
			send(fd, out, (size_t)n, 0);
			break;
		case SERVE_SILENT:
			sleep(5);
			break;
		case SERVE_HUGE:
			memset(out, ' ', 100000);
			send(fd, out, 100000, 0);
			break;
		case SERVE_REFUSE:
			n = ceems_agent_proto_reply_error(-EPERM, "only root may register jobs",
						    out, sizeof(out));
			send(fd, out, (size_t)n, 0);
			break;
		case SERVE_CLOSE:
		case SERVE_OLD:
		case SERVE_OLD_TASKS:
			break;
		}
		_exit(0);
	}
	close(lfd);
	return pid;
}

static void
reap(pid_t pid)
{
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
}

/* The requests an old agent (serve_old) was sent, into TEXT. */
static void
read_old_log(const char *path, char *text, size_t size)
{
	char log[128];
	FILE *f;

	text[0] = '\0';
	snprintf(log, sizeof(log), "%s.log", path);
	f = fopen(log, "r");
	if (f != NULL) {
		size_t n = fread(text, 1, size - 1, f);

		text[n] = '\0';
		fclose(f);
	}
	unlink(log);
}

/* A step's start, the job registered with it: one request to an
 * agent that takes it, two to one that takes no task count, four to
 * one that takes no step with a register. */
static void
test_client_start(const char *path, const struct ceems_agent_job_spec *spec)
{
	char text[256];
	pid_t pid;
	int r;

	pid = serve_once(path, SERVE_ECHO_OK);
	r = ceems_jobside_start(path, spec, "batch", 2, 2000, err, sizeof(err));
	is_int(r, 0, "register with the step, the job known: 0 in one request");
	reap(pid);

	pid = serve_once(path, SERVE_OLD_TASKS);
	r = ceems_jobside_start(path, spec, "0", 8, 2000, err, sizeof(err));
	reap(pid);
	if (r < 0)
		printf("# %s\n", err);
	is_int(r, 0, "an agent without a step's task count: started all the same");
	read_old_log(path, text, sizeof(text));
	is_str(text, "register+step+tasks\nregister+step\n",
	       "in one refused request, then the same without the task count");

	pid = serve_once(path, SERVE_OLD);
	r = ceems_jobside_start(path, spec, "extern", 1, 2000, err, sizeof(err));
	reap(pid);
	if (r < 0)
		printf("# %s\n", err);
	is_int(r, 1, "an agent without a register's step: registered all the same");
	read_old_log(path, text, sizeof(text));
	is_str(text, "register+step+tasks\nregister+step\nregister\nstep_start\n",
	       "in two refused requests, then the two of before, no task count");

	pid = serve_once(path, SERVE_OLD);
	r = ceems_jobside_start(path, spec, "extern", 0, 2000, err, sizeof(err));
	reap(pid);
	read_old_log(path, text, sizeof(text));
	is_str(text, "register+step\nregister\nstep_start\n",
	       "no task count known: one refused request, then the two of before");
}

/* A job's end with a listed dependency, to an agent older than the key:
 * refused, then the same without it, taken. */
static void
test_client_end_old(const char *path)
{
	static struct ceems_agent_job_report report;
	struct ceems_job_meta meta;
	char text[256], notes[] = "/tmp/ceems-proto-notes-XXXXXX";
	pid_t pid;
	int r;

	if (mkdtemp(notes) == NULL)
		return;
	ceems_job_meta_init(&meta);
	meta.jobid = 42;
	meta.dependency = CEEMS_JOB_DEPENDENCY_LISTED;
	pid = serve_once(path, SERVE_OLD);
	r = ceems_jobside_end(path, notes, &meta, "extern", 2000, &report, err,
			      sizeof(err));
	reap(pid);
	if (r != 0)
		printf("# %s\n", err);
	is_int(r, 0, "an agent older than a job's dependency: its end taken all the same");
	read_old_log(path, text, sizeof(text));
	is_str(text, "deregister+dependency\nderegister\n",
	       "in one refused request, then the same without the dependency");
	rmdir(notes);
}

static void
test_client(void)
{
	char dir[] = "/tmp/ceems-proto-XXXXXX";
	char path[96], reply[256];
	struct ceems_agent_job_spec spec;
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	double t0;
	pid_t pid;
	int fd, r;

	if (mkdtemp(dir) == NULL) {
		printf("Bail out! mkdtemp\n");
		exit(1);
	}
	snprintf(path, sizeof(path), "%s/agent.sock", dir);

	t0 = now_s();
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 5000, reply, sizeof(reply));
	is_int(r, -ENOENT, "no socket file: -ENOENT");
	ok(now_s() - t0 < 0.05, "and at once (%.1f ms)", (now_s() - t0) * 1e3);

	/* A socket file nobody listens on (an agent that died). */
	snprintf(addr.sun_path, sizeof(addr.sun_path), "%s", path);
	fd = socket(AF_UNIX, SOCK_SEQPACKET, 0);
	bind(fd, (struct sockaddr *)&addr, sizeof(addr));
	close(fd);
	t0 = now_s();
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 5000, reply, sizeof(reply));
	is_int(r, -ECONNREFUSED, "stale socket file: -ECONNREFUSED");
	ok(now_s() - t0 < 0.05, "and at once (%.1f ms)", (now_s() - t0) * 1e3);

	pid = serve_once(path, SERVE_ECHO_OK);
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 2000, reply, sizeof(reply));
	is_int(r, (int)strlen("{\"ok\":true,\"got\":15}"), "a reply comes back with its length");
	is_str(reply, "{\"ok\":true,\"got\":15}", "the server saw the 15-byte message whole");
	reap(pid);

	pid = serve_once(path, SERVE_SILENT);
	t0 = now_s();
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 200, reply, sizeof(reply));
	is_int(r, -ETIMEDOUT, "a silent agent: -ETIMEDOUT");
	ok(now_s() - t0 >= 0.19 && now_s() - t0 < 0.5, "after the timeout (%.0f ms)",
	   (now_s() - t0) * 1e3);
	reap(pid);

	pid = serve_once(path, SERVE_HUGE);
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 2000, reply, sizeof(reply));
	is_int(r, -EMSGSIZE, "a reply larger than the buffer: -EMSGSIZE");
	reap(pid);

	pid = serve_once(path, SERVE_CLOSE);
	r = ceems_agent_client_call(path, "{\"op\":\"status\"}", 2000, reply, sizeof(reply));
	is_int(r, -ECONNRESET, "an agent that closes without a reply: -ECONNRESET");
	reap(pid);

	fill_spec_v1(&spec);
	pid = serve_once(path, SERVE_REFUSE);
	r = ceems_agent_client_register_job(path, &spec, 2000, err, sizeof(err));
	is_int(r, -EPERM, "register refused: the agent's errno");
	is_str(err, "only root may register jobs", "and its sentence");
	reap(pid);

	test_client_start(path, &spec);
	test_client_end_old(path);
	{
		static char big[CEEMS_AGENT_MSG_MAX + 2];

		memset(big, ' ', sizeof(big) - 1);
		is_int(ceems_agent_client_call(path, big, 100, reply, sizeof(reply)), -EMSGSIZE,
		       "a request over 64 KiB is not sent");
	}
	unlink(path);
	rmdir(dir);
}

/* A report's perf figures: measured counts exact, unknown ones absent
 * (not 0), the statuses by name; a bad status or count is refused. */
static void
test_perf_round_trip(void)
{
	static struct ceems_agent_job_report r, back;
	char bad[1024];
	int n;

	fill_report(&r);
	r.perf.sw_status = CEEMS_PERF_MEASURED;
	r.perf.hw_status = CEEMS_PERF_NOT_SUPPORTED;
	r.perf.running_fraction = 0.5;
	r.perf.present = 1u << CEEMS_PERF_PAGE_FAULTS |
			 1u << CEEMS_PERF_CONTEXT_SWITCHES;
	r.perf.value[CEEMS_PERF_PAGE_FAULTS] = 123456789.0;
	r.perf.value[CEEMS_PERF_CONTEXT_SWITCHES] = 1.0 / 3;
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "\"hardware\":\"not supported\"") != NULL &&
	   strstr(msg, "cycles") == NULL,
	   "perf: statuses by name, no figure for what was not measured");
	memset(&back, 0, sizeof(back));
	is_int(ceems_agent_proto_reply_decode(msg, (size_t)n, &back, err, sizeof(err)), 0,
	       "perf: the reply decodes");
	ok(back.perf.sw_status == CEEMS_PERF_MEASURED &&
	   back.perf.hw_status == CEEMS_PERF_NOT_SUPPORTED &&
	   back.perf.present == r.perf.present &&
	   back.perf.value[CEEMS_PERF_PAGE_FAULTS] == 123456789.0 &&
	   back.perf.value[CEEMS_PERF_CONTEXT_SWITCHES] == 1.0 / 3 &&
	   back.perf.running_fraction == 0.5, "perf: figures round-trip exactly");
	memset(&r.perf, 0, sizeof(r.perf));
	n = ceems_agent_proto_reply_ok(&r, msg, sizeof(msg));
	ok(n > 0 && strstr(msg, "perf") == NULL, "perf off: no perf object");
	snprintf(bad, sizeof(bad), "{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,"
		 "\"perf\":{\"software\":\"great\",\"hardware\":\"off\"}}}");
	is_int(ceems_agent_proto_reply_decode(bad, strlen(bad), &back, err, sizeof(err)),
	       -EPROTO, "perf: an unknown status is refused");
	snprintf(bad, sizeof(bad), "{\"ok\":true,\"report\":{\"jobid\":1,\"uid\":0,"
		 "\"perf\":{\"software\":\"measured\",\"hardware\":\"off\","
		 "\"page_faults\":-1}}}");
	is_int(ceems_agent_proto_reply_decode(bad, strlen(bad), &back, err, sizeof(err)),
	       -EPROTO, "perf: a negative count is refused");
}

int
main(void)
{
	test_spec_round_trip();
	test_register_tasks();
	test_finish_requests();
	test_report_round_trip();
	test_perf_round_trip();
	test_step_presence();
	test_step_tasks();
	test_idle_unlearned_domains();
	test_gpu_report();
	test_reply_errors();
	test_bad_requests();
	test_fuzz();
	test_client();
	return done_testing();
}
