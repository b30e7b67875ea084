/* test_sacct_fields.c - ceems-sacct's fields and output: the --format
 * parser (%N widths, unknown fields, bad widths), sacct's units
 * (Elapsed, TotalCPU, ReqMem, MaxRSS, ConsumedEnergy), empty cells for
 * what was not measured, the table's fitting and truncation, the
 * parsable and CSV modes, the state and job id parsers, and that each
 * field declares every row part it reads (the database backend leaves
 * the others unknown). */
#include "config.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "../tap.h"
#include "sacct/sacct_fields.h"
#include "sacct/sacct_units.h"
#include "model/job.h"
#include "sacct/sacct_output.h"
#include "sacct/sacct_query.h"
#include "sacct/sacct_explain.h"

static char buf[SACCT_CELL_MAX];

static const char *
cell(const char *field, const struct sacct_row *row)
{
	const struct sacct_field *f = sacct_fields_find(field);

	buf[0] = '\0';
	if (f == NULL)
		return "(no such field)";
	if (f->format != NULL)
		f->format(row, buf, sizeof(buf));
	return buf;
}

/* The table: every sacct field (22.05 to 26.05) known, sacct's name
 * matching, the words of Timelimit, the job and step lines of MaxRSS. */
static void
test_sacct_table(void)
{
	static const char *const sacct_names[] = {
		"AdminComment", "NTasks", "TRESUsageOutAve", "TRESUsageInMax",
		"AveRSS", "MaxRSSNode", "DBIndex", "SLUID", "Planned",
		"Reserved", "StdOut", "SubmitLine", "WorkDir", "NCPUS",
	};
	struct sacct_rows rows = { 0 };
	struct sacct_row *job, *step;
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	const struct sacct_field *all;
	size_t i, n, nall, filled = 0, empty = 0;
	char err[256];

	for (i = 0; i < sizeof(sacct_names) / sizeof(sacct_names[0]); i++)
		ok(sacct_fields_find(sacct_names[i]) != NULL, "sacct's %s is a field",
		   sacct_names[i]);
	ok(sacct_fields_find("tresusageinmaxn") ==
	   sacct_fields_find("TRESUsageInMaxNode"),
	   "an abbreviation is the first field it begins, as in sacct");
	ok(sacct_fields_find("QOS") != sacct_fields_find("QOSRAW"),
	   "an exact name wins over a longer one");
	all = sacct_fields_all(&nall);
	for (i = 0; i < nall; i++) {
		filled += all[i].status == SACCT_FIELD_FILLED && all[i].format != NULL;
		empty += all[i].status == SACCT_FIELD_EMPTY && all[i].format == NULL;
	}
	ok(filled + empty + 34 == nall && nall >= 126 + 34,
	   "every sacct field is filled or empty (%zu + %zu of %zu)", filled,
	   empty, nall);
	n = 0;
	ok(sacct_fields_format_parse("ALL", cols, SACCT_MAX_COLUMNS, &n, err,
				     sizeof(err)) == 0 && n == nall, "ALL is every field");
	n = 0;
	ok(sacct_fields_format_parse("%10", cols, SACCT_MAX_COLUMNS, &n, err,
				     sizeof(err)) != 0 && n == 0,
	   "a width without a name is no field, not ALL");
	n = 0;
	ok(sacct_fields_format_parse(" JobID, State", cols, SACCT_MAX_COLUMNS, &n,
				     err, sizeof(err)) == 0 && n == 2,
	   "blanks before a name are skipped, as sacct");

	job = sacct_row_add(&rows);
	job->jobid = 7;
	job->mem_peak_bytes = 4937728;
	snprintf(job->partition, sizeof(job->partition), "debug");
	snprintf(job->qos, sizeof(job->qos), "normal");
	job->time_limit_min = CEEMS_TIME_LIMIT_UNLIMITED;
	is_str(cell("Timelimit", job), "UNLIMITED", "Slurm's INFINITE is UNLIMITED");
	is_str(cell("TimelimitRaw", job), "UNLIMITED", "and so raw");
	job->time_limit_min = CEEMS_TIME_LIMIT_PARTITION;
	is_str(cell("Timelimit", job), "Partition_Limit", "NO_VAL is Partition_Limit");
	job->time_limit_min = 1500;
	is_str(cell("Timelimit", job), "1-01:00:00", "over a day");
	is_str(cell("TimelimitRaw", job), "1500", "raw: minutes");
	is_str(cell("MaxRSS", job), "", "MaxRSS: empty on a job line, as sacct");
	is_str(cell("NTasks", job), "", "NTasks: not kept, empty");
	is_str(cell("AdminComment", job), "", "AdminComment: not kept, empty");
	step = sacct_row_add(&rows);
	job = &rows.v[0];
	sacct_row_init(step);
	ok(sacct_row_step_of(&rows, step, job, "0") == 0, "a step row");
	step->mem_peak_bytes = 4937728;
	is_str(cell("MaxRSS", step), "4822K", "MaxRSS on a step line, as sacct");
	is_str(cell("Timelimit", step), "", "Timelimit: job lines only");
	is_str(cell("Partition", job), "debug", "Partition on the job line");
	is_str(cell("Partition", step), "", "Partition: job lines only, as sacct");
	is_str(cell("QOS", step), "", "QOS: job lines only, as sacct");
	sacct_row_free(&rows);
}

