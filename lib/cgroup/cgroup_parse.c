/* cgroup_parse.c - the parsers of a cgroup's counter files, v1 and v2:
 * single values, flat keyed files (cpu.stat, memory.stat...), blkio and
 * io.stat, and CPU lists.  Pure functions over text that came from the
 * kernel (or from a fuzzer): no I/O, clear errors, no crash on garbage.
 *
 * Kept apart from the reader in cgroup_stats.c, which opens and preads
 * the files, so that the parsers can be fuzzed and tested alone. */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup/cgroup_stats.h"
#include "base/number.h"
#include "base/tick_path.h"

/* ------------------------------------------------------------------ */
/* Numbers                                                             */
/* ------------------------------------------------------------------ */

static int
mul_u64(uint64_t a, uint64_t b, uint64_t *out)
{
	if (b != 0 && a > UINT64_MAX / b)
		return -ERANGE;
	*out = a * b;
	return 0;
}

static int
add_u64(uint64_t *sum, uint64_t v)
{
	if (*sum > UINT64_MAX - v)
		return -ERANGE;
	*sum += v;
	return 0;
}

/* The end of a single-value file: nothing, or one newline. */
static bool
at_value_end(const char *p)
{
	return p[0] == '\0' || (p[0] == '\n' && p[1] == '\0');
}

int
ceems_cgroup_parse_u64_or_max(const char *text, uint64_t *out)
{
	if (strncmp(text, "max", 3) == 0 && at_value_end(text + 3)) {
		*out = CEEMS_CGROUP_UNLIMITED;
		return 0;
	}
	return ceems_number_parse_u64(text, out);
}

int
ceems_cgroup_parse_cgroup1_limit(const char *text, uint64_t *out)
{
	uint64_t v;
	int ret;

	if ((ret = ceems_number_parse_u64(text, &v)) < 0)
		return ret;
	/* "No limit" is LONG_MAX rounded down to a page
	 * (9223372036854771712 with 4 KiB pages); nobody has 4 EiB. */
	if (v >= (UINT64_C(1) << 62))
		v = CEEMS_CGROUP_UNLIMITED;
	*out = v;
	return 0;
}

/* ------------------------------------------------------------------ */
/* Keyed files                                                         */
/* ------------------------------------------------------------------ */

CEEMS_TICK_PATH int
ceems_cgroup_parse_flat_keyed(const char *text, const char *const *keys,
		       size_t nkeys, uint64_t *values, uint32_t *found)
{
	uint64_t got[32];
	uint32_t seen = 0;
	const char *line = text;

	if (nkeys > 32)
		return -EINVAL;
	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *sp = memchr(line, ' ', (size_t)(end - line));
		size_t klen;

		if (end == line)
			return -EINVAL;	/* the kernel prints no blank lines */
		if (sp == NULL || sp == line || sp + 1 >= end)
			return -EINVAL;
		klen = (size_t)(sp - line);
		for (size_t i = 0; i < nkeys; i++) {
			const char *p = sp + 1;
			int ret;

			if (strlen(keys[i]) != klen ||
			    memcmp(line, keys[i], klen) != 0)
				continue;
			if (seen & (1u << i))
				return -EINVAL;
			if ((ret = ceems_number_take_u64(&p, &got[i])) < 0)
				return ret;
			if (p != end)
				return -EINVAL;
			seen |= 1u << i;
			break;
		}
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	for (size_t i = 0; i < nkeys; i++)
		if (seen & (1u << i))
			values[i] = got[i];
	*found = seen;
	return 0;
}

/* Parse the wanted KEYS of TEXT; -ENODATA when none is there. */
static int
parse_keyed_some(const char *text, const char *const *keys, size_t nkeys,
		 uint64_t *values, uint32_t *found)
{
	int ret = ceems_cgroup_parse_flat_keyed(text, keys, nkeys, values, found);

	if (ret == 0 && *found == 0)
		return -ENODATA;
	return ret;
}

int
ceems_cgroup_parse_cgroup2_cpu_stat(const char *text, struct ceems_cgroup_stats *st)
{
	static const char *const keys[] = {
		"usage_usec", "user_usec", "system_usec",
	};
	static const uint32_t fields[] = {
		CEEMS_CGF_CPU_USAGE, CEEMS_CGF_CPU_USER, CEEMS_CGF_CPU_SYSTEM,
	};
	uint64_t v[3], ns[3];
	uint32_t found;
	int ret;

	if ((ret = parse_keyed_some(text, keys, 3, v, &found)) < 0)
		return ret;
	for (int i = 0; i < 3; i++)
		if ((found & (1u << i)) && mul_u64(v[i], 1000, &ns[i]) < 0)
			return -ERANGE;
	if (found & 1u) {
		st->cpu_usage_ns = ns[0];
		st->present |= fields[0];
	}
	if (found & 2u) {
		st->cpu_user_ns = ns[1];
		st->present |= fields[1];
	}
	if (found & 4u) {
		st->cpu_system_ns = ns[2];
		st->present |= fields[2];
	}
	return 0;
}

