/* pg_lib.c - libpq's table of entry points, loaded at the first use
 * (pg_lib.h). */
#include "config.h"

#ifdef HAVE_LIBPQ

#include <stddef.h>

#include "base/dynlib.h"
#include "record/pg_lib.h"

#define SYM(member) \
	{ "PQ" #member, offsetof(struct ceems_pg_lib, member), true }
static const struct ceems_dynlib_symbol pg_symbols[] = {
	SYM(connectStartParams), SYM(connectPoll), SYM(setnonblocking),
	SYM(status), SYM(socket), SYM(errorMessage), SYM(sendQuery),
	SYM(sendQueryParams), SYM(flush), SYM(consumeInput), SYM(isBusy),
	SYM(getResult), SYM(resultStatus), SYM(resultErrorField),
	SYM(resultErrorMessage), SYM(clear), SYM(finish),
	SYM(conninfoParse), SYM(conndefaults), SYM(conninfoFree),
	SYM(freemem),
};
#undef SYM

static const struct ceems_dynlib_spec pg_spec = {
	CEEMS_PG_LIB_SONAME, CEEMS_PG_LIB_PACKAGE, "PostgreSQL storage",
	pg_symbols, sizeof(pg_symbols) / sizeof(pg_symbols[0]),
};
static struct ceems_pg_lib pg;
static struct ceems_dynlib_once pg_once = CEEMS_DYNLIB_ONCE_INIT;

int
ceems_pg_lib_load(const struct ceems_pg_lib **lib, char *err, size_t err_size)
{
	int r = ceems_dynlib_once_open(&pg_once, &pg_spec, &pg, sizeof(pg),
				       err, err_size);

	*lib = r == 0 ? &pg : NULL;
	return r;
}

#endif