/* Print ROWS with FORMAT and OPTS into a string (caller frees). */
static char *
render(const char *format, const struct sacct_rows *rows,
       const struct sacct_output_opts *o)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	size_t n = 0, len = 0;
	char err[128], *text = NULL;
	FILE *f = open_memstream(&text, &len);

	if (f == NULL || sacct_fields_format_parse(format, cols, SACCT_MAX_COLUMNS,
					    &n, err, sizeof(err)) < 0)
		return strdup("(error)");
	sacct_output_rows(f, cols, n, rows, NULL, o);
	fclose(f);
	return text;
}

/* A job row with every part known and no value equal to "unknown". */
static void
full_row(struct sacct_row *r)
{
	sacct_row_init(r);
	snprintf(r->cluster, sizeof(r->cluster), "c1");
	r->jobid = 1000;
	r->array_job_id = 990;
	r->array_task_id = 3;
	r->uid = 1001;
	snprintf(r->user, sizeof(r->user), "alice");
	snprintf(r->account, sizeof(r->account), "physics");
	snprintf(r->partition, sizeof(r->partition), "cpu");
	snprintf(r->qos, sizeof(r->qos), "normal");
	r->name = "sim";
	snprintf(r->state, sizeof(r->state), "FAILED");
	r->exit_code = 2;
	r->exit_signal = 9;
	r->submit_time = 1700000000;
	r->start_time = 1700000100;
	r->end_time = 1700003700;
	r->time_limit_min = 120;
	r->alloc_cpus = 8;
	r->req_mem_bytes = 8ULL << 30;
	r->alloc_gpus = 2;
	r->nnodes = 2;
	r->nodes_reported = 2;
	r->nodes = "n[01-02]";
	r->elapsed_s = 3600;
	r->cpu_s = 20000;
	r->cpu_eff = 0.69;
	r->mem_peak_bytes = 3e9;
	r->mem_eff = 0.35;
	r->gpu_util_pct = 81;
	r->gpu_sm_pct = 40.5;
	r->gpu_mem_peak_bytes = 40e9;
	r->gpu_mem_total_bytes = 80e9;
	r->package_j = 1.1e6;
	r->dram_j = 2.2e5;
	r->gpu_j = 3.3e6;
	r->node_j = 4.4e5;
	r->total_j = 5.06e6;
	r->quality = 0.97;
	r->emissions_g = 95.5;
	r->g_per_kwh = 56;
	r->pue = 1.2;
	r->io_read_bytes = 268435456;
	r->io_write_bytes = 2621440;
	r->net_in_bytes = 1000;
	r->net_out_bytes = 104857600;
	/* One of its two nodes measured them: partial. */
	r->io_nodes = r->net_nodes = 1;
	r->perf_ctxsw = 1234;
	r->perf_page_faults = 56789;
	r->perf_migrations = 12;
	r->perf_cycles = 4e12;
	r->perf_instructions = 6e12;
	r->ci_fallback = 0.125;
	r->idle_unlearned = SACCT_IDLE_UNLEARNED_DRAM;
}

