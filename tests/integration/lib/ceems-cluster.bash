# ceems-cluster.bash - the end-to-end setup shared by jobs.bats and
# options.bats: a simulated RAPL node (tests/doubles/fake-rapl: this
# machine has no RAPL) whose power follows the machine's real CPU
# activity, and the real local Slurm cluster (tests/harness/slurm.sh) with
# the ceems SPANK plugin, whose slurmd side supervises the node agent.
#
# With several nodes (CEEMS_TEST_NODES), each node's simulated RAPL
# follows that node's own Slurm cgroup (fake-rapl --node-cgroup), keeps
# the node's jobs' truth in CEEMS_DIR/NODE/truth (node_truth), and the
# node's agent reads the node's own /proc/stat: its procfs_root,
# CEEMS_DIR/NODE/proc, is the host's /proc with the node's stat mounted
# over it, so that it splits the node's power by the node's busy time.
#
# Load it from a .bats file (load lib/ceems-cluster), then call
# ceems_cluster_setup NAME [PLUGSTACK_ARGS...] from setup_file and
# ceems_cluster_teardown from teardown_file.  Needs CEEMS_SPANK_PLUGIN,
# CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by `make check-integration`).

load_lib() {
	# shellcheck source=tests/harness/slurm.sh
	. "${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}/tests/harness/slurm.sh"
}

# The model of the simulated node, as fake-rapl applies it.
P_IDLE=40
K_ACTIVE=15

# The build tree's agent is a libtool wrapper that finds the uninstalled
# libceems and execs the real binary in the same process.
agent_bin() {
	echo "$CEEMS_TOP_BUILDDIR/tools/ceems-agent"
}

# agent_status [NODE]: the agent's status; with several nodes, NODE's
# agent (--node: the configuration's paths hold %n).
agent_status() {
	"$CEEMS_TOP_BUILDDIR/tools/ceems-agent" --status -c "$CEEMS_DIR/ceems.conf" \
		${1:+--node "$1"}
}

# The directory of node NODE's own files (sys, spool, state, socket,
# agent.log): CEEMS_DIR with one node, as ever; CEEMS_DIR/NODE with
# several, the %n of ceems.conf's paths.
node_dir() {
	if [ "${CEEMS_TEST_NODES:-1}" = 1 ]; then
		echo "$CEEMS_DIR"
	else
		echo "$CEEMS_DIR/$1"
	fi
}

# node_path PATH: PATH for ceems.conf, with %n in it when there are
# several nodes (CEEMS_DIR/%n/PATH), else CEEMS_DIR/PATH.
node_path() {
	if [ "${CEEMS_TEST_NODES:-1}" = 1 ]; then
		echo "$CEEMS_DIR/$1"
	else
		echo "$CEEMS_DIR/%n/$1"
	fi
}

# fake_rapl_node_args NODE: fake-rapl's options for Slurm node NODE of
# several: its cgroup (v1: the cpuacct and cpuset hierarchies' slurm_NODE;
# v2: NODE_slurmstepd.scope, as tests/harness/slurm.sh names them) and
# the file of its /proc/stat.
fake_rapl_node_args() {
	local cg=/sys/fs/cgroup
	if [ "$(stat -f -c %T $cg)" = cgroup2fs ]; then
		echo "--node-cgroup $cg/system.slice/${1}_slurmstepd.scope"
	else
		echo "--node-cgroup $cg/cpuacct/slurm_$1 --node-cpuset $cg/cpuset/slurm_$1"
	fi
	echo "--stat $(node_dir "$1")/proc-stat"
}

# start_fake_rapl DIR [NODE]: a simulated RAPL node of its own under
# DIR/sys; with NODE (one of several), following NODE's cgroup, with
# its /proc/stat in DIR/proc-stat.  Waits for its counters.
start_fake_rapl() {
	local dir=$1 node_args=
	mkdir -p "$dir/sys" "$dir/spool"
	[ -z "${2:-}" ] || node_args=$(fake_rapl_node_args "$2")
	# shellcheck disable=SC2086 # options, split on purpose
	"$CEEMS_TOP_BUILDDIR/tests/doubles/fake-rapl" --root "$dir/sys" \
		--truth "$dir/truth" --period-ms 5 --idle-w "$P_IDLE" \
		--k-w "$K_ACTIVE" --dram-w 4 $node_args ${CEEMS_FAKE_RAPL_ARGS:-} \
		>"$dir/fake-rapl.log" 2>&1 &
	echo $! >"$dir/fake-rapl.pid"
	for _ in $(seq 1 50); do
		[ -e "$dir/sys/class/powercap/intel-rapl:0/energy_uj" ] && break
		sleep 0.1
	done
}

