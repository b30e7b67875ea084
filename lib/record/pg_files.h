/* pg_files.h - the files libpq may read to connect with a connection
 * string: password and service files, TLS certificates and keys.  The
 * node agent allows exactly these (read-only) when it confines itself
 * (tools/agent/agent_confine.c), and --check-privileges shows them readable. */
#ifndef CEEMS_PG_FILES_H
#define CEEMS_PG_FILES_H

#include <stdbool.h>
#include <stddef.h>

/* Called once per path: IS_DIR when libpq reads files inside it. */
typedef void (*ceems_pg_file_fn)(const char *path, bool is_dir, void *arg);

/* The home directory libpq uses: $HOME when set and not empty, else the
 * password database's for this uid.  0, or -ENOENT / -ENAMETOOLONG. */
int ceems_pg_files_home(char *buf, size_t size);

/* Call ADD for each file libpq may read when it connects with CONNINFO
 * (keywords or a URI) in a process whose home is HOME: HOME/.pgpass,
 * HOME/.pg_service.conf, HOME/.postgresql/, the system service files,
 * the files the PG* environment names, and the files CONNINFO names
 * (passfile, sslcert, sslkey, sslrootcert, sslcrl, sslcrldir), its
 * service entry's included (read from the service files now, as libpq
 * reads them).  Paths are given whether they exist or not.  Reads files,
 * connects to nothing.  0, or -EINVAL when CONNINFO does not parse
 * (nothing called) or libpq is not built in. */
int ceems_pg_files(const char *conninfo, const char *home,
		   ceems_pg_file_fn add, void *arg);

#endif
