#!/usr/bin/env bats
# tests/integration/slurmd-agent.bats -- the slurmd context of the ceems
# SPANK plugin on a real single-node Slurm cluster (tests/harness/slurm.sh):
# slurmd starts the node agent's supervisor (ceems-agent --supervise, named
# ceems-agent-sv) by fork and exec, detached, which starts the agent
# (tools/ceems-agent) and restarts it when it dies.  The supervisor
# outlives slurmd: a slurmd stopped, killed, restarted or reconfigured
# finds it by the lock of STATE_DIR/agent.pid and adopts it, so a job
# running across a slurmd restart is measured without a gap, and only one
# agent ever runs; an admin stops and restarts it with ceems-agent --stop
# and --restart.  A missing agent leaves slurmd and jobs unharmed; a
# refused start is retried.
#
# Each test starts its own cluster with the plugin loaded as `required`
# (a load error fails the start), the agent's socket, state and spool
# inside the cluster's directory, and a copy of the RAPL fixture tree as
# sysfs.  The agent is the build tree's tools/ceems-agent: a libtool
# wrapper script that sets LD_LIBRARY_PATH and execs tools/.libs/ceems-agent
# (a production install execs the real binary).
#
# Run as root:
#   CEEMS_SPANK_PLUGIN=$PWD/plugins/.libs/spank_ceems.so CEEMS_TOP_BUILDDIR=$PWD \
#   CEEMS_FIXTURES=/path/to/tests/fixtures bats --tap tests/integration/slurmd-agent.bats
# Needs: the harness's Slurm and munge packages, jq.

HARNESS_DIR=$BATS_TEST_DIRNAME/../harness
# shellcheck source=../harness/slurm.sh
. "$HARNESS_DIR/slurm.sh"

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

_skip_reason() {
    if [ -z "${CEEMS_SPANK_PLUGIN:-}" ] || [ ! -f "$CEEMS_SPANK_PLUGIN" ]; then
        echo "CEEMS_SPANK_PLUGIN does not name the built SPANK plugin"
    elif [ -z "${CEEMS_TOP_BUILDDIR:-}" ] || [ ! -x "$CEEMS_TOP_BUILDDIR/tools/ceems-agent" ]; then
        echo "CEEMS_TOP_BUILDDIR does not hold a built tools/ceems-agent"
    elif [ -z "${CEEMS_FIXTURES:-}" ] || [ ! -d "$CEEMS_FIXTURES/sys/rapl-intel" ]; then
        echo "CEEMS_FIXTURES does not hold sys/rapl-intel"
    elif [ "$(id -u)" != 0 ]; then
        echo "needs root (runs slurmd and munged)"
    elif ! command -v jq >/dev/null; then
        echo "needs jq to read the agent's replies"
    fi
}

setup() {
    local reason
    reason=$(_skip_reason)
    [ -z "$reason" ] || skip "$reason"
    AGENT=$CEEMS_TOP_BUILDDIR/tools/ceems-agent
    DIR=
}

teardown() {
    local dir p
    [ -f "$BATS_TEST_TMPDIR/slurm_dir" ] || return 0
    dir=$(cat "$BATS_TEST_TMPDIR/slurm_dir")
    [ -e "$dir" ] || return 0
    if [ -n "${BATS_TEST_COMPLETED:-}" ] || [ ! -f "$dir/log/agent.log" ]; then
        :
    else
        echo "---- tail of $dir/log/agent.log:" >&2
        tail -n 30 "$dir/log/agent.log" >&2
        echo "---- ceems lines of $dir/log/slurmd.log:" >&2
        grep ceems "$dir/log/slurmd.log" >&2 || true
    fi
    slurm_harness_stop "$dir" || true
    # The harness stops the supervisor, which outlives slurmd; this is
    # the last net, by the exact paths of this cluster only.
    for p in $(_agent_pids "$dir") $(_supervisor_pids "$dir"); do
        kill -KILL "$p" 2>/dev/null || true
    done
    rm -rf -- "$dir"
}

