/* dynlib.h - a library loaded at run time (dlopen) by fixed names, and
 * the table of its entry points that its user calls through.
 *
 * Why: a library that only some nodes or some processes use (a GPU
 * vendor's, libpq in the agent's replay process, libfreeipmi with a BMC
 * source) costs every process that links it its resident pages and its
 * start-up, and makes the package depend on it.  Loaded here where it is
 * used, it costs nothing elsewhere, and a missing library is one log
 * line an admin can act on instead of a program that does not start.
 * Names are always fixed sonames (or a path the admin configured), never
 * a path from an untrusted source. */
#ifndef CEEMS_DYNLIB_H
#define CEEMS_DYNLIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* One entry point (a function, or a data symbol such as freeipmi's fiid
 * templates): where its address goes in the caller's table (a pointer
 * member, as a byte offset) and whether the table is usable without
 * it (an optional one is left NULL). */
struct ceems_dynlib_symbol {
	const char *name;
	size_t offset;
	bool required;
};

/* dlopen (RTLD_NOW | RTLD_LOCAL) the first of NAMES[0..NNAMES-1] that
 * loads, and store the address of every SYMS[i] in TABLE (TABLE_SIZE
 * bytes) at its offset.  The handle, or NULL with TABLE cleared and
 * *ERRNUM set: -ENOENT (no name loads; ERR holds the loader's message
 * for the last one) or -ENOSYS (ERR holds the name of the first required
 * symbol the library lacks). */
void *ceems_dynlib_open(const char *const *names, size_t nnames,
			const struct ceems_dynlib_symbol *syms, size_t nsyms,
			void *table, size_t table_size, int *errnum, char *err,
			size_t err_size);

/* A library loaded once for the whole process and kept loaded: the
 * table is filled by the first successful ceems_dynlib_once_open and
 * never changes after.  A failed load is tried again at the next call
 * (the package may have been installed since).  Never unloaded: the
 * libraries of interest (libpq's TLS libraries, libgcrypt) pin
 * themselves anyway, and a table that can go away would need a lock
 * around every call. */
struct ceems_dynlib_once {
	pthread_mutex_t lock;
	void *handle;		/* NULL until loaded */
};
#define CEEMS_DYNLIB_ONCE_INIT { PTHREAD_MUTEX_INITIALIZER, NULL }

/* Such a library: its soname (the one name loaded), the Debian package
 * that ships it and what needs it, for the admin's line; its entry
 * points. */
struct ceems_dynlib_spec {
	const char *soname;
	const char *package;
	const char *user;		/* "PostgreSQL storage" */
	const struct ceems_dynlib_symbol *syms;
	size_t nsyms;
};

/* Load SPEC's library into TABLE (TABLE_SIZE bytes), once (thread-safe).
 * 0 when the table is filled (now or before); -ENOENT (not installed)
 * or -ENOSYS (an entry point missing), with ERR one line an admin can
 * act on ("PostgreSQL storage needs libpq.so.5 (Debian: libpq5): ..."). */
int ceems_dynlib_once_open(struct ceems_dynlib_once *once,
			   const struct ceems_dynlib_spec *spec, void *table,
			   size_t table_size, char *err, size_t err_size);

#endif
