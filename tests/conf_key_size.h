/* conf_key_size.h - for the tests that feed values to the key table
 * (tests/unit/test_conf_keys.c, tests/fuzz/checks_keys.c): the size of
 * the C type a key's value goes into, to hand ceems_conf_keys_parse. */
#ifndef CEEMS_TEST_CONF_KEY_SIZE_H
#define CEEMS_TEST_CONF_KEY_SIZE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/conf_keys.h"

static inline size_t
conf_key_value_size(const struct ceems_key *k)
{
	switch (k->type) {
	case CEEMS_KEY_DURATION:
	case CEEMS_KEY_BYTES:
		return sizeof(uint64_t);
	case CEEMS_KEY_UINT32:
		return sizeof(uint32_t);
	case CEEMS_KEY_BOOL:
		return sizeof(bool);
	case CEEMS_KEY_WATTS:
	case CEEMS_KEY_REAL:
		return sizeof(double);
	default:
		return k->size;
	}
}

#endif
