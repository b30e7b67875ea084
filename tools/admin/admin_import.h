/* admin_import.h - `ceems-admin factors import`: carbon-intensity series
 * as grid operators and carbon-data services export them, parsed into
 * rows of ceems.emission_factors ([valid_from, valid_to) of one zone).
 *
 * Formats (auto: chosen by the header line):
 *   electricitymaps  CSV with "Datetime (UTC)" and "Carbon Intensity
 *                    gCO2eq/kWh (Life cycle)" columns (the life-cycle
 *                    figure, not the direct one); each row lasts the
 *                    file's step (the shortest gap between rows).
 *   entsoe           CSV with an "MTU (UTC)" or "MTU (CET/CEST)" column
 *                    of ranges "01.01.2024 00:00 - 01.01.2024 01:00" and
 *                    one value column (or the one whose title names CO2).
 *   rte              eco2mix: ';'-separated, "Date", "Heures" and "Taux de
 *                    CO2 (g/kWh)" columns, in Europe/Paris time; each row
 *                    lasts the file's step.
 *   ceems            the CSV of `factors load` (admin_factors.h).
 * Local times follow the EU rule (summer time from the last Sunday of
 * March to the last Sunday of October, 01:00 UTC); the hour that occurs
 * twice in October is read in file order.  A row without a value (empty,
 * "n/e", "N/A", "-") is no interval; any other bad line fails the whole
 * file with its line number. */
#ifndef CEEMS_ADMIN_IMPORT_H
#define CEEMS_ADMIN_IMPORT_H

#include <stddef.h>

#include "admin_factors.h"

enum admin_import_format {
	ADMIN_IMPORT_AUTO,
	ADMIN_IMPORT_ELECTRICITYMAPS,
	ADMIN_IMPORT_ENTSOE,
	ADMIN_IMPORT_RTE,
	ADMIN_IMPORT_CEEMS,
};

/* "auto", "electricitymaps"... as a format; -1 for none. */
int admin_import_format_from_name(const char *name);
const char *admin_import_format_name(enum admin_import_format f);

/* Parse TEXT (LEN bytes) of format FORMAT into *ROWS (free() it) of
 * zone ZONE (validated like the ceems CSV's zone; NULL only for the
 * ceems format, whose rows name theirs).  *USED is the format read.
 * Returns 0, or -1 with ERR naming the line. */
int admin_import_parse(const char *text, size_t len, const char *zone,
		       enum admin_import_format format,
		       enum admin_import_format *used,
		       struct admin_factor **rows, size_t *nrows, char *err,
		       size_t err_size);

#endif
