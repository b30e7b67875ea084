/* test_summary_nodes.c - the whole-job summary of a multi-node job
 * (ceems_summary_format_nodes) and the merge of its nodes' reports
 * (ceems_measure_merge_report): the merged figures are the sums, memory
 * the largest node's, a figure some node lacks absent, coverage over the
 * summed lifetime; the text against golden files in
 * tests/fixtures/summary/nodes-*.txt (CEEMS_UPDATE_GOLDEN=1 rewrites
 * them), every line within 80 columns, the nodes without figures named,
 * the notes per node. */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fileio.h"
#include "model/ledger.h"
#include "model/measure.h"
#include "summary/summary.h"
#include "fixture.h"
#include "../tap.h"

#define GIB (1ULL << 30)
#define MIB (1ULL << 20)
#define MAX_NODES 16

/* Each node: 16 cores and 32 GiB held for ELAPSED seconds, 1.5625 W of
 * package idle power per core, 8 W per busy core, France 2024. */
static struct ceems_agent_job_report reports[MAX_NODES];
static struct ceems_summary_node parts[MAX_NODES];
static char names[MAX_NODES][16];
static struct ceems_agent_job_report whole;
static struct ceems_job_meta meta;

static void
node_report(struct ceems_agent_job_report *r, double elapsed, double cpu_s,
	    uint64_t peak)
{
	struct ceems_ledger_job_share share;
	struct ceems_emission_factor fr = { "owid-ember-2025", "FR", 2024,
					     44.179085, 1.3 };

	memset(r, 0, sizeof(*r));
	r->jobid = 1300;
	r->uid = 1000;
	r->alloc_cores = 16;
	r->alloc_mem_bytes = 32 * GIB;
	r->elapsed_s = elapsed;
	r->cpu_s = cpu_s;
	r->usage.present = CEEMS_CGF_CPU_USAGE | CEEMS_CGF_MEM_PEAK |
			   CEEMS_CGF_OOM_KILLS;
	r->usage.cpu_usage_ns = (uint64_t)(cpu_s * 1e9);
	r->usage.mem_peak_bytes = peak;
	memset(&share, 0, sizeof(share));
	share.static_j[CEEMS_DOMAIN_PACKAGE] = 1.5625 * 16 * elapsed;
	share.joules[CEEMS_DOMAIN_PACKAGE] =
		share.static_j[CEEMS_DOMAIN_PACKAGE] + 8.0 * cpu_s;
	share.static_j[CEEMS_DOMAIN_DRAM] = 0.078125 * 32 * elapsed;
	share.joules[CEEMS_DOMAIN_DRAM] = share.static_j[CEEMS_DOMAIN_DRAM];
	share.joules[CEEMS_DOMAIN_NODE] = 0.5 * 16 * elapsed;
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		share.measured[d] = d != CEEMS_DOMAIN_GPU;
		share.covered[d] = d != CEEMS_DOMAIN_GPU;
	}
	ceems_job_figures_ledger_init(&r->ledger);
	ceems_ledger_add_tick(&r->ledger, &share, elapsed, &fr);
}

/* A job of N nodes n01.. of ELAPSED s; node i used CPU[i] cores on
 * average and peaked at PEAK_MIB[i]; MISSING (or -1): the node that did
 * not answer. */
static void
job(size_t n, double elapsed, const double *cpu, const unsigned *peak_mib,
    int missing)
{
	bool first = true;

	memset(&whole, 0, sizeof(whole));
	ceems_job_meta_init(&meta);
	meta.jobid = 1300;
	meta.uid = 1000;
	snprintf(meta.user, sizeof(meta.user), "alice");
	snprintf(meta.account, sizeof(meta.account), "physics");
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	snprintf(meta.node, sizeof(meta.node), "n01");
	snprintf(meta.nodes, sizeof(meta.nodes), "n[01-%02zu]", n);
	meta.start_time = 1717236005;
	meta.end_time = meta.start_time + (int64_t)elapsed;
	meta.time_limit_min = 60;
	for (size_t i = 0; i < n; i++) {
		snprintf(names[i], sizeof(names[i]), "n%02zu", i + 1);
		parts[i].name = names[i];
		parts[i].why = NULL;
		if ((int)i == missing) {
			parts[i].report = NULL;
			parts[i].why = "no answer in time";
			continue;
		}
		node_report(&reports[i], elapsed, cpu[i] * elapsed,
			    (uint64_t)peak_mib[i] * MIB);
		parts[i].report = &reports[i];
		ceems_measure_merge_report(&whole, &reports[i], first);
		first = false;
	}
}

