/* fuzz_target.h - the body every libFuzzer target shares: copy the input
 * into a block of its own with a NUL after it (the text parsers want
 * one; the sanitizers then catch a read past it), run the family's
 * check, and abort on a broken contract so that libFuzzer keeps the
 * input as a crash artifact. */
#ifndef CEEMS_FUZZ_TARGET_H
#define CEEMS_FUZZ_TARGET_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline int
fuzz_run(const char *(*check)(const char *data, size_t len),
	 const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	const char *problem;

	if (text == NULL)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	problem = check(text, size);
	free(text);
	if (problem != NULL) {
		fprintf(stderr, "contract broken: %s\n", problem);
		abort();
	}
	return 0;
}

#endif