/* Make PART of R unknown, as the database backend leaves it. */
static void
forget_part(struct sacct_row *r, uint64_t part)
{
	if (part == SACCT_NEED_UID) r->uid = 0;
	if (part == SACCT_NEED_ACCOUNT) r->account[0] = '\0';
	if (part == SACCT_NEED_PARTITION) r->partition[0] = '\0';
	if (part == SACCT_NEED_QOS) r->qos[0] = '\0';
	if (part == SACCT_NEED_NAME) r->name = "";
	if (part == SACCT_NEED_STATE) r->state[0] = '\0';
	if (part == SACCT_NEED_EXIT) {
		r->exit_code = -1;
		r->exit_signal = 0;
	}
	if (part == SACCT_NEED_SUBMIT) r->submit_time = 0;
	if (part == SACCT_NEED_END) r->end_time = 0;
	if (part == SACCT_NEED_TIMELIMIT) r->time_limit_min = UINT32_MAX;
	if (part == SACCT_NEED_ALLOC_CPUS) r->alloc_cpus = 0;
	if (part == SACCT_NEED_REQ_MEM) r->req_mem_bytes = 0;
	if (part == SACCT_NEED_ALLOC_GPUS) r->alloc_gpus = 0;
	if (part == SACCT_NEED_NNODES) r->nnodes = 0;
	if (part == SACCT_NEED_NODES_REPORTED) r->nodes_reported = 0;
	if (part == SACCT_NEED_NODELIST) r->nodes = "";
	if (part == SACCT_NEED_ELAPSED) r->elapsed_s = NAN;
	if (part == SACCT_NEED_CPU_S) r->cpu_s = NAN;
	if (part == SACCT_NEED_CPU_EFF) r->cpu_eff = NAN;
	if (part == SACCT_NEED_MEM_PEAK) r->mem_peak_bytes = NAN;
	if (part == SACCT_NEED_MEM_EFF) r->mem_eff = NAN;
	if (part == SACCT_NEED_GPU_UTIL) r->gpu_util_pct = NAN;
	if (part == SACCT_NEED_PACKAGE) r->package_j = NAN;
	if (part == SACCT_NEED_DRAM) r->dram_j = NAN;
	if (part == SACCT_NEED_GPU) r->gpu_j = NAN;
	if (part == SACCT_NEED_NODE) r->node_j = NAN;
	if (part == SACCT_NEED_TOTAL) r->total_j = NAN;
	if (part == SACCT_NEED_QUALITY) r->quality = NAN;
	if (part == SACCT_NEED_EMISSIONS) r->emissions_g = NAN;
	if (part == SACCT_NEED_G_PER_KWH) r->g_per_kwh = NAN;
	if (part == SACCT_NEED_PUE) r->pue = NAN;
	if (part == SACCT_NEED_GPU_SM) r->gpu_sm_pct = NAN;
	if (part == SACCT_NEED_GPU_MEM) r->gpu_mem_peak_bytes = NAN;
	if (part == SACCT_NEED_GPU_MEM_TOTAL) r->gpu_mem_total_bytes = NAN;
	if (part == SACCT_NEED_IO)
		r->io_read_bytes = r->io_write_bytes = r->io_nodes = NAN;
	if (part == SACCT_NEED_NET)
		r->net_in_bytes = r->net_out_bytes = r->net_nodes = NAN;
	if (part == SACCT_NEED_PERF) {
		r->perf_ctxsw = r->perf_page_faults = r->perf_migrations = NAN;
		r->perf_cycles = r->perf_instructions = NAN;
	}
	if (part == SACCT_NEED_CI_FALLBACK) r->ci_fallback = NAN;
	if (part == SACCT_NEED_IDLE_UNLEARNED) r->idle_unlearned = NAN;
}

/* A declared PART that F reads only when another of its parts is
 * unknown (GPUEff's utilisation, when there is no SM activity): with
 * that one forgotten, forgetting PART too changes the cell. */
static bool
read_as_fallback(const struct sacct_field *f, uint64_t part)
{
	char one[SACCT_CELL_MAX], both[SACCT_CELL_MAX];
	struct sacct_row r;

	for (uint64_t other = 1; other & SACCT_NEED_ALL; other <<= 1) {
		if (other == part || (f->needs & other) == 0)
			continue;
		full_row(&r);
		forget_part(&r, other);
		f->format(&r, one, sizeof(one));
		forget_part(&r, part);
		f->format(&r, both, sizeof(both));
		if (strcmp(one, both) != 0)
			return true;
	}
	return false;
}

/* Each field reads only the parts it declares: forgetting any other
 * part leaves its cell as it was, on a job row and on a step row.  And
 * each part it declares changes its cell when forgotten (else the
 * declaration fetches a column for nothing). */
static void
test_field_needs(void)
{
	const struct sacct_field *all;
	struct sacct_row full, less;
	char want[SACCT_CELL_MAX], got[SACCT_CELL_MAX];
	size_t nfields, i;
	uint64_t part;
	int step, undeclared, unused;

	all = sacct_fields_all(&nfields);
	ok(nfields > 30, "%zu fields", nfields);
	for (i = 0; i < nfields; i++) {
		if (all[i].format == NULL)
			continue;	/* not kept: always empty, reads nothing */
		undeclared = unused = 0;
		for (step = 0; step < 2; step++) {
			full_row(&full);
			if (step)
				snprintf(full.step, sizeof(full.step), "batch");
			all[i].format(&full, want, sizeof(want));
			for (part = 1; part & SACCT_NEED_ALL; part <<= 1) {
				less = full;
				forget_part(&less, part);
				all[i].format(&less, got, sizeof(got));
				if ((all[i].needs & part) == 0 && strcmp(got, want) != 0) {
					undeclared++;
					printf("# %s reads part %#llx, undeclared\n",
					     all[i].name, (unsigned long long)part);
				}
				/* A field sacct leaves empty on job lines
				 * (MaxRSS) reads its part on step lines. */
				if (!step && want[0] != '\0' &&
				    (all[i].needs & part) != 0 &&
				    strcmp(got, want) == 0 &&
				    !read_as_fallback(&all[i], part)) {
					unused++;
					printf("# %s declares part %#llx, unread\n",
					     all[i].name, (unsigned long long)part);
				}
			}
		}
		ok(undeclared == 0 && unused == 0, "%s declares exactly the parts it reads",
		   all[i].name);
	}
	ok(SACCT_SUMMARY_NEEDS != 0 && (SACCT_SUMMARY_NEEDS & ~SACCT_NEED_ALL) == 0,
	   "the summary's parts are row parts");
}

