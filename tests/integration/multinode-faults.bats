#!/usr/bin/env bats
# multinode-faults.bats - jobs on several nodes when something fails on
# one of them, and jobs Slurm splits into several (arrays, heterogeneous
# jobs), end to end: three Slurm nodes on this machine, each with its
# own slurmd and ceems node agent (multinode.bats), all storing into one
# real PostgreSQL 15.  For each job the database must hold one row in
# ceems.jobs with one ceems.job_nodes row per node that measured it,
# nodes_reported never above nnodes, and the job's figures the sums of
# the nodes' (nothing counted twice); the job must end in about its own
# time whatever failed.
#
#   - a node's agent killed (SIGKILL) mid-job, on a node that is not the
#     batch node: its supervisor restarts it, it restores the job from
#     its checkpoint, and that node's record says the time it missed;
#   - a node's slurmd killed mid-job and started again (the job's step
#     daemons live on): every node's record arrives;
#   - a node's extern step killed and its slurmd down until the other
#     nodes have completed the job: slurmctld then names that node alone
#     (NodeList, NumNodes), yet its epilog's record counts the job's
#     nodes, and gives the job Slurm's end time, not the late node's;
#   - a node's link to the database down at the job's end (PostgreSQL
#     stopped, then back for the other nodes while that node's writer,
#     its agent's replay process, stays held): its record waits in its
#     spool, the job is listed in ceems.job_missing_nodes meanwhile with
#     the nodes that reported, and leaves it once the record is
#     replayed, once (every node shares one ceems.conf, so one node's
#     database cannot be given another address);
#   - a node set DOWN mid-job: NODE_FAIL, and every node's record;
#   - an array of three tasks and a heterogeneous job of two components,
#     each on nodes of its own: each task and component is a job with
#     its own row, figures and nodes.
#
# The cluster is tests/integration/lib/ceems-cluster.bash with
# CEEMS_TEST_NODES=3, PostgreSQL tests/harness/pg.sh.  Runs as root.
# Needs CEEMS_SPANK_PLUGIN, CEEMS_TOP_BUILDDIR, CEEMS_TOP_SRCDIR (set by
# `make check-integration`), postgresql-15 and a build with libpq.

load lib/ceems-cluster

# shellcheck source=../harness/pg.sh
. "$BATS_TEST_DIRNAME/../harness/pg.sh"

export CEEMS_TEST_NODES=3
# Slurm starts heterogeneous jobs from its backfill scheduler only: at
# its default interval, the test's would wait up to 30 s.
export CEEMS_TEST_SLURM_SCHED_EXTRA=bf_interval=1

_skip_reason() {
	if [ -z "${CEEMS_SPANK_PLUGIN:-}" ]; then
		echo "CEEMS_SPANK_PLUGIN is not set (run through make check-integration)"
	elif [ ! -x "${CEEMS_TOP_BUILDDIR:-}/tools/ceems-admin" ]; then
		echo "no tools/ceems-admin (built without libpq?)"
	elif ! command -v jq >/dev/null; then
		echo "jq not installed"
	fi
}

setup_file() {
	local sock
	[ -z "$(_skip_reason)" ] || return 0
	PG=$(pg_harness_mktemp) || return 1
	export PG
	pg_harness_start "$PG" || return 1
	"$CEEMS_TOP_BUILDDIR/tools/ceems-admin" \
		--sql-dir "$CEEMS_TOP_SRCDIR/sql/migrations" \
		-d "host=$PG port=$CEEMS_TEST_PGPORT dbname=ceems user=postgres" \
		db init >/dev/null || return 1
	psql -X -q -v ON_ERROR_STOP=1 \
		-c 'CREATE ROLE ceems_node LOGIN IN ROLE ceems_writer' || return 1
	# The agents' writers run as root without capabilities.
	sock=$(pg_harness_root_socket "$PG") || return 1
	CEEMS_CLUSTER_CONF="database = host=$sock port=$CEEMS_TEST_PGPORT dbname=ceems user=ceems_node" \
		ceems_cluster_setup mnfaults summary=full
}

teardown_file() {
	local p
	# Nothing stays stopped (the database test holds a writer).
	for p in $(cat "$BATS_FILE_TMPDIR"/held 2>/dev/null); do
		kill -CONT "$p" 2>/dev/null
	done
	ceems_cluster_teardown
	[ -z "${PG:-}" ] || pg_harness_stop "$PG"
}

setup() {
	local why
	why=$(_skip_reason)
	[ -z "$why" ] || skip "$why"
	load_lib
}

