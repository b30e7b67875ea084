/* report_doc.h - a report written once, read twice: each heading,
 * paragraph and table goes into a plain-text part (ASCII, 78 columns)
 * and an accessible HTML part (headings, tables with a caption and
 * header cells, no meaning in colour alone). */
#ifndef REPORT_DOC_H
#define REPORT_DOC_H

#include "report_buf.h"

struct report_doc {
	struct report_buf text, html;
};

#define REPORT_DOC_COLS_MAX 8
#define REPORT_DOC_CELL_MAX 64

struct report_table {
	const char *caption;
	int ncols;
	const char *headers[REPORT_DOC_COLS_MAX];
	int nrows, cap;
	char (*cells)[REPORT_DOC_COLS_MAX][REPORT_DOC_CELL_MAX];
	/* per row: a class name for the HTML row (a light), or none */
	char (*classes)[16];
};

void report_doc_begin(struct report_doc *d, const char *title);
void report_doc_heading(struct report_doc *d, const char *title);
__attribute__((format(printf, 2, 3)))
void report_doc_para(struct report_doc *d, const char *fmt, ...);
void report_doc_end(struct report_doc *d);
void report_doc_free(struct report_doc *d);

/* A table: rows added with report_doc_row (NCOLS cells), then
 * written to both parts by report_doc_table. */
void report_doc_table_init(struct report_table *t, const char *caption,
			   int ncols, const char *const *headers);
/* CLASS may be NULL; cells are cut to REPORT_DOC_CELL_MAX - 1 bytes. */
void report_doc_row(struct report_table *t, const char *cls,
		    const char *const *cells);
void report_doc_table(struct report_doc *d, struct report_table *t);

#endif /* REPORT_DOC_H */
