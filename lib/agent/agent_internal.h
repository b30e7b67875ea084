/* agent_internal.h - the node agent engine's private structures (the
 * agent, its jobs and steps) and the helpers that cross its files: every
 * lib/agent/agent*.c but the state file's (agent_state*.c) and the
 * finishing jobs' (agent_finish*.c), which keep to their own headers.
 * Not installed; nothing here is exported (the shared library exports
 * only ceems_*). */
#ifndef CEEMS_AGENT_INTERNAL_H
#define CEEMS_AGENT_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/agent.h"
#include "agent/agent_finish.h"
#include "agent/agent_gpu.h"
#include "agent/agent_intensity.h"
#include "agent/agent_recover.h"
#include "model/agent_series.h"
#include "model/marks.h"
#include "model/work_history.h"
#include "agent/agent_state.h"
#include "sources/bpf_io.h"
#include "sources/task_io.h"
#include "model/emissions.h"
#include "model/energy.h"
#include "model/energy_err.h"
#include "model/idle_fit.h"
#include "record/job_note.h"
#include "model/ledger_carry.h"
#include "model/ledger_restate.h"
#include "sources/perf_job.h"
#include "sources/proc_stats.h"

/* RAPL, pm_counters, hwmon, the GPUs, a BMC, and room for one more. */
enum { MAX_SOURCES = 6 };

/* Below this node busy fraction a tick's power counts as idle power when
 * idle power is learned rather than configured (every tick also goes to
 * the regression of lib/model/idle_fit.h, used until quiet ticks teach one).  The learned value is
 * the median of the last IDLE_SAMPLES such ticks, once there are at least
 * IDLE_MIN_SAMPLES: a single lowest reading is at the mercy of one tick
 * whose counter update landed early, and the median of four is not.  Few
 * enough for a node's first quiet seconds after the agent starts to
 * teach it, before the first job. */
#define IDLE_BUSY_FRACTION 0.05
#define IDLE_SAMPLES 64
#define IDLE_MIN_SAMPLES 4

/* How often a full reading walks a cgroup v1 job for processes not
 * followed yet (agent_tick.c walk_due). */
#define CEEMS_AGENT_WALK_NS (60 * UINT64_C(1000000000))

/* IDLE_RESTORED: an earlier agent's value (agent_idle_store.c), used
 * until this agent's quiet ticks or regression teach one. */
enum idle_source { IDLE_UNLEARNED, IDLE_QUIET, IDLE_FIT, IDLE_RESTORED };

struct idle_learner {
	double w[IDLE_SAMPLES];		/* ring of quiet-tick powers */
	unsigned n;			/* samples held, <= IDLE_SAMPLES */
	unsigned next;
	double value;			/* < 0: not learned yet */
};

/* A job's or step's CPU counter read in a part of a tick, kept until the
 * tick's end applies it (moves the baseline).  Until then the baseline
 * is the last tick's, as every request between ticks expects. */
struct agent_reading {
	bool waiting;			/* read, not applied yet */
	uint64_t seq;			/* the tick it was read for */
	int ret;			/* the read's result */
	bool have_cpu;
	uint64_t cpu_usage_ns;
	bool counts;			/* its eBPF and perf counts were read */
};

struct agent_step {
	struct ceems_agent_step_report r;
	struct ceems_cgroup_reader *reader;	/* NULL once ended */
	uint64_t start_ns;
	uint64_t cpu_last_ns;
	bool have_cpu;
	bool have_rss;			/* rss_bytes read at least once */
	uint64_t rss_bytes;
	double tick_cpu_s;		/* CPU time in the current tick */
	bool end_pending;		/* ended in this tick: tick_cpu_s is its last */
	struct agent_reading rd;
	/* Its part of the job's restatement once the idle power is
	 * learned, J per W (model/ledger_restate.h); in memory only. */
	double unlearned_w[CEEMS_DOMAIN_COUNT];
};

