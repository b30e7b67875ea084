/* test_task_io.c - IO counted per tick (lib/sources/task_io.c): the
 * parser of /proc/PID/io, malformed and hostile texts refused; the
 * tracker's arithmetic over readings made up to show each case (a
 * child reaped by a counted parent is counted once, one reaped outside
 * the job keeps what was seen of it, a reused pid is a new process, a
 * parent that never reaps is not held back for ever, a restart counts
 * no past twice); a report counted per tick in JSON both ways, its
 * errors absent, not 0; and this process read through /proc and through
 * the BPF task iterator (root), the two agreeing. */
#include "config.h"

#include <sys/wait.h>

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <json-c/json.h>

#include "model/measure.h"
#include "sources/task_io.h"
#include "../tap.h"

static void
test_parse(void)
{
	struct ceems_task_io_counts c;
	const char *good = "rchar: 1000\nwchar: 2000\nsyscr: 3\nsyscw: 4\n"
			   "read_bytes: 4096\nwrite_bytes: 0\n"
			   "cancelled_write_bytes: 0\n";

	ok(ceems_task_io_parse(good, &c) == 0 && c.rchar == 1000 &&
	   c.wchar == 2000 && c.syscr == 3 && c.syscw == 4,
	   "the kernel's text: rchar, wchar, syscr, syscw");
	ok(ceems_task_io_parse("syscw: 4\nsyscr: 3\nwchar: 2\nrchar: 1", &c) == 0 &&
	   c.rchar == 1 && c.syscw == 4, "any order, no final newline");
	is_int(ceems_task_io_parse("rchar: 1\nwchar: 2\nsyscr: 3\n", &c), -EINVAL,
	       "a line missing: refused");
	is_int(ceems_task_io_parse("rchar: 1\nrchar: 5\nwchar: 2\nsyscr: 3\nsyscw: 4\n",
				   &c), -EINVAL, "a line twice: refused");
	is_int(ceems_task_io_parse("rchar: x\nwchar: 2\nsyscr: 3\nsyscw: 4\n", &c),
	       -EINVAL, "not a number: refused");
	is_int(ceems_task_io_parse("rchar: 1 2\nwchar: 2\nsyscr: 3\nsyscw: 4\n", &c),
	       -EINVAL, "trailing words: refused");
	is_int(ceems_task_io_parse("rchar: 99999999999999999999\nwchar: 2\nsyscr: 3\n"
				   "syscw: 4\n", &c), -ERANGE, "beyond 64 bits: refused");
	is_int(ceems_task_io_parse("rchar 1\nwchar: 2\nsyscr: 3\nsyscw: 4\n", &c),
	       -EINVAL, "a line without a colon: refused");
	is_int(ceems_task_io_parse("", &c), -EINVAL, "empty: refused");
}

static struct ceems_task_io_sample
proc(uint32_t pid, uint32_t ppid, bool counted, uint64_t w)
{
	struct ceems_task_io_sample s = { pid, ppid, 1000 + pid, counted ? 1000 : 0,
					  counted, { w / 2, w, w / 4096, w / 4096 } };

	return s;
}

static uint64_t
update(struct ceems_task_io_job *t, struct ceems_task_io_sample *s, size_t n)
{
	struct ceems_task_io_counts total;

	if (ceems_task_io_job_update(t, s, n) < 0)
		return UINT64_MAX;
	ceems_task_io_job_total(t, &total);
	return total.wchar;
}

/* slurmstepd (1, root: not counted) runs a shell (2), which runs
 * children (3, 4) that write and are reaped by the shell. */
