/* agent_tick_series.c - what a job's time series takes at each charge
 * of its ledger (lib/model/agent_series.h): its memory in use, its IO,
 * network and perf counts, its GPUs' utilisation.  Called by the tick
 * and by the job requests that charge a job between ticks (agent.c). */
#include "config.h"

#include <math.h>
#include <stddef.h>

#include "agent/agent.h"
#include "agent/agent_internal.h"
#include "model/agent_series.h"
#include "base/tick_path.h"

/* A job's memory in use for its time series, NaN when not known. */
static double
job_mem_bytes(const struct agent_job *j)
{
	if (j->usage.present & CEEMS_CGF_MEM_CURRENT)
		return (double)j->usage.mem_current_bytes;
	if (j->usage.present & CEEMS_CGF_MEM_RSS)
		return (double)j->usage.mem_rss_bytes;
	return NAN;
}

void
ceems_agent_tick_series_counts(const struct ceems_agent *a, const struct agent_job *j,
		    struct ceems_series_counts *c)
{
	struct ceems_agent_io_report io;
	struct ceems_perf_report perf;
	static const struct {
		enum ceems_series_count count;
		enum ceems_perf_event event;
	} events[] = {
		{ CEEMS_SC_PAGE_FAULTS, CEEMS_PERF_PAGE_FAULTS },
		{ CEEMS_SC_CTX_SWITCHES, CEEMS_PERF_CONTEXT_SWITCHES },
		{ CEEMS_SC_CYCLES, CEEMS_PERF_CYCLES },
		{ CEEMS_SC_INSTRUCTIONS, CEEMS_PERF_INSTRUCTIONS },
	};

	ceems_agent_series_counts_unknown(c);
	ceems_agent_bpf_fill(a, j, &io);
	if (io.have_io) {
		c->v[CEEMS_SC_READ_BYTES] = (double)io.read_bytes;
		c->v[CEEMS_SC_WRITE_BYTES] = (double)io.write_bytes;
	}
	if (io.have_net) {
		double in = 0, out = 0;

		for (int p = 0; p < 2; p++)
			for (int f = 0; f < 2; f++) {
				in += (double)io.net_bytes[CEEMS_IO_IN][p][f];
				out += (double)io.net_bytes[CEEMS_IO_OUT][p][f];
			}
		c->v[CEEMS_SC_NET_IN_BYTES] = in;
		c->v[CEEMS_SC_NET_OUT_BYTES] = out;
	}
	ceems_agent_perf_report(a, j, &perf);
	for (size_t k = 0; k < sizeof(events) / sizeof(events[0]); k++)
		if (perf.present & (1u << events[k].event))
			c->v[events[k].count] = perf.value[events[k].event];
}

/* Job J's ledger has just been charged up to NOW_NS: that difference
 * goes into its series, with its GPUs' utilisation as this tick read it
 * and its IO and perf counts since the last.  Every charge of the ledger
 * is followed by this, or the rows would not add up to the job's
 * totals. */
CEEMS_TICK_PATH void
ceems_agent_tick_series_observe(const struct ceems_agent *a, const struct agent_job *j,
		     uint64_t now_ns)
{
	struct ceems_series_counts counts;
	double gpu_power_w, gpu_util_pct;

	if (j->series == NULL)
		return;
	ceems_agent_gpu_series_figures(a, &j->gpu, &gpu_power_w, &gpu_util_pct);
	ceems_agent_tick_series_counts(a, j, &counts);
	ceems_agent_series_observe_counts(j->series, now_ns, &j->ledger,
				    j->have_cpu ? j->cpu_s : NAN,
				    job_mem_bytes(j), gpu_util_pct, &counts);
}