# Pids of processes named COMM (the kernel's comm) whose command line
# contains the argument ARG exactly.
_pids_with_arg() { # COMM ARG
    local p comm
    for p in /proc/[0-9]*; do
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        [ "$comm" = "$1" ] || continue
        grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
        if tr '\0' '\n' <"$p/cmdline" 2>/dev/null | grep -qxF -- "$2"; then
            echo "${p#/proc/}"
        fi
    done
}

# The agents and supervisors of the cluster in DIR (both run with -c
# DIR/ceems.conf; the supervisor names itself ceems-agent-sv).
_agent_pids() { _pids_with_arg ceems-agent "$1/ceems.conf"; }
_supervisor_pids() { _pids_with_arg ceems-agent-sv "$1/ceems.conf"; }

_stat_field() { # PID N: field N of /proc/PID/stat (comm has no spaces here)
    awk -v n="$2" '{ print $n }' "/proc/$1/stat"
}

_slurmd_pid() {
    local pid
    pid=$(head -n 1 "$DIR/run/slurmd.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && [ "$(cat "/proc/$pid/comm" 2>/dev/null)" = slurmd ] && echo "$pid"
}

_status() {
    "$AGENT" -c "$DIR/ceems.conf" --timeout 1000 --status 2>/dev/null
}

# Wait until an agent answers --status (printing its pid) within SECONDS;
# with NOT_PID, one whose pid is not NOT_PID.
_wait_agent() { # SECONDS [NOT_PID]
    local deadline=$(( $(date +%s) + $1 )) reply pid
    while :; do
        if reply=$(_status); then
            pid=$(echo "$reply" | jq -r .pid)
            if [ -z "${2:-}" ] || [ "$pid" != "$2" ]; then
                echo "$pid"
                return 0
            fi
        fi
        [ "$(date +%s)" -ge "$deadline" ] && break
        sleep 0.1
    done
    _fail "no agent${2:+ other than pid $2} answered --status on $DIR/agent/agent.sock within $1 s"
}

# Wait until no agent or supervisor of this cluster is left.
_wait_no_agent() { # SECONDS
    local deadline=$(( $(date +%s) + $1 )) left
    while :; do
        left="$(_agent_pids "$DIR") $(_supervisor_pids "$DIR")"
        [ -z "${left// /}" ] && return 0
        [ "$(date +%s)" -ge "$deadline" ] && break
        sleep 0.1
    done
    ps -o pid,ppid,comm,args -p "${left// /,}" >&2 || true
    _fail "agent or supervisor processes left after $1 s:$left"
}

# A fresh directory for a cluster, with an agent configuration whose
# files all live in it.
_make_dir() {
    DIR=$(slurm_harness_mktemp) || _fail "slurm_harness_mktemp"
    echo "$DIR" >"$BATS_TEST_TMPDIR/slurm_dir"
    cp -r "$CEEMS_FIXTURES/sys/rapl-intel" "$DIR/sys"
    mkdir -p "$DIR/agent/state" "$DIR/agent/spool" "$DIR/log"
    cat >"$DIR/ceems.conf" <<EOF
# slurmd-agent.bats: fixture RAPL tree, real /proc and cgroups
interval = 200ms
checkpoint_interval = 0
socket = $DIR/agent/agent.sock
state_dir = $DIR/agent/state
spool_dir = $DIR/agent/spool
sysfs_root = $DIR/sys
source_hwmon = no
source_pm_counters = no
EOF
}

# Start a cluster (in DIR if _make_dir ran, else in a fresh one) whose
# slurmd runs the plugin's slurmd context with agent=AGENT (default: the
# build tree's).
_start_cluster() { # [AGENT]
    [ -n "${DIR:-}" ] || _make_dir
    slurm_harness_start "$DIR" \
        "required $CEEMS_SPANK_PLUGIN config=$DIR/ceems.conf agent=${1:-$AGENT} agent_log=$DIR/log/agent.log" ||
        _fail "slurm_harness_start"
}

# The process tree: slurmd -> nothing; PID 1 (or a subreaper) ->
# ceems-agent-sv (own session) -> ceems-agent.
_check_tree() { # AGENT_PID
    local agent=$1 sv slurmd ppid
    sv=$(_supervisor_pids "$DIR")
    [ "$(echo "$sv" | wc -w)" = 1 ] || _fail "want one supervisor, have: '$sv'"
    [ "$(_agent_pids "$DIR" | wc -w)" = 1 ] || _fail "want one agent, have: '$(_agent_pids "$DIR")'"
    [ "$(_stat_field "$agent" 4)" = "$sv" ] ||
        _fail "the agent $agent is not the child of the supervisor $sv"
    slurmd=$(_slurmd_pid) || return 0
    ppid=$(_stat_field "$sv" 4)
    [ "$ppid" != "$slurmd" ] || _fail "the supervisor $sv is slurmd's child"
    [ "$(_stat_field "$sv" 6)" != "$(_stat_field "$slurmd" 6)" ] ||
        _fail "the supervisor $sv is in slurmd's session"
}

# Stop slurmd with SIGNAL (default TERM) and wait until it is gone.
_stop_slurmd() { # [SIGNAL]
    local slurmd
    slurmd=$(_slurmd_pid) || _fail "slurmd is not running"
    kill "-${1:-TERM}" "$slurmd"
    for _ in $(seq 150); do
        [ -e "/proc/$slurmd" ] || return 0
        sleep 0.1
    done
    _fail "slurmd $slurmd did not stop on SIG${1:-TERM}"
}

_start_slurmd() {
    (cd / && slurmd -f "$DIR/slurm.conf" -N localhost) >>"$DIR/log/slurmd.start" 2>&1 ||
        _fail "slurmd did not restart"
    for _ in $(seq 100); do
        _slurmd_pid >/dev/null && return 0
        sleep 0.1
    done
    _fail "slurmd wrote no pid file"
}

# A slurmd adopted supervisor SUPERVISOR, whose agent AGENT answered.
_adopted() { # SUPERVISOR AGENT
    grep -q "ceems: adopted the running node agent: supervisor pid $1, agent pid $2, answering on $DIR/agent/agent.sock" \
        "$DIR/log/slurmd.log"
}

@test "daemonized slurmd: a detached supervisor runs the agent, which answers, with a clean environment and no slurmd descriptors; a stale pid file is not adopted" {
    local agent sv env fds f p
    _make_dir
    # A pid file left by a crash or a reboot, naming a live process
    # (this shell) that holds no lock: it must not be adopted.
    mkdir -p "$DIR/agent/state"
    echo "$$ $$" >"$DIR/agent/state/agent.pid"
    _start_cluster
    agent=$(_wait_agent 10)
    _check_tree "$agent"
    sv=$(_supervisor_pids "$DIR")
    grep -q "ceems: adopted" "$DIR/log/slurmd.log" && _fail "a stale pid file was adopted"
    [ "$(cat "$DIR/agent/state/agent.pid")" = "$sv $agent" ] ||
        _fail "the pid file says '$(cat "$DIR/agent/state/agent.pid")', not '$sv $agent'"

    # Environment: PATH only for the agent; PATH and slurmd's SLURM_CONF
    # (for ceems-jobinfo's libslurm) for the supervisor; nothing else
    # of slurmd's (CEEMS_TEST_SLURM_DIR is in slurmd's).  The build
    # tree's libtool wrapper, a bash script, adds LD_LIBRARY_PATH,
    # BIN_SH, DUALCASE, PWD, SHLVL and _ on its way to the binary.
    conf=$(tr '\0' '\n' <"/proc/$(_slurmd_pid)/environ" | grep '^SLURM_CONF=')
    [ -n "$conf" ] || _fail "slurmd's environment has no SLURM_CONF"
    for p in "$agent" "$sv"; do
        want="PATH=/usr/sbin:/usr/bin:/sbin:/bin"
        [ "$p" = "$sv" ] && want="$want
$conf"
        env=$(tr '\0' '\n' <"/proc/$p/environ" |
              grep -Ev "^(LD_LIBRARY_PATH=$CEEMS_TOP_BUILDDIR/|BIN_SH=|DUALCASE=|PWD=|SHLVL=|_=)" | sort)
        [ "$env" = "$want" ] ||
            _fail "the environment of $p is not $(echo $want): $env"
    done
    tr '\0' '\n' <"/proc/$(_slurmd_pid)/environ" | grep -qx "CEEMS_TEST_SLURM_DIR=$DIR" ||
        _fail "slurmd's environment lacks CEEMS_TEST_SLURM_DIR: the check above proves nothing"

    # The supervisor holds /dev/null (0, 1), the log (2), its lock (3).
    fds=$(ls -l "/proc/$sv/fd" | awk 'NR > 1 { print $9, $11 }')
    echo "$fds" | grep -qx "0 /dev/null" || _fail "supervisor fd 0: $fds"
    echo "$fds" | grep -qx "1 /dev/null" || _fail "supervisor fd 1: $fds"
    echo "$fds" | grep -qx "2 $DIR/log/agent.log" || _fail "supervisor fd 2: $fds"
    echo "$fds" | grep -qx "3 $DIR/agent/state/agent.pid" || _fail "supervisor fd 3: $fds"
    [ "$(echo "$fds" | wc -l)" = 4 ] || _fail "the supervisor holds more than 0-3: $fds"
    # The agent: its stderr on the log, no lock and no file of slurmd's.
    fds=$(ls -l "/proc/$agent/fd" | awk 'NR > 1 { print $9, $11 }')
    echo "$fds" | grep -qx "2 $DIR/log/agent.log" || _fail "agent fd 2: $fds"
    for f in ' pipe:' "$DIR/log/slurmd.log" "$DIR/spool/d" agent.pid; do
        if echo "$fds" | grep -qF -- "$f"; then
            _fail "the agent inherited '$f': $fds"
        fi
    done

    grep -q "ceems: node agent supervisor ceems-agent-sv started, pid $sv" "$DIR/log/slurmd.log" ||
        _fail "no start line in the slurmd log"
    grep -q "ceems-agent-sv\[$sv\]: info: started the agent: pid $agent" "$DIR/log/agent.log" ||
        _fail "no start line in the agent's log"
}

@test "the agent killed with SIGKILL is logged and restarted, and the new one answers within a few seconds" {
    local agent new sv
    _start_cluster
    agent=$(_wait_agent 10)
    sv=$(_supervisor_pids "$DIR")
    kill -KILL "$agent"
    new=$(_wait_agent 5 "$agent")
    _check_tree "$new"
    [ "$(_supervisor_pids "$DIR")" = "$sv" ] || _fail "the supervisor changed"
    grep -q "the agent (pid $agent) was killed by signal 9 (SIGKILL) after [0-9.]* s; restarting it in 1 s" \
        "$DIR/log/agent.log" || _fail "the agent's death is not logged"
    [ "$(cat "$DIR/agent/state/agent.pid")" = "$sv $new" ] || _fail "the pid file does not name the new agent"
    # A second quick death waits twice as long.
    kill -KILL "$new"
    _wait_agent 8 "$new" >/dev/null
    grep -q "the agent (pid $new) was killed by signal 9 (SIGKILL) after [0-9.]* s; restarting it in 2 s" \
        "$DIR/log/agent.log" || _fail "no backoff after a second quick death"
}

@test "scontrol reconfigure leaves the same agent and supervisor running; scontrol shutdown leaves them running too" {
    local agent sv
    _start_cluster
    agent=$(_wait_agent 10)
    sv=$(_supervisor_pids "$DIR")
    scontrol reconfigure >/dev/null || _fail "scontrol reconfigure"
    sleep 2
    [ "$(_wait_agent 15)" = "$agent" ] || _fail "another agent answers after reconfigure"
    _check_tree "$agent"
    [ "$(_supervisor_pids "$DIR")" = "$sv" ] || _fail "the supervisor changed on reconfigure"
    scontrol shutdown >/dev/null || _fail "scontrol shutdown"
    for _ in $(seq 100); do
        _slurmd_pid >/dev/null || break
        sleep 0.1
    done
    ! _slurmd_pid >/dev/null || _fail "slurmd did not shut down"
    grep -q "ceems: slurmd exits; the node agent keeps running" "$DIR/log/slurmd.log" ||
        _fail "slurmd_exit did not run"
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent did not outlive slurmd"
    _check_tree "$agent"
    ! grep -q "ceems-agent\[$agent\]: info: SIGTERM received" "$DIR/log/agent.log" ||
        _fail "the agent was stopped with slurmd"
}

@test "slurmd -D (foreground): the agent runs, outlives slurmd, and the next slurmd adopts it" {
    local agent slurmd sv
    CEEMS_TEST_SLURMD_FOREGROUND=1 _start_cluster
    slurmd=$(_slurmd_pid) || _fail "slurmd -D is not running"
    tr '\0' ' ' <"/proc/$slurmd/cmdline" | grep -q -- ' -D ' || _fail "slurmd runs without -D"
    agent=$(_wait_agent 10)
    _check_tree "$agent"
    sv=$(_supervisor_pids "$DIR")
    _stop_slurmd TERM
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent did not outlive slurmd -D"
    _start_slurmd
    for _ in $(seq 100); do
        _adopted "$sv" "$agent" && break
        sleep 0.1
    done
    _adopted "$sv" "$agent" || _fail "the daemonized slurmd did not adopt supervisor $sv, agent $agent"
    _check_tree "$agent"
}

@test "slurmd killed with SIGKILL: the agent runs on, the next slurmd adopts it, the harness's stop stops it" {
    local agent sv
    _start_cluster
    agent=$(_wait_agent 10)
    sv=$(_supervisor_pids "$DIR")
    _stop_slurmd KILL
    sleep 1
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent did not outlive slurmd"
    _start_slurmd
    for _ in $(seq 100); do
        _adopted "$sv" "$agent" && break
        sleep 0.1
    done
    _adopted "$sv" "$agent" || _fail "the new slurmd did not adopt supervisor $sv, agent $agent"
    _check_tree "$agent"
    # The harness's teardown stops the agent, which slurmd no longer does.
    slurm_harness_stop "$DIR" || _fail "slurm_harness_stop"
    [ -z "$(_agent_pids "$DIR")$(_supervisor_pids "$DIR")" ] ||
        _fail "slurm_harness_stop left the agent: $(_agent_pids "$DIR") $(_supervisor_pids "$DIR")"
}

@test "slurmd restarts, stopped or killed, and reconfigured: one supervisor and one agent, the same ones throughout" {
    local agent sv round
    _start_cluster
    agent=$(_wait_agent 10)
    sv=$(_supervisor_pids "$DIR")
    for round in TERM KILL TERM; do
        _stop_slurmd "$round"
        _start_slurmd
        scontrol reconfigure >/dev/null 2>&1 || true
        sleep 1
        [ "$(_wait_agent 10)" = "$agent" ] || _fail "another agent answers after slurmd SIG$round"
        _check_tree "$agent"
        [ "$(_supervisor_pids "$DIR")" = "$sv" ] || _fail "the supervisor changed after slurmd SIG$round"
    done
    [ "$(grep -c "ceems: adopted the running node agent: supervisor pid $sv, agent pid $agent" "$DIR/log/slurmd.log")" -ge 3 ] ||
        _fail "not every slurmd start adopted the agent"
    [ "$(grep -c "ceems-agent-sv\[$sv\]: info: started the agent" "$DIR/log/agent.log")" = 1 ] ||
        _fail "the agent was started more than once"
}

# The v1 or v2 cgroup of a job, as a register request would give it:
# from /proc/PID/cgroup of one of its processes, cut after job_<id>.
_register_request() { # JOBID PID
    awk -F: -v job="$1" '
        function cut(path) { sub("/job_" job "/.*", "/job_" job, path); return path }
        $2 == "" { v2 = cut($3) }
        { n = split($2, c, ","); for (i = 1; i <= n; i++)
              if (c[i] == "cpuacct" || c[i] == "memory" || c[i] == "cpuset") v1[c[i]] = cut($3) }
        END {
            if ("cpuacct" in v1 && v1["cpuacct"] ~ "/job_" job "$")
                printf "{\"op\":\"register\",\"job\":{\"jobid\":%s,\"uid\":0,\"cgroup\":{\"version\":1,\"v1\":{\"cpuacct\":\"%s\",\"memory\":\"%s\",\"cpuset\":\"%s\"}}}}\n", job, v1["cpuacct"], v1["memory"], v1["cpuset"]
            else
                printf "{\"op\":\"register\",\"job\":{\"jobid\":%s,\"uid\":0,\"cgroup\":{\"version\":2,\"unified\":\"%s\"}}}\n", job, v2
        }' "/proc/$2/cgroup"
}

@test "a CPU job running across a slurmd stop and start is measured without a gap by the same agent" {
    local agent new jobid reply rec cov gap i state
    _start_cluster
    agent=$(_wait_agent 10)
    jobid=$(sbatch --parsable --time=2 -o "$DIR/out/job-%j.out" \
        --wrap 'end=$(( $(date +%s) + 14 )); while [ "$(date +%s)" -lt "$end" ]; do :; done') ||
        _fail "sbatch"
    # The job-side plugin registers the job when its first step starts.
    for i in $(seq 100); do
        reply=$("$AGENT" -c "$DIR/ceems.conf" --call "{\"op\":\"report\",\"jobid\":$jobid}") && break
        sleep 0.1
    done
    echo "$reply" | jq -e ".ok and .report.jobid == $jobid" >/dev/null ||
        _fail "job $jobid was not registered by the plugin: $reply"
    sleep 2

    # A clean slurmd stop and start under the running job.
    _stop_slurmd TERM
    sleep 2
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent did not outlive slurmd"
    _start_slurmd
    new=$(_wait_agent 10)
    [ "$new" = "$agent" ] || _fail "the agent changed across the slurmd restart: $agent -> $new"
    state=$(slurm_harness_wait_job "$jobid" 60) || _fail "slurm_harness_wait_job"
    [ "$state" = COMPLETED ] || _fail "job $jobid ended $state"

    for i in $(seq 60); do
        for rec in "$DIR"/agent/spool/*.json; do
            [ -e "$rec" ] && [ "$(jq -r .job.jobid "$rec")" = "$jobid" ] && break 2
        done
        rec=
        sleep 0.5
    done
    [ -n "$rec" ] || _fail "no record of job $jobid in $DIR/agent/spool"
    cov=$(jq '.measurements.ledger.package.coverage' "$rec")
    gap=$(jq '.measurements.gap_s' "$rec")
    echo "# job $jobid across a slurmd restart: package coverage $cov, gap $gap s" >&3
    jq -e '.measurements.ledger.package.coverage == 1 and .measurements.gap_s == 0 and
           .measurements.cpu_s > 5' "$rec" >/dev/null ||
        _fail "job $jobid: coverage $cov, gap $gap s: $(jq -c .measurements "$rec")"
    ! grep -q "energy covers" "$DIR/out/job-$jobid.out" ||
        _fail "the job's summary says: $(grep 'energy covers' "$DIR/out/job-$jobid.out")"
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent changed"
}

@test "ceems-agent --start, --stop and --restart: the admin's controls of the supervisor" {
    local agent sv new
    _start_cluster
    agent=$(_wait_agent 10)
    sv=$(_supervisor_pids "$DIR")
    run "$AGENT" -c "$DIR/ceems.conf" --start
    [ "$status" = 0 ] && [[ $output == *"a supervisor runs already: pid $sv, agent pid $agent"* ]] ||
        _fail "--start with one running: $status $output"
    # --restart: a new agent (the program exec'ed anew), same supervisor pid.
    run "$AGENT" -c "$DIR/ceems.conf" --restart
    [ "$status" = 0 ] || _fail "--restart: $output"
    new=$(_wait_agent 10 "$agent")
    [ "$(_supervisor_pids "$DIR")" = "$sv" ] || _fail "the supervisor's pid changed on --restart"
    grep -q "ceems-agent-sv\[$sv\]: info: SIGHUP: executing $AGENT --supervise anew" "$DIR/log/agent.log" ||
        _fail "the supervisor was not exec'ed anew"
    _check_tree "$new"
    # --stop: both gone, the agent checkpointed; slurmd unharmed.
    run "$AGENT" -c "$DIR/ceems.conf" --stop
    [ "$status" = 0 ] || _fail "--stop: $output"
    _wait_no_agent 5
    grep -q "ceems-agent-sv\[$sv\]: info: the agent (pid $new) exited with status 0" "$DIR/log/agent.log" ||
        _fail "the agent was not stopped cleanly"
    _slurmd_pid >/dev/null || _fail "--stop stopped slurmd"
    # --start: a new detached supervisor.
    run "$AGENT" -c "$DIR/ceems.conf" --agent "$AGENT" --log "$DIR/log/agent.log" --start
    [ "$status" = 0 ] || _fail "--start: $output"
    new=$(_wait_agent 10)
    _check_tree "$new"
}

@test "the running agent holds no capability but CAP_PERFMON and is confined: it can neither read /etc/shadow nor write /etc, and still measures jobs" {
    local agent f out jobid state rec kept=0000000000000000
    _start_cluster
    agent=$(_wait_agent 10)
    # The test itself (root) can: otherwise the checks below prove nothing.
    head -c 1 /etc/shadow >/dev/null || _fail "root cannot read /etc/shadow here"
    [ -w /etc ] || _fail "root cannot write /etc here"
    # perf = yes by default: CAP_PERFMON (bit 38) where
    # perf_event_paranoid is above 0, nothing else.
    [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ] && kept=0000004000000000
    for f in CapInh CapAmb; do
        grep -qx "$f:[[:space:]]*0000000000000000" "/proc/$agent/status" ||
            _fail "agent $agent: $(grep "^$f:" "/proc/$agent/status")"
    done
    for f in CapPrm CapEff CapBnd; do
        grep -qx "$f:[[:space:]]*$kept" "/proc/$agent/status" ||
            _fail "agent $agent: $(grep "^$f:" "/proc/$agent/status")"
    done
    grep -qx "NoNewPrivs:[[:space:]]*1" "/proc/$agent/status" || _fail "agent $agent: no no_new_privs"
    [ "$(awk '/^Uid:/ { print $2 }' "/proc/$agent/status")" = 0 ] ||
        _fail "the agent does not run as uid 0"
    grep -q "ceems-agent\[$agent\]: info: file system confined (Landlock ABI [0-9]*): read $DIR/sys, /proc, the cgroup mounts; write $DIR/agent/state, $DIR/agent/spool, $DIR/agent\$" \
        "$DIR/log/agent.log" || _fail "the running agent did not confine itself: $(grep "ceems-agent\[$agent\]" "$DIR/log/agent.log")"
    # The same calls, in a process of the same uid, then the attempts.
    out=$("$AGENT" -c "$DIR/ceems.conf" --check-privileges 2>/dev/null) ||
        _fail "--check-privileges: $out"
    echo "$out" | grep -qx "ok: cannot read /etc/shadow: Permission denied" || _fail "$out"
    echo "$out" | grep -qx "ok: cannot create /etc/.ceems-privileges.[0-9]*: Permission denied" || _fail "$out"
    echo "$out" | grep -qx "ok: can read $DIR/sys/class/powercap/intel-rapl:[0-9:]*/energy_uj" || _fail "$out"
    echo "$out" | grep -qx "ok: can create $DIR/agent/state/.privileges.[0-9]*" || _fail "$out"
    ls /etc/.ceems-privileges.* 2>/dev/null && _fail "a file was left in /etc"
    # And it still measures: the job's record has its energy.
    jobid=$(sbatch --parsable --time=1 -o "$DIR/out/job-%j.out" --wrap 'sleep 2') || _fail "sbatch"
    state=$(slurm_harness_wait_job "$jobid" 60) || _fail "slurm_harness_wait_job"
    [ "$state" = COMPLETED ] || _fail "job $jobid ended $state"
    for _ in $(seq 60); do
        for rec in "$DIR"/agent/spool/*.json; do
            [ -e "$rec" ] && [ "$(jq -r .job.jobid "$rec")" = "$jobid" ] && break 2
        done
        rec=
        sleep 0.5
    done
    [ -n "$rec" ] || _fail "no record of job $jobid"
    jq -e '.measurements.ledger.package.covered_s > 0' "$rec" >/dev/null ||
        _fail "job $jobid was not measured: $(jq -c .measurements "$rec")"
    [ "$(_wait_agent 5)" = "$agent" ] || _fail "the agent changed"
}

@test "agent= names no program: slurmd runs and jobs complete, the error is in slurmd's log" {
    local jobid state
    _start_cluster /nonexistent/ceems-agent
    grep -q "ceems: cannot execute the node agent /nonexistent/ceems-agent: No such file or directory; jobs on this node are not measured" \
        "$DIR/log/slurmd.log" || _fail "no error line in the slurmd log"
    [ -z "$(_supervisor_pids "$DIR")" ] || _fail "a supervisor runs without an agent to run"
    jobid=$(sbatch --parsable --time=1 -o "$DIR/out/job-%j.out" --wrap 'echo ran') || _fail "sbatch"
    state=$(slurm_harness_wait_job "$jobid" 60) || _fail "slurm_harness_wait_job"
    [ "$state" = COMPLETED ] || _fail "job $jobid ended $state"
}

@test "an agent that refuses to start (another one answers on the socket) is retried with a growing backoff" {
    local other new
    _make_dir
    # The agent of a slurmd that is still stopping, as during a restart.
    ( exec "$AGENT" -c "$DIR/ceems.conf" 2>>"$DIR/log/other-agent.log" </dev/null >/dev/null 3>&- ) &
    other=$(_wait_agent 10)
    _start_cluster
    for _ in $(seq 100); do
        grep -q "exited with status 1 after [0-9.]* s; restarting it in 2 s" "$DIR/log/agent.log" && break
        sleep 0.1
    done
    grep -q "another agent is listening on $DIR/agent/agent.sock" "$DIR/log/agent.log" ||
        _fail "the supervised agent did not refuse to start"
    grep -q "exited with status 1 after [0-9.]* s; restarting it in 1 s" "$DIR/log/agent.log" &&
        grep -q "exited with status 1 after [0-9.]* s; restarting it in 2 s" "$DIR/log/agent.log" ||
        _fail "no retries 1 s and 2 s apart"
    [ "$(_stat_field "$other" 4)" != "$(_supervisor_pids "$DIR")" ] || _fail "test error: wrong agent"
    kill -TERM "$other"
    new=$(_wait_agent 15 "$other")
    _check_tree "$new"
}
