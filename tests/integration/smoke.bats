#!/usr/bin/env bats
# tests/integration/smoke.bats -- end-to-end smoke test of the ceems SPANK
# plugin on a real single-node Slurm cluster (tests/harness/slurm.sh): the
# plugin is loaded by slurmd/slurmstepd through plugstack.conf as
# `required` (a load failure fails the job loudly) and no node agent runs:
# a batch job with one srun step completes anyway, every step finds the
# job's cgroup and tries the agent, and the batch step tells the user (in
# the job's stderr file, via slurm_spank_log from slurm_spank_task_exit)
# that the job was not measured.  jobs.bats covers the measured path.
#
# Run as root:
#   CEEMS_SPANK_PLUGIN=/abs/path/spank_ceems.so bats --tap tests/integration/smoke.bats
# Without CEEMS_SPANK_PLUGIN every test is skipped (CI always sets it).

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/slurm.sh
. "$HARNESS_DIR/slurm.sh"

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

# bats 1.8 cannot skip from setup_file: setup_file does nothing when the
# tests are to be skipped, and setup skips each test.
_skip_reason() {
    if [ -z "${CEEMS_SPANK_PLUGIN:-}" ]; then
        echo "CEEMS_SPANK_PLUGIN is not set (absolute path of the built SPANK plugin, e.g. \$PWD/plugins/.libs/spank_ceems.so)"
    elif [ "$(id -u)" != 0 ]; then
        echo "needs root (runs slurmd and munged)"
    fi
}

setup_file() {
    [ -z "$(_skip_reason)" ] || return 0
    case $CEEMS_SPANK_PLUGIN in
        /*) ;;
        *) _fail "CEEMS_SPANK_PLUGIN must be an absolute path: $CEEMS_SPANK_PLUGIN" ;;
    esac
    [ -f "$CEEMS_SPANK_PLUGIN" ] || _fail "CEEMS_SPANK_PLUGIN=$CEEMS_SPANK_PLUGIN does not exist"

    local dir
    dir=$(slurm_harness_mktemp)
    echo "$dir" >"$BATS_FILE_TMPDIR/slurm_dir"
    # No agent, and nothing of the node's own paths: the socket, the
    # spool and the notes the plugin leaves for an absent agent all stay
    # in the cluster's directory (a note in the node's default spool
    # would become a record that later tests' ceems-sacct lists).
    printf 'socket = %s/agent.sock\nspool_dir = %s/spool\nstate_dir = %s/state\n' \
        "$dir" "$dir" "$dir" >"$dir/ceems.conf"
    local line="required $CEEMS_SPANK_PLUGIN config=$dir/ceems.conf agent=$dir/no-agent"
    slurm_harness_start "$dir" "$line" ||
        _fail "slurm_harness_start with plugstack line '$line'"

    # One batch job with one srun step, run once for all tests below.
    cat >"$dir/out/smoke.sh" <<'EOF'
#!/bin/sh
srun sh -c 'echo smoke-step-ran'
echo smoke-batch-ran
EOF
    chmod 0755 "$dir/out/smoke.sh"
    local jobid
    if ! jobid=$(timeout 120 sbatch --wait --parsable --time=2 -D "$dir/out" \
            --output="$dir/out/job-%j.out" --error="$dir/out/job-%j.err" \
            "$dir/out/smoke.sh" 2>"$dir/out/sbatch.err"); then
        cat "$dir/out/sbatch.err" >&2
        _fail "sbatch --wait of the smoke job failed (job '$jobid')"
    fi
    echo "$jobid" >"$BATS_FILE_TMPDIR/jobid"
}

teardown_file() {
    local dir
    if [ -f "$BATS_FILE_TMPDIR/slurm_dir" ]; then
        dir=$(cat "$BATS_FILE_TMPDIR/slurm_dir")
        slurm_harness_stop "$dir"
    fi
}

setup() {
    local reason
    reason=$(_skip_reason)
    [ -z "$reason" ] || skip "$reason"
    DIR=$(cat "$BATS_FILE_TMPDIR/slurm_dir")
    JOBID=$(cat "$BATS_FILE_TMPDIR/jobid")
    OUT=$DIR/out/job-$JOBID.out
    ERR=$DIR/out/job-$JOBID.err
    export SLURM_CONF=$DIR/slurm.conf
}

_show_job_files() {
    echo "---- $OUT:" >&2
    cat "$OUT" >&2 2>/dev/null || echo "(missing)" >&2
    echo "---- $ERR:" >&2
    cat "$ERR" >&2 2>/dev/null || echo "(missing)" >&2
}

@test "the job with the plugin loaded as required completes" {
    local state
    state=$(slurm_harness_wait_job "$JOBID" 10) || _fail "slurm_harness_wait_job $JOBID"
    if [ "$state" != COMPLETED ]; then
        _show_job_files
        _fail "job $JOBID ended $state"
    fi
    [ -f "$OUT" ] || _fail "no job output file $OUT"
    [ -f "$ERR" ] || _fail "no job error file $ERR"
    grep -qx smoke-step-ran "$OUT" || { _show_job_files; _fail "srun step output missing in $OUT"; }
    grep -qx smoke-batch-ran "$OUT" || { _show_job_files; _fail "batch output missing in $OUT"; }
}

@test "without a node agent, the batch step tells the user the job was not measured" {
    if ! grep -qx "ceems: job $JOBID was not measured on this node (node agent unavailable)" "$ERR"; then
        _show_job_files
        _fail "no 'not measured' line for job $JOBID in $ERR"
    fi
}

@test "every step (extern, batch, srun) found the job's cgroup and tried the node agent" {
    local log=$DIR/log/slurmd.log step
    for step in extern batch 0; do
        grep -q "ceems: job $JOBID step $step: not registered with the node agent" "$log" ||
            _fail "no attempt of step $step to reach the agent in $log"
    done
    ! grep -q "does not place pid .* in a job_$JOBID cgroup" "$log" ||
        _fail "a step did not find the job's cgroup (see $log)"
}

@test "the summary line is the job's last word: no other plugin text in its output" {
    local n
    n=$(grep -c '^ceems:' "$ERR" || true)
    [ "$n" -eq 1 ] || { _show_job_files; _fail "expected 1 ceems line in $ERR, found $n"; }
}

@test "slurmd log has no spank errors about the plugin" {
    local log=$DIR/log/slurmd.log base
    base=$(basename "$CEEMS_SPANK_PLUGIN")
    [ -f "$log" ] || _fail "no slurmd log $log"
    if grep -Ei "error:.*(spank|$base)" "$log" >&2; then
        _fail "the lines above in $log report spank/plugin errors"
    fi
}
