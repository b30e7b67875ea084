#!/usr/bin/env bats
# tests/integration/storage.bats -- nothing is lost (design
# invariant 3), against the harness's real PostgreSQL with the schema of
# sql/migrations: records stored while the database is down are spooled
# and replayed exactly once (by the real node agent), a database killed in
# the middle of a transaction leaves nothing half-written, a full spool
# filesystem (a 64 KiB tmpfs) logs the records whole, and corrupted spool
# files are set aside while the rest replay; the confined agent reaches a
# password role through root's service and password files.  Records are
# built and stored by tests/integration/storage-driver through libceems,
# as the plugin does at job end, so no Slurm is needed.
#
# Run as root:  bats --tap tests/integration/storage.bats
# (make check-integration sets CEEMS_TOP_BUILDDIR and CEEMS_FIXTURES.)

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

_skip_reason() {
    if [ "$(id -u)" != 0 ]; then
        echo "needs root (PostgreSQL harness, tmpfs mounts)"
    elif [ -z "${CEEMS_TOP_BUILDDIR:-}" ] ||
         [ ! -x "$CEEMS_TOP_BUILDDIR/tests/integration/storage-driver" ]; then
        echo "CEEMS_TOP_BUILDDIR does not hold tests/integration/storage-driver (make check builds it)"
    elif ! grep -q '^#define HAVE_LIBPQ 1' "$CEEMS_TOP_BUILDDIR/config.h" 2>/dev/null; then
        echo "built without PostgreSQL (--without-pq)"
    elif ! ls "$SRCDIR"/sql/migrations/[0-9]*.sql >/dev/null 2>&1; then
        echo "no sql/migrations to apply"
    fi
}