# A test that failed half-way leaves nothing down for the next ones: the
# database runs, no writer is held.
teardown() {
	local p
	[ -z "$(_skip_reason)" ] || return 0
	for p in $(cat "$BATS_FILE_TMPDIR"/held 2>/dev/null); do
		kill -CONT "$p" 2>/dev/null
	done
	rm -f "$BATS_FILE_TMPDIR"/held
	pg_up
}

# pg_up: PostgreSQL started, unless it runs.
pg_up() {
	[ -e "$PG/data/postmaster.pid" ] && return 0
	(cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$PG/data" \
		-l "$PG/server.log" -w -t 30 start) >/dev/null
}

db() {
	psql -X -At -v ON_ERROR_STOP=1 -c "$1"
}

# What the database and the nodes hold of job ID, for a failure's message.
show_job() {
	local node
	echo "ceems.jobs:"
	db "SELECT jobid, state, nnodes, nodes_reported, nodelist, package_j, gap_s
	      FROM ceems.jobs WHERE jobid = $1"
	echo "ceems.job_nodes:"
	db "SELECT n.node, n.finalized_by, n.package_j, n.gap_s, n.package_covered_s, n.lifetime_s
	      FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $1"
	for node in n1 n2 n3; do
		echo "$node's spool: $(ls "$CEEMS_DIR/$node/spool" | tr '\n' ' ')"
		grep "job $1\b" "$CEEMS_DIR/$node/agent.log" | tail -n 5
	done
}

# wait_reported ID N: until job ID's row in ceems.jobs counts N node
# records (60 s at most).
wait_reported() {
	local got=
	for _ in $(seq 1 120); do
		got=$(db "SELECT nodes_reported FROM ceems.jobs WHERE jobid = $1")
		[ "$got" = "$2" ] && return 0
		sleep 0.5
	done
	echo "job $1: ${got:-no row}, not $2 node records in ceems.jobs" >&2
	show_job "$1" >&2
	return 1
}

# slurm_job ID: Slurm's line of job ID (scontrol -o), that job's only:
# scontrol shows every task of an array, and every component of a
# heterogeneous job, for the id they share.
slurm_job() {
	scontrol -o show job "$1" | grep "^JobId=$1 "
}

# The nodes Slurm gave job ID, sorted, comma-separated (n1,n2,n3).
job_nodes_of() {
	scontrol show hostnames \
		"$(slurm_job "$1" | sed -n 's/.* NodeList=\([^ ]*\).*/\1/p')" |
		sort | paste -sd, -
}

# The node job ID's batch script ran on.
batch_host() {
	slurm_job "$1" | sed -n 's/.* BatchHost=\([^ ]*\).*/\1/p'
}

# A node of job ID other than its batch node.
other_node() {
	job_nodes_of "$1" | tr ',' '\n' | grep -vx "$(batch_host "$1")" | tail -n 1
}

# node_steps NODE ID: how many step daemons of job ID run for NODE (they
# hold its slurmd log open).
node_steps() {
	local p n=0
	for p in $(pgrep -f "^slurmstepd: \[$2\."); do
		find "/proc/$p/fd" -lname "*/slurmd-$1.log" 2>/dev/null | grep -q . && n=$((n + 1))
	done
	echo "$n"
}

# once ID: job ID has one row, with one job_nodes row for each node
# Slurm gave it and no other, nodes_reported = nnodes = their number,
# each node's package energy measured, above 0, and the job's their sum: every
# node's record counted, none twice.  No node's spool keeps a record of
# it, none was refused.
once() {
	local id=$1 want n
	want=$(job_nodes_of "$id")
	n=$(echo "$want" | tr ',' '\n' | grep -c .)
	[ "$(db "SELECT count(*) FROM ceems.jobs WHERE jobid = $id")" = 1 ] &&
		[ "$(db "SELECT nnodes || ' ' || nodes_reported FROM ceems.jobs WHERE jobid = $id")" = "$n $n" ] &&
		[ "$(db "SELECT string_agg(node, ',' ORDER BY node) FROM ceems.job_nodes
		           JOIN ceems.jobs USING (job_key) WHERE jobid = $id")" = "$want" ] &&
		[ "$(db "SELECT bool_and(coalesce(n.package_j > 0, false)) AND
		                abs(sum(n.package_j) - min(j.package_j)) < 1e-6 * min(j.package_j)
		           FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
		          WHERE j.jobid = $id")" = t ] || {
		echo "job $id on $want: not one record of each node" >&2
		show_job "$id" >&2
		return 1
	}
	no_spooled "$id"
}

# no_spooled ID: no node keeps a record of job ID, or refused one.
no_spooled() {
	local f
	for f in "$CEEMS_DIR"/n*/spool/*.json "$CEEMS_DIR"/n*/spool/rejected/*; do
		[ -e "$f" ] || continue
		case $f in
		*/rejected/*)
			echo "a record was refused: $f" >&2
			return 1
			;;
		esac
		if [ "$(jq -r .job.jobid "$f")" = "$1" ]; then
			echo "a record of job $1 waits in $f" >&2
			return 1
		fi
	done
}

# spooled ID NODE: NODE's spool holds job ID's record (10 s at most).
spooled() {
	local f
	for _ in $(seq 1 20); do
		for f in "$CEEMS_DIR/$2"/spool/*.json; do
			[ -e "$f" ] && [ "$(jq -r .job.jobid "$f")" = "$1" ] && return 0
		done
		sleep 0.5
	done
	echo "no record of job $1 in $2's spool" >&2
	return 1
}

# The job's run, from start to end as Slurm has it, in seconds.
slurm_elapsed() {
	local t
	t=$(slurm_job "$1" | sed -n 's/.* RunTime=\([^ ]*\).*/\1/p')
	echo "$t" | awk -F: '{ print $1 * 3600 + $2 * 60 + $3 }'
}

# A 3-node job of S seconds, one task on each node (sleeping: three
# nodes share this machine's two cores).
three_node_job() {
	submit nobody -J "$1" -N3 --ntasks-per-node=1 -c1 --no-requeue \
		--wrap "srun sleep $2"
}

@test "a node's agent killed mid-job (not the batch node): restarted, the job restored, its gap said; every record once" {
	local id victim pid new gap cov
	id=$(three_node_job agentkill 8)
	wait_running "$id"
	victim=$(other_node "$id")
	[ -n "$victim" ]
	sleep 2
	pid=$(agent_status "$victim" | jq .pid)
	kill -KILL "$pid"
	# Its supervisor starts it again.
	for _ in $(seq 1 50); do
		new=$(agent_status "$victim" 2>/dev/null | jq .pid) &&
			[ -n "$new" ] && [ "$new" != "$pid" ] && break
		sleep 0.2
	done
	[ -n "$new" ] && [ "$new" != "$pid" ]
	[ "$(finish "$id")" = COMPLETED ]
	# The job's end waited on nothing: its 8 s and Slurm's own steps.
	echo "# job $id: $(slurm_elapsed "$id") s in Slurm; $victim's agent $pid -> $new" >&3
	check "$(slurm_elapsed "$id") <= 14"
	grep -q "job $id restored from state" "$CEEMS_DIR/$victim/agent.log" || {
		tail -n 20 "$CEEMS_DIR/$victim/agent.log" >&2
		false
	}
	wait_reported "$id" 3
	once "$id"
	# The killed node's record says the time it missed, the others
	# missed none; the job's figures say it too.
	gap=$(db "SELECT n.gap_s FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
	           WHERE j.jobid = $id AND n.node = '$victim'")
	cov=$(db "SELECT n.package_covered_s / n.lifetime_s FROM ceems.job_nodes n
	           JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id AND n.node = '$victim'")
	echo "# $victim: gap $gap s, package coverage $cov" >&3
	# Measured before the kill and after the restart, not between.
	check "$gap > 0 && $cov > 0.3 && $cov < 1"
	[ "$(db "SELECT count(*) FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
	          WHERE j.jobid = $id AND n.node <> '$victim' AND n.gap_s = 0")" = 2 ]
	[ "$(db "SELECT gap_s > 0 AND package_coverage < 1 FROM ceems.jobs WHERE jobid = $id")" = t ]
}

@test "a node's slurmd killed mid-job and started again: the steps live on, every record arrives once" {
	local id victim pid agent steps
	id=$(three_node_job slurmdkill 8)
	wait_running "$id"
	victim=$(other_node "$id")
	agent=$(agent_status "$victim" | jq .pid)
	sleep 2
	pid=$(cat "$SLURM_DIR/run/slurmd-$victim.pid")
	kill -KILL "$pid"
	sleep 2
	# The job's step daemons on that node outlived it.
	steps=$(node_steps "$victim" "$id")
	[ "$steps" -ge 2 ] || {
		echo "job $id: $steps step daemons left on $victim after its slurmd $pid was killed" >&2
		false
	}
	(cd / && slurmd -f "$SLURM_CONF" -N "$victim") >/dev/null 2>&1
	[ "$(finish "$id")" = COMPLETED ]
	echo "# job $id: $(slurm_elapsed "$id") s in Slurm; $victim's slurmd $pid killed" >&3
	check "$(slurm_elapsed "$id") <= 14"
	# The new slurmd found its node's agent running and kept it.
	[ "$(agent_status "$victim" | jq .pid)" = "$agent" ]
	wait_reported "$id" 3
	once "$id"
}

@test "a node's extern step killed, its slurmd down until the others completed: slurmctld's word ends it there, its record counts the job's nodes and ends the job when Slurm did" {
	local id victim pid p end state=
	id=$(three_node_job lastnode 4)
	wait_running "$id"
	victim=$(other_node "$id")
	sleep 1
	# Its extern step gone, the agent sees its slurmstepd's exit once
	# the job's last step there ended, and slurmctld's word (asked by
	# ceems-jobinfo) ends the job on that node.
	for p in $(pgrep -f "^slurmstepd: \[$id\.extern\]"); do
		find "/proc/$p/fd" -lname "*/slurmd-$victim.log" 2>/dev/null | grep -q . &&
			kill -KILL "$p"
	done
	pid=$(cat "$SLURM_DIR/run/slurmd-$victim.pid")
	kill -KILL "$pid"
	# The job completes on the other nodes; slurmctld then names the
	# victim alone, the one node still completing it.
	for _ in $(seq 1 60); do
		state=$(slurm_job "$id" | grep -o "JobState=[^ ]*\|NodeList=n[^ ]*\|NumNodes=[^ ]*" | paste -sd' ' -)
		[ "$state" = "JobState=COMPLETING NodeList=$victim NumNodes=1" ] && break
		sleep 0.5
	done
	[ "$state" = "JobState=COMPLETING NodeList=$victim NumNodes=1" ] || {
		echo "job $id: $state" >&2
		false
	}
	# Back seconds after the job's end.
	sleep 2
	(cd / && slurmd -f "$SLURM_CONF" -N "$victim") >/dev/null 2>&1
	[ "$(finish "$id")" = COMPLETED ]
	wait_reported "$id" 3
	[ "$(db "SELECT n.finalized_by FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
	          WHERE j.jobid = $id AND n.node = '$victim'")" = epilog ]
	grep -q "job $id: its extern step ended without ending the job" "$CEEMS_DIR/$victim/agent.log"
	grep -q "job $id: slurmctld's end (COMPLETED) given to the node agent" "$CEEMS_DIR/$victim/agent.log" || {
		grep "job $id" "$CEEMS_DIR/$victim/agent.log" >&2
		false
	}
	once "$id"
	[ "$(db "SELECT nodelist FROM ceems.jobs WHERE jobid = $id")" = "n[1-3]" ] &&
		[ "$(db "SELECT string_agg(DISTINCT coalesce(n.job_meta->>'nnodes', '?') || ' ' ||
		                                   coalesce(n.job_meta->>'nodes', '?'), ',')
		           FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = "3 n[1-3]" ] || {
		show_job "$id" >&2
		db "SELECT n.node, n.job_meta FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
		     WHERE j.jobid = $id" >&2
		false
	}
	# The job ended when Slurm ended it, not when its last node
	# completed it.
	end=$(date -d "$(slurm_job "$id" | sed -n 's/.* EndTime=\([^ ]*\).*/\1/p')" +%s)
	[ "$(db "SELECT extract(epoch FROM end_time)::bigint || ' ' || elapsed_s
	          FROM ceems.jobs WHERE jobid = $id")" = "$end $(slurm_elapsed "$id")" ] || {
		echo "Slurm: job $id ended at $end after $(slurm_elapsed "$id") s" >&2
		db "SELECT end_time, elapsed_s FROM ceems.jobs WHERE jobid = $id" >&2
		db "SELECT n.node, n.job_meta->>'end_time' FROM ceems.job_nodes n
		     JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id" >&2
		false
	}
}

@test "a node's database link down at the job's end: its record waits in its spool, the job is listed missing a node until the replay stores it once" {
	local id victim agent writer node
	id=$(three_node_job dblink 4)
	wait_running "$id"
	victim=$(other_node "$id")
	(cd / && runuser -u postgres -- "$CEEMS_TEST_PGBIN/pg_ctl" -D "$PG/data" \
		-m fast -w -t 30 stop) >/dev/null
	[ "$(finish "$id")" = COMPLETED ]
	for node in n1 n2 n3; do
		spooled "$id" "$node"
	done
	# The database returns for the other nodes.  The victim's writer
	# (its agent's replay process, which has failed to connect by now
	# and waits to try again) stays cut off: held with SIGSTOP, as a
	# dead link holds a connection attempt.
	agent=$(agent_status "$victim" | jq .pid)
	writer=$(ps -o pid=,args= --ppid "$agent" | awk '/--replay/ { print $1 }')
	[ -n "$writer" ]
	kill -STOP "$writer"
	echo "$writer" >>"$BATS_FILE_TMPDIR/held"
	pg_up
	wait_reported "$id" 2
	[ "$(db "SELECT nodes_missing || ' ' || reported_nodes FROM ceems.job_missing_nodes
	          WHERE jobid = $id")" = "1 $(job_nodes_of "$id" | tr ',' '\n' | grep -vx "$victim" | paste -sd, -)" ] || {
		db "SELECT * FROM ceems.job_missing_nodes" >&2
		false
	}
	spooled "$id" "$victim"
	kill -CONT "$writer"
	wait_reported "$id" 3
	[ "$(db "SELECT count(*) FROM ceems.job_missing_nodes WHERE jobid = $id")" = 0 ]
	once "$id"
}

@test "a node set DOWN mid-job: NODE_FAIL in every node's record and the job's row, each record once" {
	local id victim state
	id=$(submit nobody -J nodefail -N3 --ntasks-per-node=1 -c1 --no-requeue \
		--wrap 'srun sleep 60')
	wait_running "$id"
	victim=$(other_node "$id")
	sleep 2
	scontrol update nodename="$victim" state=down reason=ceems-test
	state=$(finish "$id")
	scontrol update nodename="$victim" state=resume ||
		scontrol update nodename="$victim" state=idle || true
	[ "$state" = NODE_FAIL ]
	wait_reported "$id" 3
	once "$id"
	[ "$(db "SELECT state FROM ceems.jobs WHERE jobid = $id")" = NODE_FAIL ]
	[ "$(db "SELECT string_agg(DISTINCT n.job_meta->>'state', ',') FROM ceems.job_nodes n
	          JOIN ceems.jobs j USING (job_key) WHERE j.jobid = $id")" = NODE_FAIL ] || {
		show_job "$id" >&2
		false
	}
	# Back in service for the next tests.
	for _ in $(seq 1 60); do
		[ "$(sinfo -h -n "$victim" -o %t)" = idle ] && return 0
		sleep 0.5
	done
	sinfo -N >&2
	false
}

@test "an array of three tasks, a node each: each task its own row, node, figures and array identity" {
	local id t jobid
	id=$(submit nobody -J arr --array=1-3 -N1 --exclusive --wrap 'sleep 3')
	for t in 1 2 3; do
		[ "$(finish "${id}_$t")" = COMPLETED ]
	done
	for t in 1 2 3; do
		jobid=$(scontrol -o show job "${id}_$t" | sed -n 's/^JobId=\([0-9]*\) .*/\1/p')
		wait_reported "$jobid" 1
		once "$jobid"
		[ "$(db "SELECT array_job_id || '_' || array_task_id FROM ceems.jobs WHERE jobid = $jobid")" = "${id}_$t" ]
	done
	# Three tasks on three nodes.
	[ "$(db "SELECT count(DISTINCT nodelist) FROM ceems.jobs WHERE array_job_id = $id")" = 3 ]
	[ "$(db "SELECT count(*) FROM ceems.jobs WHERE array_job_id = $id")" = 3 ]
}

@test "a heterogeneous job of a 1-node and a 2-node component: each component its own job, row, nodes and figures" {
	local id n
	cat >"$SLURM_DIR/out/het.sh" <<'EOF'
#!/bin/sh
#SBATCH -N1 --exclusive
#SBATCH hetjob
#SBATCH -N2 --exclusive
srun --het-group=0,1 sleep 3
EOF
	id=$(submit nobody -J het "$SLURM_DIR/out/het.sh")
	[ "$(finish "$id")" = COMPLETED ]
	# Slurm numbers the components from the leader's id on.
	for n in 0 1; do
		scontrol -o show job "$id" | grep -q "JobId=$((id + n)) HetJobId=$id HetJobOffset=$n " || {
			scontrol -o show job "$id" >&2
			false
		}
	done
	wait_reported "$id" 1
	wait_reported "$((id + 1))" 2
	once "$id"
	once "$((id + 1))"
	# Nodes of their own: three in all.
	[ "$(db "SELECT count(*) FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
	          WHERE j.jobid IN ($id, $((id + 1)))")" = 3 ]
	[ "$(db "SELECT count(DISTINCT n.node) FROM ceems.job_nodes n JOIN ceems.jobs j USING (job_key)
	          WHERE j.jobid IN ($id, $((id + 1)))")" = 3 ]
}
