# tests/harness/slurm.sh -- sourceable bash library that runs a throwaway
# single-node Slurm cluster (slurmctld + slurmd + its own munged) on
# loopback for ceems integration tests: real Slurm, real cgroups, no
# systemd, everything (config, state, logs, pid files, munge key and
# socket) inside one temporary directory.
#
# Usage (as root):
#   . tests/harness/slurm.sh
#   dir=$(slurm_harness_mktemp)                  # ${TMPDIR:-/tmp}/ceems-test.slurm.XXXXXX
#   slurm_harness_start "$dir" "required /abs/path/plugin.so arg=1"
#                                                # exports SLURM_CONF, CEEMS_TEST_SLURM_DIR
#   jobid=$(sbatch --parsable -o "$dir/out/job-%j.out" job.sh)
#   state=$(slurm_harness_wait_job "$jobid" 60)  # e.g. COMPLETED
#   slurm_harness_stop "$dir"                    # idempotent, also after a failed start
#   slurm_harness_leftovers                      # non-zero if anything is left behind
#
# Environment:
#   CEEMS_TEST_SLURMCTLD_PORT   slurmctld port (default 16817)
#   CEEMS_TEST_SLURMD_PORT      slurmd port (default 16818); with several
#                               nodes, node i (from 1) listens on this + i - 1
#   CEEMS_TEST_NODES            how many Slurm nodes (default 1: the node
#                               "localhost"); more than 1: nodes n1..nN, each
#                               its own slurmd (slurmd -N nI: Debian's slurmd
#                               is built for multiple slurmd per host) with
#                               its own port, spool (spool/d/nI), pid file
#                               (run/slurmd-nI.pid) and log
#                               (log/slurmd-nI.log); at most 8
#   CEEMS_TEST_SRUN_PORT_RANGE  SrunPortRange (default 16830-16899)
#   CEEMS_TEST_SLURM_CONF_EXTRA extra lines appended to slurm.conf (optional)
#   CEEMS_TEST_SLURM_SCHED_EXTRA more SchedulerParameters, comma-separated
#                               (optional; bf_interval=1: heterogeneous jobs,
#                               which only the backfill scheduler starts,
#                               start within a second, not 30)
#   CEEMS_TEST_JOBACCT_GATHER   JobAcctGatherType (default jobacct_gather/cgroup;
#                               jobacct_gather/none turns Slurm's sampler off)
#   CEEMS_TEST_JOBACCT_FREQ     JobAcctGatherFrequency (default task=5)
#   CEEMS_TEST_SLURM_NODE_GRES  the node's Gres= (e.g. gpu:2; optional): then
#                               GresTypes= its names (gpu, shard...), and
#                               CEEMS_TEST_GRES_CONF (its lines) is written
#                               to DIR/gres.conf
#   CEEMS_TEST_SLURM_TIMEOUT    seconds to wait for the node to be idle (default 30)
#   CEEMS_TEST_SLURMD_FOREGROUND 1: run slurmd -D (no daemonizing, as under
#                               systemd) in the background (default: slurmd forks)
#   CEEMS_TEST_SLURMD_WRAPPER   a command (words) that slurmd is started
#                               through, e.g. "unshare --mount ... sh
#                               SCRIPT ARG" (optional; its last word is
#                               followed by slurmd's command line)
#   CEEMS_TEST_SLURMDBD         1: accounting in slurmdbd and a throwaway
#                               MariaDB, so that sacct, sstat and sreport
#                               read real records (tests/harness/slurmdbd.sh
#                               lists its variables; default: none)
#
# Layout of DIR (0755, root):
#   slurm.conf cgroup.conf plugstack.conf
#   munge/  (0755, munge) munge.key munge.sock munged.pid munged.log munged.seed
#   log/    slurmctld.log slurmd.log (slurmstepd logs to slurmd.log)
#   run/    slurmctld.pid slurmd.pid
#   spool/ctld spool/d
#   (several nodes: log/slurmd-nI.log, run/slurmd-nI.pid, spool/d/nI)
#   out/    (1777) for job output, writable by jobs of unprivileged users
#
# Only one cluster per machine at a time: the ports are fixed and the
# cgroups Slurm creates are named after the node (slurm_localhost, or
# slurm_n1... with several nodes).
# All functions are safe under `set -eu`: they report failures on stderr,
# naming what failed, and return non-zero instead of exiting.

: "${CEEMS_TEST_SLURMCTLD_PORT:=16817}"
: "${CEEMS_TEST_SLURMD_PORT:=16818}"
: "${CEEMS_TEST_SRUN_PORT_RANGE:=16830-16899}"
: "${CEEMS_TEST_SLURM_TIMEOUT:=30}"
: "${CEEMS_TEST_JOBACCT_GATHER:=jobacct_gather/cgroup}"
: "${CEEMS_TEST_JOBACCT_FREQ:=task=5}"
: "${CEEMS_TEST_NODES:=1}"