static void
test_merge(void)
{
	static const double cpu[] = { 15, 8, 0.05 };
	static const unsigned peak[] = { 6000, 2000, 100 };
	double j = 0, covered = 0;

	job(3, 1200, cpu, peak, -1);
	is_int(whole.alloc_cores, 48, "merge: cores summed");
	is_int(whole.alloc_mem_bytes, 32 * GIB, "merge: memory held is a node's");
	is_int(whole.usage.mem_peak_bytes, 6000 * MIB,
	       "merge: memory peak is the largest node's");
	is_near(whole.cpu_s, (15 + 8 + 0.05) * 1200, 1e-6, "merge: CPU summed");
	is_near(whole.elapsed_s - whole.gap_s, 1200, 1e-9,
		"merge: no gap, the whole time observed");
	for (int i = 0; i < 3; i++) {
		j += reports[i].ledger.joules[CEEMS_DOMAIN_PACKAGE];
		covered += reports[i].ledger.covered_s[CEEMS_DOMAIN_PACKAGE];
	}
	is_near(whole.ledger.joules[CEEMS_DOMAIN_PACKAGE], j, 1e-6,
		"merge: package energy summed");
	is_near(whole.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] /
		whole.ledger.lifetime_s,
		covered / (3 * reports[0].ledger.lifetime_s), 1e-12,
		"merge: coverage over the summed lifetime");
	is_near(whole.ledger.emissions_g,
		reports[0].ledger.emissions_g + reports[1].ledger.emissions_g +
		reports[2].ledger.emissions_g, 1e-9, "merge: emissions summed");
	ok(whole.nsteps == 0 && whole.ngaps == 0 && whole.series == NULL,
	   "merge: no node's steps, gaps or series");

	/* A node without a memory peak: the job's peak is unknown. */
	reports[1].usage.present &= ~CEEMS_CGF_MEM_PEAK;
	ceems_measure_merge_report(&whole, &reports[0], true);
	ceems_measure_merge_report(&whole, &reports[1], false);
	ok(!(whole.usage.present & CEEMS_CGF_MEM_PEAK),
	   "merge: a figure one node lacks is absent, not a partial sum");

	/* A node whose agent was away half the time: the CPU efficiency's
	 * time is the core-seconds watched. */
	reports[1].usage.present |= CEEMS_CGF_MEM_PEAK;
	reports[1].gap_s = 600;
	ceems_measure_merge_report(&whole, &reports[0], true);
	ceems_measure_merge_report(&whole, &reports[1], false);
	is_near((whole.elapsed_s - whole.gap_s) * whole.alloc_cores,
		1200 * 16 + 600 * 16, 1e-6,
		"merge: observed core-seconds summed over the nodes");
}

static bool
update_mode(void)
{
	const char *u = getenv("CEEMS_UPDATE_GOLDEN");

	return u != NULL && strcmp(u, "1") == 0;
}

/* Every line within 80 columns, printable, ending in a newline. */
static bool
layout_ok(const char *text)
{
	size_t col = 0;

	for (const char *p = text; *p != '\0'; p++) {
		if (*p == '\n') {
			if (col > 0 && p[-1] == ' ')
				return false;
			col = 0;
		} else if (*p < 0x20 || *p >= 0x7f || ++col > 80) {
			return false;
		}
	}
	return text[0] == '\0' || text[strlen(text) - 1] == '\n';
}

static void
golden(const char *name, size_t n)
{
	static char full[CEEMS_SUMMARY_SIZE], brief[CEEMS_SUMMARY_SIZE];
	static char got[2 * CEEMS_SUMMARY_SIZE], want[2 * CEEMS_SUMMARY_SIZE];
	char path[96];
	int a, b;

	a = ceems_summary_format_nodes(&meta, &whole, parts, n,
				       CEEMS_SUMMARY_FULL, full, sizeof(full));
	b = ceems_summary_format_nodes(&meta, &whole, parts, n,
				       CEEMS_SUMMARY_SHORT, brief, sizeof(brief));
	ok(a > 0 && b > 0, "%s: rendered", name);
	ok(layout_ok(full) && layout_ok(brief), "%s: 80 columns, plain ASCII",
	   name);
	snprintf(got, sizeof(got), "%s\n%s", full, brief);
	snprintf(path, sizeof(path), "summary/%s.txt", name);
	if (update_mode()) {
		FILE *fp = fopen(fixture_path(path), "w");

		ok(fp != NULL && fputs(got, fp) >= 0 && fclose(fp) == 0,
		   "%s: golden file rewritten", name);
		return;
	}
	if (ceems_fileio_read_text_file(fixture_path(path), want, sizeof(want)) < 0)
		snprintf(want, sizeof(want), "(missing %s)", fixture_path(path));
	if (!is_str(got, want, name))
		printf("#   (CEEMS_UPDATE_GOLDEN=1 rewrites it)\n");
}

