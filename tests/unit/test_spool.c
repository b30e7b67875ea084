/* test_spool.c - the durable spool and the storage front door without a
 * database: file names, crash-safe writes, listing order, quarantine of
 * corrupted files, the soft size cap, the rejected folder, and the last
 * resort of logging a record whole when no file can be written.  The
 * full filesystem (a small tmpfs) and the real PostgreSQL are in
 * tests/integration/storage.bats. */
#include "config.h"

#include <sys/file.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "base/conf.h"
#include "base/fileio.h"
#include "base/log.h"
#include "record/record.h"
#include "record/spool.h"
#include "record/spool_usage.h"
#include "record/storage.h"
#include "../tap.h"

static int
remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path) < 0 ? -1 : 0;
}

static void
remove_tree(const char *root)
{
	nftw(root, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* ---- a writer that hangs ---- */

static void
on_alarm(int sig)
{
	static const char msg[] = "not ok - a spool write waited 5 s for the .usage lock\n";

	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

static void
on_fifo_alarm(int sig)
{
	static const char msg[] = "not ok - reading a FIFO named like a record waited 5 s\n";

	(void)sig;
	(void)!write(STDOUT_FILENO, msg, sizeof(msg) - 1);
	_exit(1);
}

/* ---- captured log ---- */

#define LOG_LINES 512
/* The bytes of the records ceems_spool_list lists in DIR, summed from
 * the files themselves: what .usage must agree with. */
static uint64_t
record_bytes(const char *dir, const struct ceems_spool_list *list)
{
	char path[4096];
	struct stat st;
	uint64_t sum = 0;

	for (size_t i = 0; i < list->count; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, list->names[i]);
		if (lstat(path, &st) == 0)
			sum += (uint64_t)st.st_size;
	}
	return sum;
}

static char log_lines[LOG_LINES][1024];
static int log_levels[LOG_LINES];
static int nlog;

static void
capture(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (nlog < LOG_LINES) {
		snprintf(log_lines[nlog], sizeof(log_lines[0]), "%s", message);
		log_levels[nlog] = (int)level;
		nlog++;
	}
}

static int
count_log(enum ceems_log_level level, const char *needle)
{
	int n = 0;

	for (int i = 0; i < nlog; i++)
		if (log_levels[i] == (int)level && strstr(log_lines[i], needle) != NULL)
			n++;
	return n;
}

/* ---- records ---- */

static void
make_record(struct ceems_job_record *r, uint32_t jobid, int64_t written_at,
	    const char *cluster, const char *node, const char *name)
{
	struct ceems_job_meta meta;
	struct ceems_agent_job_report rep;

	ceems_job_meta_init(&meta);
	meta.jobid = jobid;
	meta.uid = 1000;
	snprintf(meta.cluster, sizeof(meta.cluster), "%s", cluster);
	snprintf(meta.node, sizeof(meta.node), "%s", node);
	snprintf(meta.name, sizeof(meta.name), "%s", name);
	snprintf(meta.state, sizeof(meta.state), "COMPLETED");
	meta.submit_time = written_at - 700;
	meta.start_time = written_at - 600;
	meta.end_time = written_at - 1;
	memset(&rep, 0, sizeof(rep));
	rep.jobid = jobid;
	rep.uid = 1000;
	rep.elapsed_s = 599;
	ceems_job_figures_ledger_init(&rep.ledger);
	rep.ledger.lifetime_s = 599;
	rep.ledger.measured[CEEMS_DOMAIN_PACKAGE] = true;
	rep.ledger.joules[CEEMS_DOMAIN_PACKAGE] = 1000.0 + jobid;
	rep.ledger.covered_s[CEEMS_DOMAIN_PACKAGE] = 599;
	ceems_record_build(r, &meta, &rep, "extern", written_at);
}

static char text[CEEMS_RECORD_MAX + 1];

static int
put(const char *dir, uint64_t cap, const struct ceems_job_record *r,
    char *name, size_t name_size)
{
	char err[512];
	int n = ceems_record_encode(r, text, sizeof(text));

	if (n < 0)
		return n;
	return ceems_spool_put(dir, cap, r, text, (size_t)n, name, name_size, err,
			       sizeof(err));
}

static const char *
new_dir(void)
{
	static char root[256];

	snprintf(root, sizeof(root), "%s/ceems-spool-XXXXXX",
		 getenv("TMPDIR") != NULL ? getenv("TMPDIR") : "/tmp");
	if (mkdtemp(root) == NULL) {
		printf("Bail out! mkdtemp: %s\n", strerror(errno));
		exit(1);
	}
	return root;
}

static bool
exists(const char *dir, const char *name)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return lstat(path, &st) == 0;
}

/* The text of a .why file, without its final newline; 0 or -1. */
static int
read_why(const char *path, char *buf, size_t size)
{
	ssize_t n = ceems_fileio_read_text_file(path, buf, size);

	if (n <= 0)
		return -1;
	if (buf[n - 1] == '\n')
		buf[n - 1] = '\0';
	return 0;
}

static void
write_file(const char *dir, const char *name, const char *content, size_t len)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0640);
	if (fd < 0 || write(fd, content, len) != (ssize_t)len) {
		printf("Bail out! write %s: %s\n", path, strerror(errno));
		exit(1);
	}
	close(fd);
}