_pg_ctl() {
    (cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$PG/data" "$@") \
        >>"$D/pg_ctl.log" 2>&1
}

_db_down() { # [MODE] (fast by default)
    _pg_ctl -m "${1:-fast}" -w -t 30 stop || _fail "pg_ctl stop"
}

_db_up() {
    _pg_ctl -l "$PG/server.log" -w -t 30 start || _fail "pg_ctl start"
}

_sql() {
    psql -X -q -At -v ON_ERROR_STOP=1 -c "$1"
}

# Rows of CLUSTER's jobs: "COUNT DISTINCT_JOBIDS JOBS_WITHOUT_NODE_ROW".
_rows() {
    _sql "SELECT count(*) || ' ' || count(DISTINCT j.jobid) || ' ' ||
                 count(*) FILTER (WHERE NOT EXISTS
                     (SELECT 1 FROM ceems.job_nodes n WHERE n.job_key = j.job_key))
            FROM ceems.jobs j JOIN ceems.clusters c USING (cluster_id)
           WHERE c.name = '$1'"
}

# Replay CONF's spool in the background and kill the database AFTER
# seconds into it; the replay's last line goes to OUT.  The database is
# up again on return.
_replay_killed() { # CONF AFTER OUT [BATCH MAX]
    local conf=$1 after=$2 out=$3
    shift 3
    "$DRIVER" replay "$conf" all "$@" >"$out" 2>&1 &
    sleep "$after"
    _db_down immediate
    wait $! || true
    _db_up
}

_records() { # SPOOL: number of records waiting in it
    find "$1" -maxdepth 1 -name '*.json' -type f | wc -l
}

# A configuration for CLUSTER with its own spool; WITH_DB yes or no.
_conf() { # NAME CLUSTER WITH_DB [TIMEOUT]
    local f=$D/$1.conf
    {
        echo "cluster = $2"
        echo "spool_dir = $D/spool-$2"
        echo "spool_max_bytes = 64M"
        if [ "$3" = yes ]; then
            echo "database = host=$SOCK port=$PGPORT dbname=ceems user=ceems_node application_name=storage.bats"
            echo "database_timeout = ${4:-2s}"
        fi
    } >"$f"
    echo "$f"
}

setup_file() {
    [ -z "$(_skip_reason)" ] || return 0
    local d pg f sock
    d=$(mktemp -d /tmp/ceems-storage-test.XXXXXX)
    echo "$d" >"$BATS_FILE_TMPDIR/dir"
    pg=$(pg_harness_mktemp) || return 1
    echo "$pg" >"$BATS_FILE_TMPDIR/pg"
    pg_harness_start "$pg" || return 1
    # The node agent runs as root without capabilities: it cannot enter
    # the harness's 0700 postgres socket directory.  A second socket in a
    # directory of group root (0750) lets uid/gid 0 in, and nobody else.
    sock=$(mktemp -d /tmp/ceems-storage-sock.XXXXXX)
    echo "$sock" >"$BATS_FILE_TMPDIR/sock"
    chown postgres:root "$sock" && chmod 0750 "$sock" || return 1
    psql -X -q -v ON_ERROR_STOP=1 \
        -c "ALTER SYSTEM SET unix_socket_directories = '$pg', '$sock'" \
        -c "ALTER SYSTEM SET unix_socket_permissions = '0777'" || return 1
    (cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$pg/data" \
        -l "$pg/server.log" -w -t 30 restart) >/dev/null || return 1
    pg_harness_apply_schema "$SRCDIR" || return 1
    # Nodes write as a login role that holds ceems_writer and nothing else.
    psql -X -q -v ON_ERROR_STOP=1 -c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' ||
        return 1
}

teardown_file() {
    local d pg
    pg=$(cat "$BATS_FILE_TMPDIR/pg" 2>/dev/null) || pg=
    d=$(cat "$BATS_FILE_TMPDIR/dir" 2>/dev/null) || d=
    [ -z "$pg" ] || pg_harness_stop "$pg"
    rm -rf "$(cat "$BATS_FILE_TMPDIR/sock" 2>/dev/null)"
    if [ -n "$d" ]; then
        [ ! -f "$d/agent.pid" ] || kill "$(cat "$d/agent.pid")" 2>/dev/null || true
        [ ! -f "$d/agent-pw.pid" ] || kill "$(cat "$d/agent-pw.pid")" 2>/dev/null || true
        [ ! -f "$d/locker.pid" ] || kill "$(cat "$d/locker.pid")" 2>/dev/null || true
        mountpoint -q "$d/full" && umount "$d/full"
        rm -rf "$d"
    fi
}

setup() {
    local why
    why=$(_skip_reason)
    [ -z "$why" ] || skip "$why"
    D=$(cat "$BATS_FILE_TMPDIR/dir")
    PG=$(cat "$BATS_FILE_TMPDIR/pg")
    SOCK=$(cat "$BATS_FILE_TMPDIR/sock")
    export PGHOST=$PG PGPORT=$CEEMS_TEST_PGPORT PGDATABASE=ceems PGUSER=postgres
    DRIVER=$CEEMS_TOP_BUILDDIR/tests/integration/storage-driver
    AGENT=$CEEMS_TOP_BUILDDIR/tools/ceems-agent
    # A test that failed with the database down leaves it down.
    "$CEEMS_TEST_PGBIN/pg_isready" -q -h "$PG" -p "$PGPORT" -t 1 || _db_up
}

@test "stored directly when the database is up; invalid and refused records kept in rejected/" {
    local conf
    conf=$(_conf direct t-direct yes)
    run "$DRIVER" store "$conf" 5 1
    [ "$status" -eq 0 ] || _fail "$output"
    [[ "$output" == *"database=5 spool=0 rejected=0 failed=0"* ]] || _fail "$output"
    [ "$(_rows t-direct)" = "5 5 0" ] || _fail "rows: $(_rows t-direct)"
    [ "$(_records "$D/spool-t-direct")" -eq 0 ] || _fail "records spooled"

    run "$DRIVER" store "$conf" 2 100 bad
    [[ "$output" == *"database=0 spool=0 rejected=2 failed=0"* ]] || _fail "$output"
    run "$DRIVER" store "$conf" 1 200 refused
    [[ "$output" == *"database=0 spool=0 rejected=1 failed=0"* ]] || _fail "$output"
    [[ "$output" == *"refused by the database: 23514"* ]] || _fail "no reason: $output"
    [ "$(_rows t-direct)" = "5 5 0" ] || _fail "a refused record reached the tables: $(_rows t-direct)"
    [ "$(find "$D/spool-t-direct/rejected" -name '*.json' | wc -l)" -eq 3 ] || _fail "rejected/ holds $(ls "$D/spool-t-direct/rejected")"
    grep -q 'violates check constraint' "$D"/spool-t-direct/rejected/*-200-*.json.why ||
        _fail ".why: $(cat "$D"/spool-t-direct/rejected/*-200-*.why)"
    grep -q 'times are out of order' "$D"/spool-t-direct/rejected/*-100-*.json.why
}

@test "database stopped: 100 records spooled, then the node agent stores all 100 exactly once" {
    local conf i out
    conf=$(_conf down t-down yes 1s)
    _db_down
    run "$DRIVER" store "$conf" 100 1000
    [ "$status" -eq 0 ] || _fail "$output"
    [[ "$output" == *"database=0 spool=100 rejected=0 failed=0"* ]] || _fail "$output"
    [ "$(_records "$D/spool-t-down")" -eq 100 ] || _fail "$(_records "$D/spool-t-down") records spooled"

    # The agent starts while the database is still down: its first
    # replay fails and backs off (5 s); then the database comes back.
    cp -r "$CEEMS_FIXTURES/sys/rapl-intel" "$D/sys"
    cat "$conf" - >"$D/agent.conf" <<EOF
interval = 100ms
socket = $D/run/agent.sock
state_dir = $D/state
sysfs_root = $D/sys
procfs_root = /proc
source_hwmon = no
source_pm_counters = no
zone = FR
emissions_table = $SRCDIR/lib/data/carbon-intensity.tsv
EOF
    ( sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$D/agent.pid" \
        "$AGENT" -c "$D/agent.conf" 2>>"$D/agent.log" >/dev/null ) 3>&- &
    for i in $(seq 100); do
        grep -q 'next try in 5 s' "$D/agent.log" 2>/dev/null && break
        sleep 0.1
    done
    grep -q 'next try in 5 s' "$D/agent.log" || _fail "no failed replay: $(cat "$D/agent.log")"
    _db_up
    for i in $(seq 300); do
        [ "$(_records "$D/spool-t-down")" -eq 0 ] && break
        # The agent keeps answering while it replays.
        if [ $((i % 20)) -eq 0 ]; then
            out=$("$AGENT" --socket "$D/run/agent.sock" --timeout 2000 --status) ||
                _fail "the agent did not answer during the replay"
        fi
        sleep 0.1
    done
    kill "$(cat "$D/agent.pid")"
    [ "$(_records "$D/spool-t-down")" -eq 0 ] || _fail "$(_records "$D/spool-t-down") records left: $(cat "$D/agent.log")"
    [ "$(_rows t-down)" = "100 100 0" ] || _fail "rows: $(_rows t-down)"
    grep -q 'records stored in the database' "$D/agent.log" || _fail "$(cat "$D/agent.log")"
    # A replay of the same records changes nothing.
    [ "$(_sql "SELECT count(*) FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
               JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-down'")" = 100 ]
}

@test "a password role reached through a service file and root's ~/.pgpass: the confined agent stores the spool" {
    local conf i agent replay home=$D/home-pw
    # The role needs its password (scram), which only ~/.pgpass holds;
    # host, port, database and user come from ~/.pg_service.conf.  The
    # agent is confined (Landlock): of $D only these files are named.
    grep -q '^local ceems ceems_pw ' "$PG/data/pg_hba.conf" || {
        sed -i '1i local ceems ceems_pw scram-sha-256' "$PG/data/pg_hba.conf"
        _sql "SELECT pg_reload_conf()" >/dev/null
    }
    _sql "DROP ROLE IF EXISTS ceems_pw" >/dev/null
    _sql "CREATE ROLE ceems_pw LOGIN PASSWORD 'pw-of-the-test' IN ROLE ceems_writer" >/dev/null
    mkdir -p "$home" && chmod 0700 "$home"
    printf '[ceemspw]\nhost=%s\nport=%s\ndbname=ceems\nuser=ceems_pw\n' \
        "$SOCK" "$PGPORT" >"$home/.pg_service.conf"
    printf '*:*:ceems:ceems_pw:pw-of-the-test\n' >"$home/.pgpass"
    chmod 0600 "$home/.pgpass"
    # Without the password file the role is refused.
    run env -i PATH="$PATH" HOME=/nonexistent psql -X -At -h "$SOCK" -p "$PGPORT" \
        -U ceems_pw -d ceems -w -c 'SELECT 1'
    [ "$status" -ne 0 ] || _fail "ceems_pw logged in without a password"

    conf=$(_conf pw t-pw no)
    run "$DRIVER" store "$conf" 3 1
    [[ "$output" == *"database=0 spool=3 rejected=0 failed=0"* ]] || _fail "$output"
    cp -r "$CEEMS_FIXTURES/sys/rapl-intel" "$D/sys-pw"
    cat "$conf" - >"$D/agent-pw.conf" <<EOF
database = service=ceemspw application_name=storage.bats
database_timeout = 2s
interval = 100ms
socket = $D/run-pw/agent.sock
state_dir = $D/state-pw
sysfs_root = $D/sys-pw
procfs_root = /proc
source_hwmon = no
source_pm_counters = no
zone = FR
emissions_table = $SRCDIR/lib/data/carbon-intensity.tsv
EOF
    run env -i PATH="$PATH" HOME="$home" "$AGENT" -c "$D/agent-pw.conf" --check-privileges
    [[ "$output" == *"ok: file system confined"* ]] || skip "no Landlock on this kernel: $output"
    [ "$status" -eq 0 ] || _fail "$output"
    [[ "$output" == *"ok: can read $home/.pgpass (database credentials)"* ]] || _fail "$output"
    [[ "$output" == *"ok: can read $home/.pg_service.conf (database credentials)"* ]] || _fail "$output"
    grep -q '^ok: can read .*/libpq\.so[^ ]* (libpq, for the replay process)$' <<<"$output" ||
        _fail "libpq not checked readable: $output"

    ( env -i PATH="$PATH" HOME="$home" sh -c 'echo $$ >"$1"; shift; exec "$@"' sh \
        "$D/agent-pw.pid" "$AGENT" -c "$D/agent-pw.conf" 2>>"$D/agent-pw.log" >/dev/null ) 3>&- &
    for i in $(seq 100); do
        [ "$(_records "$D/spool-t-pw")" -eq 0 ] && break
        sleep 0.1
    done
    # Its replay process loaded libpq (once confined) and stored the
    # records; the agent itself maps none of libpq.
    agent=$(cat "$D/agent-pw.pid")
    replay=$(pgrep -P "$agent" | head -n 1)
    [ -n "$replay" ] && grep -q '/libpq\.so' "/proc/$replay/maps" ||
        _fail "no replay process with libpq mapped under the agent $agent"
    ! grep -q '/libpq\.so' "/proc/$agent/maps" || _fail "the agent itself maps libpq"
    kill "$agent"
    grep -q 'file system confined' "$D/agent-pw.log" || _fail "not confined: $(cat "$D/agent-pw.log")"
    [ "$(_records "$D/spool-t-pw")" -eq 0 ] || _fail "$(_records "$D/spool-t-pw") records left: $(cat "$D/agent-pw.log")"
    [ "$(_rows t-pw)" = "3 3 0" ] || _fail "rows: $(_rows t-pw)"
}

# Hold an exclusive lock on job_nodes from another session, so that the
# upsert blocks inside its transaction after writing its jobs row.
_lock_job_nodes() {
    psql -X -q -c 'BEGIN' -c 'LOCK TABLE ceems.job_nodes IN ACCESS EXCLUSIVE MODE' \
        -c 'SELECT pg_sleep(60)' >/dev/null 2>&1 &
    echo $! >"$D/locker.pid"
    for _ in $(seq 50); do
        [ "$(_sql "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
                   WHERE c.relname = 'job_nodes' AND l.mode = 'AccessExclusiveLock' AND l.granted")" -ge 1 ] &&
            return 0
        sleep 0.1
    done
    _fail "the lock was not taken"
}

_unlock_job_nodes() {
    kill "$(cat "$D/locker.pid")" 2>/dev/null || true
    _sql "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
           WHERE query LIKE '%pg_sleep(60)%' AND pid <> pg_backend_pid()" >/dev/null || true
    rm -f "$D/locker.pid"
}

@test "a statement stuck on a lock times out: spooled, nothing half-written, stored later" {
    local conf start took
    conf=$(_conf lock t-lock yes 1s)
    _lock_job_nodes
    start=$(date +%s%N)
    run "$DRIVER" store "$conf" 1 1
    took=$(( ($(date +%s%N) - start) / 1000000 ))
    _unlock_job_nodes
    [[ "$output" == *"database=0 spool=1 rejected=0 failed=0"* ]] || _fail "$output"
    [[ "$output" == *"57014"* ]] || _fail "not a statement timeout: $output"
    [ "$took" -lt 1900 ] || _fail "the store took $took ms with a 1 s database_timeout"
    [ "$(_rows t-lock)" = "0 0 0" ] || _fail "half-written: $(_rows t-lock)"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=1 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-lock)" = "1 1 0" ] || _fail "rows: $(_rows t-lock)"
}

@test "the database killed in the middle of a transaction: nothing half-written, stored later" {
    local conf
    conf=$(_conf kill t-kill yes 20s)
    _lock_job_nodes
    "$DRIVER" store "$conf" 1 1 >"$D/kill.out" 2>&1 &
    # Wait until the upsert waits for the lock, inside its transaction.
    for _ in $(seq 50); do
        [ "$(_sql "SELECT count(*) FROM pg_stat_activity
                   WHERE application_name = 'storage.bats' AND wait_event_type = 'Lock'")" -ge 1 ] && break
        sleep 0.1
    done
    _db_down immediate
    wait $! || true
    rm -f "$D/locker.pid"
    grep -q 'database=0 spool=1 rejected=0 failed=0' "$D/kill.out" || _fail "$(cat "$D/kill.out")"
    _db_up
    [ "$(_rows t-kill)" = "0 0 0" ] || _fail "half-written: $(_rows t-kill)"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=1 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-kill)" = "1 1 0" ] || _fail "rows: $(_rows t-kill)"
}

