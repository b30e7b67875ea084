/* report_row.c - a tuple of binary COPY into a report_job: the reports'
 * one parser of what the database sends, held by tests/unit/
 * test_report_row (cut and mutated tuples).  Binary, not text: a heavy
 * user's month is hundreds of thousands of rows of 19 numbers, and
 * printing each double on the server and reading it back with strtod
 * cost more than the rules (doc/performance.md, "Reports"). */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "report_buf.h"
#include "report_row.h"

/* "PGCOPY\n\377\r\n\0", then flags and the extension's length. */
static const unsigned char signature[11] = {
	'P', 'G', 'C', 'O', 'P', 'Y', '\n', 0xff, '\r', '\n', 0
};

/* Network-order integers; the caller checked the length. */
static uint32_t
be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t
be64(const unsigned char *p)
{
	return (uint64_t)be32(p) << 32 | be32(p + 4);
}

long
report_row_header(const unsigned char *buf, size_t len)
{
	uint32_t ext;

	if (len < sizeof(signature) + 8 || memcmp(buf, signature, sizeof(signature)) != 0)
		return -1;
	ext = be32(buf + sizeof(signature) + 4);
	if (ext > len - sizeof(signature) - 8)
		return -1;
	return (long)(sizeof(signature) + 8 + ext);
}

/* A field's bytes: *DATA and its length, -1 for NULL; -2 when the
 * field runs past the tuple. */
static long
field(const unsigned char *buf, size_t len, size_t *at, const unsigned char **data)
{
	uint32_t n;

	if (len - *at < 4)
		return -2;
	n = be32(buf + *at);
	*at += 4;
	if (n == UINT32_MAX)
		return -1;
	if (n > len - *at)
		return -2;
	*data = buf + *at;
	*at += n;
	return (long)n;
}

/* A name: NULL is empty; control bytes and non-ASCII cleaned (names
 * reach mail headers, terminals and HTML). */
static void
name(char *dst, size_t size, const unsigned char *data, long n)
{
	char raw[256];

	if (n < 0)
		n = 0;
	if ((size_t)n >= sizeof(raw))
		n = sizeof(raw) - 1;
	for (long i = 0; i < n; i++)
		raw[i] = data[i] != '\0' ? (char)data[i] : '\1';
	raw[n] = '\0';
	report_buf_clean(dst, size, raw);
}

int
report_row_parse(const unsigned char *buf, size_t len, struct report_job *j)
{
	const unsigned char *data[REPORT_ROW_FIELDS];
	long n[REPORT_ROW_FIELDS];
	double num[REPORT_ROW_FIELDS];
	size_t at = 2;

	if (len < 2)
		return -1;
	if (buf[0] == 0xff && buf[1] == 0xff)
		return len == 2 ? 0 : -1;
	if (((unsigned)buf[0] << 8 | buf[1]) != REPORT_ROW_FIELDS)
		return -1;
	for (int f = 0; f < REPORT_ROW_FIELDS; f++) {
		data[f] = NULL;
		if ((n[f] = field(buf, len, &at, &data[f])) == -2)
			return -1;
		/* the job id and the numbers: 8 bytes, the id never NULL */
		if ((f == 0 || f >= 4) && n[f] != 8 && !(f >= 4 && n[f] == -1))
			return -1;
		if (f >= 4) {
			uint64_t bits = n[f] == 8 ? be64(data[f]) : 0;

			if (n[f] == 8)
				memcpy(&num[f], &bits, sizeof(num[f]));
			else
				num[f] = NAN;
		}
	}
	if (at != len)
		return -1;
	memset(j, 0, sizeof(*j));
	j->jobid = (long long)be64(data[0]);
	name(j->user, sizeof(j->user), data[1], n[1]);
	name(j->account, sizeof(j->account), data[2], n[2]);
	name(j->state, sizeof(j->state), data[3], n[3]);
	j->elapsed_s = num[4];
	j->time_limit_min = num[5];
	j->alloc_cpus = num[6];
	j->cpu_time_s = num[7];
	j->req_mem_bytes = num[8];
	j->mem_peak_bytes = num[9];
	j->alloc_gpus = num[10];
	j->gpu_util_pct = num[11];
	j->package_static_j = num[12];
	j->dram_static_j = num[13];
	j->gpu_j = num[14];
	j->total_j = num[15];
	j->emissions_g = num[16];
	j->coverage = num[17];
	j->gap_s = num[18];
	j->wait_s = num[19];
	j->nnodes = num[20];
	j->nodes_reported = num[21];
	/* the start, made relative to the user's first job by the caller */
	j->since_first_s = num[22];
	return 1;
}
