# tests/harness/pg.sh -- sourceable bash library that runs a throwaway
# PostgreSQL 15 cluster for ceems integration tests (real PostgreSQL, no
# network: unix socket only, inside a private temporary directory).
#
# Usage (as root; initdb/postgres run as user postgres through runuser):
#   . tests/harness/pg.sh
#   dir=$(pg_harness_mktemp)    # ${TMPDIR:-/tmp}/ceems-test.pg.XXXXXX
#   pg_harness_start "$dir"     # exports PGHOST PGPORT PGDATABASE PGUSER
#   psql -c 'select 1'          # database "ceems", superuser "postgres"
#   sock=$(pg_harness_root_socket "$dir")   # a socket root without
#                               # capabilities can reach (the node agent)
#   pg_harness_stop "$dir"      # stops the server and removes $dir (and
#                               # the root socket's directory)
#   pg_harness_leftovers        # non-zero if a harness server/dir is left
#
# Environment:
#   CEEMS_TEST_PGPORT  port number (default 15432); with listen_addresses=''
#                      it only names the socket file $dir/.s.PGSQL.<port>
#   CEEMS_TEST_PGBIN   PostgreSQL binaries (default /usr/lib/postgresql/15/bin)
#
# Layout of DIR (owned by postgres, mode 0700):
#   DIR/data        the cluster (PGDATA)
#   DIR/server.log  the server log
#   DIR/.s.PGSQL.*  the socket
#
# All functions are safe under `set -eu`: they report failures on stderr,
# naming what failed, and return non-zero instead of exiting.

: "${CEEMS_TEST_PGPORT:=15432}"
: "${CEEMS_TEST_PGBIN:=/usr/lib/postgresql/15/bin}"

_pg_harness_err() {
    echo "pg_harness: $*" >&2
}

# Run a command as the postgres user, from a directory it can read.
_pg_harness_as_pg() {
    (cd / && runuser -u postgres -- "$@")
}

_pg_harness_log_tail() {
    local dir=$1
    if [ -f "$dir/server.log" ]; then
        echo "pg_harness: ---- tail of $dir/server.log ----" >&2
        tail -n 30 "$dir/server.log" >&2 || true
        echo "pg_harness: ----" >&2
    fi
}

# pg_harness_mktemp: create and print a fresh directory for a cluster.
pg_harness_mktemp() {
    local d
    if ! d=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.pg.XXXXXX"); then
        _pg_harness_err "mktemp -d under ${TMPDIR:-/tmp} failed"
        return 1
    fi
    echo "$d"
}

