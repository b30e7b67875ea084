/* proc_stats.c - node CPU time from /proc/stat and node memory from
 * /proc/meminfo: pure parsers, and a reader that keeps both files open. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"
#include "base/hotmem.h"
#include "base/number.h"
#include "sources/proc_stats.h"
#include "base/tick_path.h"

/* Ticks of CLK_TCK per second to ns, without overflow on the way. */
static int
ticks_to_ns(uint64_t ticks, uint64_t hz, uint64_t *ns)
{
	uint64_t whole = ticks / hz, frac;

	if (whole > UINT64_MAX / UINT64_C(1000000000))
		return -ERANGE;
	whole *= UINT64_C(1000000000);
	frac = (ticks % hz) * UINT64_C(1000000000) / hz;
	if (whole > UINT64_MAX - frac)
		return -ERANGE;
	*ns = whole + frac;
	return 0;
}

/* The modes every kernel since 2.6.11 prints, in order. */
enum { M_USER, M_NICE, M_SYSTEM, M_IDLE, M_IOWAIT, M_IRQ, M_SOFTIRQ,
       M_STEAL, NMODES };

/* Parse the numbers of one cpu line from P to END (exclusive). */
static int
parse_cpu_numbers(const char *p, const char *end, uint64_t ticks[NMODES])
{
	int n = 0;

	while (p < end) {
		uint64_t v;
		int ret;

		if (*p != ' ')
			return -EINVAL;
		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;		/* trailing spaces */
		if ((ret = ceems_number_take_u64(&p, &v)) < 0)
			return ret;
		/* guest and guest_nice are already inside user and nice. */
		if (n < NMODES)
			ticks[n] = v;
		n++;
	}
	return n >= NMODES ? 0 : -EINVAL;
}

/* Check a per-CPU line from P (just after "cpu") to END (its newline)
 * without converting its numbers: the agent uses only how many such
 * lines there are.  It counts when it is "cpuN " followed by nothing but
 * digits and spaces, so that a stray or mangled line is an error rather
 * than a CPU.  Neither the size nor the number of its fields is checked:
 * none of them is used, and counting them would cost most of what
 * skipping the conversion saves (strspn checks 16 bytes at a time). */
static int
check_cpu_line(const char *p, const char *end)
{
	if (p == end || *p < '0' || *p > '9')
		return -EINVAL;		/* "cpu" without a CPU number */
	while (p < end && *p >= '0' && *p <= '9')
		p++;
	if (p == end || *p != ' ')
		return -EINVAL;
	if (p + strspn(p, " 0123456789") != end)
		return -EINVAL;
	return 0;
}

/* As ceems_proc_stats_parse_proc_stat; *SAW_END tells whether the line after the
 * last cpuN line was seen (else TEXT may have been cut short). */
