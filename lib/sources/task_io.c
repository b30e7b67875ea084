/* task_io.c - a job's IO from the kernel's per-process counters, read
 * once per tick (task_io.h): the parser of /proc/PID/io, the tracker
 * that turns a tick's readings into the job's total, and the reading of
 * one process. */
#include "config.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "base/number.h"
#include "sources/proc_stats.h"
#include "sources/task_io.h"

/* A parent's debt lasts this many readings (task_io.h). */
#define DEBT_READINGS 2
/* Ancestors looked through for a gone process's reaper. */
#define ANCESTRY_MAX 64

static const struct {
	const char *name;
	size_t offset;
} io_lines[] = {
	{ "rchar", offsetof(struct ceems_task_io_counts, rchar) },
	{ "wchar", offsetof(struct ceems_task_io_counts, wchar) },
	{ "syscr", offsetof(struct ceems_task_io_counts, syscr) },
	{ "syscw", offsetof(struct ceems_task_io_counts, syscw) },
};
#define NIO_LINES (sizeof(io_lines) / sizeof(io_lines[0]))

int
ceems_task_io_parse(const char *text, struct ceems_task_io_counts *out)
{
	struct ceems_task_io_counts c = { 0 };
	unsigned found = 0;
	const char *p = text;

	while (*p != '\0') {
		const char *colon = strchr(p, ':'), *eol = strchr(p, '\n');
		size_t len;

		if (eol == NULL)
			eol = p + strlen(p);
		if (colon == NULL || colon > eol)
			return -EINVAL;
		len = (size_t)(colon - p);
		for (size_t i = 0; i < NIO_LINES; i++) {
			const char *v = colon + 1;
			uint64_t n;
			int r;

			if (strlen(io_lines[i].name) != len ||
			    memcmp(io_lines[i].name, p, len) != 0)
				continue;
			if (found & (1u << i))
				return -EINVAL;	/* twice: not the kernel's */
			while (*v == ' ')
				v++;
			if ((r = ceems_number_take_u64(&v, &n)) < 0)
				return r;
			if (v != eol)
				return -EINVAL;
			memcpy((char *)&c + io_lines[i].offset, &n, sizeof(n));
			found |= 1u << i;
		}
		p = *eol == '\n' ? eol + 1 : eol;
	}
	if (found != (1u << NIO_LINES) - 1)
		return -EINVAL;
	*out = c;
	return 0;
}

struct entry {
	uint32_t pid, ppid;
	uint64_t start;
	bool counted;
	bool matched;			/* seen again at this reading */
	struct ceems_task_io_counts last;
	struct ceems_task_io_counts now;	/* this reading's */
	/* What this process's counter will take from reaped children that
	 * the total already holds (task_io.h), for DEBT_LEFT readings. */
	struct ceems_task_io_counts debt;
	unsigned debt_left;
	/* Not counted, and a counted child of it went (task_io.h). */
	bool reaper;
};

struct ceems_task_io_job {
	struct entry *e;		/* sorted by pid */
	size_t n;
	bool baseline;
	struct ceems_task_io_counts total;
};

struct ceems_task_io_job *
ceems_task_io_job_new(bool baseline)
{
	struct ceems_task_io_job *t = calloc(1, sizeof(*t));

	if (t != NULL)
		t->baseline = baseline;
	return t;
}

void
ceems_task_io_job_free(struct ceems_task_io_job *t)
{
	if (t == NULL)
		return;
	free(t->e);
	free(t);
}

void
ceems_task_io_job_total(const struct ceems_task_io_job *t,
			struct ceems_task_io_counts *total)
{
	*total = t->total;
}

static int
by_pid(const void *a, const void *b)
{
	uint32_t x = ((const struct ceems_task_io_sample *)a)->pid;
	uint32_t y = ((const struct ceems_task_io_sample *)b)->pid;

	return x < y ? -1 : x > y;
}

