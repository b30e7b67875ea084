/* admin_sql.c - what the migrations (admin_migrate.c) and the
 * definitions (admin_definitions.c) share: a SQL file read whole,
 * libpq's message of a failure, the error path through ERR
 * (admin_sql.h).  A file of its own, so that neither calls the other
 * for them. */
#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "admin_sql.h"

int
admin_sql_fail(char *err, size_t err_size, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_size, fmt, ap);
	va_end(ap);
	return -1;
}

const char *
admin_sql_pq_message(const PGconn *conn, const PGresult *res)
{
	static char msg[1024];
	const char *m = res != NULL ? PQresultErrorMessage(res) : "";
	size_t len;

	if (m == NULL || m[0] == '\0')
		m = PQerrorMessage(conn);
	snprintf(msg, sizeof(msg), "%s", m != NULL ? m : "unknown error");
	len = strlen(msg);
	while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == ' '))
		msg[--len] = '\0';
	return msg;
}

char *
admin_sql_read_file(const char *path, char *err, size_t err_size)
{
	struct stat st;
	char *text;
	FILE *f;
	size_t n;

	if ((f = fopen(path, "re")) == NULL) {
		admin_sql_fail(err, err_size, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fstat(fileno(f), &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size > ADMIN_SQL_FILE_MAX) {
		fclose(f);
		admin_sql_fail(err, err_size, "%s: not a regular file of at most %d bytes",
		     path, ADMIN_SQL_FILE_MAX);
		return NULL;
	}
	if ((text = malloc((size_t)st.st_size + 1)) == NULL) {
		fclose(f);
		admin_sql_fail(err, err_size, "out of memory");
		return NULL;
	}
	n = fread(text, 1, (size_t)st.st_size, f);
	if (ferror(f) || n != (size_t)st.st_size) {
		fclose(f);
		free(text);
		admin_sql_fail(err, err_size, "%s: short read", path);
		return NULL;
	}
	fclose(f);
	text[n] = '\0';
	if (strlen(text) != n) {
		free(text);
		admin_sql_fail(err, err_size, "%s: contains a NUL byte", path);
		return NULL;
	}
	return text;
}
