#!/usr/bin/env bats
# multinode-db.bats - a job across three Slurm nodes, unequal work on
# each, measured by each node's own agent and merged by PostgreSQL, held
# to each node's simulated truth: per node (ceems.job_nodes, ceems-sacct
# --per-node) and for the whole job (ceems.jobs, ceems-sacct), each
# node's record merged once; a 1-node job beside it on a node it shares
# lands on that node only.
#
# The cluster is tests/integration/lib/ceems-cluster.bash with
# CEEMS_TEST_NODES=3: each node's fake RAPL follows that node's own Slurm
# cgroup and keeps the truth of each job it saw there (fake-rapl
# --node-cgroup), and each node's agent reads that node's /proc/stat.
# The truth is the power model's, of package energy: P_IDLE x C/N x
# life + K_ACTIVE x CPU time, C the job's cores on the node and N the
# node's CPUs; the agent is told P_IDLE (idle_power_package).  So the
# figures compared are package energy (package_j, ceems-sacct's
# EnergyCPU), not the total: the DRAM's static power is split by memory
# allocated (doc/attribution.md), which the model does not follow.
#
# The same cluster keeps Slurm's own accounting (slurmdbd and MariaDB,
# tests/harness/slurmdbd.sh) fed by acct_gather_energy/ceems, each node's
# plugin asking its own node's agent (the socket's %n: slurmd's -N NAME,
# slurmstepd's slurm_NODE cgroup): sacct's energy of each job is
# ceems-sacct's whole-job figure, and scontrol shows each node's power.
# Without slurmdbd, MariaDB or the plugin those tests skip.
#
# Runs as root, about a minute.  Needs CEEMS_SPANK_PLUGIN,
# CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by `make check-integration`)
# and a build with libpq.

load lib/ceems-cluster
load lib/acct-energy
load lib/sacct-compare

export CEEMS_TEST_NODES=3
NODES="n1 n2 n3"
TOLERANCE_PCT=3
SRCDIR=${CEEMS_TOP_SRCDIR:-$BATS_TEST_DIRNAME/../..}

# slurmd (and so slurmstepd) finds the test's ceems.conf, whose socket
# holds %n, through CEEMS_CONF.
ceems_cluster_prepare() {
	export CEEMS_CONF=$CEEMS_DIR/ceems.conf
}

