/* test_record.c - the job record: metadata parsing from Slurm's TRES,
 * filling a job end's metadata from the job start's, JSON round trip
 * (unknown fields stay unknown), and the validation that keeps absurd
 * records out of the database. */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "record/record.h"
#include "../tap.h"

static char buf[CEEMS_RECORD_MAX];
static char err[256];

static void
test_tres(void)
{
	struct ceems_job_meta m;

	ceems_job_meta_init(&m);
	is_int(ceems_job_meta_parse_tres(&m, "cpu=4,mem=8G,node=1,billing=4,gres/gpu=2"), 0, "TRES parses");
	is_int(m.alloc_cpus, 4, "cpus");
	is_int(m.req_mem_bytes, 8ULL << 30, "mem 8G in bytes");
	is_int(m.alloc_gpus, 2, "gres/gpu");
	is_int(m.nnodes, 1, "node= is the node count");
	ceems_job_meta_init(&m);
	/* A completing job's NumNodes counts the nodes still completing;
	 * its TRES keeps the allocation's. */
	m.nnodes = 1;
	is_int(ceems_job_meta_parse_tres(&m, "cpu=3,mem=3G,node=3,billing=3"), 0,
	       "a 3-node TRES parses");
	is_int(m.nnodes, 3, "node=3 sets the node count over an earlier one");
	is_int(ceems_job_meta_parse_tres(&m, "node=2x"), -EINVAL, "a node count with a unit");
	is_int(ceems_job_meta_parse_tres(&m, "node=4294967295"), -EINVAL, "a node count of NO_VAL");
	is_int(m.nnodes, 3, "a refused node count changes nothing");
	ceems_job_meta_init(&m);
	is_int(ceems_job_meta_parse_tres(&m, "cpu=2,mem=200M,gres/gpu:a100=1,gres/gpu:v100=2"), 0,
	       "typed GPUs");
	is_int(m.alloc_gpus, 3, "typed GPU counts summed");
	is_int(m.req_mem_bytes, 200ULL << 20, "mem 200M");
	ceems_job_meta_init(&m);
	is_int(ceems_job_meta_parse_tres(&m, "cpu=2,mem=1024,gres/gpu=2,gres/gpu:a100=2"), 0,
	       "untyped and typed GPUs");
	is_int(m.alloc_gpus, 2, "the untyped count is not added to the typed ones");
	is_int(m.req_mem_bytes, 1024ULL << 20, "a bare memory number is MiB");
	is_int(m.alloc_gpus, 2, "gpus");
	ceems_job_meta_init(&m);
	is_int(ceems_job_meta_parse_tres(&m, "billing=1,energy=5K,license/foo=1"), 0, "unused keys skipped");
	is_int(m.alloc_cpus, 0, "cpu stays unknown");
	is_int(ceems_job_meta_parse_tres(&m, "cpu=x"), -EINVAL, "non-numeric cpu");
	is_int(ceems_job_meta_parse_tres(&m, "mem=5Q"), -EINVAL, "unknown memory unit");
	is_int(ceems_job_meta_parse_tres(&m, "mem=99999999999999999999T"), -EINVAL, "overflowing memory");
	is_int(ceems_job_meta_parse_tres(&m, "cpu"), -EINVAL, "key without value");
	is_int(m.alloc_cpus, 0, "a refused string changes nothing");
}

static void
sample_record(struct ceems_job_record *r)
{
	struct ceems_job_meta meta;
	struct ceems_agent_job_report rep;

	ceems_job_meta_init(&meta);
	meta.jobid = 42;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "bedrock");
	snprintf(meta.node, sizeof(meta.node), "node01");
	snprintf(meta.user, sizeof(meta.user), "alice");
	snprintf(meta.name, sizeof(meta.name), "my \"quoted\" job\twith tab");
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.exit_code = 0;
	meta.submit_time = 1763790000;
	meta.start_time = 1763790010;
	meta.end_time = 1763790610;
	meta.alloc_cpus = 8;
	meta.req_mem_bytes = 32ULL << 30;
	memset(&rep, 0, sizeof(rep));
	rep.jobid = 42;
	rep.uid = 1000;
	rep.alloc_cores = 8;
	rep.elapsed_s = 600;
	rep.cpu_s = 2460;
	rep.usage.present = CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_PEAK;
	rep.usage.cpu_usage_ns = 2460000000000ULL;
	rep.usage.mem_peak_bytes = 3650722201ULL;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.ledger.lifetime_s = 600;
	rep.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	rep.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 792000;
	rep.ledger.static_j[CEEMS_DOMAIN_PACKAGE] = 120000;
	rep.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 600;
	ceems_record_build(r, &meta, &rep, "extern", 1763790611);
}

