/* report_digest.h - the words and tables of the reports: a user's
 * digest, an account's overview for its coordinators, the admins'
 * triage list.  The wording is an offer of help (doc/reports.md,
 * "Wording"). */
#ifndef REPORT_DIGEST_H
#define REPORT_DIGEST_H

#include <stddef.h>

#include "report_doc.h"
#include "report_rules.h"

/* FROM and TO: the period (ISO 8601); S finished (report_rules_finish). */
void report_digest_user(struct report_doc *d, const struct report_sums *s,
			const char *from, const char *to);

/* USERS ranked (report_collect_finish). */
void report_digest_account(struct report_doc *d, const char *account,
			   const struct report_sums *users, size_t n,
			   const char *from, const char *to);

/* The users with REPORT_MIN_BACKING or more over-asking jobs in an area,
 * at most LIMIT of them. */
void report_digest_triage(struct report_doc *d, const struct report_sums *users,
			  size_t n, size_t limit, const char *from, const char *to);

/* The alert at the end of a user's GPU jobs whose GPUs sat idle
 * (S->alerts of them, report_rules_alert). */
void report_digest_alert(struct report_doc *d, const struct report_sums *s,
			 const char *from, const char *to);

/* One suggestion in words (also the unit tests' view of it). */
void report_digest_suggestion(char *buf, size_t size,
			      const struct report_suggestion *g);

#endif /* REPORT_DIGEST_H */
