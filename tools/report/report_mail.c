/* report_mail.c - a report as a multipart/alternative message, and its
 * delivery: piped to the site's sendmail (-t: the recipients are the
 * message's own To header; -oi: a line of one dot does not end it), run
 * by fork and exec with a fixed environment, or written to a new file. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "report_mail.h"
#include "base/fileio.h"

int
report_mail_address_ok(const char *s)
{
	const char *at = strchr(s, '@');
	size_t len = strlen(s);

	if (at == NULL || at == s || at[1] == '\0' || len > 254 ||
	    strchr(at + 1, '@') != NULL)
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._+-@", *s) != NULL))
			return 0;
	return 1;
}

static int
lines_ok(const struct report_buf *b)
{
	size_t run = 0;

	for (size_t i = 0; i < b->len; i++) {
		unsigned char c = (unsigned char)b->data[i];

		if (c == '\n') {
			run = 0;
			continue;
		}
		/* 7bit parts: ASCII without NUL or bare CR */
		if (c == 0 || c == '\r' || c > 0x7e || ++run > 998)
			return 0;
	}
	return 1;
}

int
report_mail_compose(struct report_buf *out, const char *from, const char *to,
		    const char *subject, const struct report_doc *doc,
		    char *err, size_t err_size)
{
	char date[64], boundary[64];
	time_t now = time(NULL);
	struct tm tm;

	if (!report_mail_address_ok(from) || !report_mail_address_ok(to)) {
		snprintf(err, err_size, "not a plain mail address: %.64s or %.64s", from, to);
		return -1;
	}
	for (const char *p = subject; *p != '\0'; p++)
		if (*p < 0x20 || *p > 0x7e) {
			snprintf(err, err_size, "the subject is not printable ASCII");
			return -1;
		}
	if (!lines_ok(&doc->text) || !lines_ok(&doc->html)) {
		snprintf(err, err_size, "a line of the report is not 7-bit text of at most 998 bytes");
		return -1;
	}
	gmtime_r(&now, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S +0000", &tm);
	/* A boundary no part can hold: parts are ASCII text, and this has
	 * a '=' and '_' run no wrapped line or HTML of ours makes. */
	snprintf(boundary, sizeof(boundary), "=_ceems_%lld_%d_=", (long long)now, (int)getpid());
	report_buf_printf(out,
			  "From: %s\nTo: %s\nSubject: %s\nDate: %s\nMIME-Version: 1.0\n"
			  "Auto-Submitted: auto-generated\n"
			  "Content-Type: multipart/alternative; boundary=\"%s\"\n\n"
			  "This is a message in plain text and HTML.\n\n"
			  "--%s\nContent-Type: text/plain; charset=us-ascii\n"
			  "Content-Transfer-Encoding: 7bit\n\n",
			  from, to, subject, date, boundary, boundary);
	report_buf_put(out, doc->text.data, doc->text.len);
	report_buf_printf(out, "\n--%s\nContent-Type: text/html; charset=us-ascii\n"
			  "Content-Transfer-Encoding: 7bit\n\n", boundary);
	report_buf_put(out, doc->html.data, doc->html.len);
	report_buf_printf(out, "\n--%s--\n", boundary);
	if (out->failed || doc->text.failed || doc->html.failed) {
		snprintf(err, err_size, "out of memory");
		return -1;
	}
	return 0;
}

int
report_mail_send(const char *sendmail, const struct report_buf *msg, char *err,
		 size_t err_size)
{
	/* execve's arrays are of char *: writable copies, no casts. */
	char path[4096], opt_t[] = "-t", opt_oi[] = "-oi";
	char env_path[] = "PATH=/usr/sbin:/usr/bin:/sbin:/bin";
	char *argv[] = { path, opt_t, opt_oi, NULL };
	char *env[] = { env_path, NULL };
	int fds[2], status, werr;
	pid_t pid;

	if (snprintf(path, sizeof(path), "%s", sendmail) >= (int)sizeof(path)) {
		snprintf(err, err_size, "the sendmail path is too long");
		return -1;
	}

	if (pipe2(fds, O_CLOEXEC) < 0) {
		snprintf(err, err_size, "pipe: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		snprintf(err, err_size, "fork: %s", strerror(errno));
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		if (dup2(fds[0], STDIN_FILENO) < 0)
			_exit(127);
		execve(path, argv, env);
		_exit(127);
	}
	close(fds[0]);
	/* A sendmail that exits early must not kill us with SIGPIPE. */
	signal(SIGPIPE, SIG_IGN);
	werr = ceems_fileio_write_all(fds[1], msg->data, msg->len);
	close(fds[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR) {
			snprintf(err, err_size, "waitpid: %s", strerror(errno));
			return -1;
		}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		snprintf(err, err_size, "%s %s %d", sendmail,
			 WIFEXITED(status) ? "exited with" : "was killed by signal",
			 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
		return -1;
	}
	if (werr < 0) {
		snprintf(err, err_size, "%s did not read the whole message", sendmail);
		return -1;
	}
	return 0;
}

int
report_mail_write(const char *dir, const char *name, const struct report_buf *msg,
		  char *err, size_t err_size)
{
	int dfd, fd;

	if (strchr(name, '/') != NULL || name[0] == '.' || name[0] == '\0') {
		snprintf(err, err_size, "%.64s: not a plain file name", name);
		return -1;
	}
	dfd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		snprintf(err, err_size, "%s: %s", dir, strerror(errno));
		return -1;
	}
	fd = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	close(dfd);
	if (fd < 0) {
		snprintf(err, err_size, "%s/%s: %s", dir, name, strerror(errno));
		return -1;
	}
	if (ceems_fileio_write_all(fd, msg->data, msg->len) < 0) {
		close(fd);
		snprintf(err, err_size, "%s/%s: write failed", dir, name);
		return -1;
	}
	if (close(fd) < 0) {
		snprintf(err, err_size, "%s/%s: write failed", dir, name);
		return -1;
	}
	return 0;
}
