#!/usr/bin/env bats
# tests/integration/schema.bats -- the PostgreSQL schema (sql/migrations),
# ceems-admin and ceems.upsert_job_record() against a real PostgreSQL 15
# from tests/harness/pg.sh: migrations from nothing and from an older
# version, idempotent and order-independent upserts of records written by
# the library's own encoder (record-gen), row-level security and the
# writer's least privilege, constraints, emission factors, samples.
#
# Run as root:  CEEMS_TOP_BUILDDIR=$PWD bats --tap ../../tests/integration/schema.bats
# Needs: postgresql-15, bats, jq; a build with libpq (tools/ceems-admin).

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}
SQL_DIR=$SRCDIR/sql/migrations
FIXTURES=${CEEMS_FIXTURES:-$SRCDIR/tests/fixtures}

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

setup_file() {
    [ "$(id -u)" = 0 ] || return 0
    [ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] || return 0
    local dir
    dir=$(pg_harness_mktemp) || return 1
    echo "$dir" >"$BATS_FILE_TMPDIR/pgdir"
    pg_harness_start "$dir" || return 1
    # Group and login roles live in the whole PostgreSQL cluster: made
    # once here, used by every test's database.
    psql -X -q -v ON_ERROR_STOP=1 -d postgres <<'EOF' || return 1
CREATE ROLE ceems_writer NOLOGIN;
CREATE ROLE ceems_reader NOLOGIN;
CREATE ROLE ceems_admin NOLOGIN;
CREATE ROLE alice LOGIN IN ROLE ceems_reader;
CREATE ROLE bob LOGIN IN ROLE ceems_reader;
CREATE ROLE carol LOGIN IN ROLE ceems_reader;
CREATE ROLE erin LOGIN IN ROLE ceems_reader;
CREATE ROLE dave LOGIN IN ROLE ceems_admin;
CREATE ROLE node LOGIN IN ROLE ceems_writer;
EOF
}

teardown_file() {
    local dir
    dir=$(cat "$BATS_FILE_TMPDIR/pgdir" 2>/dev/null) || return 0
    pg_harness_stop "$dir"
}

setup() {
    if [ "$(id -u)" != 0 ]; then
        skip "the PostgreSQL harness needs root"
    fi
    if [ ! -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ]; then
        skip "no tools/ceems-admin in CEEMS_TOP_BUILDDIR (built without libpq?)"
    fi
    command -v jq >/dev/null || skip "jq not installed"
    local dir
    dir=$(cat "$BATS_FILE_TMPDIR/pgdir")
    export PGHOST=$dir PGPORT=${CEEMS_TEST_PGPORT:-15432} PGUSER=postgres
    ADMIN=$CEEMS_TOP_BUILDDIR/tools/ceems-admin
    GEN=$CEEMS_TOP_BUILDDIR/tests/integration/record-gen
    # A database of its own per test.
    DB=t$BATS_TEST_NUMBER
    export PGDATABASE=$DB
    psql -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" ||
        _fail "CREATE DATABASE $DB"
}

admin() {
    "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$DB" "$@"
}

sql() {
    psql -X -At -v ON_ERROR_STOP=1 "$@"
}

# upsert FILE [ROLE]: store one record, print the function's answer.
upsert() {
    local role=${2:-postgres}
    echo "SELECT ceems.upsert_job_record(:'rec'::jsonb)" |
        psql -X -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -U "$role" -v rec="$(cat "$1")"
}

# Every row of every table and its tuple version (xmin): equal snapshots
# mean no row was added, changed or even rewritten.
snapshot() {
    sql -c "SELECT string_agg(t, E'\n' ORDER BY t) FROM (
        SELECT 'jobs ' || x.xmin || ' ' || x::text AS t FROM ceems.jobs x
        UNION ALL SELECT 'nodes ' || x.xmin || ' ' || x::text FROM ceems.job_nodes x
        UNION ALL SELECT 'steps ' || x.xmin || ' ' || x::text FROM ceems.job_steps x
        UNION ALL SELECT 'notes ' || x.xmin || ' ' || x::text FROM ceems.job_notes x
        UNION ALL SELECT 'gpus ' || x.xmin || ' ' || x::text FROM ceems.job_gpus x
        UNION ALL SELECT 'clusters ' || x.xmin || ' ' || x::text FROM ceems.clusters x) s"
}

COMMON="cluster=c1 jobid=42 uid=1000 user=alice account=phys partition=cpu state=COMPLETED exit=0 submit=1700000000 start=1700000100 end=1700003700 cpus=16 nnodes=2 mem_bytes=17179869184 zone=FR pue=1.2 steps=3"

# Two nodes of one job (figures chosen so that the sums are exact).
make_node_records() {
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 cpu_s=14400 mem_peak=2147483648 \
        package_j=360000 package_static_j=100000 dram_j=36000 dram_static_j=10000 \
        emissions_g=30 written_at=1700003710 >"$BATS_TEST_TMPDIR/n1.json" || _fail "record-gen n1"
    "$GEN" $COMMON node=n2 cores=8 elapsed=3590 cpu_s=20000 mem_peak=4147483648 \
        package_j=400000 package_static_j=100000 dram_j=40000 dram_static_j=10000 \
        emissions_g=35 written_at=1700003720 >"$BATS_TEST_TMPDIR/n2.json" || _fail "record-gen n2"
}