/* Parse KEYS[0], KEYS[1] of TEXT into *A, *B with present bits FA, FB. */
static int
parse_two_keys(const char *text, const char *const keys[2], uint64_t *a,
	       uint32_t fa, uint64_t *b, uint32_t fb,
	       struct ceems_cgroup_stats *st)
{
	uint64_t v[2];
	uint32_t found;
	int ret;

	if ((ret = parse_keyed_some(text, keys, 2, v, &found)) < 0)
		return ret;
	if (found & 1u) {
		*a = v[0];
		st->present |= fa;
	}
	if (found & 2u) {
		*b = v[1];
		st->present |= fb;
	}
	return 0;
}

int
ceems_cgroup_parse_cgroup2_memory_stat(const char *text,
				struct ceems_cgroup_stats *st)
{
	static const char *const keys[2] = { "anon", "file" };

	return parse_two_keys(text, keys, &st->mem_rss_bytes,
			      CEEMS_CGF_MEM_RSS, &st->mem_cache_bytes,
			      CEEMS_CGF_MEM_CACHE, st);
}

int
ceems_cgroup_parse_cgroup1_memory_stat(const char *text,
				struct ceems_cgroup_stats *st)
{
	/* total_rss already includes total_rss_huge. */
	static const char *const keys[2] = { "total_rss", "total_cache" };

	return parse_two_keys(text, keys, &st->mem_rss_bytes,
			      CEEMS_CGF_MEM_RSS, &st->mem_cache_bytes,
			      CEEMS_CGF_MEM_CACHE, st);
}

int
ceems_cgroup_parse_cgroup2_memory_events(const char *text,
				  struct ceems_cgroup_stats *st)
{
	/* oom_kill (processes killed) rather than oom (OOM situations, some
	 * resolved without a kill) is comparable with v1's oom_kill; "max"
	 * counts charges that hit memory.max, like v1's failcnt. */
	static const char *const keys[2] = { "oom_kill", "max" };

	return parse_two_keys(text, keys, &st->oom_kills, CEEMS_CGF_OOM_KILLS,
			      &st->mem_fail_count, CEEMS_CGF_MEM_FAILS, st);
}

int
ceems_cgroup_parse_cgroup1_oom_control(const char *text,
				struct ceems_cgroup_stats *st)
{
	static const char *const keys[1] = { "oom_kill" };
	uint64_t v;
	uint32_t found;
	int ret;

	if ((ret = parse_keyed_some(text, keys, 1, &v, &found)) < 0)
		return ret;
	st->oom_kills = v;
	st->present |= CEEMS_CGF_OOM_KILLS;
	return 0;
}

/* Ticks of CLK_TCK per second to ns, without overflow on the way. */
static int
ticks_to_ns(uint64_t ticks, long clk_tck, uint64_t *ns)
{
	uint64_t hz = (uint64_t)clk_tck, whole, frac;

	if (mul_u64(ticks / hz, UINT64_C(1000000000), &whole) < 0)
		return -ERANGE;
	frac = (ticks % hz) * UINT64_C(1000000000) / hz;
	*ns = whole;
	return add_u64(ns, frac);
}

int
ceems_cgroup_parse_cgroup1_cpuacct_stat(const char *text, long clk_tck,
				 struct ceems_cgroup_stats *st)
{
	static const char *const keys[2] = { "user", "system" };
	uint64_t v[2], user_ns = 0, sys_ns = 0;
	uint32_t found;
	int ret;

	if (clk_tck <= 0 || clk_tck > 1000000)
		return -EINVAL;
	if ((ret = parse_keyed_some(text, keys, 2, v, &found)) < 0)
		return ret;
	if (((found & 1u) && ticks_to_ns(v[0], clk_tck, &user_ns) < 0) ||
	    ((found & 2u) && ticks_to_ns(v[1], clk_tck, &sys_ns) < 0))
		return -ERANGE;
	if (found & 1u) {
		st->cpu_user_ns = user_ns;
		st->present |= CEEMS_CGF_CPU_USER;
	}
	if (found & 2u) {
		st->cpu_system_ns = sys_ns;
		st->present |= CEEMS_CGF_CPU_SYSTEM;
	}
	return 0;
}

/* ------------------------------------------------------------------ */
/* IO                                                                  */
/* ------------------------------------------------------------------ */

/* A "MAJ:MIN" device number at *P, advancing past it. */
static int
take_devno(const char **p)
{
	uint64_t n;

	if (ceems_number_take_u64(p, &n) < 0 || **p != ':')
		return -EINVAL;
	(*p)++;
	if (ceems_number_take_u64(p, &n) < 0)
		return -EINVAL;
	return 0;
}

