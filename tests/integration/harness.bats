#!/usr/bin/env bats
# tests/integration/harness.bats -- tests of the integration test harness
# itself (tests/harness/pg.sh and tests/harness/slurm.sh): a throwaway
# PostgreSQL and a throwaway single-node Slurm cluster can each be started,
# used and stopped three times in a row, a job of an unprivileged user runs,
# and nothing (process, port, cgroup, temporary directory) is left behind.
#
# Run as root:  bats --tap tests/integration/harness.bats
# Needs: postgresql-15, slurmctld, slurmd, slurm-client, munge, bats,
# iproute2 (ss; /proc/net/tcp is the fallback).

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/pg.sh
. "$HARNESS_DIR/pg.sh"
# shellcheck source=../harness/slurm.sh
. "$HARNESS_DIR/slurm.sh"

# Every directory a test starts a server in is recorded here ("pg DIR" or
# "slurm DIR"), so that teardown/teardown_file can stop whatever a failing
# test left running.
_registry() {
    echo "$BATS_FILE_TMPDIR/started"
}

_register() {
    echo "$1 $2" >>"$(_registry)"
}

# Stop every recorded server whose directory still exists.
_stop_all() {
    local kind dir rc=0
    [ -f "$(_registry)" ] || return 0
    while read -r kind dir; do
        [ -e "$dir" ] || continue
        case $kind in
            pg) pg_harness_stop "$dir" || rc=1 ;;
            slurm) slurm_harness_stop "$dir" || rc=1 ;;
        esac
    done <"$(_registry)"
    return "$rc"
}

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

setup_file() {
    # bats 1.8 cannot skip from setup_file: see setup.
    [ "$(id -u)" = 0 ] || return 0
    local out
    if ! out=$(slurm_harness_leftovers) || ! out=$(pg_harness_leftovers); then
        echo "leftovers of an earlier run; stop or remove them first:" >&2
        echo "$out" >&2
        return 1
    fi
}

setup() {
    if [ "$(id -u)" != 0 ]; then
        skip "the harness needs root (runs slurmd, munged and postgres as their users)"
    fi
}

teardown() {
    _stop_all
}

teardown_file() {
    _stop_all
}

_pg_cycle() {
    local dir
    dir=$(pg_harness_mktemp)
    _register pg "$dir"
    pg_harness_start "$dir" || _fail "pg_harness_start $dir"

    [ "${PGHOST:-}" = "$dir" ] || _fail "PGHOST is '${PGHOST:-}', expected $dir"
    run psql -X -At -v ON_ERROR_STOP=1 -c 'select 1'
    [ "$status" -eq 0 ] || _fail "psql -c 'select 1' exited $status: $output"
    [ "$output" = 1 ] || _fail "psql -c 'select 1' printed '$output'"
    run psql -X -At -U postgres -c 'select current_database()'
    [ "$output" = ceems ] || _fail "connected to database '$output', expected ceems"

    pg_harness_stop "$dir" || _fail "pg_harness_stop $dir"
    [ ! -e "$dir" ] || _fail "$dir still exists after pg_harness_stop"
    [ -z "${PGHOST:-}" ] || _fail "PGHOST still set after pg_harness_stop"
    run pg_harness_leftovers
    [ "$status" -eq 0 ] || _fail "leftovers after pg_harness_stop: $output"
}

@test "postgres: start, select 1, stop (1 of 3)" {
    _pg_cycle
}

@test "postgres: start, select 1, stop (2 of 3)" {
    _pg_cycle
}

@test "postgres: start, select 1, stop (3 of 3)" {
    _pg_cycle
}

_write_job() {
    cat >"$1" <<'EOF'
#!/bin/sh
srun hostname
echo done
EOF
    chmod 0755 "$1"
}