static void
test_round_trip(void)
{
	static struct ceems_job_record r, back;
	int n;

	sample_record(&r);
	n = ceems_record_encode(&r, buf, sizeof(buf));
	ok(n > 0, "record encodes (%d bytes)", n);
	ok(strstr(buf, "\"format\":\"ceems-job-record/1\"") != NULL, "format tag");
	ok(strstr(buf, "\"exit_signal\"") == NULL && strstr(buf, "\"account\"") == NULL &&
	   strstr(buf, "\"dram\"") == NULL, "unknown fields and unmeasured domains are left out");
	ok(strstr(buf, "\"array_job_id\"") == NULL, "not an array job: no array ids");
	is_int(ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)), 0, "record decodes");
	is_str(back.meta.name, "my \"quoted\" job\\x09with tab",
	       "job name with quotes survives, its tab escaped (text.h)");
	is_int(back.meta.jobid, 42, "jobid");
	is_int(back.meta.exit_code, 0, "exit code 0 is kept (known)");
	is_int(back.meta.exit_signal, 0, "no signal");
	is_int(back.meta.array_job_id, CEEMS_UNKNOWN_U32, "array id stays unknown");
	is_int(back.meta.time_limit_min, CEEMS_UNKNOWN_U32, "time limit stays unknown");
	/* Slurm's INFINITE is kept as a word, apart from unknown */
	r.meta.time_limit_min = CEEMS_TIME_LIMIT_UNLIMITED;
	n = ceems_record_encode(&r, buf, sizeof(buf));
	ok(n > 0 && ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.meta.time_limit_min == CEEMS_TIME_LIMIT_UNLIMITED,
	   "no time limit (UNLIMITED) survives the record");
	r.meta.time_limit_min = CEEMS_UNKNOWN_U32;
	n = ceems_record_encode(&r, buf, sizeof(buf));
	is_int(ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)), 0, "record decodes again");
	is_near(back.report.ledger.joules[CEEMS_DOMAIN_PACKAGE], 792000, 0, "energy");
	ok(!back.report.ledger.measured[CEEMS_DOMAIN_DRAM], "unmeasured domain stays unmeasured");
	is_int(back.nnotes, r.nnotes, "notes kept");
	is_str(back.finalized_by, "extern", "finalized_by");
}

/* A step the agent could not measure (its cgroup never found) is in the
 * record with its identity and elapsed time only: no CPU time and no
 * energy, though its job has both; a measured step keeps its figures. */
/* Replace the first FROM in TEXT (SIZE bytes) with TO. */
static bool
replace_in(char *text, size_t size, const char *from, const char *to)
{
	char *at = strstr(text, from), *rest;
	size_t flen = strlen(from), tlen = strlen(to);

	if (at == NULL || strlen(text) - flen + tlen >= size)
		return false;
	rest = strdup(at + flen);
	if (rest == NULL)
		return false;
	memcpy(at, to, tlen);
	strcpy(at + tlen, rest);
	free(rest);
	return true;
}

/* Names Slurm accepts that are not UTF-8, or that a byte-wise cut left
 * without their last character, are escaped and the record decodes. */
