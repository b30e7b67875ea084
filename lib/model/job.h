/* job.h - what ceems knows about a Slurm job apart from its measurements:
 * identity, owner, allocation, state and times.  The plugin fills it from
 * Slurm (lib/ has no Slurm headers: it only sees this struct); the summary,
 * the job record and ceems-sacct read it.  A field that is not known is
 * CEEMS_UNKNOWN_U32 / 0 / "" as documented per field, never a made-up value
 * (design invariant 5). */
#ifndef CEEMS_JOB_H
#define CEEMS_JOB_H

#include <stddef.h>
#include <stdint.h>

#define CEEMS_UNKNOWN_U32 UINT32_MAX
/* time_limit_min's words: Slurm's INFINITE (no limit) and NO_VAL (the
 * partition's, not yet set), kept apart from "unknown". */
#define CEEMS_TIME_LIMIT_UNLIMITED (UINT32_MAX - 2)
#define CEEMS_TIME_LIMIT_PARTITION (UINT32_MAX - 3)

struct ceems_job_meta {
	/* Every string here is text (lib/base/text.h): what Slurm or the system
	 * gave, escaped and cut where it entered. */
	char cluster[64];
	char node[64];			/* the node this record is from */
	uint32_t jobid;
	uint32_t array_job_id;		/* CEEMS_UNKNOWN_U32: not an array */
	uint32_t array_task_id;		/* CEEMS_UNKNOWN_U32: not an array */
	uint32_t uid;
	uint32_t gid;			/* CEEMS_UNKNOWN_U32 when unknown */
	char user[64];			/* "" when the uid has no name */
	char account[64];
	char partition[64];
	char qos[64];
	char name[256];			/* the job name */
	/* Slurm's job state name: COMPLETED, FAILED, CANCELLED, TIMEOUT,
	 * OUT_OF_MEMORY, NODE_FAIL, PREEMPTED, BOOT_FAIL, DEADLINE,
	 * REQUEUED (this run; the job runs again), RUNNING; "" unknown. */
	char state[32];
	int32_t exit_code;		/* -1 unknown */
	int32_t exit_signal;		/* 0: none */
	/* Whether slurmctld listed a dependency of the job (enum
	 * ceems_job_dependency): its start was not its own to choose, so
	 * it gets no carbon-aware advice.  In what was padding, which
	 * earlier writers left as zeros (unknown): the state file's
	 * layout holds. */
	uint8_t dependency;
	int64_t submit_time;		/* Unix seconds; 0 unknown */
	int64_t start_time;
	int64_t end_time;
	uint32_t time_limit_min;	/* CEEMS_UNKNOWN_U32: unknown; CEEMS_TIME_LIMIT_* */
	uint32_t alloc_cpus;		/* whole job; 0 unknown */
	uint64_t req_mem_bytes;		/* whole job; 0 unknown */
	uint32_t alloc_gpus;		/* whole job */
	uint32_t nnodes;		/* 0 unknown */
	char nodes[512];		/* hostlist expression, e.g. node[01-02] */
};

/* struct ceems_job_meta's dependency. */
enum ceems_job_dependency {
	CEEMS_JOB_DEPENDENCY_UNKNOWN = 0,
	CEEMS_JOB_DEPENDENCY_NONE = 1,
	CEEMS_JOB_DEPENDENCY_LISTED = 2,
};

_Static_assert(offsetof(struct ceems_job_meta, submit_time) == 704,
	       "the dependency took padding only: the state file's layout holds");

/* Set every field of META to "unknown". */
void ceems_job_meta_init(struct ceems_job_meta *meta);

/* Fill what META does not know from KNOWN, an earlier account of the
 * same job (what slurmctld said when the job started, for a job end
 * whose own question went unanswered): cluster, account, partition,
 * QOS, name, node list, array ids, group, submit and start times, time
 * limit, CPUs, memory, GPUs and node count, and a dependency it listed
 * (one listed at the start held the start back).  Never the state, exit code,
 * end time, node, owner or job id: those are the end's own. */
void ceems_job_meta_fill_from(struct ceems_job_meta *meta,
			      const struct ceems_job_meta *known);

/* Parse Slurm's TRES string ("cpu=4,mem=8G,node=1,billing=4,gres/gpu=2",
 * gres/gpu:a100=2 counted as GPUs too) into META's alloc_cpus,
 * req_mem_bytes (units K M G T, default M), alloc_gpus and nnodes
 * (node=: the allocation's nodes, which slurmctld keeps counting while
 * the job completes, when its node count drops); fields the
 * string does not name are left as they are.  Returns 0, or -EINVAL on a
 * malformed string (META untouched). */
int ceems_job_meta_parse_tres(struct ceems_job_meta *meta, const char *tres);

/* META as the JSON object "job" of the record (doc/record-format.md),
 * unknown fields left out; NULL on allocation failure.  And back,
 * strictly: unknown keys and bad values are errors, 0 or -EINVAL with
 * ERR (lib/model/job_json.c). */
struct json_object;
struct json_object *ceems_job_json_meta_to_json(const struct ceems_job_meta *meta);
int ceems_job_json_meta_from_json(const struct json_object *obj,
			     struct ceems_job_meta *meta, char *err,
			     size_t err_size);

#endif
