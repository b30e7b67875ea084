/* sacct_slurm.h - the sacct fields ceems does not keep (status "empty" in
 * sacct_fields.def), taken from Slurm's own sacct where a site runs
 * slurmdbd and names it in ceems.conf (slurm_sacct): a script asking for
 * AdminComment or ReqTRES gets Slurm's value beside ceems's energy.
 *
 * Slurm's sacct runs as the caller (ceems-sacct holds no privilege by
 * then), so slurmdbd shows them what it would show them anyway.  Its
 * lines are matched to ceems's rows by cluster, JobIDRaw and the job's
 * start, so that a requeued job's earlier run is never given its latest
 * run's values; a row Slurm does not have keeps its empty cells. */
#ifndef CEEMS_SACCT_SLURM_H
#define CEEMS_SACCT_SLURM_H

#include <stddef.h>

#include "sacct_fields.h"
#include "sacct_row.h"

/* Job ids per run of Slurm's sacct: its command line stays far below
 * the kernel's limit on an argument list. */
#define SACCT_SLURM_CHUNK 256

/* The longest output read from Slurm's sacct (all of its runs). */
#define SACCT_SLURM_OUTPUT_MAX ((size_t)1 << 30)

struct sacct_slurm;

/* Slurm's values of the columns COLS that ceems leaves empty, for ROWS:
 * none asked (no column of status "empty"), *OUT is NULL and 0 is
 * returned.  Else runs SACCT (an absolute path) once per
 * SACCT_SLURM_CHUNK jobs and matches its lines; -1 with ERR when it
 * cannot be run, fails or writes what is not its --parsable2 output
 * (the caller warns and prints the empty cells). */
int sacct_slurm_fetch(const char *sacct, const struct sacct_column *cols,
		      size_t ncols, const struct sacct_rows *rows,
		      struct sacct_slurm **out, char *err, size_t size);

/* The cells to print in place of empty ones: NROWS x NCOLS of ROWS and
 * COLS as given to the fetch, NULL where Slurm has nothing (or for a
 * column ceems fills). */
const char *const *sacct_slurm_cells(const struct sacct_slurm *s);

void sacct_slurm_free(struct sacct_slurm *s);

/* The pure part, for the tests and the fuzzer: */

/* An empty set of values for the columns COLS of ROWS; NULL when out of
 * memory or when no column is of status "empty". */
struct sacct_slurm *sacct_slurm_new(const struct sacct_column *cols,
				    size_t ncols, const struct sacct_rows *rows);
/* The --format list Slurm's sacct is run with: JobIDRaw, Cluster, Start,
 * the fields asked, JobIDRaw again (a line's two ids must agree). */
const char *sacct_slurm_format(const struct sacct_slurm *s);
/* Append LEN bytes of Slurm's output; -1 when out of memory or over
 * SACCT_SLURM_OUTPUT_MAX. */
int sacct_slurm_append(struct sacct_slurm *s, const char *text, size_t len);
/* Split what was appended into lines (fields separated by
 * SACCT_SLURM_DELIMITER, each line ended by a newline after its last
 * JobIDRaw) and fill the cells.  0, or -1 with ERR: output that is not
 * sacct's; nothing is filled then.  Two lines of one job that disagree
 * (a field holding the delimiter and a newline could forge a line) fill
 * neither. */
int sacct_slurm_match(struct sacct_slurm *s, char *err, size_t size);

/* The delimiter asked of Slurm's sacct: a control character no field is
 * expected to hold (ASCII's unit separator). */
#define SACCT_SLURM_DELIMITER "\x1f"

#endif
