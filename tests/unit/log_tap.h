/* log_tap.h - the library's warnings and errors shown as TAP comments in
 * a unit test's output (its info and debug lines dropped), so that a
 * failing check comes with what the code under test said. */
#ifndef CEEMS_TEST_LOG_TAP_H
#define CEEMS_TEST_LOG_TAP_H

#include <stdio.h>

#include "base/log.h"

static inline void
log_tap_warnings(enum ceems_log_level level, const char *message, void *arg)
{
	(void)arg;
	if (level <= CEEMS_LOG_WARNING)
		printf("# log: %s\n", message);
}

#endif
