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
 * connects to nothing; loads libpq (record/pg_lib.h) into this process.
 * 0, or -errno with ERR: -EINVAL when CONNINFO does not parse (nothing
 * called), -ENOENT or -ENOSYS when libpq cannot be loaded, -ENOTSUP
 * when built without it. */
int ceems_pg_files(const char *conninfo, const char *home,
		   ceems_pg_file_fn add, void *arg, char *err, size_t err_size);

/* ceems_pg_files for CONNINFO and each of HOMES[0..NHOMES-1], run in a
 * child process, so that this process never maps libpq and what it
 * brings (pg_files_apart.c says why); then LIBRARY called with each
 * file of the libraries the child loaded for libpq (what a process of
 * this program reads to load libpq later; IS_DIR false).  Call it while
 * this process has one thread: the child of the fork loads a library.
 * 0, or -errno with ERR as ceems_pg_files, or about the child (-EIO: it
 * died or said nothing in time, -ENOBUFS: it listed too much). */
int ceems_pg_files_apart(const char *conninfo, const char *const *homes,
			 size_t nhomes, ceems_pg_file_fn add,
			 ceems_pg_file_fn library, void *arg, char *err,
			 size_t err_size);

#endif