_slurm_harness_err() {
    echo "slurm_harness: $*" >&2
}

# The opt-in accounting (slurmdbd and MariaDB), beside this file.
# shellcheck source=tests/harness/slurmdbd.sh
. "$(dirname "${BASH_SOURCE[0]}")/slurmdbd.sh"

# The cgroup mount point.  Slurm (Debian build, MULTIPLE_SLURMD) names its
# cgroups after the node: slurm_NODE in v1, system.slice/NODE_slurmstepd.scope
# in v2 (_slurm_harness_cgroup_tops).
_SLURM_HARNESS_CGROOT=/sys/fs/cgroup

# slurm_harness_nodes: the cluster's node names, one a line: localhost
# alone (CEEMS_TEST_NODES=1), else n1..nN.
slurm_harness_nodes() {
    local i
    if [ "$CEEMS_TEST_NODES" = 1 ]; then
        echo localhost
        return 0
    fi
    for i in $(seq 1 "$CEEMS_TEST_NODES"); do
        echo "n$i"
    done
}

# slurm_harness_nodelist: the same as one Slurm host list (localhost, n[1-3]).
slurm_harness_nodelist() {
    if [ "$CEEMS_TEST_NODES" = 1 ]; then
        echo localhost
    else
        echo "n[1-$CEEMS_TEST_NODES]"
    fi
}

# The node count must be a small number: each node takes a port above
# CEEMS_TEST_SLURMD_PORT, below SrunPortRange.
_slurm_harness_check_nodes() {
    case $CEEMS_TEST_NODES in
        [1-8]) return 0 ;;
    esac
    _slurm_harness_err "CEEMS_TEST_NODES=$CEEMS_TEST_NODES: give a count from 1 to 8"
    return 1
}

# _slurm_harness_node_file NODE DIR EXT: slurmd's per-node file in DIR
# (DIR/slurmd.EXT with one node, DIR/slurmd-NODE.EXT with several), as
# slurm.conf's %n names it.
_slurm_harness_node_file() {
    if [ "$CEEMS_TEST_NODES" = 1 ]; then
        echo "$2/slurmd.$3"
    else
        echo "$2/slurmd-$1.$3"
    fi
}

