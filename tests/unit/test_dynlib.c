/* test_dynlib.c - lib/base/dynlib.c: a library loaded at run time by its
 * soname into a table of entry points, once per process: a library not
 * installed and one without a required entry point each give the
 * admin's line (what needs it, the soname, the Debian package) and
 * leave the table empty; a later call loads it once it is there; a
 * table, once filled, stays as it is.  The NVML doubles built for the
 * GPU tests serve as the library. */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "base/dynlib.h"
#include "../tap.h"
#include "gpu_double.h"

typedef int init_fn(void);
typedef int count_fn(unsigned int *count);

struct table {
	init_fn *init;
	count_fn *count;
	void *energy;		/* a function, required */
	void *absent;		/* optional, in no library */
};

static const struct ceems_dynlib_symbol symbols[] = {
	{ "nvmlInit_v2", offsetof(struct table, init), true },
	{ "nvmlDeviceGetCount_v2", offsetof(struct table, count), true },
	{ "nvmlDeviceGetTotalEnergyConsumption", offsetof(struct table, energy), true },
	{ "ceemsNoSuchEntryPoint", offsetof(struct table, absent), false },
};

static struct ceems_dynlib_spec
spec_of(const char *soname)
{
	struct ceems_dynlib_spec s = {
		soname, "libtest1", "the test",
		symbols, sizeof(symbols) / sizeof(symbols[0]),
	};

	return s;
}

static bool
table_empty(const struct table *t)
{
	return t->init == NULL && t->count == NULL && t->energy == NULL &&
	       t->absent == NULL;
}

int
main(void)
{
	static struct ceems_dynlib_once once = CEEMS_DYNLIB_ONCE_INIT;
	static struct table t;
	struct ceems_dynlib_spec spec;
	char err[512];
	unsigned int n = 0;
	void *handle;

	gpu_double_setup();
	gpu_log_reset();
	gpu_scenario("[device]\n[device]\n");

	spec = spec_of("libceems-test-absent.so.9");
	memset(&t, 0xff, sizeof(t));
	is_int(ceems_dynlib_once_open(&once, &spec, &t, sizeof(t), err, sizeof(err)),
	       -ENOENT, "a library not installed: -ENOENT");
	ok(strncmp(err, "the test needs libceems-test-absent.so.9 (Debian: libtest1): ",
		   60) == 0, "the admin's line says what needs which library and package: %s", err);
	ok(table_empty(&t), "the table is left empty");

	spec = spec_of(gpu_double_path("libnvml-double-noenergy.so"));
	is_int(ceems_dynlib_once_open(&once, &spec, &t, sizeof(t), err, sizeof(err)),
	       -ENOSYS, "a library without a required entry point: -ENOSYS");
	ok(strstr(err, "has no nvmlDeviceGetTotalEnergyConsumption: the test needs the library it was built for (Debian: libtest1)") != NULL,
	   "the admin's line names the entry point: %s", err);
	ok(table_empty(&t), "the table is left empty");

	/* Tried again at the next call: the library is there now. */
	spec = spec_of(gpu_double_path("libnvml-double.so"));
	is_int(ceems_dynlib_once_open(&once, &spec, &t, sizeof(t), err, sizeof(err)),
	       0, "the library loads at a later call");
	ok(t.init != NULL && t.count != NULL && t.energy != NULL,
	   "the required entry points are in the table");
	ok(t.absent == NULL, "an optional one the library lacks is NULL");
	ok(t.init() == 0 && t.count(&n) == 0 && n == 2,
	   "called through the table: the double's 2 GPUs (%u)", n);
	handle = once.handle;

	/* Loaded once: a later call changes nothing, whatever it names. */
	spec = spec_of("libceems-test-absent.so.9");
	is_int(ceems_dynlib_once_open(&once, &spec, &t, sizeof(t), err, sizeof(err)),
	       0, "once loaded, a later call succeeds at once");
	ok(once.handle == handle && t.count != NULL, "the handle and the table are kept");
	/* The caller logs the admin's line, once: the loader says nothing. */
	ok(gpu_log_count("libceems-test-absent") == 0 && gpu_log_warnings == 0,
	   "the loader itself logs nothing");

	gpu_double_teardown();
	return done_testing();
}