/* ---- tests ---- */

static void
test_names(void)
{
	static struct ceems_job_record r;
	char name[CEEMS_SPOOL_NAME_MAX];

	make_record(&r, 4242, 1763790611, "bed rock/../x", "node01.cluster", "n");
	is_int(ceems_spool_name(&r, name, sizeof(name)), 0, "name built");
	is_str(name, "001763790611-bed_rock_.._x-4242-1763790011-node01.cluster.json",
	       "time first, zero-padded; odd characters replaced, no '/' left");
	make_record(&r, 7, 1763790611, "", "", "n");
	r.meta.start_time = 0;
	is_int(ceems_spool_name(&r, name, sizeof(name)), 0, "name without cluster and node");
	is_str(name, "001763790611-_-7-0-_.json", "unknown parts are '_' and 0");
	is_int(ceems_spool_name(&r, name, 20), -ENAMETOOLONG, "too small a buffer is refused");
}

static void
test_durable_write_and_order(void)
{
	static struct ceems_job_record r, back;
	const char *root = new_dir();
	char dir[300], name[CEEMS_SPOOL_NAME_MAX + 8], err[256];
	struct ceems_spool_list list;
	struct stat st;
	size_t len;

	/* the spool directory itself is created when missing */
	snprintf(dir, sizeof(dir), "%s/spool", root);
	make_record(&r, 300, 1763790300, "c", "n1", "third");
	is_int(put(dir, 1 << 20, &r, name, sizeof(name)), 0, "first put creates the spool");
	ok(stat(dir, &st) == 0 && (st.st_mode & 0777) == 0750, "spool directory mode 0750");
	make_record(&r, 100, 1763790100, "c", "n1", "first");
	is_int(put(dir, 1 << 20, &r, name, sizeof(name)), 0, "second put");
	make_record(&r, 200, 1763790200, "c", "n1", "second");
	is_int(put(dir, 1 << 20, &r, name, sizeof(name)), 0, "third put");
	is_str(name, "001763790200-c-200-1763789600-n1.json", "name reported");
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/%s", dir, name);
		ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0640 &&
		   S_ISREG(st.st_mode), "record file mode 0640");
	}
	/* the same record again (same job, same second): kept apart */
	is_int(put(dir, 1 << 20, &r, name, sizeof(name)), 0, "same name again");
	is_str(name, "001763790200-c-200-1763789600-n1~01.json",
	       "no overwrite: the second copy gets ~01");

	/* things that are not records */
	write_file(dir, ".tmp.99.0.x.json", "{", 1);
	write_file(dir, "README", "x", 1);
	mkdir(strcat(strcpy(name, dir), "/rejected"), 0750);
	ok(symlink("/etc/passwd", strcat(strcpy(name, dir), "/000000000001-evil.json")) == 0,
	   "a symlink planted");

	is_int(ceems_spool_list(dir, 0, &list), 0, "list");
	is_int(list.count, 4, "four records listed (temp, README, rejected/, symlink skipped)");
	if (list.count == 4) {
		ok(strstr(list.names[0], "-100-") && strstr(list.names[1], "-200-") &&
		   strstr(list.names[2], "-200-") && strstr(list.names[3], "-300-"),
		   "oldest first");
		ok(strstr(list.names[2], "~01") != NULL, "the later copy after the first");
		is_int(ceems_spool_read(dir, list.names[0], &back, text, sizeof(text),
					&len, err, sizeof(err)), 0, "read the oldest");
		is_int(back.meta.jobid, 100, "it is job 100");
		is_str(back.meta.name, "first", "with its name");
		ok(len > 0 && text[len - 1] == '\n', "the file ends with a newline");
		is_int(ceems_spool_remove(dir, list.names[0]), 0, "remove it");
		ok(!exists(dir, list.names[0]), "gone");
		is_int(ceems_spool_read(dir, list.names[0], &back, text, sizeof(text),
					&len, err, sizeof(err)), -ENOENT, "reading it now: ENOENT");
	}
	ceems_spool_list_free(&list);
	is_int(ceems_spool_list(dir, 2, &list), 0, "list the two oldest only");
	is_int(list.count, 2, "two names");
	is_int(list.total, 3, "of the three left");
	ok(list.count == 2 && strstr(list.names[0], "-200-") && strstr(list.names[1], "-200-"),
	   "the oldest two, in order");
	ceems_spool_list_free(&list);
	is_int(ceems_spool_read(dir, "../../etc/passwd.json", &back, text, sizeof(text),
				&len, err, sizeof(err)), -EINVAL, "a name with '/' is refused");
	is_int(ceems_spool_read(dir, "000000000001-evil.json", &back, text, sizeof(text),
				&len, err, sizeof(err)), -ELOOP, "a symlink is not followed");

	snprintf(name, sizeof(name), "%s/none", root);
	is_int(ceems_spool_list(name, 0, &list), 0, "a missing spool lists fine");
	is_int(list.count, 0, "as empty");
	ceems_spool_list_free(&list);
	remove_tree(root);
}