# _slurm_harness_cgroup_tops NODE...: the cgroup trees Slurm creates for
# these nodes, one a line (whether they exist or not).
_slurm_harness_cgroup_tops() {
    local n
    for n in "$@"; do
        echo "$_SLURM_HARNESS_CGROOT"/*/"slurm_$n"
        echo "$_SLURM_HARNESS_CGROOT/slurm_$n"
        echo "$_SLURM_HARNESS_CGROOT/system.slice/${n}_slurmstepd.scope"
    done | tr ' ' '\n'
}

# Prints cgroup2 when /sys/fs/cgroup is the unified hierarchy (cgroup v2
# only), anything else (tmpfs: v1 or hybrid) otherwise.
_slurm_harness_cgroup_fs() {
    stat -f -c %T "$_SLURM_HARNESS_CGROOT" 2>/dev/null || echo unknown
}

# _slurm_harness_systemd: whether systemd is this machine's init and
# answers on the system bus (slurmd's cgroup/v2 plugin asks it for the
# stepd scope then).
_slurm_harness_systemd() {
    [ "$(cat /proc/1/comm 2>/dev/null)" = systemd ] &&
        [ -S /run/dbus/system_bus_socket ]
}

# slurm_harness_mktemp: create and print a fresh directory for a cluster.
slurm_harness_mktemp() {
    local d
    if ! d=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.slurm.XXXXXX"); then
        _slurm_harness_err "mktemp -d under ${TMPDIR:-/tmp} failed"
        return 1
    fi
    chmod 0755 "$d" || return 1
    echo "$d"
}

_slurm_harness_log_tails() {
    local dir=$1 f
    for f in "$dir/munge/munged.log" "$dir/log/slurmctld.log" "$dir"/log/slurmd*.log; do
        [ -f "$f" ] || continue
        echo "slurm_harness: ---- tail of $f ----" >&2
        tail -n 25 "$f" >&2 || true
    done
    echo "slurm_harness: ----" >&2
}

# Print the pids of processes named NAME... (by /proc/PID/comm) whose
# command line or environment contains the string NEEDLE, or that have a
# file whose path contains NEEDLE open.
_slurm_harness_find_procs() {
    local needle=$1 p comm name txt
    shift
    for p in /proc/[0-9]*; do
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        for name in "$@"; do
            [ "$comm" = "$name" ] || continue
            # zombies are gone already (their parent, often PID 1, reaps them)
            grep -q '^State:[[:space:]]*Z' 2>/dev/null "$p/status" && continue 2
            txt=$(tr '\0' '\n' 2>/dev/null <"$p/cmdline") || txt=
            case $txt in
                *"$needle"*) echo "${p#/proc/}"; continue 2 ;;
            esac
            txt=$(tr '\0' '\n' 2>/dev/null <"$p/environ") || txt=
            case $txt in
                *"$needle"*) echo "${p#/proc/}"; continue 2 ;;
            esac
            # slurmstepd: neither its command line ("slurmstepd: [1.0]") nor
            # its environment names the cluster, but it holds the log file
            # (DIR/log/slurmd.log) open.
            txt=$(find "$p/fd" -mindepth 1 -maxdepth 1 -lname "*$needle*" -print -quit 2>/dev/null) || txt=
            if [ -n "$txt" ]; then
                echo "${p#/proc/}"
                continue 2
            fi
        done
    done
}

# _slurm_harness_agent_procs DIR NAME...: processes named NAME of the
# cluster in DIR or of a ceems configuration its plugstack.conf names
# (config=PATH): the node agent and its supervisor.
_slurm_harness_agent_procs() {
    local dir=$1 word
    shift
    {
        _slurm_harness_find_procs "$dir/" "$@"
        for word in $(cat "$dir/plugstack.conf" 2>/dev/null); do
            case $word in
                config=/*) _slurm_harness_find_procs "${word#config=}" "$@" ;;
            esac
        done
    } | sort -u
}

# _slurm_harness_pidfile FILE NAME: print the pid in pid file FILE if that
# process is alive, not a zombie, and named NAME (so that a pid reused by
# another process is never signalled).
_slurm_harness_pidfile() {
    local pid comm
    [ -f "$1" ] || return 0
    pid=$(head -n 1 "$1" 2>/dev/null) || return 0
    case $pid in
        ''|*[!0-9]*) return 0 ;;
    esac
    { read -r comm <"/proc/$pid/comm"; } 2>/dev/null || return 0
    [ "$comm" = "$2" ] || return 0
    grep -q '^State:[[:space:]]*Z' 2>/dev/null "/proc/$pid/status" && return 0
    echo "$pid"
}

# _slurm_harness_wait_gone TIMEOUT_DECISECONDS PID...: wait until all exit.
_slurm_harness_wait_gone() {
    local n=$1 p alive
    shift
    while :; do
        alive=
        for p in "$@"; do
            # a zombie counts as gone
            if [ -d "/proc/$p" ] && ! grep -q '^State:.*Z' "/proc/$p/status" 2>/dev/null; then
                alive="$alive $p"
            fi
        done
        [ -z "$alive" ] && return 0
        [ "$n" -le 0 ] && return 1
        n=$((n - 1))
        sleep 0.1
    done
}

# Succeeds if something listens on TCP port PORT (any address).
_slurm_harness_port_listening() {
    local port=$1 out
    if command -v ss >/dev/null 2>&1; then
        out=$(ss -Hltn "sport = :$port" 2>/dev/null) || out=
    else
        # /proc/net/tcp{,6}: local address is HEX_ADDR:HEX_PORT, state 0A = LISTEN
        out=$(awk -v p="$(printf ':%04X' "$port")" \
            '$4 == "0A" && substr($2, length($2) - 4) == p' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null) || out=
    fi
    [ -n "$out" ]
}

# _slurm_harness_node_lines HARDWARE: slurm.conf's NodeName lines.  One
# node: localhost on SlurmdPort.  Several: nI, all on this host
# (NodeHostname=localhost), each on its own port, which its slurmd -N nI
# takes from this line.
_slurm_harness_node_lines() {
    local hw=$1 i=0 n gres=${CEEMS_TEST_SLURM_NODE_GRES:+ Gres=$CEEMS_TEST_SLURM_NODE_GRES}
    if [ "$CEEMS_TEST_NODES" = 1 ]; then
        echo "NodeName=localhost NodeAddr=127.0.0.1 $hw$gres State=UNKNOWN"
        return 0
    fi
    for n in $(slurm_harness_nodes); do
        echo "NodeName=$n NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((CEEMS_TEST_SLURMD_PORT + i)) $hw$gres State=UNKNOWN"
        i=$((i + 1))
    done
}

# The slurmd ports of the cluster, one a line.
_slurm_harness_slurmd_ports() {
    seq "$CEEMS_TEST_SLURMD_PORT" $((CEEMS_TEST_SLURMD_PORT + CEEMS_TEST_NODES - 1))
}

_slurm_harness_write_conf() {
    local dir=$1 nodeline cgfs pernode_dir='' pernode_file=''
    shift
    # Several slurmd on one host need their own spool, pid file and log:
    # slurmd expands %n (its node name) in these paths.
    if [ "$CEEMS_TEST_NODES" != 1 ]; then
        pernode_dir=/%n
        pernode_file=-%n
    fi

    # The node's real hardware, so that slurmd registers without a mismatch.
    if ! nodeline=$(env -u SLURM_CONF slurmd -C 2>/dev/null | head -n 1) ||
       [ -z "$nodeline" ]; then
        _slurm_harness_err "slurmd -C printed nothing (cannot read the node's hardware)"
        return 1
    fi
    # "NodeName=vm CPUs=2 Boards=1 ... RealMemory=24105" -> drop NodeName
    nodeline=${nodeline#NodeName=* }

    cat >"$dir/slurm.conf" <<EOF
# Generated by tests/harness/slurm.sh for a throwaway test cluster.
ClusterName=ceemstest
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$CEEMS_TEST_SLURMCTLD_PORT
SlurmdPort=$CEEMS_TEST_SLURMD_PORT
SrunPortRange=$CEEMS_TEST_SRUN_PORT_RANGE
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge/munge.sock
StateSaveLocation=$dir/spool/ctld
SlurmdSpoolDir=$dir/spool/d$pernode_dir
SlurmctldPidFile=$dir/run/slurmctld.pid
SlurmdPidFile=$dir/run/slurmd$pernode_file.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd$pernode_file.log
SlurmctldDebug=info
SlurmdDebug=debug
ProctrackType=proctrack/cgroup
TaskPlugin=task/cgroup,task/affinity
JobAcctGatherType=$CEEMS_TEST_JOBACCT_GATHER
JobAcctGatherFrequency=$CEEMS_TEST_JOBACCT_FREQ
$(_slurm_harness_dbd_conf_lines "$dir")
JobCompType=jobcomp/none
PrologFlags=Contain
PlugStackConfig=$dir/plugstack.conf
SelectType=select/cons_tres
SelectTypeParameters=CR_Core_Memory
DefMemPerCPU=1024
SchedulerType=sched/backfill
# no 3 s batch_sched_delay: tiny test jobs start at once.  sbatch --wait
# polls after 2 s, then 8 s (MinJobAge=300), so a job that ends within
# 2 s returns in 2 s; slurm_harness_wait_job polls every 0.2 s.
SchedulerParameters=batch_sched_delay=0${CEEMS_TEST_SLURM_SCHED_EXTRA:+,$CEEMS_TEST_SLURM_SCHED_EXTRA}
MpiDefault=none
MailProg=/bin/true
SwitchType=switch/none
ReturnToService=2
KillWait=2
MinJobAge=300
InactiveLimit=0
WaitTime=0
SlurmctldTimeout=30
SlurmdTimeout=60
MessageTimeout=10
TCPTimeout=5
$(_slurm_harness_node_lines "$nodeline")
PartitionName=debug Nodes=$(slurm_harness_nodelist) Default=YES MaxTime=INFINITE State=UP
EOF
    if [ -n "${CEEMS_TEST_SLURM_NODE_GRES:-}" ]; then
        # "gpu:3,shard:4" -> GresTypes=gpu,shard
        echo "GresTypes=$(printf '%s\n' "$CEEMS_TEST_SLURM_NODE_GRES" |
            tr ',' '\n' | cut -d: -f1 | paste -sd, -)" >>"$dir/slurm.conf"
        printf '%s\n' "${CEEMS_TEST_GRES_CONF:-}" >"$dir/gres.conf"
        chmod 0644 "$dir/gres.conf"
    fi
    if [ -n "${CEEMS_TEST_SLURM_CONF_EXTRA:-}" ]; then
        printf '# CEEMS_TEST_SLURM_CONF_EXTRA\n%s\n' "$CEEMS_TEST_SLURM_CONF_EXTRA" \
            >>"$dir/slurm.conf"
    fi

    # cgroup.conf is read from the directory of slurm.conf.
    cgfs=$(_slurm_harness_cgroup_fs)
    {
        echo "# Generated by tests/harness/slurm.sh ($cgfs at $_SLURM_HARNESS_CGROOT)"
        echo "CgroupPlugin=autodetect"
        echo "ConstrainCores=yes"
        echo "ConstrainRAMSpace=yes"
        # cgroup v2 without systemd: Slurm creates its scope itself
        # (system.slice/localhost_slurmstepd.scope) and enables the
        # controllers it needs.  Under systemd (a node as sites run it)
        # slurmd asks systemd for that scope over D-Bus, delegated, and
        # systemd enables the controllers on its way down: making the
        # scope behind systemd's back leaves cpu and cpuset off there.
        if [ "$cgfs" = cgroup2fs ] && ! _slurm_harness_systemd; then
            echo "IgnoreSystemd=yes"
        fi
    } >"$dir/cgroup.conf"

    : >"$dir/plugstack.conf"
    local line
    for line in "$@"; do
        printf '%s\n' "$line" >>"$dir/plugstack.conf"
    done
    chmod 0644 "$dir/slurm.conf" "$dir/cgroup.conf" "$dir/plugstack.conf"
}

_slurm_harness_start_munge() {
    local dir=$1 m=$1/munge i

    if ! mkdir -p "$m" || ! chown munge: "$m" || ! chmod 0755 "$m"; then
        _slurm_harness_err "cannot create $m for user munge"
        return 1
    fi
    # A private key for this cluster only.
    if ! dd if=/dev/urandom of="$m/munge.key" bs=1024 count=1 status=none ||
       ! chown munge: "$m/munge.key" || ! chmod 0600 "$m/munge.key"; then
        _slurm_harness_err "cannot create munge key $m/munge.key"
        return 1
    fi
    if ! (cd / && runuser -u munge -- munged \
            --socket="$m/munge.sock" \
            --key-file="$m/munge.key" \
            --pid-file="$m/munged.pid" \
            --log-file="$m/munged.log" \
            --seed-file="$m/munged.seed" \
            --num-threads=2) >"$dir/log/munged.start" 2>&1; then
        _slurm_harness_err "munged failed to start:"
        cat "$dir/log/munged.start" >&2 || true
        return 1
    fi
    i=0
    until munge -n -S "$m/munge.sock" 2>/dev/null | unmunge -S "$m/munge.sock" >/dev/null 2>&1; do
        i=$((i + 1))
        if [ "$i" -ge 50 ]; then
            _slurm_harness_err "munged on $m/munge.sock does not answer (munge -n | unmunge)"
            return 1
        fi
        sleep 0.1
    done
}

# slurm_harness_start DIR [PLUGSTACK_LINE...]: configure and start the
# cluster in DIR (created if missing).  On failure prints the log tails and
# returns non-zero; call slurm_harness_stop DIR in any case.
slurm_harness_start() {
    local dir=${1:-} i state t0 ms deadline fg_slurmd='' slurmd_alive node
    if [ -z "$dir" ]; then
        _slurm_harness_err "usage: slurm_harness_start DIR [PLUGSTACK_LINE...]"
        return 2
    fi
    shift
    if [ "$(id -u)" != 0 ]; then
        _slurm_harness_err "must run as root (slurmd, slurmstepd and munged setup need it)"
        return 1
    fi
    for i in slurmctld slurmd sbatch srun scontrol sinfo munged munge unmunge runuser; do
        if ! command -v "$i" >/dev/null 2>&1; then
            _slurm_harness_err "$i not found (packages: slurmctld slurmd slurm-client munge)"
            return 1
        fi
    done
    if ! id -u munge >/dev/null 2>&1; then
        _slurm_harness_err "user munge does not exist (package munge)"
        return 1
    fi
    case $dir in
        /*) ;;
        *) _slurm_harness_err "DIR must be an absolute path: $dir"; return 2 ;;
    esac
    if [ -e "$dir/slurm.conf" ]; then
        _slurm_harness_err "$dir already holds a cluster; use a fresh directory"
        return 1
    fi
    if [ -n "$(_slurm_harness_find_procs CEEMS_TEST_SLURM_DIR= slurmctld slurmd)" ]; then
        _slurm_harness_err "another harness cluster is running (slurmctld/slurmd with CEEMS_TEST_SLURM_DIR in their environment); stop it first"
        slurm_harness_leftovers >&2 || true
        return 1
    fi
    _slurm_harness_check_nodes || return 2
    for i in "$CEEMS_TEST_SLURMCTLD_PORT" $(_slurm_harness_slurmd_ports); do
        if _slurm_harness_port_listening "$i"; then
            _slurm_harness_err "TCP port $i is already in use (set CEEMS_TEST_SLURMCTLD_PORT/CEEMS_TEST_SLURMD_PORT to free ports)"
            return 1
        fi
    done
    # shellcheck disable=SC2046
    if ! mkdir -p "$dir/log" "$dir/run" "$dir/spool/ctld" "$dir/spool/d" "$dir/out" \
            $(slurm_harness_nodes | sed "s|^|$dir/spool/d/|") ||
       ! chmod 0755 "$dir" || ! chmod 1777 "$dir/out"; then
        _slurm_harness_err "cannot create the directories under $dir"
        return 1
    fi

    _slurm_harness_write_conf "$dir" "$@" || return 1

    # CEEMS_TEST_SLURM_DIR also marks munged, slurmctld and slurmd (their
    # environment) as harness processes for slurm_harness_leftovers.
    # (slurmd does not pass it on to slurmstepd.)
    export SLURM_CONF=$dir/slurm.conf CEEMS_TEST_SLURM_DIR=$dir

    _slurm_harness_start_munge "$dir" || { _slurm_harness_log_tails "$dir"; return 1; }
    _slurm_harness_dbd_start "$dir" || return 1
    t0=$(date +%s%N)
    if ! (cd / && slurmctld -f "$dir/slurm.conf") >"$dir/log/slurmctld.start" 2>&1; then
        _slurm_harness_err "slurmctld failed to start:"
        cat "$dir/log/slurmctld.start" >&2 || true
        _slurm_harness_log_tails "$dir"
        return 1
    fi
    for node in $(slurm_harness_nodes); do
        if [ "${CEEMS_TEST_SLURMD_FOREGROUND:-}" = 1 ]; then
            # 3>&-: bats waits for whatever holds its fd 3.
            # shellcheck disable=SC2086 # the wrapper's words
            (cd / && exec ${CEEMS_TEST_SLURMD_WRAPPER:-} slurmd -D -f "$dir/slurm.conf" -N "$node") \
                </dev/null >"$(_slurm_harness_node_file "$node" "$dir/log" start)" 2>&1 3>&- &
            fg_slurmd="$fg_slurmd $!"
        # shellcheck disable=SC2086 # the wrapper's words
        elif ! (cd / && ${CEEMS_TEST_SLURMD_WRAPPER:-} slurmd -f "$dir/slurm.conf" -N "$node") >"$(_slurm_harness_node_file "$node" "$dir/log" start)" 2>&1; then
            _slurm_harness_err "slurmd -N $node failed to start:"
            cat "$(_slurm_harness_node_file "$node" "$dir/log" start)" >&2 || true
            _slurm_harness_log_tails "$dir"
            return 1
        fi
    done

    deadline=$(( $(date +%s) + CEEMS_TEST_SLURM_TIMEOUT ))
    while :; do
        # one line per node (-N): all of them idle
        state=$(timeout 5 sinfo -h -N -n "$(slurm_harness_nodelist)" -o %t 2>/dev/null |
            sort -u | paste -sd, -) || state=
        [ "$state" = idle ] && break
        if [ -z "$(_slurm_harness_pidfile "$dir/run/slurmctld.pid" slurmctld)" ]; then
            _slurm_harness_err "slurmctld is not running (died after start)"
            _slurm_harness_log_tails "$dir"
            return 1
        fi
        # A foreground slurmd writes its pid file some time after it
        # starts: until then, the process launched is what to watch.
        if [ -n "${fg_slurmd:-}" ]; then
            # shellcheck disable=SC2086
            slurmd_alive=$(kill -0 $fg_slurmd 2>/dev/null && echo yes)
        else
            slurmd_alive=$(_slurm_harness_slurmd_pids "$dir")
            # A daemonized slurmd writes its pid file once its plugins
            # are loaded, a second or more after the command returned
            # on a slow machine: until then, its marked process counts.
            [ "$(echo "$slurmd_alive" | grep -c .)" = "$CEEMS_TEST_NODES" ] ||
                slurmd_alive=$(_slurm_harness_marked_slurmds "$dir")
            [ "$(echo "$slurmd_alive" | grep -c .)" = "$CEEMS_TEST_NODES" ] || slurmd_alive=
        fi
        if [ -z "$slurmd_alive" ]; then
            _slurm_harness_err "a slurmd is not running (died after start)"
            _slurm_harness_log_tails "$dir"
            return 1
        fi
        if [ "$(date +%s)" -ge "$deadline" ]; then
            _slurm_harness_err "nodes $(slurm_harness_nodelist) not idle after ${CEEMS_TEST_SLURM_TIMEOUT} s (sinfo states: '${state:-none}')"
            timeout 5 scontrol show node "$(slurm_harness_nodelist)" >&2 2>/dev/null || true
            _slurm_harness_log_tails "$dir"
            return 1
        fi
        sleep 0.2
    done
    # slurmctld's main loop does not schedule batch jobs before
    # batch_sched_delay (3 s until the first scheduling pass reads
    # SchedulerParameters) has passed since it started: a job submitted
    # earlier waits until then, and sbatch --wait, which polls after 2 s
    # and then 8 s, would return only after 10 s.  Wait it out here.
    ms=$(( ($(date +%s%N) - t0) / 1000000 ))
    if [ "$ms" -lt 3100 ]; then
        sleep "$(printf '%d.%03d' $(( (3100 - ms) / 1000 )) $(( (3100 - ms) % 1000 )))"
    fi
    echo "slurm_harness: cluster up in $dir ($(_slurm_harness_cgroup_fs), ports $CEEMS_TEST_SLURMCTLD_PORT/$CEEMS_TEST_SLURMD_PORT)"
}

# The pids of the cluster's running slurmd in DIR (from their pid files:
# run/slurmd.pid, run/slurmd-NODE.pid), one a line.
_slurm_harness_slurmd_pids() {
    local f
    for f in "$1"/run/slurmd.pid "$1"/run/slurmd-*.pid; do
        _slurm_harness_pidfile "$f" slurmd
    done
}

# _slurm_harness_marked_slurmds DIR: the live slurmd processes started for
# the cluster in DIR (CEEMS_TEST_SLURM_DIR=DIR in their environment), one
# pid a line.
_slurm_harness_marked_slurmds() {
    local p comm
    for p in /proc/[0-9]*; do
        { read -r comm <"$p/comm"; } 2>/dev/null || continue
        [ "$comm" = slurmd ] || continue
        grep -q 'State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
        tr '\0' '\n' 2>/dev/null <"$p/environ" |
            grep -qxF "CEEMS_TEST_SLURM_DIR=$1" && echo "${p#/proc/}"
    done
    return 0
}

# The node names of the cluster in DIR, from its slurm.conf: stopping a
# cluster does not depend on CEEMS_TEST_NODES being what it was at start.
_slurm_harness_conf_nodes() {
    sed -n 's/^NodeName=\([^ ]*\) .*/\1/p' "$1/slurm.conf" 2>/dev/null
}