# mount_node_proc DIR: DIR/proc, the host's /proc with DIR/proc-stat
# over its stat (private: nothing of it reaches the host's /proc).
mount_node_proc() {
	mkdir -p "$1/proc" &&
		mount --bind /proc "$1/proc" &&
		mount --make-private "$1/proc" &&
		mount --bind "$1/proc-stat" "$1/proc/stat"
}

# umount_node_proc DIR: undo mount_node_proc (what of it was done).
umount_node_proc() {
	mountpoint -q "$1/proc/stat" 2>/dev/null && umount "$1/proc/stat"
	mountpoint -q "$1/proc" 2>/dev/null && umount "$1/proc"
	[ ! -d "$1/proc" ] || rmdir "$1/proc"
}

# node_truth NODE KEY: KEY of NODE's truth file (fake-rapl's key=value
# lines), empty when it has none yet.
node_truth() {
	sed -n "s/^$2=//p" "$(node_dir "$1")/truth" 2>/dev/null
}

# wait_job_truth NODE ID: until NODE's fake-rapl has seen job ID's
# cgroup go (its truth final); 30 s at most.
wait_job_truth() {
	for _ in $(seq 1 60); do
		[ "$(node_truth "$1" "job_$2_ended")" = 1 ] && return 0
		sleep 0.5
	done
	echo "$1's fake-rapl never saw job $2 end" >&2
	return 1
}

# submit USER ARGS...: sbatch as USER from the output dir; prints the id.
submit() {
	local user=$1
	shift
	(cd "$SLURM_DIR/out" && runuser -u "$user" -- env SLURM_CONF="$SLURM_CONF" \
		sbatch --parsable -o "$SLURM_DIR/out/job-%j.out" "$@")
}