CEEMS_TICK_PATH static int
parse_proc_stat(const char *text, long clk_tck, struct ceems_node_cpu *out,
		bool *saw_end)
{
	uint64_t ticks[NMODES], ns[NMODES], hz = (uint64_t)clk_tck;
	struct ceems_node_cpu cpu;
	const char *line = text;
	bool have_total = false;
	uint32_t ncpus = 0;
	int ret;

	*saw_end = false;
	if (clk_tck <= 0 || clk_tck > 1000000)
		return -EINVAL;
	while (*line != '\0') {
		const char *eol = strchr(line, '\n');

		if (strncmp(line, "cpu", 3) != 0) {
			*saw_end = true;
			break;
		}
		if (eol == NULL)
			return -EINVAL;	/* a cut cpu line */
		if (line[3] == ' ') {
			if (have_total || ncpus > 0)
				return -EINVAL;
			ret = parse_cpu_numbers(line + 3, eol, ticks);
			if (ret < 0)
				return ret;
			have_total = true;
		} else {
			if (!have_total || check_cpu_line(line + 3, eol) < 0)
				return -EINVAL;
			ncpus++;
		}
		line = eol + 1;
	}
	if (!have_total)
		return -EINVAL;
	for (int m = 0; m < NMODES; m++)
		if (ticks_to_ns(ticks[m], hz, &ns[m]) < 0)
			return -ERANGE;

	memset(&cpu, 0, sizeof(cpu));
	cpu.user_ns = ns[M_USER];
	cpu.nice_ns = ns[M_NICE];
	cpu.system_ns = ns[M_SYSTEM];
	cpu.idle_ns = ns[M_IDLE];
	cpu.iowait_ns = ns[M_IOWAIT];
	cpu.irq_ns = ns[M_IRQ];
	cpu.softirq_ns = ns[M_SOFTIRQ];
	cpu.steal_ns = ns[M_STEAL];
	cpu.ncpus = ncpus;
	{
		const uint64_t busy[] = { cpu.user_ns, cpu.nice_ns,
					  cpu.system_ns, cpu.irq_ns,
					  cpu.softirq_ns };
		const uint64_t rest[] = { cpu.idle_ns, cpu.iowait_ns };

		for (size_t i = 0; i < sizeof(busy) / sizeof(busy[0]); i++) {
			if (cpu.busy_ns > UINT64_MAX - busy[i])
				return -ERANGE;
			cpu.busy_ns += busy[i];
		}
		cpu.total_ns = cpu.busy_ns;
		for (size_t i = 0; i < sizeof(rest) / sizeof(rest[0]); i++) {
			if (cpu.total_ns > UINT64_MAX - rest[i])
				return -ERANGE;
			cpu.total_ns += rest[i];
		}
	}
	*out = cpu;
	return 0;
}

int
ceems_proc_stats_parse_proc_stat(const char *text, long clk_tck,
		      struct ceems_node_cpu *out)
{
	bool saw_end;

	return parse_proc_stat(text, clk_tck, out, &saw_end);
}

int
ceems_proc_stats_parse_proc_meminfo(const char *text, struct ceems_node_mem *out)
{
	static const struct {
		const char *key;
		uint32_t field;
	} wanted[] = {
		{ "MemTotal", CEEMS_NMF_TOTAL },
		{ "MemFree", CEEMS_NMF_FREE },
		{ "MemAvailable", CEEMS_NMF_AVAILABLE },
		{ "Buffers", CEEMS_NMF_BUFFERS },
		{ "Cached", CEEMS_NMF_CACHED },
		{ "AnonPages", CEEMS_NMF_ANON_PAGES },
		{ "Shmem", CEEMS_NMF_SHMEM },
		{ "SwapTotal", CEEMS_NMF_SWAP_TOTAL },
		{ "SwapFree", CEEMS_NMF_SWAP_FREE },
	};
	struct ceems_node_mem mem;
	/* In the order of wanted[]. */
	uint64_t *const dst[] = {
		&mem.total, &mem.free, &mem.available, &mem.buffers,
		&mem.cached, &mem.anon_pages, &mem.shmem, &mem.swap_total,
		&mem.swap_free,
	};
	const char *line = text;

	memset(&mem, 0, sizeof(mem));
	while (*line != '\0') {
		const char *eol = strchr(line, '\n');
		const char *end = eol ? eol : line + strlen(line);
		const char *colon = memchr(line, ':', (size_t)(end - line));
		size_t klen;

		if (colon == NULL || colon == line)
			return -EINVAL;
		klen = (size_t)(colon - line);
		for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++) {
			const char *p = colon + 1;
			uint64_t kib;
			int ret;

			if (strlen(wanted[i].key) != klen ||
			    memcmp(line, wanted[i].key, klen) != 0)
				continue;
			if (mem.present & wanted[i].field)
				return -EINVAL;
			while (p < end && *p == ' ')
				p++;
			if ((ret = ceems_number_take_u64(&p, &kib)) < 0)
				return ret;
			if ((size_t)(end - p) != 3 || memcmp(p, " kB", 3) != 0)
				return -EINVAL;
			if (kib > UINT64_MAX / 1024)
				return -ERANGE;
			*dst[i] = kib * 1024;
			mem.present |= wanted[i].field;
			break;
		}
		if (eol == NULL)
			break;
		line = eol + 1;
	}
	if (!(mem.present & CEEMS_NMF_TOTAL))
		return -ENODATA;
	*out = mem;
	return 0;
}