static void
test_outside_text(void)
{
	static struct ceems_job_record r, back;
	char many[512];
	int n;

	sample_record(&r);
	snprintf(r.meta.name, sizeof(r.meta.name), "bad\xffname");
	snprintf(r.meta.account, sizeof(r.meta.account), "acc\xc3(t");
	snprintf(r.meta.user, sizeof(r.meta.user), "\xe2\x82");
	snprintf(r.meta.nodes, sizeof(r.meta.nodes), "n[1-2]\x1b[2J");
	n = ceems_record_encode(&r, buf, sizeof(buf));
	is_int(ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)), 0,
	       "a record with bytes that are not UTF-8 decodes");
	is_str(back.meta.name, "bad\\xffname", "the name's byte is escaped");
	is_str(back.meta.account, "acc\\xc3(t", "the account's too");
	is_str(back.meta.user, "\\xe2\\x82", "a user name cut short too");
	is_str(back.meta.nodes, "n[1-2]\\x1b[2J", "a node list's control too");

	/* Many two-byte characters, cut byte-wise to the field. */
	for (int i = 0; i < 200; i++)
		memcpy(many + 2 * i, "\xc3\xa9", 2);
	many[400] = '\0';
	sample_record(&r);
	memcpy(r.meta.name, many, sizeof(r.meta.name) - 1);
	r.meta.name[sizeof(r.meta.name) - 1] = '\0';
	n = ceems_record_encode(&r, buf, sizeof(buf));
	is_int(ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)), 0,
	       "a name cut inside a character decodes");
	is_int(strlen(back.meta.name), 254, "...cut before the broken character");
	ok(memcmp(back.meta.name, r.meta.name, 254) == 0, "...and otherwise kept");

	/* A record written before controls were escaped is still read. */
	sample_record(&r);
	n = ceems_record_encode(&r, buf, sizeof(buf));
	ok(replace_in(buf, sizeof(buf), "\"cluster\":\"bedrock\"",
		      "\"cluster\":\"bed\\trock\\u0085\",\"account\":\"a\\u001bb\""),
	   "older record made");
	is_int(ceems_record_decode(buf, strlen(buf), &back, err, sizeof(err)), 0,
	       "names with controls in an older record are read, not refused");
	is_str(back.meta.cluster, "bed\trock\xc2\x85", "...kept as they are");
	is_str(back.meta.account, "a\x1b" "b", "...an account too");
	n = ceems_record_encode(&back, buf, sizeof(buf));
	ok(n > 0 && strstr(buf, "\"cluster\":\"bed\\\\x09rock\\\\xc2\\\\x85\"") != NULL,
	   "...and escaped when written again");
}

static void
test_step_without_figures(void)
{
	static struct ceems_job_record r, back;
	struct ceems_agent_step_report *st;
	const char *bare;
	int n;

	sample_record(&r);
	r.report.nsteps = 2;
	st = &r.report.steps[0];
	snprintf(st->id, sizeof(st->id), "batch");
	st->ended = true;
	st->elapsed_s = 600;
	st->have_cpu = true;
	st->cpu_s = 2400;
	st->have_joules[CEEMS_DOMAIN_PACKAGE] = true;
	st->joules[CEEMS_DOMAIN_PACKAGE] = 770000;
	st = &r.report.steps[1];
	snprintf(st->id, sizeof(st->id), "0");
	st->ended = true;
	st->elapsed_s = 60;
	n = ceems_record_encode(&r, buf, sizeof(buf));
	if (!ok(n > 0, "a record with an unmeasured step encodes"))
		return;
	bare = strstr(buf, "{\"id\":\"0\"");
	ok(bare != NULL && strstr(bare, "cpu_s") == NULL &&
	   strstr(bare, "package") == NULL,
	   "the unmeasured step has no cpu_s and no energy: %s", bare ? bare : "(none)");
	is_int(ceems_record_decode(buf, (size_t)n, &back, err, sizeof(err)), 0,
	       "and decodes");
	is_int(ceems_record_validate(&back, err, sizeof(err)), 0, "and is valid");
	ok(back.report.nsteps == 2 && back.report.steps[0].have_cpu &&
	   back.report.steps[0].cpu_s == 2400 &&
	   back.report.steps[0].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   back.report.steps[0].joules[CEEMS_DOMAIN_PACKAGE] == 770000,
	   "the measured step's figures come back measured");
	ok(!back.report.steps[1].have_cpu &&
	   !back.report.steps[1].have_joules[CEEMS_DOMAIN_PACKAGE] &&
	   !back.report.steps[1].have_mem_peak &&
	   back.report.steps[1].elapsed_s == 60,
	   "the unmeasured step comes back unmeasured, with its elapsed time");
}

/* Take a valid record's JSON, change it with SED-like replacement FROM
 * -> TO, and expect decoding to fail with WANT in the message. */
static void
expect_refused(const char *from, const char *to, const char *want)
{
	static struct ceems_job_record r, back;
	char text[CEEMS_RECORD_MAX], *p;
	int n;

	sample_record(&r);
	n = ceems_record_encode(&r, buf, sizeof(buf));
	p = strstr(buf, from);
	if (n < 0 || p == NULL) {
		ok(false, "test setup: '%s' not found in the record", from);
		return;
	}
	snprintf(text, sizeof(text), "%.*s%s%s", (int)(p - buf), buf, to, p + strlen(from));
	n = ceems_record_decode(text, strlen(text), &back, err, sizeof(err));
	ok(n == -EINVAL && strstr(err, want) != NULL, "refused: %s -> %s", want, err);
}

