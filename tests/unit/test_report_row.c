/* test_report_row.c - the reports' parser of the database's rows
 * (COPY text format): a whole row, NULLs as unknown, names cleaned, rows
 * of the wrong shape refused with the job untouched; every cut of a row
 * and random mutations of it parse or are refused, never read or write
 * out of bounds (the sanitizer build runs this too).  CEEMS_TEST_SEED
 * replays a run. */
#include "config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "report/report_row.h"
#include "../tap.h"

static const char *const good =
	"42\talice\tphys\\tics\tCOMPLETED\t3600\t480\t16\t7200\t68719476736\t4294967296"
	"\t0\t\\N\t16000\t6400\t\\N\t50000\t5\t0.95\t0\t600\t1\t1\t1790000000\n";

static int
parse_copy(const char *text, size_t len, struct report_job *j)
{
	char *buf = malloc(len + 1);
	int r;

	memcpy(buf, text, len);
	buf[len] = '\0';
	r = report_row_parse(buf, len, j);
	free(buf);
	return r;
}

static void
test_good(void)
{
	struct report_job j;

	is_int(parse_copy(good, strlen(good), &j), 0, "a row of 23 fields parses");
	is_int(j.jobid, 42, "job id");
	is_str(j.user, "alice", "user");
	is_str(j.account, "phys?ics", "an escaped tab in a name is cleaned to ?");
	is_str(j.state, "COMPLETED", "state");
	is_near(j.elapsed_s, 3600, 0, "elapsed");
	is_near(j.req_mem_bytes, 68719476736.0, 0, "request");
	ok(isnan(j.gpu_util_pct), "\\N is unknown, not 0");
	ok(isnan(j.gpu_j), "\\N gpu energy");
	is_near(j.alloc_gpus, 0, 0, "a true 0 stays 0");
	is_near(j.coverage, 0.95, 1e-12, "coverage");
	is_near(j.since_first_s, 1790000000, 0, "the start, for the caller");
}

static void
test_bad(void)
{
	struct report_job j;
	char *extra;

	memset(&j, 0x5a, sizeof(j));
	is_int(parse_copy("42\talice\n", 9, &j), -1, "two fields are refused");
	ok(((unsigned char *)&j)[0] == 0x5a, "the job untouched");
	extra = malloc(strlen(good) + 8);
	snprintf(extra, strlen(good) + 8, "%.*s\t1\n", (int)strlen(good) - 1, good);
	is_int(parse_copy(extra, strlen(extra), &j), -1, "24 fields are refused");
	free(extra);
	is_int(parse_copy("", 0, &j), -1, "an empty row is refused");
}

/* Every cut, and mutations: 0 or -1, nothing else, no overrun. */
static void
test_fuzz(void)
{
	unsigned seed = getenv("CEEMS_TEST_SEED") ? (unsigned)strtoul(getenv("CEEMS_TEST_SEED"), NULL, 10)
						  : (unsigned)time(NULL);
	size_t len = strlen(good);
	struct report_job j;
	char buf[512];
	int odd = 0, parsed = 0;

	printf("# seed %u\n", seed);
	srand(seed);
	for (size_t cut = 0; cut <= len; cut++) {
		int r = parse_copy(good, cut, &j);

		odd += r != 0 && r != -1;
		parsed += r == 0;
	}
	ok(odd == 0, "every cut gives 0 or -1");
	ok(parsed >= 1, "the cut after the last field's digits still parses (%d)", parsed);
	for (int round = 0; round < 5000; round++) {
		size_t n = len;
		int r;

		memcpy(buf, good, len);
		for (int k = 0; k < 1 + rand() % 4; k++) {
			size_t at = (size_t)rand() % n;

			switch (rand() % 3) {
			case 0:
				buf[at] = (char)(rand() % 256);
				break;
			case 1:
				if (n + 1 < sizeof(buf)) {
					memmove(buf + at + 1, buf + at, n - at);
					buf[at] = "\t\\N\n9-e"[rand() % 7];
					n++;
				}
				break;
			default:
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		r = parse_copy(buf, n, &j);
		odd += r != 0 && r != -1;
		if (r == 0) {
			for (const char *p = j.user; *p != '\0'; p++)
				odd += *p < 0x20 || *p > 0x7e;
			odd += strlen(j.user) >= sizeof(j.user);
		}
	}
	ok(odd == 0, "5000 mutated rows: 0 or -1, names printable and bounded");
}

int
main(void)
{
	test_good();
	test_bad();
	test_fuzz();
	return done_testing();
}
