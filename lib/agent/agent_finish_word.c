/* agent_finish_word.c - whether slurmctld's word on a job's end is of
 * the run the agent measured or of a later one (a requeued job started
 * again before the word was asked for): a rule on the metadata alone,
 * apart from the finishing table (agent_finish.c) that applies it. */
#include "config.h"

#include <stdio.h>

#include "agent/agent_finish.h"

bool
ceems_agent_finish_word_later_run(struct ceems_job_meta *word, int64_t run_start,
				  int64_t run_end)
{
	if (word->start_time <= 0 ||
	    (run_start > 0 ? word->start_time <= run_start :
	     run_end <= 0 || word->start_time <= run_end))
		return false;
	word->start_time = run_start;	/* 0: the run's own, from the agent */
	word->end_time = 0;
	snprintf(word->state, sizeof(word->state), "REQUEUED");
	word->exit_code = 0;
	word->exit_signal = 0;
	return true;
}