/* Where Slurm keeps jobs' cgroups, learned from the jobs that register
 * (lib/agent/agent_adopt.c), and when to look there next. */
#define CEEMS_AGENT_ADOPT_ROOTS 4
#define CEEMS_AGENT_ADOPT_REFUSED 16

struct agent_adopt {
	unsigned nroots;
	enum ceems_cgroup_version version[CEEMS_AGENT_ADOPT_ROOTS];
	char roots[CEEMS_AGENT_ADOPT_ROOTS][CEEMS_CGROUP_PATH_MAX];
	bool roots_dirty;		/* a root learned, not in the file yet */
	uint64_t next_ns;
	/* The time no agent listened: from the last checkpoint of the
	 * agent before (0: none known) to this one's first scan.  Only a
	 * job that started then is adopted: any other registered itself,
	 * or is one whose record is written (its cgroup lingering). */
	uint64_t away_from_ns, away_until_ns;
	/* Jobs the last scans could not adopt (the agent full): each is
	 * said once at warning level, not at every scan. */
	uint32_t refused[CEEMS_AGENT_ADOPT_REFUSED];
	unsigned nrefused;
};

struct agent_job {
	/* First and together, what every tick reads or writes of a job: on
	 * a virtual machine a page not touched for a second can cost tens
	 * of microseconds to touch again, and the agent reads every job
	 * each second.  Then what only full readings, requests and the
	 * record use. */
	struct ceems_cgroup_reader *reader;
	struct agent_reading rd;
	struct ceems_series *series;	/* NULL: the job keeps none */
	uint64_t cpu_base_ns;		/* cgroup usage at registration */
	uint64_t cpu_last_ns;		/* at the last tick */
	uint64_t cpu_seen_ns;		/* at the last step's end */
	bool have_cpu;
	bool gone;
	uint64_t gone_ns;		/* the tick its cgroup was found gone */
	/* cpu_s at two ticks at least CEEMS_AGENT_TAIL_S apart, the older
	 * first (0: no such tick yet): how busy it was at its end. */
	uint64_t tail_mark_ns[2];
	double tail_cpu_s[2];
	uint32_t alloc_cores;
	uint64_t alloc_mem_bytes;
	double cpu_s;
	double gap_s;
	/* The next tick charges the job from here (when later than the
	 * last tick): its registration, or its restore when the interval
	 * before could not be recovered. */
	uint64_t tick_from_ns;
	/* eBPF IO and network (agent_bpf.c): the loader holding its slot
	 * (NULL: none), its last reading, why none. */
	struct ceems_bpf_io *bpf;
	uint32_t bpf_slot;
	/* ebpf = per-tick: its tracker (NULL: none), and whether a
	 * process's counters were refused: its IO unknown from then, absent
	 * with why (bpf_why; agent_task_io.c). */
	struct ceems_task_io_job *tio;
	bool tio_denied;
	/* Its v2 cgroup, or one of its v1 processes, is in the maps: until
	 * then nothing of it is counted, and its IO is not 0 but unknown. */
	bool bpf_tagged;
	/* The tick time of its last v1 walk for processes not followed
	 * (agent_tick.c walk_due). */
	uint64_t walk_ns;
	struct agent_perf_job *perf;	/* NULL: none (lib/agent/agent_perf.c) */
	/* When its eBPF and perf counts were last read (full readings, its
	 * registration, a step's start; every tick for a job with a time
	 * series): a checkpoint says the time since as not counted. */
	uint64_t counts_ns;
	struct ceems_job_ledger ledger;
	/* Its ticks split before the idle power was learned, restated
	 * once it is (model/ledger_restate.h); in memory only: a restored
	 * job's are partial. */
	struct ceems_ledger_unlearned unlearned;
	/* How sure its energy is (model/energy_err.h); in memory only: a
	 * restored job's is unknown. */
	struct ceems_energy_err_account err;
	struct ceems_cgroup_stats usage;	/* last full reading */
	/* Whether spec.gpu_share names any GPU: a job whose GPUs the
	 * agent does not measure takes its shares from there, and the
	 * spec is far from here. */
	bool spec_gpu_share;
	uint32_t nsteps;
	struct agent_gpu_job gpu;	/* its GPUs (agent_gpu.h); n first */
	struct agent_step steps[CEEMS_AGENT_MAX_STEPS];