/* A listing bounded to the oldest 50 of 1,000 records created in a
 * scrambled order (the directory's own order is a hash's): exactly those
 * 50, oldest first, whatever the order; unbounded, all of them. */
static void
test_list_bounded(void)
{
	const char *dir = new_dir();
	struct ceems_spool_list list;
	char name[CEEMS_SPOOL_NAME_MAX];
	unsigned i, ordered = 1, wrong = 0;

	for (i = 0; i < 1000; i++) {
		/* 1000 and 7 are coprime: every second 0..999 once */
		snprintf(name, sizeof(name), "%012u-c-%u-1-n1.json",
			 1700000000u + (i * 7u) % 1000u, i);
		write_file(dir, name, "{}", 2);
	}
	is_int(ceems_spool_list(dir, 50, &list), 0, "list the oldest 50 of 1000");
	is_int(list.count, 50, "50 names");
	is_int(list.total, 1000, "of 1000 records");
	for (i = 0; i < list.count; i++) {
		char want[32];

		snprintf(want, sizeof(want), "%012u-", 1700000000u + i);
		if (strncmp(list.names[i], want, strlen(want)) != 0)
			wrong++;
		if (i > 0 && strcmp(list.names[i - 1], list.names[i]) >= 0)
			ordered = 0;
	}
	is_int(wrong, 0, "the 50 oldest, second by second");
	ok(ordered, "oldest first");
	ceems_spool_list_free(&list);
	is_int(ceems_spool_list(dir, 0, &list), 0, "list them all");
	is_int(list.count, 1000, "1000 names");
	ok(list.count == 1000 && strncmp(list.names[999], "001700000999-", 13) == 0 &&
	   strncmp(list.names[0], "001700000000-", 13) == 0, "from the oldest to the youngest");
	ceems_spool_list_free(&list);
	remove_tree(dir);
}

/* Each corrupted form is refused with a reason and set aside into
 * rejected/ with a .why; the good record beside them stays. */