setup_file() {
	local rc=0
	[ -n "${CEEMS_SPANK_PLUGIN:-}" ] || return 0
	[ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] || return 0
	# shellcheck source=tests/harness/pg.sh
	. "$SRCDIR/tests/harness/pg.sh"
	PG_DIR=$(pg_harness_mktemp) || return 1
	echo "$PG_DIR" >"$BATS_FILE_TMPDIR/pg"
	pg_harness_start "$PG_DIR" || return 1
	# The agents' replay runs as root without capabilities: a second
	# socket in a folder of group root lets it in (as thin.bats).
	SOCK_DIR=$(mktemp -d /tmp/ceems-mndb-sock.XXXXXX)
	echo "$SOCK_DIR" >"$BATS_FILE_TMPDIR/sock"
	chown postgres:root "$SOCK_DIR" && chmod 0750 "$SOCK_DIR" || return 1
	psql -X -q -v ON_ERROR_STOP=1 \
		-c "ALTER SYSTEM SET unix_socket_directories = '$PG_DIR', '$SOCK_DIR'" \
		-c "ALTER SYSTEM SET unix_socket_permissions = '0777'" || return 1
	(cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$PG_DIR/data" \
		-l "$PG_DIR/server.log" -w -t 30 restart) >/dev/null || return 1
	"$CEEMS_TOP_BUILDDIR/tools/ceems-admin" --sql-dir "$SRCDIR/sql/migrations" \
		-d "host=$PG_DIR port=$CEEMS_TEST_PGPORT dbname=ceems user=postgres" \
		db init >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 -d ceems \
		-c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' \
		-c 'CREATE ROLE root LOGIN IN ROLE ceems_admin_reader' || return 1
	export CEEMS_CLUSTER_CONF="database = host=$SOCK_DIR port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node"
	if [ -z "$(slurm_energy_skip_reason)" ]; then
		export CEEMS_TEST_SLURMDBD=1 CEEMS_TEST_SLURMDBD_USERS=nobody
		export CEEMS_TEST_SLURM_CONF_EXTRA="AcctGatherEnergyType=acct_gather_energy/ceems
AcctGatherNodeFreq=1
PluginDir=$CEEMS_ENERGY_PLUGIN_DIR:$(slurm_plugindir)"
	fi
	# Kept for teardown_file even when the cluster fails half-way: its
	# daemons would otherwise outlive the run.
	ceems_cluster_setup mndb || rc=1
	echo "${CEEMS_DIR:-}" >"$BATS_FILE_TMPDIR/ceems"
	echo "${SLURM_DIR:-}" >"$BATS_FILE_TMPDIR/slurm"
	[ "$rc" = 0 ] || return 1
	run_jobs
}

teardown_file() {
	local pg sock
	pg=$(cat "$BATS_FILE_TMPDIR/pg" 2>/dev/null) || pg=
	CEEMS_DIR=$(cat "$BATS_FILE_TMPDIR/ceems" 2>/dev/null) || CEEMS_DIR=
	SLURM_DIR=$(cat "$BATS_FILE_TMPDIR/slurm" 2>/dev/null) || SLURM_DIR=
	ceems_cluster_teardown
	if [ -n "$pg" ]; then
		. "$SRCDIR/tests/harness/pg.sh"
		pg_harness_stop "$pg"
	fi
	sock=$(cat "$BATS_FILE_TMPDIR/sock" 2>/dev/null) && rm -rf "$sock"
	true
}

setup() {
	ceems_cluster_skip_unless_set
	[ -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ] ||
		skip "no tools/ceems-admin (built without libpq)"
	. "$SRCDIR/tests/harness/pg.sh"
	PG_DIR=$(cat "$BATS_FILE_TMPDIR/pg")
	export PGHOST=$PG_DIR PGPORT=$CEEMS_TEST_PGPORT PGDATABASE=ceems PGUSER=postgres
	MULTI=$(cat "$BATS_FILE_TMPDIR/multi")
	ONE=$(cat "$BATS_FILE_TMPDIR/one")
	ONE_NODE=$(cat "$BATS_FILE_TMPDIR/one-node")
}

# burn SECONDS: a shell command keeping one CPU busy that long.
burn() {
	echo "timeout $1 sh -c 'while :; do :; done'; true"
}

# The jobs, once: a 3-node job whose node 0 burns 3 s, node 1 burns
# 1 s and node 2 sleeps (its cores held, not used), and a 1-node job
# burning 2 s on a core left free on one of them.  Waits for both to
# end, for each node's fake RAPL to see their cgroups go, and for the
# database to hold every node's record.
run_jobs() {
	local multi one where node
	cat >"$SLURM_DIR/out/parts.sh" <<-EOF
	# each node's task of the 3-node job: unequal work
	case \$SLURM_NODEID in
	0) $(burn 3) ;;
	1) $(burn 1) ;;
	*) sleep 3 ;;
	esac
	EOF
	chmod 644 "$SLURM_DIR/out/parts.sh"
	multi=$(submit nobody -J three -N3 --ntasks-per-node=1 -c1 --wrap \
		"srun sh $SLURM_DIR/out/parts.sh") || return 1
	echo "$multi" >"$BATS_FILE_TMPDIR/multi"
	wait_running "$multi" || return 1
	one=$(submit nobody -J one -N1 -c1 --wrap "$(burn 2)") || return 1
	echo "$one" >"$BATS_FILE_TMPDIR/one"
	[ "$(finish "$multi")" = COMPLETED ] || return 1
	[ "$(finish "$one")" = COMPLETED ] || return 1
	# MinJobAge=300: slurmctld still knows where it ran.
	where=$(scontrol -o show job "$one" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p')
	echo "$where" >"$BATS_FILE_TMPDIR/one-node"
	for node in $NODES; do
		wait_job_truth "$node" "$multi" || return 1
	done
	wait_job_truth "$where" "$one" || return 1
	wait_db "SELECT 1 FROM ceems.jobs WHERE jobid = $multi AND nodes_reported = 3" &&
		wait_db "SELECT 1 FROM ceems.jobs WHERE jobid = $one AND nodes_reported = 1"
}