	struct ceems_agent_job_spec spec;
	int slot;			/* in the state file, -1 if none */
	uint64_t registered_ns;
	bool have_status;		/* a step ended with a wait status */
	int status;			/* the failed one's, else the last */
	uint32_t ngaps;
	struct ceems_agent_gap gaps[CEEMS_AGENT_MAX_GAPS];
	double recovered_s;
	uint32_t nrecovered;
	struct ceems_agent_gap recovered[CEEMS_AGENT_MAX_GAPS];
	uint64_t cgroup_ino;		/* its CPU usage file's, 0 unknown */
	uint64_t bpf_drops;		/* the loader's drops at its start */
	struct ceems_agent_io_report io;
	char bpf_why[CEEMS_AGENT_WHY_MAX];
	/* What an earlier agent counted of its IO, from its checkpoint
	 * (have_io_before; ceems_agent_bpf_resume), and the seconds between
	 * that no agent counted. */
	bool have_io_before;
	struct ceems_agent_io_report io_before;
	double io_down_s;
	/* Read at each step's end, the last time they can be (Slurm
	 * removes the job's cgroup before the extern step deregisters it):
	 * the highest memory peak of the job's cgroup and the most OOM
	 * kills of its whole tree (agent_end_figures.c). */
	bool have_end_peak;
	uint64_t end_peak_bytes;
	bool have_end_oom_kills;
	uint64_t end_oom_kills;
	/* Adopted by the agent (agent_adopt.c), no plugin heard from yet:
	 * the first registration's spec is taken whole. */
	bool adopted;
	/* When its batch step ended (0: not yet), and whether slurmctld's
	 * word on its end was asked for since (its extern step did not
	 * deregister it within reap_grace: ceems_agent_sweep). */
	uint64_t batch_end_ns;
	bool end_asked;
	/* When that word was asked for (0: not yet): a job whose cgroup
	 * went first is reaped reap_grace after it, not before. */
	uint64_t end_asked_ns;
	/* A pidfd of the slurmstepd that started its extern step, -1
	 * when none (agent_extern.c). */
	int extern_pidfd;
	/* The work its processes reported (agent_marks.c): NULL until
	 * the first mark, so that a job that never marks costs nothing. */
	struct ceems_marks *marks;
	struct ceems_marks_rate mark_rate;
	bool marks_dirty;		/* changed since the last checkpoint */
};

struct ceems_agent {
	struct ceems_config config;
	/* Called when a registered job's cgroup is found gone (its steps
	 * ended without deregistering it): ceems_agent_set_gone_hook. */
	void (*gone_hook)(void *arg, uint32_t jobid);
	void *gone_arg;
	struct ceems_energy_source *sources[MAX_SOURCES];
	size_t nsources;
	/* For each domain, the one source whose counters count (two
	 * sources measuring the same domain would count it twice). */
	int domain_source[CEEMS_DOMAIN_COUNT];
	struct ceems_energy_take *takes[MAX_SOURCES];

	struct agent_gpus gpus;		/* agent_gpu.h */

	struct ceems_proc_reader *proc;
	struct ceems_node_cpu node_cpu;
	bool have_node_cpu;
	struct ceems_cgroup_mounts mounts;
	const char *cgroup_prefix;

