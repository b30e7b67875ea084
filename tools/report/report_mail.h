/* report_mail.h - a report as a MIME message (multipart/alternative:
 * plain text, then HTML) and its delivery: through the sendmail
 * interface every MTA offers (fork and exec, no shell), or into a file. */
#ifndef REPORT_MAIL_H
#define REPORT_MAIL_H

#include <stddef.h>

#include "report_buf.h"
#include "report_doc.h"

/* Whether S is safe as a mail address (local@domain of letters, digits
 * and . _ + -): anything else could add headers or recipients. */
int report_mail_address_ok(const char *s);

/* The message in OUT; -1 with ERR set when an address is unsafe or a
 * line is too long for SMTP (998 bytes). */
int report_mail_compose(struct report_buf *out, const char *from,
			const char *to, const char *subject,
			const struct report_doc *doc, char *err, size_t err_size);

/* Pipe MSG to SENDMAIL -t -oi; 0 when it exited 0, else -1 with ERR. */
int report_mail_send(const char *sendmail, const struct report_buf *msg,
		     char *err, size_t err_size);

/* Write MSG to DIR/NAME, a new file (never one that exists or a link),
 * mode 0600; -1 with ERR set. */
int report_mail_write(const char *dir, const char *name,
		      const struct report_buf *msg, char *err, size_t err_size);

#endif /* REPORT_MAIL_H */
