/* units.h - how ceems writes an amount of energy or of emissions for
 * people to read: the unit chosen by the amount (J, Wh, kWh, MWh; g, kg,
 * t) and three significant figures, so that the end-of-job summary and
 * ceems-sacct spell the same amount the same way.  Scripts read the raw
 * figures instead (the record, ceems-sacct's ...Raw fields, --json). */
#ifndef CEEMS_UNITS_H
#define CEEMS_UNITS_H

#include <stdbool.h>
#include <stddef.h>

enum ceems_energy_unit {
	CEEMS_UNIT_J, CEEMS_UNIT_WH, CEEMS_UNIT_KWH, CEEMS_UNIT_MWH
};

/* The largest unit in which J joules are at least 1: J below 1 Wh, Wh
 * below 1 kWh, kWh below 1 MWh, MWh beyond. */
enum ceems_energy_unit ceems_units_energy_pick(double j);

/* The decimals that show J joules in unit U to three significant
 * figures, at most two (0 from 100 up). */
int ceems_units_energy_decimals(double j, enum ceems_energy_unit u);

/* J in unit U with DECIMALS decimals, the unit after a space when
 * WITH_UNIT.  A measured amount too small for DECIMALS reads "<0.1"
 * (its smallest step), never "0.0", which would read as nothing; only a
 * true 0 reads 0.  "" for an amount that is not a finite number >= 0.
 * For the parts of a total written in the total's unit and decimals. */
void ceems_units_fmt_energy_in(char *buf, size_t size, double j,
			       enum ceems_energy_unit u, int decimals,
			       bool with_unit);

/* J in the unit ceems_units_energy_pick() gives, three significant
 * figures but at most two decimals, with the unit: "0.03 J", "<0.01 J",
 * "3599 J", "5.56 Wh", "181 Wh", "2.83 kWh". */
void ceems_units_fmt_energy(char *buf, size_t size, double j);

/* Grams of CO2e to three significant figures, at most two decimals: g
 * below 1 kg, kg below 1 t, t beyond ("0.25 g", "<0.01 g", "951 g",
 * "12.3 kg").  SUFFIX (may be NULL)
 * is written after the unit, e.g. " CO2e". */
void ceems_units_fmt_grams(char *buf, size_t size, double g,
			   const char *suffix);

#endif /* CEEMS_UNITS_H */