# Remove the cgroup trees Slurm created for the nodes of the cluster in
# DIR, killing any process still inside them.  Deepest directories first.
_slurm_harness_clean_cgroups() {
    local rc=0 top d f p pids i
    # shellcheck disable=SC2046 # node names are words
    for top in $(_slurm_harness_cgroup_tops $(_slurm_harness_conf_nodes "$1")); do
        [ -d "$top" ] || continue
        # thaw frozen job cgroups, or SIGKILL cannot take effect
        find "$top" -name freezer.state 2>/dev/null | while IFS= read -r f; do
            echo THAWED >"$f" 2>/dev/null || true
        done
        i=0
        while :; do
            pids=$(find "$top" -name cgroup.procs -exec cat {} + 2>/dev/null | sort -u)
            [ -z "$pids" ] && break
            if [ "$i" -ge 30 ]; then
                _slurm_harness_err "processes stay in $top: ${pids//$'\n'/ }"
                rc=1
                break
            fi
            for p in $pids; do
                kill -KILL "$p" 2>/dev/null || true
            done
            i=$((i + 1))
            sleep 0.1
        done
        # depth-first: children before parents
        while IFS= read -r d; do
            rmdir "$d" 2>/dev/null || true
        done <<EOF
$(find "$top" -depth -type d 2>/dev/null)
EOF
        if [ -d "$top" ]; then
            _slurm_harness_err "cannot remove cgroup tree $top"
            rc=1
        fi
    done
    return "$rc"
}