/* /proc/stat holds a line per CPU before the (long) interrupt lines: we
 * read only its head, growing the buffer (rarely: at the first read on a
 * large machine) until the cpu lines fit. */
#define STAT_BUF_START (64 * 1024)
#define STAT_BUF_MAX (4 * 1024 * 1024)
#define MEMINFO_BUF 8192

struct ceems_proc_reader {
	int stat_fd;
	int meminfo_fd;
	long clk_tck;
	char *stat_buf;
	size_t stat_size;
	char meminfo_buf[MEMINFO_BUF];
};

struct ceems_proc_reader *
ceems_proc_stats_reader_open(const char *procfs_root, int *err)
{
	struct ceems_proc_reader *r;
	char path[4096];
	int n;
	long hz;

	r = ceems_hotmem_calloc(1, sizeof(*r));
	if (r == NULL) {
		*err = -ENOMEM;
		return NULL;
	}
	r->stat_fd = r->meminfo_fd = -1;
	hz = sysconf(_SC_CLK_TCK);
	r->clk_tck = hz > 0 ? hz : 100;
	r->stat_size = STAT_BUF_START;
	r->stat_buf = malloc(r->stat_size);
	if (r->stat_buf == NULL) {
		*err = -ENOMEM;
		goto fail;
	}
	n = snprintf(path, sizeof(path), "%s/stat", procfs_root);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		*err = -ENAMETOOLONG;
		goto fail;
	}
	r->stat_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (r->stat_fd < 0) {
		*err = -errno;
		goto fail;
	}
	snprintf(path, sizeof(path), "%s/meminfo", procfs_root);
	r->meminfo_fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY);
	if (r->meminfo_fd < 0) {
		*err = -errno;
		goto fail;
	}
	*err = 0;
	return r;
fail:
	ceems_proc_stats_reader_close(r);
	return NULL;
}

void
ceems_proc_stats_reader_close(struct ceems_proc_reader *r)
{
	if (r == NULL)
		return;
	if (r->stat_fd >= 0)
		close(r->stat_fd);
	if (r->meminfo_fd >= 0)
		close(r->meminfo_fd);
	free(r->stat_buf);
	ceems_hotmem_free(r);
}

/* One read from the start, NUL-terminated: enough when it holds every
 * cpu line, the kernel making the file whole at each read.  0 when it
 * does not (read to the end then, below), 1 when *OUT and *RET are set. */
CEEMS_TICK_PATH static int
read_cpu_once(struct ceems_proc_reader *r, struct ceems_node_cpu *out, int *ret)
{
	struct ceems_node_cpu cpu;
	bool saw_end = false;
	ssize_t n;

	do {
		n = pread(r->stat_fd, r->stat_buf, r->stat_size - 1, 0);
	} while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	r->stat_buf[n] = '\0';
	*ret = parse_proc_stat(r->stat_buf, r->clk_tck, &cpu, &saw_end);
	if (!saw_end)
		return 0;
	if (*ret == 0)
		*out = cpu;
	return 1;
}