static void
test_corrupted(void)
{
	static struct ceems_job_record rec, back;
	static char big[CEEMS_RECORD_MAX + 100];
	const char *dir = new_dir();
	char name[CEEMS_SPOOL_NAME_MAX + 8], err[256], path[600], why[1300];
	struct ceems_spool_list list;
	const struct { const char *file, *content; size_t len; const char *reason; } bad[] = {
		{ "000000000010-garbage.json", "not json at all", 15, "" },
		{ "000000000011-truncated.json", "{\"format\":\"ceems-job-record/1\",\"writ", 36, "" },
		{ "000000000012-nul.json", "{\"a\":1}\0junk", 12, "NUL byte" },
		{ "000000000013-empty.json", "", 0, "empty file" },
		{ "000000000014-foreign.json", "{\"format\":\"other/2\"}", 20, "not a ceems-job-record/1" },
	};
	size_t len;
	int r;

	make_record(&rec, 55, 1763790000, "c", "n", "good");
	is_int(put(dir, 1 << 20, &rec, name, sizeof(name)), 0, "a good record");
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		write_file(dir, bad[i].file, bad[i].content, bad[i].len);
	memset(big, ' ', sizeof(big));
	write_file(dir, "000000000015-huge.json", big, sizeof(big));

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		err[0] = '\0';
		r = ceems_spool_read(dir, bad[i].file, &back, text, sizeof(text), &len,
				     err, sizeof(err));
		ok(r == -EINVAL && err[0] != '\0' && strstr(err, bad[i].reason) != NULL,
		   "%s refused: %s", bad[i].file, err);
		is_int(ceems_spool_quarantine(dir, bad[i].file, err), 0, "set aside");
		ok(!exists(dir, bad[i].file), "no longer in the spool");
		snprintf(path, sizeof(path), "%s/%s/%s", dir, CEEMS_SPOOL_REJECTED, bad[i].file);
		ok(access(path, F_OK) == 0, "in rejected/");
		strcat(path, ".why");
		ok(read_why(path, why, sizeof(why)) == 0 && strstr(why, err) != NULL,
		   "its .why says why: %s", why);
	}
	r = ceems_spool_read(dir, "000000000015-huge.json", &back, text, sizeof(text),
			     &len, err, sizeof(err));
	ok(r == -EINVAL && strstr(err, "larger") != NULL, "an oversized file refused: %s", err);

	/* The same name rejected twice: both kept. */
	write_file(dir, bad[0].file, "again", 5);
	is_int(ceems_spool_quarantine(dir, bad[0].file, "second time"), 0, "same name set aside again");
	snprintf(path, sizeof(path), "%s/%s/000000000010-garbage~01.json", dir, CEEMS_SPOOL_REJECTED);
	ok(access(path, F_OK) == 0, "kept as ~01 beside the first");
	strcat(path, ".why");
	ok(read_why(path, why, sizeof(why)) == 0 && strstr(why, "second time"),
	   "with its own .why");
	is_int(ceems_spool_quarantine(dir, "../x", "no"), -EINVAL, "a path is refused");

	ceems_spool_list(dir, 0, &list);
	is_int(list.count, 2, "the good record and the huge one are listed");
	ceems_spool_list_free(&list);
	is_int(ceems_spool_read(dir, name, &back, text, sizeof(text), &len, err,
				sizeof(err)), 0, "the good record still reads");
	remove_tree(dir);
}

/* A FIFO named like a record (planted, or made by mistake) is refused at
 * once, by the replay's reader and by the one ceems-sacct uses: opening
 * it for reading would wait for a writer that never comes. */
static void
test_fifo_record(void)
{
	static struct ceems_job_record back;
	const char *dir = new_dir();
	const char *fifo = "000000000020-fifo.json";
	char path[512], err[256] = "";
	size_t len = 0;
	ssize_t n;
	int dfd, r;

	snprintf(path, sizeof(path), "%s/%s", dir, fifo);
	ok(mkfifo(path, 0600) == 0, "a FIFO named like a record");
	signal(SIGALRM, on_fifo_alarm);
	alarm(5);
	r = ceems_spool_read(dir, fifo, &back, text, sizeof(text), &len, err,
			     sizeof(err));
	ok(r == -EINVAL && strstr(err, "FIFO") != NULL,
	   "the replay's read refuses it at once as no record: %s", err);
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	err[0] = '\0';
	n = ceems_spool_read_file(dfd, fifo, text, sizeof(text), err, sizeof(err));
	ok(n == -EINVAL && strstr(err, "not a regular file") != NULL,
	   "so does ceems-sacct's: %s", err);
	alarm(0);
	if (dfd >= 0)
		close(dfd);
	remove_tree(dir);
}

/* The soft cap: past it, every record is still written, each with an
 * error logged. */
static void
test_cap(void)
{
	static struct ceems_job_record r;
	const char *dir = new_dir();
	char name[CEEMS_SPOOL_NAME_MAX + 8];
	struct ceems_spool_list list;
	int n, written = 0, over = 0;
	uint64_t cap = 4096;

	n = (make_record(&r, 1, 1763790000, "c", "n", "x"),
	     ceems_record_encode(&r, text, sizeof(text)));
	ok(n > 200 && n < 2000, "a record is %d bytes", n);
	nlog = 0;
	for (int i = 0; i < 12; i++) {
		uint64_t before;

		ceems_spool_list(dir, 0, &list);
		before = record_bytes(dir, &list);
		ceems_spool_list_free(&list);
		make_record(&r, (uint32_t)(i + 1), 1763790000 + i, "c", "n", "x");
		n = ceems_record_encode(&r, text, sizeof(text));
		if (before + (uint64_t)n + 1 > cap)
			over++;
		if (put(dir, cap, &r, name, sizeof(name)) == 0)
			written++;
	}
	ok(over > 0 && over < 12, "the test crosses the cap (%d puts past it)", over);
	is_int(written, 12, "every record written, past the cap too");
	ceems_spool_list(dir, 0, &list);
	is_int(list.count, 12, "all twelve listed");
	ok(record_bytes(dir, &list) > cap, "the spool holds more than the cap (%llu bytes)",
	   (unsigned long long)record_bytes(dir, &list));
	ceems_spool_list_free(&list);
	is_int(count_log(CEEMS_LOG_ERROR, "over its spool_max_bytes of 4096"), over,
	       "one error line per record past the cap");
	ok(count_log(CEEMS_LOG_ERROR, "written anyway") == over, "saying it was written anyway");
	remove_tree(dir);
}