	bool have_factor;
	struct ceems_emission_factor factor;
	/* The time-varying series, where intensity_file names one. */
	struct agent_intensity intensity;
	struct idle_learner idle[CEEMS_DOMAIN_COUNT];
	/* Static power learned by regression when the node is never quiet
	 * (lib/model/idle_fit.h): used where the quiet ticks taught nothing. */
	struct ceems_idle_fit idle_fit[CEEMS_DOMAIN_COUNT];
	bool node_busy_known;		/* this tick's busy time was read */
	/* Where each domain's learned idle power comes from now, logged
	 * when it changes. */
	enum idle_source idle_source[CEEMS_DOMAIN_COUNT];
	/* Per watt of idle power, the static joules idle would have had in
	 * the ticks split before it was learned; and, in the tick that
	 * learned it, the joules the restatement moved to idle and to the
	 * system (the jobs' gains balanced), for the status totals. */
	double unlearned_idle_s[CEEMS_DOMAIN_COUNT];
	double restated_idle_j[CEEMS_DOMAIN_COUNT];
	double restated_system_j[CEEMS_DOMAIN_COUNT];
	/* The regression's last trusted value; an earlier agent's value;
	 * the value last kept in the state_dir, and when
	 * (agent_idle_store.c). */
	double idle_learned_w[CEEMS_DOMAIN_COUNT];
	double idle_restored_w[CEEMS_DOMAIN_COUNT];
	bool idle_restored_fit[CEEMS_DOMAIN_COUNT];	/* else quiet */
	double idle_saved_w[CEEMS_DOMAIN_COUNT];
	uint64_t idle_saved_ns;
	bool idle_save_failed;

	struct agent_job **jobs;
	size_t njobs;
	struct ceems_ledger_job_tick *job_ticks;	/* max_jobs each */
	struct ceems_ledger_job_share *shares;
	struct ceems_ledger_tick last_tick;
	/* Ticks ended since the agent opened: what the node measures is
	 * known from the second (the first may only read baselines). */
	uint64_t ticks_ended;
	struct ceems_cgroup_stats scratch;

	uint64_t last_tick_ns;
	uint64_t tick_ns;		/* the tick being taken */
	/* A tick taken in parts (ceems_agent_tick_begin): its number, whether
	 * its readings are full ones, the next job to read, open or not. */
	uint64_t tick_seq;
	uint64_t tick_begin_ns;
	bool tick_full;
	size_t tick_cursor;
	bool tick_open;
	uint64_t last_usage_ns;		/* last full cgroup reading */
	struct state_file *state;
	char boot_id[64];		/* this boot's, "unknown" if unread */

	/* Between ticks, a job that ends is split alone (ledger_carry.h):
	 * the energy read for it waits here for the next tick, with what
	 * it took; the node's other figures are the last tick's. */
	struct ceems_ledger_node_tick pending;
	/* The energy error bound (agent_err.c): what the takes since the
	 * last tick may be off by, the last tick's, the node's view of its
	 * powers, and when the last take was. */
	struct ceems_energy_err_node_tick err_pending, err_tick;
	struct ceems_energy_err_node err_view;
	uint64_t err_take_ns;
	struct ceems_ledger_carry carry;
	struct ceems_ledger_node_tick last_node;
	struct ceems_series *handed_out;	/* the last final report's */
	/* The node's cumulative counters as of the last tick, written with
	 * the jobs' figures at each checkpoint (lib/agent/agent_recover.c). */
	struct state_node snap;
	/* The last checkpoint's time (0 none yet), and whether the next
	 * tick's end must write one whatever the interval: a job left, so
	 * the snapshot on disk is marked and recovers nothing until a new
	 * one is written (lib/agent/agent_recover.c), or came, and has no
	 * figures of the snapshot's tick. */
	uint64_t checkpoint_ns;
	bool checkpoint_wanted;
	struct agent_finish *finish;	/* deregistered, not yet released */
	/* Users' earlier runs' energy per unit of work (agent_marks.c);
	 * NULL when it could not be allocated (no comparison then). */
	struct ceems_work_history *work_history;
	/* The last note of the last full batch taken (lib/agent/agent_end.c):
	 * the
	 * next pass starts after it, so that notes that cannot be taken yet
	 * do not hold back the others; "" from the first. */
	char note_after[CEEMS_NOTE_NAME_MAX];
	bool notes_left;		/* the last pass left notes behind */
	/* The eBPF programs (NULL: not loaded, bpf_why says why) and the
	 * buffer of the cgroup walks (agent_bpf.c). */
	struct ceems_bpf_io *bpf;
	char bpf_why[CEEMS_AGENT_WHY_MAX];
	char *bpf_buf;
	/* ebpf = per-tick: IO from the kernel's per-process counters, and
	 * the buffer of a job's readings (agent_task_io.c). */
	bool task_io;
	struct ceems_task_iter *task_iter;	/* NULL: /proc instead */
	/* Its last reading: in the tick of sequence TASK_ITER_SEQ (else
	 * outside a tick), and what it returned. */
	bool task_iter_read;
	uint64_t task_iter_seq;
	int task_iter_ret;
	struct ceems_task_io_sample *tio_samples;
	size_t tio_cap;
	/* perf counters (lib/agent/agent_perf.c): every job's descriptors, and
	 * the v1 perf_event mount ("" none). */
	struct ceems_perf_budget perf_budget;
	char perf_v1_mount[CEEMS_CGROUP_PATH_MAX];
	struct agent_adopt *adopt;	/* NULL: out of memory at open */
};

