/* report_send.h - a run of the reports: which recipients, each report
 * built as its recipient (SET ROLE), and where it goes: printed (the
 * preview, the default), mailed, or written to files; a period is
 * recorded in ceems.report_sent so that it is never sent twice. */
#ifndef REPORT_SEND_H
#define REPORT_SEND_H

#include <stddef.h>

#include <libpq-fe.h>

enum report_kind { REPORT_KIND_USER, REPORT_KIND_ACCOUNT, REPORT_KIND_TRIAGE,
		   REPORT_KIND_NODES, REPORT_KIND_ALERT };
enum report_mode { REPORT_PREVIEW, REPORT_MAIL, REPORT_FILES };

struct report_run {
	enum report_kind kind;
	enum report_mode mode;
	const char *from, *to;		/* the period, normalised */
	const char *only;		/* one recipient, or NULL */
	const char *domain;		/* user@domain */
	const char *sender;		/* From: */
	const char *admin_to;		/* triage and nodes */
	const char *sendmail;
	const char *out_dir;
	size_t limit;			/* triage rows */
	int html;			/* preview: the HTML part, not the text */
	/* results */
	int sent, skipped, failed;
};

/* Every report of the run; 0 when each went where it should, else -1
 * (the failures are on stderr, the others still sent). */
int report_send_run(PGconn *conn, struct report_run *run);

#endif /* REPORT_SEND_H */