static void
test_reaped_in_job(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct ceems_task_io_sample s[4];

	s[0] = proc(1, 0, false, 50000);
	s[1] = proc(2, 1, true, 100);
	s[2] = proc(3, 2, true, 4000);
	is_int(update(t, s, 3), 4100, "first reading: the job's processes, not slurmstepd's");
	/* 3 wrote 1000 more, exited, and the shell reaped it: its counter
	 * took 3's 5000; 4 started and wrote 200. */
	s[0] = proc(1, 0, false, 60000);
	s[1] = proc(2, 1, true, 100 + 5000);
	s[2] = proc(4, 2, true, 200);
	is_int(update(t, s, 3), 4100 + 1000 + 200,
	       "a child reaped by the shell: counted once, all it did");
	/* 4 exited while the shell had not reaped it yet (a zombie is not
	 * listed); the shell reaps it before the next reading. */
	s[1] = proc(2, 1, true, 5100);
	is_int(update(t, s, 2), 5300, "a child gone, not reaped yet: what was seen stays");
	s[1] = proc(2, 1, true, 5100 + 300 + 10);
	is_int(update(t, s, 2), 5300 + 100 + 10,
	       "reaped a reading later: its last 100 and the shell's own 10");
	/* The shell writes 90 more and exits; slurmstepd (not counted)
	 * reaps it, and wrote 20 of its own meanwhile. */
	s[0] = proc(1, 0, false, 60000 + 5500 + 20);
	is_int(update(t, s, 1), 5410 + 90 + 20,
	       "the shell reaped by slurmstepd: its tail from slurmstepd's growth, "
	       "with slurmstepd's own IO of that tick");
	s[0] = proc(1, 0, false, 70000);
	is_int(update(t, s, 1), 5520, "slurmstepd's own IO after: not the job's");
	ceems_task_io_job_free(t);
}

/* A process reaped outside the job, before its reaper is read, or by a
 * reaper outside the job's cgroup: what was seen of it stays, no more. */
static void
test_reaped_outside(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct ceems_task_io_sample s[2];

	s[0] = proc(1, 0, false, 1000);
	s[1] = proc(2, 1, true, 300);
	is_int(update(t, s, 2), 300, "slurmstepd and the job's shell");
	/* Gone, slurmstepd not grown yet (the shell a zombie). */
	is_int(update(t, s, 1), 300, "gone, not reaped yet");
	s[0] = proc(1, 0, false, 1000 + 350);
	is_int(update(t, s, 1), 350, "reaped a reading later: its tail of 50");
	s[0] = proc(1, 0, false, 2000);
	is_int(update(t, s, 1), 350, "then nothing of slurmstepd's");
	/* A process whose parent is not listed (reparented outside). */
	s[0] = proc(3, 99, true, 400);
	is_int(update(t, s, 1), 750, "a process of the job whose parent is not");
	is_int(update(t, NULL, 0), 750, "gone: what was seen of it stays");
	ceems_task_io_job_free(t);
}

/* A grandchild and its parent both go between two readings: the
 * grandparent's counter takes both, each counted once. */
static void
test_chain(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct ceems_task_io_sample s[3];

	s[0] = proc(10, 1, true, 0);
	s[1] = proc(11, 10, true, 100);
	s[2] = proc(12, 11, true, 1000);
	is_int(update(t, s, 3), 1100, "three generations");
	s[0] = proc(10, 1, true, 100 + 1000 + 50 + 7);
	is_int(update(t, s, 1), 1157, "two generations gone at once: counted once");
	ceems_task_io_job_free(t);
}

/* A pid reused by a new process (another start time) is another
 * process; a counter seen to go back does not take from the total. */
static void
test_reused_pid(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct ceems_task_io_sample s[1];

	s[0] = proc(20, 1, true, 5000);
	is_int(update(t, s, 1), 5000, "a process");
	s[0] = proc(20, 1, true, 300);
	s[0].start += 7;
	is_int(update(t, s, 1), 5300, "its pid reused: the new one counts from 0");
	s[0].c.wchar = 100;
	is_int(update(t, s, 1), 5300, "a counter that goes back: nothing taken");
	ceems_task_io_job_free(t);
}

/* A parent that ignores SIGCHLD never takes its children's counts: the
 * debt they left is forgiven after two readings, so that its own IO
 * counts again. */
static void
test_debt_forgiven(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(false);
	struct ceems_task_io_sample s[2];

	s[0] = proc(30, 1, true, 0);
	s[1] = proc(31, 30, true, 1000);
	is_int(update(t, s, 2), 1000, "a parent and its child");
	s[0] = proc(30, 1, true, 100);
	is_int(update(t, s, 1), 1000,
	       "the child autoreaped: the parent's 100 taken as the child's");
	s[0] = proc(30, 1, true, 300);
	is_int(update(t, s, 1), 1000, "still owed: 200 more");
	s[0] = proc(30, 1, true, 500);
	is_int(update(t, s, 1), 1200, "forgiven after two readings: its own IO counts");
	ceems_task_io_job_free(t);
}