# slurm_harness_stop DIR: shut the cluster of DIR down, kill what is left of
# it (slurmctld, slurmd, slurmstepd, munged, job processes), remove the
# cgroups Slurm created and DIR.  Idempotent; works after a partial start.
slurm_harness_stop() {
    local dir=${1:-} rc=0 pids ctld slurmd

    if [ -z "$dir" ]; then
        _slurm_harness_err "usage: slurm_harness_stop DIR"
        return 2
    fi
    if [ ! -e "$dir" ]; then
        # Stopped and removed already (or never started): leave the
        # cgroups alone, they may belong to a cluster started since.
        return 0
    fi

    ctld=$(_slurm_harness_pidfile "$dir/run/slurmctld.pid" slurmctld)
    slurmd=$(_slurm_harness_slurmd_pids "$dir")
    if [ -n "$ctld" ]; then
        # Stops slurmctld and the slurmd of the nodes.
        SLURM_CONF=$dir/slurm.conf timeout 10 scontrol shutdown >/dev/null 2>&1 || true
        # shellcheck disable=SC2086
        _slurm_harness_wait_gone 100 $ctld $slurmd || true
    fi
    # shellcheck disable=SC2086
    kill -TERM $ctld $slurmd 2>/dev/null || true
    # shellcheck disable=SC2086
    _slurm_harness_wait_gone 50 $ctld $slurmd || true

    # The ceems node agent's supervisor (started by the plugin in slurmd)
    # outlives slurmd by design: stop it as an admin would (SIGTERM: it
    # stops the agent, which checkpoints), give them 10 s, then kill.
    # They run with the plugin's config= (which may lie outside DIR).
    pids=$(_slurm_harness_agent_procs "$dir" ceems-agent-sv)
    # shellcheck disable=SC2086
    [ -z "$pids" ] || kill -TERM $pids 2>/dev/null || true
    pids=$(_slurm_harness_agent_procs "$dir" ceems-agent-sv ceems-agent lt-ceems-agent ceems-jobinfo lt-ceems-jobinf)
    # shellcheck disable=SC2086
    if [ -n "$pids" ] && ! _slurm_harness_wait_gone 100 $pids; then
        _slurm_harness_err "ceems agent processes of $dir do not stop on SIGTERM: killing ${pids//$'\n'/ }"
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
    fi

    # Everything of this cluster still alive: daemons (DIR/slurm.conf in the
    # command line) and slurmstepd (DIR/log/slurmd.log open).
    pids=$(_slurm_harness_find_procs "$dir/" slurmctld slurmd slurmstepd)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086
        kill -KILL $pids 2>/dev/null || true
        # shellcheck disable=SC2086
        if ! _slurm_harness_wait_gone 50 $pids; then
            _slurm_harness_err "Slurm processes of $dir survive SIGKILL: ${pids//$'\n'/ }"
            rc=1
        fi
    fi

    _slurm_harness_clean_cgroups "$dir" || rc=1
    _slurm_harness_dbd_stop "$dir" || rc=1

    pids=$(_slurm_harness_pidfile "$dir/munge/munged.pid" munged
           _slurm_harness_find_procs "$dir/munge/" munged)
    if [ -n "$pids" ]; then
        # shellcheck disable=SC2086
        kill -TERM $pids 2>/dev/null || true
        # shellcheck disable=SC2086
        if ! _slurm_harness_wait_gone 50 $pids; then
            # shellcheck disable=SC2086
            kill -KILL $pids 2>/dev/null || true
            # shellcheck disable=SC2086
            _slurm_harness_wait_gone 20 $pids || {
                _slurm_harness_err "munged of $dir survives SIGKILL: ${pids//$'\n'/ }"
                rc=1
            }
        fi
    fi

    if [ "${SLURM_CONF:-}" = "$dir/slurm.conf" ]; then
        unset SLURM_CONF
    fi
    if [ "${CEEMS_TEST_SLURM_DIR:-}" = "$dir" ]; then
        unset CEEMS_TEST_SLURM_DIR
    fi
    if [ "$rc" = 0 ] && [ -e "$dir" ] && ! rm -rf -- "$dir"; then
        _slurm_harness_err "cannot remove $dir"
        rc=1
    fi
    return "$rc"
}

