/* pg_lib.h - libpq, loaded at run time where the database is used (the
 * node agent's replay process, and what reads its files at start), not
 * linked into libceems: the node agent's own process, which never
 * connects, maps none of libpq and the TLS, Kerberos and LDAP libraries
 * it brings (about 4 MiB of resident memory).  Storage (storage.c) and
 * the reading of libpq's files (pg_files.c) call libpq through the one
 * table below; ceems-sacct and ceems-admin, short-lived, link libpq
 * themselves for their own queries.  Declared with libpq's own header,
 * so that every entry point has libpq's type. */
#ifndef CEEMS_PG_LIB_H
#define CEEMS_PG_LIB_H

#include <stddef.h>

#ifdef HAVE_LIBPQ
#include <libpq-fe.h>

/* The soname of the libpq ABI the header declares (stable since
 * PostgreSQL 8.0), and the Debian package that ships it. */
#define CEEMS_PG_LIB_SONAME "libpq.so.5"
#define CEEMS_PG_LIB_PACKAGE "libpq5"

/* The entry points of libpq the project calls, by libpq's names. */
struct ceems_pg_lib {
	__typeof__(PQconnectStartParams) *connectStartParams;
	__typeof__(PQconnectPoll) *connectPoll;
	__typeof__(PQsetnonblocking) *setnonblocking;
	__typeof__(PQstatus) *status;
	__typeof__(PQsocket) *socket;
	__typeof__(PQerrorMessage) *errorMessage;
	__typeof__(PQsendQuery) *sendQuery;
	__typeof__(PQsendQueryParams) *sendQueryParams;
	__typeof__(PQflush) *flush;
	__typeof__(PQconsumeInput) *consumeInput;
	__typeof__(PQisBusy) *isBusy;
	__typeof__(PQgetResult) *getResult;
	__typeof__(PQresultStatus) *resultStatus;
	__typeof__(PQresultErrorField) *resultErrorField;
	__typeof__(PQresultErrorMessage) *resultErrorMessage;
	__typeof__(PQclear) *clear;
	__typeof__(PQfinish) *finish;
	__typeof__(PQconninfoParse) *conninfoParse;
	__typeof__(PQconndefaults) *conndefaults;
	__typeof__(PQconninfoFree) *conninfoFree;
	__typeof__(PQfreemem) *freemem;
};

/* libpq's table, loaded at the first call and kept for the process's
 * life (thread-safe).  0 with *LIB set; or -ENOENT (libpq is not
 * installed) or -ENOSYS (a libpq without an entry point the project
 * calls), with ERR a line an admin can act on. */
int ceems_pg_lib_load(const struct ceems_pg_lib **lib, char *err,
		      size_t err_size);
#endif

#endif