/* After an agent restart the processes' counts so far were the earlier
 * agent's: the first reading takes none of them. */
static void
test_baseline(void)
{
	struct ceems_task_io_job *t = ceems_task_io_job_new(true);
	struct ceems_task_io_sample s[2];

	s[0] = proc(40, 1, true, 7000);
	is_int(update(t, s, 1), 0, "restored: the first reading is a baseline");
	s[0] = proc(40, 1, true, 7500);
	s[1] = proc(41, 40, true, 20);
	is_int(update(t, s, 2), 520, "then growth, and new processes in full");
	ok(update(t, NULL, 0) == 520, "no process: the total stays");
	ceems_task_io_job_free(t);
}

/* A report counted per tick in JSON and back: says so, errors absent. */
static void
test_json(void)
{
	struct ceems_agent_job_report r, back;
	struct json_object *obj, *io, *v;
	char err[256];

	memset(&r, 0, sizeof(r));
	r.jobid = 7;
	r.uid = 1000;
	r.io.have_io = true;
	r.io.counting = CEEMS_IO_PER_TICK;
	r.io.read_bytes = 11;
	r.io.write_bytes = 22;
	r.io.read_ops = 3;
	r.io.write_ops = 4;
	obj = ceems_measure_json_report_to_json(&r);
	ok(obj != NULL && json_object_object_get_ex(obj, "io", &io) &&
	   json_object_object_get_ex(io, "counting", &v) &&
	   strcmp(json_object_get_string(v), "per-tick") == 0 &&
	   !json_object_object_get_ex(io, "read_errors", NULL) &&
	   !json_object_object_get_ex(io, "write_errors", NULL),
	   "per tick: said, and no errors (unknown, not 0): %s",
	   obj != NULL ? json_object_to_json_string(obj) : "(null)");
	memset(&back, 0, sizeof(back));
	ok(obj != NULL && ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) == 0 &&
	   back.io.have_io && back.io.counting == CEEMS_IO_PER_TICK &&
	   back.io.write_bytes == 22 && back.io.read_ops == 3, "and back: %s", err);
	json_object_object_add(io, "read_errors", json_object_new_int(0));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0 &&
	   strstr(err, "no errors") != NULL, "errors in a per-tick report: refused: %s", err);
	json_object_object_del(io, "read_errors");
	json_object_object_add(io, "counting", json_object_new_string("sometimes"));
	ok(ceems_measure_json_report_from_json(obj, &back, err, sizeof(err)) < 0,
	   "another counting word: refused: %s", err);
	json_object_put(obj);
	r.io.counting = CEEMS_IO_PER_CALL;
	obj = ceems_measure_json_report_to_json(&r);
	ok(obj != NULL && json_object_object_get_ex(obj, "io", &io) &&
	   !json_object_object_get_ex(io, "counting", NULL) &&
	   json_object_object_get_ex(io, "read_errors", NULL),
	   "per call: as before, with its errors");
	json_object_put(obj);
}

/* This process through /proc: its writes show, its pid and parent. */
static void
test_read_self(void)
{
	struct ceems_task_io_sample a, b;
	char buf[4096] = { 0 };
	FILE *f = tmpfile();
	int r;

	r = ceems_task_io_read_pid("/proc", (uint32_t)getpid(), (uint32_t)getuid(), &a);
	ok(r == 0 && a.pid == (uint32_t)getpid() && a.ppid == (uint32_t)getppid() &&
	   a.counted && a.start > 0, "this process read: %s", strerror(-r));
	ok(f != NULL && fwrite(buf, 1, sizeof(buf), f) == sizeof(buf) && fflush(f) == 0,
	   "4096 bytes written");
	r = ceems_task_io_read_pid("/proc", (uint32_t)getpid(), (uint32_t)getuid() + 1, &b);
	ok(r == 0 && b.c.wchar >= a.c.wchar + 4096 && b.c.syscw > a.c.syscw &&
	   !b.counted, "read again: the write counted; another uid is not the job's");
	is_int(ceems_task_io_read_pid("/proc", 0, 0, &b), -ENOENT, "no such process");
	if (f != NULL)
		fclose(f);
}

/* A thread of this process: writes 64 KiB, then waits for a byte on
 * its pipe (ARG) before it exits. */
