/* sacct_explain.c - what --explain adds to a job's summary: where the
 * error bound of its energy comes from, domain by domain and cause by
 * cause (lib/model/energy_err.h; doc/attribution.md, "How sure a figure
 * is"). */
#include "config.h"

#include <math.h>
#include <stdio.h>

#include "sacct_explain.h"
#include "summary/units.h"

/* The summary's names of the domains. */
static const char *const domain_names[CEEMS_DOMAIN_COUNT] = {
	[CEEMS_DOMAIN_PACKAGE] = "CPU",
	[CEEMS_DOMAIN_DRAM] = "DRAM",
	[CEEMS_DOMAIN_GPU] = "GPU",
	[CEEMS_DOMAIN_NODE] = "other",
};

/* The causes' names as a reader says them. */
static const char *const part_names[CEEMS_ERR_PARTS] = {
	[CEEMS_ERR_SOURCE] = "sensor resolution",
	[CEEMS_ERR_LAG] = "power reading lag",
	[CEEMS_ERR_IDLE] = "idle power",
	[CEEMS_ERR_GAPS] = "unmeasured time",
};

/* Whether domain D holds energy the job's figure counts. */
static bool
has_energy(const struct ceems_job_ledger *l, int d)
{
	return l->measured[d] && l->covered_s[d] > 0 && isfinite(l->joules[d]);
}

/* One domain's line: its bound and the causes that add to it. */
static void
explain_domain(FILE *out, const struct ceems_energy_err_report *e, int d)
{
	char v[32];
	double j;
	bool first = true;

	if (!ceems_energy_err_report_domain(e, d, &j)) {
		fprintf(out, "  %-6s unknown\n", domain_names[d]);
		return;
	}
	ceems_units_fmt_energy(v, sizeof(v), j);
	fprintf(out, "  %-6s %s", domain_names[d], v);
	for (int k = 0; k < CEEMS_ERR_PARTS; k++) {
		if (!(e->part_j[d][k] > 0))
			continue;
		ceems_units_fmt_energy(v, sizeof(v), e->part_j[d][k]);
		fprintf(out, "%s%s %s", first ? ": " : ", ", part_names[k], v);
		first = false;
	}
	fputc('\n', out);
}

void
sacct_explain_err(FILE *out, const struct ceems_agent_job_report *r)
{
	const struct ceems_job_ledger *l = &r->ledger;
	double total = 0, err = 0, j;
	bool any = false, known = r->err.known;
	char e[32], t[32];

	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++) {
		if (!has_energy(l, d))
			continue;
		any = true;
		total += l->joules[d];
		if (ceems_energy_err_report_domain(&r->err, d, &j))
			err += j;
		else
			known = false;
	}
	if (!any)
		return;
	if (!r->err.known) {
		fprintf(out, "Energy error bound: unknown (the node's agent "
			"restarted during the job, or wrote no bound)\n");
		return;
	}
	ceems_units_fmt_energy(t, sizeof(t), total);
	if (known) {
		ceems_units_fmt_energy(e, sizeof(e), err);
		fprintf(out, "Energy error bound, about 95%%: %s of %s",
			e, t);
		if (total > 0)
			fprintf(out, " (%.1f%%)", 100 * err / total);
		fputc('\n', out);
	} else {
		fprintf(out, "Energy error bound: unknown, a domain has none "
			"(a gap before the node showed its power)\n");
	}
	for (int d = 0; d < CEEMS_DOMAIN_COUNT; d++)
		if (has_energy(l, d))
			explain_domain(out, &r->err, d);
}
