/* ceems-mark - report from a job's shell script how much work it did,
 * so that the job's summary and records say the energy per unit of it
 * (doc/marks.md, ceems-mark(1)):
 *
 *   ceems-mark [--set] [--unit UNIT] [--tag APP] [--strict] NAME VALUE
 *
 * A thin front of libceems_mark (ceems_mark.h): the mark is sent at
 * once, waiting up to a second when the job marks faster than the agent
 * takes.  A mark the agent cannot take (no agent, not a job's process)
 * is a warning and exit 0, so that a job script with `set -e` is never
 * ended by its accounting; --strict makes it exit 1.  Bad arguments exit
 * 2. */
#include "config.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mark/ceems_mark.h"

static void
usage(FILE *f)
{
	fprintf(f, "usage: ceems-mark [--set] [--unit UNIT] [--tag APP] [--strict] "
		"NAME VALUE\n"
		"  Add VALUE to the job's work counter NAME (--set: NAME is\n"
		"  VALUE in all, a cumulative count).  UNIT defaults to NAME.\n"
		"  --tag: the application the work is of (admins compare by it).\n"
		"  NAME, UNIT and APP: 1 to 31 letters, digits, '_', '.' or '-'.\n");
}

/* VALUE as a number, whole text: 0, or -1. */
static int
parse_value(const char *text, double *value)
{
	char *end;

	errno = 0;
	*value = strtod(text, &end);
	return errno != 0 || end == text || *end != '\0' ? -1 : 0;
}

int
main(int argc, char **argv)
{
	static const struct option options[] = {
		{ "set", no_argument, NULL, 's' },
		{ "unit", required_argument, NULL, 'u' },
		{ "tag", required_argument, NULL, 't' },
		{ "strict", no_argument, NULL, 'S' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *unit = NULL, *tag = NULL;
	int set = 0, strict = 0, c, r;
	double value;

	while ((c = getopt_long(argc, argv, "su:t:h", options, NULL)) != -1) {
		switch (c) {
		case 's': set = 1; break;
		case 'u': unit = optarg; break;
		case 't': tag = optarg; break;
		case 'S': strict = 1; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 2) {
		usage(stderr);
		return 2;
	}
	if (parse_value(argv[optind + 1], &value) < 0) {
		fprintf(stderr, "ceems-mark: '%s' is not a number\n", argv[optind + 1]);
		return 2;
	}
	if (unit == NULL)
		unit = argv[optind];
	if (tag != NULL && ceems_mark_tag(tag) < 0) {
		fprintf(stderr, "ceems-mark: %s\n", ceems_mark_error());
		return 2;
	}
	r = set ? ceems_mark_set(argv[optind], unit, value) :
		  ceems_mark_add(argv[optind], unit, value);
	if (r == -EINVAL || r == -ENOSPC) {
		fprintf(stderr, "ceems-mark: %s\n", ceems_mark_error());
		return 2;
	}
	/* Held for later (a busy or absent agent): the flush tries again
	 * and says how it went; any other refusal is final. */
	if (r == 0 || r == -EBUSY || r == -ECONNREFUSED || r == -EIO)
		r = ceems_mark_flush();
	if (r < 0) {
		fprintf(stderr, "ceems-mark: %s: %s\n",
			strict ? "error" : "warning, the mark is not kept",
			ceems_mark_error());
		return strict ? 1 : 0;
	}
	return 0;
}
