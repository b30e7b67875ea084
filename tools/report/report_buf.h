/* report_buf.h - a growing text buffer the reports and mails are
 * written into; an allocation failure sticks, and is checked once at the
 * end. */
#ifndef REPORT_BUF_H
#define REPORT_BUF_H

#include <stdbool.h>
#include <stddef.h>

struct report_buf {
	char *data;
	size_t len, cap;
	bool failed;
};

__attribute__((format(printf, 2, 3)))
void report_buf_printf(struct report_buf *b, const char *fmt, ...);
void report_buf_put(struct report_buf *b, const char *s, size_t len);
/* S with &, <, >, " and ' escaped for HTML text and attributes. */
void report_buf_html(struct report_buf *b, const char *s);
void report_buf_free(struct report_buf *b);

/* Copy S into DST, any byte that is not printable ASCII as '?': names
 * from the database reach mail headers, terminals and HTML. */
void report_buf_clean(char *dst, size_t size, const char *s);

#endif /* REPORT_BUF_H */