# wait_db QUERY: until QUERY returns a row (30 s at most: the agents'
# replay stores a record within a second of spooling it).
wait_db() {
	for _ in $(seq 1 60); do
		[ -n "$(PGHOST=$(cat "$BATS_FILE_TMPDIR/pg") PGPORT=$CEEMS_TEST_PGPORT \
			PGDATABASE=ceems PGUSER=postgres psql -X -At -c "$1")" ] && return 0
		sleep 0.5
	done
	echo "no row for: $1" >&2
	return 1
}

sql() { psql -X -At -F' ' -c "$1"; }

# truth NODE ID: fake-rapl's truth of job ID's package energy on NODE, J.
truth() {
	local p
	p=$(node_truth "$1" "job_$2_package_j")
	[ -n "$p" ] || { echo "no truth of job $2 on $1" >&2; return 1; }
	echo "$p"
}

# joules TEXT: ceems-sacct's energy for people (J, Wh, kWh) in joules.
joules() {
	awk -v t="$1" 'BEGIN {
		n = t + 0; u = t; sub(/^[0-9.]+ */, "", u)
		if (u == "J") print n; else if (u == "Wh") print n * 3600;
		else if (u == "kWh") print n * 3600000 }'
}

# within WHAT GOT TRUTH: GOT is TRUTH within the tolerance; else say so.
within() {
	echo "# $1: $2 J, truth $3 J" >&3
	awk -v g="$2" -v t="$3" -v tol="$TOLERANCE_PCT" \
		'BEGIN { e = (g - t) / t * 100; if (e < 0) e = -e; exit !(g != "" && t > 0 && e <= tol) }' || {
		echo "$1: $2 J is beyond $TOLERANCE_PCT % of the truth, $3 J" >&2
		return 1
	}
}

# ceems_sacct ARGS...: ceems-sacct on the database, read as root (an
# admin reader).
ceems_sacct() {
	printf 'cluster = ceemstest\nspool_dir = %s/no-spool\ndatabase = host=%s port=%s dbname=ceems user=root\n' \
		"$CEEMS_DIR" "$PG_DIR" "$CEEMS_TEST_PGPORT" >"$CEEMS_DIR/sacct.conf"
	"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/sacct.conf" "$@"
}

