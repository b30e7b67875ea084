/* conf_value.h - the values with units of ceems.conf: durations and
 * sizes, as the configuration file and the agent's options write them. */
#ifndef CEEMS_CONF_VALUE_H
#define CEEMS_CONF_VALUE_H

#include <stdint.h>

/* Parse "4096", "64K", "512M", "1G", "2T" (powers of 1024) into bytes.
 * Returns 0 or -1. */
int ceems_conf_value_bytes(const char *text, uint64_t *bytes);

/* Parse "250ms", "1s", "1.5s", "2m", "1h" (a bare number is seconds) into
 * nanoseconds.  Returns 0 or -1. */
int ceems_conf_value_duration(const char *text, uint64_t *ns);

#endif