/* agent.c */
void ceems_agent_free_job(struct agent_job *j);

/* agent_learn.c: what a later registration SPEC of job J says that the
 * first could not (Slurm's start time, the cluster, GPUs, more of the
 * job's v1 cgroup), taken and kept for a restarted agent. */
void ceems_agent_learn(struct ceems_agent *a, struct agent_job *j,
		       const struct ceems_agent_job_spec *spec);

/* agent_extern.c: the job's extern slurmstepd gone while the job is
 * registered and none of its other steps runs here. */
void ceems_agent_extern_close(struct agent_job *j);
bool ceems_agent_extern_lost(const struct agent_job *j);
/* Whether J's extern slurmstepd is known to be still running. */
bool ceems_agent_extern_alive(const struct agent_job *j);
/* J's cgroup was found gone at NOW_NS: slurmctld's word on its end is
 * asked for, unless its extern slurmstepd still runs (it deregisters
 * the job as it ends; ceems_agent_sweep asks if it dies instead). */
void ceems_agent_extern_cgroup_gone(struct ceems_agent *a, struct agent_job *j,
				    uint64_t now_ns);
/* Slurmctld's word on J's end is asked for, once. */
void ceems_agent_extern_ask_end(struct ceems_agent *a, struct agent_job *j,
				uint64_t now_ns);
/* J's spec set to SPEC, and what the tick keeps of it near at hand. */
void ceems_agent_job_set_spec(struct agent_job *j, const struct ceems_agent_job_spec *spec);
struct agent_job *ceems_agent_find_job(const struct ceems_agent *a, uint32_t jobid,
				 size_t *index);
int ceems_agent_attach_job(struct ceems_agent *a, struct agent_job *j);
bool ceems_agent_spec_valid(const struct ceems_agent_job_spec *s);
struct ceems_cgroup_reader *ceems_agent_open_step_reader(struct ceems_agent *a,
						   struct agent_job *j,
						   const char *id);

/* agent_idle_store.c: the learned idle power, kept across restarts. */
void ceems_agent_idle_store_load(struct ceems_agent *a);
/* Keep the learned values when one moved (at most once a minute, or
 * now when CLOSING). */
void ceems_agent_idle_store_save(struct ceems_agent *a, uint64_t now_ns,
				 bool closing);