# slurm_harness_leftovers: print what any harness cluster left behind
# (slurmctld/slurmd/slurmstepd/munged processes, the node agent and its
# supervisor ceems-agent-sv, ceems-jobinfo, listening slurmctld/slurmd
# ports, slurm_localhost and slurm_nI cgroups, ${TMPDIR:-/tmp}/ceems-test.slurm.*
# directories); return non-zero if there is anything.
slurm_harness_leftovers() {
    local found=0 pids p port d

    pids=$( (_slurm_harness_find_procs CEEMS_TEST_SLURM_DIR= slurmctld slurmd slurmstepd munged ceems-agent-sv
             _slurm_harness_find_procs ceems-test. slurmctld slurmd slurmstepd munged ceems-agent-sv ceems-agent lt-ceems-agent ceems-jobinfo lt-ceems-jobinf) |
           sort -u)
    for p in $pids; do
        echo "leftover process: $p $(tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline")"
        found=1
    done

    for port in "$CEEMS_TEST_SLURMCTLD_PORT" $(_slurm_harness_slurmd_ports); do
        if _slurm_harness_port_listening "$port"; then
            echo "leftover listening TCP port: $port"
            found=1
        fi
    done

    # localhost and the n1..n8 of several nodes, whatever the count now
    for d in $(_slurm_harness_cgroup_tops localhost n1 n2 n3 n4 n5 n6 n7 n8); do
        if [ -d "$d" ]; then
            echo "leftover cgroup: $d"
            found=1
        fi
    done

    _slurm_harness_dbd_leftovers || found=1

    for d in "${TMPDIR:-/tmp}"/ceems-test.slurm.*; do
        if [ -e "$d" ]; then
            echo "leftover temporary directory: $d"
            found=1
        fi
    done

    [ "$found" = 0 ]
}

