/* hotmem.h - the memory the node agent touches at every tick (its own
 * state, each job's hot fields, the cgroup and /proc readers), kept
 * together in one region backed by transparent huge pages.
 *
 * The agent sleeps a second between ticks; each page it touches again
 * after that costs a TLB walk on bare metal and, on a virtual machine,
 * an exit to the hypervisor of several microseconds: with 16 jobs a tick
 * touched about 60 scattered heap pages.  Inside one 2 MiB huge page
 * the same objects cost one walk.
 *
 * Off until ceems_hotmem_enable(): libceems's other users (the SPANK
 * plugin inside slurmstepd, the tools, the unit tests) keep calloc and
 * free.  Off as well under AddressSanitizer and valgrind, which check
 * only what the C library allocates. */
#ifndef CEEMS_HOTMEM_H
#define CEEMS_HOTMEM_H

#include <stddef.h>

/* Reserve RESERVE bytes of address space (rounded up to 2 MiB; only the
 * huge pages touched are memory) for ceems_hotmem_calloc.  0; -EALREADY
 * when enabled already; -ENOTSUP under a memory checker; -errno when the
 * region cannot be mapped (calloc is used then).  Where the kernel gives
 * no huge pages (transparent_hugepage "never") the region is used all the
 * same: its objects still share few pages. */
int ceems_hotmem_enable(size_t reserve);

/* Whether the region is in use. */
int ceems_hotmem_enabled(void);

/* calloc(N, SIZE) from the region while it is enabled and has room,
 * from calloc otherwise.  A block of up to CEEMS_HOTMEM_MAX_BLOCK bytes
 * freed is taken again by the next of its size; a larger one (a table
 * made once) is not. */
#define CEEMS_HOTMEM_MAX_BLOCK (64u * 1024u)
void *ceems_hotmem_calloc(size_t n, size_t size);

/* Free P (from ceems_hotmem_calloc, or NULL): back to the region's free
 * block list of its size, or to free(). */
void ceems_hotmem_free(void *p);

/* The region's bytes handed out (in use or waiting on a free list), for
 * tests and benches. */
size_t ceems_hotmem_used(void);

#endif
