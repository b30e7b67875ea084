/* log.c - route libceems log lines to the handler the caller chose. */
#include "config.h"

#include <stdarg.h>
#include <stdio.h>

#include "base/log.h"

static ceems_log_handler log_handler;
static void *log_handler_arg;
static enum ceems_log_level log_max_level = CEEMS_LOG_INFO;

static const char *const level_names[] = {
	[CEEMS_LOG_ERROR] = "error",
	[CEEMS_LOG_WARNING] = "warning",
	[CEEMS_LOG_INFO] = "info",
	[CEEMS_LOG_DEBUG] = "debug",
};

void
ceems_log_set_handler(ceems_log_handler handler, void *arg)
{
	log_handler = handler;
	log_handler_arg = arg;
}

void
ceems_log_set_level(enum ceems_log_level level)
{
	log_max_level = level;
}

void
ceems_log(enum ceems_log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (level > log_max_level)
		return;
	va_start(ap, fmt);
	/* A longer line is cut, never overflowed: log lines are one event. */
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (log_handler != NULL)
		log_handler(level, line, log_handler_arg);
	else
		fprintf(stderr, "ceems: %s: %s\n", level_names[level], line);
}
