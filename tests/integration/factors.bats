#!/usr/bin/env bats
# tests/integration/factors.bats -- time-varying carbon intensity against
# a real PostgreSQL 15 (tests/harness/pg.sh): `ceems-admin factors export`
# writes the node's intensity cache from ceems.emission_factors (windows,
# NULL valid_to, yearly rows left out, atomic rewrite, nothing written
# when there is nothing to write).
#
# Run as root:  CEEMS_TOP_BUILDDIR=$PWD bats --tap ../../tests/integration/factors.bats
# Needs: postgresql-15, bats; a build with libpq (tools/ceems-admin).

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
    psql -X -q -v ON_ERROR_STOP=1 -d postgres <<'EOF2' || return 1
CREATE ROLE ceems_writer NOLOGIN;
CREATE ROLE ceems_reader NOLOGIN;
CREATE ROLE ceems_admin NOLOGIN;
EOF2
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
    local dir
    dir=$(cat "$BATS_FILE_TMPDIR/pgdir")
    export PGHOST=$dir PGPORT=${CEEMS_TEST_PGPORT:-15432} PGUSER=postgres
    ADMIN=$CEEMS_TOP_BUILDDIR/tools/ceems-admin
    DB=t$BATS_TEST_NUMBER
    export PGDATABASE=$DB
    psql -X -q -d postgres -c "SET client_min_messages = warning" \
        -c "DROP DATABASE IF EXISTS $DB" -c "CREATE DATABASE $DB" ||
        _fail "CREATE DATABASE $DB"
    "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$DB" db init >/dev/null ||
        _fail "db init"
}

admin() {
    "$ADMIN" --sql-dir "$SQL_DIR" -d "dbname=$DB" "$@"
}

sql() {
    psql -X -At -v ON_ERROR_STOP=1 "$@"
}

# The start of the current hour, Unix seconds, as PostgreSQL sees it.
hour0() {
    sql -c "SELECT extract(epoch FROM date_trunc('hour', now()))::bigint"
}

@test "factors export: the zone's intervals around now, in the node's cache format" {
    local h0 cache want
    h0=$(hour0)
    sql -c "INSERT INTO ceems.emission_factors (zone, valid_from, valid_to, g_per_kwh, source) VALUES
        ('FR', to_timestamp($h0 - 100*3600), to_timestamp($h0 - 99*3600), 10, 'grid-a'),
        ('FR', to_timestamp($h0 - 3600), to_timestamp($h0), 52.5, 'grid-a'),
        ('FR', to_timestamp($h0), to_timestamp($h0 + 3600), 48.25, 'grid-a'),
        ('FR', to_timestamp($h0 + 3600), NULL, 61, 'grid-a'),
        ('FR', to_timestamp($h0 + 7200), to_timestamp($h0 + 10800), 70, 'grid-a'),
        ('FR', date_trunc('year', now()), date_trunc('year', now()) + interval '1 year', 56, 'yearly'),
        ('DE', to_timestamp($h0), to_timestamp($h0 + 3600), 400, 'grid-b')" >/dev/null ||
        _fail "insert"
    cache=$BATS_TEST_TMPDIR/intensity
    run admin factors export --zone FR --hours-back 2 --hours-ahead 4 "$cache"
    [ "$status" -eq 0 ] || _fail "export: $output"
    [ "$output" = "exported 4 intervals of zone FR (grid-a) to $cache" ] || _fail "$output"
    want="ceems-intensity 1
zone FR
source grid-a
$((h0 - 3600)) $h0 52.5
$h0 $((h0 + 3600)) 48.25
$((h0 + 3600)) $((h0 + 7200)) 61
$((h0 + 7200)) $((h0 + 10800)) 70"
    [ "$(cat "$cache")" = "$want" ] || _fail "cache: $(cat "$cache")"
    [ "$(stat -c %a "$cache")" = 644 ] || _fail "mode $(stat -c %a "$cache")"
    # No temporary file left beside it.
    [ "$(find "$BATS_TEST_TMPDIR" -name 'intensity.tmp*' | wc -l)" = 0 ] || _fail "temporary left"
}

