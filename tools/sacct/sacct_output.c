/* sacct_output.c - ceems-sacct's output modes (see sacct_output.h).  All
 * of them go through one grid of text cells, so that the job table and
 * the --summary footer look alike in every mode. */
#include "config.h"

#include <langinfo.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "sacct_output.h"
#include "summary/units.h"

/* The cells' texts are kept end to end in one buffer: a heavy user's
 * month is 600,000 cells, and an allocation each was a tenth of the
 * tool's time (doc/performance.md).  Each cell is made safe for a
 * terminal and measured once, when it is put. */
struct cell_size {
	uint32_t len;		/* bytes */
	uint32_t width;		/* characters */
};

struct grid {
	size_t ncols, nrows;
	const char **head;
	const bool *right;
	const int *fixed;	/* a column's %N width, 0 to fit */
	char **cells;		/* nrows x ncols, into text (grid_seal) */
	size_t *at;		/* each cell's offset in text, until then */
	struct cell_size *size;	/* each cell's */
	char *text;		/* every cell's text, each terminated */
	size_t len, cap;
};

void
sacct_output_detect(int fd, struct sacct_output_opts *o)
{
	struct winsize ws;
	const char *codeset, *cols;
	bool tty = isatty(fd) == 1;
	long n;

	if (o->style == SACCT_STYLE_AUTO) {
		codeset = nl_langinfo(CODESET);
		o->style = tty && codeset != NULL &&
			(strcasecmp(codeset, "UTF-8") == 0 ||
			 strcasecmp(codeset, "utf8") == 0) ?
			SACCT_STYLE_BOX : SACCT_STYLE_ASCII;
	}
	o->width = 0;
	if (tty && ioctl(fd, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
		o->width = ws.ws_col;
		return;
	}
	if ((cols = getenv("COLUMNS")) != NULL) {
		n = strtol(cols, NULL, 10);
		if (n >= 20 && n <= 10000)
			o->width = (int)n;
	}
}

/* Characters, not bytes: UTF-8 continuation bytes do not count. */
static size_t
text_width(const char *s)
{
	size_t n = 0;

	for (; *s != '\0'; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			n++;
	return n;
}

/* Control characters of a job name must not reach the terminal, in any
 * output mode (a CSV file is read on a terminal too): C0 and DEL, and
 * the C1 controls of UTF-8 (U+0080..U+009F, 0xc2 0x80..0x9f), which some
 * terminals obey as escape sequences.  Each becomes one '?'.  Returns
 * S's size after: bytes, and characters (UTF-8 continuation bytes do not
 * count). */
static struct cell_size
sanitize(char *s)
{
	struct cell_size size = { 0, 0 };
	char *start = s, *out = s;

	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if (c == 0xc2 && (unsigned char)s[1] >= 0x80 &&
		    (unsigned char)s[1] <= 0x9f) {
			*out++ = '?';
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			*out++ = '?';
		} else {
			*out++ = *s;
			if ((c & 0xc0) == 0x80)
				continue;	/* a continuation byte */
		}
		size.width++;
	}
	*out = '\0';
	size.len = (uint32_t)(out - start);
	return size;
}

/* A line of the table, built before it is printed: an ASCII line loses
 * its trailing blanks.  Reused from line to line. */
struct line {
	char *buf;
	size_t len, cap;
	bool failed;
};

static void
line_add(struct line *l, const char *s, size_t n, size_t repeat)
{
	size_t need, cap;
	char *buf;

	if (l->failed || n == 0 || repeat == 0)
		return;
	if (n > (SIZE_MAX - l->len) / repeat) {
		l->failed = true;
		return;
	}
	need = l->len + n * repeat;
	if (need > l->cap) {
		cap = l->cap > 0 ? l->cap : 256;
		while (cap < need)
			cap = cap > SIZE_MAX / 2 ? need : cap * 2;
		if ((buf = realloc(l->buf, cap)) == NULL) {
			l->failed = true;
			return;
		}
		l->buf = buf;
		l->cap = cap;
	}
	if (n == 1) {
		/* padding: one byte many times */
		memset(l->buf + l->len, *s, repeat);
		l->len += repeat;
		return;
	}
	for (; repeat > 0; repeat--, l->len += n)
		memcpy(l->buf + l->len, s, n);
}

static void
line_str(struct line *l, const char *s)
{
	line_add(l, s, strlen(s), 1);
}

/* S, of SIZE, in W columns: cut with a '+' like sacct when longer. */
static void
put_cell(struct line *l, const char *s, struct cell_size size, size_t w,
	 bool right, bool last)
{
	size_t len = size.width, chars;
	const char *p;

	if (len > w) {
		for (p = s, chars = 0; *p != '\0'; p++) {
			if (((unsigned char)*p & 0xc0) != 0x80 &&
			    chars++ == w - 1)
				break;
		}
		line_add(l, s, (size_t)(p - s), 1);
		if (w > 0)
			line_add(l, "+", 1, 1);
		return;
	}
	if (right)
		line_add(l, " ", 1, w - len);
	line_add(l, s, size.len, 1);
	if (!right && !last)
		line_add(l, " ", 1, w - len);
}

static void
put_rule(FILE *out, const size_t *w, size_t ncols, const char *left,
	 const char *mid, const char *right)
{
	size_t c, i;

	fputs(left, out);
	for (c = 0; c < ncols; c++) {
		for (i = 0; i < w[c] + 2; i++)
			fputs("\xe2\x94\x80", out);	/* ─ */
		fputs(c + 1 < ncols ? mid : right, out);
	}
	fputc('\n', out);
}

/* A line of CELLS, of SIZES (NULL: measured here, the header's). */
static void
put_line(FILE *out, struct line *l, const struct grid *g,
	 const char *const *cells, const struct cell_size *sizes,
	 const size_t *w, bool box)
{
	struct cell_size size;
	size_t c;

	l->len = 0;
	if (box)
		line_str(l, "\xe2\x94\x82 ");	/* │ */
	for (c = 0; c < g->ncols; c++) {
		if (sizes != NULL) {
			size = sizes[c];
		} else {
			size.len = (uint32_t)strlen(cells[c]);
			size.width = (uint32_t)text_width(cells[c]);
		}
		put_cell(l, cells[c], size, w[c], g->right[c],
			 !box && c + 1 == g->ncols);
		if (box)
			line_str(l, " \xe2\x94\x82");
		if (c + 1 < g->ncols)
			line_add(l, " ", 1, 1);
	}
	if (l->failed)
		return;
	while (l->len > 0 && l->buf[l->len - 1] == ' ')
		l->len--;
	fwrite(l->buf, 1, l->len, out);
	fputc('\n', out);
}

/* 0, or -1 when a line could not be built (out of memory): the table
 * is then incomplete and the caller says so. */
static int
print_table(FILE *out, const struct grid *g,
	    const struct sacct_output_opts *o)
{
	struct line line = { NULL, 0, 0, false };
	size_t *w, c, r, total, widest, len, floor_w;
	bool box = o->style == SACCT_STYLE_BOX;

	if ((w = calloc(g->ncols, sizeof(*w))) == NULL)
		return -1;
	for (c = 0; c < g->ncols; c++) {
		if (g->fixed[c] > 0) {
			w[c] = (size_t)g->fixed[c];
			continue;
		}
		w[c] = o->noheader ? 1 : text_width(g->head[c]);
		for (r = 0; r < g->nrows; r++)
			if ((len = g->size[r * g->ncols + c].width) > w[c])
				w[c] = len;
	}
	/* Fit the terminal: narrow the widest fitted column, one character
	 * at a time, down to its header (or 6), until the line fits; what
	 * cannot be narrowed further wraps. */
	for (;;) {
		total = box ? 1 : 0;
		for (c = 0; c < g->ncols; c++)
			total += w[c] + (box ? 3 : 1);
		if (!box && total > 0)
			total--;
		if (o->width <= 0 || total <= (size_t)o->width)
			break;
		/* Text first (names, lists); numbers cut short would
		 * mislead, so they narrow only when no text column can. */
		widest = g->ncols;
		for (int pass = 0; pass < 2 && widest == g->ncols; pass++) {
			for (c = 0; c < g->ncols; c++) {
				floor_w = text_width(g->head[c]);
				if (floor_w < 6)
					floor_w = 6;
				if (g->fixed[c] == 0 && w[c] > floor_w &&
				    g->right[c] == (pass == 1) &&
				    (widest == g->ncols || w[c] > w[widest]))
					widest = c;
			}
		}
		if (widest == g->ncols)
			break;	/* nothing left to narrow: let it wrap */
		w[widest]--;
	}
	if (box)
		put_rule(out, w, g->ncols, "\xe2\x94\x8c", "\xe2\x94\xac", "\xe2\x94\x90");
	if (!o->noheader) {
		put_line(out, &line, g, g->head, NULL, w, box);
		if (box) {
			put_rule(out, w, g->ncols, "\xe2\x94\x9c", "\xe2\x94\xbc", "\xe2\x94\xa4");
		} else {
			for (c = 0; c < g->ncols; c++) {
				for (r = 0; r < w[c]; r++)
					fputc('-', out);
				if (c + 1 < g->ncols)
					fputc(' ', out);
			}
			fputc('\n', out);
		}
	}
	for (r = 0; r < g->nrows; r++)
		put_line(out, &line, g, (const char *const *)&g->cells[r * g->ncols],
			 &g->size[r * g->ncols], w, box);
	if (box)
		put_rule(out, w, g->ncols, "\xe2\x94\x94", "\xe2\x94\xb4", "\xe2\x94\x98");
	free(line.buf);
	free(w);
	return line.failed ? -1 : 0;
}

void
sacct_output_csv_field(FILE *out, const char *text)
{
	const char *p;

	if (strpbrk(text, ",\"\r\n") == NULL) {
		fputs(text, out);
		return;
	}
	fputc('"', out);
	for (p = text; *p != '\0'; p++) {
		if (*p == '"')
			fputc('"', out);
		fputc(*p, out);
	}
	fputc('"', out);
}

static void
print_delimited(FILE *out, const struct grid *g,
		const struct sacct_output_opts *o)
{
	const char *delim = o->mode == SACCT_CSV ? "," :
		o->delimiter != NULL ? o->delimiter : "|";
	const char *const *line;
	size_t r, c;

	for (r = o->noheader ? 1 : 0; r <= g->nrows; r++) {
		line = r == 0 ? g->head :
			(const char *const *)&g->cells[(r - 1) * g->ncols];
		for (c = 0; c < g->ncols; c++) {
			if (o->mode == SACCT_CSV)
				sacct_output_csv_field(out, line[c]);
			else
				fputs(line[c], out);
			if (c + 1 < g->ncols || o->mode == SACCT_PARSABLE)
				fputs(delim, out);
		}
		fputc('\n', out);
	}
}

static int
print_grid(FILE *out, const struct grid *g, const struct sacct_output_opts *o)
{
	if (o->mode == SACCT_TABLE) {
		if (print_table(out, g, o) < 0)
			return -1;
	} else {
		print_delimited(out, g, o);
	}
	return fflush(out) == 0 && !ferror(out) ? 0 : -1;
}

static void
grid_free(struct grid *g)
{
	free(g->cells);
	free(g->at);
	free(g->size);
	free(g->text);
	g->cells = NULL;
	g->at = NULL;
	g->size = NULL;
	g->text = NULL;
}

/* Room for the grid's cells; 0 or -1. */
static int
grid_start(struct grid *g)
{
	size_t n = g->nrows * g->ncols;

	if (n == 0)
		return 0;
	if (g->nrows > SIZE_MAX / sizeof(size_t) / g->ncols ||
	    (g->at = calloc(n, sizeof(size_t))) == NULL)
		return -1;
	if ((g->size = calloc(n, sizeof(*g->size))) == NULL) {
		free(g->at);
		g->at = NULL;
		return -1;
	}
	return 0;
}

/* Cell I is a copy of S. */
static int
grid_put(struct grid *g, size_t i, const char *s)
{
	size_t n = strlen(s) + 1, cap;
	char *text;

	if (g->len + n > g->cap) {
		cap = g->cap > 0 ? g->cap : 4096;
		while (cap < g->len + n) {
			if (cap > SIZE_MAX / 2)
				return -1;
			cap *= 2;
		}
		if ((text = realloc(g->text, cap)) == NULL)
			return -1;
		g->text = text;
		g->cap = cap;
	}
	memcpy(g->text + g->len, s, n);
	g->at[i] = g->len;
	g->size[i] = sanitize(g->text + g->len);
	g->len += g->size[i].len + 1;
	return 0;
}

/* The cells, once all are put: pointers into the text. */
static int
grid_seal(struct grid *g)
{
	size_t i, n = g->nrows * g->ncols;

	if (n == 0)
		return 0;
	if ((g->cells = calloc(n, sizeof(char *))) == NULL)
		return -1;
	for (i = 0; i < n; i++)
		g->cells[i] = g->text + g->at[i];
	return 0;
}

int
sacct_output_rows(FILE *out, const struct sacct_column *cols, size_t ncols,
		  const struct sacct_rows *rows, const char *const *fill,
		  const struct sacct_output_opts *o)
{
	const char *head[SACCT_MAX_COLUMNS];
	bool right[SACCT_MAX_COLUMNS];
	int fixed[SACCT_MAX_COLUMNS];
	struct grid g = { ncols, rows->n, head, right, fixed, NULL, NULL, NULL, NULL, 0, 0 };
	char buf[SACCT_CELL_MAX];
	size_t r, c;
	int ret;

	if (ncols == 0 || ncols > SACCT_MAX_COLUMNS)
		return -1;
	for (c = 0; c < ncols; c++) {
		head[c] = cols[c].field->name;
		right[c] = cols[c].field->right;
		fixed[c] = cols[c].width;
	}
	if (grid_start(&g) < 0)
		return -1;
	for (r = 0; r < rows->n; r++) {
		for (c = 0; c < ncols; c++) {
			const char *cell = buf;

			buf[0] = '\0';
			if (cols[c].field->format != NULL)
				cols[c].field->format(&rows->v[r], buf, sizeof(buf));
			else if (fill != NULL && fill[r * ncols + c] != NULL)
				cell = fill[r * ncols + c];
			if (grid_put(&g, r * ncols + c, cell) < 0) {
				grid_free(&g);
				return -1;
			}
		}
	}
	if (grid_seal(&g) < 0) {
		grid_free(&g);
		return -1;
	}
	ret = print_grid(out, &g, o);
	grid_free(&g);
	return ret;
}

/* ---- --summary ---- */

struct total {
	char key[64];
	unsigned long jobs, measured;
	double cpu_hours;		/* allocated: elapsed x CPUs */
	double cpu_used_s, cpu_alloc_s;	/* jobs that have both */
	double joules, grams;
	bool have_grams;
};

static void
total_add(struct total *t, const struct sacct_row *row)
{
	double alloc = row->alloc_cpus > 0 && isfinite(row->elapsed_s) ?
		row->elapsed_s * row->alloc_cpus : NAN;

	t->jobs++;
	if (isfinite(alloc)) {
		t->cpu_hours += alloc / 3600.0;
		if (isfinite(row->cpu_s)) {
			t->cpu_used_s += row->cpu_s;
			t->cpu_alloc_s += alloc;
		}
	}
	if (isfinite(row->total_j)) {
		t->measured++;
		t->joules += row->total_j;
	}
	if (isfinite(row->emissions_g)) {
		t->grams += row->emissions_g;
		t->have_grams = true;
	}
}

#define SUMMARY_COLS 7

static int
total_cells(const struct total *t, struct grid *g, size_t first)
{
	char buf[7][64];
	int i;

	snprintf(buf[0], sizeof(buf[0]), "%s", t->key);
	snprintf(buf[1], sizeof(buf[1]), "%lu", t->jobs);
	sacct_fields_fmt_sig3(t->cpu_hours, buf[2], sizeof(buf[2]));
	sacct_fields_fmt_pct(t->cpu_alloc_s > 0 ? t->cpu_used_s / t->cpu_alloc_s : NAN,
		      buf[3], sizeof(buf[3]));
	ceems_units_fmt_energy(buf[4], sizeof(buf[4]),
			 t->measured > 0 ? t->joules : NAN);
	ceems_units_fmt_grams(buf[5], sizeof(buf[5]), t->have_grams ? t->grams : NAN,
			NULL);
	snprintf(buf[6], sizeof(buf[6]), "%lu/%lu", t->measured, t->jobs);
	for (i = 0; i < SUMMARY_COLS; i++)
		if (grid_put(g, first + (size_t)i, buf[i]) < 0)
			return -1;
	return 0;
}

static int
cmp_total(const void *a, const void *b)
{
	return strcmp(((const struct total *)a)->key,
		      ((const struct total *)b)->key);
}

int
sacct_output_summary(FILE *out, const struct sacct_rows *rows,
		     bool by_account, const struct sacct_output_opts *o)
{
	const char *head[SUMMARY_COLS] = {
		by_account ? "Account" : "User", "Jobs", "CPUHours", "CPUEff",
		"Energy", "CO2e", "Measured"
	};
	const bool right[SUMMARY_COLS] = { false, true, true, true, true, true, true };
	const int fixed[SUMMARY_COLS] = { 0 };
	struct grid g = { SUMMARY_COLS, 0, head, right, fixed, NULL, NULL, NULL, NULL, 0, 0 };
	struct total *t = NULL, all, *tmp;
	size_t nt = 0, i, r;
	const char *key;
	int ret = -1;

	memset(&all, 0, sizeof(all));
	snprintf(all.key, sizeof(all.key), "TOTAL");
	for (r = 0; r < rows->n; r++) {
		if (!sacct_row_is_job(&rows->v[r]))
			continue;
		key = by_account ? rows->v[r].account : rows->v[r].user;
		for (i = 0; i < nt; i++)
			if (strcmp(t[i].key, key) == 0)
				break;
		if (i == nt) {
			if ((tmp = realloc(t, (nt + 1) * sizeof(*t))) == NULL)
				goto out;
			t = tmp;
			memset(&t[nt], 0, sizeof(t[nt]));
			snprintf(t[nt].key, sizeof(t[nt].key), "%s", key);
			nt++;
		}
		total_add(&t[i], &rows->v[r]);
		total_add(&all, &rows->v[r]);
	}
	if (nt > 1)
		qsort(t, nt, sizeof(*t), cmp_total);
	g.nrows = nt + 1;
	if (grid_start(&g) < 0)
		goto out;
	for (i = 0; i < nt; i++)
		if (total_cells(&t[i], &g, i * SUMMARY_COLS) < 0)
			goto out;
	if (total_cells(&all, &g, nt * SUMMARY_COLS) < 0 || grid_seal(&g) < 0)
		goto out;
	ret = print_grid(out, &g, o);
out:
	grid_free(&g);
	free(t);
	return ret;
}
