/* report_nodes.c - nodes and devices that misbehave, from what each node
 * measured of its jobs (ceems.job_nodes): each node's figure against the
 * median of the nodes of its hardware, with a robust spread (the median
 * absolute deviation), so that one odd node does not hide itself by
 * moving the mean; identical nodes never stand out. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fetch.h"
#include "report_nodes.h"

void
report_nodes_group(char *dst, size_t size, const char *name)
{
	size_t len = strlen(name);

	while (len > 0 && name[len - 1] >= '0' && name[len - 1] <= '9')
		len--;
	snprintf(dst, size, "%.*s", (int)len, name);
}

static int
by_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double
median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), by_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* One metric of one group (nodes [lo, hi)). */
static void
judge_metric(struct report_node *nodes, size_t lo, size_t hi, int m, double *buf)
{
	size_t k = 0;
	double med, mad;

	for (size_t i = lo; i < hi; i++)
		if (nodes[i].jobs >= REPORT_NODE_MIN_JOBS && !isnan(nodes[i].value[m]))
			buf[k++] = nodes[i].value[m];
	if (k < REPORT_NODE_MIN_GROUP)
		return;
	med = median(buf, k);
	for (size_t i = 0; i < k; i++)
		buf[i] = fabs(buf[i] - med);
	mad = 1.4826 * median(buf, k);
	/* Measurement noise: a spread under 2% of the median is no spread. */
	if (mad < 0.02 * fabs(med))
		mad = 0.02 * fabs(med);
	for (size_t i = lo; i < hi; i++) {
		struct report_node *nd = &nodes[i];

		nd->median[m] = med;
		if (nd->jobs < REPORT_NODE_MIN_JOBS || isnan(nd->value[m]) || med <= 0)
			continue;
		nd->stands_out[m] = nd->value[m] > med * REPORT_NODE_RATIO &&
				    nd->value[m] - med > REPORT_NODE_DEVIATIONS * mad;
	}
}

void
report_nodes_judge(struct report_node *nodes, size_t n)
{
	double *buf = malloc((n > 0 ? n : 1) * sizeof(*buf));
	size_t lo = 0;

	if (buf == NULL)
		return;
	for (size_t i = 0; i < n; i++) {
		for (int m = 0; m < REPORT_NODE_METRICS; m++) {
			nodes[i].stands_out[m] = false;
			nodes[i].median[m] = NAN;
		}
		nodes[i].gaps = nodes[i].jobs >= REPORT_NODE_MIN_JOBS &&
				!isnan(nodes[i].gap_share) &&
				nodes[i].gap_share > REPORT_NODE_GAP_SHARE;
	}
	while (lo < n) {
		size_t hi = lo + 1;

		while (hi < n && strcmp(nodes[hi].group, nodes[lo].group) == 0)
			hi++;
		for (int m = 0; m < REPORT_NODE_METRICS; m++)
			judge_metric(nodes, lo, hi, m, buf);
		lo = hi;
	}
	free(buf);
}

static int
by_group(const void *a, const void *b)
{
	const struct report_node *x = a, *y = b;
	int c = strcmp(x->group, y->group);

	return c != 0 ? c : strcmp(x->name, y->name);
}

long
report_nodes_fetch(PGconn *conn, const char *from, const char *to,
		   struct report_node **out, char *err, size_t err_size)
{
	/* Jobs of at least a minute, as the users' rules judge. */
	static const char *sql =
		"SELECT n.node, count(*),"
		" sum(n.package_static_j) FILTER (WHERE n.package_static_j IS NOT NULL AND n.alloc_cores IS NOT NULL)"
		"  / nullif(sum(n.alloc_cores * coalesce(n.lifetime_s, n.elapsed_s))"
		"    FILTER (WHERE n.package_static_j IS NOT NULL AND n.alloc_cores IS NOT NULL), 0),"
		" sum(n.package_j - coalesce(n.package_static_j, 0)) FILTER (WHERE n.package_j IS NOT NULL AND n.cpu_s > 0)"
		"  / nullif(sum(n.cpu_s) FILTER (WHERE n.package_j IS NOT NULL AND n.cpu_s > 0), 0),"
		" sum(n.node_j) FILTER (WHERE n.node_j IS NOT NULL AND n.total_j > 0)"
		"  / nullif(sum(n.total_j) FILTER (WHERE n.node_j IS NOT NULL AND n.total_j > 0), 0),"
		" sum(n.gap_s) / nullif(sum(n.elapsed_s), 0)"
		" FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)"
		" WHERE" REPORT_FETCH_IN_PERIOD
		"   AND n.elapsed_s >= 60"
		" GROUP BY n.node";
	const char *params[2] = { from, to };
	PGresult *res = PQexecParams(conn, sql, 2, NULL, params, NULL, NULL, 0);
	struct report_node *v;
	int rows;

