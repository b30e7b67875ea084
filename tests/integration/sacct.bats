#!/usr/bin/env bats
# tests/integration/sacct.bats -- ceems-sacct against a real PostgreSQL 15
# (tests/harness/pg.sh) and a spool read by an ordinary user; no Slurm.
#
# The golden dataset (tests/fixtures/sacct/spool) goes into the database
# the way nodes store records: `ceems-admin db init`, then the node
# agent's replay path (storage-driver replay, through libceems's writer)
# and ceems.add_job_samples for the time series.  Then every golden case
# of tests/unit/sacct-golden.sh runs against the database and must give
# the spool's output byte for byte; row-level security decides what
# alice, bob and a coordinator see; and an ordinary user reading a spool
# sees only their own records.
#
# Run as root:  CEEMS_TOP_BUILDDIR=$PWD/_build/me bats --tap tests/integration/sacct.bats
# Needs: postgresql-15, jq; a build with libpq.

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}
FIXTURES=${CEEMS_FIXTURES:-$SRCDIR/tests/fixtures}
W="-S 2025-03-01 -E 2025-04-01"

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

_skip_reason() {
    if [ "$(id -u)" != 0 ]; then
        echo "the PostgreSQL harness needs root"
    elif [ ! -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ]; then
        echo "no tools/ceems-admin in CEEMS_TOP_BUILDDIR (built without libpq?)"
    elif [ ! -x "$CEEMS_TOP_BUILDDIR/tests/integration/storage-driver" ]; then
        echo "no tests/integration/storage-driver (make check builds it)"
    elif ! command -v jq >/dev/null; then
        echo "jq not installed"
    fi
}

# A configuration reading the database as ROLE.
_conf() { # NAME ROLE
    local f=$D/$1.conf
    {
        echo "cluster = c1"
        echo "spool_dir = $D/empty-spool"
        echo "database = host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=$2"
    } >"$f"
    echo "$f"
}