static void
test_golden(void)
{
	static const double cpu3[] = { 15, 8, 0.05 };
	static const unsigned peak3[] = { 6000, 2000, 100 };
	static const double one[] = { 14, 0.02, 0.01 };
	static const double cpu12[] = { 15, 14, 13, 15, 14, 15, 12, 15, 14, 15,
					0.01, 15 };
	static const unsigned uneven[] = { 30000, 3000, 2500 };
	static const unsigned peak12[] = { 900, 900, 900, 900, 900, 900, 900,
					   900, 900, 900, 100, 900 };

	job(3, 1200, cpu3, peak3, -1);
	golden("nodes-whole", 3);
	job(4, 1200, cpu3, peak3, 3);
	golden("nodes-missing", 4);
	job(3, 1200, one, peak3, -1);
	golden("nodes-one-used", 3);
	job(12, 1200, cpu12, peak12, 4);
	golden("nodes-many", 12);
	job(3, 1200, cpu3, uneven, -1);
	golden("nodes-mem-uneven", 3);
	job(3, 1200, (const double[]){ 6, 4, 5 }, peak3, -1);
	golden("nodes-underuse", 3);
}

/* What the golden files show, checked apart from their spelling. */
static void
test_content(void)
{
	static const double cpu3[] = { 15, 8, 0.05 };
	static const double one[] = { 14, 0.02, 0.01 };
	static const unsigned peak3[] = { 6000, 2000, 100 };
	static char text[CEEMS_SUMMARY_SIZE];

	job(4, 1200, cpu3, peak3, 3);
	ceems_summary_format_nodes(&meta, &whole, parts, 4, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "Nodes    3 of 4 nodes measured; no figures from n04 "
			"(no answer in time)") != NULL,
	   "missing: the node without figures named");
	ok(strstr(text, "Node     n04  no figures (no answer in time)") != NULL,
	   "missing: its own line says so");
	ok(strstr(text, "48 cores held") != NULL,
	   "missing: the cores of the nodes measured");
	ok(strstr(text, "node-idle") == NULL && strstr(text, "n03") != NULL &&
	   strstr(text, "held 16 cores and used almost none") != NULL,
	   "missing: the idle node gets its note");
	job(3, 1200, one, peak3, -1);
	ceems_summary_format_nodes(&meta, &whole, parts, 3, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "Only n01 worked") != NULL && strstr(text, "--nodes=1") != NULL,
	   "one node used: the note says one node would do");
	job(3, 1200, cpu3, (const unsigned[]){ 30000, 3000, 2500 }, -1);
	ceems_summary_format_nodes(&meta, &whole, parts, 3, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "29.3 GiB on n01 and at most 2.9 GiB") != NULL &&
	   strstr(text, "--mem=4G") != NULL,
	   "uneven memory: the largest node named, --mem for the others");
	job(3, 1200, cpu3, (const unsigned[]){ 30000, 8000, 2500 }, -1);
	ceems_summary_format_nodes(&meta, &whole, parts, 3, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "at most 7.8 GiB on its other") == NULL,
	   "uneven memory: not for a second node within a factor 4");
	job(3, 1200, (const double[]){ 6, 4, 5 }, peak3, -1);
	ceems_summary_format_nodes(&meta, &whole, parts, 3, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "--ntasks-per-node=7 for processes") != NULL,
	   "cpu-underuse: the count per node serves the busiest node (6.0)");
	/* A short job is not judged: no node is called idle. */
	job(3, 30, one, peak3, -1);
	ceems_summary_format_nodes(&meta, &whole, parts, 3, CEEMS_SUMMARY_FULL,
				   text, sizeof(text));
	ok(strstr(text, "Only n01") == NULL && strstr(text, "used almost none") == NULL,
	   "short job: no node judged idle");
	ok(ceems_summary_format_nodes(&meta, &whole, parts, 0, CEEMS_SUMMARY_FULL,
				      text, sizeof(text)) < 0,
	   "no node: refused");
}

int
main(void)
{
	test_merge();
	test_golden();
	test_content();
	return done_testing();
}