	if (PQresultStatus(res) != PGRES_TUPLES_OK) {
		snprintf(err, err_size, "nodes of the period: %s", PQresultErrorMessage(res));
		PQclear(res);
		return -1;
	}
	rows = PQntuples(res);
	if ((v = calloc(rows > 0 ? (size_t)rows : 1, sizeof(*v))) == NULL) {
		snprintf(err, err_size, "out of memory");
		PQclear(res);
		return -1;
	}
	for (int r = 0; r < rows; r++) {
		snprintf(v[r].name, sizeof(v[r].name), "%s", PQgetvalue(res, r, 0));
		report_nodes_group(v[r].group, sizeof(v[r].group), v[r].name);
		v[r].jobs = strtol(PQgetvalue(res, r, 1), NULL, 10);
		for (int m = 0; m < REPORT_NODE_METRICS; m++)
			v[r].value[m] = PQgetisnull(res, r, 2 + m) ? NAN :
					strtod(PQgetvalue(res, r, 2 + m), NULL);
		v[r].gap_share = PQgetisnull(res, r, 5) ? NAN : strtod(PQgetvalue(res, r, 5), NULL);
	}
	PQclear(res);
	qsort(v, (size_t)rows, sizeof(*v), by_group);
	*out = v;
	return rows;
}

size_t
report_nodes_doc(struct report_doc *d, const struct report_node *nodes, size_t n,
		 const char *from, const char *to)
{
	static const char *const headers[] = {
		"Node", "Finding", "Node's figure", "Median of its group", "Jobs"
	};
	static const char *const what[REPORT_NODE_METRICS] = {
		"static power per core held (W)",
		"package energy per busy core-second (J)",
		"node power outside RAPL and GPUs (share of the total)",
	};
	struct report_table t;
	char title[160];
	size_t found = 0;

	snprintf(title, sizeof(title), "ceems: nodes that stand out, %.10s to %.10s", from, to);
	report_doc_begin(d, title);
	report_doc_para(d, "Each node against the nodes of its hardware (the same name without "
			"its number), on jobs of a minute or more; a node needs %d jobs, a group "
			"%d such nodes. A node stands out %.0f%% above its group's median and %.0f "
			"robust deviations from it; gaps when more than %.0f%% of its jobs' time "
			"went unaccounted.", REPORT_NODE_MIN_JOBS, REPORT_NODE_MIN_GROUP,
			(REPORT_NODE_RATIO - 1) * 100, REPORT_NODE_DEVIATIONS,
			REPORT_NODE_GAP_SHARE * 100);
	report_doc_table_init(&t, "Nodes that stand out", 5, headers);
	for (size_t i = 0; i < n; i++) {
		const struct report_node *nd = &nodes[i];
		char val[32], med[32], jobs[24];
		const char *cells[5] = { nd->name, NULL, val, med, jobs };

		snprintf(jobs, sizeof(jobs), "%ld", nd->jobs);
		for (int m = 0; m < REPORT_NODE_METRICS; m++) {
			if (!nd->stands_out[m])
				continue;
			snprintf(val, sizeof(val), "%.4g", nd->value[m]);
			snprintf(med, sizeof(med), "%.4g", nd->median[m]);
			cells[1] = what[m];
			report_doc_row(&t, NULL, cells);
			found++;
		}
		if (nd->gaps) {
			snprintf(val, sizeof(val), "%.1f%% of the time", nd->gap_share * 100);
			snprintf(med, sizeof(med), "-");
			cells[1] = "counters leave gaps";
			report_doc_row(&t, NULL, cells);
			found++;
		}
	}
	report_doc_table(d, &t);
	if (found == 0)
		report_doc_para(d, "No node stands out in the period.");
	report_doc_end(d);
	return found;
}