/* The perf fields: counts as integers, IPC from the sums of cycles and
 * instructions; empty when unknown (no PMU: no cycles), never 0. */
static void
test_perf_fields(void)
{
	const struct sacct_field *all;
	struct sacct_row r;
	char cell[64];
	size_t n, i;
	int seen = 0;

	all = sacct_fields_all(&n);
	full_row(&r);
	for (i = 0; i < n; i++) {
		if (all[i].format == NULL)
			continue;
		all[i].format(&r, cell, sizeof(cell));
		if (strcmp(all[i].name, "IPC") == 0) {
			is_str(cell, "1.50", "IPC: instructions / cycles");
			r.perf_cycles = NAN;
			all[i].format(&r, cell, sizeof(cell));
			is_str(cell, "", "IPC: no cycles (no PMU): empty, not 0");
			r.perf_cycles = 4e12;
			seen++;
		} else if (strcmp(all[i].name, "CtxSw") == 0) {
			is_str(cell, "1234", "CtxSw: a count");
			seen++;
		} else if (strcmp(all[i].name, "PageFaults") == 0) {
			is_str(cell, "56789", "PageFaults: a count");
			r.perf_page_faults = NAN;
			all[i].format(&r, cell, sizeof(cell));
			is_str(cell, "", "PageFaults: unknown is empty");
			seen++;
		} else if (strcmp(all[i].name, "CPUMigr") == 0) {
			is_str(cell, "12", "CPUMigr: a count");
			seen++;
		}
	}
	is_int(seen, 4, "the four perf fields exist");
}

/* The data-quality figures of migration 024: the share at the yearly
 * carbon intensity as a %, the domains split before the idle power was
 * learned by name; empty where not known (no series, no CPU domain),
 * the share 0 where a series covered every tick. */
static void
test_quality_fields(void)
{
	struct sacct_row r;

	full_row(&r);
	is_str(cell("CIFallback", &r), "12.5%", "CIFallback: the share, %");
	r.ci_fallback = 0;
	is_str(cell("CIFallback", &r), "0.0%", "a series that covered it all: 0%");
	r.ci_fallback = NAN;
	is_str(cell("CIFallback", &r), "", "no series: empty, not 0");
	is_str(cell("IdleUnlearned", &r), "dram", "IdleUnlearned: dram");
	r.idle_unlearned = SACCT_IDLE_UNLEARNED_PACKAGE;
	is_str(cell("IdleUnlearned", &r), "package", "IdleUnlearned: package");
	r.idle_unlearned = SACCT_IDLE_UNLEARNED_PACKAGE | SACCT_IDLE_UNLEARNED_DRAM;
	is_str(cell("IdleUnlearned", &r), "package,dram", "IdleUnlearned: both");
	r.idle_unlearned = 0;
	is_str(cell("IdleUnlearned", &r), "", "none flagged: empty");
	r.idle_unlearned = NAN;
	is_str(cell("IdleUnlearned", &r), "", "not known: empty");
}

/* IO and network of a job over its nodes: the sum when every node
 * measured them, else marked partial ("+": at least this much), never
 * one node's part passed off as the job's. */
static void
test_io_nodes(void)
{
	const struct sacct_field *rb = sacct_fields_find("ReadBytes");
	const struct sacct_field *no = sacct_fields_find("NetOut");
	struct sacct_row r;

	if (!ok(rb != NULL && no != NULL, "ReadBytes and NetOut exist"))
		return;
	full_row(&r);
	r.io_nodes = r.net_nodes = 2;
	rb->format(&r, buf, sizeof(buf));
	is_str(buf, "256.00M", "both nodes measured it: the sum");
	r.io_nodes = 1;
	rb->format(&r, buf, sizeof(buf));
	is_str(buf, "256.00M+", "one node of two: marked partial");
	no->format(&r, buf, sizeof(buf));
	is_str(buf, "100.00M", "network: both nodes");
	r.nnodes = 0;
	r.nodes_reported = 1;
	rb->format(&r, buf, sizeof(buf));
	is_str(buf, "256.00M", "its node count unknown: as many as reported");
	r.io_read_bytes = NAN;
	r.io_nodes = NAN;
	rb->format(&r, buf, sizeof(buf));
	is_str(buf, "", "no node measured it: empty");
}

/* --explain's account of the energy's error bound: per domain, by
 * cause; unknown said so, never a bound of 0. */