static void *
writer_thread(void *arg)
{
	static char buf[65536];
	int *fds = arg;
	FILE *f = tmpfile();
	char c;

	if (f != NULL) {
		(void)!fwrite(buf, 1, sizeof(buf), f);
		fflush(f);
		fclose(f);
	}
	(void)!write(fds[1], "w", 1);
	(void)!read(fds[2], &c, 1);
	return NULL;
}

/* The iterator sums a process's threads, live and exited, as /proc. */
static void
test_iter_threads(struct ceems_task_iter *it)
{
	struct ceems_task_io_sample before, during, after;
	int fds[4];	/* [0] read, [1] write: the thread wrote; [2], [3]: go */
	pthread_t th;
	char c;

	if (pipe(fds) < 0 || pipe(fds + 2) < 0)
		return;
	/* [2] is the thread's read end, [3] ours to write. */
	ok(ceems_task_iter_read(it) == 0 &&
	   ceems_task_iter_find(it, (uint32_t)getpid(), 0, &before) == 0,
	   "threads: this process before");
	if (pthread_create(&th, NULL, writer_thread, fds) != 0 ||
	    read(fds[0], &c, 1) != 1) {
		ok(false, "threads: a thread that writes");
		return;
	}
	ceems_task_iter_read(it);
	ceems_task_iter_find(it, (uint32_t)getpid(), 0, &during);
	ok(during.c.wchar >= before.c.wchar + 65536,
	   "threads: a live thread's 64 KiB in its process's sum (%llu more)",
	   (unsigned long long)(during.c.wchar - before.c.wchar));
	(void)!write(fds[3], "g", 1);
	pthread_join(th, NULL);
	ceems_task_iter_read(it);
	ceems_task_iter_find(it, (uint32_t)getpid(), 0, &after);
	ok(after.c.wchar >= during.c.wchar,
	   "threads: exited, its counts stay in the process's (%llu, was %llu)",
	   (unsigned long long)after.c.wchar, (unsigned long long)during.c.wchar);
	for (int i = 0; i < 4; i++)
		close(fds[i]);
}

/* The task iterator (root, a kernel that loads it): this process as
 * /proc says it, threads summed, its reaped child's counts included. */
static void
test_iter(void)
{
	struct ceems_task_io_sample viaproc, viaiter;
	struct ceems_task_iter *it;
	char why[256];
	pid_t child;
	int r;

	it = ceems_task_iter_open(why, sizeof(why));
	if (it == NULL) {
		ok(geteuid() != 0 || strstr(why, "without eBPF") != NULL,
		   "# skip the task iterator: %s", why);
		return;
	}
	fflush(stdout);
	if ((child = fork()) == 0) {
		static char buf[65536];
		FILE *f = tmpfile();

		_exit(f == NULL || fwrite(buf, 1, sizeof(buf), f) != sizeof(buf) ||
		      fflush(f) != 0);
	}
	waitpid(child, NULL, 0);
	r = ceems_task_io_read_pid("/proc", (uint32_t)getpid(), (uint32_t)getuid(), &viaproc);
	ok(r == 0 && ceems_task_iter_read(it) == 0 &&
	   ceems_task_iter_find(it, (uint32_t)getpid(), (uint32_t)getuid(), &viaiter) == 0,
	   "the iterator finds this process");
	ok(viaiter.counted && viaiter.uid == (uint32_t)getuid() &&
	   viaiter.ppid == (uint32_t)getppid() && viaiter.c.wchar >= 65536 &&
	   viaiter.c.wchar >= viaproc.c.wchar && viaiter.c.wchar <= viaproc.c.wchar + 4096 &&
	   viaiter.c.syscr >= viaproc.c.syscr,
	   "as /proc says (wchar %llu, /proc %llu), the reaped child's 64 KiB in",
	   (unsigned long long)viaiter.c.wchar, (unsigned long long)viaproc.c.wchar);
	is_int(ceems_task_iter_find(it, 0, 0, &viaiter), -ENOENT, "no process 0");
	test_iter_threads(it);
	ceems_task_iter_close(it);
}

int
main(void)
{
	test_parse();
	test_reaped_in_job();
	test_reaped_outside();
	test_chain();
	test_reused_pid();
	test_debt_forgiven();
	test_baseline();
	test_json();
	test_read_self();
	test_iter();
	return done_testing();
}
