/* dynlib.c - load a library at run time by fixed names and resolve the
 * table of entry points its user calls through (dynlib.h): the GPU
 * backends, libpq's storage, the BMC's libfreeipmi. */
#include "config.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "base/dynlib.h"

static void
set_error(char *err, size_t err_size, const char *text)
{
	if (err != NULL && err_size > 0)
		snprintf(err, err_size, "%s", text);
}

/* dlopen the first of NAMES that loads: the handle, or NULL with the
 * loader's message for the last name tried in ERR. */
static void *
load_first(const char *const *names, size_t nnames, char *err, size_t err_size)
{
	const char *why = "no library name";
	void *h;

	for (size_t i = 0; i < nnames; i++) {
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
		if (h != NULL)
			return h;
		why = dlerror();
		if (why == NULL)
			why = "not found";
	}
	set_error(err, err_size, why);
	return NULL;
}

/* Store the address of every SYMS[i] of HANDLE in TABLE.  0, or -ENOSYS
 * with the first required symbol missing named in ERR. */
static int
resolve(void *handle, const struct ceems_dynlib_symbol *syms, size_t nsyms,
	void *table, char *err, size_t err_size)
{
	for (size_t i = 0; i < nsyms; i++) {
		void *addr;

		(void)dlerror();
		addr = dlsym(handle, syms[i].name);
		if (addr == NULL && syms[i].required) {
			set_error(err, err_size, syms[i].name);
			return -ENOSYS;
		}
		/* POSIX: a function's address fits a data pointer. */
		memcpy((char *)table + syms[i].offset, &addr, sizeof(addr));
	}
	return 0;
}

void *
ceems_dynlib_open(const char *const *names, size_t nnames,
		  const struct ceems_dynlib_symbol *syms, size_t nsyms,
		  void *table, size_t table_size, int *errnum, char *err,
		  size_t err_size)
{
	void *h = load_first(names, nnames, err, err_size);

	if (h == NULL) {
		memset(table, 0, table_size);
		*errnum = -ENOENT;
		return NULL;
	}
	if (resolve(h, syms, nsyms, table, err, err_size) < 0) {
		memset(table, 0, table_size);
		dlclose(h);
		*errnum = -ENOSYS;
		return NULL;
	}
	*errnum = 0;
	return h;
}

int
ceems_dynlib_once_open(struct ceems_dynlib_once *once,
		       const struct ceems_dynlib_spec *spec, void *table,
		       size_t table_size, char *err, size_t err_size)
{
	char why[256];
	int errnum = 0;

	pthread_mutex_lock(&once->lock);
	if (once->handle == NULL)
		once->handle = ceems_dynlib_open(&spec->soname, 1, spec->syms,
						 spec->nsyms, table, table_size,
						 &errnum, why, sizeof(why));
	pthread_mutex_unlock(&once->lock);
	if (errnum == -ENOSYS && err != NULL)
		snprintf(err, err_size, "%s has no %s: %s needs the library it "
			 "was built for (Debian: %s)", spec->soname, why,
			 spec->user, spec->package);
	else if (errnum < 0 && err != NULL)
		snprintf(err, err_size, "%s needs %s (Debian: %s): %s",
			 spec->user, spec->soname, spec->package, why);
	return errnum;
}