static void
test_explain_err(void)
{
	static struct ceems_agent_job_report r;
	char *text = NULL;
	size_t len = 0;
	FILE *f;

	memset(&r, 0, sizeof(r));
	r.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	r.ledger.measured[CEEMS_DOMAIN_NODE] = true;
	r.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 600;
	r.ledger.covered_s[CEEMS_DOMAIN_NODE] = 600;
	r.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 5000;
	r.ledger.joules[CEEMS_DOMAIN_NODE] = 1000;
	r.err.known = true;
	r.err.have[CEEMS_DOMAIN_PACKAGE] = r.err.have[CEEMS_DOMAIN_NODE] = true;
	r.err.part_j[CEEMS_DOMAIN_PACKAGE][CEEMS_ERR_IDLE] = 100;
	r.err.part_j[CEEMS_DOMAIN_NODE][CEEMS_ERR_LAG] = 200;
	f = open_memstream(&text, &len);
	sacct_explain_err(f, &r);
	fclose(f);
	ok(strstr(text, "Energy error bound, about 95%: 300 J of 1.67 Wh (5.0%)") != NULL &&
	   strstr(text, "  CPU    100 J: idle power 100 J\n") != NULL &&
	   strstr(text, "  other  200 J: power reading lag 200 J\n") != NULL,
	   "--explain: the bound, per domain and cause\n%s", text);
	free(text);
	r.err.have[CEEMS_DOMAIN_NODE] = false;
	f = open_memstream(&text, &len);
	sacct_explain_err(f, &r);
	fclose(f);
	ok(strstr(text, "unknown, a domain has none") != NULL &&
	   strstr(text, "  other  unknown") != NULL,
	   "--explain: a domain without a bound makes the whole unknown");
	free(text);
}