/* What SPOOL/.usage says, or 0 and 0. */
static void
read_usage(const char *dir, uint64_t *bytes, uint64_t *count)
{
	char path[512], buf[128];
	ssize_t n;
	int64_t sec;
	long nsec;

	snprintf(path, sizeof(path), "%s/%s", dir, SPOOL_USAGE_FILE);
	*bytes = 0;
	*count = 0;
	n = ceems_fileio_read_text_file(path, buf, sizeof(buf));
	if (n <= 0 || ceems_spool_usage_parse(buf, (size_t)n, bytes, count, &sec, &nsec) < 0)
		*bytes = *count = 0;
}

/* The cap check kept the spool's figures in .usage instead of listing
 * the whole spool at every write: filling a spool of N records examined
 * N^2/2 directory entries, now about N (counted, not timed). */
static void
test_usage_linear(void)
{
	static struct ceems_job_record r;
	const char *dir = new_dir();
	char name[CEEMS_SPOOL_NAME_MAX + 8];
	static char names[2000][CEEMS_SPOOL_NAME_MAX + 8];
	struct ceems_spool_list list;
	uint64_t before, examined, bytes, count;
	int n = 2000, failed = 0;
	int64_t sec;
	long nsec;

	before = ceems_spool_usage_entries_examined();
	for (int i = 0; i < n; i++) {
		make_record(&r, (uint32_t)(i + 1), 1763790000 + i, "c", "n", "x");
		if (put(dir, UINT64_C(1) << 40, &r, names[i], sizeof(names[i])) < 0)
			failed++;
	}
	examined = ceems_spool_usage_entries_examined() - before;
	ok(failed == 0, "%d records spooled (%d failed)", n, failed);
	ok(examined < (uint64_t)n, "filling the spool examined %llu directory entries "
	   "(listing at every write: about %d)", (unsigned long long)examined, n * n / 2);
	ceems_spool_list(dir, 0, &list);
	read_usage(dir, &bytes, &count);
	ok(count == list.count, ".usage counts the %zu records (%llu)", list.count,
	   (unsigned long long)count);
	is_int(bytes, record_bytes(dir, &list), ".usage has their bytes");
	ceems_spool_list_free(&list);

	/* A change made behind the library's back (an admin's rm) moves
	 * the directory's time: the next write lists the spool once. */
	{
		char path[600];

		snprintf(path, sizeof(path), "%s/%s", dir, names[0]);
		unlink(path);
	}
	usleep(20000);	/* a new directory time even where it is coarse */
	before = ceems_spool_usage_entries_examined();
	make_record(&r, 5000, 1763800000, "c", "n", "x");
	put(dir, UINT64_C(1) << 40, &r, name, sizeof(name));
	examined = ceems_spool_usage_entries_examined() - before;
	ok(examined >= (uint64_t)n, "after a foreign removal the spool is listed again (%llu entries)",
	   (unsigned long long)examined);
	ceems_spool_list(dir, 0, &list);
	read_usage(dir, &bytes, &count);
	ok(count == list.count && bytes == record_bytes(dir, &list),
	   "and .usage is right again (%llu records, %llu bytes)",
	   (unsigned long long)count, (unsigned long long)bytes);
	ceems_spool_list_free(&list);

	/* Draining the spool through the library keeps it current too. */
	before = ceems_spool_usage_entries_examined();
	for (int i = 1; i < n; i++)
		ceems_spool_remove(dir, names[i]);
	examined = ceems_spool_usage_entries_examined() - before;
	ok(examined <= (uint64_t)n + 4, "removing %d records listed the spool at most once (%llu entries)",
	   n - 1, (unsigned long long)examined);
	read_usage(dir, &bytes, &count);
	ceems_spool_list(dir, 0, &list);
	ok(count == 1 && list.count == 1 && bytes == record_bytes(dir, &list),
	   ".usage follows the removals (%llu records)", (unsigned long long)count);
	ceems_spool_list_free(&list);

	/* A stored batch goes with one directory sync; a name that is not
	 * there is said so, the others are removed all the same. */
	{
		const char *batch[3];
		int results[3];
		char n1[CEEMS_SPOOL_NAME_MAX + 8], n2[CEEMS_SPOOL_NAME_MAX + 8];

		make_record(&r, 6001, 1763800100, "c", "n", "x");
		put(dir, UINT64_C(1) << 40, &r, n1, sizeof(n1));
		make_record(&r, 6002, 1763800101, "c", "n", "x");
		put(dir, UINT64_C(1) << 40, &r, n2, sizeof(n2));
		batch[0] = n1;
		batch[1] = "000000000001-c-1-1-gone.json";
		batch[2] = n2;
		is_int(ceems_spool_remove_stored(dir, batch, 3, results), -ENOENT,
		       "removing a stored batch: the first error comes back");
		ok(results[0] == 0 && results[1] == -ENOENT && results[2] == 0,
		   "each one's result (%d %d %d)", results[0], results[1], results[2]);
		ok(!exists(dir, n1) && !exists(dir, n2), "the others are removed");
		ceems_spool_list(dir, 0, &list);
		read_usage(dir, &bytes, &count);
		ok(count == 1 && list.count == 1 && bytes == record_bytes(dir, &list),
		   ".usage follows a batch removal");
		ceems_spool_list_free(&list);
	}

	/* A damaged .usage is never trusted: the spool is listed. */
	write_file(dir, SPOOL_USAGE_FILE, "garbage\n", 8);
	before = ceems_spool_usage_entries_examined();
	make_record(&r, 5001, 1763800001, "c", "n", "x");
	put(dir, UINT64_C(1) << 40, &r, name, sizeof(name));
	ok(ceems_spool_usage_entries_examined() > before, "a damaged .usage makes a listing");
	read_usage(dir, &bytes, &count);
	is_int(count, 2, "and is rewritten right");

	/* The parser: exactly four numbers. */
	ok(ceems_spool_usage_parse("1 2 3 4\n", 8, &bytes, &count, &sec, &nsec) == 0 &&
	   bytes == 1 && count == 2 && sec == 3 && nsec == 4, "parses BYTES COUNT SEC NSEC");
	ok(ceems_spool_usage_parse("1 2 3\n", 6, &bytes, &count, &sec, &nsec) < 0, "three numbers refused");
	ok(ceems_spool_usage_parse("1 2 3 4", 7, &bytes, &count, &sec, &nsec) < 0, "no newline refused");
	ok(ceems_spool_usage_parse("1 2 3 4\nx", 9, &bytes, &count, &sec, &nsec) < 0, "trailing bytes refused");
	ok(ceems_spool_usage_parse("-1 2 3 4\n", 9, &bytes, &count, &sec, &nsec) < 0, "a sign refused");
	ok(ceems_spool_usage_parse("1 2 3 1000000000\n", 17, &bytes, &count, &sec, &nsec) < 0,
	   "nanoseconds past a second refused");
	ok(ceems_spool_usage_parse("99999999999999999999 2 3 4\n", 27, &bytes, &count, &sec, &nsec) < 0,
	   "an overflow refused");
	ok(ceems_spool_usage_parse("", 0, &bytes, &count, &sec, &nsec) < 0, "empty refused");
	remove_tree(dir);
}