CEEMS_TICK_PATH int
ceems_proc_stats_read_cpu(struct ceems_proc_reader *r, struct ceems_node_cpu *out)
{
	int once;

	if (read_cpu_once(r, out, &once) == 1)
		return once;
	for (;;) {
		ssize_t n = ceems_fileio_pread_head(r->stat_fd, r->stat_buf, r->stat_size);
		struct ceems_node_cpu cpu;
		bool saw_end;
		char *bigger;
		int ret;

		if (n < 0)
			return (int)n;
		ret = parse_proc_stat(r->stat_buf, r->clk_tck, &cpu, &saw_end);
		/* Done when the whole file, or all its cpu lines, fit. */
		if ((size_t)n < r->stat_size - 1 || saw_end) {
			if (ret == 0)
				*out = cpu;
			return ret;
		}
		if (r->stat_size >= STAT_BUF_MAX)
			return -EFBIG;
		bigger = realloc(r->stat_buf, r->stat_size * 2);
		if (bigger == NULL)
			return -ENOMEM;
		r->stat_buf = bigger;
		r->stat_size *= 2;
	}
}

int
ceems_proc_stats_read_mem(struct ceems_proc_reader *r, struct ceems_node_mem *out)
{
	ssize_t n = ceems_fileio_pread_text(r->meminfo_fd, r->meminfo_buf,
				     sizeof(r->meminfo_buf));

	if (n < 0)
		return (int)n;
	return ceems_proc_stats_parse_proc_meminfo(r->meminfo_buf, out);
}

int
ceems_proc_stats_parse_proc_status_uid(const char *text, uint32_t *uid)
{
	const char *line = text;
	uint64_t v;
	int ret;

	while (line != NULL && strncmp(line, "Uid:", 4) != 0) {
		line = strchr(line, '\n');
		if (line != NULL)
			line++;
	}
	if (line == NULL)
		return -EINVAL;
	line += 4;
	while (*line == '\t' || *line == ' ')
		line++;
	if ((ret = ceems_number_take_u64(&line, &v)) < 0)
		return ret;
	if (*line != '\t' && *line != ' ' && *line != '\n' && *line != '\0')
		return -EINVAL;
	if (v > UINT32_MAX)
		return -ERANGE;
	*uid = (uint32_t)v;
	return 0;
}

int
ceems_proc_stats_parse_pid_field(const char *text, int want, uint64_t *out)
{
	/* The command, in parentheses, may hold anything, spaces and ')'
	 * included: the fields count from the last ')'. */
	const char *p = strrchr(text, ')');
	uint64_t v;
	int field = 2, ret;

	if (p == NULL || want < 3)
		return -EINVAL;
	for (p++; *p != '\0' && field < want; p++)
		if (*p == ' ')
			field++;
	if (field != want)
		return -EINVAL;
	if ((ret = ceems_number_take_u64(&p, &v)) < 0)
		return ret;
	if (*p != ' ' && *p != '\n' && *p != '\0')
		return -EINVAL;
	*out = v;
	return 0;
}

int
ceems_proc_stats_parse_pid_start(const char *text, uint64_t *ticks)
{
	return ceems_proc_stats_parse_pid_field(text, 22, ticks);
}

ssize_t
ceems_proc_stats_read_pid_file(const char *procfs, uint32_t pid, const char *name, char *buf,
	      size_t size)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s/%u/%s", procfs, pid, name) >=
	    (int)sizeof(path))
		return -ENAMETOOLONG;
	return ceems_fileio_read_text_file(path, buf, size);
}

int
ceems_proc_stats_pid_uid(const char *procfs, uint32_t pid, uint32_t *uid)
{
	char text[4096];
	ssize_t n = ceems_proc_stats_read_pid_file(procfs, pid, "status", text, sizeof(text));

	return n < 0 ? (int)n : ceems_proc_stats_parse_proc_status_uid(text, uid);
}

int
ceems_proc_stats_pid_start(const char *procfs, uint32_t pid, uint64_t *ticks)
{
	char text[1024];
	ssize_t n = ceems_proc_stats_read_pid_file(procfs, pid, "stat", text, sizeof(text));

	return n < 0 ? (int)n : ceems_proc_stats_parse_pid_start(text, ticks);
}
