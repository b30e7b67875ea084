/* agent_server.h - the node agent's event loop: the engine (lib/agent/agent.h)
 * driven by timers, fed by the local socket, stopped by signals. */
#ifndef CEEMS_AGENT_SERVER_H
#define CEEMS_AGENT_SERVER_H

#include "base/conf.h"

/* Open the engine, restore the jobs of the last checkpoint, listen on
 * the configured socket and serve until SIGTERM or SIGINT.  CONFIG_TEXT
 * is the text CONFIG was parsed from, for the replay process.  Returns
 * the process exit status: 0 after a clean stop, 1 when the agent cannot
 * start (the reason is logged). */
int agent_server_run(const struct ceems_config *config,
		     const char *config_text);

#endif
