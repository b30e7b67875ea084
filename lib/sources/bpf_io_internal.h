/* bpf_io_internal.h - what the eBPF loader's two halves share: the
 * handle (lib/sources/bpf_io.c: open, slots, maps) and the programs' table with
 * their loading (lib/sources/bpf_progs.c: what the kernel offers and accepts,
 * which programs load).  Only with libbpf (HAVE_BPF). */
#ifndef CEEMS_BPF_IO_INTERNAL_H
#define CEEMS_BPF_IO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sources/bpf_io.h"

struct ceems_io;
struct bpf_link;

/* As many as ceems_io.bpf.c has programs (bpf_progs.c checks). */
#define BPF_IO_MAX_PROGS 80

struct ceems_bpf_io {
	struct ceems_io *skel;
	struct bpf_link *links[BPF_IO_MAX_PROGS];
	enum ceems_bpf_attach attach[CEEMS_BPF_NHOOKS];
	bool by_cgroup;
	uint32_t nslots;
	bool *used;
	uint32_t *gen;
	/* The cgroup id tagged for each slot (v2), 0 when none; a slot
	 * given a second id is forgotten by a walk of the map. */
	uint64_t *cgroup_id;
	bool *cgroup_many;
	int ncpus;
	struct ceems_bpf_job_counters *percpu;	/* ncpus values */
	uint32_t level_mask;
	uint32_t ends_since_sweep;
	/* Processes not tagged because the pid map was full, counted with
	 * the programs' untracked forks in ceems_bpf_io_drops. */
	uint64_t tag_drops;
	char refusals[512];
};

/* The descriptor of the loaded map NAME (for the tests), or -1. */
int ceems_bpf_io_map_fd(struct ceems_bpf_io *io, const char *name);

/* A sweep of the pid map in its two steps (for the tests): the keys of
 * stale entries, at most MAX, into KEYS, their number; then those still
 * stale deleted. */
size_t ceems_bpf_io_gather_stale_pids(struct ceems_bpf_io *io, uint32_t *keys,
				size_t max);
void ceems_bpf_io_delete_stale_pids(struct ceems_bpf_io *io, const uint32_t *keys,
			      size_t n);

/* Whether program NAME's hook is refused a type without it (the tests). */
bool ceems_bpf_progs_io_prog_required(const char *name);

enum bpf_io_load_mode {
	BPF_IO_LOAD_FULL,	/* the maps at their sizes, attached */
	BPF_IO_LOAD_TRIAL,	/* maps of one entry: does the kernel accept */
	BPF_IO_LOAD_VERIFY,	/* the same, not attached: the verifier's say */
};

/* Load (and attach, but to verify) the programs of the attach types in
 * IO->attach.  0, or -errno with *FAILED naming the step or program,
 * the skeleton destroyed. */
int ceems_bpf_progs_io_load_chosen(struct ceems_bpf_io *io, enum bpf_io_load_mode mode,
		       const char **failed);
void ceems_bpf_progs_io_destroy_skel(struct ceems_bpf_io *io);

/* Whether the kernel offers attach type A for hook H without loading
 * anything (its BTF, tracefs, kprobe support); else false with WHY. */
bool ceems_bpf_progs_io_offered(enum ceems_bpf_hook h, enum ceems_bpf_attach a,
		    char *why, size_t why_size);

/* Explain a load's failure ERR at step FAILED into WHY. */
void ceems_bpf_progs_io_explain(int err, const char *failed, char *why, size_t why_size);

#endif
