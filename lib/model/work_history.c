/* work_history.c - a user's earlier runs of a job name, per counter of
 * work, on this node (work_history.h): kept, looked up as medians, and
 * written to and read from text.  The text comes back from a file root
 * owns, but is read as outside input all the same: a line that does not
 * parse in full is skipped, never half taken. */
#include "config.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/work_history.h"

uint64_t
ceems_work_history_name_hash(const char *name)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
		h ^= *p;
		h *= 0x100000001b3ULL;
	}
	return h;
}

/* The index of the key, or CEEMS_WORK_HISTORY_KEYS when none. */
static size_t
find(const struct ceems_work_history *h, uint32_t uid, uint64_t hash,
     const char *counter, const char *unit)
{
	for (size_t i = 0; i < CEEMS_WORK_HISTORY_KEYS; i++) {
		const struct ceems_work_history_key *k = &h->keys[i];

		if (k->used != 0 && k->uid == uid && k->name_hash == hash &&
		    strcmp(k->counter, counter) == 0 && strcmp(k->unit, unit) == 0)
			return i;
	}
	return CEEMS_WORK_HISTORY_KEYS;
}

/* A free key, or the least recently used one, emptied. */
static struct ceems_work_history_key *
take_key(struct ceems_work_history *h)
{
	struct ceems_work_history_key *oldest = &h->keys[0];

	for (size_t i = 0; i < CEEMS_WORK_HISTORY_KEYS; i++) {
		if (h->keys[i].used == 0) {
			oldest = &h->keys[i];
			break;
		}
		if (h->keys[i].used < oldest->used)
			oldest = &h->keys[i];
	}
	memset(oldest, 0, sizeof(*oldest));
	return oldest;
}

/* One run into key K, the oldest dropped when K is full. */
static void
push(struct ceems_work_history_key *k, double epw, double cpu_eff)
{
	if (k->n == CEEMS_WORK_HISTORY_RUNS) {
		memmove(k->epw, k->epw + 1, sizeof(k->epw[0]) * (k->n - 1));
		memmove(k->cpu_eff, k->cpu_eff + 1, sizeof(k->cpu_eff[0]) * (k->n - 1));
		k->n--;
	}
	k->epw[k->n] = epw;
	k->cpu_eff[k->n] = isfinite(cpu_eff) && cpu_eff >= 0 ? cpu_eff : NAN;
	k->n++;
}

void
ceems_work_history_add(struct ceems_work_history *h, uint32_t uid,
		       const char *name, const char *counter, const char *unit,
		       double epw, double cpu_eff)
{
	uint64_t hash = ceems_work_history_name_hash(name);
	struct ceems_work_history_key *k;
	size_t i;

	if (!isfinite(epw) || epw <= 0 || !ceems_marks_name_ok(counter) ||
	    !ceems_marks_name_ok(unit))
		return;
	i = find(h, uid, hash, counter, unit);
	k = i < CEEMS_WORK_HISTORY_KEYS ? &h->keys[i] : NULL;
	if (k == NULL) {
		k = take_key(h);
		k->uid = uid;
		k->name_hash = hash;
		memcpy(k->counter, counter, strlen(counter) + 1);
		memcpy(k->unit, unit, strlen(unit) + 1);
	}
	push(k, epw, cpu_eff);
	k->used = ++h->clock;
}