@test "the database killed during a replay of 300 records: each stored exactly once in the end" {
    local spool_conf conf n rows
    spool_conf=$(_conf killreplay-spool t-kr no)
    conf=$(_conf killreplay t-kr yes 1s)
    run "$DRIVER" store "$spool_conf" 300 1
    [[ "$output" == *"spool=300"* ]] || _fail "$output"
    _replay_killed "$conf" 0.3 "$D/kr.out"
    n=$(_records "$D/spool-t-kr")
    rows=$(_rows t-kr)
    echo "# killed after ${rows%% *} records committed, $n left spooled: $(tail -n 1 "$D/kr.out")" >&3
    # Every job is in the database or still spooled (or both: committed
    # before the kill, not yet removed), none half-written.
    [ $(( ${rows%% *} + n )) -ge 300 ] || _fail "lost: rows $rows, spooled $n"
    [ "${rows##* }" = 0 ] || _fail "half-written: $rows"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-kr)" = "300 300 0" ] || _fail "rows: $(_rows t-kr)"
}

@test "a backlog over many runs: each run's last batch is stored while the next reads; each record once" {
    local spool_conf conf n rows
    spool_conf=$(_conf manyruns-spool t-mr no)
    conf=$(_conf manyruns t-mr yes 2s)
    run "$DRIVER" store "$spool_conf" 250 1
    [[ "$output" == *"spool=250"* ]] || _fail "$output"
    # 20 a statement, 50 a run: six runs, each but the last ending with
    # a batch in flight that the next run's first batch waits for.
    run "$DRIVER" replay "$conf" all 20 50
    [[ "$output" == *"stored=250 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    n=$(grep -c 'is stored while the next run reads' <<<"$output")
    [ "$n" -ge 4 ] || _fail "$n runs ended with a batch in flight: $output"
    [ "$(_records "$D/spool-t-mr")" -eq 0 ] || _fail "$(_records "$D/spool-t-mr") left in the spool"
    [ "$(_rows t-mr)" = "250 250 0" ] || _fail "rows: $(_rows t-mr)"

    # The database killed while batches cross runs: nothing lost, none
    # twice, once it is back.
    run "$DRIVER" store "$spool_conf" 400 1001
    [[ "$output" == *"spool=400"* ]] || _fail "$output"
    _replay_killed "$conf" 0.2 "$D/mr.out" 20 50
    rows=$(_rows t-mr)
    n=$(_records "$D/spool-t-mr")
    echo "# killed after $(( ${rows%% *} - 250 )) of 400 committed, $n left spooled: $(tail -n 1 "$D/mr.out")" >&3
    [ $(( ${rows%% *} - 250 + n )) -ge 400 ] || _fail "lost: rows $rows, spooled $n"
    run "$DRIVER" replay "$conf" all 20 50
    [[ "$output" == *"left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-mr)" = "650 650 0" ] || _fail "rows: $(_rows t-mr)"
}

@test "a full spool filesystem: no crash, every record spooled or logged whole, and recoverable" {
    local conf out logged tag n failed
    mkdir -p "$D/full"
    mount -t tmpfs -o size=64k,mode=0750 ceems-test-full "$D/full" || skip "cannot mount a tmpfs"
    conf=$D/full.conf
    printf 'cluster = t-full\nspool_dir = %s/full\nspool_max_bytes = 4K\n' "$D" >"$conf"
    run "$DRIVER" store "$conf" 40 1
    [ "$status" -eq 0 ] || _fail "driver status $status: $output"
    out=$(echo "$output" | grep -o 'database=.*')
    [[ "$out" =~ database=0\ spool=([0-9]+)\ rejected=0\ failed=([0-9]+) ]] || _fail "$output"
    echo "# $out" >&3
    [ $(( BASH_REMATCH[1] + BASH_REMATCH[2] )) -eq 40 ] || _fail "$out"
    [ "${BASH_REMATCH[2]}" -gt 0 ] || _fail "the tmpfs never filled: $out"
    n=${BASH_REMATCH[1]}
    failed=${BASH_REMATCH[2]}
    [ "$(_records "$D/full")" -eq "$n" ] || _fail "$(_records "$D/full") files for $n spooled"
    [ -z "$(find "$D/full" -name '.tmp.*')" ] || _fail "temporary files left: $(ls -A "$D/full")"
    # past the soft cap: an error per record, written anyway
    [[ "$output" == *"over its spool_max_bytes of 4096"*"written anyway"* ]] || _fail "no cap error"
    # each failed record logged whole
    [[ "$output" == *"No space left on device"* ]] || _fail "no ENOSPC: $output"
    logged=$(echo "$output" | grep -c 'could not be written anywhere')
    [ "$logged" -eq "$failed" ] || _fail "$logged records logged for $failed failed"

    # An admin recovers one from the log: its pieces, concatenated, are
    # a record the replay stores.
    tag=$(echo "$output" | grep -m 1 -o 'ceems-record [^ ]*: the record' | cut -d' ' -f2 | tr -d :)
    mkdir -p "$D/spool-t-recovered"
    echo "$output" | grep "ceems-record $tag part " | sed 's/^.*ceems-record [^ ]* part [0-9]*\/[0-9]*: //' |
        tr -d '\n' >"$D/spool-t-recovered/$tag"
    jq -e '.job.cluster == "t-full"' "$D/spool-t-recovered/$tag" >/dev/null || _fail "not JSON: $(cat "$D/spool-t-recovered/$tag")"
    conf=$(_conf recovered t-recovered yes)
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=1 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-full)" = "1 1 0" ] || _fail "rows: $(_rows t-full)"
    umount "$D/full"
}

@test "a corrupted spool file is set aside while the rest replay" {
    local spool_conf conf victim
    spool_conf=$(_conf corrupt-spool t-corrupt no)
    conf=$(_conf corrupt t-corrupt yes)
    run "$DRIVER" store "$spool_conf" 10 1
    [[ "$output" == *"spool=10"* ]] || _fail "$output"
    victim=$(find "$D/spool-t-corrupt" -maxdepth 1 -name '*-5-*.json')
    truncate -s 100 "$victim"
    printf '\0\0\0garbage' >"$D/spool-t-corrupt/000000000001-x-1-1-y.json"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=9 set_aside=2 left=0 error=0"* ]] || _fail "$output"
    [ "$(_rows t-corrupt)" = "9 9 0" ] || _fail "rows: $(_rows t-corrupt)"
    [ -f "$D/spool-t-corrupt/rejected/${victim##*/}" ] || _fail "not in rejected/"
    grep -q 'corrupted' "$D/spool-t-corrupt/rejected/${victim##*/}.why" ||
        _fail ".why: $(cat "$D/spool-t-corrupt/rejected/${victim##*/}.why")"
    [ "$(_records "$D/spool-t-corrupt")" -eq 0 ]
}

@test "a record the database refuses in a batch is set aside; the rest of the batch is stored" {
    local spool_conf conf bad
    spool_conf=$(_conf batch-spool t-batch no)
    conf=$(_conf batch t-batch yes)
    # 150 records in one batch (the replay sends up to 500 a statement),
    # one of them valid for libceems but refused by the database.
    run "$DRIVER" store "$spool_conf" 100 1
    [[ "$output" == *"spool=100"* ]] || _fail "$output"
    run "$DRIVER" store "$spool_conf" 1 101 refused
    [[ "$output" == *"spool=1"* ]] || _fail "$output"
    run "$DRIVER" store "$spool_conf" 49 102
    [[ "$output" == *"spool=49"* ]] || _fail "$output"
    bad=$(find "$D/spool-t-batch" -maxdepth 1 -name '*-101-*.json')
    [ -n "$bad" ] || _fail "the refused record is not spooled"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=149 set_aside=1 left=0 error=0"* ]] || _fail "$output"
    echo "$output" | grep -q "a batch of 150 records was refused" || _fail "no batch refusal: $output"
    [ "$(_rows t-batch)" = "149 149 0" ] || _fail "rows: $(_rows t-batch)"
    [ -f "$D/spool-t-batch/rejected/${bad##*/}" ] || _fail "not in rejected/"
    grep -q 'refused by the database' "$D/spool-t-batch/rejected/${bad##*/}.why" ||
        _fail ".why: $(cat "$D/spool-t-batch/rejected/${bad##*/}.why")"
    # Replayed again (say the removals were lost): nothing changes.
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=0 set_aside=0 left=0 error=0"* ]] || _fail "$output"

    # 450 records, 200 a statement, the refused one in the second
    # batch: the replay reads the next batch while the database stores
    # the one sent; the refusal is found while the third is read.
    spool_conf=$(_conf batch2-spool t-batch2 no)
    conf=$(_conf batch2 t-batch2 yes)
    run "$DRIVER" store "$spool_conf" 300 1
    [[ "$output" == *"spool=300"* ]] || _fail "$output"
    run "$DRIVER" store "$spool_conf" 1 301 refused
    run "$DRIVER" store "$spool_conf" 149 302
    [[ "$output" == *"spool=149"* ]] || _fail "$output"
    run "$DRIVER" replay "$conf" all 200
    [[ "$output" == *"stored=449 set_aside=1 left=0 error=0"* ]] || _fail "$output"
    echo "$output" | grep -q "a batch of 200 records was refused" || _fail "no refusal of the second batch: $output"
    [ "$(_rows t-batch2)" = "449 449 0" ] || _fail "rows: $(_rows t-batch2)"
    [ -z "$(find "$D/spool-t-batch2" -maxdepth 1 -name '*.json')" ] || _fail "records left in the spool"
}

# "ROWS CPU_S PACKAGE_J DRAM_NULLS JOBS" of CLUSTER's samples.
_samples() {
    _sql "SELECT count(*) || ' ' || coalesce(sum(s.cpu_s), 0) || ' ' ||
                 coalesce(round(sum(s.package_j)::numeric, 6), 0) || ' ' ||
                 count(*) FILTER (WHERE s.dram_j IS NULL) || ' ' ||
                 count(DISTINCT s.job_key)
            FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
            JOIN ceems.clusters c USING (cluster_id) WHERE c.name = '$1'"
}

# Every sample row with its tuple version: equal when nothing was touched.
_samples_snapshot() {
    _sql "SELECT string_agg(s.xmin::text || ':' || s.job_key || ':' || extract(epoch FROM s.t), ',' ORDER BY s.job_key, s.t)
            FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
            JOIN ceems.clusters c USING (cluster_id) WHERE c.name = '$1'"
}

@test "a record's time series lands in job_samples with the record; replays change nothing" {
    local conf spool_conf snap want_j
    conf=$(_conf series t-series yes)
    # Directly: 3 jobs (ids 1..3) of 20 rows each, 60 s of CPU a row and
    # the job's package energy (1000 + id J) spread over its rows.
    run "$DRIVER" store "$conf" 3 1 series
    [ "$status" -eq 0 ] || _fail "$output"
    [[ "$output" == *"database=3 spool=0 rejected=0 failed=0"* ]] || _fail "$output"
    want_j=$(_sql "SELECT round(sum(package_j)::numeric, 6) FROM ceems.jobs j
                   JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-series'")
    [ "$want_j" = "3006.000000" ] || _fail "jobs' package energy: $want_j"
    [ "$(_samples t-series)" = "60 3600 $want_j 60 3" ] || _fail "samples: $(_samples t-series)"
    # The IO and perf columns (022): what the rows counted; the network,
    # not counted, NULL in every row, never 0.
    [ "$(_sql "SELECT sum(read_bytes), count(read_bytes), sum(page_faults), count(net_in_bytes)
               FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
               JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-series'")" = "570000|60|600|0" ] ||
        _fail "counts: $(_sql "SELECT sum(read_bytes), count(read_bytes), sum(page_faults), count(net_in_bytes) FROM ceems.job_samples")"
    [ "$(_sql "SELECT DISTINCT resolution_s FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
                JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-series'")" = 30 ] ||
        _fail "resolution"

    # Through the spool and the batched replay, two more jobs; replayed
    # twice (as if the first replay's removals were lost): the second
    # changes nothing.
    spool_conf=$(_conf series-spool t-series no)
    run "$DRIVER" store "$spool_conf" 2 11 series
    [[ "$output" == *"spool=2"* ]] || _fail "$output"
    cp "$D"/spool-t-series/*.json "$D/"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=2 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    want_j=$(_sql "SELECT round(sum(package_j)::numeric, 6) FROM ceems.jobs j
                   JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-series'")
    [ "$want_j" = "5029.000000" ] || _fail "jobs' package energy: $want_j"
    [ "$(_samples t-series)" = "100 6000 $want_j 100 5" ] || _fail "samples after replay: $(_samples t-series)"
    snap=$(_samples_snapshot t-series)
    mv "$D"/*.json "$D/spool-t-series/"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=2 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_samples_snapshot t-series)" = "$snap" ] || _fail "samples rewritten by a replay"
}

# "T:GPU_UTIL_PCT ..." of ceems-sacct --series JOBID with configuration
# CONF (empty where unknown).
_sacct_series_util() { # CONF JOBID
    TZ=UTC "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$1" --series "$2" |
        awk -F, 'NR == 1 { if ($11 != "gpu_util_pct") exit 1; next }
                 { printf "%s:%s ", $3, $11 }'
}

@test "a record's series lands with its GPU utilisation; a spooled record of the older form replays" {
    local conf spool_conf sacct_conf files old new want got f
    conf=$(_conf gpuutil t-gpuutil yes)
    spool_conf=$(_conf gpuutil-spool t-gpuutil no)
    run "$DRIVER" store "$spool_conf" 2 21 series
    [[ "$output" == *"spool=2"* ]] || _fail "$output"
    mapfile -t files < <(find "$D/spool-t-gpuutil" -maxdepth 1 -name '*.json' | sort)
    [ "${#files[@]}" = 2 ] || _fail "spooled: ${files[*]}"
    new=${files[0]} old=${files[1]}
    jq -e '.series.columns[8] == "gpu_util_pct"' "$new" >/dev/null || _fail "no gpu_util_pct column: $(cat "$new")"
    # The second as an agent wrote it before gpu_util_pct: 8 columns.
    jq -c '.series.columns |= .[0:8] | .series.rows |= map(.[0:8])' "$old" >"$D/old.json"
    cp "$D/old.json" "$old"
    cp "$new" "$D/new.json"
    new=$D/new.json old=$D/old.json	# the replay takes the spooled ones
    # ceems-sacct --series from the spool: the column as each record has it.
    want=$(jq -r '[.series.rows[] | "\(.[0]):\(.[8] // "")"] | join(" ") + " "' "$new")
    got=$(_sacct_series_util "$spool_conf" "$(jq .job.jobid "$new")") || _fail "sacct --series failed"
    [ "$got" = "$want" ] || _fail "sacct --series from the spool: $got, want $want"
    want=$(jq -r '[.series.rows[] | "\(.[0]):"] | join(" ") + " "' "$old")
    got=$(_sacct_series_util "$spool_conf" "$(jq .job.jobid "$old")") || _fail "sacct --series failed"
    [ "$got" = "$want" ] || _fail "sacct --series of the older form: $got, want $want"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=2 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    # Today's form: every utilisation as the record has it.
    want=$(jq -r '[.series.rows[] | select(.[8] != null) | .[8]] | "\(length) \(add)"' "$new")
    got=$(_sql "SELECT count(s.gpu_util_pct) || ' ' || sum(s.gpu_util_pct)
                FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
                JOIN ceems.clusters c USING (cluster_id)
                WHERE c.name = 't-gpuutil' AND j.jobid = $(jq .job.jobid "$new")")
    [ "$got" = "$want" ] || _fail "utilisations stored: $got, want $want"
    [ "${want%% *}" -gt 0 ] || _fail "the record had no utilisation to store"
    # The older form: its rows all stored, the utilisation unknown.
    want=$(jq -r '.series.rows | length' "$old")
    got=$(_sql "SELECT count(*) || ' ' || count(s.gpu_util_pct) || ' ' || count(s.package_j)
                FROM ceems.job_samples s JOIN ceems.jobs j USING (job_key)
                JOIN ceems.clusters c USING (cluster_id)
                WHERE c.name = 't-gpuutil' AND j.jobid = $(jq .job.jobid "$old")")
    [ "$got" = "$want 0 $want" ] || _fail "older form stored as: $got (want $want rows)"

    # ceems-sacct --series from the database, at the schema these
    # migrations make.
    for f in "$SRCDIR"/sql/migrations/[0-9]*.sql; do
        f=$(basename "$f" .sql)
        _sql "INSERT INTO ceems.schema_version (version, name, checksum)
              VALUES (${f%%_*} + 0, '${f#*_}', 'storage.bats') ON CONFLICT DO NOTHING" ||
            _fail "schema_version"
    done
    sacct_conf=$D/gpuutil-sacct.conf
    printf 'cluster = t-gpuutil\nspool_dir = %s\nsacct_database = host=%s port=%s dbname=ceems user=postgres\n' \
        "$D/spool-t-gpuutil" "$PGHOST" "$PGPORT" >"$sacct_conf"
    want=$(jq -r '[.series.rows[] | "\(.[0]):\(.[8] // "")"] | join(" ") + " "' "$new")
    got=$(_sacct_series_util "$sacct_conf" "$(jq .job.jobid "$new")") || _fail "sacct --series failed"
    [ "$got" = "$want" ] || _fail "sacct --series from the database: $got, want $want"
}

# "CONTEXT_SWITCHES PAGE_FAULTS TASK_CLOCK_S MIGRATIONS_NULL HW_STATUS
# CYCLES_NULL" of the perf view, over CLUSTER's jobs.
_perf() { # CLUSTER
    _sql "SELECT coalesce(sum(p.context_switches), -1) || ' ' ||
                 coalesce(sum(p.page_faults), -1) || ' ' ||
                 coalesce(sum(p.task_clock_s), -1) || ' ' ||
                 bool_and(p.cpu_migrations IS NULL) || ' ' ||
                 string_agg(DISTINCT p.hardware_status, ',') || ' ' ||
                 bool_and(p.cycles IS NULL AND p.ipc IS NULL) || ' ' || count(*)
          FROM ceems.job_perf p JOIN ceems.jobs j USING (job_key)
          JOIN ceems.clusters c USING (cluster_id) WHERE c.name = '$1'"
}

@test "a record's perf counters land in job_node_perf with the record; unknown stays NULL; replays change nothing" {
    local conf spool_conf snap
    conf=$(_conf perf t-perf yes)
    run "$DRIVER" store "$conf" 3 1 perf
    [ "$status" -eq 0 ] || _fail "$output"
    [[ "$output" == *"database=3 spool=0 rejected=0 failed=0"* ]] || _fail "$output"
    # Jobs 1..3: context switches 1000 + id, page faults 2000 + id, 1 s.
    [ "$(_perf t-perf)" = "3006 6006 3 true not supported true 3" ] || _fail "perf: $(_perf t-perf)"
    # The time no agent counted (022): jobs 1 and 3 ran across a restart.
    [ "$(_sql "SELECT count(*) FILTER (WHERE p.unmeasured_s = 2.5), count(*) FILTER (WHERE p.unmeasured_s IS NULL)
               FROM ceems.job_node_perf p JOIN ceems.jobs j USING (job_key)
               JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-perf'")" = "2|1" ] ||
        _fail "unmeasured_s: $(_sql "SELECT string_agg(p.unmeasured_s::text, ',') FROM ceems.job_node_perf p")"

    # Through the spool and the batched replay (jobs 11, 12), replayed
    # twice: the second changes nothing.
    spool_conf=$(_conf perf-spool t-perf no)
    run "$DRIVER" store "$spool_conf" 2 11 perf
    [[ "$output" == *"spool=2"* ]] || _fail "$output"
    mkdir -p "$D/perf-copy" && cp "$D"/spool-t-perf/*.json "$D/perf-copy/"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=2 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_perf t-perf)" = "5029 10029 5 true not supported true 5" ] || _fail "perf after replay: $(_perf t-perf)"
    snap=$(_sql "SELECT string_agg(p::text, ';' ORDER BY job_key) FROM ceems.job_node_perf p")
    mv "$D"/perf-copy/*.json "$D/spool-t-perf/"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=2 set_aside=0 left=0 error=0"* ]] || _fail "$output"
    [ "$(_sql "SELECT string_agg(p::text, ';' ORDER BY job_key) FROM ceems.job_node_perf p")" = "$snap" ] ||
        _fail "perf rows rewritten by a replay"
    # A job without perf figures has no row: unknown, not zero.
    run "$DRIVER" store "$conf" 1 21
    [ "$(_sql "SELECT count(*) FROM ceems.job_node_perf p JOIN ceems.jobs j USING (job_key)
               JOIN ceems.clusters c USING (cluster_id) WHERE c.name = 't-perf' AND j.jobid = 21")" = 0 ] ||
        _fail "a row for a job without perf figures"
}

# ceems-sacct as USER, with the user's own libpq environment (not the
# harness's PGUSER): the setgid copy unless SACCT_BIN says otherwise.
# Its stderr goes to $FB/stderr.
_sacct_as() { # USER ARGS...
    local user=$1
    shift
    runuser -u "$user" -- env -u PGHOST -u PGPORT -u PGDATABASE -u PGUSER TZ=UTC \
        "${SACCT_BIN:-$FB/bin/ceems-sacct}" "$@" 2>"$FB/stderr"
}

@test "database down: the job's user lists their spooled jobs (one warning, the figures the database gives later); no one else does" {
    local FB=$D/fallback conf g f fields out_down saved
    fields=JobID,JobName,User,State,Elapsed,AllocCPUS,TotalCPU,CPUEff,MemEff,EnergyCPU,EnergyDRAM,Energy,Quality,CtxSw,PageFaults,CPUMigr,IPC
    # Installed as doc/install.md says: the spool root's and a group's
    # (here one without a name), ceems-sacct setgid to that group.
    g=64700
    while getent group "$g" >/dev/null; do g=$((g + 1)); done
    mkdir -p "$FB/bin" && chmod 0711 "$D" && chmod 0755 "$FB" "$FB/bin" || _fail "mkdir"
    install -d -o root -g "$g" -m 2750 "$FB/spool" || _fail "spool"
    install -o root -g "$g" -m 2755 "$CEEMS_TOP_BUILDDIR/tests/integration/ceems-sacct-setgid" \
        "$FB/bin/ceems-sacct" || _fail "install"
    # The configuration it reads without -c (the nodes' and the readers').
    conf=$CEEMS_TOP_BUILDDIR/tests/integration/sacct-setgid.conf
    {
        echo "cluster = t-fallback"
        echo "spool_dir = $FB/spool"
        echo "database = host=$SOCK port=$PGPORT dbname=ceems user=ceems_node"
        echo "database_timeout = 1s"
        echo "sacct_database = host=$SOCK port=$PGPORT dbname=ceems"
    } >"$conf"
    chmod 0644 "$conf"
    # Readers connect as themselves.
    chmod 0755 "$SOCK"
    _sql "CREATE ROLE nobody LOGIN IN ROLE ceems_reader" &&
        _sql "CREATE ROLE daemon LOGIN IN ROLE ceems_reader" || _fail "roles"
    # ceems-sacct reads a schema whose version it knows: the migrations
    # this file applied, recorded as ceems-admin records them.
    for f in "$SRCDIR"/sql/migrations/[0-9]*.sql; do
        f=$(basename "$f" .sql)
        _sql "INSERT INTO ceems.schema_version (version, name, checksum)
              VALUES (${f%%_*} + 0, '${f#*_}', 'storage.bats') ON CONFLICT DO NOTHING" ||
            _fail "schema_version"
    done

    # Jobs end while the database is down: their records are spooled.
    _db_down
    STORAGE_DRIVER_USER=nobody:65534 run "$DRIVER" store "$conf" 3 501 perf
    [[ "$output" == *"database=0 spool=3 rejected=0 failed=0"* ]] || _fail "$output"
    STORAGE_DRIVER_USER=daemon:1 run "$DRIVER" store "$conf" 1 601
    [[ "$output" == *"database=0 spool=1 rejected=0 failed=0"* ]] || _fail "$output"
    # No one but root and the group reads them.
    for f in "$FB"/spool/*.json; do
        [ "$(stat -c '%a %u %g' "$f")" = "640 0 $g" ] || _fail "$f: $(stat -c '%a %u %g' "$f")"
    done

    # A file that does not decode (the replay sets it aside later).
    echo '{"truncated' >"$FB/spool/000000000001-t-fallback-999-1-node01.json"
    chmod 0640 "$FB/spool/000000000001-t-fallback-999-1-node01.json"

    # The job's user: their three jobs, one warning line (the file that
    # does not decode said in it), status 0.
    run _sacct_as nobody -S now-1hour -X -P -o "$fields"
    [ "$status" -eq 0 ] || _fail "status $status: $output $(cat "$FB/stderr")"
    out_down=$output
    [ "$(cut -d'|' -f1,3 <<<"$out_down" | tail -n +2 | tr '\n' ' ')" = "501|nobody 502|nobody 503|nobody " ] ||
        _fail "nobody saw: $out_down"
    [ "$(wc -l <"$FB/stderr")" -eq 1 ] || _fail "stderr: $(cat "$FB/stderr")"
    grep -q "^ceems-sacct: warning: cannot connect to the database: .*; listing this node's spool $FB/spool instead: .* (1 file of it could not be read)$" \
        "$FB/stderr" || _fail "stderr: $(cat "$FB/stderr")"
    # Unknown is empty: no DRAM energy or memory peak was measured.
    [ "$(awk -F'|' 'NR > 1 && ($9 != "" || $11 != "")' <<<"$out_down")" = "" ] ||
        _fail "unmeasured figures shown: $out_down"
    [ "$(awk -F'|' 'NR > 1 && $10 == ""' <<<"$out_down")" = "" ] || _fail "energy missing: $out_down"
    # perf: the records' counts (context switches 1000 + id, page faults
    # 2000 + id); no migration count and no cycles (IPC): empty, not 0.
    [ "$(cut -d'|' -f1,14-17 <<<"$out_down" | tail -n +2 | tr '\n' ' ')" = \
      "501|1501|2501|| 502|1502|2502|| 503|1503|2503|| " ] || _fail "perf: $out_down"
    # The filters apply: -j and -s.
    run _sacct_as nobody -S now-1hour -E now -j 502 -s CD -X -P -n -o JobID
    [ "$status" -eq 0 ] && [ "$output" = 502 ] || _fail "-j 502: $output"

    # Another user sees only their own job, and asking for the first
    # user's is refused or empty.
    run _sacct_as daemon -S now-1hour -X -P -n -o JobID,User
    [ "$status" -eq 0 ] && [ "$output" = "601|daemon" ] || _fail "daemon saw: $output"
    run _sacct_as daemon -S now-1hour -u nobody
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    grep -q "without the database you may see only your own jobs" "$FB/stderr" || _fail "$(cat "$FB/stderr")"
    run _sacct_as daemon --json -j 501
    [ "$status" -eq 0 ] && [ "$output" = "[]" ] || _fail "daemon read job 501: $output"
    # Without the group (the build's ceems-sacct, or -c) the spool stays
    # closed: one line, status 1.
    SACCT_BIN=$CEEMS_TOP_BUILDDIR/tools/ceems-sacct run _sacct_as nobody -c "$conf" -S now-1hour
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [ "$(wc -l <"$FB/stderr")" -eq 1 ] &&
        grep -q "; no fallback: cannot open the spool $FB/spool: Permission denied" "$FB/stderr" ||
        _fail "$(cat "$FB/stderr")"
    run _sacct_as nobody -c "$conf" -S now-1hour
    [ "$status" -eq 1 ] && grep -q "Permission denied" "$FB/stderr" || _fail "-c kept the group: $output"

    # The database is back, the records not replayed yet: its answer and
    # the spool's records together, without a warning.
    _db_up
    run _sacct_as nobody -S now-1hour -X -P -o "$fields"
    [ "$status" -eq 0 ] && [ "$output" = "$out_down" ] || _fail "merged: $output $(cat "$FB/stderr")"
    [ ! -s "$FB/stderr" ] || _fail "stderr: $(cat "$FB/stderr")"

    # Replayed: the database alone gives the same figures.
    saved=$(ls "$FB"/spool/*-501-*.json)
    cp "$saved" "$FB/saved.json"
    run "$DRIVER" replay "$conf" all
    [[ "$output" == *"stored=4 set_aside=1 left=0 error=0"* ]] || _fail "$output"
    [ "$(_records "$FB/spool")" -eq 0 ] || _fail "records left"
    run _sacct_as nobody -S now-1hour -X -P -o "$fields"
    [ "$status" -eq 0 ] && [ "$output" = "$out_down" ] ||
        _fail "database: $(diff <(echo "$out_down") <(echo "$output"))"
    [ ! -s "$FB/stderr" ] || _fail "stderr: $(cat "$FB/stderr")"

    # A record both stored and still in the spool (read between the
    # replay's store and its removal): listed once, the database's.
    jq -c '.job.name = "the spool copy"' "$FB/saved.json" >"$saved" || _fail "jq"
    run _sacct_as nobody -S now-1hour -X -P -o "$fields"
    [ "$status" -eq 0 ] && [ "$output" = "$out_down" ] ||
        _fail "duplicate: $(diff <(echo "$out_down") <(echo "$output"))"
    rm -f "$saved" "$conf"
    chmod 0750 "$SOCK"
}
