#!/usr/bin/env bats
# tests/integration/grafana.bats -- the Grafana dashboards of dashboards/
# against the harness's real PostgreSQL with the schema of
# sql/migrations: every panel's and every variable's SQL, expanded as
# Grafana's PostgreSQL data source expands it (tests/integration/lib/
# grafana_expand.py), is run as the dashboards' read-only role, as an
# admin, as a user and as a coordinator, and its rows are compared with
# what the stored jobs must give to each (row-level security included:
# a user's panels show their jobs only).  The jobs are records written
# by record-gen (the library's encoder) and stored through
# ceems.upsert_job_records and ceems.add_job_samples as the writer role
# (tests/integration/lib/grafana_data.py).  Also: the dashboards are
# valid Grafana 10/11 JSON, and ceems_admin_reader (migration 023)
# reads every job and writes nothing.  Only PostgreSQL is started.
#
# Run as root:  bats --tap tests/integration/grafana.bats
# (make check-integration sets CEEMS_TOP_BUILDDIR.)

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"

SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}
CHECK=$BATS_TEST_DIRNAME/lib/grafana-check.py

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

_skip_reason() {
    if [ "$(id -u)" != 0 ]; then
        echo "needs root (PostgreSQL harness)"
    elif [ -z "${CEEMS_TOP_BUILDDIR:-}" ] ||
         [ ! -x "$CEEMS_TOP_BUILDDIR/tests/integration/record-gen" ]; then
        echo "CEEMS_TOP_BUILDDIR does not hold tests/integration/record-gen (make check builds it)"
    elif ! command -v python3 >/dev/null; then
        echo "python3 not installed (tests/install-deps.sh)"
    fi
}

setup_file() {
    [ -z "$(_skip_reason)" ] || return 0
    local pg work f
    pg=$(pg_harness_mktemp) || return 1
    echo "$pg" >"$BATS_FILE_TMPDIR/pg"
    pg_harness_start "$pg" || return 1
    pg_harness_apply_schema "$SRCDIR" || return 1
    # Grafana's login, an admin, a user, a coordinator of "chem", a node.
    psql -X -q -v ON_ERROR_STOP=1 <<'EOF' || return 1
CREATE ROLE grafana LOGIN IN ROLE ceems_admin_reader;
CREATE ROLE dave LOGIN IN ROLE ceems_admin;
CREATE ROLE alice LOGIN IN ROLE ceems_reader;
CREATE ROLE carol LOGIN IN ROLE ceems_reader;
CREATE ROLE node LOGIN IN ROLE ceems_writer;
INSERT INTO ceems.coordinators VALUES ('chem', 'carol');
EOF
    work=$BATS_FILE_TMPDIR/work
    mkdir -p "$work" || return 1
    python3 "$CHECK" store "$CEEMS_TOP_BUILDDIR/tests/integration/record-gen" "$work" node ||
        return 1
}

teardown_file() {
    local pg
    pg=$(cat "$BATS_FILE_TMPDIR/pg" 2>/dev/null) || return 0
    pg_harness_stop "$pg"
}

setup() {
    local why
    why=$(_skip_reason)
    [ -z "$why" ] || skip "$why"
    export PGHOST=$(cat "$BATS_FILE_TMPDIR/pg") PGPORT=$CEEMS_TEST_PGPORT
    export PGDATABASE=ceems PGUSER=postgres
    WORK=$BATS_FILE_TMPDIR/work
}

@test "grafana: the dashboards are Grafana 10/11 JSON on the PostgreSQL data source variable" {
    run python3 "$CHECK" validate "$SRCDIR/dashboards"
    [ "$status" -eq 0 ] || _fail "$output"
    for f in "$SRCDIR"/dashboards/*.json; do
        jq -e '.panels | length > 0' "$f" >/dev/null || _fail "$f: jq cannot read its panels"
    done
}

@test "grafana: the test's macro expander gives Grafana's own expansions" {
    run python3 "$CHECK" expand-selftest
    [ "$status" -eq 0 ] || _fail "$output"
}

@test "grafana: ceems_admin_reader reads every job and writes nothing" {
    all=$(psql -X -At -c "SELECT count(*) FROM ceems.jobs")
    [ "$all" -gt 0 ] || _fail "no jobs stored"
    [ "$(psql -X -At -U grafana -c 'SELECT count(*) FROM ceems.jobs')" = "$all" ] ||
        _fail "the admin reader does not see every job"
    [ "$(psql -X -At -U grafana -c 'SELECT count(*) FROM ceems.job_samples')" = \
      "$(psql -X -At -c 'SELECT count(*) FROM ceems.job_samples')" ] ||
        _fail "the admin reader does not see every sample"
    [ "$(psql -X -At -U grafana -c 'SELECT count(*) FROM ceems.coordinators')" = 1 ] ||
        _fail "the admin reader does not see the coordinators"
    for sql in "INSERT INTO ceems.coordinators VALUES ('phys', 'grafana')" \
               "DELETE FROM ceems.coordinators" \
               "UPDATE ceems.jobs SET user_name = 'grafana'" \
               "DELETE FROM ceems.emission_factors" \
               "SELECT ceems.downsample_job_samples('1 day', 300)" \
               "SELECT ceems.upsert_job_records('[]')"; do
        run psql -X -At -v ON_ERROR_STOP=1 -U grafana -c "$sql"
        [ "$status" -ne 0 ] && [[ $output == *"permission denied"* ]] ||
            _fail "the admin reader could run: $sql ($output)"
    done
    [ "$(psql -X -At -c 'SELECT count(*) FROM ceems.coordinators')" = 1 ] ||
        _fail "the coordinators changed"
}

@test "grafana: every panel as the admin reader shows every job's figures" {
    run python3 "$CHECK" check "$SRCDIR/dashboards" "$WORK" grafana all
    [ "$status" -eq 0 ] || _fail "$output"
}

@test "grafana: every panel as an admin shows every job's figures" {
    run python3 "$CHECK" check "$SRCDIR/dashboards" "$WORK" dave all
    [ "$status" -eq 0 ] || _fail "$output"
}

@test "grafana: every panel as a user shows that user's jobs only" {
    run python3 "$CHECK" check "$SRCDIR/dashboards" "$WORK" alice user:alice
    [ "$status" -eq 0 ] || _fail "$output"
}

@test "grafana: every panel as a coordinator shows the account's jobs only" {
    run python3 "$CHECK" check "$SRCDIR/dashboards" "$WORK" carol account:chem
    [ "$status" -eq 0 ] || _fail "$output"
}