# slurm_harness_wait_job JOBID [TIMEOUT]: wait (default 120 s) until the
# job has left PENDING/CONFIGURING/RUNNING/COMPLETING/..., print its final
# state (COMPLETED, FAILED, CANCELLED, TIMEOUT, OUT_OF_MEMORY, ...).
slurm_harness_wait_job() {
    local jobid=${1:-} timeout=${2:-120} info state deadline
    if [ -z "$jobid" ]; then
        _slurm_harness_err "usage: slurm_harness_wait_job JOBID [TIMEOUT]"
        return 2
    fi
    deadline=$(( $(date +%s) + timeout ))
    while :; do
        info=$(timeout 10 scontrol -o show job "$jobid" 2>/dev/null) || info=
        state=
        case $info in
            *JobState=*)
                state=${info#*JobState=}
                state=${state%% *}
                ;;
        esac
        case $state in
            ''|PENDING|CONFIGURING|RUNNING|COMPLETING|SUSPENDED|REQUEUED|REQUEUE_FED|REQUEUE_HOLD|RESIZING|SIGNALING|STAGE_OUT|STOPPED)
                ;;
            *)
                echo "$state"
                return 0
                ;;
        esac
        if [ "$(date +%s)" -ge "$deadline" ]; then
            _slurm_harness_err "job $jobid still '${state:-unknown to scontrol}' after $timeout s"
            return 1
        fi
        sleep 0.2
    done
}
