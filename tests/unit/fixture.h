/* fixture.h - locate and read files under tests/fixtures from a unit test,
 * whether the build is in the source tree or a VPATH build (distcheck). */
#ifndef CEEMS_TEST_FIXTURE_H
#define CEEMS_TEST_FIXTURE_H

#include <stdio.h>
#include <stdlib.h>

#include "base/fileio.h"

static inline const char *
fixture_root(void)
{
	const char *dir = getenv("CEEMS_FIXTURES");

	return dir != NULL ? dir : "tests/fixtures";
}

/* Path of fixture NAME in BUF (static storage is fine in tests). */
static inline const char *
fixture_path(const char *name)
{
	static char path[4096];

	snprintf(path, sizeof(path), "%s/%s", fixture_root(), name);
	return path;
}

/* Read fixture NAME into BUF; exits with a TAP bail-out if it is missing,
 * since every later check would be meaningless. */
static inline const char *
fixture_text(const char *name, char *buf, size_t size)
{
	if (ceems_fileio_read_text_file(fixture_path(name), buf, size) < 0) {
		printf("Bail out! cannot read fixture %s\n", fixture_path(name));
		exit(1);
	}
	return buf;
}

#endif