setup_file() {
    [ -z "$(_skip_reason)" ] || return 0
    local d pg f n
    d=$(mktemp -d /tmp/ceems-sacct-test.XXXXXX)
    echo "$d" >"$BATS_FILE_TMPDIR/dir"
    pg=$(pg_harness_mktemp) || return 1
    echo "$pg" >"$BATS_FILE_TMPDIR/pg"
    pg_harness_start "$pg" || return 1
    "$CEEMS_TOP_BUILDDIR/tools/ceems-admin" --sql-dir "$SRCDIR/sql/migrations" \
        -d "host=$pg port=$CEEMS_TEST_PGPORT dbname=ceems user=postgres" db init >/dev/null ||
        return 1
    psql -X -q -v ON_ERROR_STOP=1 <<'EOF2' || return 1
CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer;
CREATE ROLE alice LOGIN IN ROLE ceems_reader;
CREATE ROLE bob LOGIN IN ROLE ceems_reader;
CREATE ROLE carol LOGIN IN ROLE ceems_reader;
CREATE ROLE dave LOGIN IN ROLE ceems_admin;
CREATE ROLE root LOGIN IN ROLE ceems_admin_reader;
INSERT INTO ceems.coordinators VALUES ('physics', 'carol');
EOF2
    # The records, through the writer's path: a spool replayed into the
    # database.  The "series" member is not part of the record the
    # writer stores: it goes through ceems.add_job_samples.
    mkdir -p "$d/spool" "$d/empty-spool"
    for f in "$FIXTURES"/sacct/spool/*.json; do
        jq -c 'del(.series)' "$f" >"$d/spool/$(basename "$f")" || return 1
    done
    {
        echo "cluster = c1"
        echo "spool_dir = $d/spool"
        echo "database = host=$pg port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node"
    } >"$d/writer.conf"
    "$CEEMS_TOP_BUILDDIR/tests/integration/storage-driver" replay "$d/writer.conf" all \
        >"$d/replay.out" 2>&1 || { cat "$d/replay.out" >&2; return 1; }
    n=$(ls "$d/spool"/*.json 2>/dev/null | wc -l)
    [ "$n" = 0 ] || { echo "$n records left in the spool: $(cat "$d/replay.out")" >&2; return 1; }
    for f in "$FIXTURES"/sacct/spool/*.json; do
        jq -e 'has("series")' "$f" >/dev/null || continue
        jq -c '{cluster: .job.cluster, jobid: .job.jobid, start_time: .job.start_time,
                node: .job.node, resolution_s: .series.resolution_s,
                samples: [.series.columns as $c | .series.rows[] |
                          [$c, .] | transpose | map({(.[0]): .[1]}) | add |
                          with_entries(select(.value != null))]}' "$f" >"$d/series.json" ||
            return 1
        psql -X -q -v ON_ERROR_STOP=1 -v s="$(cat "$d/series.json")" \
            <<<"SELECT ceems.add_job_samples(:'s'::jsonb)" >/dev/null || return 1
    done
}

teardown_file() {
    local d pg
    pg=$(cat "$BATS_FILE_TMPDIR/pg" 2>/dev/null) || pg=
    d=$(cat "$BATS_FILE_TMPDIR/dir" 2>/dev/null) || d=
    [ -z "$pg" ] || pg_harness_stop "$pg"
    [ -z "$d" ] || rm -rf "$d"
}

setup() {
    local why
    why=$(_skip_reason)
    [ -z "$why" ] || skip "$why"
    D=$(cat "$BATS_FILE_TMPDIR/dir")
    PG=$(cat "$BATS_FILE_TMPDIR/pg")
    export PGHOST=$PG PGPORT=$CEEMS_TEST_PGPORT PGDATABASE=ceems PGUSER=postgres
    export TZ=UTC LC_ALL=C.UTF-8
    unset COLUMNS
    SACCT=$CEEMS_TOP_BUILDDIR/tools/ceems-sacct
}

@test "every record reached the database" {
    [ "$(psql -X -At -c 'SELECT count(*) FROM ceems.job_nodes')" = 9 ] ||
        _fail "job_nodes: $(psql -X -At -c 'SELECT count(*) FROM ceems.job_nodes')"
    [ "$(psql -X -At -c 'SELECT count(*) FROM ceems.job_samples')" = 3 ] ||
        _fail "job_samples"
}

@test "from PostgreSQL, every golden case gives the spool's output" {
    # An admin sees every job, as root does in the spool.
    run env SACCT_GOLDEN_CONF="$(_conf admin dave)" \
        sh "$SRCDIR/tests/unit/sacct-golden.sh"
    echo "$output"
    [ "$status" -eq 0 ] || _fail "outputs differ from the spool's"
    # Every case ran (none skipped, none missing).
    [ "$(grep -c '^ok ' <<<"$output")" -ge 36 ] || _fail "too few cases"
    ! grep -q SKIP <<<"$output" || _fail "a case was skipped"
}

@test "each field alone, and with --summary, gives the spool's output from PostgreSQL" {
    # The database backend fetches only the columns of the fields asked
    # for (struct sacct_field.needs): one field at a time, a field that
    # reads an undeclared part shows empty cells here and not from the
    # spool.
    local spool_conf=$D/spool-read.conf field fields want got n=0
    printf 'spool_dir = %s\ncluster = c1\n' "$FIXTURES/sacct/spool" >"$spool_conf"
    # every field that reads a part: those ceems does not keep read none
    fields=$("$SACCT" --explain-fields | awk '$2 != "empty" { print $1 }')
    for field in $fields; do
        for extra in "" --summary; do
            want=$(CEEMS_SACCT_ALL_RECORDS=1 "$SACCT" -c "$spool_conf" -a $W -P -o "JobID,$field" $extra 2>&1) ||
                _fail "spool, $field $extra: $want"
            got=$("$SACCT" -c "$(_conf admin dave)" -a $W -P -o "JobID,$field" $extra 2>&1) ||
                _fail "database, $field $extra: $got"
            [ "$got" = "$want" ] ||
                _fail "$field $extra: $(diff <(echo "$want") <(echo "$got"))"
            n=$((n + 1))
        done
    done
    [ "$n" -ge 80 ] || _fail "only $n cases"
}

@test "the window's lower bound (clusters.max_job_s) loses no job at its edge" {
    # Job 1003 is the longest (14:00-18:00): a window starting at its end
    # puts the bound (S - max_job_s) exactly on its start.  The spool,
    # which has no bound, must list the same jobs as the database.
    local s=$D/edge-spool f=$D/edge.conf w out_pg
    [ "$(psql -X -At -c 'SELECT max(max_job_s) FROM ceems.clusters')" = 14400 ] ||
        _fail "max_job_s: $(psql -X -At -c 'SELECT max(max_job_s) FROM ceems.clusters')"
    mkdir -p "$s"
    cp "$FIXTURES"/sacct/spool/*.json "$s/"
    printf 'cluster = c1\nspool_dir = %s\n' "$s" >"$f"
    for w in 2025-03-10T18:00:00 2025-03-10T17:59:59 2025-03-10T18:00:01; do
        run "$SACCT" -c "$(_conf admin dave)" -a -S "$w" -E 2025-03-10T20:00:00 -X -P -n -o JobID
        [ "$status" -eq 0 ] || _fail "$output"
        out_pg=$output
        run "$SACCT" -c "$f" -a -S "$w" -E 2025-03-10T20:00:00 -X -P -n -o JobID
        [ "$status" -eq 0 ] || _fail "$output"
        [ "$out_pg" = "$output" ] || _fail "-S $w: database [$out_pg], spool [$output]"
        case $w in
        *18:00:01) [[ "$out_pg" != *1003* ]] || _fail "-S $w listed 1003" ;;
        *) [[ "$out_pg" == *1003* ]] || _fail "-S $w lost 1003: [$out_pg]" ;;
        esac
    done
}

@test "alice sees her own jobs only, and asking for bob's is an error" {
    local conf
    conf=$(_conf alice alice)
    run "$SACCT" -c "$conf" $W -X -P -n -o JobID,User
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "$(printf '1001|alice\n1002|alice\n1003|alice')" ] || _fail "alice saw: $output"
    run "$SACCT" -c "$conf" $W -u bob
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [[ "$output" == *"you may see only your own jobs"* ]] || _fail "$output"
    run "$SACCT" -c "$conf" $W -a
    [ "$status" -eq 1 ] || _fail "-a: status $status"
    # Even a query around the check shows nothing: RLS holds in SQL.
    [ "$(PGUSER=alice psql -X -At -c "SELECT count(*) FROM ceems.jobs WHERE user_name = 'bob'")" = 0 ] ||
        _fail "RLS let alice read bob's rows"
    run "$SACCT" -c "$conf" --explain 1004
    [ "$status" -eq 1 ] && [[ "$output" == *"no job 1004 visible to you"* ]] ||
        _fail "alice explained bob's job: $output"
    run "$SACCT" -c "$conf" --series 1007
    [ "$status" -eq 1 ] || _fail "alice read bob's series: $output"
}

@test "a coordinator sees the jobs of their account" {
    run "$SACCT" -c "$(_conf carol carol)" $W -a -X -P -n -o JobID,User,Account
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "$(printf '1001|alice|physics\n1002|alice|physics')" ] || _fail "carol saw: $output"
}

@test "root's role in ceems_admin_reader lists every user's jobs without -u" {
    run "$SACCT" -c "$(_conf root root)" $W -X -P -n -o JobID,User
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "$(printf '1001|alice\n1002|alice\n1003|alice\n1004|bob\n1006|nobody\n1007|bob')" ] ||
        _fail "root saw: $output"
}

@test "a server that refuses the connection is one line and status 1, not the spool's listing" {
    local f=$D/refused.conf
    # A spool to fall back on is there: a refusal must not use it.
    printf 'cluster = c1\nspool_dir = %s\ndatabase = host=%s port=%s dbname=ceems user=nosuchrole\n' \
        "$FIXTURES/sacct/spool" "$PG" "$CEEMS_TEST_PGPORT" >"$f"
    run "$SACCT" -c "$f" $W -X -P -n -o JobID
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [ "${#lines[@]}" -eq 1 ] || _fail "more than one line: $output"
    [[ "$output" == "ceems-sacct: the database refused the connection: "*'role "nosuchrole" does not exist'* ]] ||
        _fail "$output"
    [[ "$output" == *"set sacct_database"* ]] || _fail "no hint about database: $output"
    # The readers' connection refused: the hint is about roles.
    echo "sacct_database = host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=nosuchrole" >>"$f"
    run "$SACCT" -c "$f" $W -X -P -n -o JobID
    [ "$status" -eq 1 ] && [ "${#lines[@]}" -eq 1 ] || _fail "status $status: $output"
    [[ "$output" == *"each user needs a database role and a pg_hba.conf line"* ]] || _fail "$output"
}

@test "sacct_database is the readers' connection, database the writer's" {
    local f=$D/cluster.conf
    # The nodes' conf: database is the writer (ceems_writer, no SELECT).
    {
        echo "cluster = c1"
        echo "spool_dir = $D/empty-spool"
        echo "database = host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node"
    } >"$f"
    run "$SACCT" -c "$f" $W -X -P -n -o JobID
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [ "${#lines[@]}" -eq 1 ] || _fail "more than one line: $output"
    [[ "$output" == "ceems-sacct: permission denied: database role ceems_node may not read ceems.jobs"* ]] ||
        _fail "$output"
    [[ "$output" == *"set sacct_database"* ]] || _fail "no hint: $output"
    # The same conf with the readers' connection: alice lists her jobs.
    echo "sacct_database = host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=alice" >>"$f"
    run "$SACCT" -c "$f" $W -X -P -n -o JobID,User
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "$(printf '1001|alice\n1002|alice\n1003|alice')" ] || _fail "alice saw: $output"
    # A sacct_database that is itself a writer's: the error, without the
    # hint about database.
    sed -i 's/user=alice$/user=ceems_node/' "$f"
    run "$SACCT" -c "$f" $W
    [ "$status" -eq 1 ] && [[ "$output" == *"may not read ceems.jobs"* ]] || _fail "$output"
    [[ "$output" != *"set sacct_database"* ]] || _fail "wrong hint: $output"
    # Same validation as database: no password.
    echo "sacct_database = host=$PG password=x" >"$f"
    run "$SACCT" -c "$f" $W
    [ "$status" -eq 1 ] && [[ "$output" == *"holds a password"* ]] || _fail "$output"
}

@test "a database whose schema is older than the tool is one line naming the fix" {
    local f=$D/old.conf
    psql -X -q -c "DROP DATABASE IF EXISTS old15" -c "CREATE DATABASE old15" || _fail "createdb"
    "$CEEMS_TOP_BUILDDIR/tools/ceems-admin" --sql-dir "$SRCDIR/sql/migrations" \
        -d "host=$PG port=$CEEMS_TEST_PGPORT dbname=old15 user=postgres" db migrate --to 15 >/dev/null ||
        _fail "migrate --to 15"
    printf 'database = host=%s port=%s dbname=old15 user=postgres\n' "$PG" "$CEEMS_TEST_PGPORT" >"$f"
    run "$SACCT" -c "$f" $W -a
    [ "$status" -eq 1 ] || _fail "status $status: $output"
    [ "${#lines[@]}" -eq 1 ] || _fail "more than one line: $output"
    [[ "$output" == "ceems-sacct: the database's schema is at version 15, and this ceems-sacct reads version 18 or later"* ]] ||
        _fail "$output"
    [[ "$output" == *"ceems-admin db migrate"* ]] || _fail "no fix named: $output"
    psql -X -q -c "DROP DATABASE old15"
}

@test "an unreachable database without a spool to fall back on is one line and status 1" {
    local f=$D/down.conf
    printf 'database = host=%s/nowhere port=1 dbname=ceems connect_timeout=2\nspool_dir = %s/no-spool\n' \
        "$D" "$D" >"$f"
    run "$SACCT" -c "$f" $W
    [ "$status" -eq 1 ] || _fail "status $status"
    [ "${#lines[@]}" -eq 1 ] || _fail "more than one line: $output"
    [[ "$output" == "ceems-sacct: cannot connect to the database:"* ]] || _fail "$output"
    [[ "$output" == *"; no fallback: this node has no spool ($D/no-spool)" ]] || _fail "$output"
}

@test "a database that accepts and never answers: the spool after 10 s, with one warning line" {
    local f=$D/silent.conf sock=$D/silent pid start took
    mkdir -p "$sock"
    # A socket that takes connections into its backlog and never reads.
    python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
time.sleep(60)' "$sock/.s.PGSQL.1" &
    pid=$!
    for _ in $(seq 50); do [ -S "$sock/.s.PGSQL.1" ] && break; sleep 0.1; done
    printf 'cluster = c1\nspool_dir = %s\ndatabase = host=%s port=1 dbname=ceems\n' \
        "$FIXTURES/sacct/spool" "$sock" >"$f"
    start=$(date +%s)
    run timeout 60 "$SACCT" -c "$f" $W -X -P -n -o JobID
    took=$(($(date +%s) - start))
    kill "$pid" 2>/dev/null || true
    [ "$status" -eq 0 ] || _fail "status $status after $took s: $output"
    [ "$took" -ge 9 ] && [ "$took" -le 20 ] || _fail "took $took s"
    [ "$(grep -c '^ceems-sacct: warning: cannot connect to the database: .*timeout expired.*; listing this node' <<<"$output")" = 1 ] ||
        _fail "$output"
    [[ "$output" == *1007* ]] || _fail "no listing: $output"
    # connect_timeout in the connection string wins.
    sed -i 's/dbname=ceems$/dbname=ceems connect_timeout=2/' "$f"
    python3 -c 'import socket, sys, time
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1])
s.listen(8)
time.sleep(60)' "$sock/.s.PGSQL.2" &
    pid=$!
    for _ in $(seq 50); do [ -S "$sock/.s.PGSQL.2" ] && break; sleep 0.1; done
    sed -i 's/port=1 /port=2 /' "$f"
    start=$(date +%s)
    run timeout 60 "$SACCT" -c "$f" $W -X -P -n -o JobID
    took=$(($(date +%s) - start))
    kill "$pid" 2>/dev/null || true
    [ "$status" -eq 0 ] && [ "$took" -le 5 ] || _fail "status $status after $took s: $output"
}

@test "a spool_dir with %n is this host's node's: its short name" {
    local node s f
    node=$(hostname -s)
    s=$D/pernode/$node
    f=$D/pernode.conf
    mkdir -p "$s"
    cp "$FIXTURES"/sacct/spool/*.json "$s/"
    printf 'cluster = c1\nspool_dir = %s/pernode/%%n\n' "$D" >"$f"
    run "$SACCT" -c "$f" $W -P -n -o JobID,User -j 1006
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "1006|nobody" ] || _fail "with %n: $output"
}

@test "an ordinary user reading a spool sees only their own records" {
    local s=$D/userspool f=$D/user.conf
    mkdir -p "$s"
    cp "$FIXTURES"/sacct/spool/*.json "$s/"
    chmod 0755 "$D" "$s" && chmod 0644 "$s"/*.json
    printf 'cluster = c1\nspool_dir = %s\n' "$s" >"$f"
    chmod 0644 "$f"
    run runuser -u nobody -- "$SACCT" -c "$f" $W -P -n -o JobID,User
    [ "$status" -eq 0 ] || _fail "$output"
    [ "$output" = "1006|nobody" ] || _fail "nobody saw: $output"
    run runuser -u nobody -- env CEEMS_SACCT_ALL_RECORDS=0 "$SACCT" -c "$f" $W -u alice
    [ "$status" -eq 1 ] && [[ "$output" == *"you may see only your own jobs"* ]] ||
        _fail "nobody asked for alice's jobs: $output"
    run runuser -u nobody -- "$SACCT" -c "$f" --json -j 1001
    [ "$status" -eq 0 ] && [ "$output" = "[]" ] || _fail "nobody read alice's record: $output"
}