/* The storage front door with no database: valid records spool, invalid
 * ones go to rejected/ with a .why, never into the spool. */
static void
test_store_without_database(void)
{
	static struct ceems_job_record r;
	const char *dir = new_dir();
	struct ceems_config c;
	struct ceems_spool_list list;
	char err[512], path[600], why[1300];

	ceems_conf_defaults(&c);
	snprintf(c.spool_dir, sizeof(c.spool_dir), "%s", dir);
	ok(!ceems_storage_have_database(&c), "no database by default");
	make_record(&r, 77, 1763790000, "c", "n", "ok");
	is_int(ceems_storage_store(&c, &r, err, sizeof(err)), CEEMS_STORED_SPOOL,
	       "a valid record goes to the spool");
	make_record(&r, 78, 1763790000, "c", "n", "bad");
	r.meta.end_time = r.meta.start_time - 10;
	err[0] = '\0';
	is_int(ceems_storage_store(&c, &r, err, sizeof(err)), -EINVAL,
	       "an invalid record is refused");
	ok(strstr(err, "out of order") != NULL && strstr(err, "rejected/") != NULL,
	   "saying why and where it is kept: %s", err);
	snprintf(path, sizeof(path), "%s/rejected/001763790000-c-78-1763789400-n.json", dir);
	ok(access(path, F_OK) == 0, "kept in rejected/");
	strcat(path, ".why");
	ok(read_why(path, why, sizeof(why)) == 0 &&
	   strstr(why, "invalid record: job 78: submit, start and end times are out of order"),
	   ".why: %s", why);
	/* Half an array identity is refused the same way. */
	make_record(&r, 79, 1763790000, "c", "n", "half-array");
	r.meta.array_job_id = 70;
	is_int(ceems_storage_store(&c, &r, err, sizeof(err)), -EINVAL,
	       "an array job id without a task id is refused");
	snprintf(path, sizeof(path), "%s/rejected/001763790000-c-79-1763789400-n.json", dir);
	ok(access(path, F_OK) == 0, "kept in rejected/");
	strcat(path, ".why");
	ok(read_why(path, why, sizeof(why)) == 0 &&
	   strstr(why, "array_job_id and array_task_id come together"), ".why: %s", why);
	ceems_spool_list(dir, 0, &list);
	is_int(list.count, 1, "only the valid record is in the spool");
	ceems_spool_list_free(&list);
	remove_tree(dir);
}

