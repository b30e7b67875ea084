/* agent_state_checksum.c - the checksums of the state file's figures
 * (agent_state_checksum.h): its own file, so that the writer
 * (agent_state.c), the reader's checks (agent_state_check.c) and the
 * migration (agent_state_migrate.c) share it without calling one
 * another. */
#include "config.h"

#include <string.h>

#include "agent/agent_state_checksum.h"

uint64_t
ceems_agent_state_checksum_fnv1a(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t h = 14695981039346656037ULL;

	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 1099511628211ULL;
	}
	return h;
}

/* A 64-bit finaliser (MurmurHash3's): every input bit moves every
 * output bit. */
static uint64_t
checksum_mix(uint64_t h)
{
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h;
}

/* What it guards against is a copy written in part (a kill or a crash
 * in the middle of its write), not an adversary: four independent
 * lanes of 8-byte words, each multiplied and folded, so that the
 * processor overlaps them (about 0.2 us for a job's figures, against 4
 * for a byte at a time), and the lanes and the length mixed at the end.
 * Any change of one word changes its lane. */
uint64_t
ceems_agent_state_checksum_lanes(const void *data, size_t len)
{
	const unsigned char *p = data;
	uint64_t lane[4] = {
		0x9e3779b97f4a7c15ULL, 0xc2b2ae3d27d4eb4fULL,
		0x165667b19e3779f9ULL, 0x27d4eb2f165667c5ULL,
	};
	uint64_t h;
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		uint64_t w[4];

		memcpy(w, p + i, sizeof(w));
		for (int k = 0; k < 4; k++) {
			lane[k] = (lane[k] ^ w[k]) * 0x9fb21c651e98df25ULL;
			lane[k] ^= lane[k] >> 29;
		}
	}
	h = checksum_mix(lane[0]) ^ checksum_mix(lane[1] + 1) ^
	    checksum_mix(lane[2] + 2) ^ checksum_mix(lane[3] + 3);
	for (; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ULL;
	return checksum_mix(h ^ (uint64_t)len);
}
