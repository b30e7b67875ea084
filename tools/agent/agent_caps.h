/* agent_caps.h - the node agent's privileges: keep only the capabilities
 * the enabled features need (the table is in ceems-agent(8)), drop every
 * other one from all sets, forbid regaining any (no_new_privs), and raise
 * the open-files limit the per-job counter files need. */
#ifndef CEEMS_AGENT_CAPS_H
#define CEEMS_AGENT_CAPS_H

#include "base/conf.h"

/* Raise RLIMIT_NOFILE's soft limit to its hard limit (logged). */
void agent_caps_raise_nofile(void);

/* Restrict the process's capabilities for CONFIG.  Returns 0, or -1
 * after logging why the process could not be restricted (the agent
 * then refuses to run rather than run with more than it needs). */
int agent_caps_restrict(const struct ceems_config *config);

#endif