# pg_harness_start DIR: initialise and start a cluster in DIR (created if
# missing; must be empty), create database "ceems", export the libpq
# environment.  Returns non-zero (after printing the server log tail) on
# failure; the caller should still call pg_harness_stop DIR.
pg_harness_start() {
    local dir=${1:-}
    local bin=$CEEMS_TEST_PGBIN port=$CEEMS_TEST_PGPORT
    local i

    if [ -z "$dir" ]; then
        _pg_harness_err "usage: pg_harness_start DIR"
        return 2
    fi
    if [ "$(id -u)" != 0 ]; then
        _pg_harness_err "must run as root (initdb/postgres are run through runuser -u postgres)"
        return 1
    fi
    if [ ! -x "$bin/initdb" ] || [ ! -x "$bin/pg_ctl" ]; then
        _pg_harness_err "PostgreSQL 15 server binaries not found in $bin (install package postgresql-15)"
        return 1
    fi
    if ! id -u postgres >/dev/null 2>&1; then
        _pg_harness_err "user postgres does not exist (install package postgresql-15)"
        return 1
    fi
    if ! command -v psql >/dev/null 2>&1; then
        _pg_harness_err "psql not found (install package postgresql-client-15)"
        return 1
    fi
    case $dir in
        /*) ;;
        *) dir=$(cd "$dir" 2>/dev/null && pwd) || { _pg_harness_err "cannot resolve $1"; return 1; } ;;
    esac
    if ! mkdir -p "$dir"; then
        _pg_harness_err "cannot create $dir"
        return 1
    fi
    if [ -e "$dir/data" ]; then
        _pg_harness_err "$dir/data already exists; use a fresh directory"
        return 1
    fi
    # initdb refuses to run as root; the socket directory and the data
    # directory must belong to postgres.  0700: nobody else may reach the
    # trust-authenticated socket.
    if ! chown postgres: "$dir" || ! chmod 0700 "$dir"; then
        _pg_harness_err "cannot chown/chmod $dir for user postgres"
        return 1
    fi

    if ! _pg_harness_as_pg test -w "$dir"; then
        _pg_harness_err "user postgres cannot write to $dir (every parent directory must be traversable by postgres; set TMPDIR elsewhere)"
        return 1
    fi

    if ! _pg_harness_as_pg "$bin/initdb" -D "$dir/data" -U postgres \
            --auth=trust --encoding=UTF8 --locale=C.UTF-8 --no-sync \
            >"$dir/initdb.log" 2>&1; then
        _pg_harness_err "initdb failed in $dir/data:"
        tail -n 20 "$dir/initdb.log" >&2 || true
        return 1
    fi

    # Later settings in postgresql.conf win.
    if ! cat >>"$dir/data/postgresql.conf" <<EOF

# ---- ceems test harness ----
listen_addresses = ''
port = $port
unix_socket_directories = '$dir'
unix_socket_permissions = 0700
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 50
shared_buffers = 32MB
log_min_messages = warning
log_line_prefix = '%m [%p] '
EOF
    then
        _pg_harness_err "cannot write $dir/data/postgresql.conf"
        return 1
    fi
    # Socket only, in a 0700 directory: trust every local connection.
    if ! printf 'local all all trust\n' >"$dir/data/pg_hba.conf"; then
        _pg_harness_err "cannot write $dir/data/pg_hba.conf"
        return 1
    fi

    if ! _pg_harness_as_pg "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
            -w -t 30 start >"$dir/pg_ctl.log" 2>&1; then
        _pg_harness_err "pg_ctl start failed for $dir/data:"
        cat "$dir/pg_ctl.log" >&2 || true
        _pg_harness_log_tail "$dir"
        return 1
    fi

    i=0
    until "$bin/pg_isready" -q -h "$dir" -p "$port" -t 1; do
        i=$((i + 1))
        if [ "$i" -ge 30 ]; then
            _pg_harness_err "server in $dir not ready after 30 s (pg_isready)"
            _pg_harness_log_tail "$dir"
            return 1
        fi
        sleep 1
    done

    if ! psql -X -q -h "$dir" -p "$port" -U postgres -d postgres -v ON_ERROR_STOP=1 \
            -c 'CREATE DATABASE ceems OWNER postgres' >/dev/null; then
        _pg_harness_err "CREATE DATABASE ceems failed on server in $dir"
        _pg_harness_log_tail "$dir"
        return 1
    fi

    export PGHOST=$dir PGPORT=$port PGDATABASE=ceems PGUSER=postgres
    return 0
}

# Print the pids of live postgres processes whose working directory (postgres
# runs in its data directory) or command line (postmaster -D DATADIR)
# contains NEEDLE, e.g. DIR/data.
_pg_harness_pids() {
    local needle=$1 p comm cwd txt
    for p in /proc/[0-9]*; do
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        [ "$comm" = postgres ] || continue
        # zombies are gone already
        grep -q '^State:[[:space:]]*Z' 2>/dev/null "$p/status" && continue
        cwd=$(readlink "$p/cwd" 2>/dev/null) || cwd=
        txt=$(tr '\0' ' ' 2>/dev/null <"$p/cmdline") || txt=
        case "$cwd|$txt" in
            *"$needle"*) echo "${p#/proc/}" ;;
        esac
    done
}

# pg_harness_stop DIR: stop the server of DIR (fast, then immediate, then
# SIGKILL), check that none of its processes remain, remove DIR.
# Idempotent; works after a failed or partial start.
# pg_harness_root_socket DIR: a second socket for the server in DIR, in a
# directory of group root (0750) that uid/gid 0 may enter even without
# capabilities (the node agent drops them all; the harness's own socket
# directory is postgres's 0700) and nobody else may.  Prints its path;
# pg_harness_stop DIR removes it.
pg_harness_root_socket() {
    local dir=${1:-} sock
    if [ -z "$dir" ] || [ ! -d "$dir/data" ]; then
        _pg_harness_err "usage: pg_harness_root_socket DIR (a started harness server)"
        return 2
    fi
    if ! sock=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.pgsock.XXXXXX"); then
        _pg_harness_err "mktemp -d for the root socket failed"
        return 1
    fi
    echo "$sock" >"$dir/root-socket" || return 1
    if ! chown postgres:root "$sock" || ! chmod 0750 "$sock"; then
        _pg_harness_err "cannot chown/chmod $sock"
        return 1
    fi
    psql -X -q -v ON_ERROR_STOP=1 -h "$dir" -p "$CEEMS_TEST_PGPORT" -U postgres -d postgres \
        -c "ALTER SYSTEM SET unix_socket_directories = '$dir', '$sock'" \
        -c "ALTER SYSTEM SET unix_socket_permissions = '0777'" >/dev/null || return 1
    if ! (cd / && _pg_harness_as_pg "$CEEMS_TEST_PGBIN/pg_ctl" -D "$dir/data" \
            -l "$dir/server.log" -w -t 30 restart) >/dev/null; then
        _pg_harness_err "restart with the root socket in $sock failed"
        _pg_harness_log_tail "$dir"
        return 1
    fi
    echo "$sock"
}

# pg_harness_apply_schema SRCDIR: the schema as ceems-admin applies it,
# with psql on the connection of the environment (PGHOST...): the
# migrations in order, then the definitions (functions, triggers, views,
# policies; doc/storage.md), then ceems.adopt_objects().  For tests that
# want the schema without ceems-admin.
pg_harness_apply_schema() {
    local src=${1:-} f
    if [ -z "$src" ] || [ ! -d "$src/sql/migrations" ]; then
        _pg_harness_err "usage: pg_harness_apply_schema SRCDIR (the tree with sql/)"
        return 2
    fi
    for f in "$src"/sql/migrations/[0-9]*.sql "$src"/sql/functions/*.sql \
        "$src"/sql/triggers/*.sql "$src"/sql/views/*.sql "$src"/sql/policies/*.sql; do
        psql -X -q -v ON_ERROR_STOP=1 -f "$f" >/dev/null || {
            _pg_harness_err "cannot apply $f"
            return 1
        }
    done
    psql -X -q -v ON_ERROR_STOP=1 -c 'CALL ceems.adopt_objects()' >/dev/null
}

pg_harness_stop() {
    local dir=${1:-}
    local bin=$CEEMS_TEST_PGBIN
    local pids i pm comm rc=0

    if [ -z "$dir" ]; then
        _pg_harness_err "usage: pg_harness_stop DIR"
        return 2
    fi
    [ -e "$dir" ] || return 0
    case $dir in
        /*) ;;
        *) dir=$(cd "$dir" && pwd) || return 1 ;;
    esac

    if [ -f "$dir/data/postmaster.pid" ]; then
        if ! _pg_harness_as_pg "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 20 stop \
                >/dev/null 2>&1; then
            _pg_harness_as_pg "$bin/pg_ctl" -D "$dir/data" -m immediate -w -t 10 stop \
                >/dev/null 2>&1 || true
        fi
    fi
    pm=
    if [ -f "$dir/data/postmaster.pid" ]; then
        pm=$(head -n 1 "$dir/data/postmaster.pid" 2>/dev/null) || pm=
    fi
    pids=$(_pg_harness_pids "$dir/data")
    case $pm in
        ''|*[!0-9]*) ;;
        *)
            # the postmaster, unless its pid now belongs to something else
            if { read -r comm <"/proc/$pm/comm"; } 2>/dev/null && [ "$comm" = postgres ]; then
                pids="$pm $pids"
            fi
            ;;
    esac
    if [ -n "$pids" ]; then
        _pg_harness_err "postgres processes of $dir still alive after pg_ctl stop, killing: $pids"
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        i=0
        while [ -n "$(_pg_harness_pids "$dir/data")" ] && [ "$i" -lt 50 ]; do
            sleep 0.1
            i=$((i + 1))
        done
    fi
    pids=$(_pg_harness_pids "$dir/data")
    if [ -n "$pids" ]; then
        _pg_harness_err "postgres processes of $dir survive SIGKILL: $pids"
        rc=1
    fi

    if [ "${PGHOST:-}" = "$dir" ]; then
        unset PGHOST PGPORT PGDATABASE PGUSER
    fi
    if [ "$rc" = 0 ] && [ -f "$dir/root-socket" ]; then
        local sock
        sock=$(cat "$dir/root-socket") || sock=
        case $sock in
            "${TMPDIR:-/tmp}"/ceems-test.pgsock.*) rm -rf -- "$sock" ;;
        esac
    fi
    if [ "$rc" = 0 ] && ! rm -rf -- "$dir"; then
        _pg_harness_err "cannot remove $dir"
        rc=1
    fi
    return "$rc"
}

# pg_harness_leftovers: print postgres processes and directories that a
# harness server left behind (anything under ${TMPDIR:-/tmp}/ceems-test.pg.*);
# return non-zero if there is any.
pg_harness_leftovers() {
    local found=0 p d
    for p in $(_pg_harness_pids "${TMPDIR:-/tmp}/ceems-test.pg."); do
        echo "leftover postgres process: $p $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")"
        found=1
    done
    for d in "${TMPDIR:-/tmp}"/ceems-test.pg.*; do
        if [ -e "$d" ]; then
            echo "leftover temporary directory: $d"
            found=1
        fi
    done
    [ "$found" = 0 ]
}