/* agent_recover.c */
void ceems_agent_recover_snapshot_node(struct ceems_agent *a, uint64_t now_ns);
void ceems_agent_recover_save_node(struct ceems_agent *a);
void ceems_agent_recover_snapshot_job_left(struct ceems_agent *a);
/* Judge the node's counters against the checkpoint's SNAP (written in
 * boot SAVED_BOOT); when they allow it, set the baselines so that the
 * next tick spans the interval since SNAP's tick.  Returns the verdict. */
enum ceems_recover_verdict ceems_agent_recover_node(struct ceems_agent *a,
					      const struct state_node *snap,
					      const char *saved_boot,
					      uint64_t now_ns);

/* agent_adopt.c: jobs that started while the agent was away.  Open
 * loads the roots kept in the state_dir (0 or -ENOMEM); learn takes the
 * root of a registered job's cgroup; scan, at most once a minute,
 * adopts the live jobs under the roots that the agent does not hold. */
int ceems_agent_adopt_open(struct ceems_agent *a);
void ceems_agent_adopt_close(struct ceems_agent *a);
void ceems_agent_adopt_learn(struct ceems_agent *a,
			     const struct ceems_cgroup_job *cgroup);
void ceems_agent_adopt_scan(struct ceems_agent *a, uint64_t now_ns);
/* The last checkpoint of the agent before, at NS: jobs older are not
 * adopted.  Write the roots learned since the last call, if any. */
void ceems_agent_adopt_away_since(struct ceems_agent *a, uint64_t ns);
void ceems_agent_adopt_save(struct ceems_agent *a);

/* agent.c: register a job found running for MISSED_NS already (its
 * registration dated back, the time missed a gap).  As
 * ceems_agent_register. */
int ceems_agent_register_adopted(struct ceems_agent *a,
				 const struct ceems_agent_job_spec *spec,
				 uint64_t missed_ns, uint64_t now_ns);

/* agent_end_figures.c: a step's and its job's peaks and OOM kills read
 * at the step's end; the job's usage and tail as its report gives them. */