_slurm_cycle() {
    local dir jobid out state
    dir=$(slurm_harness_mktemp)
    _register slurm "$dir"
    slurm_harness_start "$dir" || _fail "slurm_harness_start $dir"
    [ "${SLURM_CONF:-}" = "$dir/slurm.conf" ] || _fail "SLURM_CONF is '${SLURM_CONF:-}'"

    _write_job "$dir/out/job.sh"
    run timeout 60 sbatch --wait --parsable --time=1 -D "$dir/out" -o "$dir/out/job-%j.out" "$dir/out/job.sh"
    [ "$status" -eq 0 ] || _fail "sbatch --wait exited $status: $output"
    jobid=$output
    out=$dir/out/job-$jobid.out
    [ -f "$out" ] || _fail "no job output file $out (sbatch printed '$jobid')"
    grep -qx "$(hostname)" "$out" || _fail "no '$(hostname)' line from srun hostname in $out: $(cat "$out")"
    grep -qx done "$out" || _fail "no 'done' line in $out: $(cat "$out")"
    state=$(slurm_harness_wait_job "$jobid" 10) || _fail "slurm_harness_wait_job $jobid"
    [ "$state" = COMPLETED ] || _fail "job $jobid ended $state"

    slurm_harness_stop "$dir" || _fail "slurm_harness_stop $dir"
    [ ! -e "$dir" ] || _fail "$dir still exists after slurm_harness_stop"
    [ -z "${SLURM_CONF:-}" ] || _fail "SLURM_CONF still set after slurm_harness_stop"
    run slurm_harness_leftovers
    [ "$status" -eq 0 ] || _fail "leftovers after slurm_harness_stop: $output"
}

@test "slurm: start, sbatch --wait (srun hostname), stop (1 of 3)" {
    _slurm_cycle
}

@test "slurm: start, sbatch --wait (srun hostname), stop (2 of 3)" {
    _slurm_cycle
}

@test "slurm: start, sbatch --wait (srun hostname), stop (3 of 3)" {
    _slurm_cycle
}

@test "slurm: a job submitted by an unprivileged user (nobody) runs as that user" {
    local dir jobid out
    dir=$(slurm_harness_mktemp)
    _register slurm "$dir"
    slurm_harness_start "$dir" || _fail "slurm_harness_start $dir"

    cat >"$dir/out/nobody.sh" <<'EOF'
#!/bin/sh
srun id -u
id -un
grep -E '^[0-9]+:(freezer|memory):' /proc/self/cgroup || grep '^0::' /proc/self/cgroup
echo done
EOF
    chmod 0755 "$dir/out/nobody.sh"
    run runuser -u nobody -- timeout 60 sbatch --wait --parsable --time=1 -D "$dir/out" \
        -o "$dir/out/job-%j.out" "$dir/out/nobody.sh"
    [ "$status" -eq 0 ] || _fail "sbatch --wait as nobody exited $status: $output"
    jobid=$output
    out=$dir/out/job-$jobid.out
    [ -f "$out" ] || _fail "no job output file $out"
    [ "$(stat -c %U "$out")" = nobody ] || _fail "$out is owned by $(stat -c %U "$out"), not nobody"
    grep -qx "$(id -u nobody)" "$out" || _fail "srun id -u did not print $(id -u nobody): $(cat "$out")"
    grep -qx nobody "$out" || _fail "batch script did not run as nobody: $(cat "$out")"
    grep -q "job_$jobid" "$out" || _fail "job is not in a job_$jobid cgroup: $(cat "$out")"
    grep -qx done "$out" || _fail "no 'done' line in $out: $(cat "$out")"

    slurm_harness_stop "$dir" || _fail "slurm_harness_stop $dir"
}

@test "slurm: CEEMS_TEST_SLURMDBD=1: sacct reads the job from slurmdbd; stop leaves no slurmdbd, MariaDB or port" {
    local dir jobid out port
    command -v slurmdbd >/dev/null && command -v mariadbd >/dev/null ||
        skip "slurmdbd or mariadbd not found (packages slurmdbd, mariadb-server)"
    dir=$(slurm_harness_mktemp)
    _register slurm "$dir"
    CEEMS_TEST_SLURMDBD=1 slurm_harness_start "$dir" || _fail "slurm_harness_start $dir with slurmdbd"
    [ "$(stat -c %a "$dir/slurmdbd.conf")" = 600 ] || _fail "slurmdbd.conf is not 0600"
    run timeout 60 sbatch --wait --parsable --time=1 -D "$dir/out" -o /dev/null --wrap "srun true"
    [ "$status" -eq 0 ] || _fail "sbatch --wait exited $status: $output"
    jobid=$output
    for _ in $(seq 1 50); do
        out=$(sacct -n -P -j "$jobid" -o JobID,State)
        grep -q "^$jobid.0|COMPLETED$" <<<"$out" && grep -q "^$jobid|COMPLETED$" <<<"$out" && break
        sleep 0.2
    done
    grep -q "^$jobid.0|COMPLETED$" <<<"$out" || _fail "sacct does not show job $jobid and its step completed: $out"
    slurm_harness_stop "$dir" || _fail "slurm_harness_stop $dir"
    [ ! -e "$dir" ] || _fail "$dir still exists after slurm_harness_stop"
    for port in "${CEEMS_TEST_SLURMDBD_PORT:-16826}" "${CEEMS_TEST_MARIADB_PORT:-16827}"; do
        ! _slurm_harness_port_listening "$port" || _fail "port $port still listens"
    done
    run slurm_harness_leftovers
    [ "$status" -eq 0 ] || _fail "leftovers after slurm_harness_stop: $output"
}

