#!/usr/bin/env bats
# tests/integration/agent.bats -- the node agent daemon (tools/ceems-agent)
# run as root on this machine, without Slurm: real cgroups (v1, or v2 where
# the host is unified) holding a real CPU-burning process, the real /proc,
# and a copy of the RAPL fixture tree as sysfs whose counters the test
# moves between ticks (the machine has no RAPL).  Checked: configuration
# errors, peer-credential authorization, registration, reports, the
# energy split adding up to what the counters moved, hostile clients,
# restart from a checkpoint after kill -9 with the downtime recovered from
# the counters (or, over a counter reset, recorded as a gap), the tick's
# memory (a region of huge pages, the heap given back after start), the
# libraries loaded only where used (libpq by the replay process,
# libfreeipmi with a BMC) and the resident memory's budget, a
# second agent's whole life under valgrind's memcheck, and a clean
# SIGTERM.
#
# Run as root:
#   CEEMS_TOP_BUILDDIR=$PWD CEEMS_FIXTURES=/path/to/tests/fixtures \
#     bats --tap tests/integration/agent.bats
# Needs: jq; python3 for the raw-socket tests and valgrind for the
# memcheck run (each skipped without it).
# Every cgroup and process it creates is removed in teardown_file, even
# after a failure.

_fail() {
    echo "FAILED: $*" >&2
    return 1
}

_skip_reason() {
    if [ -z "${CEEMS_TOP_BUILDDIR:-}" ] || [ ! -x "$CEEMS_TOP_BUILDDIR/tools/ceems-agent" ]; then
        echo "CEEMS_TOP_BUILDDIR does not hold a built tools/ceems-agent"
    elif [ "$(id -u)" != 0 ]; then
        echo "needs root (creates cgroups, checks peer credentials)"
    elif ! command -v jq >/dev/null; then
        echo "needs jq to read the agent's JSON replies"
    elif [ -z "$(_cgroup_mode)" ]; then
        echo "no usable cgroup v1 (cpuacct, memory, cpuset) or v2 hierarchy"
    fi
}

_cgroup_mode() {
    if [ -d /sys/fs/cgroup/cpuacct ] && [ -d /sys/fs/cgroup/memory ] &&
        [ -d /sys/fs/cgroup/cpuset ] && [ -f /sys/fs/cgroup/cpuacct/cgroup.procs ]; then
        echo v1
    elif [ -f /sys/fs/cgroup/cgroup.controllers ] &&
        grep -qw cpu /sys/fs/cgroup/cgroup.controllers; then
        echo v2
    fi
}

_python() {
    # Debian's own python3: the one root's PATH may point at is not
    # reachable by other users, and is not needed here.
    if [ -x /usr/bin/python3 ]; then echo /usr/bin/python3; else command -v python3; fi
}

# State shared by the tests lives in files: D is the test directory.
_load() {
    D=$(cat "$BATS_FILE_TMPDIR/dir")
    AGENT=$CEEMS_TOP_BUILDDIR/tools/ceems-agent
    SOCK=$D/run/agent.sock
    JOB=$(cat "$D/jobid")
    CG=$(cat "$D/cgname")
    MODE=$(cat "$D/mode")
}

_spec() { # JOBID UID: a register request for the test cgroup
    local path="/$CG/job_$JOB"
    if [ "$MODE" = v1 ]; then
        echo "{\"op\":\"register\",\"job\":{\"jobid\":$1,\"uid\":$2,\"cgroup\":{\"version\":1,\"v1\":{\"cpuacct\":\"$path\",\"memory\":\"$path\",\"cpuset\":\"$path\"}}}}"
    else
        echo "{\"op\":\"register\",\"job\":{\"jobid\":$1,\"uid\":$2,\"cgroup\":{\"version\":2,\"unified\":\"$path\"}}}"
    fi
}

_call() { # REQUEST: run the client as root, reply on stdout
    "$AGENT" --socket "$SOCK" --timeout 3000 --call "$1"
}

_agent_pid() {
    local pid
    pid=$(cat "$D/agent.pid" 2>/dev/null) || return 1
    [ -n "$pid" ] && grep -q ceems-agent "/proc/$pid/cmdline" 2>/dev/null && echo "$pid"
}

# Start the agent in the background; its exit status lands in agent.rc.
_start_agent() {
    rm -f "$D/agent.rc" "$D/agent.pid"
    ( sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$D/agent.pid" \
        "$AGENT" -c "$D/ceems.conf" 2>>"$D/agent.log" >/dev/null
      echo $? >"$D/agent.rc" ) 3>&- &
    for _ in $(seq 100); do
        [ -S "$SOCK" ] && "$AGENT" --socket "$SOCK" --status >/dev/null 2>&1 && return 0
        [ -f "$D/agent.rc" ] && break
        sleep 0.05
    done
    cat "$D/agent.log" >&2
    _fail "the agent did not come up on $SOCK"
}

