/* report_main.h - `ceems-admin report`: the command line of the
 * periodic reports (ceems-admin(8), doc/reports.md). */
#ifndef REPORT_MAIN_H
#define REPORT_MAIN_H

#include <libpq-fe.h>

/* CONNECT opens the database (ceems-admin's -d or ceems.conf) with ARG.
 * ARGV[0] is "report".  Returns the exit status. */
int report_main(int argc, char **argv, PGconn *(*connect)(const void *arg),
		const void *arg);

#endif /* REPORT_MAIN_H */
