/* agent_confine.h - the node agent's file-system confinement: what it may
 * read and write, enforced by the kernel (Landlock), on top of the
 * capabilities of agent_caps.h.  The table is in ceems-agent(8). */
#ifndef CEEMS_AGENT_CONFINE_H
#define CEEMS_AGENT_CONFINE_H

#include <stdbool.h>

#include "base/conf.h"

/* Confine this process (and every child it forks later) to the paths
 * CONFIG names, the few system files a library may need and, read-only,
 * what agent_confine_prepare found for CONFIG's database (prepared here
 * if it was not).  Paths
 * that do not exist get no rule: the directories the agent writes in
 * must have been made before the call (agent_confine_make_dirs).
 * Returns 1 when confined, 0 when the kernel offers no Landlock (logged:
 * the agent runs unconfined), -1 after logging why confinement failed on
 * a kernel that offers it (the agent then refuses to run). */
int agent_confine_fs(const struct ceems_config *config);

/* With a database configured: find the files libpq may read for it
 * (lib/record/pg_files.h) and the libraries libpq loads, which the
 * replay process reads after the confinement, in a child process that
 * loads libpq (this one never does).  Called at start while the agent
 * has one thread (before its sources open), for agent_confine_fs.  A
 * failure is logged (libpq missing: the replay process will fail too). */
void agent_confine_prepare(const struct ceems_config *config);

/* FN for each path agent_confine_prepare found (until the confinement
 * uses them), LIBRARY when it is one libpq loads: for
 * --check-privileges. */
void agent_confine_each_db_path(void (*fn)(const char *path, bool library,
					   void *arg), void *arg);

/* Make the directories the agent writes in and may not find made: the
 * spool (0750) before its first record, the job note folder (0700, the
 * plugin's drop folder) before the plugin's first note, so that it can
 * be watched from the start (agent_server_notes.c) and confined to.
 * A failure is logged; the agent goes on without them. */
void agent_confine_make_dirs(const struct ceems_config *config);

/* ceems-agent --check-privileges: drop privileges exactly as the agent
 * does, then try what it must not do (read /etc/shadow, write in /etc)
 * and what it must (read a RAPL counter, the proc file system, a cgroup
 * file, the database's credential files; write in the state directory),
 * without connecting to anything.  One line each on stdout; returns
 * 0 when all is as it should be, 1 otherwise. */
int agent_privcheck_run(const struct ceems_config *config);

#endif
