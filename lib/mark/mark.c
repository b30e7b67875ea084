/* mark.c - libceems_mark (ceems_mark.h): a job's process telling the
 * node agent how much work it did.  Self-contained on purpose (libc
 * alone, no json-c, no libceems): applications in any language load it,
 * and nothing it does may disturb them.  So marks are summed here and
 * sent at most once a second per counter (a loop marking every
 * iteration costs the agent nothing more), a send waits at most a
 * second, and no call ever ends the process; what is held is sent at
 * exit.  The message is the agent's "mark" request (agent_proto.h),
 * written by hand: the name, unit and tag are checked by the same rule
 * as the agent's (model/marks_name.c) and the value is a finite number,
 * so no byte needs escaping. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <poll.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "mark/ceems_mark.h"
#include "model/marks.h"

#define DEFAULT_SOCKET "/run/ceems/agent.sock"
/* A counter is sent at most this often; the rest is summed here. */
#define SEND_EVERY_NS 1000000000ull
/* A send waits this long for the agent's reply, at most. */
#define REPLY_WAIT_MS 1000
/* ceems_mark_flush tries a busy agent again for this long. */
#define FLUSH_WAIT_NS 1000000000ull

struct held {
	char name[CEEMS_MARKS_NAME_MAX];
	char unit[CEEMS_MARKS_NAME_MAX];
	enum ceems_marks_mode mode;
	double value;		/* add: the sum not sent yet; set: the last */
	bool pending;		/* VALUE is not sent yet */
	uint64_t tried_ns;	/* the last send, 0 never */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* The application the process's counters are of (ceems_mark_tag), ""
 * none: sent with each mark. */
static char tag[CEEMS_MARKS_NAME_MAX];
static struct held held[CEEMS_MARKS_MAX];
static unsigned nheld;
static bool hooks_set;
static char last_error[256];

static uint64_t
now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int set_error(int code, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* ERROR is FMT; CODE returned. */
static int
set_error(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(last_error, sizeof(last_error), fmt, ap);
	va_end(ap);
	return code;
}

/* The job's id from SLURM_JOB_ID, 0 when not in a job. */
static uint32_t
job_id(void)
{
	const char *s = getenv("SLURM_JOB_ID");
	char *end;
	unsigned long long v;

	if (s == NULL || *s < '0' || *s > '9')
		return 0;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (errno != 0 || *end != '\0' || v == 0 || v > UINT32_MAX)
		return 0;
	return (uint32_t)v;
}

/* The errno the agent's "code" names (agent_proto.c's names). */
static int
code_errno(const char *reply)
{
	static const struct { const char *name; int code; } codes[] = {
		{ "\"EPERM\"", EPERM }, { "\"ENOENT\"", ENOENT },
		{ "\"EBUSY\"", EBUSY }, { "\"EINVAL\"", EINVAL },
		{ "\"ENOSPC\"", ENOSPC }, { "\"ENOMEM\"", ENOMEM },
	};
	const char *code = strstr(reply, "\"code\":");

	for (size_t i = 0; code != NULL && i < sizeof(codes) / sizeof(codes[0]); i++)
		if (strncmp(code + 7, codes[i].name, strlen(codes[i].name)) == 0)
			return codes[i].code;
	return EIO;
}

/* The agent's sentence in REPLY into ERROR: the "error" string, its
 * escapes kept as they are, control characters never copied. */
static int
refused(const char *reply)
{
	const char *p = strstr(reply, "\"error\":\"");
	size_t n = 0;

	if (p == NULL)
		return set_error(-code_errno(reply), "the agent refused the mark");
	for (p += 9; *p != '\0' && *p != '"' && n + 1 < sizeof(last_error); p++) {
		if (*p == '\\' && p[1] != '\0')
			p++;
		last_error[n++] = (unsigned char)*p < 0x20 ? '?' : *p;
	}
	last_error[n] = '\0';
	return -code_errno(reply);
}

/* One request to the agent: MSG sent, its reply read.  0 or -errno. */
static int
call_agent(const char *msg, size_t len)
{
	const char *path = getenv("CEEMS_AGENT_SOCKET");
	struct sockaddr_un addr = { .sun_family = AF_UNIX };
	struct pollfd pfd;
	char reply[1024];
	ssize_t n;
	int fd, r;

	if (path == NULL || path[0] == '\0')
		path = DEFAULT_SOCKET;
	if (strlen(path) >= sizeof(addr.sun_path))
		return set_error(-ENAMETOOLONG, "the agent's socket path is too long");
	memcpy(addr.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return set_error(-errno, "no socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&addr, sizeof(addr)) < 0) {
		r = errno == EAGAIN ? -EBUSY : -ECONNREFUSED;
		set_error(r, "no ceems agent at %s: %s", path, strerror(errno));
		close(fd);
		return r;
	}
	if (send(fd, msg, len, MSG_NOSIGNAL) != (ssize_t)len) {
		r = set_error(-EIO, "cannot send to the agent at %s: %s", path,
			      strerror(errno));
		close(fd);
		return r;
	}
	pfd.fd = fd;
	pfd.events = POLLIN;
	if (poll(&pfd, 1, REPLY_WAIT_MS) <= 0) {
		close(fd);
		return set_error(-EIO, "the agent at %s did not answer in %d ms",
				 path, REPLY_WAIT_MS);
	}
	n = recv(fd, reply, sizeof(reply) - 1, 0);
	close(fd);
	if (n <= 0)
		return set_error(-EIO, "the agent at %s closed without a reply", path);
	reply[n] = '\0';
	if (strncmp(reply, "{\"ok\":true", 10) == 0)
		return 0;
	return refused(reply);
}

/* H's held work is gone (sent, or refused for good). */
static void
settle(struct held *h)
{
	h->pending = false;
	if (h->mode == CEEMS_MARKS_ADD)
		h->value = 0;
}

/* The mark request of H for job JOBID into MSG, with the job's tag
 * when WITH_TAG and one is set.  Its length, or -1 when it does not fit. */
static int
format_mark(const struct held *h, uint32_t jobid, bool with_tag, char *msg,
	    size_t size)
{
	bool t = with_tag && tag[0] != '\0';
	int len = snprintf(msg, size, "{\"op\":\"mark\",\"jobid\":%u,"
			   "\"name\":\"%s\",\"unit\":\"%s\",\"%s\":%.17g%s%s%s}", jobid,
			   h->name, h->unit, h->mode == CEEMS_MARKS_SET ? "set" : "add",
			   h->value, t ? ",\"tag\":\"" : "", t ? tag : "", t ? "\"" : "");

	return len < 0 || (size_t)len >= size ? -1 : len;
}

/* Send what H holds (LOCK held).  0 or -errno; H stays pending when the
 * agent could take it later (busy, away). */
static int
send_held(struct held *h, uint64_t now)
{
	uint32_t jobid = job_id();
	char msg[256];
	int len, r;

	if (jobid == 0) {
		settle(h);
		return set_error(-ENOENT, "not in a Slurm job (SLURM_JOB_ID is not set)");
	}
	h->tried_ns = now;
	if ((len = format_mark(h, jobid, true, msg, sizeof(msg))) < 0)
		return set_error(-EINVAL, "the mark does not fit its message");
	r = call_agent(msg, (size_t)len);
	/* An agent older than tags refuses one as invalid (during an
	 * upgrade, before the agent restarts), as one does a tag other than
	 * the counter's first: the work is sent without it rather than
	 * lost, counted under the counter's own tag. */
	if (r == -EINVAL && tag[0] != '\0' &&
	    (len = format_mark(h, jobid, false, msg, sizeof(msg))) >= 0)
		r = call_agent(msg, (size_t)len);
	if (r == -EBUSY || r == -ECONNREFUSED || r == -EIO)
		return r;
	/* Taken, or refused for good (not the job's, a bad value): what
	 * was held is not sent again. */
	settle(h);
	if (r == 0)
		last_error[0] = '\0';
	return r;
}

static void
flush_at_exit(void)
{
	(void)ceems_mark_flush();
}

/* A child of fork holds its parent's marks: it must not send them too. */
static void
forget_in_child(void)
{
	nheld = 0;
	pthread_mutex_init(&lock, NULL);
}

static int
mark(const char *name, const char *unit, enum ceems_marks_mode mode,
     double value)
{
	struct held *h = NULL;
	uint64_t now;
	int r = 0;

	if (!ceems_marks_name_ok(name))
		return set_error(-EINVAL, "a counter's name must be 1 to 31 "
				 "letters, digits, '_', '.' or '-'");
	if (!ceems_marks_name_ok(unit))
		return set_error(-EINVAL, "the unit of %s must be 1 to 31 "
				 "letters, digits, '_', '.' or '-'", name);
	if (!isfinite(value) || value < 0 || value > CEEMS_MARKS_VALUE_MAX)
		return set_error(-EINVAL, "the value of %s must be a number "
				 "from 0 to 2^53", name);
	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nheld; i++)
		if (strcmp(held[i].name, name) == 0)
			h = &held[i];
	if (h != NULL && (strcmp(h->unit, unit) != 0 || h->mode != mode))
		r = set_error(-EINVAL, "counter %s counts in %s by %s: a counter "
			      "keeps the unit and the way of its first mark",
			      name, h->unit, h->mode == CEEMS_MARKS_SET ? "set" : "add");
	else if (h == NULL && nheld >= CEEMS_MARKS_MAX)
		r = set_error(-ENOSPC, "a job keeps at most %d counters: %s is "
			      "not kept", CEEMS_MARKS_MAX, name);
	else if (h != NULL && mode == CEEMS_MARKS_SET && value < h->value)
		r = set_error(-EINVAL, "counter %s is cumulative: %.17g is below "
			      "its last value", name, value);
	if (r < 0)
		goto out;
	if (h == NULL) {
		h = &held[nheld++];
		memset(h, 0, sizeof(*h));
		memcpy(h->name, name, strlen(name) + 1);
		memcpy(h->unit, unit, strlen(unit) + 1);
		h->mode = mode;
	}
	h->value = mode == CEEMS_MARKS_SET ? value : h->value + value;
	h->pending = true;
	if (!hooks_set) {
		hooks_set = true;
		atexit(flush_at_exit);
		pthread_atfork(NULL, NULL, forget_in_child);
	}
	now = now_ns();
	if (h->tried_ns == 0 || now - h->tried_ns >= SEND_EVERY_NS)
		r = send_held(h, now);
out:
	pthread_mutex_unlock(&lock);
	return r;
}

int
ceems_mark_add(const char *name, const char *unit, double value)
{
	return mark(name, unit, CEEMS_MARKS_ADD, value);
}

int
ceems_mark_set(const char *name, const char *unit, double value)
{
	return mark(name, unit, CEEMS_MARKS_SET, value);
}

int
ceems_mark_tag(const char *application)
{
	if (application != NULL && application[0] != '\0' &&
	    !ceems_marks_name_ok(application))
		return set_error(-EINVAL, "a tag must be 1 to 31 letters, digits, "
				 "'_', '.' or '-'");
	pthread_mutex_lock(&lock);
	/* Checked to fit by ceems_marks_name_ok. */
	snprintf(tag, sizeof(tag), "%s", application != NULL ? application : "");
	pthread_mutex_unlock(&lock);
	return 0;
}

int
ceems_mark_flush(void)
{
	uint64_t start = now_ns(), pause_ns = 10000000;
	int first = 0;

	pthread_mutex_lock(&lock);
	for (unsigned i = 0; i < nheld; i++) {
		int r = 0;

		while (held[i].pending) {
			r = send_held(&held[i], now_ns());
			if (r != -EBUSY || now_ns() - start >= FLUSH_WAIT_NS)
				break;
			/* The job's rate is spent: wait for it to refill. */
			nanosleep(&(struct timespec){ .tv_nsec = (long)pause_ns }, NULL);
			if (pause_ns < 200000000)
				pause_ns *= 2;
		}
		if (r < 0 && first == 0)
			first = r;
	}
	pthread_mutex_unlock(&lock);
	return first;
}

const char *
ceems_mark_error(void)
{
	return last_error;
}