# record_of ID [NODE]: the spool record of job ID, once written (waits
# up to 30 s); NODE's spool with several nodes.
record_of() {
	local id=$1 f i spool
	spool=$(node_dir "${2:-}")/spool
	for i in $(seq 1 60); do
		for f in "$spool"/*.json; do
			[ -e "$f" ] || continue
			if [ "$(jq -r .job.jobid "$f")" = "$id" ]; then
				echo "$f"
				return 0
			fi
		done
		sleep 0.5
	done
	echo "no record for job $id in $spool" >&2
	return 1
}

# wait_running ID: until Slurm runs job ID (60 s at most).
wait_running() {
	for _ in $(seq 1 120); do
		[ "$(squeue -h -j "$1" -o %T)" = RUNNING ] && return 0
		sleep 0.5
	done
	echo "job $1 never ran" >&2
	return 1
}

# Wait for JOBID to finish; prints its final state.
finish() {
	slurm_harness_wait_job "$1" 240
}

out_of() { cat "$SLURM_DIR/out/job-$1.out"; }

# expect_summary ID REGEX: the job's output has a line matching REGEX;
# else show the output and the plugin's log lines for the job.
expect_summary() {
	if ! out_of "$1" | grep -Eq "$2"; then
		echo "job $1: no line matching '$2' in its output:" >&2
		out_of "$1" >&2
		grep "\[$1\." "$SLURM_DIR/log/slurmd.log" | grep -i ceems >&2
		return 1
	fi
}

# float comparison: awk 'BEGIN{exit !(EXPR)}'
check() { awk "BEGIN { exit !($1) }"; }

# The gather of multi-node jobs' figures (doc/gather.md) in GATHER_CONF:
# with several nodes on this host, each node's agent on a port of its
# own (CEEMS_TEST_GATHER_PORT + i - 1, default 16926 on), listed in a
# gather_nodes file, and the cluster's own munged; with one node, none.
gather_conf() {
	local node i=0 base=${CEEMS_TEST_GATHER_PORT:-16926}
	if [ "${CEEMS_TEST_NODES:-1}" = 1 ]; then
		GATHER_CONF="gather_port = 0"
		return 0
	fi
	: >"$CEEMS_DIR/gather-nodes"
	for node in $(slurm_harness_nodes); do
		echo "$node 127.0.0.1:$((base + i))" >>"$CEEMS_DIR/gather-nodes"
		i=$((i + 1))
	done
	GATHER_CONF="gather_port = $base
gather_nodes = $CEEMS_DIR/gather-nodes
munge_socket = $SLURM_DIR/munge/munge.sock"
}

# ceems_cluster_setup NAME [PLUGSTACK_ARGS...]: the node and the cluster;
# the plugin gets the test's config, agent and agent log, then the
# arguments given (summary=full when none are).  CEEMS_FAKE_RAPL_ARGS:
# more options for fake-rapl (its counters' ranges...).  CEEMS_CLUSTER_CONF,
# when set, is added to the node's ceems.conf (a database = line, say).
# A function ceems_cluster_prepare, when the test file defines one, runs
# once CEEMS_DIR and SLURM_DIR exist, before ceems.conf is written.
# CEEMS_CLUSTER_INTERVAL: the agent's tick (default 250ms).
# CEEMS_CLUSTER_PLUGIN=no: the same node and cluster without the plugin
# (no agent), for benchmarks that compare with Slurm alone.
ceems_cluster_setup() {
	local name=$1 node
	shift
	load_lib
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	CEEMS_DIR=$(mktemp -d "${TMPDIR:-/tmp}/ceems-test.$name.XXXXXX")
	chmod 755 "$CEEMS_DIR"
	export CEEMS_DIR
	for node in $(slurm_harness_nodes); do
		if [ "${CEEMS_TEST_NODES:-1}" = 1 ]; then
			start_fake_rapl "$(node_dir "$node")"
		else
			start_fake_rapl "$(node_dir "$node")" "$node" &&
				mount_node_proc "$(node_dir "$node")" || return 1
		fi
	done
	SLURM_DIR=$(slurm_harness_mktemp)
	export SLURM_DIR
	# A test file's own preparation of the node (GPU doubles...), which
	# may set CEEMS_CLUSTER_CONF with the directories now known.
	if declare -F ceems_cluster_prepare >/dev/null; then
		ceems_cluster_prepare || return 1
	fi
	gather_conf
	cat >"$CEEMS_DIR/ceems.conf" <<EOF
# ceems.conf of the end-to-end test: a simulated RAPL node.
interval = ${CEEMS_CLUSTER_INTERVAL:-250ms}
# the tests read the node's totals a tick after a job's end: an idle
# agent ticks as often as a busy one here (agent.bats tests idle_interval)
idle_interval = ${CEEMS_CLUSTER_INTERVAL:-250ms}
usage_interval = 1s
series_interval = 1s
# the restart tests kill the agent a second or two after the work they
# check: a checkpoint every second (the default is 10 s)
checkpoint_interval = 1s
socket = $(node_path agent.sock)
state_dir = $(node_path state)
spool_dir = $(node_path spool)
sysfs_root = $(node_path sys)
$([ "${CEEMS_TEST_NODES:-1}" = 1 ] || echo "procfs_root = $(node_path proc)")
source_hwmon = no
source_pm_counters = no
idle_power_package = ${P_IDLE}W
idle_power_dram = 4W
cluster = ceemstest
# jobs.bats: a job whose plugin never came back is reaped within its wait
# for a record (jobs' cgroups go only after their deregistration); long
# enough that a slow epilog (options.bats, on a loaded machine) still
# deregisters its job first.
reap_grace = 8s
zone = FR
pue = 1.3
emissions_table = $CEEMS_TOP_SRCDIR/lib/data/carbon-intensity.tsv
$GATHER_CONF
${CEEMS_CLUSTER_CONF:-}
EOF
	if [ "${CEEMS_CLUSTER_PLUGIN:-yes}" = no ]; then
		slurm_harness_start "$SLURM_DIR" || return 1
		export SLURM_CONF
		return 0
	fi
	slurm_harness_start "$SLURM_DIR" \
		"required $CEEMS_SPANK_PLUGIN config=$CEEMS_DIR/ceems.conf agent=$(agent_bin) agent_log=$(node_path agent.log) ${*:-summary=full}" ||
		return 1
	export SLURM_CONF
	for node in $(slurm_harness_nodes); do
		for _ in $(seq 1 50); do
			agent_status "$(agent_node "$node")" >/dev/null 2>&1 && break
			sleep 0.2
		done
	done
}

# The --node to give for NODE: none with one node (ceems.conf has no %n).
agent_node() {
	[ "${CEEMS_TEST_NODES:-1}" = 1 ] || echo "$1"
}

ceems_cluster_teardown() {
	local pidfile node
	load_lib
	if [ -n "${SLURM_DIR:-}" ]; then
		slurm_harness_stop "$SLURM_DIR"
	fi
	if [ -n "${CEEMS_DIR:-}" ]; then
		for pidfile in "$CEEMS_DIR"/fake-rapl.pid "$CEEMS_DIR"/*/fake-rapl.pid; do
			[ -r "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null
		done
		for node in "$CEEMS_DIR"/*/; do
			umount_node_proc "${node%/}"
		done
		sleep 0.2
		# never into a /proc left mounted
		rm -rf --one-file-system "$CEEMS_DIR"
	fi
}

ceems_cluster_skip_unless_set() {
	load_lib
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || skip "CEEMS_SPANK_PLUGIN is not set (run through make check-integration)"
}