static void
test_refusals(void)
{
	expect_refused("\"format\":\"ceems-job-record/1\"", "\"format\":\"other/2\"", "not a ceems-job-record/1");
	expect_refused("\"jobid\":42,\"uid\":1000,\"cluster\"", "\"uid\":1000,\"cluster\"", "job.jobid is missing");
	expect_refused("\"state\":\"COMPLETED\"", "\"state\":\"HAPPY\"", "not a Slurm job state");
	expect_refused("\"start_time\":1763790010", "\"start_time\":1763790700", "out of order");
	expect_refused("\"end_time\":1763790610", "\"end_time\":4102444800", "after the record was written");
	expect_refused("\"finalized_by\":\"extern\"", "\"finalized_by\":\"magic\"", "not extern, epilog or agent");
	expect_refused("\"joules\":792000", "\"joules\":-5", "between");
	expect_refused("\"exit_code\":0", "\"exit_code\":300", "between");
	expect_refused("\"jobid\":42,\"uid\":1000,\"alloc", "\"jobid\":43,\"uid\":1000,\"alloc",
		       "measurements are for job 43");
	expect_refused("\"written_at\":1763790611", "\"written_at\":1763790611,\"extra\":1", "unknown field 'extra'");
	/* Names with controls are read (older records); our words are not. */
	expect_refused("\"state\":\"COMPLETED\"", "\"state\":\"COMP\\u0001LETED\"",
		       "control character");
}

/* A record that cannot be encoded whole is stored reduced, not dropped:
 * identity and totals kept, steps, gaps and notes left out, a note
 * saying so. */
static void
test_reduced(void)
{
	static struct ceems_job_record r, scratch, back;
	static char small[2048];
	int whole, n;

	sample_record(&r);
	r.report.nsteps = 40;
	for (uint32_t i = 0; i < r.report.nsteps; i++) {
		snprintf(r.report.steps[i].id, sizeof(r.report.steps[i].id), "%u", i);
		r.report.steps[i].ended = true;
		r.report.steps[i].elapsed_s = 10;
		r.report.steps[i].cpu_s = 5;
	}
	r.report.ngaps = 1;
	r.report.gaps[0].start = 1763790100;
	r.report.gaps[0].end = 1763790110;
	r.report.gap_s = 10;
	whole = ceems_record_encode(&r, buf, sizeof(buf));
	ok(whole > (int)sizeof(small), "the whole record (%d bytes) is larger than the buffer", whole);
	is_int(ceems_record_encode(&r, small, sizeof(small)), -ENOSPC, "so it does not fit");
	n = ceems_record_reduce_encode_fallback(&r, small, sizeof(small), &scratch);
	ok(n > 0 && n < (int)sizeof(small), "the fallback encodes it reduced (%d bytes)", n);
	err[0] = '\0';
	ok(ceems_record_decode(small, (size_t)n, &back, err, sizeof(err)) == 0,
	   "the reduced record decodes and validates %s", err);
	is_int(back.meta.jobid, 42, "same job");
	is_str(back.meta.node, "node01", "same node");
	is_int(back.meta.start_time, 1763790010, "same start");
	is_int(back.written_at, r.written_at, "same written_at");
	is_near(back.report.ledger.joules[CEEMS_DOMAIN_PACKAGE], 792000, 0, "energy total kept");
	is_near(back.report.ledger.static_j[CEEMS_DOMAIN_PACKAGE], 120000, 0, "static energy kept");
	is_near(back.report.cpu_s, 2460, 0, "CPU time kept");
	is_near(back.report.gap_s, 10, 0, "gap total kept");
	is_int(back.report.nsteps, 0, "steps left out");
	is_int(back.report.ngaps, 0, "gap list left out");
	ok(back.nnotes == 1 && strcmp(back.notes[0].id, "record-reduced") == 0,
	   "one note says the record is reduced");
	ok(!back.notes[0].have_saving_j, "with no saving (unknown, not zero)");
	/* A record that fits is not reduced. */
	n = ceems_record_reduce_encode_fallback(&r, buf, sizeof(buf), &scratch);
	is_int(n, whole, "a record that fits is encoded whole");
	/* Not even the reduced form fits: the error comes back. */
	is_int(ceems_record_reduce_encode_fallback(&r, small, 64, &scratch), -ENOSPC,
	       "a buffer too small for the reduced record: -ENOSPC");
	/* The note of a record the agent finalized survives the reduction. */
	r.nnotes = 2;
	memset(&r.notes[1], 0, sizeof(r.notes[1]));
	snprintf(r.notes[1].id, sizeof(r.notes[1].id), "agent-finalized");
	snprintf(r.notes[1].text, sizeof(r.notes[1].text), "no release came");
	snprintf(r.finalized_by, sizeof(r.finalized_by), "agent");
	n = ceems_record_reduce_encode_fallback(&r, small, sizeof(small), &scratch);
	ok(n > 0 && ceems_record_decode(small, (size_t)n, &back, err, sizeof(err)) == 0,
	   "an agent-finalized record is reduced too %s", err);
	ok(back.nnotes == 2 && strcmp(back.notes[0].id, "record-reduced") == 0 &&
	   strcmp(back.notes[1].id, "agent-finalized") == 0,
	   "and keeps the note saying the agent finalized it");
}

