/* test_report_row.c - the reports' parser of the database's rows
 * (binary COPY): the header, a whole tuple, NULLs as unknown, names
 * cleaned, the end-of-data mark, tuples of the wrong shape refused with
 * the job untouched; every cut of a tuple and random mutations of it
 * parse or are refused, never read or write out of bounds (the
 * sanitizer build runs this too).  CEEMS_TEST_SEED replays a run. */
#include "config.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report_row.h"
#include "../tap.h"

/* A tuple as the server writes it, built field by field. */
struct tuple {
	unsigned char b[1024];
	size_t n;
};

static void
put32(struct tuple *t, uint32_t v)
{
	for (int s = 24; s >= 0; s -= 8)
		t->b[t->n++] = (unsigned char)(v >> s);
}

static void
put_f8(struct tuple *t, double d)
{
	uint64_t bits;

	memcpy(&bits, &d, sizeof(bits));
	put32(t, 8);
	put32(t, (uint32_t)(bits >> 32));
	put32(t, (uint32_t)bits);
}

static void
put_text(struct tuple *t, const char *s, size_t len)
{
	put32(t, (uint32_t)len);
	memcpy(t->b + t->n, s, len);
	t->n += len;
}

/* 42, alice, "phys\tics", COMPLETED, then the numbers, NULL (NaN here)
 * where the job had none. */
static void
good(struct tuple *t, int fields)
{
	static const double num[REPORT_ROW_FIELDS - 4] = {
		3600, 480, 16, 7200, 68719476736.0, 4294967296.0, 0, NAN, 16000,
		6400, NAN, 50000, 5, 0.95, 0, 600, 1, 1, 1790000000
	};

	t->n = 0;
	t->b[t->n++] = (unsigned char)(fields >> 8);
	t->b[t->n++] = (unsigned char)fields;
	put32(t, 8);
	put32(t, 0);
	put32(t, 42);
	put_text(t, "alice", 5);
	put_text(t, "phys\tics", 8);
	put_text(t, "COMPLETED", 9);
	for (int i = 0; i < fields - 4 && i < REPORT_ROW_FIELDS - 4; i++) {
		if (isnan(num[i]))
			put32(t, UINT32_MAX);
		else
			put_f8(t, num[i]);
	}
	for (int i = REPORT_ROW_FIELDS; i < fields; i++)
		put_f8(t, 1);
}

/* On a copy of exactly LEN bytes, so that the sanitizer sees any read
 * past them. */
static int
parse(const unsigned char *buf, size_t len, struct report_job *j)
{
	unsigned char *copy = malloc(len > 0 ? len : 1);
	int r;

	memcpy(copy, buf, len);
	r = report_row_parse(copy, len, j);
	free(copy);
	return r;
}

static void
test_header(void)
{
	unsigned char h[32] = "PGCOPY\n\377\r\n";
	size_t n = 11;

	memset(h + n, 0, 8);
	is_int(report_row_header(h, 19), 19, "the header of 19 bytes");
	h[18] = 4;
	is_int(report_row_header(h, 19), -1, "an extension longer than the message is refused");
	is_int(report_row_header(h, 23), 23, "an extension of 4 bytes is skipped");
	h[0] = 'X';
	is_int(report_row_header(h, 23), -1, "no signature, no header");
	is_int(report_row_header(h, 10), -1, "a cut header is refused");
}

static void
test_good(void)
{
	struct tuple t;
	struct report_job j;
	static const unsigned char end[2] = { 0xff, 0xff };

	good(&t, REPORT_ROW_FIELDS);
	is_int(parse(t.b, t.n, &j), 1, "a tuple of 23 fields parses");
	is_int(j.jobid, 42, "job id");
	is_str(j.user, "alice", "user");
	is_str(j.account, "phys?ics", "a tab in a name is cleaned to ?");
	is_str(j.state, "COMPLETED", "state");
	is_near(j.elapsed_s, 3600, 0, "elapsed");
	is_near(j.req_mem_bytes, 68719476736.0, 0, "request");
	ok(isnan(j.gpu_util_pct), "NULL is unknown, not 0");
	ok(isnan(j.gpu_j), "NULL gpu energy");
	is_near(j.alloc_gpus, 0, 0, "a true 0 stays 0");
	is_near(j.coverage, 0.95, 1e-12, "coverage");
	is_near(j.since_first_s, 1790000000, 0, "the start, for the caller");
	memset(&j, 0x5a, sizeof(j));
	is_int(parse(end, 2, &j), 0, "the end-of-data mark");
	ok(((unsigned char *)&j)[0] == 0x5a, "the mark leaves the job untouched");
}

