/* number.h - the one decimal parser of libceems: kernel files (cgroupfs,
 * /proc, sysfs counters) all hold unsigned decimals, and a single,
 * fuzzed implementation decides what a valid one is. */
#ifndef CEEMS_NUMBER_H
#define CEEMS_NUMBER_H

#include <stdint.h>

/* Parse the unsigned decimal at *P and advance *P past it.  At least one
 * digit; no sign, no leading space, no base prefix.  Returns 0, -EINVAL
 * (no digit) or -ERANGE (over UINT64_MAX); *P and *OUT are unchanged on
 * error. */
int ceems_number_take_u64(const char **p, uint64_t *out);

/* TEXT is a whole single-value file: one decimal, then nothing or one
 * newline.  Returns 0, -EINVAL or -ERANGE; *OUT is unchanged on error. */
int ceems_number_parse_u64(const char *text, uint64_t *out);

#endif
