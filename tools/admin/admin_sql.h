/* admin_sql.h - what the migrations and the definitions of ceems-admin
 * share: a SQL file read whole, libpq's message of a failure, and the
 * error path through ERR. */
#ifndef CEEMS_ADMIN_SQL_H
#define CEEMS_ADMIN_SQL_H

#include <stddef.h>

#include <libpq-fe.h>

/* The largest SQL file read. */
#define ADMIN_SQL_FILE_MAX (4 * 1024 * 1024)

/* Write the message FMT into ERR (ERR_SIZE bytes) and return -1: the
 * error path of the migrations and the definitions, which report what
 * went wrong through ERR. */
int admin_sql_fail(char *err, size_t err_size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* A SQL file read whole into a new NUL-terminated buffer, or NULL with
 * ERR. */
char *admin_sql_read_file(const char *path, char *err, size_t err_size);

/* libpq's message of RES (or of CONN) without its trailing newline, in a
 * static buffer. */
const char *admin_sql_pq_message(const PGconn *conn, const PGresult *res);

#endif