bool
ceems_work_history_seen(struct ceems_work_history *h, uint32_t jobid)
{
	for (unsigned i = 0; i < CEEMS_WORK_HISTORY_RECENT; i++)
		if (h->recent[i] == jobid)
			return true;
	h->recent[h->recent_next] = jobid;
	h->recent_next = (h->recent_next + 1) % CEEMS_WORK_HISTORY_RECENT;
	return false;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The median of the finite values of V (N of them), NaN when none. */
static double
median(const double *v, uint32_t n)
{
	double s[CEEMS_WORK_HISTORY_RUNS];
	uint32_t m = 0;

	for (uint32_t i = 0; i < n && i < CEEMS_WORK_HISTORY_RUNS; i++)
		if (isfinite(v[i]))
			s[m++] = v[i];
	if (m == 0)
		return NAN;
	qsort(s, m, sizeof(s[0]), cmp_double);
	return m % 2 ? s[m / 2] : (s[m / 2 - 1] + s[m / 2]) / 2;
}

void
ceems_work_history_median(const struct ceems_work_history *h, uint32_t uid,
			  const char *name, const char *counter,
			  const char *unit, struct ceems_work_history_median *out)
{
	size_t i = find(h, uid, ceems_work_history_name_hash(name), counter, unit);
	const struct ceems_work_history_key *k =
		i < CEEMS_WORK_HISTORY_KEYS ? &h->keys[i] : NULL;

	out->runs = k != NULL ? k->n : 0;
	out->epw = k != NULL ? median(k->epw, k->n) : NAN;
	out->cpu_eff = k != NULL ? median(k->cpu_eff, k->n) : NAN;
}

static int
by_use(const void *a, const void *b)
{
	const struct ceems_work_history_key *x = *(const struct ceems_work_history_key *const *)a;
	const struct ceems_work_history_key *y = *(const struct ceems_work_history_key *const *)b;

	return (x->used > y->used) - (x->used < y->used);
}

int
ceems_work_history_format(const struct ceems_work_history *h, char *buf,
			  size_t size)
{
	const struct ceems_work_history_key *order[CEEMS_WORK_HISTORY_KEYS];
	size_t len = 0, nkeys = 0;
	int n;

	if (size == 0)
		return -ENOSPC;
	buf[0] = '\0';
	/* Least recently used first: read back in order, the keys keep
	 * their order of use. */
	for (size_t i = 0; i < CEEMS_WORK_HISTORY_KEYS; i++)
		if (h->keys[i].used != 0)
			order[nkeys++] = &h->keys[i];
	qsort(order, nkeys, sizeof(order[0]), by_use);
	for (size_t i = 0; i < nkeys; i++) {
		const struct ceems_work_history_key *k = order[i];

		n = snprintf(buf + len, size - len, "%u %016" PRIx64 " %s %s",
			     k->uid, k->name_hash, k->counter, k->unit);
		for (uint32_t r = 0; n >= 0 && (size_t)n < size - len && r < k->n; r++)
			n += snprintf(buf + len + (size_t)n, size - len - (size_t)n,
				      " %.17g:%.17g", k->epw[r], k->cpu_eff[r]);
		if (n < 0 || (size_t)n + 1 >= size - len) {
			buf[0] = '\0';
			return -ENOSPC;
		}
		len += (size_t)n;
		buf[len++] = '\n';
		buf[len] = '\0';
	}
	return (int)len;
}

/* One line of the text form into K: 0, or -1 when it does not parse. */
static int
parse_line(const char *line, struct ceems_work_history_key *k)
{
	char counter[64], unit[64];
	unsigned long uid;
	uint64_t hash;
	int used;
	const char *p;

	memset(k, 0, sizeof(*k));
	if (sscanf(line, "%lu %" SCNx64 " %63s %63s%n", &uid, &hash, counter,
		   unit, &used) != 4 || uid > UINT32_MAX ||
	    !ceems_marks_name_ok(counter) || !ceems_marks_name_ok(unit))
		return -1;
	k->uid = (uint32_t)uid;
	k->name_hash = hash;
	memcpy(k->counter, counter, strlen(counter) + 1);
	memcpy(k->unit, unit, strlen(unit) + 1);
	for (p = line + used; *p == ' ';) {
		char *end;
		double epw = strtod(p + 1, &end), cpu;

		if (end == p + 1 || *end != ':' || !isfinite(epw) || epw <= 0 ||
		    k->n == CEEMS_WORK_HISTORY_RUNS)
			return -1;
		p = end + 1;
		cpu = strtod(p, &end);
		if (end == p)
			return -1;
		push(k, epw, cpu);
		p = end;
	}
	return *p == '\0' && k->n > 0 ? 0 : -1;
}

int
ceems_work_history_parse(struct ceems_work_history *h, const char *text)
{
	int skipped = 0;

	memset(h, 0, sizeof(*h));
	for (const char *p = text; *p != '\0';) {
		size_t len = strcspn(p, "\n");
		char line[CEEMS_WORK_HISTORY_TEXT_MAX / CEEMS_WORK_HISTORY_KEYS];
		struct ceems_work_history_key k;

		if (len < sizeof(line)) {
			memcpy(line, p, len);
			line[len] = '\0';
		}
		if (len >= sizeof(line) || parse_line(line, &k) < 0 ||
		    find(h, k.uid, k.name_hash, k.counter, k.unit) < CEEMS_WORK_HISTORY_KEYS ||
		    h->clock >= CEEMS_WORK_HISTORY_KEYS)
			skipped++;
		else {
			k.used = ++h->clock;
			h->keys[h->clock - 1] = k;
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	return skipped;
}