@test "schema: applies to an empty database; db status reports the version" {
    run admin db status
    [ "$status" -eq 0 ] || _fail "status on an empty database: $output"
    echo "$output" | grep -qx "schema version: 0" || _fail "empty database not at 0: $output"
    echo "$output" | grep -qx "pending: 001_schema.sql" || _fail "001 not pending: $output"

    run admin db init
    [ "$status" -eq 0 ] || _fail "db init: $output"
    last=$(ls "$SQL_DIR" | grep -E '^[0-9]{3}_[a-z0-9_]+\.sql$' | tail -n 1 | cut -c1-3)
    last=$((10#$last))
    # a number may be missing: as many applied as there are files
    count=$(ls "$SQL_DIR" | grep -cE '^[0-9]{3}_[a-z0-9_]+\.sql$')
    echo "$output" | grep -qx "schema version $last ($count migrations applied)" || _fail "db init said: $output"

    run admin db status
    [ "$status" -eq 0 ] || _fail "status: $output"
    echo "$output" | grep -qx "schema version: $last" || _fail "status: $output"
    echo "$output" | grep -qx "up to date" || _fail "status: $output"
    [ "$(sql -c 'SELECT count(*) FROM ceems.schema_version')" = "$count" ] || _fail "schema_version rows"

    # Every table and view is commented, and owned by ceems_owner.
    run sql -c "SELECT c.relname FROM pg_class c
                WHERE c.relnamespace = 'ceems'::regnamespace AND c.relkind IN ('r', 'p', 'v')
                  AND NOT c.relispartition AND obj_description(c.oid, 'pg_class') IS NULL"
    [ -z "$output" ] || _fail "tables without COMMENT: $output"
    run sql -c "SELECT c.relname FROM pg_class c
                WHERE c.relnamespace = 'ceems'::regnamespace AND c.relkind IN ('r', 'p', 'v')
                  AND c.relowner <> 'ceems_owner'::regrole"
    [ -z "$output" ] || _fail "not owned by ceems_owner: $output"
    # No ceems function is executable by PUBLIC.
    run sql -c "SELECT p.proname FROM pg_proc p
                WHERE p.pronamespace = 'ceems'::regnamespace AND has_function_privilege('public', p.oid, 'EXECUTE')"
    [ -z "$output" ] || _fail "functions PUBLIC may execute: $output"

    # Idempotent: again, nothing to do.
    run admin db init
    [ "$status" -eq 0 ] || _fail "db init again: $output"
    echo "$output" | grep -q "(0 migrations applied)" || _fail "second init applied something: $output"
}

@test "schema: a database left at version 1 migrates; downgrades are refused" {
    run admin db migrate --to 1
    [ "$status" -eq 0 ] || _fail "migrate --to 1: $output"
    run admin db status
    echo "$output" | grep -qx "schema version: 1" || _fail "status after --to 1: $output"
    echo "$output" | grep -qx "pending: 002_upsert.sql" || _fail "002 not pending: $output"
    [ "$(sql -c "SELECT to_regprocedure('ceems.upsert_job_record(jsonb)') IS NULL")" = t ] ||
        _fail "version 1 already has the upsert function"

    run admin db migrate
    [ "$status" -eq 0 ] || _fail "migrate: $output"
    run admin db status
    echo "$output" | grep -qx "up to date" || _fail "status after migrate: $output"

    run admin db migrate --to 2
    [ "$status" -ne 0 ] || _fail "migrate --to 2 on a newer database succeeded"
    echo "$output" | grep -q "refusing to downgrade" || _fail "no refusal message: $output"

    # A database made by a newer release.
    sql -c "INSERT INTO ceems.schema_version (version, name, checksum) VALUES (999, '999_future.sql', 'x')"
    run admin db migrate
    [ "$status" -ne 0 ] || _fail "migrate on a newer database succeeded"
    echo "$output" | grep -q "refusing to downgrade" || _fail "no refusal message: $output"
    run admin db status
    echo "$output" | grep -qx "schema version: 999" || _fail "status: $output"

    # A migration that fails leaves the version where it was.
    sql -c "DELETE FROM ceems.schema_version WHERE version = 999"
    cp -r "$SRCDIR/sql" "$BATS_TEST_TMPDIR/sql"
    last=$(ls "$SQL_DIR" | grep -E '^[0-9]{3}_' | tail -n 1 | cut -c1-3)
    next=$(printf '%03d' $((10#$last + 1)))
    printf 'CREATE TABLE ceems.half_done (x int);\nSELECT 1/0;\n' >"$BATS_TEST_TMPDIR/sql/migrations/${next}_broken.sql"
    run "$ADMIN" --sql-dir "$BATS_TEST_TMPDIR/sql/migrations" -d "dbname=$DB" db migrate
    [ "$status" -ne 0 ] || _fail "a broken migration succeeded"
    echo "$output" | grep -q "${next}_broken.sql: ERROR:  division by zero" || _fail "message: $output"
    [ "$(sql -c "SELECT to_regclass('ceems.half_done') IS NULL")" = t ] || _fail "half of a failed migration stayed"
    [ "$(sql -c 'SELECT max(version) FROM ceems.schema_version')" = "$((10#$last))" ] || _fail "version moved"
}

# copy_rows FROM TO: the rows of FROM's tables into TO's, in the columns
# TO's tables have (TO is at an older version: the rows an older schema
# would hold, without that version's functions, which are gone).
copy_rows() {
    local t cols
    for t in clusters jobs job_nodes job_steps job_notes; do
        cols=$(sql -d "$2" -c "SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position)
                               FROM information_schema.columns
                               WHERE table_schema = 'ceems' AND table_name = '$t'")
        sql -d "$1" -c "COPY (SELECT $cols FROM ceems.$t) TO STDOUT" |
            sql -d "$2" -c "COPY ceems.$t ($cols) FROM STDIN" || return 1
    done
}

@test "schema: 016 gives the jobs stored before it the steps a new database stores" {
    make_node_records
    "$GEN" cluster=c1 jobid=43 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 package_j=20 steps=2 bare_steps=1 >"$BATS_TEST_TMPDIR/other.json"
    "$GEN" cluster=c1 jobid=44 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 steps=0 >"$BATS_TEST_TMPDIR/nosteps.json"
    admin db init >/dev/null || _fail "db init"
    for f in n1 n2 other nosteps; do upsert "$BATS_TEST_TMPDIR/$f.json" >/dev/null || _fail "upsert $f"; done
    fresh=$(contents)
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs WHERE steps IS NOT NULL')" = 2 ] ||
        _fail "steps of the stored jobs: $fresh"
    # Migration 024's figures are not known for rows stored before it
    # (their records are not read again): NULL there, where a new
    # database has what the records say.
    sql -c "UPDATE ceems.job_nodes SET emission_fallback = NULL,
                package_idle_unlearned = NULL, dram_idle_unlearned = NULL" \
        -c "UPDATE ceems.jobs SET emission_fallback = NULL,
                package_idle_unlearned = NULL, dram_idle_unlearned = NULL" >/dev/null ||
        _fail "024's figures unknown"
    fresh=$(contents)

    old=${DB}b
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $old" -c "CREATE DATABASE $old"
    "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$old" db migrate --to 15 >/dev/null || _fail "migrate --to 15"
    copy_rows "$DB" "$old" || _fail "rows copied into the database at 15"
    "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$old" db migrate >/dev/null || _fail "migrate to the last"
    migrated=$(PGDATABASE=$old contents)
    [ "$migrated" = "$fresh" ] || _fail "migrated rows differ: $(diff <(echo "$fresh") <(echo "$migrated"))"
}

# The schema without pg_dump's random \restrict key.
schema_dump() {
    "${CEEMS_TEST_PGBIN:-/usr/lib/postgresql/15/bin}/pg_dump" -s -d "$1" | grep -v '^\\\(un\)\?restrict '
}

@test "schema: a database migrated from every earlier version is the same as a new one" {
    admin db init >/dev/null || _fail "db init"
    want=$(schema_dump "$DB")
    [ -n "$want" ] || _fail "no dump"
    last=$(ls "$SQL_DIR" | grep -E '^[0-9]{3}_[a-z0-9_]+\.sql$' | tail -n 1 | cut -c1-3)
    for v in $(seq 1 $((10#$last - 1))); do
        old=${DB}v$v
        psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $old" -c "CREATE DATABASE $old"
        "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$old" db migrate --to "$v" >/dev/null || _fail "migrate --to $v"
        run "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$old" db migrate
        [ "$status" -eq 0 ] || _fail "migrate from $v: $output"
        got=$(schema_dump "$old")
        [ "$got" = "$want" ] || _fail "migrated from $v differs: $(diff <(echo "$want") <(echo "$got") | head -40)"
        run "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$old" db status
        echo "$output" | grep -qx "up to date" || _fail "status after migrating from $v: $output"
        psql -X -q -d postgres -c "DROP DATABASE $old"
    done
}

# The databases migrated above from an earlier version had no views yet
# (migrate --to N stops before the definitions).  One made by version 24
# had them, with double precision columns that CREATE OR REPLACE VIEW
# cannot turn into numeric: migration 025 drops them first.
@test "schema: 025 gives a database with the earlier reports the numeric ones of a new database" {
    local want
    admin db init >/dev/null || _fail "db init"
    want=$(schema_dump "$DB")
    # usage_daily as version 24 had it (energy_kwh a double precision
    # sum), the views made of usage_sums gone with it, 025 and what came
    # after it pending.
    sql -q -c "SET client_min_messages = warning" \
        -c "DROP FUNCTION ceems.usage_sums(text, boolean, boolean, boolean) CASCADE" \
        -c "CREATE VIEW ceems.usage_daily WITH (security_invoker = true) AS
            SELECT date_trunc('day', accounted_at) AS day, sum(energy_kwh) AS energy_kwh
            FROM ceems.job_usage GROUP BY 1" \
        -c "DELETE FROM ceems.schema_version WHERE version >= 25" || _fail "the database of 024"
    run admin db migrate
    [ "$status" -eq 0 ] || _fail "migrate: $output"
    [ "$(schema_dump "$DB")" = "$want" ] ||
        _fail "not a new database's schema: $(diff <(echo "$want") <(schema_dump "$DB") | head -40)"
}

@test "schema: db migrate on an up-to-date database, and the definitions applied again, change nothing" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null || _fail "upsert"
    before=$(schema_dump "$DB")
    rows=$(snapshot)
    applied=$(sql -c "SELECT xmin || ' ' || checksum || ' ' || applied_at FROM ceems.schema_definitions")
    run admin db migrate
    [ "$status" -eq 0 ] || _fail "migrate: $output"
    echo "$output" | grep -qx "schema version $(sql -c 'SELECT max(version) FROM ceems.schema_version') (0 migrations applied)" ||
        _fail "migrate said: $output"
    [ "$(schema_dump "$DB")" = "$before" ] || _fail "the schema changed"
    [ "$(snapshot)" = "$rows" ] || _fail "rows changed"
    [ "$(sql -c "SELECT xmin || ' ' || checksum || ' ' || applied_at FROM ceems.schema_definitions")" = "$applied" ] ||
        _fail "the definitions were applied again"

    # Each file is written to be applied again: all of them, in order.
    for d in functions triggers views policies; do
        for f in "$SRCDIR"/sql/$d/*.sql; do
            sql -q -f "$f" >/dev/null || _fail "again: $f"
        done
    done
    sql -c 'CALL ceems.adopt_objects()' >/dev/null || _fail "adopt_objects"
    [ "$(schema_dump "$DB")" = "$before" ] || _fail "applying the definitions again changed the schema: $(diff <(echo "$before") <(schema_dump "$DB") | head -40)"
    [ "$(snapshot)" = "$rows" ] || _fail "applying the definitions again changed rows"
}

@test "schema: a definition that fails names its file and leaves the database as it was" {
    admin db init >/dev/null || _fail "db init"
    before=$(schema_dump "$DB")
    cp -r "$SRCDIR/sql" "$BATS_TEST_TMPDIR/sql"
    printf 'CREATE TABLE ceems.half_done (x int);\nCREATE OR REPLACE VIEW ceems.job_perf AS SELEC 1;\n' \
        >>"$BATS_TEST_TMPDIR/sql/views/job_perf.sql"
    broken() {
        "$ADMIN" --sql-dir "$BATS_TEST_TMPDIR/sql/migrations" -d "dbname=$1" "${@:2}"
    }
    run broken "$DB" db status
    echo "$output" | grep -qx "definitions: changed since applied: ceems-admin db migrate applies them" ||
        _fail "status of changed definitions: $output"
    echo "$output" | grep -qx "up to date" && _fail "changed definitions up to date: $output"
    run broken "$DB" db migrate
    [ "$status" -ne 0 ] || _fail "a broken definition was applied"
    echo "$output" | grep -q "views/job_perf.sql: ERROR:  syntax error" || _fail "message: $output"
    [ "$(schema_dump "$DB")" = "$before" ] || _fail "the failed run changed the schema"

    # On an empty database, nothing of the run stays: no version, no schema.
    new=${DB}e
    psql -X -q -d postgres -c "DROP DATABASE IF EXISTS $new" -c "CREATE DATABASE $new"
    run broken "$new" db init
    [ "$status" -ne 0 ] || _fail "init with a broken definition succeeded"
    echo "$output" | grep -q "views/job_perf.sql: ERROR:  syntax error" || _fail "init message: $output"
    [ "$(sql -d "$new" -c "SELECT to_regnamespace('ceems') IS NULL")" = t ] || _fail "half of a failed init stayed"
    run broken "$new" db status
    echo "$output" | grep -qx "schema version: 0" || _fail "status after the failed init: $output"
}

@test "upsert: replaying a record changes nothing; the figures are the records' sums" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json")" = inserted ] || _fail "first upsert"
    before=$(snapshot)
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json")" = unchanged ] || _fail "replay not unchanged"
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json")" = unchanged ] || _fail "second replay not unchanged"
    after=$(snapshot)
    [ "$before" = "$after" ] || _fail "a replay changed rows: $(diff <(echo "$before") <(echo "$after"))"
    [ "$(sql -c 'SELECT count(*) FROM ceems.job_steps')" = 3 ] || _fail "steps"

    [ "$(upsert "$BATS_TEST_TMPDIR/n2.json")" = inserted ] || _fail "second node"
    before=$(snapshot)
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null
    upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null
    [ "$before" = "$(snapshot)" ] || _fail "replaying both nodes changed rows"

    # The job row: sums of what record-gen was given, and nothing made up.
    run sql -F ' ' -c "SELECT nodes_reported, cpu_time_s, package_j, dram_j, total_j,
        package_static_j, emissions_g, mem_peak_bytes, round(cpu_efficiency::numeric, 6),
        gpu_j IS NULL, node_j IS NULL, gpu_coverage IS NULL, gpu_util_pct IS NULL,
        package_coverage, elapsed_s, user_name, state, emission_factor_mixed
        FROM ceems.jobs"
    [ "$output" = "2 34400 760000 76000 836000 200000 65 4147483648 0.597222 t t t t 1 3600 alice COMPLETED f" ] ||
        _fail "job row: $output"
    # jobid, uid and times are what the record says.
    run sql -c "SELECT jobid, uid, extract(epoch FROM start_time)::bigint, extract(epoch FROM end_time)::bigint FROM ceems.jobs"
    [ "$output" = "42|1000|1700000100|1700003700" ] || _fail "identity: $output"
    # Each step over both nodes (jobs.steps, 016): record-gen gives each
    # of a node's 3 steps a third of its figures.
    run sql -c "SELECT string_agg(concat_ws(' ', s.step_id, s.nodes, s.elapsed_s,
            round(s.cpu_s::numeric, 2), s.mem_peak_bytes, round(s.package_j::numeric, 2),
            round(s.dram_j::numeric, 2), s.gpu_j IS NULL AND s.node_j IS NULL), ',' ORDER BY s.ordinality)
        FROM ceems.jobs j, unnest(j.steps) WITH ORDINALITY s"
    [ "$output" = "0 2 3600 11466.67 1382494549 253333.33 25333.33 t,batch 2 3600 11466.67 1382494549 253333.33 25333.33 t,extern 2 3600 11466.67 1382494549 253333.33 25333.33 t" ] ||
        _fail "steps: $output"
}

@test "upsert: two nodes' records in either order give the same job row" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    cols="cluster_id, jobid, start_time, user_name, account, state, nodes_reported, cpu_time_s,
          cpu_efficiency, mem_peak_bytes, mem_efficiency, package_j, dram_j, total_j,
          package_static_j, dram_static_j, package_coverage, emissions_g, meta_node, meta_written_at"
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null && upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null
    a=$(sql -c "SELECT $cols FROM ceems.jobs")
    an=$(sql -c "SELECT node, job_meta, package_j FROM ceems.job_nodes ORDER BY node")
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null && upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null
    b=$(sql -c "SELECT $cols FROM ceems.jobs")
    bn=$(sql -c "SELECT node, job_meta, package_j FROM ceems.job_nodes ORDER BY node")
    [ -n "$a" ] && [ "$a" = "$b" ] || _fail "order matters: n1,n2: $a / n2,n1: $b"
    [ "$an" = "$bn" ] || _fail "node rows differ by order"

    # A newer record of a node replaces its older one, whatever the order;
    # the newer record's metadata wins where it has a field.
    "$GEN" $COMMON state=FAILED exit=1 node=n1 cores=8 elapsed=3600 cpu_s=1000 \
        package_j=1000 written_at=1700003800 >"$BATS_TEST_TMPDIR/n1b.json"
    [ "$(upsert "$BATS_TEST_TMPDIR/n1b.json")" = replaced ] || _fail "newer record not replaced"
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json")" = unchanged ] || _fail "older record replaced a newer one"
    run sql -F ' ' -c "SELECT state, exit_code, cpu_time_s, package_j, dram_j, nodes_reported FROM ceems.jobs"
    [ "$output" = "FAILED 1 21000 401000 40000 2" ] || _fail "after replace: $output"
    [ "$(sql -c "SELECT count(*) FROM ceems.job_steps WHERE node = 'n1'")" = 3 ] || _fail "n1 steps not replaced"
    [ "$(sql -c "SELECT round(s.cpu_s) FROM ceems.jobs j, unnest(j.steps) s WHERE s.step_id = 'batch'")" = 7000 ] ||
        _fail "jobs.steps kept the replaced record's steps"

    # The same job id started again (a requeue or a wrapped id) is another job.
    "$GEN" $COMMON start=1800000000 end=1800000600 submit=1799999999 node=n1 elapsed=600 \
        written_at=1800000601 >"$BATS_TEST_TMPDIR/requeue.json"
    [ "$(upsert "$BATS_TEST_TMPDIR/requeue.json")" = inserted ] || _fail "requeue"
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs WHERE jobid = 42')" = 2 ] || _fail "requeue not a second row"
    # A node that measured no energy leaves the energy unknown, not 0.
    [ "$(sql -c 'SELECT package_j IS NULL AND total_j IS NULL AND cpu_time_s IS NULL FROM ceems.jobs WHERE extract(epoch FROM start_time) = 1800000000')" = t ] ||
        _fail "unmeasured energy stored as a number"
}

@test "job_missing_nodes lists an ended job until every node's record is in, by its index, and each user sees their own (027)" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    # A running job whose nodes have not reported is no admin's concern yet.
    "$GEN" $COMMON jobid=44 end=0 node=n1 cores=8 elapsed=600 cpu_s=100 \
        written_at=1700000700 >"$T/running.json" || _fail "record-gen running"
    [ "$(upsert "$T/n1.json")" = inserted ] || _fail "n1"
    upsert "$T/running.json" >/dev/null || _fail "running"
    run sql -F ' ' -c "SELECT cluster, jobid, user_name, nnodes, nodes_reported, nodes_missing,
                              reported_nodes, since_end > interval '1 day' FROM ceems.job_missing_nodes"
    [ "$output" = "c1 42 alice 2 1 1 n1 t" ] || _fail "one of two nodes in: $output"
    # The query an admin runs reads the partial index, not the table.
    sql -c "SET enable_seqscan = off" -c "EXPLAIN SELECT * FROM ceems.job_missing_nodes" |
        grep -q 'jobs_missing_nodes' || _fail "the view does not use its index"
    # Row-level security: alice sees her job, bob nothing.
    [ "$(sql -U alice -c 'SELECT jobid FROM ceems.job_missing_nodes')" = 42 ] || _fail "alice"
    [ -z "$(sql -U bob -c 'SELECT jobid FROM ceems.job_missing_nodes')" ] || _fail "bob sees alice's job"
    # The second node's record arrives: the job leaves the list.
    [ "$(upsert "$T/n2.json")" = inserted ] || _fail "n2"
    [ -z "$(sql -c 'SELECT jobid FROM ceems.job_missing_nodes')" ] || _fail "complete job still listed"
}

@test "upsert: a job without energy has no emissions, whatever a zone and an older record say" {
    admin db init >/dev/null || _fail "db init"
    T=$BATS_TEST_TMPDIR
    # A node with an emission zone and no energy source: the encoder
    # writes no emissions.
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 cpu_s=100 written_at=1700003710 >"$T/n1.json" ||
        _fail "record-gen n1"
    [ "$(jq -c '.measurements.ledger.emissions' "$T/n1.json")" = null ] ||
        _fail "emissions written without energy: $(jq -c .measurements.ledger "$T/n1.json")"
    # The same as written before that rule: 0 g, which is not a figure.
    jq -c '.measurements.ledger.emissions = {grams: 0.0, covered_s: 0.0, factor_changed: false,
        factor: {source: "s", zone: "FR", year: 2024, g_per_kwh: 44.0, pue: 1.2}}' \
        "$T/n1.json" | sed 's/"n1"/"n2"/g' >"$T/n2.json"
    [ "$(upsert "$T/n1.json")" = inserted ] || _fail "n1"
    [ "$(upsert "$T/n2.json")" = inserted ] || _fail "n2, one record"
    # The batch path reads it the same way.
    sed 's/"jobid":42/"jobid":43/g' "$T/n2.json" >"$T/b.json"
    [ "$(upsert_batch "$T/b.json")" = "{inserted}" ] || _fail "n2, in a batch"
    run sql -c "SELECT count(*) FROM ceems.job_nodes WHERE emissions_g IS NOT NULL OR emission_zone IS NOT NULL"
    [ "$output" = 0 ] || _fail "$output node rows have emissions without energy"
    run sql -c "SELECT count(*) FILTER (WHERE emissions_g IS NULL AND total_j IS NULL), count(*) FROM ceems.jobs"
    [ "$output" = "2|2" ] || _fail "jobs with emissions without energy: $output"
    # A row stored before the rule keeps its 0 g; the views read it as unknown.
    sql -c "UPDATE ceems.jobs SET emissions_g = 0" >/dev/null
    run sql -c "SELECT count(*) FROM ceems.job_usage WHERE emissions_kg IS NULL"
    [ "$output" = 2 ] || _fail "job_usage reads a stored 0 g without energy as a figure: $output"
}

@test "upsert: a record the node agent wrote never replaces the plugin's" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    # The agent's record of n1, written later, with another job name and
    # state (as when it finalized a job whose plugin was slow to store).
    "$GEN" $COMMON name=agent-name state=CANCELLED node=n1 cores=8 elapsed=3600 cpu_s=14400 \
        package_j=360000 finalized_by=agent written_at=1700009999 >"$T/n1agent.json"
    cols="job_name, state, meta_node, meta_written_at, cpu_time_s, nodes_reported"
    [ "$(upsert "$T/n1.json")" = inserted ] || _fail "n1"
    [ "$(upsert "$T/n1agent.json")" = unchanged ] || _fail "the agent's record replaced the plugin's"
    [ "$(upsert "$T/n2.json")" = inserted ] || _fail "n2"
    a=$(sql -c "SELECT $cols FROM ceems.jobs")
    [ "$(sql -c "SELECT finalized_by FROM ceems.job_nodes WHERE node = 'n1'")" = extern ] || _fail "n1 not the plugin's"
    # The other order: the plugin's record replaces the agent's.
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    [ "$(upsert "$T/n1agent.json")" = inserted ] || _fail "agent first"
    [ "$(sql -c "SELECT job_name FROM ceems.jobs")" = agent-name ] || _fail "the agent's record alone is not stored"
    [ "$(upsert "$T/n1.json")" = replaced ] || _fail "the plugin's record did not replace the agent's"
    [ "$(upsert "$T/n2.json")" = inserted ] || _fail "n2 after"
    [ "$(sql -c "SELECT $cols FROM ceems.jobs")" = "$a" ] || _fail "order matters: $a / $(sql -c "SELECT $cols FROM ceems.jobs")"
    # Another node's agent record, written last: its metadata do not
    # override the plugin's in the jobs row (state); a field only it has
    # (the job name: the plugin's records here have none) is kept.
    "$GEN" $COMMON name=agent-name state=CANCELLED node=n3 cores=8 elapsed=3600 cpu_s=100 \
        finalized_by=agent written_at=1700009999 >"$T/n3agent.json"
    [ "$(upsert "$T/n3agent.json")" = inserted ] || _fail "n3 agent"
    run sql -F ' ' -c "SELECT job_name, state, meta_node, nodes_reported FROM ceems.jobs"
    [ "$output" = "agent-name COMPLETED n2 3" ] || _fail "agent metadata won: $output"
}

@test "upsert: a record of a job's metadata alone never replaces a measured one of its node" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    # The agent's measured record of n1 (a job it reaped), and its record
    # of the job's metadata alone written later (the end of a job it no
    # longer remembered after a restart): figures absent, the note
    # not-measured, as lib/agent/agent_finish.c writes it.
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 cpu_s=14400 package_j=360000 \
        finalized_by=agent written_at=1700009999 >"$T/measured.json"
    "$GEN" $COMMON name=late-name node=n1 cores=8 elapsed=3600 finalized_by=agent \
        written_at=1700019999 |
        jq -c '.measurements.gap_s = 3600 | .measurements.steps = [] |
            del(.measurements.ledger.emissions) |
            .notes = [{"id": "not-measured", "text": "The node agent did not measure this job."}]' \
        >"$T/unmeasured.json"
    cols="cpu_time_s, package_j, (SELECT finalized_by FROM ceems.job_nodes WHERE node = 'n1')"
    [ "$(upsert "$T/measured.json")" = inserted ] || _fail "measured"
    [ "$(upsert "$T/unmeasured.json")" = unchanged ] ||
        _fail "the record of metadata alone replaced the measured one"
    a=$(sql -c "SELECT $cols FROM ceems.jobs")
    echo "# measured first: $a" >&3
    [ "$(sql -c "SELECT cpu_time_s IS NOT NULL AND package_j > 0 FROM ceems.jobs")" = t ] ||
        _fail "the figures are gone: $a"
    # The other order: the measured record replaces the other.
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    [ "$(upsert "$T/unmeasured.json")" = inserted ] || _fail "metadata alone first"
    [ "$(sql -c "SELECT cpu_time_s IS NULL AND package_j IS NULL FROM ceems.jobs")" = t ] ||
        _fail "the record of metadata alone has figures"
    [ "$(upsert "$T/measured.json")" = replaced ] || _fail "the measured record did not replace it"
    [ "$(sql -c "SELECT $cols FROM ceems.jobs")" = "$a" ] || _fail "order matters"
    # In one batch, in both orders, and in batches one after the other:
    # the same.
    for batch in "measured unmeasured" "unmeasured measured"; do
        sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
        set -- $batch
        call_batch upsert_job_records "$T/$1.json" "$T/$2.json" >/dev/null || _fail "batch $batch"
        [ "$(sql -c "SELECT $cols FROM ceems.jobs")" = "$a" ] || _fail "batch $batch"
        sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
        call_batch upsert_job_records "$T/$1.json" >/dev/null || _fail "batch $1"
        call_batch upsert_job_records "$T/$2.json" "$T/n2.json" >/dev/null || _fail "batch $2"
        [ "$(sql -c "SELECT cpu_time_s IS NOT NULL AND package_j > 0 FROM ceems.jobs")" = t ] ||
            _fail "batches $batch: the figures are gone"
    done
    # The plugin's record is measured: the other never replaces it.
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    [ "$(upsert "$T/n1.json")" = inserted ] || _fail "n1"
    [ "$(upsert "$T/unmeasured.json")" = unchanged ] || _fail "it replaced the plugin's"
}

@test "upsert: a step nobody measured stores NULL, a measured 0 stays 0" {
    admin db init >/dev/null || _fail "db init"
    # Step "0" (the third) had no cgroup: neither CPU time nor energy.
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 cpu_s=14400 mem_peak=2147483648 \
        package_j=360000 dram_j=36000 bare_steps=1 written_at=1700003710 \
        >"$BATS_TEST_TMPDIR/n1.json" || _fail "record-gen"
    jq -e '.measurements.steps[2] | (.id == "0" and (has("cpu_s") | not) and .joules == {})' \
        "$BATS_TEST_TMPDIR/n1.json" >/dev/null || _fail "record-gen wrote figures for the bare step"
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json")" = inserted ] || _fail "upsert"
    run sql -F ' ' -c "SELECT step_id, coalesce(cpu_s::text, 'null'), coalesce(package_j::text, 'null'),
        coalesce(dram_j::text, 'null'), coalesce(mem_peak_bytes::text, 'null'), elapsed_s
        FROM ceems.job_steps ORDER BY step_id"
    [ "$output" = "$(printf '%s\n' '0 null null null null 3600' \
        'batch 4800 120000 12000 715827882 3600' 'extern 4800 120000 12000 715827882 3600')" ] ||
        _fail "steps: $output"
    # The job's own figures are its record's, not the steps' sum.
    [ "$(sql -c 'SELECT cpu_time_s, package_j FROM ceems.jobs')" = "14400|360000" ] ||
        _fail "job row: $(sql -c 'SELECT cpu_time_s, package_j FROM ceems.jobs')"

    # A step that was measured and used nothing keeps its 0; the batch
    # path stores steps as the single one does.
    jq -c '.measurements.steps[2].cpu_s = 0 | .measurements.steps[2].joules.package = 0 |
        .written_at = 1700003711' "$BATS_TEST_TMPDIR/n1.json" >"$BATS_TEST_TMPDIR/zero.json"
    [ "$(upsert_batch "$BATS_TEST_TMPDIR/zero.json")" = "{replaced}" ] || _fail "batch upsert"
    [ "$(sql -c "SELECT cpu_s, package_j, dram_j IS NULL FROM ceems.job_steps WHERE step_id = '0'")" = "0|0|t" ] ||
        _fail "measured zeros: $(sql -c "SELECT * FROM ceems.job_steps WHERE step_id = '0'")"
}

@test "upsert: bad records are refused with SQLSTATE 22/23 and write nothing" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null
    before=$(snapshot)
    bad() {    # bad NAME SQLSTATE JQ-FILTER
        jq -c "$3" "$BATS_TEST_TMPDIR/n2.json" >"$BATS_TEST_TMPDIR/bad.json"
        run upsert "$BATS_TEST_TMPDIR/bad.json"
        [ "$status" -ne 0 ] || _fail "$1: accepted"
        echo "$output" | grep -q "ERROR:  $2:" || _fail "$1: not SQLSTATE $2: $output"
    }
    bad "negative energy" 23514 '.measurements.ledger.package.joules = -5'
    bad "negative static energy" 23514 '.measurements.ledger.dram.static_j = -1'
    bad "negative step energy" 23514 '.measurements.steps[0].joules.package = -1'
    bad "unknown state" 23514 '.job.state = "EXPLODED"'
    bad "end before start" 23514 '.job.end_time = 1600000000'
    bad "no start time" 22023 'del(.job.start_time)'
    bad "no cluster" 22023 'del(.job.cluster)'
    bad "wrong format" 22023 '.format = "ceems-job-record/0"'
    bad "jobid a string" 22023 '.job.jobid = "42"'
    bad "measurements of another job" 22023 '.measurements.jobid = 43'
    bad "another owner for a stored job" 22023 '.job.uid = 1001 | .measurements.uid = 1001 | .job.node = "n1" | .written_at = 1800000000'
    bad "energy as text" 22023 '.measurements.ledger.package.joules = "lots"'
    bad "DRAM energy as text" 22P02 '.measurements.ledger.dram.joules = "lots"'
    bad "energy as an object" 22P02 '.measurements.ledger.dram.static_j = {"a": 1}'
    bad "ledger not an object" 22023 '.measurements.ledger = 5'
    bad "a step's CPU time as text" 22P02 '.measurements.steps[1].cpu_s = "x"'
    bad "jobid out of range" 23514 '.job.jobid = 4294967295 | .measurements.jobid = 4294967295'
    bad "exit code out of range" 22003 '.job.exit_code = 100000'
    [ "$before" = "$(snapshot)" ] || _fail "a refused record left rows behind"
}

# upsert_batch [-U ROLE] FILE...: store the records (one line each) as
# one JSON array, their text untouched (the digest is of the record).
upsert_batch() {
    local role=postgres
    if [ "${1:-}" = -U ]; then role=$2; shift 2; fi
    echo "SELECT ceems.upsert_job_records(:'recs'::jsonb)" |
        psql -X -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -U "$role" -v recs="[$(cat "$@" | paste -sd,)]"
}

# Every row of the job tables without tuple versions or surrogate keys:
# what two ways of storing the same records must agree on.
contents() {
    sql -c "SELECT string_agg(t, E'\n' ORDER BY t) FROM (
        SELECT 'jobs ' || (to_jsonb(x) - 'job_key' - 'updated_at')::text AS t FROM ceems.jobs x
        UNION ALL SELECT 'nodes ' || j.jobid || ' ' || (to_jsonb(x) - 'job_key')::text
            FROM ceems.job_nodes x JOIN ceems.jobs j USING (job_key)
        UNION ALL SELECT 'steps ' || j.jobid || ' ' || (to_jsonb(x) - 'job_key')::text
            FROM ceems.job_steps x JOIN ceems.jobs j USING (job_key)
        UNION ALL SELECT 'notes ' || j.jobid || ' ' || (to_jsonb(x) - 'job_key')::text
            FROM ceems.job_notes x JOIN ceems.jobs j USING (job_key)
        UNION ALL SELECT 'gpus ' || j.jobid || ' ' || (to_jsonb(x) - 'job_key')::text
            FROM ceems.job_gpus x JOIN ceems.jobs j USING (job_key)) s"
}

@test "batch: the same rows as one by one, in any order; replays change nothing" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    # Two nodes of job 42, an older record of n1 replaced by a newer one,
    # a requeue of 42, and a second job.
    "$GEN" $COMMON state=FAILED exit=1 node=n1 cores=8 elapsed=3600 cpu_s=1000 \
        package_j=1000 written_at=1700003800 >"$T/n1b.json"
    "$GEN" $COMMON start=1800000000 end=1800000600 submit=1799999999 node=n1 elapsed=600 \
        written_at=1800000601 >"$T/requeue.json"
    "$GEN" cluster=c1 jobid=43 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 package_j=20 steps=2 >"$T/other.json"
    set -- "$T/n1.json" "$T/n2.json" "$T/n1b.json" "$T/requeue.json" "$T/other.json"
    for f in "$@"; do upsert "$f" >/dev/null || _fail "upsert $f"; done
    one_by_one=$(contents)
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs')" = 3 ] || _fail "jobs one by one"

    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    run upsert_batch -U node "$@"
    [ "$status" -eq 0 ] || _fail "the writer's batch: $output"
    [ "$output" = "{inserted,inserted,replaced,inserted,inserted}" ] || _fail "outcomes: $output"
    [ "$(contents)" = "$one_by_one" ] || _fail "batch differs: $(diff <(echo "$one_by_one") <(contents))"
    before=$(snapshot)
    [ "$(upsert_batch "$@")" = "{unchanged,unchanged,unchanged,unchanged,unchanged}" ] || _fail "replayed batch"
    [ "$(snapshot)" = "$before" ] || _fail "a replayed batch changed rows"

    # Reversed, and the same record twice in one batch.
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    upsert_batch "$T/other.json" "$T/requeue.json" "$T/n1b.json" "$T/n2.json" "$T/n1.json" "$T/n2.json" \
        >/dev/null || _fail "reversed batch"
    [ "$(contents)" = "$one_by_one" ] || _fail "reversed batch differs: $(diff <(echo "$one_by_one") <(contents))"

    # An empty batch is nothing; not an array is refused.
    [ "$(echo "SELECT ceems.upsert_job_records('[]')" | sql)" = "{}" ] || _fail "empty batch"
    run sql -c "SELECT ceems.upsert_job_records('{}')"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "not a JSON array" || _fail "an object accepted: $output"
    # Only the writer (and the owner) may call it.
    run upsert_batch -U alice "$T/n1.json"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "permission denied" || _fail "alice called the batch: $output"
    run sql -U node -c "SELECT ceems.store_job_record('{}')"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "permission denied" || _fail "the writer called store_job_record: $output"
}

# call_batch FUNCTION FILE...: the batch function FUNCTION on the records
# as one JSON array; prints its outcomes.
call_batch() {
    local fn=$1 recs=
    shift
    [ $# -eq 0 ] || recs=$(cat "$@" | paste -sd,)
    echo "SELECT ceems.$fn(:'recs'::jsonb)" |
        psql -X -At -v ON_ERROR_STOP=1 -v VERBOSITY=verbose -v recs="[$recs]"
}

@test "batch: the set-wise path stores what the record-by-record loop stores, in any order" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    "$GEN" $COMMON state=FAILED exit=1 node=n1 cores=8 elapsed=3600 cpu_s=1000 \
        package_j=1000 written_at=1700003800 >"$T/n1b.json"
    "$GEN" $COMMON start=1800000000 end=1800000600 submit=1799999999 node=n1 elapsed=600 \
        written_at=1800000601 >"$T/requeue.json"
    "$GEN" cluster=c1 jobid=43 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 package_j=20 steps=2 >"$T/other.json"
    "$GEN" cluster=c2 jobid=42 uid=1002 user=carol account=bio start=1700000100 node=n1 \
        elapsed=5 dram_j=7 steps=1 >"$T/c2.json"
    # compare NAME BATCH...: each batch (a comma-separated list of
    # files) through the loop, then, on empty tables, through the
    # set-wise path itself (an error there fails the test: these batches
    # must not need the loop); outcomes and rows must be the same.
    compare() {
        local name=$1 b loop_out=() set_out=() loop_rows
        shift
        sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
        for b in "$@"; do
            loop_out+=("$(call_batch upsert_job_records_each ${b//,/ })") || _fail "$name: loop"
        done
        loop_rows=$(contents)
        sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
        for b in "$@"; do
            run call_batch store_job_records ${b//,/ }
            [ "$status" -eq 0 ] || _fail "$name: the set-wise path gave up: $output"
            set_out+=("$output")
        done
        [ "${loop_out[*]}" = "${set_out[*]}" ] || _fail "$name: outcomes: loop ${loop_out[*]}, set-wise ${set_out[*]}"
        [ -n "$loop_rows" ] && [ "$(contents)" = "$loop_rows" ] ||
            _fail "$name: rows differ: $(diff <(echo "$loop_rows") <(contents))"
    }
    n1=$T/n1.json n2=$T/n2.json n1b=$T/n1b.json rq=$T/requeue.json o=$T/other.json c2=$T/c2.json
    compare "two nodes of one job" "$n1,$n2"
    compare "two nodes, reversed" "$n2,$n1"
    compare "everything, newest n1 first" "$n1b,$n2,$rq,$o,$c2,$n1"
    compare "everything, another order" "$c2,$n1b,$o,$rq,$n2,$n1"
    compare "duplicates in one batch" "$n2,$n2,$o,$n1b,$o,$n1,$n2"
    compare "the same job id on two clusters" "$c2,$n1" "$n1,$c2,$n2"
    compare "a newer record over a stored one" "$n1,$o" "$n2,$n1b,$o"
    compare "an older record after a stored newer one" "$n1b" "$n1,$n2,$rq"
    compare "replays" "$n1,$n2,$o" "$o,$n2,$n1" "$n1,$n1"
    compare "empty" "$n1" ""
    # Records the node agent wrote: the plugin's win, in a batch or not.
    "$GEN" $COMMON name=agent-name node=n1 cores=8 elapsed=3600 cpu_s=14400 package_j=360000 \
        finalized_by=agent written_at=1700009999 >"$T/n1agent.json"
    "$GEN" $COMMON name=agent-name node=n3 cores=8 elapsed=3600 cpu_s=10 \
        finalized_by=agent written_at=1700009999 >"$T/n3agent.json"
    ag=$T/n1agent.json ag3=$T/n3agent.json
    compare "the agent's record after the plugin's" "$n1,$ag,$n2"
    compare "the plugin's record over a stored agent's" "$ag,$ag3" "$n1,$n2"
    compare "the agent's record over a stored plugin's" "$n1,$n2" "$ag3,$ag"

    # An older then a newer record of one node in one batch: the loop
    # applies both in turn, the set-wise path gives the batch to it.
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    run call_batch store_job_records "$n1" "$n1b"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "several records of one node" ||
        _fail "the set-wise path did not give up: $output"
    [ "$(sql -c 'SELECT count(*) FROM ceems.job_nodes')" = 0 ] || _fail "rows left by a given-up batch"
    [ "$(call_batch upsert_job_records "$n1" "$n1b" "$n2")" = "{inserted,replaced,inserted}" ] ||
        _fail "upsert_job_records did not fall back to the loop"
    expect=$(contents)
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    call_batch upsert_job_records_each "$n1" "$n1b" "$n2" >/dev/null
    [ "$(contents)" = "$expect" ] || _fail "the fallback differs from the loop"

    # A record whose owner differs from its stored job's: the loop's
    # error, with the record's index.
    jq -c '.job.uid = 1001 | .measurements.uid = 1001 | .written_at = 1800000000' "$n2" >"$T/owner.json"
    run call_batch upsert_job_records "$o" "$T/owner.json"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "ERROR:  22023: ceems records\[1\]: .*belongs to uid 1000" ||
        _fail "another owner: $output"
    # The writer may call neither the set-wise path nor the loop directly.
    for fn in store_job_records upsert_job_records_each; do
        run sql -U node -c "SELECT ceems.$fn('[]')"
        [ "$status" -ne 0 ] && echo "$output" | grep -q "permission denied" || _fail "the writer called $fn: $output"
    done
}

# batches_of TEMPLATE FIRST COUNT SIZE: COUNT batches of SIZE copies of
# the record TEMPLATE, job ids from FIRST on, all started in the same
# second (the tasks of an array job), one JSON array a line.
batches_of() {
    jq -c --argjson first "$2" --argjson count "$3" --argjson size "$4" '
        . as $r | range(0; $count) as $b |
        [range(0; $size) as $i | ($first + $b * $size + $i) as $id |
         $r | .job.jobid = $id | .measurements.jobid = $id]' "$1"
}

@test "batch: a writer's session keeps index probes on a table emptied or grown since planning" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    batches_of "$BATS_TEST_TMPDIR/n1.json" 1000 1 100 >"$BATS_TEST_TMPDIR/warm.txt"
    batches_of "$BATS_TEST_TMPDIR/n1.json" 5000 8 100 >"$BATS_TEST_TMPDIR/b.txt"
    # as_calls: each batch a call of the writer's function.
    as_calls() {
        sed "s/'/''/g; s/^/SELECT ceems.upsert_job_records('/; s/\$/');/" "$1"
    }
    # Statistics of a filled table, then the table emptied: what a
    # TRUNCATE by an admin, or a test, leaves.
    as_calls "$BATS_TEST_TMPDIR/warm.txt" | sql >/dev/null || _fail "first batch"
    sql -c "ANALYZE ceems.jobs, ceems.job_nodes" \
        -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf" \
        -c "SELECT pg_stat_reset()" >/dev/null || _fail "truncate"
    # One writer's session, its plans made on the empty table, stores 800
    # jobs that all started in the same second.
    as_calls "$BATS_TEST_TMPDIR/b.txt" | sql -U node >/dev/null || _fail "batches"
    [ "$(sql -c "SELECT count(*) FROM ceems.jobs")" = 800 ] || _fail "not 800 jobs"
    # Its stored jobs are found by their identity, never by start time
    # (each such probe reads every job of that second); job_nodes is
    # probed by key, never read whole for each batch.  (Migration 013:
    # 012's plans did both here, 50 times slower.)
    sql -c "SELECT pg_stat_force_next_flush()" >/dev/null
    run sql -c "SELECT indexrelname, idx_scan, idx_tup_read FROM pg_stat_user_indexes
                WHERE schemaname = 'ceems' AND relname IN ('jobs', 'job_nodes')
                ORDER BY 1"
    echo "$output"
    echo "$output" | grep -q '^jobs_start|0|0$' || _fail "jobs read through jobs_start: $output"
    # A probe reads at most one entry; a scan of the whole index, all.
    echo "$output" | awk -F'|' '$1 == "job_nodes_pkey" { exit !($2 > 0 && $3 <= $2) }' ||
        _fail "job_nodes read more entries than it was probed for: $output"
}

@test "batch: a bad record refuses the batch with its SQLSTATE and index, and writes nothing" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    "$GEN" cluster=c1 jobid=43 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 package_j=20 steps=2 >"$T/other.json"
    upsert "$T/other.json" >/dev/null
    before=$(snapshot)
    bad() {    # bad NAME SQLSTATE INDEX JQ-FILTER
        jq -c "$4" "$T/n2.json" >"$T/bad.json"
        run upsert_batch "$T/n1.json" "$T/bad.json" "$T/other.json"
        [ "$status" -ne 0 ] || _fail "$1: accepted"
        echo "$output" | grep -q "ERROR:  $2: ceems records\[$3\]:" || _fail "$1: not SQLSTATE $2 at [$3]: $output"
        [ "$before" = "$(snapshot)" ] || _fail "$1: a refused batch left rows behind"
    }
    bad "negative energy" 23514 1 '.measurements.ledger.package.joules = -5'
    bad "no cluster" 22023 1 'del(.job.cluster)'
    bad "energy as text" 22P02 1 '.measurements.ledger.dram.joules = "lots"'
    # Caught when the job's row is recomputed: the index is that of the
    # job's first changed record (n1, at 0).
    bad "end before start" 23514 0 '.job.end_time = 1600000000'
    run sql -c "SELECT ceems.upsert_job_records('[1]')"
    echo "$output" | grep -q "records\[0\]: ceems record: not a JSON object" || _fail "a number in the array: $output"
}

# Job 42's GPUs: on n1 a whole device and a quarter MIG instance whose
# energy is integrated power, on n2 an idle device without SM figures.
make_gpu_records() {
    local gib=1073741824
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 gpu_j=1000 written_at=1700003710 \
        "gpu=GPU-aaaa,0000:3b:00.0,-,1,900,50,$gib,$((2 * gib)),40,0" \
        "gpu=MIG-bbbb,0000:af:00.0,3,0.25,100,10,$((gib / 2)),$gib,-,1" \
        >"$BATS_TEST_TMPDIR/g1.json" || _fail "record-gen g1"
    "$GEN" $COMMON node=n2 cores=8 elapsed=3590 gpu_j=50 written_at=1700003720 \
        "gpu=GPU-cccc,0000:3b:00.0,-,1,50,0,0,$((2 * gib)),-,0" \
        >"$BATS_TEST_TMPDIR/g2.json" || _fail "record-gen g2"
}

@test "gpus: a record's GPUs are stored once, summed into the node and the job, seen by their owner only" {
    admin db init >/dev/null || _fail "db init"
    make_gpu_records
    T=$BATS_TEST_TMPDIR
    [ "$(upsert "$T/g1.json")" = inserted ] && [ "$(upsert "$T/g2.json")" = inserted ] ||
        _fail "the records with GPUs were not stored"
    [ "$(sql -c "SELECT string_agg(node || ':' || ordinal || ':' || coalesce(uuid, '-') || ':' ||
                     coalesce(instance::text, '-') || ':' || share || ':' || power_integrated || ':' ||
                     coalesce(sm_active_pct::text, '-'), ' ' ORDER BY node, ordinal)
                 FROM ceems.job_gpus")" = \
      "n1:0:GPU-aaaa:-:1:false:40 n1:1:MIG-bbbb:3:0.25:true:- n2:0:GPU-cccc:-:1:false:-" ] ||
        _fail "GPU rows: $(sql -c 'SELECT * FROM ceems.job_gpus')"
    # Each figure is the records' own, and each sum recomputed here from them.
    [ "$(sql -c "SELECT count(*) FROM ceems.job_gpus g JOIN (VALUES
            ('n1', 0, 900, 50, 1073741824::bigint, 2147483648::bigint),
            ('n1', 1, 100, 10, 536870912, 1073741824), ('n2', 0, 50, 0, 0, 2147483648))
            v(node, ord, e, u, peak, total)
          ON g.node = v.node AND g.ordinal = v.ord AND g.energy_j = v.e AND g.util_pct = v.u
             AND g.mem_peak_bytes = v.peak AND g.mem_total_bytes = v.total")" = 3 ] ||
        _fail "GPU figures: $(sql -c 'SELECT * FROM ceems.job_gpus')"
    [ "$(sql -c "SELECT abs(gpu_util_pct - (50 * 1 + 10 * 0.25) / 1.25) < 1e-9 AND
                        gpu_mem_peak_bytes = 1073741824::bigint + 536870912 AND
                        gpu_mem_total_bytes = 3 * 1073741824::bigint AND gpu_sm_active_pct = 40
                 FROM ceems.job_nodes WHERE node = 'n1'")" = t ] ||
        _fail "n1's GPU columns: $(sql -c "SELECT * FROM ceems.job_nodes WHERE node = 'n1'")"
    [ "$(sql -c "SELECT gpu_util_pct = 0 AND gpu_mem_peak_bytes = 0 AND gpu_sm_active_pct IS NULL
                 FROM ceems.job_nodes WHERE node = 'n2'")" = t ] ||
        _fail "n2's GPU columns: unknown SM activity must be NULL, idle 0"
    [ "$(sql -c "SELECT abs(gpu_util_pct - (50 + 10 * 0.25 + 0) / 2.25) < 1e-9 AND
                        gpu_mem_peak_bytes = 1073741824::bigint + 536870912 AND
                        gpu_mem_total_bytes = 5 * 1073741824::bigint AND gpu_sm_active_pct = 40 AND
                        gpu_j = 1050 FROM ceems.jobs")" = t ] ||
        _fail "the job's GPU columns: $(sql -c 'SELECT gpu_util_pct, gpu_mem_peak_bytes, gpu_mem_total_bytes, gpu_sm_active_pct, gpu_j FROM ceems.jobs')"

    # A replay changes nothing; the set-wise batch stores the same rows.
    before=$(snapshot)
    [ "$(upsert "$T/g1.json")" = unchanged ] || _fail "replay not unchanged"
    [ "$(snapshot)" = "$before" ] || _fail "a replayed record changed rows"
    one_by_one=$(contents)
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_gpus, ceems.job_node_perf"
    [ "$(call_batch store_job_records "$T/g2.json" "$T/g1.json")" = "{inserted,inserted}" ] ||
        _fail "the set-wise path refused the records with GPUs"
    [ "$(contents)" = "$one_by_one" ] || _fail "set-wise differs: $(diff <(echo "$one_by_one") <(contents))"
    before=$(snapshot)
    [ "$(upsert_batch "$T/g1.json" "$T/g2.json")" = "{unchanged,unchanged}" ] || _fail "replayed batch"
    [ "$(snapshot)" = "$before" ] || _fail "a replayed batch changed rows"

    # A newer record of n1 without GPUs takes its GPUs with the old one.
    "$GEN" $COMMON node=n1 cores=8 elapsed=3600 written_at=1700003800 >"$T/g1b.json"
    [ "$(upsert "$T/g1b.json")" = replaced ] || _fail "newer n1 record not stored"
    [ "$(sql -c "SELECT string_agg(node, ',') FROM ceems.job_gpus")" = n2 ] || _fail "n1's GPUs stayed"
    [ "$(sql -c "SELECT gpu_util_pct = 0 AND gpu_mem_total_bytes = 2147483648 AND
                        gpu_sm_active_pct IS NULL FROM ceems.jobs")" = t ] ||
        _fail "the job's GPU columns were not recomputed without n1's GPUs"

    # Owners read their GPUs; others and the writer do not.
    [ "$(sql -U alice -c 'SELECT count(*) FROM ceems.job_gpus')" = 1 ] || _fail "alice does not see her GPUs"
    [ "$(sql -U bob -c 'SELECT count(*) FROM ceems.job_gpus')" = 0 ] || _fail "bob sees alice's GPUs"
    [ "$(sql -U alice -c 'SELECT string_agg(node || $$:$$ || idle, $$,$$) FROM ceems.job_gpu_usage')" = n2:true ] ||
        _fail "alice's GPU usage view: $(sql -U alice -c 'SELECT * FROM ceems.job_gpu_usage')"
    [ "$(sql -U bob -c 'SELECT count(*) FROM ceems.job_gpu_usage')" = 0 ] || _fail "bob sees alice's GPUs in the view"
    run sql -U node -c 'SELECT count(*) FROM ceems.job_gpus'
    echo "$output" | grep -q "permission denied" || _fail "the writer reads GPUs: $output"

    # What the decoder refuses, the database refuses too.
    before=$(snapshot)
    for f in '.measurements.gpus[0].share = 0' '.measurements.gpus[0].util_pct = 101' \
             '.measurements.gpus[0].energy_j = -1' 'del(.measurements.gpus[0].uuid, .measurements.gpus[0].bus_id)' \
             '.measurements.gpus[0].instance = -1' '.measurements.gpus[0].mem_total_bytes = 0'; do
        jq -c "$f | .written_at = 1800000000" "$T/g2.json" >"$T/bad.json"
        run upsert "$T/bad.json"
        [ "$status" -ne 0 ] && echo "$output" | grep -q "ERROR:  23514:" || _fail "$f accepted: $output"
    done
    jq -c '.measurements.gpus = {} | .written_at = 1800000000' "$T/g2.json" >"$T/bad.json"
    run upsert "$T/bad.json"
    [ "$status" -ne 0 ] && echo "$output" | grep -q "ERROR:  22023:" || _fail "gpus as an object accepted: $output"
    [ "$(snapshot)" = "$before" ] || _fail "a refused record left rows behind"
}

@test "overlap: clusters.max_job_s bounds a window's query without changing its rows" {
    admin db init >/dev/null || _fail "db init"
    T=$BATS_TEST_TMPDIR
    # Jobs of alice: long (10 h) and short, before, across and inside a
    # window, and one still running (no end).
    i=0
    for se in "1700000000 1700036000" "1700030000 1700030600" "1700040000 1700043600" \
              "1700050000 1700050100" "1700090000 1700093600" "1700041000 -"; do
        set -- $se
        i=$((i + 1))
        if [ "$2" = - ]; then
            "$GEN" cluster=c1 jobid=$i uid=1000 user=alice start=$1 state=RUNNING node=n1 \
                elapsed=10 written_at=$(($1 + 10)) >"$T/j$i.json"
        else
            "$GEN" cluster=c1 jobid=$i uid=1000 user=alice start=$1 end=$2 node=n1 \
                elapsed=$(($2 - $1)) written_at=$(($2 + 1)) >"$T/j$i.json"
        fi
    done
    call_batch upsert_job_records "$T"/j*.json >/dev/null || _fail "batch"
    upsert "$T/j1.json" >/dev/null
    [ "$(sql -c "SELECT max_job_s FROM ceems.clusters WHERE name = 'c1'")" = 36000 ] ||
        _fail "max_job_s: $(sql -c 'SELECT * FROM ceems.clusters')"
    for w in "1700035000 1700045000" "1700000000 1700000001" "1700060000 1700100000" "1700036000 1700036001"; do
        set -- $w
        q="FROM ceems.jobs WHERE user_name = 'alice' AND start_time < to_timestamp($2)
           AND coalesce(end_time, start_time) >= to_timestamp($1)"
        b="AND start_time >= (SELECT to_timestamp($1) - max(max_job_s) * interval '1 second' FROM ceems.clusters)"
        plain=$(sql -c "SELECT string_agg(jobid::text, ',' ORDER BY jobid) $q")
        bounded=$(sql -c "SELECT string_agg(jobid::text, ',' ORDER BY jobid) $q $b")
        [ -n "$plain" ] && [ "$plain" = "$bounded" ] || _fail "window $w: $plain / bounded $bounded"
    done
    # Only grows: a shorter job leaves it alone; an admin's import raises it.
    sql -c "INSERT INTO ceems.jobs (cluster_id, jobid, start_time, end_time, uid, meta_written_at, meta_node, meta_digest)
            SELECT cluster_id, 99, to_timestamp(1600000000), to_timestamp(1600086400), 1000, now(), 'x', 'y'
            FROM ceems.clusters WHERE name = 'c1'" >/dev/null
    [ "$(sql -c "SELECT max_job_s FROM ceems.clusters WHERE name = 'c1'")" = 86400 ] || _fail "not raised by an insert"
}

@test "roles: users see their own jobs, coordinators their accounts, the writer nothing" {
    admin db init >/dev/null || _fail "db init"
    sql -c "INSERT INTO ceems.coordinators VALUES ('phys', 'carol')"
    "$GEN" cluster=c1 jobid=1 uid=1000 user=alice account=phys start=1700000000 node=n1 \
        elapsed=10 package_j=10 steps=2 >"$BATS_TEST_TMPDIR/a.json"
    "$GEN" cluster=c1 jobid=2 uid=1001 user=bob account=chem start=1700000000 node=n1 \
        elapsed=10 package_j=20 steps=2 >"$BATS_TEST_TMPDIR/b.json"
    "$GEN" cluster=c1 jobid=3 uid=1002 user=erin account=phys start=1700000000 node=n1 \
        elapsed=10 package_j=30 steps=2 >"$BATS_TEST_TMPDIR/e.json"
    # The writer stores records with EXECUTE alone.
    for r in a b e; do
        [ "$(upsert "$BATS_TEST_TMPDIR/$r.json" node)" = inserted ] || _fail "writer could not store $r"
    done

    [ "$(sql -U alice -c 'SELECT string_agg(jobid::text, $$,$$ ORDER BY jobid) FROM ceems.jobs')" = 1 ] ||
        _fail "alice sees other jobs"
    [ "$(sql -U bob -c 'SELECT string_agg(jobid::text, $$,$$ ORDER BY jobid) FROM ceems.jobs')" = 2 ] ||
        _fail "bob sees other jobs"
    [ "$(sql -U carol -c 'SELECT string_agg(jobid::text, $$,$$ ORDER BY jobid) FROM ceems.jobs')" = 1,3 ] ||
        _fail "carol (coordinator of phys) does not see exactly phys"
    [ "$(sql -U dave -c 'SELECT string_agg(jobid::text, $$,$$ ORDER BY jobid) FROM ceems.jobs')" = 1,2,3 ] ||
        _fail "dave (admin) does not see all"
    # Child tables and views follow their job.
    [ "$(sql -U alice -c 'SELECT count(DISTINCT job_key) FROM ceems.job_steps')" = 1 ] || _fail "alice: steps of other jobs"
    [ "$(sql -U alice -c 'SELECT count(*) FROM ceems.job_nodes')" = 1 ] || _fail "alice: nodes of other jobs"
    [ "$(sql -U alice -c 'SELECT sum(jobs) FROM ceems.usage_monthly')" = 1 ] || _fail "alice: usage of other jobs"
    # phys's two jobs: 40 J, 0.000011 kWh to the view's 6 places
    [ "$(sql -U carol -c 'SELECT sum(energy_kwh) FROM ceems.usage_by_account_month')" = 0.000011 ] ||
        _fail "carol: account usage"
    [ "$(sql -U bob -c 'SELECT count(*) FROM ceems.coordinators')" = 0 ] || _fail "bob reads the coordinators"

    # Users cannot write, nor call the writer's function.
    run sql -U alice -c "DELETE FROM ceems.jobs"
    [ "$status" -ne 0 ] || _fail "alice deleted jobs"
    run sql -U alice -c "UPDATE ceems.jobs SET package_j = 0"
    [ "$status" -ne 0 ] || _fail "alice updated jobs"
    run upsert "$BATS_TEST_TMPDIR/a.json" alice
    [ "$status" -ne 0 ] || _fail "alice called upsert_job_record"
    run sql -U alice -c "INSERT INTO ceems.coordinators VALUES ('chem', 'alice')"
    [ "$status" -ne 0 ] || _fail "alice made herself a coordinator"

    # The writer reads and changes nothing directly.
    for q in "SELECT count(*) FROM ceems.jobs" "SELECT count(*) FROM ceems.job_nodes" \
             "SELECT count(*) FROM ceems.coordinators" "SELECT count(*) FROM ceems.job_usage" \
             "DELETE FROM ceems.jobs" "UPDATE ceems.jobs SET package_j = 0" \
             "INSERT INTO ceems.clusters (name) VALUES ('x')" \
             "SELECT ceems.refresh_job(1)" "SELECT ceems.downsample_job_samples('1 day', 60)"; do
        run sql -U node -c "$q"
        [ "$status" -ne 0 ] || _fail "the writer could: $q ($output)"
        echo "$output" | grep -q "permission denied" || _fail "$q: $output"
    done
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs')" = 3 ] || _fail "jobs lost"

    # The admin maintains coordinators.
    sql -U dave -c "INSERT INTO ceems.coordinators VALUES ('chem', 'erin')" || _fail "admin cannot add a coordinator"
    [ "$(sql -U erin -c 'SELECT string_agg(jobid::text, $$,$$ ORDER BY jobid) FROM ceems.jobs')" = 2,3 ] ||
        _fail "erin, new coordinator of chem, does not see her job and chem's"
}

@test "steps and notes: a row without its job_nodes row is refused; they go with it (014)" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null && upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null
    key=$(sql -c "SELECT job_key FROM ceems.jobs")
    [ "$(sql -c "SELECT count(*) FROM ceems.job_steps WHERE job_key = $key AND node = 'n1'")" = 3 ] ||
        _fail "n1's steps not stored"
    # A note of each node row: it exists, so the check lets it in.
    sql -c "INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text)
            SELECT $key, n, 9, 'test-note', 'a note' FROM unnest('{n1,n2}'::text[]) n" >/dev/null ||
        _fail "a note of an existing node row refused"
    # Rows of a node the job has not: refused as a foreign key refuses.
    for q in "INSERT INTO ceems.job_steps (job_key, node, step_id, ended, elapsed_s, cpu_s)
                  VALUES ($key, 'n9', '0', true, 1, 1)" \
             "INSERT INTO ceems.job_notes (job_key, node, ordinal, note_id, text)
                  VALUES ($key + 1, 'n1', 0, 'test-note', 'x')" \
             "UPDATE ceems.job_steps SET node = 'n9' WHERE job_key = $key AND node = 'n1' AND step_id = 'batch'" \
             "UPDATE ceems.job_nodes SET node = 'n9' WHERE job_key = $key AND node = 'n1'"; do
        run sql -v VERBOSITY=verbose -c "$q"
        [ "$status" -ne 0 ] || _fail "accepted: $q"
        [[ "$output" == *23503* ]] || _fail "not a foreign key violation: $q: $output"
    done
    # A node row's steps and notes go with it, and the other node's stay.
    sql -c "DELETE FROM ceems.job_nodes WHERE job_key = $key AND node = 'n1'" >/dev/null
    [ "$(sql -c "SELECT count(*) FROM ceems.job_steps WHERE node = 'n1'") $(sql -c "SELECT count(*) FROM ceems.job_notes WHERE node = 'n1'")" = "0 0" ] ||
        _fail "n1's steps or notes outlived its row"
    [ "$(sql -c "SELECT count(*) FROM ceems.job_steps WHERE node = 'n2'") $(sql -c "SELECT count(*) FROM ceems.job_notes WHERE node = 'n2' AND note_id = 'test-note'")" = "3 1" ] ||
        _fail "n2's steps or notes went too"
    # A job's go with it (its node rows by their foreign key).
    sql -c "DELETE FROM ceems.jobs WHERE job_key = $key" >/dev/null
    [ "$(sql -c "SELECT (SELECT count(*) FROM ceems.job_nodes) + (SELECT count(*) FROM ceems.job_steps) + (SELECT count(*) FROM ceems.job_notes)")" = 0 ] ||
        _fail "rows outlived their job"
    # And TRUNCATE.
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null || _fail "store again"
    sql -c "TRUNCATE ceems.jobs CASCADE" >/dev/null 2>&1 || _fail "truncate"
    [ "$(sql -c "SELECT (SELECT count(*) FROM ceems.job_steps) + (SELECT count(*) FROM ceems.job_notes)")" = 0 ] ||
        _fail "steps or notes outlived a TRUNCATE"
}

@test "db cluster: jobs rewritten in the order of (user, start); nothing else changes" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null && upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null
    # Stored out of that order: aaron's job after alice's, zed's before
    # bob's.
    "$GEN" cluster=c1 jobid=44 uid=1003 user=aaron account=chem start=1702000000 node=n3 written_at=1702000100 \
        elapsed=10 package_j=20 steps=1 >"$BATS_TEST_TMPDIR/dec.json"
    "$GEN" cluster=c1 jobid=43 uid=1001 user=bob account=chem start=1700000000 node=n3 \
        elapsed=10 package_j=20 steps=2 >"$BATS_TEST_TMPDIR/other.json"
    "$GEN" cluster=c1 jobid=45 uid=1004 user=zed account=chem start=1690000000 node=n3 \
        elapsed=10 package_j=20 steps=1 >"$BATS_TEST_TMPDIR/jul.json"
    for f in dec other jul; do
        upsert "$BATS_TEST_TMPDIR/$f.json" >/dev/null || _fail "upsert $f"
    done
    before=$(contents)
    run admin db cluster
    [ "$status" -eq 0 ] || _fail "db cluster: $output"
    [[ "$output" == "ceems.jobs rewritten in the order of jobs_user_start in "* ]] || _fail "output: $output"
    [ "$(sql -c "SELECT indisclustered FROM pg_index WHERE indexrelid = 'ceems.jobs_user_start'::regclass")" = t ] ||
        _fail "jobs_user_start is not the table's cluster index"
    order=$(sql -c "SELECT string_agg(user_name, ',' ORDER BY ctid) FROM ceems.jobs")
    [ "$order" = aaron,alice,bob,zed ] || _fail "heap order: $order"
    [ "$(contents)" = "$before" ] || _fail "rows changed: $(diff <(echo "$before") <(contents))"
    # The writer goes on as before.
    [ "$(upsert "$BATS_TEST_TMPDIR/n1.json" node)" = unchanged ] || _fail "replay after cluster"
    run admin db cluster extra
    [ "$status" -eq 2 ] || _fail "an extra argument accepted: $output"
    # A lock it cannot have: it gives up, and the table stays as it was.
    "$GEN" cluster=c1 jobid=46 uid=1005 user=abe account=chem start=1700000200 node=n3 \
        elapsed=10 package_j=20 steps=1 >"$BATS_TEST_TMPDIR/abe.json"
    upsert "$BATS_TEST_TMPDIR/abe.json" >/dev/null || _fail "upsert abe"
    sql -c "BEGIN; LOCK TABLE ceems.jobs IN ACCESS SHARE MODE; SELECT pg_sleep(12); COMMIT" >/dev/null &
    sleep 1
    run admin db cluster
    wait
    [ "$status" -eq 1 ] || _fail "db cluster under a lock: status $status: $output"
    [[ "$output" == *"lock timeout"* ]] || _fail "no word of the lock: $output"
    order=$(sql -c "SELECT string_agg(user_name, ',' ORDER BY ctid) FROM ceems.jobs")
    [ "$order" = aaron,alice,bob,zed,abe ] || _fail "heap order after a failed rewrite: $order"
}

@test "views: usage and idle-allocated waste come from the job rows" {
    local view idle_j idle_kwh
    admin db init >/dev/null || _fail "db init"
    make_node_records
    upsert "$BATS_TEST_TMPDIR/n1.json" >/dev/null && upsert "$BATS_TEST_TMPDIR/n2.json" >/dev/null
    # Idle waste: 200000 J x (1 - 34400/57600) + 20000 J x (1 - sum of peaks / 16 GiB).
    idle_j=$(awk 'BEGIN { printf "%.3f", 200000 * (1 - 34400 / 57600) + 20000 * (1 - (2147483648 + 4147483648) / 17179869184) }')
    idle_kwh=$(awk -v j="$idle_j" 'BEGIN { printf "%.6f", j / 3.6e6 }')
    # The reports print as they are stored, rounded once from the jobs'
    # figures: 836000 J = 0.232222 kWh; 65 g; 16 CPUs x 1 h; 34400 CPU-s
    # = 9.5556 h; no GPU; CPU efficiency 34400 / 57600 = 0.5972.
    for view in usage_by_user_month usage_monthly usage_daily; do
        run sql -F ' ' -c "SELECT user_name, jobs, energy_kwh, emissions_kg, cpu_hours_alloc,
            cpu_hours_used, gpu_hours, cpu_efficiency, idle_alloc_kwh FROM ceems.$view"
        [ "$output" = "alice 1 0.232222 0.065000 16.0000 9.5556 0.0000 0.5972 $idle_kwh" ] ||
            _fail "$view: $output"
    done
    [ "$(sql -c "SELECT to_char(month, 'YYYY-MM') FROM ceems.usage_by_user_month")" = 2023-11 ] ||
        _fail "month: $(sql -c 'SELECT month FROM ceems.usage_by_user_month')"
    # Typed numeric, so that sums of rows are exact; the jobs' own view
    # keeps the tables' double precision for the dashboards.
    run sql -c "SELECT DISTINCT a.attrelid::regclass || ' ' || format_type(a.atttypid, a.atttypmod)
                FROM pg_attribute a
                WHERE a.attrelid IN ('ceems.usage_daily'::regclass, 'ceems.usage_monthly'::regclass,
                                     'ceems.usage_by_user_month'::regclass,
                                     'ceems.usage_by_account_month'::regclass,
                                     'ceems.usage_by_partition_month'::regclass,
                                     'ceems.idle_waste_by_user_month'::regclass,
                                     'ceems.idle_waste_jobs'::regclass, 'ceems.job_usage'::regclass)
                  AND a.attname IN ('energy_kwh', 'idle_alloc_kwh') ORDER BY 1"
    [ "$output" = "ceems.idle_waste_by_user_month numeric
ceems.idle_waste_jobs numeric
ceems.job_usage double precision
ceems.usage_by_account_month numeric
ceems.usage_by_partition_month numeric
ceems.usage_by_user_month numeric
ceems.usage_daily numeric
ceems.usage_monthly numeric" ] || _fail "column types: $output"
    got=$(sql -c "SELECT round(idle_alloc_j::numeric, 3) FROM ceems.job_usage")
    [ "$got" = "$idle_j" ] || _fail "idle_alloc_j $got, want $idle_j"
    run sql -F ' ' -c "SELECT jobs, idle_alloc_kwh, energy_kwh, idle_share, idle_cpu_hours
                       FROM ceems.idle_waste_by_user_month"
    [ "$output" = "1 $idle_kwh 0.232222 $(awk -v i="$idle_j" 'BEGIN { printf "%.4f", i / 836000 }') 6.4444" ] ||
        _fail "top wasters: $output"
}

@test "factors: ceems-admin factors load, idempotent, all or nothing" {
    admin db init >/dev/null || _fail "db init"
    run admin factors load "$FIXTURES/factors/yearly.csv"
    [ "$status" -eq 0 ] || _fail "load yearly: $output"
    [ "$output" = "loaded 3 emission factors from $FIXTURES/factors/yearly.csv" ] || _fail "$output"
    run admin factors load "$FIXTURES/factors/intervals.csv"
    [ "$status" -eq 0 ] || _fail "load intervals: $output"
    run sql -c "SELECT zone, to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'),
        coalesce(to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24'), '-'), g_per_kwh, source
        FROM ceems.emission_factors ORDER BY zone, valid_from"
    want='DE|2023-01-01 00|2024-01-01 00|380.95|test-yearly
DE|2024-01-01 00|2024-01-01 01|412.5|grid-hourly
DE|2024-01-01 01|-|399|grid "hourly"
FR|2023-01-01 00|2024-01-01 00|56.04|test, yearly
WORLD|2023-01-01 00|2024-01-01 00|480|test-yearly'
    [ "$output" = "$want" ] || _fail "factors: $output"
    before=$(sql -c "SELECT string_agg(xmin::text || x::text, ',' ORDER BY zone, valid_from) FROM ceems.emission_factors x")
    admin factors load "$FIXTURES/factors/yearly.csv" >/dev/null || _fail "reload"
    [ "$before" = "$(sql -c "SELECT string_agg(xmin::text || x::text, ',' ORDER BY zone, valid_from) FROM ceems.emission_factors x")" ] ||
        _fail "reloading the same file changed rows"
    # A bad row anywhere: nothing of the file is loaded.
    printf 'zone,year,g_per_kwh,source\nIT,2023,300,ok\nES,2023,oops,bad\n' >"$BATS_TEST_TMPDIR/bad.csv"
    run admin factors load "$BATS_TEST_TMPDIR/bad.csv"
    [ "$status" -ne 0 ] || _fail "bad file loaded"
    echo "$output" | grep -q "line 3: g_per_kwh" || _fail "no line number: $output"
    # Rejected by the database (valid_to before valid_from): rolled back.
    printf 'zone,valid_from,valid_to,g_per_kwh,source\nIT,2024-01-01,2025-01-01,300,ok\nES,2024-01-01,2023-01-01,200,bad\n' >"$BATS_TEST_TMPDIR/bad2.csv"
    run admin factors load "$BATS_TEST_TMPDIR/bad2.csv"
    [ "$status" -ne 0 ] || _fail "bad2 file loaded"
    echo "$output" | grep -q "line 3" || _fail "no line number: $output"
    [ "$(sql -c "SELECT count(*) FROM ceems.emission_factors WHERE zone IN ('IT', 'ES')")" = 0 ] ||
        _fail "part of a refused file was loaded"
}

@test "samples: stored idempotently into monthly partitions, downsampled with sums kept" {
    admin db init >/dev/null || _fail "db init"
    "$GEN" cluster=c1 jobid=7 uid=1000 user=alice start=1700000000 node=n1 elapsed=600 \
        package_j=600 >"$BATS_TEST_TMPDIR/j.json"
    upsert "$BATS_TEST_TMPDIR/j.json" >/dev/null
    # 60 samples of 10 s from 1700000100 (2023-11-14, a multiple of 300 s):
    # 1 J and 5 CPU-s each, so two 300 s buckets.
    jq -nc '{cluster: "c1", jobid: 7, start_time: 1700000000, node: "n1", resolution_s: 10,
             samples: [range(60) | {t: (1700000100 + . * 10), interval_s: 10, cpu_s: 5,
                                    mem_bytes: (1000 + .), package_j: 1}]}' >"$BATS_TEST_TMPDIR/s.json"
    add() {
        echo "SELECT ceems.add_job_samples(:'s'::jsonb)" |
            psql -X -At -v ON_ERROR_STOP=1 -U "${1:-postgres}" -v s="$(cat "$BATS_TEST_TMPDIR/s.json")"
    }
    [ "$(add node)" = 60 ] || _fail "the writer could not add samples"
    [ "$(add node)" = 0 ] || _fail "replayed samples were added again"
    [ "$(sql -c "SELECT count(*) FROM ceems.job_samples_y2023m11")" = 60 ] || _fail "not in the month's partition"
    [ "$(sql -U alice -c 'SELECT count(*) FROM ceems.job_samples')" = 60 ] || _fail "alice cannot see her samples"
    [ "$(sql -U bob -c 'SELECT count(*) FROM ceems.job_samples')" = 0 ] || _fail "bob sees alice's samples"
    run sql -U dave -c "SELECT ceems.downsample_job_samples('1 day', 300)"
    [ "$output" = 2 ] || _fail "downsample wrote $output rows"
    run sql -F ' ' -c "SELECT count(*), sum(package_j), sum(cpu_s), sum(interval_s), max(mem_bytes), min(resolution_s) FROM ceems.job_samples"
    [ "$output" = "2 60 300 600 1059 300" ] || _fail "after downsampling: $output"
}

# "MEAN" of the time-weighted GPU utilisation of samples.json's samples
# in the 300 s bucket starting at $1 (null where none has it).
_util_mean() {
    jq -r --argjson b "$1" '[.samples[] | select(.t >= $b and .t < $b + 300
                                              and .gpu_util_pct != null)] |
        if length == 0 then "null"
        else (map(.gpu_util_pct * .interval_s) | add) / (map(.interval_s) | add) end' \
        "$BATS_TEST_TMPDIR/s.json"
}

# True when numbers $1 and $2 agree to 1e-9 (relative).
_near() {
    awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d;
        exit !(d <= 1e-9 * (a < 0 ? -a : a) + 1e-12) }'
}

@test "samples: GPU utilisation stored, absent as null, averaged by time when downsampled" {
    admin db init >/dev/null || _fail "db init"
    "$GEN" cluster=c1 jobid=8 uid=1000 user=alice start=1700000000 node=n1 elapsed=900 \
        package_j=600 >"$BATS_TEST_TMPDIR/j.json"
    upsert "$BATS_TEST_TMPDIR/j.json" >/dev/null
    # Three 300 s buckets from 1700000100: in the first two, intervals of
    # 5, 10 and 15 s and utilisations that vary, every fourth sample
    # without one (as the records written before the column); in the
    # third none has one; a fourth holds 100 % over uneven intervals.
    jq -nc '{cluster: "c1", jobid: 8, start_time: 1700000000, node: "n1", resolution_s: 10,
             samples: ([range(60) | {t: (1700000100 + . * 10), interval_s: (5 + (. % 3) * 5),
                                     package_j: 1}
                                   + (if . % 4 == 3 then {} else {gpu_util_pct: ((. * 37) % 101)} end)]
                       + [range(30) | {t: (1700000700 + . * 10), interval_s: 10, package_j: 1}]
                       + [range(3) | {t: (1700001000 + . * 10), interval_s: (0.1 * (. + 1)),
                                      gpu_util_pct: 100}])}' >"$BATS_TEST_TMPDIR/s.json"
    add() {
        echo "SELECT ceems.add_job_samples(:'s'::jsonb)" |
            psql -X -At -v ON_ERROR_STOP=1 -U node -v s="$(cat "$BATS_TEST_TMPDIR/s.json")"
    }
    [ "$(add)" = 93 ] || _fail "the writer could not add samples"
    want=$(jq '[.samples[] | select(.gpu_util_pct != null)] | length' "$BATS_TEST_TMPDIR/s.json")
    [ "$(sql -c 'SELECT count(gpu_util_pct) FROM ceems.job_samples')" = "$want" ] ||
        _fail "stored utilisations: $(sql -c 'SELECT count(gpu_util_pct) FROM ceems.job_samples'), want $want"
    want=$(jq '[.samples[] | select(.gpu_util_pct != null) | .gpu_util_pct] | add' "$BATS_TEST_TMPDIR/s.json")
    got=$(sql -c 'SELECT sum(gpu_util_pct) FROM ceems.job_samples')
    _near "$got" "$want" || _fail "stored utilisations sum to $got, want $want"
    # Out of 0..100 is refused by the column.
    run sql -c "UPDATE ceems.job_samples SET gpu_util_pct = 100.5"
    [ "$status" -ne 0 ] && [[ $output == *"check constraint"* ]] ||
        _fail "a utilisation over 100 % was not refused by the column: $output"

    run sql -U dave -c "SELECT ceems.downsample_job_samples('1 day', 300)"
    [ "$output" = 4 ] || _fail "downsample wrote $output rows"
    for b in 1700000100 1700000400 1700000700 1700001000; do
        want=$(_util_mean "$b")
        got=$(sql -c "SELECT coalesce(gpu_util_pct::text, 'null') FROM ceems.job_samples
                      WHERE t = to_timestamp($b)")
        if [ "$want" = null ]; then
            [ "$got" = null ] || _fail "bucket $b: $got where no sample had a utilisation"
        else
            _near "$got" "$want" || _fail "bucket $b: mean $got, want $want"
        fi
    done
    [ "$(sql -c "SELECT gpu_util_pct = 100 FROM ceems.job_samples WHERE t = to_timestamp(1700001000)")" = t ] ||
        _fail "a mean of 100 % is not 100 %"

    # A sample that comes late into a merged bucket: the two weighted by
    # their time.
    before=$(sql -F ' ' -c "SELECT gpu_util_pct, interval_s FROM ceems.job_samples
                            WHERE t = to_timestamp(1700000100)")
    jq -nc '{cluster: "c1", jobid: 8, start_time: 1700000000, node: "n1", resolution_s: 10,
             samples: [{t: 1700000105, interval_s: 20, gpu_util_pct: 3}]}' >"$BATS_TEST_TMPDIR/s.json"
    [ "$(add)" = 1 ] || _fail "the late sample was not added"
    run sql -U dave -c "SELECT ceems.downsample_job_samples('1 day', 300)"
    [ "$output" = 1 ] || _fail "the late sample's downsample wrote $output rows"
    want=$(echo "$before" | awk '{ printf "%.17g", ($1 * $2 + 3 * 20) / ($2 + 20) }')
    got=$(sql -c "SELECT gpu_util_pct FROM ceems.job_samples WHERE t = to_timestamp(1700000100)")
    _near "$got" "$want" || _fail "late sample merged to $got, want $want"
}

# with_io FILE: FILE's record with a node's eBPF IO and network (020).
with_io() {
    jq -c '.measurements.io = {"read_bytes": 268435456, "read_ops": 256,
            "read_errors": 0, "write_bytes": 268435456, "write_ops": 260,
            "write_errors": 1}
        | .measurements.net = {"tcp4": {"in_bytes": 10, "out_bytes": 104857600,
            "in_msgs": 1, "out_msgs": 1800}, "tcp6": {"in_bytes": 0,
            "out_bytes": 0, "in_msgs": 0, "out_msgs": 0}, "udp4": {"in_bytes": 5,
            "out_bytes": 7, "in_msgs": 1, "out_msgs": 1}, "udp6": {"in_bytes": 0,
            "out_bytes": 0, "in_msgs": 0, "out_msgs": 0}, "tcp_retrans": 3}' "$1"
}

@test "io-net: a node's eBPF IO and network are stored, one by one and in a batch (020)" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    with_io "$T/n1.json" >"$T/n1io.json"
    # n2 did not measure them: the agent said why.
    jq -c '.measurements.ebpf_absent = "no permission to load eBPF programs"' \
        "$T/n2.json" >"$T/n2abs.json"
    [ "$(upsert "$T/n1io.json")" = inserted ] || _fail "upsert n1"
    [ "$(upsert "$T/n2abs.json")" = inserted ] || _fail "upsert n2"
    q="SELECT string_agg(concat_ws(' ', node, io_source, io_read_bytes, io_write_bytes,
            io_read_ops, io_write_errors, net_tcp4_out_bytes, net_udp4_in_bytes,
            net_in_msgs, net_out_msgs, tcp_retrans, coalesce(ebpf_absent, '-')), ',' ORDER BY node)
        FROM ceems.job_nodes"
    want="n1 syscall 268435456 268435456 256 1 104857600 5 2 1801 3 -,n2 no permission to load eBPF programs"
    [ "$(sql -c "$q")" = "$want" ] || _fail "job_nodes: $(sql -c "$q")"
    # The job's sums over the nodes that measured them.
    run sql -F ' ' -c "SELECT io_read_bytes, io_write_bytes, net_in_bytes, net_out_bytes,
        tcp_retrans, io_all_syscall, nodes_not_measured FROM ceems.job_io_net"
    [ "$output" = "268435456 268435456 15 104857607 3 t 1" ] || _fail "job_io_net: $output"
    # A replay changes nothing; the batch stores the same rows.
    before=$(snapshot)
    [ "$(upsert "$T/n1io.json")" = unchanged ] || _fail "replay"
    [ "$(snapshot)" = "$before" ] || _fail "a replay changed rows"
    one_by_one=$(contents)
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf"
    [ "$(upsert_batch -U node "$T/n2abs.json" "$T/n1io.json")" = "{inserted,inserted}" ] ||
        _fail "batch"
    [ "$(contents)" = "$one_by_one" ] || _fail "batch differs: $(diff <(echo "$one_by_one") <(contents))"
    # ceems-sacct reads them from the database: the measured node's IO
    # and network, marked partial (+): n2 did not measure them, and one
    # node's part is not the job's.
    printf 'cluster = c1\nspool_dir = %s/no-spool\ndatabase = host=%s port=%s dbname=%s user=postgres\n' \
        "$T" "$PGHOST" "$PGPORT" "$DB" >"$T/sacct.conf"
    run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$T/sacct.conf" -a -X -n -P -j 42 \
        -S 2023-01-01 --format=JobID,ReadBytes,WriteBytes,NetIn,NetOut
    [ "$status" -eq 0 ] || _fail "ceems-sacct: $output"
    [ "$output" = "42|256.00M+|256.00M+|15+|100.00M+" ] || _fail "ceems-sacct: $output"
    # A fraction of a byte is refused, and writes nothing.
    jq -c '.measurements.io.read_bytes = 1.5 | .written_at += 1' "$T/n1io.json" >"$T/bad.json"
    run upsert "$T/bad.json"
    [ "$status" -ne 0 ] || _fail "a fractional byte count was stored"
    [ "$(contents)" = "$one_by_one" ] || _fail "the refused record wrote rows"
}

@test "io-net: a node that counted IO per tick: its bytes and calls, source task, no errors; the job's IO not all syscall (032)" {
    admin db init >/dev/null || _fail "db init"
    make_node_records
    T=$BATS_TEST_TMPDIR
    with_io "$T/n1.json" >"$T/n1io.json"
    jq -c '.measurements.io = {"counting": "per-tick", "read_bytes": 1000,
            "read_ops": 10, "write_bytes": 2000, "write_ops": 20}' "$T/n2.json" >"$T/n2tick.json"
    [ "$(upsert "$T/n1io.json")" = inserted ] || _fail "upsert n1"
    [ "$(upsert "$T/n2tick.json")" = inserted ] || _fail "upsert n2"
    q="SELECT concat_ws(' ', coalesce(io_source, '-'), io_read_bytes, io_write_bytes,
            io_read_ops, io_write_ops, coalesce(io_read_errors::text, '-'),
            coalesce(net_tcp4_out_bytes::text, '-'))
        FROM ceems.job_nodes WHERE node = 'n2'"
    [ "$(sql -c "$q")" = "task 1000 2000 10 20 - -" ] || _fail "n2: $(sql -c "$q")"
    run sql -F ' ' -c "SELECT io_read_bytes, io_all_syscall FROM ceems.job_io_net"
    [ "$output" = "268436456 f" ] || _fail "job_io_net: $output"
}

@test "upsert: the emissions fallback share and idle_unlearned flags reach job_nodes and jobs (024)" {
    admin db init >/dev/null || _fail "db init"
    local T=$BATS_TEST_TMPDIR
    # Job 42: two nodes with an intensity series, a quarter and a half of
    # their energy at the yearly figure; n1 split its dram, n2 its
    # package before their idle power was learned.
    "$GEN" $COMMON node=n1 covered_s=3600 lifetime_s=3600 package_j=360000 dram_j=36000 emissions_g=30 \
        fallback=0.25 idle_unlearned=dram written_at=1700003710 >"$T/f1.json" || _fail "record-gen f1"
    "$GEN" $COMMON node=n2 covered_s=3600 lifetime_s=3600 package_j=400000 dram_j=40000 emissions_g=35 \
        fallback=0.5 idle_unlearned=package written_at=1700003720 >"$T/f2.json" || _fail "record-gen f2"
    # Job 43: one node with a series that covered it all, one without a
    # series (no share: NULL, not 0), neither flagged.
    local c43=${COMMON/jobid=42/jobid=43}
    "$GEN" $c43 node=n1 covered_s=3600 lifetime_s=3600 package_j=100000 emissions_g=10 fallback=0 \
        written_at=1700003710 >"$T/g1.json" || _fail "record-gen g1"
    "$GEN" $c43 node=n2 covered_s=3600 lifetime_s=3600 package_j=300000 emissions_g=30 \
        written_at=1700003720 >"$T/g2.json" || _fail "record-gen g2"
    # Job 44: no energy domain, no emissions: nothing known.
    local c44=${COMMON/jobid=42/jobid=44}
    "$GEN" ${c44/zone=FR/} node=n1 written_at=1700003710 >"$T/h1.json" || _fail "record-gen h1"
    for f in f1 f2 g1 g2 h1; do
        [ "$(upsert "$T/$f.json")" = inserted ] || _fail "upsert $f"
    done

    run sql -F ' ' -c "SELECT j.jobid, n.node, coalesce(n.emission_fallback::text, 'null'),
            coalesce(n.package_idle_unlearned::text, 'null'), coalesce(n.dram_idle_unlearned::text, 'null')
        FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) ORDER BY 1, 2"
    [ "$output" = "42 n1 0.25 false true
42 n2 0.5 true false
43 n1 0 false null
43 n2 null false null
44 n1 null null null" ] || _fail "node rows: $output"
    # The job's share weighted by its nodes' energy (job 42: 396 kJ at a
    # quarter, 440 kJ at a half); job 43's only node with a series.
    run sql -F ' ' -c "SELECT jobid, coalesce(round(emission_fallback::numeric, 6)::text, 'null'),
            coalesce(package_idle_unlearned::text, 'null'), coalesce(dram_idle_unlearned::text, 'null')
        FROM ceems.jobs ORDER BY 1"
    [ "$output" = "42 $(awk 'BEGIN { printf "%.6f", (0.25 * 396000 + 0.5 * 440000) / 836000 }') true true
43 0.000000 false null
44 null null null" ] || _fail "job rows: $output"

    # The set-wise path stores the same rows.
    local loop batch
    loop=$(contents)
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf" >/dev/null
    upsert_batch "$T/f1.json" "$T/f2.json" "$T/g1.json" "$T/g2.json" "$T/h1.json" >/dev/null ||
        _fail "batch"
    batch=$(contents)
    [ "$loop" = "$batch" ] || _fail "batch differs: $(diff <(echo "$loop") <(echo "$batch"))"

    # A share is within 0..1 in both tables.
    run sql -c "UPDATE ceems.job_nodes SET emission_fallback = 1.5"
    [ "$status" -ne 0 ] || _fail "job_nodes took a share of 1.5"
    run sql -c "UPDATE ceems.jobs SET emission_fallback = -0.1"
    [ "$status" -ne 0 ] || _fail "jobs took a share of -0.1"
}

@test "schema: rows stored before migration 024 hold NULL quality figures, not 0 or false" {
    local T=$BATS_TEST_TMPDIR
    admin db migrate --to 23 >/dev/null || _fail "migrate --to 23"
    # Version 23 has no functions: its rows are written as a table of
    # that version holds them.
    sql -c "INSERT INTO ceems.clusters (name) VALUES ('c1')" >/dev/null
    sql -c "INSERT INTO ceems.jobs (cluster_id, jobid, start_time, uid, user_name,
                meta_written_at, meta_node, meta_digest)
            SELECT cluster_id, 42, to_timestamp(1700000100), 1000, 'alice', now(), 'n1', 'x'
            FROM ceems.clusters" >/dev/null ||
        _fail "a jobs row at 23"
    sql -c "INSERT INTO ceems.job_nodes (job_key, node, written_at, finalized_by, record_digest,
                job_meta, elapsed_s, gap_s, cgroup_gone, package_j, package_covered_s)
            SELECT job_key, 'n1', now(), 'extern', 'x', '{}', 60, 0, false, 1000, 60
            FROM ceems.jobs" >/dev/null ||
        _fail "a job_nodes row at 23"
    admin db migrate >/dev/null || _fail "migrate"
    run sql -c "SELECT count(*) FROM ceems.job_nodes WHERE emission_fallback IS NULL
                  AND package_idle_unlearned IS NULL AND dram_idle_unlearned IS NULL"
    [ "$output" = 1 ] || _fail "job_nodes: $output"
    run sql -c "SELECT count(*) FROM ceems.jobs WHERE emission_fallback IS NULL
                  AND package_idle_unlearned IS NULL AND dram_idle_unlearned IS NULL"
    [ "$output" = 1 ] || _fail "jobs: $output"
}

@test "marks: a record's work is stored once, replaced with its node, seen by its owner only; the history flags a 30% rise, not noise (029)" {
    admin db init >/dev/null || _fail "db init"
    T=$BATS_TEST_TMPDIR
    C="cluster=c1 uid=1000 user=alice account=phys state=COMPLETED exit=0 cpus=8 nnodes=1 zone=FR pue=1.2 steps=1 name=lammps-md"
    i=0
    # Five runs of lammps-md by alice; the fourth used 30% more per step.
    for e in 100000 101000 99000 130000 102000; do
        i=$((i + 1)); s=$((1700000000 + i * 10000))
        "$GEN" $C jobid=$((40 + i)) submit=$s start=$((s + 100)) end=$((s + 3700)) node=n1 \
            elapsed=3600 package_j=$e written_at=$((s + 3710)) >"$T/r$i.json" || _fail "record-gen $i"
        jq -c '. + {marks: [{name: "steps", unit: "timesteps", work: 50000, marks: 120}]}' \
            "$T/r$i.json" >"$T/m$i.json"
    done
    for i in 1 2 3; do [ "$(upsert "$T/m$i.json" node)" = inserted ] || _fail "store run $i"; done
    # Runs 4 and 5 through the set-wise path.
    [ "$(upsert_batch -U node "$T/m4.json" "$T/m5.json")" = "{inserted,inserted}" ] || _fail "batch"
    "$GEN" cluster=c1 jobid=99 uid=1001 user=bob account=chem start=1700000000 node=n1 \
        elapsed=10 package_j=20 steps=1 name=lammps-md >"$T/b.json"
    jq -c '. + {marks: [{name: "steps", unit: "timesteps", work: 10, marks: 1}]}' "$T/b.json" >"$T/mb.json"
    [ "$(upsert "$T/mb.json" node)" = inserted ] || _fail "bob's run"

    [ "$(sql -c 'SELECT count(*) FROM ceems.job_marks')" = 6 ] || _fail "one row per run's counter"
    [ "$(upsert "$T/m1.json")" = unchanged ] || _fail "a replay"
    [ "$(sql -c 'SELECT count(*) FROM ceems.job_marks')" = 6 ] || _fail "a replay added rows"
    # The energy per step is the job's energy over its work, from the rows.
    [ "$(sql -c "SELECT energy_per_work_j = total_j / work FROM ceems.job_work WHERE jobid = 44")" = t ] ||
        _fail "energy per work is not energy / work"
    [ "$(sql -U alice -c "SELECT string_agg(jobid || ':' || notable, ',' ORDER BY jobid)
                          FROM ceems.job_work_history")" = "41:false,42:false,43:false,44:true,45:false" ] ||
        _fail "notable runs: $(sql -U alice -c 'SELECT * FROM ceems.job_work_history')"
    [ "$(sql -U alice -c "SELECT round(vs_previous::numeric, 3) FROM ceems.job_work_history WHERE jobid = 44")" = 0.300 ] ||
        _fail "the 30% rise"
    [ "$(sql -U bob -c 'SELECT string_agg(jobid::text, $$,$$) FROM ceems.job_marks JOIN ceems.jobs USING (job_key)')" = 99 ] ||
        _fail "bob sees others' marks"
    [ "$(sql -U bob -c 'SELECT users FROM ceems.work_by_application')" = 1 ] || _fail "bob's view of the application"
    [ "$(sql -U dave -c 'SELECT users || $$/$$ || jobs FROM ceems.work_by_application')" = 2/6 ] ||
        _fail "the admin's view of the application"
    # A newer record of a node replaces its marks with it.
    jq -c '.written_at += 5 | .marks[0].work = 40000' "$T/m1.json" >"$T/m1b.json"
    [ "$(upsert "$T/m1b.json")" = replaced ] || _fail "the newer record"
    [ "$(sql -c "SELECT work FROM ceems.job_marks JOIN ceems.jobs USING (job_key) WHERE jobid = 41")" = 40000 ] ||
        _fail "the marks were not replaced"
    # Bad marks refuse the record, and write nothing.
    jq -c '.jobid = 77 | .job.jobid = 77 | .measurements.jobid = 77 | .marks = [{name: "x y", unit: "u", work: 1, marks: 1}]' \
        "$T/m1.json" >"$T/bad.json"
    run upsert "$T/bad.json"
    [ "$status" -ne 0 ] || _fail "a bad counter name was stored"
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs WHERE jobid = 77')" = 0 ] || _fail "the bad record left a job"
}

@test "work tags and intervals: a counter's tag is stored, the admins' view groups by tag, else job name; work per interval beside power (034)" {
    admin db init >/dev/null || _fail "db init"
    T=$BATS_TEST_TMPDIR
    # alice and bob run lammps under job names of their own, tagged;
    # carol runs an untagged job named lammps: a name, not the tag.
    i=0
    for run in "1000 alice run-a lammps 100000" "1001 bob md-big lammps 150000" \
               "1002 carol lammps - 90000"; do
        set -- $run
        i=$((i + 1)); s=$((1700000000 + i * 10000))
        "$GEN" cluster=c1 uid=$1 user=$2 account=phys state=COMPLETED exit=0 cpus=8 nnodes=1 \
            zone=FR pue=1.2 steps=1 name=$3 jobid=$((60 + i)) submit=$s start=$((s + 100)) \
            end=$((s + 3700)) node=n1 elapsed=3600 package_j=$5 written_at=$((s + 3710)) \
            >"$T/r$i.json" || _fail "record-gen $i"
        if [ "$4" = - ]; then tag='{}'; else tag="{tag: \"$4\"}"; fi
        jq -c ". + {marks: [{name: \"steps\", unit: \"timesteps\", work: 50000, marks: 9} + $tag]}" \
            "$T/r$i.json" >"$T/m$i.json"
    done
    # alice's run marked its work per 100-s interval: 50 steps in the
    # first, 25 in one her series does not cover.
    jq -c '.marks[0] += {interval_s: 100, intervals: [[1700010100, 50], [1700010500, 25]]}' \
        "$T/m1.json" >"$T/m1i.json" && mv "$T/m1i.json" "$T/m1.json"
    for i in 1 2; do [ "$(upsert "$T/m$i.json" node)" = inserted ] || _fail "store run $i"; done
    [ "$(upsert_batch -U node "$T/m3.json")" = "{inserted}" ] || _fail "the set-wise path"
    # Her series: 20 rows of 10 s and 1 J from the job's start.
    jq -nc '{cluster: "c1", jobid: 61, start_time: 1700010100, node: "n1", resolution_s: 10,
             samples: [range(20) | {t: (1700010100 + . * 10), interval_s: 10, package_j: 1}]}' \
        >"$T/s.json"
    [ "$(echo "SELECT ceems.add_job_samples(:'s'::jsonb)" |
         psql -X -At -v ON_ERROR_STOP=1 -U node -v s="$(cat "$T/s.json")")" = 20 ] || _fail "samples"
    run sql -F ' ' -c "SELECT extract(epoch FROM t)::bigint, work, coalesce(energy_j::text, '-'),
                              coalesce(power_w::text, '-'), coalesce(energy_per_work_j::text, '-')
                       FROM ceems.job_work_series WHERE jobid = 61 ORDER BY t"
    [ "$output" = "1700010100 50 10 0.1 0.2
1700010200 0 10 0.1 -
1700010500 25 - - -" ] || _fail "work beside power: $output"
    # A row standing for more than an interval (a bucket downsampled to
    # 300 s) cannot be put in one: its interval's energy is unknown.
    sql -c "INSERT INTO ceems.job_samples (job_key, node, t, resolution_s, interval_s, package_j)
            SELECT job_key, 'n1', to_timestamp(1700010500), 300, 300, 30
            FROM ceems.jobs WHERE jobid = 61" >/dev/null || _fail "a downsampled row"
    [ "$(sql -c "SELECT coalesce(energy_j::text, '-') || ' ' || work FROM ceems.job_work_series
                 WHERE jobid = 61 AND extract(epoch FROM t) = 1700010500")" = "- 25" ] ||
        _fail "a downsampled row's energy put in one interval"
    [ "$(sql -U bob -c 'SELECT count(*) FROM ceems.job_mark_intervals')" = 0 ] ||
        _fail "bob sees alice's intervals"
    [ "$(sql -U alice -c 'SELECT count(*) FROM ceems.job_work_series')" = 3 ] ||
        _fail "alice does not see her intervals"
    [ "$(sql -c "SELECT string_agg(jobid || ':' || coalesce(tag, '-'), ',' ORDER BY jobid)
                 FROM ceems.job_work")" = "61:lammps,62:lammps,63:-" ] ||
        _fail "tags: $(sql -c 'SELECT jobid, tag FROM ceems.job_work')"
    run sql -F ' ' -c "SELECT application, grouped_by, users, jobs, min_energy_per_work_j,
                              max_energy_per_work_j
                       FROM ceems.work_by_application ORDER BY grouped_by"
    [ "$output" = "lammps job_name 1 1 1.8 1.8
lammps tag 2 2 2 3" ] || _fail "by application: $output"
    [ "$(sql -U alice -c 'SELECT application || $$/$$ || users FROM ceems.work_by_application')" = lammps/1 ] ||
        _fail "alice sees others' runs"
    # A tag that is not a name refuses the record, which writes nothing.
    jq -c '.jobid = 77 | .job.jobid = 77 | .measurements.jobid = 77 | .marks[0].tag = "a b"' \
        "$T/m1.json" >"$T/bad.json"
    run upsert "$T/bad.json"
    [ "$status" -ne 0 ] || _fail "a bad tag was stored"
    jq -c '.jobid = 78 | .job.jobid = 78 | .measurements.jobid = 78 | .marks[0].tag = 7' \
        "$T/m1.json" >"$T/bad2.json"
    run upsert "$T/bad2.json"
    [ "$status" -ne 0 ] || _fail "a tag that is a number was stored"
    jq -c '.jobid = 79 | .job.jobid = 79 | .measurements.jobid = 79 | .marks[0].intervals = [[1, "x"]]' \
        "$T/m1.json" >"$T/bad3.json"
    run upsert "$T/bad3.json"
    [ "$status" -ne 0 ] || _fail "an interval that is not [t, work] was stored"
    [ "$(sql -c 'SELECT count(*) FROM ceems.jobs WHERE jobid IN (77, 78, 79)')" = 0 ] ||
        _fail "a bad record left a job"
    # A newer record of the node replaces its intervals with its marks.
    jq -c '.written_at += 5 | .marks[0].intervals = [[1700010100, 7]]' "$T/m1.json" >"$T/m1b.json"
    [ "$(upsert "$T/m1b.json")" = replaced ] || _fail "the newer record"
    [ "$(sql -c "SELECT string_agg(work::text, ',') FROM ceems.job_mark_intervals")" = 7 ] ||
        _fail "the intervals were not replaced: $(sql -c 'SELECT * FROM ceems.job_mark_intervals')"
}

@test "upsert: each domain's energy error bound reaches job_nodes, the node's and the job's bound add up, unknown stays null (030)" {
    admin db init >/dev/null || _fail "db init"
    local T=$BATS_TEST_TMPDIR
    # Job 42: two nodes whose every domain has a bound.
    "$GEN" $COMMON node=n1 covered_s=3600 lifetime_s=3600 package_j=360000 dram_j=36000 \
        err=package,0.5,0,100,20 err=dram,0.25,0,0,3 written_at=1700003710 >"$T/e1.json" ||
        _fail "record-gen e1"
    "$GEN" $COMMON node=n2 covered_s=3600 lifetime_s=3600 package_j=400000 \
        err=package,1,2,300,0 written_at=1700003720 >"$T/e2.json" || _fail "record-gen e2"
    # Job 43: one node's dram has energy and no bound (unknown): the
    # node's and the job's bounds are unknown, not the package's alone.
    local c43=${COMMON/jobid=42/jobid=43}
    "$GEN" $c43 node=n1 covered_s=3600 lifetime_s=3600 package_j=100000 dram_j=1000 \
        err=package,1,0,0,0 written_at=1700003710 >"$T/u1.json" || _fail "record-gen u1"
    for f in e1 e2 u1; do
        [ "$(upsert "$T/$f.json")" = inserted ] || _fail "upsert $f"
    done
    run sql -F ' ' -c "SELECT j.jobid, n.node, n.package_err_source_j, n.package_err_lag_j,
            n.package_err_idle_power_j, n.package_err_gaps_j,
            coalesce(n.dram_err_gaps_j::text, 'null'), coalesce(n.energy_err_j::text, 'null')
        FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) ORDER BY 1, 2"
    [ "$output" = "42 n1 0.5 0 100 20 3 123.75
42 n2 1 2 300 0 null 303
43 n1 1 0 0 0 null null" ] || _fail "node rows: $output"
    run sql -F ' ' -c "SELECT jobid, coalesce(energy_err_j::text, 'null') FROM ceems.jobs ORDER BY 1"
    [ "$output" = "42 426.75
43 null" ] || _fail "job rows: $output"

    # The set-wise path stores the same rows.
    local loop batch
    loop=$(contents)
    sql -c "TRUNCATE ceems.jobs, ceems.job_nodes, ceems.job_steps, ceems.job_notes, ceems.job_node_perf" >/dev/null
    upsert_batch "$T/e1.json" "$T/e2.json" "$T/u1.json" >/dev/null || _fail "batch"
    batch=$(contents)
    [ "$loop" = "$batch" ] || _fail "batch differs: $(diff <(echo "$loop") <(echo "$batch"))"

    # A bound is never negative.
    run sql -c "UPDATE ceems.job_nodes SET gpu_err_gaps_j = -1"
    [ "$status" -ne 0 ] || _fail "job_nodes took a bound of -1 J"
    run sql -c "UPDATE ceems.jobs SET energy_err_j = -1"
    [ "$status" -ne 0 ] || _fail "jobs took a bound of -1 J"
}

# A day whose intensity changes (300 g/kWh at night, 100 in the
# morning, 200 in the afternoon, 400 in the evening), two days long from
# 2023-11-14 00:00 UTC, as ceems-admin factors export writes it.
write_day_series() {
    local f base=1699920000 d h g
    f=$1
    printf 'ceems-intensity 1\nzone FR\nsource test-day\n' >"$f"
    for d in 0 1; do
        for h in $(seq 0 23); do
            if [ "$h" -lt 6 ]; then g=300; elif [ "$h" -lt 12 ]; then g=100
            elif [ "$h" -lt 18 ]; then g=200; else g=400; fi
            echo "$((base + d * 86400 + h * 3600)) $((base + d * 86400 + (h + 1) * 3600)) $g" >>"$f"
        done
    done
}

@test "advice: each node's carbon-aware advice reaches job_nodes; the month's shiftable emissions per account, each user their own (033)" {
    admin db init >/dev/null || _fail "db init"
    local T=$BATS_TEST_TMPDIR day=1699920000
    write_day_series "$T/series"
    local a="cluster=c1 uid=1000 user=alice account=phys state=COMPLETED node=n1 zone=FR intensity=$T/series"
    local b="cluster=c1 uid=1001 user=bob account=chem state=COMPLETED node=n1 zone=FR intensity=$T/series"
    # By hand: 1 kWh at 19:00 (400 g/kWh) is 400 g; the greenest start
    # within 24 h is the next day's 06:00 (100 g/kWh): 100 g.
    "$GEN" $a jobid=42 pue=1 start=$((day + 19 * 3600)) end=$((day + 20 * 3600)) elapsed=3600 \
        package_j=3600000 emissions_g=400 written_at=$((day + 20 * 3600 + 10)) >"$T/j42.json" || _fail "gen 42"
    # 2 kWh from 05:00 at PUE 1.5: 1 kWh at 300 and 1 at 100, 600 g; from
    # 06:00 both hours at 100: 300 g.
    "$GEN" $a jobid=43 pue=1.5 start=$((day + 5 * 3600)) end=$((day + 7 * 3600)) elapsed=7200 \
        package_j=7200000 emissions_g=600 written_at=$((day + 7 * 3600 + 10)) >"$T/j43.json" || _fail "gen 43"
    # Job 42's twin in a dependency chain: the same saving, no note, not
    # free to move.
    "$GEN" $b jobid=44 pue=1 dependency=yes start=$((day + 19 * 3600)) end=$((day + 20 * 3600)) \
        elapsed=3600 package_j=3600000 emissions_g=400 written_at=$((day + 20 * 3600 + 10)) >"$T/j44.json" ||
        _fail "gen 44"
    # Already in the greenest hours: no saving.
    "$GEN" $b jobid=45 pue=1 start=$((day + 7 * 3600)) end=$((day + 8 * 3600)) elapsed=3600 \
        package_j=3600000 emissions_g=100 written_at=$((day + 8 * 3600 + 10)) >"$T/j45.json" || _fail "gen 45"
    # A node with the yearly figure only: no advice, unknown.
    "$GEN" ${b/intensity=$T\/series/} jobid=46 pue=1 start=$((day + 7 * 3600)) end=$((day + 8 * 3600)) \
        elapsed=3600 package_j=3600000 emissions_g=300 written_at=$((day + 8 * 3600 + 10)) >"$T/j46.json" ||
        _fail "gen 46"
    for j in 42 43 44 45 46; do
        [ "$(upsert "$T/j$j.json")" = inserted ] || _fail "upsert $j"
    done
    run sql -F ' ' -c "SELECT j.jobid, coalesce(n.advice_verdict, 'null'), coalesce(n.advice_actual_g::text, '-'),
            coalesce((extract(epoch FROM n.advice_best_start)::bigint - $day)::text, '-'),
            coalesce(n.advice_best_g::text, '-'), coalesce(n.advice_saving_g::text, '-'),
            (SELECT count(*) FROM ceems.job_notes t WHERE t.job_key = j.job_key AND t.note_id = 'carbon-shift')
        FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) ORDER BY 1"
    [ "$output" = "42 worth 400 108000 100 300 1
43 worth 600 21600 300 300 1
44 dependency chain 400 108000 100 300 0
45 small saving 100 25200 100 0 0
46 null - - - - 0" ] || _fail "node rows: $output"
    run sql -F ' ' -c "SELECT to_char(month, 'YYYY-MM'), account, jobs, jobs_advised, jobs_noted, emissions_kg,
            advised_emissions_kg, shiftable_kg, noted_kg, shiftable_share
        FROM ceems.carbon_shift_by_account_month ORDER BY 2"
    [ "$output" = "2023-11 chem 3 2 0 0.800000 0.500000 0.000000 0.000000 0.0000
2023-11 phys 2 2 2 1.000000 1.000000 0.600000 0.600000 0.6000" ] || _fail "month: $output"
    # Each user their own jobs.
    [ "$(sql -U alice -c "SELECT string_agg(account, ',') FROM ceems.carbon_shift_by_account_month")" = phys ] ||
        _fail "alice sees other accounts"
    [ "$(sql -U bob -c "SELECT string_agg(jobid::text, ',' ORDER BY jobid) FROM ceems.job_carbon_advice")" = 44,45 ] ||
        _fail "bob's advised jobs"
    # ceems-sacct's CO2eSaving: the saving, 0 where none was greener,
    # empty where no series covered the job.
    printf 'database = host=%s port=%s dbname=%s user=postgres\ncluster = c1\n' \
        "$PGHOST" "$PGPORT" "$DB" >"$T/sacct.conf"
    run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$T/sacct.conf" -a -X -n -P \
        -S 2023-11-01 -E 2023-12-01 -o JobID,CO2eSaving
    [ "$output" = "43|300 g
45|0 g
46|
42|300 g
44|300 g" ] || _fail "CO2eSaving: $output"
    # Part of the advice is none of it; a best above the actual is refused.
    run sql -c "UPDATE ceems.job_nodes SET advice_best_start = NULL WHERE advice_verdict = 'worth'"
    [ "$status" -ne 0 ] || _fail "job_nodes took advice without its best start"
    run sql -c "UPDATE ceems.job_nodes SET advice_best_g = advice_actual_g + 1 WHERE advice_verdict = 'worth'"
    [ "$status" -ne 0 ] || _fail "job_nodes took a best above the actual emissions"
}
