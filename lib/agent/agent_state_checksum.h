/* agent_state_checksum.h - the checksums of the state file's figures
 * (agent_state_layout.h says which version uses which). */
#ifndef CEEMS_AGENT_STATE_CHECKSUM_H
#define CEEMS_AGENT_STATE_CHECKSUM_H

#include <stddef.h>
#include <stdint.h>

/* The current checksum (version 8 on): 8-byte words in four lanes. */
uint64_t ceems_agent_state_checksum_lanes(const void *data, size_t len);
/* The checksum of versions 5 to 7 (FNV-1a), for their migration. */
uint64_t ceems_agent_state_checksum_fnv1a(const void *data, size_t len);

#endif
