/* test_report_mail.c - the reports' mail: addresses that could add a
 * header or a recipient refused, both parts in a multipart/alternative
 * message, lines SMTP refuses caught, files created new and never
 * through a link, a failing sendmail reported. */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "report/report_doc.h"
#include "report/report_mail.h"
#include "../tap.h"

static void
test_addresses(void)
{
	ok(report_mail_address_ok("alice@localhost"), "alice@localhost");
	ok(report_mail_address_ok("a.b-c_d+e@example.org"), "dots, dashes, plus");
	ok(!report_mail_address_ok("alice@localhost\nBcc: eve@x"), "a newline is refused");
	ok(!report_mail_address_ok("alice, eve@x"), "a second recipient is refused");
	ok(!report_mail_address_ok("alice"), "no domain is refused");
	ok(!report_mail_address_ok("@x"), "no local part is refused");
	ok(!report_mail_address_ok("a@b@c"), "two @ are refused");
}

static void
doc_of(struct report_doc *d, const char *para)
{
	report_doc_begin(d, "Title & more");
	report_doc_para(d, "%s", para);
	report_doc_end(d);
}

static void
test_compose(void)
{
	struct report_buf m = { 0 };
	struct report_doc d;
	char err[256], *long_word;

	doc_of(&d, "Hello <there>");
	is_int(report_mail_compose(&m, "ceems@localhost", "alice@localhost", "Digest", &d,
				   err, sizeof(err)), 0, "composed");
	ok(strstr(m.data, "\nTo: alice@localhost\n") != NULL, "To header");
	ok(strstr(m.data, "Content-Type: multipart/alternative; boundary=") != NULL, "multipart");
	ok(strstr(m.data, "Content-Type: text/plain; charset=us-ascii") != NULL, "text part");
	ok(strstr(m.data, "Content-Type: text/html; charset=us-ascii") != NULL, "html part");
	ok(strstr(m.data, "Hello &lt;there&gt;") != NULL, "html escaped");
	ok(strstr(m.data, "\nHello <there>\n") != NULL, "text as written");
	ok(strstr(m.data, "Auto-Submitted: auto-generated") != NULL, "marked automatic");
	report_buf_free(&m);
	is_int(report_mail_compose(&m, "ceems@localhost", "eve@x\nBcc: all@x", "Digest", &d,
				   err, sizeof(err)), -1, "an unsafe To is refused");
	is_int(report_mail_compose(&m, "ceems@localhost", "alice@localhost", "a\r\nBcc: x", &d,
				   err, sizeof(err)), -1, "an unsafe subject is refused");
	report_doc_free(&d);
	report_buf_free(&m);

	long_word = malloc(1200);
	memset(long_word, 'x', 1199);
	long_word[1199] = '\0';
	doc_of(&d, long_word);
	is_int(report_mail_compose(&m, "ceems@localhost", "alice@localhost", "Digest", &d,
				   err, sizeof(err)), -1, "a line over 998 bytes is refused");
	report_doc_free(&d);
	report_buf_free(&m);
	free(long_word);
}

static void
test_write_and_send(void)
{
	struct report_buf m = { 0 };
	char dir[] = "/tmp/test_report_mail.XXXXXX", path[256], err[256];
	struct stat st;

	report_buf_printf(&m, "To: alice@localhost\n\nhello\n");
	if (mkdtemp(dir) == NULL) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	is_int(report_mail_write(dir, "a.eml", &m, err, sizeof(err)), 0, "written");
	snprintf(path, sizeof(path), "%s/a.eml", dir);
	ok(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode 0600");
	is_int(report_mail_write(dir, "a.eml", &m, err, sizeof(err)), -1,
	       "an existing file is not overwritten");
	snprintf(path, sizeof(path), "%s/b.eml", dir);
	ok(symlink("/tmp/test_report_mail_target", path) == 0, "a link planted");
	is_int(report_mail_write(dir, "b.eml", &m, err, sizeof(err)), -1, "a link is not followed");
	ok(access("/tmp/test_report_mail_target", F_OK) < 0, "nothing written through it");
	is_int(report_mail_write(dir, "../c.eml", &m, err, sizeof(err)), -1, "no path in a name");
	unlink(path);
	snprintf(path, sizeof(path), "%s/a.eml", dir);
	unlink(path);
	rmdir(dir);

	is_int(report_mail_send("/bin/false", &m, err, sizeof(err)), -1,
	       "a sendmail that fails is reported");
	ok(strstr(err, "exited with 1") != NULL, "with its status: %s", err);
	is_int(report_mail_send("/nonexistent/sendmail", &m, err, sizeof(err)), -1,
	       "a missing sendmail is reported");
	report_buf_free(&m);
}

int
main(void)
{
	test_addresses();
	test_compose();
	test_write_and_send();
	return done_testing();
}