int
ceems_cgroup_parse_cgroup2_io_stat(const char *text, struct ceems_cgroup_stats *st)
{
	static const char *const keys[] = { "rbytes", "wbytes", "rios",
					    "wios" };
	uint64_t sum[4] = { 0, 0, 0, 0 };
	const char *p = text;

	while (*p != '\0') {
		if (take_devno(&p) < 0)
			return -EINVAL;
		/* " key=value" pairs up to the end of the line. */
		while (*p == ' ') {
			const char *key = ++p, *eq;
			uint64_t v;
			int ret;

			while (*p != '\0' && *p != '=' && *p != ' ' &&
			       *p != '\n')
				p++;
			if (*p != '=' || p == key)
				return -EINVAL;
			eq = p++;
			/* iocost adds cost.* keys with decimal values. */
			for (int i = 0; i < 4; i++) {
				if (strlen(keys[i]) != (size_t)(eq - key) ||
				    memcmp(key, keys[i], (size_t)(eq - key)))
					continue;
				if ((ret = ceems_number_take_u64(&p, &v)) < 0)
					return ret;
				if (add_u64(&sum[i], v) < 0)
					return -ERANGE;
				break;
			}
			while (*p != '\0' && *p != ' ' && *p != '\n')
				p++;
		}
		if (*p == '\n')
			p++;
		else if (*p != '\0')
			return -EINVAL;
	}
	st->io_read_bytes = sum[0];
	st->io_write_bytes = sum[1];
	st->io_read_ops = sum[2];
	st->io_write_ops = sum[3];
	st->present |= CEEMS_CGF_IO_READ_BYTES | CEEMS_CGF_IO_WRITE_BYTES |
		       CEEMS_CGF_IO_READ_OPS | CEEMS_CGF_IO_WRITE_OPS;
	return 0;
}

int
ceems_cgroup_parse_cgroup1_blkio(const char *text, uint64_t *read_sum,
			  uint64_t *write_sum)
{
	uint64_t r = 0, w = 0, v;
	const char *p = text;
	bool total_seen = false;
	int ret;

	while (*p != '\0') {
		const char *op;
		size_t oplen;

		if (total_seen)
			return -EINVAL;	/* "Total" is the last line */
		if (strncmp(p, "Total ", 6) == 0) {
			p += 6;
			if ((ret = ceems_number_take_u64(&p, &v)) < 0)
				return ret;
			total_seen = true;
		} else {
			if (take_devno(&p) < 0 || *p != ' ')
				return -EINVAL;
			op = ++p;
			while (*p >= 'A' && *p <= 'z')
				p++;
			oplen = (size_t)(p - op);
			if (oplen == 0 || *p != ' ')
				return -EINVAL;
			p++;
			if ((ret = ceems_number_take_u64(&p, &v)) < 0)
				return ret;
			if (oplen == 4 && memcmp(op, "Read", 4) == 0) {
				if (add_u64(&r, v) < 0)
					return -ERANGE;
			} else if (oplen == 5 && memcmp(op, "Write", 5) == 0) {
				if (add_u64(&w, v) < 0)
					return -ERANGE;
			}
		}
		if (*p == '\n')
			p++;
		else if (*p != '\0')
			return -EINVAL;
	}
	*read_sum = r;
	*write_sum = w;
	return 0;
}

/* ------------------------------------------------------------------ */
/* CPU lists                                                           */
/* ------------------------------------------------------------------ */

bool
ceems_cgroup_parse_cpuset_has(const struct ceems_cpuset *set, unsigned cpu)
{
	if (cpu >= CEEMS_CPUSET_MAX_CPUS)
		return false;
	return (set->bits[cpu / 64] >> (cpu % 64)) & 1u;
}

int
ceems_cgroup_parse_cpu_list(const char *text, struct ceems_cpuset *set)
{
	static struct ceems_cpuset empty;
	struct ceems_cpuset tmp = empty;
	const char *p = text;

	if (at_value_end(p)) {
		*set = tmp;
		return 0;
	}
	for (;;) {
		uint64_t lo, hi;
		int ret;

		if ((ret = ceems_number_take_u64(&p, &lo)) < 0)
			return ret;
		hi = lo;
		if (*p == '-') {
			p++;
			if ((ret = ceems_number_take_u64(&p, &hi)) < 0)
				return ret;
		}
		if (hi < lo)
			return -EINVAL;
		if (hi >= CEEMS_CPUSET_MAX_CPUS)
			return -ERANGE;
		for (uint64_t cpu = lo; cpu <= hi; cpu++) {
			uint64_t bit = UINT64_C(1) << (cpu % 64);

			if (!(tmp.bits[cpu / 64] & bit)) {
				tmp.bits[cpu / 64] |= bit;
				tmp.count++;
			}
		}
		if (at_value_end(p))
			break;
		if (*p != ',')
			return -EINVAL;
		p++;
	}
	*set = tmp;
	return 0;
}

bool
ceems_cgroup_parse_next_pid(const char **cursor, uint32_t *pid)
{
	for (;;) {
		const char *p = *cursor;
		char *end;
		unsigned long id;

		if (*p < '0' || *p > '9')
			return false;
		id = strtoul(p, &end, 10);
		while (*end == '\n')
			end++;
		*cursor = end;
		if (id != 0 && id <= UINT32_MAX) {
			*pid = (uint32_t)id;
			return true;
		}
	}
}