@test "the 3-node job: one record of each node merged, once, into its row" {
	local row nodes
	row=$(sql "SELECT nnodes, nodes_reported FROM ceems.jobs WHERE jobid = $MULTI")
	[ "$row" = "3 3" ] || { echo "nnodes, nodes_reported: $row" >&2; return 1; }
	nodes=$(sql "SELECT string_agg(n.node, ' ' ORDER BY n.node) FROM ceems.job_nodes n
		JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $MULTI")
	[ "$nodes" = "$NODES" ] || { echo "job_nodes: $nodes" >&2; return 1; }
	# The job's figures are its nodes' sums, each node counted once.
	row=$(sql "SELECT abs(j.package_j - sum(n.package_j)) < 1e-6,
			abs(j.total_j - sum(n.total_j)) < 1e-6
		FROM ceems.jobs j JOIN ceems.job_nodes n USING (job_key)
		WHERE j.jobid = $MULTI GROUP BY j.job_key")
	[ "$row" = "t t" ] || {
		echo "the job's sums are not its nodes' ($row):" >&2
		sql "SELECT node, package_j, total_j FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $MULTI" >&2
		return 1
	}
}

@test "the 3-node job: each node's part in ceems.job_nodes is that node's truth within 3%" {
	local node got
	for node in $NODES; do
		got=$(sql "SELECT n.package_j FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
			WHERE j.jobid = $MULTI AND n.node = '$node'")
		within "$node package" "$got" "$(truth "$node" "$MULTI")"
	done
	# The work was unequal, and the truths show it: node 0 (n1) burnt
	# 3 s, node 1 (n2) 1 s, node 2 (n3) slept.
	awk -v a="$(node_truth n1 "job_${MULTI}_cpu_s")" -v b="$(node_truth n2 "job_${MULTI}_cpu_s")" \
		-v c="$(node_truth n3 "job_${MULTI}_cpu_s")" 'BEGIN { exit !(a > b && b > 0.3 && c < 0.2) }' || {
		echo "CPU time of the parts: $(grep -h "job_${MULTI}_cpu_s" "$CEEMS_DIR"/n?/truth)" >&2
		return 1
	}
}

@test "the 3-node job: its energy in ceems.jobs is the truth summed over its nodes within 3%" {
	local want=0 node
	for node in $NODES; do
		want=$(awk -v a="$want" -v b="$(truth "$node" "$MULTI")" 'BEGIN { printf "%.6f", a + b }')
	done
	within "job package" "$(sql "SELECT package_j FROM ceems.jobs WHERE jobid = $MULTI")" "$want"
}

@test "ceems-sacct --per-node: the job's package energy and each node's part, each its truth within 3%" {
	local want=0 node got
	run ceems_sacct -j "$MULTI" -X --per-node -P -n -o JobID,NodeList,EnergyCPU
	[ "$status" -eq 0 ] || { echo "$output" >&2; return 1; }
	echo "$output" | sed 's/^/# /' >&3
	[ "$(echo "$output" | wc -l)" = 4 ]
	for node in $NODES; do
		got=$(joules "$(echo "$output" | awk -F'|' -v id="$MULTI@$node" -v n="$node" '$1 == id && $2 == n { print $3 }')")
		within "ceems-sacct $MULTI@$node" "$got" "$(truth "$node" "$MULTI")"
		want=$(awk -v a="$want" -v b="$(truth "$node" "$MULTI")" 'BEGIN { printf "%.6f", a + b }')
	done
	got=$(joules "$(echo "$output" | awk -F'|' -v id="$MULTI" '$1 == id { print $3 }')")
	within "ceems-sacct $MULTI" "$got" "$want"
}

@test "the 1-node job: on its node only, its energy that node's truth within 3%" {
	local row
	case $ONE_NODE in
		n[1-3]) ;;
		*) echo "job $ONE ran on '$ONE_NODE', not one node" >&2; return 1 ;;
	esac
	row=$(sql "SELECT j.nnodes, j.nodes_reported, string_agg(n.node, ' ')
		FROM ceems.jobs j JOIN ceems.job_nodes n USING (job_key)
		WHERE j.jobid = $ONE GROUP BY j.job_key")
	[ "$row" = "1 1 $ONE_NODE" ] || { echo "nnodes, nodes_reported, nodes: $row" >&2; return 1; }
	within "1-node job package" "$(sql "SELECT package_j FROM ceems.jobs WHERE jobid = $ONE")" \
		"$(truth "$ONE_NODE" "$ONE")"
	# It shared its node with the 3-node job's part there.
	[ -n "$(node_truth "$ONE_NODE" "job_${MULTI}_package_j")" ]
	# The other nodes' fake RAPL never saw it.
	for node in $NODES; do
		[ "$node" = "$ONE_NODE" ] || [ -z "$(node_truth "$node" "job_${ONE}_package_j")" ]
	done
}

# The job line of Slurm's accounting of job ID (sacct ConsumedEnergyRaw,
# J) and ceems-sacct's whole-job figure (ConsumedEnergyRaw, J).
_job_energies() {
	local slurm ceems
	slurm=$(slurm_energy "$1" | awk '$1 == "job" { print $2 }') || return 1
	ceems=$(ceems_sacct -j "$1" -X -n -P -o JobID,ConsumedEnergyRaw |
		awk -F'|' -v id="$1" '$1 == id { print $2 }') || return 1
	echo "$slurm $ceems"
}

@test "Slurm's own accounting: sacct's energy of the 3-node job and of the 1-node job is ceems-sacct's whole-job figure within 1%" {
	local why id got
	why=$(slurm_energy_skip_reason)
	[ -z "$why" ] || skip "$why"
	TOLERANCE=0.01
	for id in "$MULTI" "$ONE"; do
		got=$(_job_energies "$id") || return 1
		echo "# job $id: Slurm $got (ceems) J" >&3
		# shellcheck disable=SC2086
		close_to $got || {
			echo "job $id: Slurm and ceems-sacct, J: $got" >&2
			sacct -j "$id" -P -o JobID,NodeList,ConsumedEnergyRaw >&2
			return 1
		}
	done
	# every node's part counted: more than the part of any one node
	check "$(awk '{ print $1 }' <<<"$(_job_energies "$MULTI")") > \
		$(sql "SELECT max(n.total_j) FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $MULTI")"
}

@test "Slurm's own accounting: scontrol shows each node's power from that node's own agent" {
	local why node watts
	why=$(slurm_energy_skip_reason)
	[ -z "$why" ] || skip "$why"
	for node in $NODES; do
		watts=$(scontrol -o show node "$node" | sed -n 's/.*CurrentWatts=\([0-9]*\).*/\1/p')
		echo "# $node: CurrentWatts=$watts" >&3
		# only the node's own name finds a socket: each is CEEMS_DIR/NODE/
		check "${watts:-0} > 0" || { echo "$node shows no power: $(scontrol -o show node "$node")" >&2; return 1; }
	done
}

# faketime_env OFFSET: the words of an env command that runs a program
# under libfaketime OFFSET ahead (+3h).  Not the faketime command: it
# waits for every process that keeps its pipe, a daemon too.
faketime_env() {
	local lib
	for lib in /usr/lib/*/faketime/libfaketime.so.1; do
		[ -e "$lib" ] && { echo "env LD_PRELOAD=$lib FAKETIME=$1"; return 0; }
	done
	return 1
}

@test "Slurm's own accounting: sacct and ceems-sacct agree field by field on the 3-node job and the 1-node job" {
	[ -z "$(slurm_energy_skip_reason)" ] || skip "$(slurm_energy_skip_reason)"
	ceems_sacct -j 1 -n >/dev/null 2>&1 || true	# writes sacct.conf
	sacct_compare "$MULTI,$ONE" "$CEEMS_DIR/sacct.conf"
}

# Last in this file: slurmdbd runs on under a clock three hours ahead.
@test "Slurm's own accounting: sreport's energy of the user is the sum of the user's jobs in ceems-sacct within 1%" {
	local why start hour end out used want ahead
	why=$(slurm_energy_skip_reason)
	[ -z "$why" ] || skip "$why"
	ahead=$(faketime_env +3h) || skip "libfaketime not found (package faketime)"
	TOLERANCE=0.01
	# The hour holding the jobs, and the next one, should they straddle
	# its end (sreport reports whole hours).
	start=$(sacct -X -n -P -j "$MULTI" -o Start | head -1)
	hour=$(date -d "$start" +%s)
	hour=$((hour - hour % 3600))
	start=$(date -d "@$hour" +%Y-%m-%dT%H:%M:%S)
	end=$(date -d "@$((hour + 7200))" +%Y-%m-%dT%H:%M:%S)
	# slurmdbd rolls usage up for past whole hours only, at its start and
	# hourly: started three hours ahead, it rolls up these two.  sreport
	# too clamps its end to its own now.
	# shellcheck disable=SC2086 # words: env VAR=... VAR=...
	slurm_harness_dbd_restart "$SLURM_DIR" $ahead || return 1
	for _ in $(seq 1 100); do
		# shellcheck disable=SC2086
		out=$($ahead sreport -P -t seconds --tres=energy \
			cluster UserUtilizationByAccount start="$start" end="$end" users=nobody 2>&1)
		# the columns by their header: Login, TRES Name, Used
		used=$(awk -F'|' '
			!u { for (i = 1; i <= NF; i++) { if ($i == "Login") l = i; if ($i == "TRES Name") t = i; if ($i == "Used") u = i }; next }
			$l == "nobody" && (!t || $t == "energy") { s += $u }
			END { if (s > 0) print s }' <<<"$out")
		[ -n "$used" ] && break
		sleep 0.3
	done
	want=$(ceems_sacct -u nobody -X -n -P -S "$start" -E "$end" -o JobID,ConsumedEnergyRaw |
		awk -F'|' '{ s += $2; n++ } END { if (n == 2) print s }')
	echo "# nobody, $start to $end: sreport $used J, ceems-sacct's jobs $want J" >&3
	[ -n "$used" ] || { echo "sreport never showed nobody's energy:"; echo "$out"; tail -n 20 "$SLURM_DIR/log/slurmdbd.log"; return 1; }
	[ -n "$want" ] || { echo "ceems-sacct has not the 2 jobs of nobody"; return 1; }
	close_to "$used" "$want"
}