static void
test_bad(void)
{
	struct tuple t;
	struct report_job j;

	memset(&j, 0x5a, sizeof(j));
	good(&t, 2);
	is_int(parse(t.b, t.n, &j), -1, "two fields are refused");
	ok(((unsigned char *)&j)[0] == 0x5a, "the job untouched");
	good(&t, REPORT_ROW_FIELDS + 1);
	is_int(parse(t.b, t.n, &j), -1, "24 fields are refused");
	good(&t, REPORT_ROW_FIELDS);
	t.b[t.n++] = 0;
	is_int(parse(t.b, t.n, &j), -1, "a byte left over is refused");
	good(&t, REPORT_ROW_FIELDS);
	t.b[2 + 3] = 4;		/* the job id's length: 4, not int8's 8 */
	is_int(parse(t.b, t.n, &j), -1, "a number of the wrong size is refused");
	good(&t, REPORT_ROW_FIELDS);
	memset(t.b + 2, 0xff, 4);	/* the job id NULL */
	is_int(parse(t.b, t.n, &j), -1, "a job without its id is refused");
	is_int(parse(t.b, 0, &j), -1, "an empty tuple is refused");
	ok(((unsigned char *)&j)[0] == 0x5a, "the job still untouched");
}

/* Every cut, and mutations: 1 or -1 (0 only for the mark), nothing
 * else, no overrun; names printable and bounded. */
static void
test_fuzz(void)
{
	unsigned seed = getenv("CEEMS_TEST_SEED") ? (unsigned)strtoul(getenv("CEEMS_TEST_SEED"), NULL, 10)
						  : (unsigned)time(NULL);
	struct tuple t, m;
	struct report_job j;
	int odd = 0, parsed = 0;

	printf("# seed %u\n", seed);
	srand(seed);
	good(&t, REPORT_ROW_FIELDS);
	for (size_t cut = 0; cut <= t.n; cut++) {
		int r = parse(t.b, cut, &j);

		odd += r != 1 && r != -1;
		parsed += r == 1;
	}
	ok(odd == 0, "every cut gives 1 or -1");
	is_int(parsed, 1, "only the whole tuple parses");
	for (int round = 0; round < 5000; round++) {
		int r;

		m = t;
		for (int k = 0; k < 1 + rand() % 4; k++) {
			size_t at = (size_t)rand() % m.n;

			switch (rand() % 3) {
			case 0:
				m.b[at] = (unsigned char)(rand() % 256);
				break;
			case 1:
				if (m.n + 1 < sizeof(m.b)) {
					memmove(m.b + at + 1, m.b + at, m.n - at);
					m.b[at] = (unsigned char)"\0\377\010\t"[rand() % 4];
					m.n++;
				}
				break;
			default:
				memmove(m.b + at, m.b + at + 1, m.n - at - 1);
				m.n--;
			}
		}
		r = parse(m.b, m.n, &j);
		odd += r != 1 && r != -1 && r != 0;
		if (r == 1) {
			for (const char *p = j.user; *p != '\0'; p++)
				odd += *p < 0x20 || *p > 0x7e;
			odd += strlen(j.user) >= sizeof(j.user);
		}
	}
	ok(odd == 0, "5000 mutated tuples: 1, 0 or -1, names printable and bounded");
}

int
main(void)
{
	test_header();
	test_good();
	test_bad();
	test_fuzz();
	return done_testing();
}
