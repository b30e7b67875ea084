/* admin_export.h - `ceems-admin factors export`: the node's intensity
 * cache (lib/model/intensity.h) written from ceems.emission_factors. */
#ifndef CEEMS_ADMIN_EXPORT_H
#define CEEMS_ADMIN_EXPORT_H

#include <libpq-fe.h>

/* The intervals of ZONE that end after now - HOURS_BACK and start before
 * now + HOURS_AHEAD, written atomically to PATH.  Returns 0, or -1 with
 * the reason on stderr (PATH is then left as it was). */
int admin_export_factors(PGconn *conn, const char *zone, int hours_back,
			 int hours_ahead, const char *path);

#endif