@test "slurm: CEEMS_TEST_NODES=3: three slurmd on this host, srun -N3 in each node's cgroup tree" {
    local dir jobid out n
    dir=$(slurm_harness_mktemp)
    _register slurm "$dir"
    CEEMS_TEST_NODES=3 slurm_harness_start "$dir" || _fail "slurm_harness_start $dir with 3 nodes"
    [ "$(sinfo -h -N -o '%N %t' | sort | paste -sd, -)" = "n1 idle,n2 idle,n3 idle" ] ||
        _fail "nodes: $(sinfo -h -N -o '%N %t')"

    # Each task names its node and its cgroup: with several slurmd on a
    # host, Slurm's v1 root is slurm_NODE (v2: NODE_slurmstepd.scope).
    run timeout 60 sbatch --wait --parsable -N3 --time=1 -D "$dir/out" -o "$dir/out/job-%j.out" \
        --wrap 'srun -N3 sh -c "echo \$SLURMD_NODENAME \$(grep -E \"^[0-9]+:memory:|^0::\" /proc/self/cgroup)"'
    [ "$status" -eq 0 ] || _fail "sbatch --wait -N3 exited $status: $output"
    jobid=$output
    out=$dir/out/job-$jobid.out
    for n in n1 n2 n3; do
        grep -Eq "^$n .*(/slurm_$n/|/${n}_slurmstepd\.scope/)uid_[0-9]+/job_$jobid/|^$n .*/${n}_slurmstepd\.scope/job_$jobid/" "$out" ||
            _fail "no task of $n in its node's cgroup tree: $(cat "$out")"
        # slurm.conf's %n: a spool, a pid file and a log per node.
        [ -d "$dir/spool/d/$n" ] && [ -f "$dir/run/slurmd-$n.pid" ] && [ -f "$dir/log/slurmd-$n.log" ] ||
            _fail "the per-node files of $n are missing"
    done

    # stop finds the nodes in the cluster's slurm.conf, whatever the count now
    slurm_harness_stop "$dir" || _fail "slurm_harness_stop $dir"
    CEEMS_TEST_NODES=3 run slurm_harness_leftovers
    [ "$status" -eq 0 ] || _fail "leftovers after slurm_harness_stop of 3 nodes: $output"
}

@test "slurm: a node count out of 1 to 8 is refused before anything starts" {
    local dir
    dir=$(slurm_harness_mktemp)
    _register slurm "$dir"
    CEEMS_TEST_NODES=9 run slurm_harness_start "$dir"
    [ "$status" -ne 0 ] || _fail "CEEMS_TEST_NODES=9 started"
    [[ $output == *"CEEMS_TEST_NODES=9"* ]] || _fail "the error does not name the count: $output"
    [ ! -e "$dir/slurm.conf" ] || _fail "a slurm.conf was written"
    rm -rf "$dir"
}

@test "nothing is left behind (processes, ports, cgroups, temporary directories)" {
    run slurm_harness_leftovers
    [ "$status" -eq 0 ] || _fail "slurm_harness_leftovers: $output"
    run pg_harness_leftovers
    [ "$status" -eq 0 ] || _fail "pg_harness_leftovers: $output"
    local d
    for d in "${TMPDIR:-/tmp}"/ceems-test.*; do
        [ ! -e "$d" ] || _fail "leftover temporary directory $d"
    done
}