int
main(void)
{
	struct sacct_column cols[SACCT_MAX_COLUMNS];
	struct sacct_output_opts o = { 0 };
	struct sacct_rows rows = { 0 };
	struct sacct_row *r;
	struct sacct_jobsel sel;
	char err[256], state[32], *text;
	size_t n = 0;

	test_explain_err();

	setenv("TZ", "UTC", 1);
	test_perf_fields();
	test_io_nodes();
	test_quality_fields();

	/* --format */
	ok(sacct_fields_format_parse("JobID,jobname%30,State", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == 0,
	   "a format list parses");
	is_int(n, 3, "three columns");
	is_str(cols[1].field->name, "JobName", "field names are case-insensitive");
	is_int(cols[1].width, 30, "%30 sets the width");
	is_int(cols[0].width, 0, "no %N: fitted");
	ok(sacct_fields_format_parse("Energy,CO2e", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == 0 && n == 5,
	   "a second -o adds columns");
	ok(sacct_fields_format_parse("JobID,Bogus", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1 && n == 5,
	   "an unknown field is refused, the columns unchanged");
	ok(strstr(err, "unknown field 'Bogus'") != NULL, "the error names it: %s", err);
	ok(sacct_fields_format_parse("JobID%0", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1, "%%0 is refused");
	ok(sacct_fields_format_parse("JobID%x", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1, "%%x is refused");
	ok(sacct_fields_format_parse("JobID%5x", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1, "%%5x is refused");
	ok(sacct_fields_format_parse("JobID%1001", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1, "%%1001 is refused");
	ok(sacct_fields_format_parse(",,", cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == -1, "an empty list is refused");
	n = 0;
	ok(sacct_fields_format_parse(SACCT_DEFAULT_FORMAT, cols, SACCT_MAX_COLUMNS, &n, err, sizeof(err)) == 0,
	   "the default format parses");

	/* sacct's units */
	sacct_fields_fmt_elapsed(0, buf, sizeof(buf));
	is_str(buf, "00:00:00", "Elapsed 0");
	sacct_fields_fmt_elapsed(3723.4, buf, sizeof(buf));
	is_str(buf, "01:02:03", "Elapsed 1 h 2 min 3 s");
	sacct_fields_fmt_elapsed(2 * 86400 + 3600 + 1, buf, sizeof(buf));
	is_str(buf, "2-01:00:01", "Elapsed over a day");
	sacct_fields_fmt_elapsed(NAN, buf, sizeof(buf));
	is_str(buf, "", "Elapsed unknown: empty");
	sacct_fields_fmt_cpu(61.5, buf, sizeof(buf));
	is_str(buf, "01:01.500", "TotalCPU under an hour: MM:SS.mmm");
	sacct_fields_fmt_cpu(600, buf, sizeof(buf));
	is_str(buf, "00:10:00", "TotalCPU of whole seconds: 00:MM:SS, as sacct");
	sacct_fields_fmt_cpu(0, buf, sizeof(buf));
	is_str(buf, "00:00:00", "TotalCPU 0: 00:00:00, as sacct");
	sacct_fields_fmt_cpu(0.0119, buf, sizeof(buf));
	is_str(buf, "00:00.011", "TotalCPU milliseconds cut, as sacct");
	sacct_fields_fmt_cpu(3600.5, buf, sizeof(buf));
	is_str(buf, "01:00:00", "TotalCPU from an hour: no milliseconds");
	sacct_fields_fmt_cpu(90061, buf, sizeof(buf));
	is_str(buf, "1-01:01:01", "TotalCPU over a day");
	/* sacct's convert_num_unit2: energy to the largest unit, memory
	 * while exact (halves allowed), --units and --noconvert. */
	sacct_units_fmt(950, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "950", "energy under 1000 J: no suffix");
	sacct_units_fmt(1780, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "1.78K", "1780 J is 1.78K");
	sacct_units_fmt(612000, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "612K", "612000 J is 612K");
	sacct_units_fmt(1050000, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "1.05M", "1050000 J is 1.05M");
	sacct_units_fmt(0, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "0", "a measured 0 J shows 0");
	sacct_units_fmt(NAN, SACCT_UNIT_NONE, 1000, 0, buf, sizeof(buf));
	is_str(buf, "", "unmeasured energy: empty");
	sacct_units_fmt(32768, SACCT_UNIT_MEGA, 1024, 1, buf, sizeof(buf));
	is_str(buf, "32G", "ReqMem 32768 MB is 32G");
	sacct_units_fmt(4000, SACCT_UNIT_MEGA, 1024, 1, buf, sizeof(buf));
	is_str(buf, "4000M", "ReqMem 4000 MB stays M");
	sacct_units_fmt(1536, SACCT_UNIT_MEGA, 1024, 1, buf, sizeof(buf));
	is_str(buf, "1.50G", "ReqMem 1536 MB: a half is exact enough");
	sacct_units_fmt(4937728, SACCT_UNIT_NONE, 1024, 1, buf, sizeof(buf));
	is_str(buf, "4822K", "MaxRSS of whole pages in K");
	sacct_units_fmt(1216907400, SACCT_UNIT_NONE, 1024, 1, buf, sizeof(buf));
	is_str(buf, "1216907400", "MaxRSS not a multiple of 512: bytes");
	{
		struct sacct_units u = { SACCT_UNIT_MEGA, 0 };
		int unit = -1;

		sacct_units_set(&u);
		sacct_units_fmt(4937728, SACCT_UNIT_NONE, 1024, 1, buf, sizeof(buf));
		is_str(buf, "4.71M", "--units=M: MaxRSS in M");
		sacct_units_fmt(32, SACCT_UNIT_GIGA, 1024, 1, buf, sizeof(buf));
		is_str(buf, "32768M", "--units=M: a figure counted in G goes down");
		u.spec = -1;
		u.noconvert = 1;
		sacct_units_set(&u);
		sacct_units_fmt(2147483648.0, SACCT_UNIT_NONE, 1024, 1, buf, sizeof(buf));
		is_str(buf, "2147483648", "--noconvert: the unit counted in");
		u.noconvert = 0;
		sacct_units_set(&u);
		ok(sacct_units_parse("g", &unit) == 0 && unit == SACCT_UNIT_GIGA,
		   "--units=g is G");
		ok(sacct_units_parse("Mi", &unit) == 0 && unit == SACCT_UNIT_MEGA,
		   "--units reads the first letter, as sacct");
		ok(sacct_units_parse("", &unit) < 0 && sacct_units_parse("x", &unit) < 0,
		   "--units: an empty or unknown unit is refused");
	}
	sacct_fields_fmt_rss(3650722201.0, buf, sizeof(buf));
	is_str(buf, "3565159K", "MaxRSS in K, as sacct");
	sacct_fields_fmt_bytes(268435456.0, buf, sizeof(buf));
	is_str(buf, "256.00M", "ReadBytes: 256 MiB");
	sacct_fields_fmt_bytes(1000.0, buf, sizeof(buf));
	is_str(buf, "1000", "under 1 KiB: bytes");
	sacct_fields_fmt_bytes(1536.0, buf, sizeof(buf));
	is_str(buf, "1.50K", "1.5 KiB");
	sacct_fields_fmt_bytes(0.0, buf, sizeof(buf));
	is_str(buf, "0", "a measured 0 is 0");
	sacct_fields_fmt_bytes(NAN, buf, sizeof(buf));
	is_str(buf, "", "unknown is empty");
	sacct_fields_fmt_sig3(0.000494, buf, sizeof(buf));
	is_str(buf, "0.000494", "three significant digits, small");
	sacct_fields_fmt_sig3(1.2345, buf, sizeof(buf));
	is_str(buf, "1.23", "three significant digits");
	sacct_fields_fmt_sig3(12345.6, buf, sizeof(buf));
	is_str(buf, "12346", "large: whole");
	sacct_fields_fmt_pct(0.375, buf, sizeof(buf));
	is_str(buf, "37.5%", "a percentage");

	/* Rows: empty cells for unknowns, known zeros shown. */
	r = sacct_row_add(&rows);
	r->jobid = 42;
	r->name = "a,b \"c\"";
	snprintf(r->state, sizeof(r->state), "COMPLETED");
	r->alloc_cpus = 4;
	r->elapsed_s = 100;
	r->cpu_s = 200;
	r->cpu_eff = 0.5;
	r->exit_code = 0;
	is_str(cell("JobID", r), "42", "JobID");
	is_str(cell("ExitCode", r), "0:0", "ExitCode");
	is_str(cell("CPUTime", r), "00:06:40", "CPUTime = Elapsed x AllocCPUS");
	is_str(cell("CPUEff", r), "50.0%", "CPUEff");
	is_str(cell("Energy", r), "", "Energy unmeasured: empty");
	is_str(cell("EnergyGPU", r), "", "EnergyGPU unmeasured: empty");
	is_str(cell("MemEff", r), "", "MemEff unknown: empty");
	is_str(cell("Quality", r), "", "Quality unknown: empty");
	is_str(cell("ReqMem", r), "", "ReqMem unknown: empty");
	is_str(cell("Timelimit", r), "", "Timelimit unknown: empty");
	r->total_j = 0;
	r->package_j = 0;
	is_str(cell("ConsumedEnergy", r), "0", "a measured 0 J is 0");
	is_str(cell("EnergyCPU", r), "0 J", "a measured 0 J (CPU) is 0 J");
	is_str(cell("EnergyRaw", r), "0", "a measured 0 J raw is 0");
	/* Each amount in the unit it reads best in; raw fields keep J. */
	r->total_j = 0.0339;
	is_str(cell("Energy", r), "0.03 J", "under 1 J: two decimals at most");
	r->total_j = 0.001;
	is_str(cell("Energy", r), "<0.01 J", "a trace of energy is <0.01 J, not 0");
	is_str(cell("EnergyRaw", r), "0.001", "raw keeps the trace in J");
	r->total_j = 3599;
	is_str(cell("Energy", r), "3599 J", "under 1 Wh: J");
	r->total_j = 20016;
	is_str(cell("Energy", r), "5.56 Wh", "from 1 Wh: Wh, three figures");
	r->total_j = 651600;
	is_str(cell("Energy", r), "181 Wh", "below 1 kWh: Wh");
	is_str(cell("ConsumedEnergy", r), "651.60K",
	       "ConsumedEnergy keeps sacct's J with K");
	r->total_j = 1.02e7;
	is_str(cell("Energy", r), "2.83 kWh", "from 1 kWh: kWh");
	r->total_j = 7.2e9;
	is_str(cell("Energy", r), "2.00 MWh", "from 1 MWh: MWh");
	is_str(cell("EnergyRaw", r), "7.2e+09", "raw: a number scripts parse");
	r->emissions_g = 8.02;
	is_str(cell("CO2e", r), "8.02 g", "grams: three figures");
	is_str(cell("CO2eRaw", r), "8.02", "raw grams");
	r->emissions_g = 951;
	is_str(cell("CO2e", r), "951 g", "grams from 100: whole");
	r->emissions_g = 12345;
	is_str(cell("CO2e", r), "12.3 kg", "from 1 kg: kg");
	r->emissions_g = 2.5e6;
	is_str(cell("CO2e", r), "2.50 t", "from 1 t: t");
	r->emissions_g = 0.001;
	is_str(cell("CO2e", r), "<0.01 g", "a trace of emissions is <0.01 g");
	r->emissions_g = NAN;
	is_str(cell("CO2eRaw", r), "", "unknown raw grams: empty");
	r->array_job_id = 40;
	r->array_task_id = 2;
	snprintf(r->step, sizeof(r->step), "batch");
	is_str(cell("JobID", r), "40_2.batch", "an array task's step");
	is_str(cell("JobIDRaw", r), "42.batch", "JobIDRaw");
	r->step[0] = '\0';
	r->array_job_id = UINT32_MAX;

	r = sacct_row_add(&rows);
	r->jobid = 43;
	r->name = "a-very-long-job-name-indeed";
	snprintf(r->state, sizeof(r->state), "FAILED");

	/* Output modes. */
	o.mode = SACCT_PARSABLE;
	text = render("JobID,JobName", &rows, &o);
	is_str(text, "JobID|JobName|\n42|a,b \"c\"|\n43|a-very-long-job-name-indeed|\n", "-p: a delimiter after every field");
	free(text);
	o.mode = SACCT_PARSABLE2;
	o.delimiter = ";";
	o.noheader = true;
	text = render("JobID,JobName", &rows, &o);
	is_str(text, "42;a,b \"c\"\n43;a-very-long-job-name-indeed\n", "-P -n --delimiter=';'");
	free(text);
	o.mode = SACCT_CSV;
	o.noheader = false;
	text = render("JobID,JobName", &rows, &o);
	is_str(text, "JobID,JobName\n42,\"a,b \"\"c\"\"\"\n43,a-very-long-job-name-indeed\n", "CSV quotes as RFC 4180");
	free(text);
	o.mode = SACCT_TABLE;
	o.style = SACCT_STYLE_ASCII;
	text = render("JobID,JobName%10,State", &rows, &o);
	is_str(text,
	       "JobID JobName    State\n"
	       "----- ---------- ---------\n"
	       "42    a,b \"c\"    COMPLETED\n"
	       "43    a-very-lo+ FAILED\n",
	       "%10 cuts a longer value with '+', like sacct");
	free(text);
	o.width = 30;
	text = render("JobID,JobName,State", &rows, &o);
	is_str(text,
	       "JobID JobName        State\n"
	       "----- -------------- ---------\n"
	       "42    a,b \"c\"        COMPLETED\n"
	       "43    a-very-long-j+ FAILED\n",
	       "a 30-column terminal narrows the widest column");
	free(text);
	o.width = 0;
	o.style = SACCT_STYLE_BOX;
	text = render("JobID,State", &rows, &o);
	is_str(text,
	       "\xe2\x94\x8c\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xac"
	       "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x90\n"
	       "\xe2\x94\x82 JobID \xe2\x94\x82 State     \xe2\x94\x82\n"
	       "\xe2\x94\x9c\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xbc"
	       "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xa4\n"
	       "\xe2\x94\x82 42    \xe2\x94\x82 COMPLETED \xe2\x94\x82\n"
	       "\xe2\x94\x82 43    \xe2\x94\x82 FAILED    \xe2\x94\x82\n"
	       "\xe2\x94\x94\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\xb4"
	       "\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x80\xe2\x94\x98\n",
	       "box drawing");
	free(text);
	/* A job name with terminal controls (C0, DEL, UTF-8 C1) reaches no
	 * output mode as such; other UTF-8 stays. */
	rows.v[0].name = "a\x1b[31mb\x7f\xc2\x9b" "2J\xc3\xa9\ncd";
	o.style = SACCT_STYLE_ASCII;
	o.noheader = true;
	for (int m = 0; m < 3; m++) {
		static const enum sacct_mode modes[] = { SACCT_TABLE, SACCT_CSV, SACCT_PARSABLE };

		o.mode = modes[m];
		text = render("JobName%40", &rows, &o);
		ok(strstr(text, "a?[31mb??2J\xc3\xa9?cd") != NULL &&
		   strpbrk(text, "\x1b\x7f") == NULL && strstr(text, "\xc2\x9b") == NULL,
		   "controls become '?' in output mode %d: %s", m, text);
		free(text);
	}
	/* Columns are as wide as the characters shown, not the bytes: an
	 * accented name and a C1 control (two bytes each, one character
	 * each once made safe) line up with ASCII ones. */
	o.mode = SACCT_TABLE;
	o.noheader = false;
	rows.v[0].name = "\xc3\xa9t\xc3\xa9";
	rows.v[1].name = "ab\xc2\x9b" "c";
	text = render("JobName,JobID", &rows, &o);
	is_str(text,
	       "JobName JobID\n"
	       "------- -----\n"
	       "\xc3\xa9t\xc3\xa9     42\n"
	       "ab?c    43\n",
	       "widths in characters, controls counted as their '?'");
	free(text);
	sacct_row_free(&rows);

	/* -s and -j */
	ok(sacct_merge_state_parse("cd", state, sizeof(state)) == 0 && strcmp(state, "COMPLETED") == 0, "state CD");
	ok(sacct_merge_state_parse("oom", state, sizeof(state)) == 0 && strcmp(state, "OUT_OF_MEMORY") == 0, "state OOM");
	ok(sacct_merge_state_parse("Timeout", state, sizeof(state)) == 0 && strcmp(state, "TIMEOUT") == 0, "state Timeout");
	ok(sacct_merge_state_parse("DONE", state, sizeof(state)) == -1, "an unknown state is refused");
	ok(sacct_merge_jobsel_parse("123", &sel) == 0 && sel.jobid == 123 && sel.step[0] == '\0', "job 123");
	ok(sacct_merge_jobsel_parse("123.batch", &sel) == 0 && sel.jobid == 123 && strcmp(sel.step, "batch") == 0, "step 123.batch");
	ok(sacct_merge_jobsel_parse("123.0", &sel) == 0 && strcmp(sel.step, "0") == 0, "step 123.0");
	ok(sacct_merge_jobsel_parse("0", &sel) == -1, "job 0 is refused");
	ok(sacct_merge_jobsel_parse("123.", &sel) == -1, "an empty step is refused");
	ok(sacct_merge_jobsel_parse("12x", &sel) == -1, "12x is refused");
	ok(sacct_merge_jobsel_parse("4294967295", &sel) == -1, "a job id out of range is refused");
	ok(sacct_merge_jobsel_parse("1.a/b", &sel) == -1, "a step with a slash is refused");
	test_field_needs();
	test_sacct_table();
	return done_testing();
}