/* Reassemble the JSON of "ceems-record TAG part I/N: ..." log lines. */
static size_t
reassemble(const char *tag, char *out, size_t size)
{
	char prefix[300];
	size_t len = 0;

	snprintf(prefix, sizeof(prefix), "ceems-record %s part ", tag);
	out[0] = '\0';
	for (int i = 0; i < nlog; i++) {
		const char *p = log_lines[i], *colon;

		if (strncmp(p, prefix, strlen(prefix)) != 0 ||
		    (colon = strstr(p, ": ")) == NULL)
			continue;
		colon += 2;
		if (len + strlen(colon) < size) {
			memcpy(out + len, colon, strlen(colon) + 1);
			len += strlen(colon);
		}
	}
	return len;
}

/* No file can be written (here: the spool path runs through a regular
 * file): the record is logged whole, in pieces that give it back. */
static void
test_last_resort(void)
{
	static struct ceems_job_record r, back;
	static char again[CEEMS_RECORD_MAX + 1];
	const char *root = new_dir();
	struct ceems_config c;
	char err[512], tag[CEEMS_SPOOL_NAME_MAX], name[300];
	size_t len;
	int parts = 0;

	ceems_conf_defaults(&c);
	snprintf(name, sizeof(name), "%s/file", root);
	write_file(root, "file", "x", 1);
	snprintf(c.spool_dir, sizeof(c.spool_dir), "%s/file/spool", root);
	/* a name of multi-byte characters and steps make the JSON long */
	make_record(&r, 99, 1763790000, "c", "n",
		    "\xc3\xa9t\xc3\xa9 \xe2\x82\xac\xe2\x82\xac\xe2\x82\xac \xf0\x9f\x94\xa5"
		    "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
	r.report.nsteps = 8;
	for (unsigned i = 0; i < 8; i++) {
		snprintf(r.report.steps[i].id, sizeof(r.report.steps[i].id), "%u", i);
		r.report.steps[i].elapsed_s = 10 + i;
		r.report.steps[i].have_joules[CEEMS_DOMAIN_PACKAGE] = true;
		r.report.steps[i].joules[CEEMS_DOMAIN_PACKAGE] = 100.0 / 3 * (i + 1);
	}
	nlog = 0;
	ok(ceems_storage_store(&c, &r, err, sizeof(err)) == -ENOTDIR,
	   "no spool could be written: %s", err);
	ceems_spool_name(&r, tag, sizeof(tag));
	ok(strstr(err, tag) != NULL, "the error names the logged record");
	for (int i = 0; i < nlog; i++)
		if (strstr(log_lines[i], " part ") != NULL && log_levels[i] == CEEMS_LOG_ERROR)
			parts++;
	ok(parts >= 2, "logged in %d pieces at error level", parts);
	ok(count_log(CEEMS_LOG_ERROR, "could not be written anywhere") == 1,
	   "with one line saying how to get it back");
	len = reassemble(tag, again, sizeof(again));
	is_int(ceems_record_decode(again, len, &back, err, sizeof(err)), 0,
	       "the pieces give the record back");
	is_str(back.meta.name, r.meta.name, "multi-byte name whole");
	is_int(back.report.nsteps, 8, "steps whole");
	is_near(back.report.steps[7].joules[CEEMS_DOMAIN_PACKAGE],
		r.report.steps[7].joules[CEEMS_DOMAIN_PACKAGE], 0, "figures exact");
	remove_tree(root);
}

static void
test_sweep(void)
{
	const char *dir = new_dir();
	struct timeval old[2] = { { time(NULL) - 7200, 0 }, { time(NULL) - 7200, 0 } };
	char path[600];

	write_file(dir, ".tmp.1.0.crashed.json", "{\"partial", 9);
	write_file(dir, ".tmp.2.0.writing-now.json", "{\"partial", 9);
	snprintf(path, sizeof(path), "%s/.tmp.1.0.crashed.json", dir);
	utimes(path, old);
	is_int(ceems_spool_sweep(dir, 3600), 1, "one stale temporary file swept");
	snprintf(path, sizeof(path), "%s/rejected/.tmp.1.0.crashed.json", dir);
	ok(access(path, F_OK) == 0, "kept in rejected/, not deleted");
	ok(exists(dir, ".tmp.2.0.writing-now.json"), "a fresh one (a write under way) left alone");
	remove_tree(dir);
}

#ifdef HAVE_LIBPQ
/* A server that accepts the connection and never answers: the store
 * gives up after database_timeout and spools the record. */
static void
test_silent_database(void)
{
	static struct ceems_job_record r;
	struct sockaddr_in addr = { .sin_family = AF_INET };
	socklen_t alen = sizeof(addr);
	const char *dir = new_dir();
	struct ceems_config c;
	struct timespec t0, t1;
	struct ceems_spool_list list;
	char err[512];
	double took;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0 || bind(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0 ||
	    listen(fd, 4) < 0 || getsockname(fd, (struct sockaddr *)&addr, &alen) < 0) {
		ok(false, "test setup: a silent listener: %s", strerror(errno));
		return;
	}
	ceems_conf_defaults(&c);
	snprintf(c.spool_dir, sizeof(c.spool_dir), "%s", dir);
	snprintf(c.database, sizeof(c.database),
		 "host=127.0.0.1 port=%u dbname=ceems user=nobody sslmode=disable",
		 (unsigned)ntohs(addr.sin_port));
	c.database_timeout_ns = 300000000;
	make_record(&r, 5, 1763790000, "c", "n", "x");
	nlog = 0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(ceems_storage_store(&c, &r, err, sizeof(err)), CEEMS_STORED_SPOOL,
	       "a silent database: the record is spooled");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(took >= 0.29 && took < 0.8, "after the 0.3 s database_timeout (%.3f s)", took);
	ok(count_log(CEEMS_LOG_WARNING, "within 0.3 s") == 1, "logged: %s",
	   nlog > 0 ? log_lines[0] : "");
	ceems_spool_list(dir, 0, &list);
	is_int(list.count, 1, "one record in the spool");
	ceems_spool_list_free(&list);

	/* nothing listens: refused at once */
	close(fd);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	is_int(ceems_storage_store(&c, &r, err, sizeof(err)), CEEMS_STORED_SPOOL,
	       "a refused connection: spooled");
	clock_gettime(CLOCK_MONOTONIC, &t1);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(took < 0.25, "without waiting (%.3f s)", took);
	remove_tree(dir);
}
#endif

/* Another writer holding .usage's lock and never letting go (stopped,
 * or stuck in the kernel) must not hold a job's end: the write goes
 * through after a bounded wait (invariant 1), and the spool is right. */
static void
test_usage_lock_held(void)
{
	static struct ceems_job_record r;
	const char *dir = new_dir();
	char name[CEEMS_SPOOL_NAME_MAX + 8], path[512];
	struct ceems_spool_list list;
	struct timespec t0, t1;
	double took;
	int holder, ret;

	make_record(&r, 1, 1763790000, "c", "n", "x");
	ok(put(dir, UINT64_C(1) << 40, &r, name, sizeof(name)) == 0, "a first record (makes .usage)");
	snprintf(path, sizeof(path), "%s/.usage", dir);
	holder = open(path, O_RDWR | O_CLOEXEC);
	ok(holder >= 0 && flock(holder, LOCK_EX) == 0, "another writer holds the lock");
	make_record(&r, 2, 1763790001, "c", "n", "x");
	signal(SIGALRM, on_alarm);
	alarm(5);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ret = put(dir, UINT64_C(1) << 40, &r, name, sizeof(name));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	alarm(0);
	took = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	ok(ret == 0, "the record is written while the lock is held");
	ok(took < 1.0, "after a bounded wait (%.3f s)", took);
	ceems_spool_list(dir, 0, &list);
	is_int(list.count, 2, "both records in the spool");
	ceems_spool_list_free(&list);
	if (holder >= 0)
		close(holder);
	remove_tree(dir);
}

int
main(void)
{
	ceems_log_set_handler(capture, NULL);
	ceems_log_set_level(CEEMS_LOG_DEBUG);
	test_names();
	test_durable_write_and_order();
	test_list_bounded();
	test_corrupted();
	test_fifo_record();
	test_cap();
	test_usage_linear();
	test_usage_lock_held();
	test_store_without_database();
	test_last_resort();
	test_sweep();
#ifdef HAVE_LIBPQ
	test_silent_database();
#endif
	return done_testing();
}