/* The largest reduced record there can be -- every name of the job
 * and of 16 GPUs at its size, in the character JSON doubles ('"'),
 * every GPU figure with 17 digits, the agent's note at its size --
 * still fits the stack buffer that storage keeps for the reduced form
 * (lib/record/storage.c), so a job with GPUs is never lost for want of memory.
  * */
static void
test_reduced_worst(void)
{
	static struct ceems_job_record r, scratch, back;
	static char small[CEEMS_RECORD_REDUCED_MAX];
	struct ceems_job_meta *m = &r.meta;
	char *names[] = { m->cluster, m->node, m->user, m->account,
			  m->partition, m->qos, m->name, m->nodes };
	size_t sizes[] = { sizeof(m->cluster), sizeof(m->node), sizeof(m->user),
			   sizeof(m->account), sizeof(m->partition), sizeof(m->qos),
			   sizeof(m->name), sizeof(m->nodes) };
	int n;

	sample_record(&r);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		memset(names[i], '"', sizes[i] - 1);
		names[i][sizes[i] - 1] = '\0';
	}
	r.report.ngpus = CEEMS_LEDGER_MAX_GPUS;
	for (uint32_t i = 0; i < r.report.ngpus; i++) {
		struct ceems_agent_gpu_report *g = &r.report.gpus[i];

		memset(g->uuid, '"', sizeof(g->uuid) - 1);
		g->uuid[sizeof(g->uuid) - 1] = '\0';
		memset(g->bus_id, '"', sizeof(g->bus_id) - 1);
		g->bus_id[sizeof(g->bus_id) - 1] = '\0';
		g->instance = INT32_MAX;
		g->share = 1.0 / 3;
		g->power_integrated = true;
		g->have_energy = g->have_util = g->have_mem_util = true;
		g->have_mem_peak = g->have_sm_active = g->have_sm_occupancy = true;
		g->have_tensor_active = g->have_fp_active = true;
		g->energy_j = 1e15 / 3;
		g->util_pct = g->mem_util_pct = g->sm_active_pct = 100.0 / 3;
		g->sm_occupancy_pct = g->tensor_active_pct = g->fp_active_pct = 200.0 / 3;
		g->mem_peak_bytes = g->mem_total_bytes = (uint64_t)INT64_MAX;
	}
	r.nnotes = 2;
	memset(&r.notes[1], 0, sizeof(r.notes[1]));
	snprintf(r.notes[1].id, sizeof(r.notes[1].id), "agent-finalized");
	memset(r.notes[1].text, '"', sizeof(r.notes[1].text) - 1);
	snprintf(r.finalized_by, sizeof(r.finalized_by), "agent");
	n = ceems_record_reduce_encode_fallback(&r, small, sizeof(small), &scratch);
	ok(n > 0 && n < (int)sizeof(small), "the largest reduced record with 16 GPUs fits %d bytes (%d)",
	   CEEMS_RECORD_REDUCED_MAX, n);
	ok(n > 0 && ceems_record_decode(small, (size_t)n, &back, err, sizeof(err)) == 0 &&
	   back.report.ngpus == CEEMS_LEDGER_MAX_GPUS &&
	   back.report.gpus[15].mem_peak_bytes == (uint64_t)INT64_MAX,
	   "and keeps its GPUs %s", err);
}

