/* log.h - libceems logging: the library never prints by itself; the
 * caller (plugin, agent, tool) installs a handler that routes each line
 * to the right place (slurmd log, stderr, syslog). */
#ifndef CEEMS_LOG_H
#define CEEMS_LOG_H

enum ceems_log_level {
	CEEMS_LOG_ERROR = 0,
	CEEMS_LOG_WARNING,
	CEEMS_LOG_INFO,
	CEEMS_LOG_DEBUG,
};

typedef void (*ceems_log_handler)(enum ceems_log_level level,
				  const char *message, void *arg);

/* Install HANDLER (NULL restores the default: lines on stderr) and the
 * most verbose LEVEL that reaches it. */
void ceems_log_set_handler(ceems_log_handler handler, void *arg);
void ceems_log_set_level(enum ceems_log_level level);

void ceems_log(enum ceems_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

#define ceems_error(...) ceems_log(CEEMS_LOG_ERROR, __VA_ARGS__)
#define ceems_warning(...) ceems_log(CEEMS_LOG_WARNING, __VA_ARGS__)
#define ceems_info(...) ceems_log(CEEMS_LOG_INFO, __VA_ARGS__)
#define ceems_debug(...) ceems_log(CEEMS_LOG_DEBUG, __VA_ARGS__)

#endif
