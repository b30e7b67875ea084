/* agent_state_layout.h - the layout of the node agent's state file (the
 * current version), shared by agent_state.c, which writes it, and
 * agent_state_check.c and agent_state_migrate.c, which read it.  Not
 * installed.
 *
 * A file is a header of STATE_HEADER_SIZE bytes, then slots of
 * sizeof(struct slot), as many as are in use.  Integers are the host's:
 * the file never leaves its node (and a file of another boot is set
 * aside). */
#ifndef CEEMS_AGENT_STATE_LAYOUT_H
#define CEEMS_AGENT_STATE_LAYOUT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "agent/agent_state.h"

#define STATE_MAGIC "CEEMSST1"
/* 2: steps carry have_cpu and have_joules[].  3: a slot may hold a
 * deregistered job's final report ("finishing").  4: the spec holds
 * Slurm's start time and cluster of the job.  5: written with pwrite,
 * each copy with its length and checksum; the figures hold the job's
 * cumulative CPU usage and cgroup identity, the header the node's
 * counters (what recovering the interval after a restart needs).  A
 * version 4 file is migrated (agent_state_migrate.c); an older one is
 * set aside like any foreign one. */
/* 6: the spec holds the job's GPU identifiers, the figures and the
 * final report its GPUs' accounts.  7: the figures hold the job's eBPF
 * and perf counts, and both of its reports the time no agent counted
 * them.  8: the checksums are ceems_agent_state_checksum_lanes's, a word at a
 * time (version 5 to 7's hashed a byte at a time: 4 us a job a
 * checkpoint, the agent's largest cost with many jobs).  Versions 4 to
 * 7 are migrated.  9: the final report holds the job's energy error
 * bound; versions 4 to 8 are migrated (the bound of a job finishing in
 * an older file is unknown). */
#define STATE_VERSION 9
#define STATE_HEADER_SIZE 4096

struct state_header {
	char magic[8];
	uint32_t version;
	uint32_t slot_size;	/* layout check: sizeof(struct slot) */
	uint32_t nslots;	/* the most it may hold (2 x max_jobs) */
	uint32_t figures_size;	/* layout check */
	char boot_id[64];
	struct state_node node;
};

_Static_assert(sizeof(struct state_header) <= STATE_HEADER_SIZE,
	       "the state file's header fits its page");

/* Written with the figures it describes, in one write: see
 * ceems_agent_state_slot_update. */
struct slot_copy_head {
	uint64_t seq;		/* 0: never written */
	uint64_t len;		/* bytes of figures written */
	uint64_t check;		/* ceems_agent_state_checksum_lanes of those bytes */
};

struct slot_copy {
	struct slot_copy_head head;
	struct state_figures fig;
};

/* A deregistered job waiting for its release: what the agent needs to
 * write its record if the plugin never confirms it, even after an agent
 * restart. */
struct slot_final {
	int64_t start_time;
	int64_t end_time;
	uint32_t have_meta;	/* cleared while meta is written */
	uint32_t pad;
	struct ceems_agent_job_report report;	/* series: not kept */
	struct ceems_job_meta meta;
};

struct slot {
	uint32_t in_use;	/* written last at claim, first at release */
	uint32_t finishing;	/* written after final: never a live job again */
	uint64_t registered_ns;
	struct ceems_agent_job_spec spec;
	struct slot_copy copy[2];
	struct slot_final final;
};

static inline size_t
copy_offset(unsigned which)
{
	return offsetof(struct slot, copy) + which * sizeof(struct slot_copy);
}

/* agent_state_check.c: what is read back from disk is checked like any
 * outside input. */
/* The latest copy whose length, checksum and figures are sane (its
 * sequence number in *SEQ), or NULL. */
const struct state_figures *ceems_agent_state_check_best_copy(const struct slot_copy copy[2],
					    uint64_t *seq);
bool ceems_agent_state_check_figures_sane(const struct state_figures *f);
bool ceems_agent_state_check_final_sane(const struct ceems_agent_job_spec *spec,
		      const struct slot_final *final);
void ceems_agent_state_check_terminate_meta(struct ceems_job_meta *m);
bool ceems_agent_state_check_node_sane(const struct state_node *n);

/* agent_state_migrate.c: rewrite the file at PATH (open on FD, SIZE
 * bytes, header H) of an older version as a current one, in place of
 * the old (a new file renamed over it).  0, or -errno (the old file is
 * then left as it was). */
int ceems_agent_state_migrate(int fd, const char *path, const struct state_header *h,
		  off_t size);

#endif
