/* test_hotmem.c - the agent's region for what each tick touches: calloc
 * and free as before while it is off; once on, zeroed blocks from one
 * 2 MiB-aligned region, a freed block taken again by the next of its
 * size, tables larger than a block cut once, calloc when full, free of
 * either kind, and huge pages where the kernel gives them. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/hotmem.h"
#include "../tap.h"

#define MIB (1024u * 1024u)

static int
all_zero(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] != 0)
			return 0;
	return 1;
}

/* The AnonHugePages of the mapping holding P, kB; -1 when unknown. */
static long
huge_kb_at(const void *p)
{
	char line[512];
	long kb = -1;
	int in = 0;
	FILE *f = fopen("/proc/self/smaps", "re");

	if (f == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		unsigned long lo, hi;

		/* A mapping's first line; its fields' names are no range. */
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2) {
			in = (uintptr_t)p >= lo && (uintptr_t)p < hi;
			continue;
		}
		if (in && sscanf(line, "AnonHugePages: %ld kB", &kb) == 1)
			break;
	}
	fclose(f);
	return in ? kb : -1;
}

static int
thp_possible(void)
{
	char buf[128] = "";
	FILE *f = fopen("/sys/kernel/mm/transparent_hugepage/enabled", "re");

	if (f == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) == NULL)
		buf[0] = '\0';
	fclose(f);
	return strstr(buf, "[never]") == NULL && buf[0] != '\0';
}

static void
test_off(void)
{
	unsigned char *p = ceems_hotmem_calloc(4, 1000);

	ok(!ceems_hotmem_enabled(), "off until enabled");
	ok(p != NULL && all_zero(p, 4000), "off: calloc's zeroed block");
	is_int((long)ceems_hotmem_used(), 0, "off: nothing of the region used");
	ceems_hotmem_free(p);	/* free(): ASan or valgrind would tell */
	ceems_hotmem_free(NULL);
	ok(ceems_hotmem_calloc(SIZE_MAX / 2, 4) == NULL,
	   "an overflowing size: NULL");
}

static void
test_on(void)
{
	unsigned char *a, *b, *c, *big, *table, *spill, *again;
	size_t used;
	long kb;

	a = ceems_hotmem_calloc(1, 24000);
	b = ceems_hotmem_calloc(1, 24000);
	c = ceems_hotmem_calloc(3, 100);
	ok(a != NULL && b != NULL && c != NULL, "blocks handed out");
	ok((uintptr_t)a % 16 == 0 && (uintptr_t)c % 16 == 0,
	   "payloads 16-byte aligned");
	ok(b > a && (size_t)(b - a) < 24000 + 128,
	   "the next block right after the last");
	ok(all_zero(a, 24000) && all_zero(c, 300), "fresh blocks zeroed");
	memset(a, 0xa5, 24000);
	used = ceems_hotmem_used();
	ok(used >= 48300 && used < 48300 + 3 * 128, "used: the blocks (%zu)",
	   used);
	ceems_hotmem_free(a);
	again = ceems_hotmem_calloc(1, 23990);
	ok(again == a, "a freed block taken by the next of its size");
	ok(all_zero(again, 23990), "a block taken again is zeroed");
	is_int((long)ceems_hotmem_used(), (long)used,
	       "a reused block takes no more of the region");

	/* A table larger than a block: cut once, not reused. */
	table = ceems_hotmem_calloc(1024, 272);
	ok(table != NULL && table > c && all_zero(table, 1024 * 272),
	   "a table of 272 KiB from the region, zeroed");
	ceems_hotmem_free(table);
	big = ceems_hotmem_calloc(1024, 272);
	ok(big != NULL && big != table, "a freed table is not reused");

	if (thp_possible()) {
		memset(c, 1, 300);
		kb = huge_kb_at(c);
		ok(kb >= 2048, "the region in huge pages (%ld kB)", kb);
	} else {
		printf("ok %d # SKIP no transparent huge pages here\n",
		       ++tap_count);
	}

	/* Full: calloc serves, free tells the two apart.  The blocks of
	 * the region are left: the process ends with the test. */
	do {
		used = ceems_hotmem_used();
		spill = ceems_hotmem_calloc(1, 60000);
	} while (spill != NULL && ceems_hotmem_used() > used);
	ok(spill != NULL && all_zero(spill, 60000) &&
	   ceems_hotmem_used() == used, "full: calloc serves");
	ok(ceems_hotmem_used() <= 4 * MIB, "the region never overruns (%zu)",
	   ceems_hotmem_used());
	ceems_hotmem_free(spill);
	ceems_hotmem_free(b);
	ceems_hotmem_free(c);
	ceems_hotmem_free(again);
}

int
main(void)
{
	int r;

	test_off();
	r = ceems_hotmem_enable(4 * MIB);
	if (r == -ENOTSUP) {
		/* Under ASan or valgrind: calloc throughout, checked by them. */
		printf("ok %d # SKIP the region is off under a memory checker\n",
		       ++tap_count);
		test_off();
		return done_testing();
	}
	is_int(r, 0, "enabled");
	ok(ceems_hotmem_enabled(), "on");
	is_int(ceems_hotmem_enable(4 * MIB), -EALREADY, "enabled once only");
	test_on();
	return done_testing();
}