/* The entry of PID in E (N, sorted), or NULL. */
static struct entry *
find(struct entry *e, size_t n, uint32_t pid)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (e[mid].pid == pid)
			return &e[mid];
		if (e[mid].pid < pid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

static void
add(struct ceems_task_io_counts *to, const struct ceems_task_io_counts *c)
{
	to->rchar += c->rchar;
	to->wchar += c->wchar;
	to->syscr += c->syscr;
	to->syscw += c->syscw;
}

/* NOW - THEN, field by field, not below 0 (a counter only grows). */
static struct ceems_task_io_counts
growth(const struct ceems_task_io_counts *now,
       const struct ceems_task_io_counts *then)
{
	struct ceems_task_io_counts d;

	d.rchar = now->rchar > then->rchar ? now->rchar - then->rchar : 0;
	d.wchar = now->wchar > then->wchar ? now->wchar - then->wchar : 0;
	d.syscr = now->syscr > then->syscr ? now->syscr - then->syscr : 0;
	d.syscw = now->syscw > then->syscw ? now->syscw - then->syscw : 0;
	return d;
}

/* Take from *V what *DEBT holds, as far as it goes. */
static void
pay(uint64_t *v, uint64_t *debt)
{
	uint64_t p = *v < *debt ? *v : *debt;

	*v -= p;
	*debt -= p;
}

/* Gone process G (of OLD, N_OLD) made a debt to the nearest of its
 * ancestors seen now (in NEW, N_NEW), if that one is counted: its
 * counter takes G's when it reaps G. */
static void
owe(const struct entry *g, struct entry *old, size_t n_old,
    struct entry *new, size_t n_new)
{
	uint32_t ppid = g->ppid;

	for (int depth = 0; depth < ANCESTRY_MAX && ppid != 0; depth++) {
		struct entry *p = find(new, n_new, ppid);
		const struct entry *gone;

		if (p != NULL) {
			add(&p->debt, &g->last);
			add(&p->debt, &g->debt);
			p->debt_left = DEBT_READINGS;
			p->reaper = !p->counted;
			return;
		}
		/* Its parent went too: that one's reaper took both. */
		gone = find(old, n_old, ppid);
		if (gone == NULL || !gone->counted)
			return;
		ppid = gone->ppid;
	}
}

int
ceems_task_io_job_update(struct ceems_task_io_job *t,
			 struct ceems_task_io_sample *s, size_t n)
{
	struct entry *ne = calloc(n > 0 ? n : 1, sizeof(*ne));
	size_t nn = 0;

	if (ne == NULL)
		return -ENOMEM;
	if (n > 0)
		qsort(s, n, sizeof(*s), by_pid);
	for (size_t i = 0; i < t->n; i++)
		t->e[i].matched = false;
	for (size_t i = 0; i < n; i++) {
		struct entry *old = find(t->e, t->n, s[i].pid), *e;

		if (nn > 0 && ne[nn - 1].pid == s[i].pid)
			continue;	/* listed twice */
		e = &ne[nn++];
		e->pid = s[i].pid;
		e->ppid = s[i].ppid;
		e->start = s[i].start;
		e->counted = s[i].counted;
		e->now = s[i].c;
		if (old != NULL && old->start == s[i].start) {
			old->matched = true;
			e->last = old->last;
			e->debt = old->debt;
			e->debt_left = old->debt_left;
			e->reaper = old->reaper;
		} else if (t->baseline) {
			e->last = s[i].c;	/* counted before */
		}
	}
	for (size_t i = 0; i < t->n; i++)
		if (!t->e[i].matched && t->e[i].counted)
			owe(&t->e[i], t->e, t->n, ne, nn);
	for (size_t i = 0; i < nn; i++) {
		struct entry *e = &ne[i];
		struct ceems_task_io_counts d = growth(&e->now, &e->last);

		e->last = e->now;
		pay(&d.rchar, &e->debt.rchar);
		pay(&d.wchar, &e->debt.wchar);
		pay(&d.syscr, &e->debt.syscr);
		pay(&d.syscw, &e->debt.syscw);
		if (e->counted) {
			add(&t->total, &d);
		} else if (e->reaper && e->debt.rchar == 0 && e->debt.wchar == 0 &&
			   e->debt.syscr == 0 && e->debt.syscw == 0) {
			/* It reaped the job's process in this interval: its
			 * growth beyond what was counted is that process's
			 * tail, with its own IO of the interval. */
			add(&t->total, &d);
			e->reaper = false;
		}
		if (e->debt_left > 0 && --e->debt_left == 0) {
			memset(&e->debt, 0, sizeof(e->debt));
			e->reaper = false;
		}
	}
	free(t->e);
	t->e = ne;
	t->n = nn;
	t->baseline = false;
	return 0;
}

int
ceems_task_io_read_pid(const char *procfs, uint32_t pid, uint32_t uid,
		       struct ceems_task_io_sample *s)
{
	char text[1024];
	uint64_t ppid, start;
	uint32_t ruid;
	ssize_t len;
	int r;

	len = ceems_proc_stats_read_pid_file(procfs, pid, "stat", text, sizeof(text));
	if (len < 0)
		return (int)len;
	if ((r = ceems_proc_stats_parse_pid_field(text, 4, &ppid)) < 0 ||
	    (r = ceems_proc_stats_parse_pid_field(text, 22, &start)) < 0)
		return r;
	if (ppid > UINT32_MAX)
		return -ERANGE;
	if ((r = ceems_proc_stats_pid_uid(procfs, pid, &ruid)) < 0)
		return r;
	len = ceems_proc_stats_read_pid_file(procfs, pid, "io", text, sizeof(text));
	if (len < 0)
		return (int)len;
	if ((r = ceems_task_io_parse(text, &s->c)) < 0)
		return r;
	s->pid = pid;
	s->ppid = (uint32_t)ppid;
	s->start = start;
	s->uid = ruid;
	s->counted = ruid == uid;
	return 0;
}
