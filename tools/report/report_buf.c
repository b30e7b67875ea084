/* report_buf.c - a growing text buffer for the reports and mails. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_buf.h"

static bool
grow(struct report_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->failed)
		return false;
	if (b->len + more + 1 <= b->cap)
		return true;
	cap = b->cap != 0 ? b->cap : 4096;
	while (cap < b->len + more + 1) {
		if (cap > ((size_t)1 << 40)) {
			b->failed = true;
			return false;
		}
		cap *= 2;
	}
	if ((p = realloc(b->data, cap)) == NULL) {
		b->failed = true;
		return false;
	}
	b->data = p;
	b->cap = cap;
	return true;
}

void
report_buf_put(struct report_buf *b, const char *s, size_t len)
{
	if (!grow(b, len))
		return;
	memcpy(b->data + b->len, s, len);
	b->len += len;
	b->data[b->len] = '\0';
}

void
report_buf_printf(struct report_buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || !grow(b, (size_t)n)) {
		b->failed = true;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(b->data + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

void
report_buf_html(struct report_buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		switch (*s) {
		case '&':
			report_buf_put(b, "&amp;", 5);
			break;
		case '<':
			report_buf_put(b, "&lt;", 4);
			break;
		case '>':
			report_buf_put(b, "&gt;", 4);
			break;
		case '"':
			report_buf_put(b, "&quot;", 6);
			break;
		case '\'':
			report_buf_put(b, "&#39;", 5);
			break;
		default:
			report_buf_put(b, s, 1);
		}
	}
}

void
report_buf_free(struct report_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof(*b));
}

void
report_buf_clean(char *dst, size_t size, const char *s)
{
	size_t i = 0;

	if (size == 0)
		return;
	for (; s != NULL && s[i] != '\0' && i + 1 < size; i++)
		dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	dst[i] = '\0';
}