# Add MICROJOULES to a RAPL zone's counter in the fixture copy, in place
# (the agent keeps the file open and preads it, so it must be the same
# inode) and with the same length (a reader never sees it empty).
_bump() { # ZONE MICROJOULES
    local f=$D/sys/class/powercap/$1/energy_uj old new
    old=$(cat "$f")
    new=$((old + $2))
    [ ${#new} -eq ${#old} ] || _fail "counter $1 would change length"
    printf '%d\n' "$new" | dd of="$f" conv=notrunc status=none
}

setup_file() {
    [ -z "$(_skip_reason)" ] || return 0
    local d cg job mode c
    d=$(mktemp -d /tmp/ceems-agent-test.XXXXXX)
    chmod 0755 "$d"    # other users reach the socket through it
    echo "$d" >"$BATS_FILE_TMPDIR/dir"
    cg=ceems_test_$$_$RANDOM
    job=$((4000000 + RANDOM))
    mode=$(_cgroup_mode)
    echo "$cg" >"$d/cgname"
    echo "$job" >"$d/jobid"
    echo "$mode" >"$d/mode"
    cp -r "$CEEMS_FIXTURES/sys/rapl-intel" "$d/sys"

    if [ "$mode" = v1 ]; then
        for c in cpuacct memory cpuset; do
            mkdir -p "/sys/fs/cgroup/$c/$cg/job_$job"
        done
        # A cpuset cgroup takes no task before it has CPUs and nodes.
        for c in "$cg" "$cg/job_$job"; do
            cat /sys/fs/cgroup/cpuset/cpuset.cpus >"/sys/fs/cgroup/cpuset/$c/cpuset.cpus"
            cat /sys/fs/cgroup/cpuset/cpuset.mems >"/sys/fs/cgroup/cpuset/$c/cpuset.mems"
        done
    else
        mkdir -p "/sys/fs/cgroup/$cg/job_$job"
        for c in cpu memory cpuset; do
            echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control 2>/dev/null || true
            echo "+$c" >"/sys/fs/cgroup/$cg/cgroup.subtree_control" 2>/dev/null || true
        done
    fi

    # The job: a shell burning one CPU, moved into the job's cgroup
    # before it starts burning (it waits for the go file).
    # It then holds 8 MB of its own (charged to the job: dram by RSS).
    sh -c 'while [ ! -e "$1" ]; do sleep 0.01; done
           a=$(head -c 8000000 /dev/zero | tr "\\0" x); while :; do :; done' \
        sh "$d/go" </dev/null >/dev/null 2>&1 3>&- &
    echo $! >"$d/burner.pid"
    if [ "$mode" = v1 ]; then
        for c in cpuacct memory cpuset; do
            echo "$!" >"/sys/fs/cgroup/$c/$cg/job_$job/cgroup.procs"
        done
    else
        echo "$!" >"/sys/fs/cgroup/$cg/job_$job/cgroup.procs"
    fi
    touch "$d/go"

    cat >"$d/ceems.conf" <<EOF
# agent.bats: fixture RAPL, real /proc and cgroups
interval = 100ms
checkpoint_interval = 0
socket = $d/run/agent.sock
state_dir = $d/state
spool_dir = $d/spool
sysfs_root = $d/sys
procfs_root = /proc
source_hwmon = no
source_pm_counters = no
zone = FR
emissions_table = ${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}/lib/data/carbon-intensity.tsv
EOF
    D=$d
    AGENT=$CEEMS_TOP_BUILDDIR/tools/ceems-agent
    SOCK=$d/run/agent.sock
    _start_agent
}

teardown_file() {
    local d pid cg job mode c
    [ -f "$BATS_FILE_TMPDIR/dir" ] || return 0
    d=$(cat "$BATS_FILE_TMPDIR/dir")
    D=$d
    if pid=$(_agent_pid); then
        kill -9 "$pid" 2>/dev/null
    fi
    if [ -f "$d/silent.pid" ]; then
        kill -9 "$(cat "$d/silent.pid")" 2>/dev/null
    fi
    if [ -f "$d/burner.pid" ]; then
        kill -9 "$(cat "$d/burner.pid")" 2>/dev/null
    fi
    cg=$(cat "$d/cgname" 2>/dev/null)
    job=$(cat "$d/jobid" 2>/dev/null)
    mode=$(cat "$d/mode" 2>/dev/null)
    if [ -n "$cg" ]; then
        # rmdir fails while a killed task is still leaving: retry briefly.
        for _ in $(seq 50); do
            if [ "$mode" = v1 ]; then
                for c in cpuacct memory cpuset; do
                    rmdir "/sys/fs/cgroup/$c/$cg/job_$job" "/sys/fs/cgroup/$c/$cg" 2>/dev/null
                done
                [ -d "/sys/fs/cgroup/cpuacct/$cg" ] || [ -d "/sys/fs/cgroup/memory/$cg" ] ||
                    [ -d "/sys/fs/cgroup/cpuset/$cg" ] || break
            else
                rmdir "/sys/fs/cgroup/$cg/job_$job" "/sys/fs/cgroup/$cg" 2>/dev/null
                [ -d "/sys/fs/cgroup/$cg" ] || break
            fi
            sleep 0.1
        done
    fi
    rm -rf "$d"
}

setup() {
    local reason
    reason=$(_skip_reason)
    [ -z "$reason" ] || skip "$reason"
    _load
}

_show_log() {
    echo "---- agent log:" >&2
    tail -n 40 "$D/agent.log" >&2
}

@test "configuration: --check-config prints it; a bad or missing file is a clear error, exit 1" {
    run "$AGENT" -c "$D/ceems.conf" --check-config
    [ "$status" -eq 0 ] || _fail "--check-config exit $status: $output"
    echo "$output" | grep -qx "interval = 100ms" || _fail "no 'interval = 100ms' in: $output"
    echo "$output" | grep -qx "zone = FR" || _fail "no 'zone = FR' in: $output"

    printf 'interval = 100ms\ninterval = fast\n' >"$D/bad.conf"
    run "$AGENT" -c "$D/bad.conf"
    [ "$status" -eq 1 ] || _fail "bad config: exit $status, want 1"
    [[ "$output" == *"bad.conf:2: interval = 'fast' is not a duration"* ]] ||
        _fail "unclear error for a bad value: $output"

    printf 'colour = blue\n' >"$D/bad.conf"
    run "$AGENT" -c "$D/bad.conf" --check-config
    [ "$status" -eq 1 ] || _fail "unknown key: exit $status, want 1"
    [[ "$output" == *"bad.conf:1: unknown key 'colour'"* ]] || _fail "unclear error: $output"

    run "$AGENT" -c "$D/no-such.conf"
    [ "$status" -eq 1 ] || _fail "missing explicit file: exit $status, want 1"
    [[ "$output" == *"no-such.conf: No such file or directory"* ]] || _fail "unclear error: $output"
}

@test "a second agent on the same socket refuses to start and leaves the first alone" {
    run "$AGENT" -c "$D/ceems.conf"
    [ "$status" -eq 1 ] || _fail "second agent: exit $status, want 1"
    [[ "$output" == *"another agent is listening on $SOCK"* ]] || _fail "unclear error: $output"
    _call '{"op":"status"}' >/dev/null || _fail "the first agent no longer answers"
}

@test "status answers any user; the socket is 0666 in a 0755 directory" {
    local mode
    mode=$(stat -c %a "$SOCK")
    [ "$mode" = 666 ] || _fail "socket mode $mode"
    run runuser -u nobody -- "$AGENT" --socket "$SOCK" --status
    [ "$status" -eq 0 ] || _fail "status as nobody: exit $status: $output"
    [ "$(echo "$output" | jq -r .ok)" = true ] || _fail "status reply: $output"
    [ "$(echo "$output" | jq -r .jobs)" = 0 ] || _fail "jobs before any registration: $output"
    echo "$output" | jq -e '.energy.package and .energy.dram and (.energy.gpu | not)' >/dev/null ||
        _fail "status must list the measured domains only: $output"
}

@test "privileges: no capability left but CAP_PERFMON for perf counters, no_new_privs, open-files limit raised" {
    local pid st soft hard kept=0 logged=none
    pid=$(_agent_pid) || _fail "no agent running"
    st=/proc/$pid/status
    # perf = yes by default: per-CPU events on a job's cgroup need
    # CAP_PERFMON (bit 38) where perf_event_paranoid is above 0.
    if [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 0 ]; then
        kept=4000000000
        logged=cap_perfmon=ep
    fi
    for set in CapInh CapAmb; do
        grep -q "^$set:[[:space:]]*0*\$" "$st" || _fail "$set is not empty: $(grep "^$set" "$st")"
    done
    for set in CapPrm CapEff CapBnd; do
        grep -q "^$set:[[:space:]]*0*$kept\$" "$st" || _fail "$set is not $kept: $(grep "^$set" "$st")"
    done
    grep -q "^NoNewPrivs:[[:space:]]*1" "$st" || _fail "no_new_privs not set"
    grep -q "capabilities kept: $logged" "$D/agent.log" || { _show_log; _fail "kept set not logged"; }
    read -r soft hard < <(awk '/^Max open files/ { print $4, $5 }' "/proc/$pid/limits")
    [ "$soft" = "$hard" ] || _fail "open files soft $soft, hard $hard"
}

@test "a counter that could wrap within the tick is sampled on its own faster timer" {
    local d=$D/slow out
    mkdir -p "$d"
    sed -e "s|^interval = .*|interval = 1m|" -e "s|$D/run/|$d/|" -e "s|$D/state|$d/state|" \
        "$D/ceems.conf" >"$d/ceems.conf"
    ( sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$d/pid" \
        "$AGENT" -c "$d/ceems.conf" 2>"$d/log" >/dev/null ) 3>&- &
    for _ in $(seq 100); do
        out=$("$AGENT" --socket "$d/agent.sock" --status 2>/dev/null) && break
        sleep 0.05
    done
    kill -TERM "$(cat "$d/pid")"
    # The fixture's dram zone 1 (1500 W assumed) wraps in 43.8 s: with a
    # one-minute tick, its zone is read every half of that.
    echo "$out" | jq -e '.interval_s == 60 and .source_interval_s > 20 and .source_interval_s < 22' >/dev/null ||
        { cat "$d/log" >&2; _fail "status: $out"; }
    grep -q "energy counters sampled every 21.9[0-9]* s (faster than the 60.000 s tick" "$d/log" ||
        { cat "$d/log" >&2; _fail "no log line for the fast timer"; }
}

@test "idle_interval: an agent holding no job ticks that often; a job brings the interval back at once, its end idle_interval" {
    local d=$D/idle out t0 t1 pid
    mkdir -p "$d"
    sed -e "s|$D/run/|$d/|" -e "s|$D/state|$d/state|" -e "s|$D/spool|$d/spool|" \
        "$D/ceems.conf" >"$d/ceems.conf"
    printf 'idle_interval = 2s\nidle_power_package = 20W\nidle_power_dram = 2W\n' >>"$d/ceems.conf"
    ( sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$d/pid" \
        "$AGENT" -c "$d/ceems.conf" 2>"$d/log" >/dev/null ) 3>&- &
    st() { "$AGENT" --socket "$d/agent.sock" --status 2>/dev/null; }
    for _ in $(seq 100); do
        [ "$(st | jq -r .tick_s)" = 2 ] && break
        sleep 0.05
    done
    pid=$(cat "$d/pid")
    out=$(st)
    [ "$(echo "$out" | jq -r .tick_s)" = 2 ] || { kill "$pid"; cat "$d/log" >&2; _fail "idle, no job: $out"; }
    t0=$(st | jq .ticks)
    sleep 3
    t1=$(st | jq .ticks)
    echo "# idle: $((t1 - t0)) ticks in 3 s" >&3
    [ $((t1 - t0)) -ge 1 ] && [ $((t1 - t0)) -le 2 ] || { kill "$pid"; _fail "idle ticks in 3 s: $t0 -> $t1"; }
    # A job registers: the long tick ends then (the job's first tick is
    # an interval of its own), the interval (100 ms) from then on.
    t0=$(st | jq .ticks)
    out=$("$AGENT" --socket "$d/agent.sock" --timeout 3000 --call "$(_spec $((JOB + 7)) 0)") ||
        { kill "$pid"; cat "$d/log" >&2; _fail "register: $out"; }
    out=$(st)
    [ "$(echo "$out" | jq -r .tick_s)" = 0.1 ] || { kill "$pid"; _fail "a job held: $out"; }
    [ "$(echo "$out" | jq .ticks)" -ge $((t0 + 1)) ] ||
        { kill "$pid"; _fail "the idle tick did not end at the registration: $t0 -> $out"; }
    t0=$(st | jq .ticks)
    sleep 1
    t1=$(st | jq .ticks)
    echo "# a job held: $((t1 - t0)) ticks in 1 s" >&3
    [ $((t1 - t0)) -ge 5 ] || { kill "$pid"; _fail "ticks with a job in 1 s: $t0 -> $t1"; }
    # Its end and its record written: idle_interval again.
    "$AGENT" --socket "$d/agent.sock" --timeout 3000 --call "{\"op\":\"deregister\",\"jobid\":$((JOB + 7))}" >/dev/null &&
        "$AGENT" --socket "$d/agent.sock" --timeout 3000 --call "{\"op\":\"release\",\"jobid\":$((JOB + 7))}" >/dev/null ||
        { kill "$pid"; _fail "deregister or release"; }
    for _ in $(seq 40); do
        [ "$(st | jq -r .tick_s)" = 2 ] && break
        sleep 0.05
    done
    out=$(st)
    kill -TERM "$pid"
    [ "$(echo "$out" | jq -r .tick_s)" = 2 ] || { cat "$d/log" >&2; _fail "after the job: $out"; }
}

@test "only root may register: another uid gets a clear refusal, logged" {
    run runuser -u nobody -- "$AGENT" --socket "$SOCK" --call "$(_spec "$JOB" 65534)"
    [ "$status" -eq 1 ] || _fail "register as nobody: exit $status: $output"
    [ "$(echo "$output" | jq -r .code)" = EPERM ] || _fail "reply: $output"
    [[ "$(echo "$output" | jq -r .error)" == "only root may register jobs (job $JOB)" ]] ||
        _fail "reply: $output"
    grep -q "refused a request from uid 65534 pid [0-9]*: only root may register jobs" "$D/agent.log" ||
        { _show_log; _fail "refusal not logged"; }
    run runuser -u nobody -- "$AGENT" --socket "$SOCK" --call "{\"op\":\"deregister\",\"jobid\":$JOB}"
    [ "$status" -eq 1 ] && [[ "$output" == *"only root may deregister"* ]] || _fail "deregister as nobody: $output"
}

@test "root registers the job; a second registration is refused with EEXIST" {
    run _call "$(_spec "$JOB" 65534)"
    [ "$status" -eq 0 ] || { _show_log; _fail "register: exit $status: $output"; }
    [ "$output" = '{"ok":true}' ] || _fail "register reply: $output"
    run _call "$(_spec "$JOB" 65534)"
    [ "$status" -eq 1 ] || _fail "second register: exit $status: $output"
    [ "$(echo "$output" | jq -r .code)" = EEXIST ] || _fail "second register: $output"
    [ "$(_call '{"op":"status"}' | jq -r .jobs)" = 1 ] || _fail "status does not count the job"
    run _call "$(_spec $((JOB + 1000)) 0 | sed "s|job_$JOB|job_nonexistent|g")"
    [ "$status" -eq 1 ] && [ "$(echo "$output" | jq -r .code)" = ENOENT ] ||
        _fail "a job whose cgroup does not exist: $output"
}

@test "report: the burner's CPU time grows; its owner may read it, others may not" {
    local r1 r2 c1 c2
    r1=$(_call "{\"op\":\"report\",\"jobid\":$JOB}") || _fail "report: $r1"
    sleep 1
    r2=$(runuser -u nobody -- "$AGENT" --socket "$SOCK" --call "{\"op\":\"report\",\"jobid\":$JOB}") ||
        _fail "report by the job's owner (nobody): $r2"
    c1=$(echo "$r1" | jq .report.cpu_s)
    c2=$(echo "$r2" | jq .report.cpu_s)
    echo "$r2" | jq -e ".report.jobid == $JOB and .report.uid == 65534" >/dev/null || _fail "ids: $r2"
    # A process burning CPU for a second, on a 2-CPU machine that may be
    # busy with other work: clearly more, never more than the CPUs give.
    awk -v a="$c1" -v b="$c2" 'BEGIN { exit !(b - a > 0.2 && b - a < 2.5) }' ||
        _fail "CPU time went from $c1 to $c2 over 1 s"
    echo "$r2" | jq -e '.report.usage.cpu_usage_ns > 0 and .report.usage.mem_rss_bytes > 4000000' >/dev/null ||
        _fail "usage (CPU time, the burner's 8 MB): $r2"
    if [ "$MODE" = v1 ]; then
        [ "$(echo "$r2" | jq -r .report.usage.cpuset)" = "$(cat /sys/fs/cgroup/cpuset/cpuset.cpus)" ] ||
            _fail "cpuset is not the node's: $r2"
    fi

    run runuser -u daemon -- "$AGENT" --socket "$SOCK" --call "{\"op\":\"report\",\"jobid\":$JOB}"
    [ "$status" -eq 1 ] || _fail "report by another user: exit $status: $output"
    [[ "$(echo "$output" | jq -r .error)" == "job $JOB is not yours"* ]] || _fail "reply: $output"
    run _call '{"op":"report","jobid":1}'
    [ "$status" -eq 1 ] && [ "$(echo "$output" | jq -r .code)" = ENOENT ] || _fail "unknown job: $output"
}

@test "memory: a tick's state in one region of huge pages; what starting left free given back" {
    local pid smaps heap huge
    pid=$(_agent_pid) || _fail "no agent running"
    # ASan and valgrind check what the C library allocates: the agent
    # keeps to the heap under them.
    grep -q libasan "/proc/$pid/maps" && skip "a sanitizer build keeps to the heap"
    smaps=$(cat "/proc/$pid/smaps")
    # Its state, the job registered above and their readers: in an
    # anonymous mapping of the agent's own, backed by huge pages.
    huge=$(echo "$smaps" | awk '/^AnonHugePages:/ && $2 > max { max = $2 } END { print max + 0 }')
    if grep -q '\[never\]' /sys/kernel/mm/transparent_hugepage/enabled 2>/dev/null; then
        [ "$huge" = 0 ] || _fail "huge pages where the kernel gives none: $huge kB"
    else
        [ "$huge" -ge 2048 ] || _fail "no huge page in the agent's memory (largest $huge kB)"
    fi
    # The eBPF loader's copy of the kernel's BTF and the rest of start-up
    # left about 8 MiB free on the heap before it was given back.
    heap=$(echo "$smaps" | awk '/\[heap\]/ { h = 1; next } /^[0-9a-f]+-/ { h = 0 } h && /^Rss:/ { print $2 }')
    [ "${heap:-0}" -lt 6144 ] || _fail "the heap holds ${heap} kB resident after start"
}

@test "memory: without a database or a BMC, neither libpq nor libfreeipmi is mapped; VmRSS within 8 MiB + 64 KiB a job" {
    local pid jobs rss budget
    pid=$(_agent_pid) || _fail "no agent running"
    ! grep -q '^database' "$D/ceems.conf" && ! grep -q '^bmc' "$D/ceems.conf" ||
        _fail "this agent's configuration names a database or a BMC"
    # Loaded only where they are used: the replay process (with a
    # database), the BMC source (with a BMC).
    ! grep -E '/lib(pq|freeipmi)\.so' "/proc/$pid/maps" ||
        _fail "the agent maps a library it does not use"
    grep -q libasan "/proc/$pid/maps" && skip "a sanitizer build is larger by design"
    # The budget of its resident memory as ps shows it.
    jobs=$(_call '{"op":"status"}' | jq -r .jobs)
    [ "$jobs" -ge 1 ] || _fail "no job registered: $jobs"
    rss=$(awk '$1 == "VmRSS:" { print $2 }' "/proc/$pid/status")
    budget=$((8192 + 64 * jobs))
    echo "# VmRSS $rss KiB with $jobs job(s), budget $budget KiB;" \
        "$(grep RssFile "/proc/$pid/status" | tr -s '\t ' ' ')" >&3
    [ "$rss" -le "$budget" ] || _fail "VmRSS $rss KiB over $budget KiB: $(grep ^Rss "/proc/$pid/status" | tr '\n' ' ')"
}

@test "garbage on the socket gets an error reply and the agent survives" {
    local py
    run _call 'garbage'
    [ "$status" -eq 1 ] && [[ "$output" == *'"error":"message is not valid JSON'* ]] ||
        _fail "garbage: $output"
    run _call '{"op":"status","x\nFORGED: line":1}'
    [ "$status" -eq 1 ] && [[ "$output" == *"unknown field 'x?FORGED: line'"* ]] ||
        _fail "a control character in a key: $output"
    ! grep -q '^FORGED' "$D/agent.log" || _fail "a client forged a log line"
    run _call '{"op":"register","job":{"jobid":1,"uid":0,"cgroup":{"version":2,"unified":"/../../etc"}}}'
    [ "$status" -eq 1 ] && [[ "$output" == *"must not hold empty, '.' or '..' components"* ]] ||
        _fail "climbing path: $output"
    run bash -c "head -c 4000 /dev/urandom | '$AGENT' --socket '$SOCK' --call -"
    [ "$status" -eq 1 ] && [ "$(echo "$output" | jq -r .ok)" = false ] || _fail "random bytes: $output"
    run bash -c "head -c 70000 /dev/zero | tr '\\0' ' ' | '$AGENT' --socket '$SOCK' --call -"
    [ "$status" -eq 2 ] && [[ "$output" == *"Message too long"* ]] ||
        _fail "the client must not send an oversized request: $output"

    py=$(_python)
    if [ -n "$py" ]; then
        # An oversized message is refused; a client that says nothing is
        # dropped after about a second; beyond 256 clients of root, the
        # next one is refused EBUSY.
        run "$py" - "$SOCK" <<'EOF'
import socket, sys, time
path = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
s.send(b" " * 70000)
reply = s.recv(1000).decode()
assert "request of 70000 bytes is larger than the 65536 allowed" in reply, reply
print("oversized:", reply)
s.close()
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(path)
t0 = time.monotonic()
s.settimeout(5)
data = s.recv(100)
dt = time.monotonic() - t0
assert data == b"", data
assert 0.8 < dt < 2.5, dt
print("silent client dropped after %.2f s" % dt)
held = []
for i in range(256):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(path)
    held.append(c)
time.sleep(0.2)
extra = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
extra.connect(path)
extra.settimeout(2)
reply = extra.recv(1000).decode()
assert '"code":"EBUSY"' in reply, reply
print("257th client:", reply)
EOF
        [ "$status" -eq 0 ] || { _show_log; _fail "raw socket clients: $output"; }
        sleep 1.2   # the 256 silent clients time out
    fi
    run _call '{"op":"status"}'
    [ "$status" -eq 0 ] || { _show_log; _fail "the agent no longer answers: $output"; }
    [ "$(echo "$output" | jq -r .jobs)" = 1 ] || _fail "the job was lost: $output"
}

@test "status never ticks: any number of requests leave the tick count to the timer" {
    local py first last dt
    py=$(_python)
    [ -n "$py" ] || skip "needs python3 to send many requests on one connection"
    # 300 status requests as fast as the agent answers, on one connection
    # of root; the ticks the agent counted over that time are the timer's
    # (every 100 ms), not one per request.
    run "$py" - "$SOCK" <<'EOF'
import json, socket, sys, time
s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
s.connect(sys.argv[1])
def status():
    s.send(b'{"op":"status"}')
    return json.loads(s.recv(70000))
t0 = time.monotonic()
first = status()
for i in range(298):
    status()
last = status()
dt = time.monotonic() - t0
print(first["ticks"], last["ticks"], "%.3f" % dt)
EOF
    [ "$status" -eq 0 ] || { _show_log; _fail "status requests: $output"; }
    read -r first last dt <<<"$output"
    echo "# 300 status requests in $dt s: ticks $first -> $last" >&3
    awk "BEGIN { exit !($last - $first <= $dt / 0.1 + 2) }" ||
        _fail "300 status requests in $dt s made $((last - first)) ticks: status ticks"
}

@test "another uid holds 8 connections at most, one request each; root still gets through" {
    local py
    py=$(_python)
    [ -n "$py" ] || skip "needs python3 for raw socket clients"
    run runuser -u nobody -- "$py" - "$SOCK" <<'EOF'
import socket, sys, time
path = sys.argv[1]
held = []
for i in range(40):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    c.connect(path)
    held.append(c)
time.sleep(0.3)
kept = []
for c in held:
    c.setblocking(False)
    try:
        data = c.recv(1000)
        assert b'"code":"EBUSY"' in data or data == b"", data
    except BlockingIOError:
        kept.append(c)
    except ConnectionResetError:
        pass
print("kept", len(kept), "of", len(held))
# One request per connection: answered, then closed.
c = kept[0]
c.setblocking(True)
c.settimeout(2)
c.send(b'{"op":"status"}')
reply = c.recv(70000)
assert b'"ok":true' in reply, reply
assert c.recv(10) == b"", "the connection stayed open"
print("one request, then closed")
EOF
    [ "$status" -eq 0 ] || { _show_log; _fail "nobody's clients: $output"; }
    [[ "$output" == *"kept 8 of 40"* ]] || _fail "$output"
    [[ "$output" == *"one request, then closed"* ]] || _fail "$output"
    run _call '{"op":"status"}'
    [ "$status" -eq 0 ] || _fail "root after nobody's clients: $output"
    echo "$output" | jq -e '.clients_refused >= 32' >/dev/null || _fail "refusals not counted: $output"
}

@test "deregister: the job's energy, system and idle add up to what the counters moved" {
    local rep st moved_pkg=17500000 moved_dram=3750000
    sleep 0.3
    for _ in 1 2 3 4 5; do
        _bump intel-rapl:0 2000000
        _bump intel-rapl:1 1500000
        _bump intel-rapl:0:1 500000
        _bump intel-rapl:1:1 250000
        sleep 0.25
    done
    sleep 0.3
    rep=$(_call "{\"op\":\"deregister\",\"jobid\":$JOB}") || { _show_log; _fail "deregister: $rep"; }
    st=$(_call '{"op":"status"}') || _fail "status: $st"
    echo "# report: $rep" >&3
    echo "# status: $st" >&3
    [ "$(echo "$st" | jq -r .jobs)" = 0 ] || _fail "the job is still registered: $st"
    # The node's delta is exactly what the fixture counters moved ...
    echo "$st" | jq -e "(.energy.package.delta_j - $moved_pkg / 1e6 | fabs) < 1e-6 and
                        (.energy.dram.delta_j - $moved_dram / 1e6 | fabs) < 1e-6" >/dev/null ||
        _fail "node deltas are not the moved 17.5 J and 3.75 J: $st"
    # ... and the job's share, system and idle add up to it.
    jq -en --argjson r "$rep" --argjson s "$st" '
        ["package", "dram"] | all(. as $d |
            ($r.report.ledger[$d].joules + $s.energy[$d].system_j + $s.energy[$d].idle_j
             - $s.energy[$d].delta_j | fabs) < 1e-9 * $s.energy[$d].delta_j)' >/dev/null ||
        _fail "job + system + idle != node delta"
    echo "$rep" | jq -e '.report.ledger.package.joules > 0 and .report.ledger.dram.joules > 0 and
                          .report.cpu_s > 1 and (.report.ledger.node | not) and
                          .report.ledger.emissions.factor.zone == "FR" and
                          .report.ledger.emissions.grams > 0' >/dev/null ||
        _fail "final report: $rep"
}

# The inotify watches of the agent's processes, "INODE" (hex) a line.
_note_watches() {
    local pid p f
    pid=$(_agent_pid) || return 0
    for p in "$pid" $(pgrep -P "$pid"); do
        for f in /proc/"$p"/fdinfo/*; do
            sed -n 's/^inotify wd:[0-9a-f]* ino:\([0-9a-f]*\) .*/\1/p' "$f" 2>/dev/null
        done
    done
}

# Leave a note as the plugin does (a temporary name, renamed), for job
# JOBID, from the fixture's epilog note.
_drop_note() { # JOBID
    jq -c --argjson j "$1" '.job.jobid = $j' "$CEEMS_FIXTURES/notes/note-epilog.json" \
        >"$D/spool/notes/.job-$1.tmp"
    mv "$D/spool/notes/.job-$1.tmp" "$D/spool/notes/job-$1-1700000000-bats.note"
}

_wait_note_record() { # JOBID: its record in the spool within 3 s
    for _ in $(seq 30); do
        grep -lq "\"jobid\":$1," "$D"/spool/*.json 2>/dev/null && return 0
        sleep 0.1
    done
    _show_log
    _fail "no record of job $1's note"
}

@test "a job note is taken at the next tick; the folder is watched with inotify, also once made again" {
    local job5=$((JOB + 40)) job6=$((JOB + 41)) ino
    [ -d "$D/spool/notes" ] || _fail "the agent did not make its note folder"
    ino=$(printf '%x' "$(stat -c %i "$D/spool/notes")")
    _note_watches | grep -qx "$ino" || _fail "no inotify watch on the note folder ($ino): $(_note_watches)"
    _drop_note "$job5"
    _wait_note_record "$job5"
    [ ! -e "$D/spool/notes/job-$job5-1700000000-bats.note" ] || _fail "the note was left"
    # The folder removed and made again: its new inode is watched.
    rm -rf "$D/spool/notes"
    sleep 0.3
    mkdir -m 0700 "$D/spool/notes"
    _drop_note "$job6"
    _wait_note_record "$job6"
    ino=$(printf '%x' "$(stat -c %i "$D/spool/notes")")
    for _ in $(seq 20); do
        _note_watches | grep -qx "$ino" && break
        sleep 0.1
    done
    _note_watches | grep -qx "$ino" || _fail "the new note folder ($ino) is not watched: $(_note_watches)"
    ! grep -q "cannot read the job notes" "$D/agent.log" || { _show_log; _fail "an error was logged"; }
}

@test "kill -9 and restart: the job is restored, its downtime recovered from the counters" {
    local job2=$((JOB + 1)) pid rep
    run _call "$(_spec "$job2" 0)"
    [ "$status" -eq 0 ] || { _show_log; _fail "register $job2: $output"; }
    sleep 0.5
    pid=$(_agent_pid) || _fail "no agent running"
    kill -9 "$pid"
    _bump intel-rapl:0 2000000
    sleep 1
    [ -S "$SOCK" ] || _fail "the killed agent's socket file should still be there"
    _start_agent
    grep -q "removed the stale socket $SOCK" "$D/agent.log" || { _show_log; _fail "stale socket not reported"; }
    grep -q "job $job2 restored from state: the .* s the agent was down are recovered" "$D/agent.log" ||
        { _show_log; _fail "job $job2 not restored with its downtime recovered"; }
    sleep 0.3
    rep=$(_call "{\"op\":\"report\",\"jobid\":$job2}") || { _show_log; _fail "report after restart: $rep"; }
    echo "$rep" | jq -e '.report.gap_s == 0 and (.report.gaps | not) and
                          .report.recovered_s >= 0.9 and .report.recovered_s < 5 and
                          (.report.recovered | length) == 1 and .report.elapsed_s >= 1.4' >/dev/null ||
        _fail "downtime not recorded as recovered: $rep"
    echo "$rep" | jq -e '.report.ledger.package.coverage == 1 and .report.ledger.dram.coverage == 1' >/dev/null ||
        _fail "a recovered interval keeps the coverage whole: $rep"
    run _call "{\"op\":\"deregister\",\"jobid\":$job2}"
    [ "$status" -eq 0 ] || _fail "deregister $job2: $output"
}

@test "kill -9 and restart over a counter reset: the downtime is a gap" {
    local job5=$((JOB + 4)) pid rep f old
    run _call "$(_spec "$job5" 0)"
    [ "$status" -eq 0 ] || { _show_log; _fail "register $job5: $output"; }
    sleep 0.5
    pid=$(_agent_pid) || _fail "no agent running"
    kill -9 "$pid"
    # The counter goes back by half: no wrap within a second explains it.
    f=$D/sys/class/powercap/intel-rapl:0/energy_uj
    old=$(cat "$f")
    printf '%0*d\n' "${#old}" $((old / 2)) | dd of="$f" conv=notrunc status=none
    sleep 1
    _start_agent
    grep -q "job $job5 restored from state: .* s not accounted while the agent was down (a counter was reset)" \
        "$D/agent.log" || { _show_log; _fail "job $job5 not restored with a gap"; }
    rep=$(_call "{\"op\":\"report\",\"jobid\":$job5}") || { _show_log; _fail "report after restart: $rep"; }
    echo "$rep" | jq -e '.report.gap_s >= 0.9 and .report.gap_s < 5 and (.report.recovered | not)' >/dev/null ||
        _fail "gap not recorded: $rep"
    echo "$rep" | jq -e '.report.ledger.package.coverage < 1' >/dev/null ||
        _fail "the gap must lower the package coverage: $rep"
    run _call "{\"op\":\"deregister\",\"jobid\":$job5}"
    [ "$status" -eq 0 ] || _fail "deregister $job5: $output"
}

_stop_agent() {
    local pid
    pid=$(_agent_pid) || return 0
    kill -TERM "$pid"
    for _ in $(seq 50); do
        [ -f "$D/agent.rc" ] && return 0
        sleep 0.1
    done
    _fail "the agent did not stop within 5 s"
}

@test "no release within finish_grace: the agent spools the record itself, finalized_by agent" {
    local job3=$((JOB + 2)) rep rep2 f
    _stop_agent
    cp "$D/ceems.conf" "$D/ceems.conf.orig"
    printf 'finish_grace = 300ms\ncluster = agentbats\n' >>"$D/ceems.conf"
    _start_agent
    run _call "$(_spec "$job3" 0)"
    [ "$status" -eq 0 ] || { _show_log; _fail "register $job3: $output"; }
    sleep 0.3
    rep=$(_call "{\"op\":\"deregister\",\"jobid\":$job3}") || _fail "deregister: $rep"
    rep2=$(_call "{\"op\":\"deregister\",\"jobid\":$job3}") || _fail "second deregister: $rep2"
    [ "$(echo "$rep" | jq -cS .report)" = "$(echo "$rep2" | jq -cS .report)" ] ||
        _fail "a repeated deregister must return the same report: $rep / $rep2"
    # Jobs the earlier tests deregistered without a release wait in the
    # state file too: the restarted agent spools theirs as well.
    for _ in $(seq 50); do
        f=$(grep -l "\"jobid\":$job3," "$D"/spool/*.json 2>/dev/null | head -n 1)
        [ -n "$f" ] && break
        sleep 0.1
    done
    [ -n "$f" ] || { _show_log; _fail "no record spooled by the agent"; }
    jq -e --argjson j "$job3" '.finalized_by == "agent" and .job.jobid == $j and
        .job.cluster == "agentbats" and (.notes | map(.id) | index("agent-finalized")) != null' \
        "$f" >/dev/null || _fail "record: $(cat "$f")"
    jq -e --argjson r "$rep" '.measurements.elapsed_s == $r.report.elapsed_s' "$f" >/dev/null ||
        _fail "the record's figures are not the final report's"
    grep -q "job $job3: record written to the spool by the agent" "$D/agent.log" ||
        { _show_log; _fail "not logged"; }
    run _call "{\"op\":\"release\",\"jobid\":$job3}"
    [ "$status" -ne 0 ] && [[ "$output" == *ENOENT* ]] || _fail "release after the agent wrote it: $output"
}

@test "a database that never answers does not hold requests: the replay runs in its own process" {
    local job4=$((JOB + 3)) t0 t1 ms max=0 i child agent fd link
    _stop_agent
    [ -n "$(ls "$D"/spool/*.json 2>/dev/null)" ] || skip "needs the record the previous test spooled"
    mkdir -p "$D/pg"
    # A "database" that accepts connections and never says a word; each
    # connection is noted in accepted.
    "$(_python)" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.bind(sys.argv[1]); s.listen(16)
held = []
while True:
    c, _ = s.accept(); held.append(c)
    open(sys.argv[2], "a").write("x\n")' "$D/pg/.s.PGSQL.5999" "$D/accepted" </dev/null >/dev/null 2>&1 3>&- &
    echo $! >"$D/silent.pid"
    printf 'database = host=%s port=5999 dbname=ceems\ndatabase_timeout = 30s\n' "$D/pg" >>"$D/ceems.conf"
    # A BMC over LAN that does not answer: its thread runs in the agent
    # (retrying) when the replay process is started.
    printf 'username ceems\npassword ceems-test-pw\n' >"$D/bmc-credentials"
    chmod 0600 "$D/bmc-credentials"
    printf 'bmc = lan\nbmc_host = 127.0.0.1:16659\nbmc_credentials_file = %s\nbmc_interval = 250ms\nbmc_timeout = 1s\n' \
        "$D/bmc-credentials" >>"$D/ceems.conf"
    _start_agent
    for i in $(seq 100); do
        [ -s "$D/accepted" ] && break
        sleep 0.05
    done
    [ -s "$D/accepted" ] || { _show_log; _fail "the replay never reached the silent database"; }
    sleep 0.2
    child=$(pgrep -P "$(_agent_pid)" | head -n 1)
    [ -n "$child" ] || _fail "no replay process under the agent"
    for set in CapPrm CapEff CapAmb; do
        grep -q "^$set:[[:space:]]*0*\$" "/proc/$child/status" ||
            _fail "replay process: $set is not empty: $(grep "^$set" "/proc/$child/status")"
    done
    # Started while the agent has the BMC's thread, the replay process is
    # the agent's program executed anew (a bare fork of a threaded process
    # may inherit a lock some thread held, and hang on it): the replay
    # mode on its command line, the same executable, one thread, and of
    # descriptors only 0-2, its pipe and the database's socket.
    agent=$(_agent_pid)
    [ "$(awk '/^Threads:/ { print $2 }' "/proc/$agent/status")" -ge 2 ] ||
        { _show_log; _fail "the agent has no BMC thread: $(grep Threads "/proc/$agent/status")"; }
    [ "$(tr '\0' ' ' <"/proc/$child/cmdline")" = "ceems-agent --replay 1000 " ] ||
        _fail "replay process: command line '$(tr '\0' ' ' <"/proc/$child/cmdline")'"
    [ "$(readlink "/proc/$child/exe")" = "$(readlink "/proc/$agent/exe")" ] ||
        _fail "replay process: executable $(readlink "/proc/$child/exe")"
    grep -q '^Threads:[[:space:]]*1$' "/proc/$child/status" ||
        _fail "replay process: $(grep Threads "/proc/$child/status")"
    grep -q '^NoNewPrivs:[[:space:]]*1$' "/proc/$child/status" ||
        _fail "replay process: no_new_privs is not set"
    # libpq loaded by the replay process alone (after the confinement),
    # libfreeipmi by the agent for its BMC source.
    grep -q '/libpq\.so' "/proc/$child/maps" ||
        _fail "the replay process reached the database without libpq mapped"
    ! grep -q '/libpq\.so' "/proc/$agent/maps" || _fail "the agent itself maps libpq"
    grep -q '/libfreeipmi\.so' "/proc/$agent/maps" ||
        _fail "the agent with a BMC source maps no libfreeipmi"
    for fd in $(ls "/proc/$child/fd"); do
        link=$(readlink "/proc/$child/fd/$fd")
        case $fd:$link in
        [012]:*|4:pipe:*|*:socket:*) ;;
        *) _fail "replay process: descriptor $fd is $link" ;;
        esac
    done
    # The replay now waits up to 30 s on the database; requests must not.
    for i in 1 2 3 4 5; do
        t0=$(date +%s%N)
        run _call '{"op":"status"}'
        t1=$(date +%s%N)
        [ "$status" -eq 0 ] || { _show_log; _fail "status during the stuck replay: $output"; }
        ms=$(( (t1 - t0) / 1000000 ))
        [ "$ms" -gt "$max" ] && max=$ms
    done
    t0=$(date +%s%N)
    run _call "$(_spec "$job4" 0)"
    t1=$(date +%s%N)
    [ "$status" -eq 0 ] || { _show_log; _fail "register during the stuck replay: $output"; }
    ms=$(( (t1 - t0) / 1000000 ))
    [ "$ms" -gt "$max" ] && max=$ms
    echo "# slowest request while the replay is stuck: $max ms (client included)" >&3
    # A client process start costs milliseconds; a stuck loop costs 30 s.
    [ "$max" -lt 500 ] || _fail "a request took $max ms while the replay was stuck"
    run _call "{\"op\":\"deregister\",\"jobid\":$job4}"
    run _call "{\"op\":\"release\",\"jobid\":$job4}"
    [ -n "$(ls "$D"/spool/*.json 2>/dev/null)" ] || _fail "the record must wait in the spool"
    # Stopping the agent stops its replay process too, at once.
    t0=$(date +%s%N)
    _stop_agent
    t1=$(date +%s%N)
    [ $(( (t1 - t0) / 1000000 )) -lt 4000 ] || _fail "stopping took too long"
    ! kill -0 "$child" 2>/dev/null || _fail "the replay process $child outlived the agent"
    kill "$(cat "$D/silent.pid")" 2>/dev/null
    cp "$D/ceems.conf.orig" "$D/ceems.conf"
    _start_agent
}

@test "valgrind: an agent under memcheck registers the job, reads it, checkpoints, ends it and stops: no error, no leak" {
    local d=$D/vg pid i rep
    command -v valgrind >/dev/null || skip "valgrind is not installed"
    pid=$(_agent_pid) || _fail "no agent running"
    grep -q libasan "/proc/$pid/maps" && skip "a sanitizer build runs under its own checker"
    mkdir -p "$d"
    # Its own socket, state and spool; every tick a checkpoint, every
    # second a full reading.  No eBPF: libbpf's feature probes pass
    # bpf() attribute structs whose unused fields valgrind's model of the
    # call reads (libbpf's code, not the agent's; ASan covers the eBPF
    # path in the sanitizer run).
    sed -e "s|$D/run/|$d/|" -e "s|$D/state|$d/state|" -e "s|$D/spool|$d/spool|" \
        "$D/ceems.conf" >"$d/ceems.conf"
    printf 'usage_interval = 1s\nebpf = off\n' >>"$d/ceems.conf"
    ( sh -c 'echo $$ >"$1"; shift; exec "$@"' sh "$d/pid" \
        "$CEEMS_TOP_BUILDDIR/libtool" --mode=execute valgrind -q --error-exitcode=99 \
        --leak-check=full --errors-for-leak-kinds=definite,indirect \
        --log-file="$d/vg.log" "$AGENT" -c "$d/ceems.conf" 2>"$d/log" >/dev/null &&
        echo 0 >"$d/rc" || echo $? >"$d/rc" ) 3>&- &
    for i in $(seq 600); do
        "$AGENT" --socket "$d/agent.sock" --status >/dev/null 2>&1 && break
        [ -f "$d/rc" ] && break
        sleep 0.1
    done
    "$AGENT" --socket "$d/agent.sock" --status >/dev/null 2>&1 ||
        { cat "$d/log" "$d/vg.log" >&2; _fail "the agent under valgrind did not come up"; }
    "$AGENT" --socket "$d/agent.sock" --timeout 10000 --call "$(_spec "$JOB" 65534)" >/dev/null ||
        { cat "$d/log" >&2; _fail "register under valgrind"; }
    sleep 3
    rep=$("$AGENT" --socket "$d/agent.sock" --timeout 10000 --call "{\"op\":\"deregister\",\"jobid\":$JOB}") ||
        { cat "$d/log" >&2; _fail "deregister under valgrind: $rep"; }
    echo "$rep" | jq -e '.report.cpu_s > 0' >/dev/null || _fail "no CPU time measured: $rep"
    "$AGENT" --socket "$d/agent.sock" --timeout 10000 --call "{\"op\":\"release\",\"jobid\":$JOB}" >/dev/null ||
        _fail "release under valgrind"
    kill -TERM "$(cat "$d/pid")"
    for i in $(seq 600); do
        [ -f "$d/rc" ] && break
        sleep 0.1
    done
    [ -f "$d/rc" ] || _fail "the agent under valgrind did not stop within 60 s"
    [ "$(cat "$d/rc")" = 0 ] || { cat "$d/vg.log" >&2; _fail "valgrind: exit $(cat "$d/rc")"; }
    # Errors and leaks come as "==PID==" lines; valgrind's own warnings
    # ("--PID--": a system call it does not know, as Landlock's, which
    # the agent then does without) are not the agent's.
    ! grep -q '^==' "$d/vg.log" || { cat "$d/vg.log" >&2; _fail "valgrind reported"; }
}

@test "SIGTERM: the agent exits 0 and removes its socket" {
    local pid
    pid=$(_agent_pid) || _fail "no agent running"
    kill -TERM "$pid"
    for _ in $(seq 50); do
        [ -f "$D/agent.rc" ] && break
        sleep 0.1
    done
    [ -f "$D/agent.rc" ] || _fail "the agent did not stop within 5 s"
    [ "$(cat "$D/agent.rc")" = 0 ] || { _show_log; _fail "exit status $(cat "$D/agent.rc")"; }
    [ ! -e "$SOCK" ] || _fail "socket $SOCK left behind"
    grep -q "SIGTERM received: checkpointing and stopping" "$D/agent.log" || _fail "no log line"
    run "$AGENT" --socket "$SOCK" --status
    [ "$status" -eq 2 ] && [[ "$output" == *"No such file or directory"* ]] ||
        _fail "a client of a stopped agent: $output"
}