/* Array job and task ids come as a pair. */
static void
test_array_pair(void)
{
	static struct ceems_job_record r;

	sample_record(&r);
	is_int(ceems_record_validate(&r, err, sizeof(err)), 0, "neither array id: valid");
	r.meta.array_job_id = 41;
	r.meta.array_task_id = 3;
	is_int(ceems_record_validate(&r, err, sizeof(err)), 0, "both array ids: valid");
	r.meta.array_task_id = CEEMS_UNKNOWN_U32;
	ok(ceems_record_validate(&r, err, sizeof(err)) == -EINVAL &&
	   strstr(err, "array_job_id and array_task_id come together") != NULL,
	   "an array job id without a task id refused: %s", err);
	r.meta.array_job_id = CEEMS_UNKNOWN_U32;
	r.meta.array_task_id = 3;
	ok(ceems_record_validate(&r, err, sizeof(err)) == -EINVAL,
	   "a task id without an array job id refused");
	expect_refused("\"user\":\"alice\"", "\"user\":\"alice\",\"array_task_id\":3",
		       "array_job_id and array_task_id come together");
}

/* A job end slurmctld did not answer: the start's answer fills the
 * identity and accounting fields, never the end's own. */
static void
test_fill_from_start(void)
{
	struct ceems_job_meta end, start;

	ceems_job_meta_init(&start);
	snprintf(start.cluster, sizeof(start.cluster), "c1");
	snprintf(start.account, sizeof(start.account), "phys");
	snprintf(start.partition, sizeof(start.partition), "cpu");
	snprintf(start.qos, sizeof(start.qos), "normal");
	snprintf(start.name, sizeof(start.name), "from-slurmctld");
	snprintf(start.state, sizeof(start.state), "RUNNING");
	start.jobid = 42;
	start.gid = 100;
	start.submit_time = 1700000000;
	start.start_time = 1700000100;
	start.end_time = 1700000200;
	start.exit_code = 0;
	start.time_limit_min = 60;
	start.alloc_cpus = 16;
	start.req_mem_bytes = 8ULL << 30;
	start.alloc_gpus = 2;
	start.nnodes = 2;
	start.array_job_id = 40;
	start.array_task_id = 2;

	ceems_job_meta_init(&end);
	end.jobid = 42;
	end.uid = 1000;
	snprintf(end.name, sizeof(end.name), "from-environment");
	snprintf(end.node, sizeof(end.node), "n1");
	end.end_time = 1700003700;
	ceems_job_meta_fill_from(&end, &start);
	is_int(end.start_time, 1700000100, "the start time filled");
	is_int(end.submit_time, 1700000000, "the submit time filled");
	is_str(end.cluster, "c1", "the cluster filled");
	is_str(end.account, "phys", "the account filled");
	is_str(end.partition, "cpu", "the partition filled");
	is_str(end.qos, "normal", "the QOS filled");
	is_int(end.gid, 100, "the group filled");
	is_int(end.time_limit_min, 60, "the time limit filled");
	ok(end.alloc_cpus == 16 && end.req_mem_bytes == (8ULL << 30) &&
	   end.alloc_gpus == 2 && end.nnodes == 2, "CPUs, memory, GPUs and nodes filled");
	ok(end.array_job_id == 40 && end.array_task_id == 2, "the array ids filled as a pair");
	is_str(end.name, "from-environment", "a field the end knows is kept");
	is_str(end.state, "", "the state is not the start's (RUNNING)");
	is_int(end.end_time, 1700003700, "the end time is the end's");
	is_int(end.exit_code, -1, "the exit code stays unknown");
	is_str(end.node, "n1", "the node is the end's");
	is_int(end.uid, 1000, "the owner is the end's");

	/* An end that knows its identity keeps it. */
	ceems_job_meta_init(&end);
	end.start_time = 1700000500;
	snprintf(end.cluster, sizeof(end.cluster), "c2");
	ceems_job_meta_fill_from(&end, &start);
	is_int(end.start_time, 1700000500, "a known start time is kept");
	is_str(end.cluster, "c2", "a known cluster is kept");
	/* A start that knew nothing fills nothing. */
	ceems_job_meta_init(&start);
	ceems_job_meta_init(&end);
	ceems_job_meta_fill_from(&end, &start);
	ok(end.start_time == 0 && end.cluster[0] == '\0' && end.gid == CEEMS_UNKNOWN_U32 &&
	   end.time_limit_min == CEEMS_UNKNOWN_U32 && end.array_job_id == CEEMS_UNKNOWN_U32,
	   "nothing known, nothing filled");
}

int
main(void)
{
	test_tres();
	test_fill_from_start();
	test_round_trip();
	test_step_without_figures();
	test_refusals();
	test_outside_text();
	test_reduced();
	test_reduced_worst();
	test_array_pair();
	return done_testing();
}
