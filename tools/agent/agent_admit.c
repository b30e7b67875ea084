/* agent_admit.c - the node agent's client slots: a reserve for root, a
 * share per other uid, refusals tallied per uid and logged once per
 * window.  See agent_admit.h for why. */
#include "config.h"

#include <errno.h>
#include <stdbool.h>
#include <string.h>

#include "agent_admit.h"
#include "base/log.h"

void
agent_admit_init(struct agent_admit *a, uint64_t now_ns)
{
	memset(a, 0, sizeof(*a));
	a->window_ns = now_ns;
}

/* UID's entry in TABLE of N, or a free one when CREATE (NULL: none). */
static struct agent_admit_uid *
find_uid(struct agent_admit_uid *table, size_t n, uid_t uid, bool create)
{
	struct agent_admit_uid *free_entry = NULL;

	for (size_t i = 0; i < n; i++) {
		if (table[i].count > 0 && table[i].uid == uid)
			return &table[i];
		if (table[i].count == 0 && free_entry == NULL)
			free_entry = &table[i];
	}
	if (!create || free_entry == NULL)
		return NULL;
	free_entry->uid = uid;
	return free_entry;
}

static void
tally_refusal(struct agent_admit *a, uid_t uid)
{
	struct agent_admit_uid *e = find_uid(a->refused, AGENT_ADMIT_NAMED_UIDS,
					     uid, true);

	a->refused_total++;
	if (e != NULL)
		e->count++;
	else
		a->refused_unnamed++;
}

int
agent_admit_take(struct agent_admit *a, uid_t uid)
{
	const unsigned other_max = AGENT_MAX_CLIENTS - AGENT_ROOT_RESERVE;
	struct agent_admit_uid *e;

	if (uid == 0) {
		if (a->held_root + a->held_other >= AGENT_MAX_CLIENTS) {
			tally_refusal(a, uid);
			return -EBUSY;
		}
		a->held_root++;
		return 0;
	}
	e = find_uid(a->held, other_max, uid, false);
	if (a->held_other >= other_max ||
	    (e != NULL && e->count >= AGENT_UID_MAX_CLIENTS)) {
		tally_refusal(a, uid);
		return -EBUSY;
	}
	/* held_other < other_max: the table has a free entry. */
	if (e == NULL)
		e = find_uid(a->held, other_max, uid, true);
	e->count++;
	a->held_other++;
	return 0;
}

void
agent_admit_put(struct agent_admit *a, uid_t uid)
{
	struct agent_admit_uid *e;

	if (uid == 0) {
		if (a->held_root > 0)
			a->held_root--;
		return;
	}
	e = find_uid(a->held, AGENT_MAX_CLIENTS - AGENT_ROOT_RESERVE, uid, false);
	if (e == NULL)
		return;
	e->count--;
	a->held_other--;
}

void
agent_admit_log(struct agent_admit *a, uint64_t now_ns)
{
	double window_s = (double)(now_ns - a->window_ns) / 1e9;

	if (now_ns - a->window_ns < AGENT_ADMIT_LOG_WINDOW_NS)
		return;
	for (size_t i = 0; i < AGENT_ADMIT_NAMED_UIDS; i++) {
		const struct agent_admit_uid *e = &a->refused[i];

		if (e->count == 0)
			continue;
		if (e->uid == 0)
			ceems_error("refused %u connections of root in the last %.0f s: "
				    "all %d client slots were taken; jobs may go "
				    "unmeasured: look for a process holding "
				    "connections to the agent's socket", e->count,
				    window_s, AGENT_MAX_CLIENTS);
		else
			ceems_warning("refused %u connections of uid %u in the last "
				      "%.0f s: it tried to hold more than %d at once "
				      "(or the %d slots of non-root users were taken); "
				      "root's requests are not affected, but a process "
				      "of this uid is flooding the agent's socket",
				      e->count, (unsigned)e->uid, window_s,
				      AGENT_UID_MAX_CLIENTS,
				      AGENT_MAX_CLIENTS - AGENT_ROOT_RESERVE);
	}
	if (a->refused_unnamed > 0)
		ceems_warning("refused %u more connections of other uids in the last "
			      "%.0f s (more than %d uids were refused: only the "
			      "first are named)", a->refused_unnamed, window_s,
			      AGENT_ADMIT_NAMED_UIDS);
	memset(a->refused, 0, sizeof(a->refused));
	a->refused_unnamed = 0;
	a->window_ns = now_ns;
}