void ceems_agent_end_figures_step(struct ceems_agent *a, struct agent_step *st);
void ceems_agent_end_figures_job(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_end_figures_usage(const struct agent_job *j,
				   struct ceems_cgroup_stats *usage);
void ceems_agent_end_figures_tail(const struct agent_job *j, uint64_t asof_ns,
				  struct ceems_agent_job_report *out);

/* agent_tick.c */
/* Job J's share of each GPU device this tick, into SHARE. */
void ceems_agent_tick_job_gpu_shares(const struct ceems_agent *a,
			  const struct agent_job *j,
			  double share[CEEMS_LEDGER_MAX_GPUS]);
void ceems_agent_tick_collect_energy(struct ceems_agent *a, uint64_t now_ns,
			  struct ceems_ledger_node_tick *node);
void ceems_agent_tick_collect_step(struct ceems_agent *a, struct agent_step *st,
			bool full);
void ceems_agent_tick_collect_job(struct ceems_agent *a, struct agent_job *j, bool full,
		       struct ceems_ledger_job_tick *t);
void ceems_agent_tick_full_reading(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_tick_note_job_cpu(struct ceems_agent *a, struct agent_job *j);
double ceems_agent_tick_job_absent_s(const struct ceems_agent *a,
			  const struct agent_job *j);
void ceems_agent_tick_save_job(struct ceems_agent *a, const struct agent_job *j,
		    uint64_t now_ns);
void ceems_agent_tick_stale_counts(const struct agent_job *j, uint64_t now_ns,
				   struct ceems_agent_io_report *io,
				   struct ceems_perf_report *perf);
/* Job J's cumulative IO, network and perf counts, for its series. */
struct ceems_series_counts;
void ceems_agent_tick_series_counts(const struct ceems_agent *a, const struct agent_job *j,
			 struct ceems_series_counts *c);
void ceems_agent_tick_series_observe(const struct ceems_agent *a,
			  const struct agent_job *j, uint64_t now_ns);
void ceems_agent_tick_split_to_steps(struct agent_job *j,
			  const struct ceems_ledger_job_share *share,
			  const struct ceems_ledger_job_tick *t);

/* agent_err.c: a take T of counter C over DT_S seconds into the pending
 * errors; the idle power's uncertainty as NODE uses it; the tick's
 * end (the node view, the pending errors made the tick's); job J
 * charged its SHARE of a tick whose errors are ERR, or a gap. */
void ceems_agent_err_take(struct ceems_agent *a, struct ceems_energy_counter *c,
			  const struct ceems_energy_take *t, double dt_s);
void ceems_agent_err_idle(struct ceems_agent *a,
			  const struct ceems_ledger_node_tick *node);
void ceems_agent_err_tick(struct ceems_agent *a, double dt_s);
void ceems_agent_err_charge(struct ceems_agent *a, struct agent_job *j,
			    const struct ceems_energy_err_node_tick *err,
			    const struct ceems_ledger_job_share *share,
			    size_t ngpus, double dt_s);
void ceems_agent_err_gap(const struct ceems_agent *a, struct agent_job *j,
			 double dt_s);
/* A report's bound OUT with the part of a tick J's report splits
 * (SHARE, of DT_S seconds) added, J's own account left as it is. */
void ceems_agent_err_report_partial(const struct ceems_agent *a,
				    const struct agent_job *j,
				    const struct ceems_ledger_job_share *share,
				    size_t ngpus, double dt_s,
				    struct ceems_energy_err_report *out);

/* agent_bpf.c */
void ceems_agent_bpf_open(struct ceems_agent *a);
void ceems_agent_bpf_close(struct ceems_agent *a);
void ceems_agent_bpf_job_start(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_bpf_job_read(struct ceems_agent *a, struct agent_job *j,
			      bool find_new);
void ceems_agent_bpf_job_end(struct agent_job *j);
/* A job restored after a restart: a new slot, and what the earlier agent
 * counted (SAVED) with the DOWN_S seconds no agent counted. */
void ceems_agent_bpf_resume(struct ceems_agent *a, struct agent_job *j,
		      const struct ceems_agent_io_report *saved, double down_s);
void ceems_agent_bpf_fill(const struct ceems_agent *a, const struct agent_job *j,
		    struct ceems_agent_io_report *out);
/* agent_task_io.c: ebpf = per-tick (WANTED: CONFIG counts IO per tick:
 * no program on any call, a task iterator read once per tick;
 * sources/task_io.h).  A job's tracker (RESTORED: after
 * an agent restart, its processes' counts so far are not its), its
 * reading (IN_TICK: the tick's jobs share one reading of the node's
 * processes), its end; the agent's buffer and iterator freed. */
bool ceems_agent_task_io_wanted(const struct ceems_config *config);
void ceems_agent_task_io_job_start(struct ceems_agent *a, struct agent_job *j,
				   bool restored);
void ceems_agent_task_io_job_read(struct ceems_agent *a, struct agent_job *j,
				  bool in_tick);
void ceems_agent_task_io_job_end(struct agent_job *j);
void ceems_agent_task_io_close(struct ceems_agent *a);
/* agent_perf.c */
struct agent_perf_job;
void ceems_agent_perf_open_node(struct ceems_agent *a);
void ceems_agent_perf_open_job(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_perf_hardware(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_perf_step(struct ceems_agent *a, struct agent_job *j);
void ceems_agent_perf_read(struct agent_job *j);
void ceems_agent_perf_report(const struct ceems_agent *a, const struct agent_job *j,
		       struct ceems_perf_report *out);
void ceems_agent_perf_close(struct agent_job *j);
/* A job restored after a restart: its events open again, and what the
 * earlier agent counted (SAVED), with the DOWN_S seconds no agent
 * counted, is added to their counts. */
void ceems_agent_perf_resume(struct ceems_agent *a, struct agent_job *j,
		       const struct ceems_perf_report *saved, double down_s);

#endif /* CEEMS_AGENT_INTERNAL_H */
