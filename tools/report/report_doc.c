/* report_doc.c - one report, two parts: plain text wrapped at 78
 * columns and HTML with real headings and tables (caption, th with
 * scope), so a screen reader reads each figure with its header and a
 * traffic light is a word, its colour only a help. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_doc.h"

#define TEXT_WIDTH 78

static const char *const css =
	"body{font-family:sans-serif}"
	"table{border-collapse:collapse}"
	"th,td{border:1px solid #888;padding:2px 6px;text-align:left}"
	"tr.green td:nth-child(2){background:#c8ecc8}"
	"tr.amber td:nth-child(2){background:#f6e2a8}"
	"tr.red td:nth-child(2){background:#f4c0c0}";

void
report_doc_begin(struct report_doc *d, const char *title)
{
	memset(d, 0, sizeof(*d));
	report_buf_printf(&d->text, "%s\n", title);
	for (size_t i = 0; i < strlen(title) && i < TEXT_WIDTH; i++)
		report_buf_put(&d->text, "=", 1);
	report_buf_put(&d->text, "\n", 1);
	report_buf_printf(&d->html, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n"
			  "<meta charset=\"us-ascii\">\n<title>");
	report_buf_html(&d->html, title);
	report_buf_printf(&d->html, "</title>\n<style>%s</style>\n</head>\n<body>\n<h1>", css);
	report_buf_html(&d->html, title);
	report_buf_printf(&d->html, "</h1>\n");
}

void
report_doc_heading(struct report_doc *d, const char *title)
{
	report_buf_printf(&d->text, "\n%s\n", title);
	for (size_t i = 0; i < strlen(title) && i < TEXT_WIDTH; i++)
		report_buf_put(&d->text, "-", 1);
	report_buf_put(&d->text, "\n", 1);
	report_buf_printf(&d->html, "<h2>");
	report_buf_html(&d->html, title);
	report_buf_printf(&d->html, "</h2>\n");
}

/* Wrap S at spaces into lines of at most TEXT_WIDTH columns. */
static void
wrap(struct report_buf *b, const char *s)
{
	size_t col = 0;

	while (*s != '\0') {
		size_t w = strcspn(s, " ");

		if (col > 0 && col + 1 + w > TEXT_WIDTH) {
			report_buf_put(b, "\n", 1);
			col = 0;
		} else if (col > 0) {
			report_buf_put(b, " ", 1);
			col++;
		}
		report_buf_put(b, s, w);
		col += w;
		s += w;
		while (*s == ' ')
			s++;
	}
	report_buf_put(b, "\n", 1);
}

void
report_doc_para(struct report_doc *d, const char *fmt, ...)
{
	va_list ap;
	char *s;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&s, fmt, ap);
	va_end(ap);
	if (n < 0) {
		d->text.failed = d->html.failed = true;
		return;
	}
	report_buf_put(&d->text, "\n", 1);
	wrap(&d->text, s);
	report_buf_printf(&d->html, "<p>");
	report_buf_html(&d->html, s);
	report_buf_printf(&d->html, "</p>\n");
	free(s);
}

void
report_doc_end(struct report_doc *d)
{
	report_buf_printf(&d->html, "</body>\n</html>\n");
}

void
report_doc_free(struct report_doc *d)
{
	report_buf_free(&d->text);
	report_buf_free(&d->html);
}

void
report_doc_table_init(struct report_table *t, const char *caption, int ncols,
		      const char *const *headers)
{
	memset(t, 0, sizeof(*t));
	t->caption = caption;
	t->ncols = ncols > REPORT_DOC_COLS_MAX ? REPORT_DOC_COLS_MAX : ncols;
	for (int c = 0; c < t->ncols; c++)
		t->headers[c] = headers[c];
}

void
report_doc_row(struct report_table *t, const char *cls, const char *const *cells)
{
	if (t->nrows == t->cap) {
		int cap = t->cap != 0 ? t->cap * 2 : 16;
		void *c = realloc(t->cells, (size_t)cap * sizeof(t->cells[0]));
		void *k;

		if (c == NULL)
			return;
		t->cells = c;
		if ((k = realloc(t->classes, (size_t)cap * sizeof(t->classes[0]))) == NULL)
			return;
		t->classes = k;
		t->cap = cap;
	}
	for (int c = 0; c < t->ncols; c++)
		snprintf(t->cells[t->nrows][c], REPORT_DOC_CELL_MAX, "%s",
			 cells[c] != NULL ? cells[c] : "");
	snprintf(t->classes[t->nrows], sizeof(t->classes[0]), "%s", cls != NULL ? cls : "");
	t->nrows++;
}

static void
text_table(struct report_buf *b, const struct report_table *t)
{
	size_t width[REPORT_DOC_COLS_MAX];

	for (int c = 0; c < t->ncols; c++) {
		width[c] = strlen(t->headers[c]);
		for (int r = 0; r < t->nrows; r++)
			if (strlen(t->cells[r][c]) > width[c])
				width[c] = strlen(t->cells[r][c]);
	}
	report_buf_printf(b, "\n%s\n", t->caption);
	for (int r = -1; r < t->nrows; r++) {
		report_buf_put(b, " ", 1);
		for (int c = 0; c < t->ncols; c++) {
			const char *s = r < 0 ? t->headers[c] : t->cells[r][c];

			/* no trailing blanks: the last column is not padded */
			report_buf_printf(b, " %-*s", c + 1 < t->ncols ? (int)width[c] : 0, s);
		}
		report_buf_put(b, "\n", 1);
	}
}

static void
html_table(struct report_buf *b, const struct report_table *t)
{
	report_buf_printf(b, "<table>\n<caption>");
	report_buf_html(b, t->caption);
	report_buf_printf(b, "</caption>\n<thead><tr>");
	for (int c = 0; c < t->ncols; c++) {
		report_buf_printf(b, "<th scope=\"col\">");
		report_buf_html(b, t->headers[c]);
		report_buf_printf(b, "</th>");
	}
	report_buf_printf(b, "</tr></thead>\n<tbody>\n");
	for (int r = 0; r < t->nrows; r++) {
		if (t->classes[r][0] != '\0')
			report_buf_printf(b, "<tr class=\"%s\">", t->classes[r]);
		else
			report_buf_printf(b, "<tr>");
		for (int c = 0; c < t->ncols; c++) {
			report_buf_printf(b, c == 0 ? "<th scope=\"row\">" : "<td>");
			report_buf_html(b, t->cells[r][c]);
			report_buf_printf(b, c == 0 ? "</th>" : "</td>");
		}
		report_buf_printf(b, "</tr>\n");
	}
	report_buf_printf(b, "</tbody>\n</table>\n");
}

void
report_doc_table(struct report_doc *d, struct report_table *t)
{
	text_table(&d->text, t);
	html_table(&d->html, t);
	free(t->cells);
	free(t->classes);
	t->cells = NULL;
	t->classes = NULL;
	t->nrows = t->cap = 0;
}