@test "factors export: nothing to export leaves the cache as it was" {
    local cache=$BATS_TEST_TMPDIR/intensity
    echo keep >"$cache"
    run admin factors export --zone FR "$cache"
    [ "$status" -ne 0 ] || _fail "exported nothing with success"
    echo "$output" | grep -q "no intervals of zone FR" || _fail "$output"
    [ "$(cat "$cache")" = keep ] || _fail "cache overwritten"
    run admin factors export --zone "fr;x" "$cache"
    [ "$status" -ne 0 ] || _fail "a bad zone accepted"
    run admin factors export "$cache"
    [ "$status" -eq 2 ] || _fail "no --zone accepted: $output"
    run admin factors export --zone FR --hours-back x "$cache"
    [ "$status" -eq 2 ] || _fail "bad hours accepted: $output"
}

@test "factors export: overlapping rows are named, the earlier kept" {
    local h0 cache=$BATS_TEST_TMPDIR/intensity
    h0=$(hour0)
    sql -c "INSERT INTO ceems.emission_factors (zone, valid_from, valid_to, g_per_kwh, source) VALUES
        ('FR', to_timestamp($h0), to_timestamp($h0 + 7200), 40, 'a'),
        ('FR', to_timestamp($h0 + 3600), to_timestamp($h0 + 10800), 50, 'b')" >/dev/null ||
        _fail "insert"
    run admin factors export --zone FR "$cache"
    [ "$status" -eq 0 ] || _fail "$output"
    echo "$output" | grep -q "1 interval of zone FR overlap" || _fail "$output"
    [ "$(tail -n 1 "$cache")" = "$h0 $((h0 + 7200)) 40" ] || _fail "$(cat "$cache")"
}

@test "factors import: an ENTSO-E export in CET/CEST, idempotent, all or nothing" {
    run admin factors import "$FIXTURES/factors-import/entsoe-cet.csv" --zone FR
    [ "$status" -eq 0 ] || _fail "import: $output"
    [ "$output" = "imported 4 intervals (entsoe) from $FIXTURES/factors-import/entsoe-cet.csv" ] || _fail "$output"
    run sql -c "SELECT zone, to_char(valid_from AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'),
        to_char(valid_to AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI'), g_per_kwh, source
        FROM ceems.emission_factors ORDER BY valid_from"
    want='FR|2024-10-26 23:00|2024-10-27 00:00|50|entsoe
FR|2024-10-27 00:00|2024-10-27 01:00|51|entsoe
FR|2024-10-27 01:00|2024-10-27 02:00|52|entsoe
FR|2024-10-27 02:00|2024-10-27 03:00|53|entsoe'
    [ "$output" = "$want" ] || _fail "rows: $output"
    before=$(sql -c "SELECT string_agg(xmin::text || x::text, ',' ORDER BY valid_from) FROM ceems.emission_factors x")
    admin factors import "$FIXTURES/factors-import/entsoe-cet.csv" --zone FR >/dev/null || _fail "reimport"
    [ "$before" = "$(sql -c "SELECT string_agg(xmin::text || x::text, ',' ORDER BY valid_from) FROM ceems.emission_factors x")" ] ||
        _fail "importing the same file again changed rows"
    # A bad line anywhere: nothing of the file is loaded, the line named.
    printf 'MTU (UTC),Value\n01.02.2024 00:00 - 01.02.2024 01:00,1\n01.02.2024 01:00 - 01.02.2024 02:00,oops\n' \
        >"$BATS_TEST_TMPDIR/bad.csv"
    run admin factors import "$BATS_TEST_TMPDIR/bad.csv" --zone FR
    [ "$status" -ne 0 ] || _fail "bad file imported"
    echo "$output" | grep -q "line 3: intensity" || _fail "no line number: $output"
    [ "$(sql -c "SELECT count(*) FROM ceems.emission_factors")" = 4 ] || _fail "part of a bad file loaded"
    run admin factors import "$FIXTURES/factors-import/rte.csv" --zone FR --format rte
    [ "$status" -eq 0 ] || _fail "rte: $output"
    run admin factors import "$FIXTURES/factors-import/rte.csv" --zone FR --format nope
    [ "$status" -eq 2 ] || _fail "unknown format accepted"
}
