#!/usr/bin/env bats
# sacct-dropin.bats - ceems-sacct as a drop-in for sacct, against the real
# thing: the same jobs (completed, failed, cancelled, timed out,
# OOM-killed, a two-task array, jobs with srun steps) read back through
# Slurm's sacct (slurmdbd and MariaDB, tests/harness/slurmdbd.sh) and
# through ceems-sacct (the agent's records), each with
# --parsable2 --noheader --format=F for every field sacct prints, and
# compared field by field, line by line (lib/sacct-compare.bash says
# how); the energy fields are not compared: this cluster runs no
# AcctGatherEnergyType, so Slurm has none (acct-energy.bats compares them
# with acct_gather_energy/ceems).  With slurm_sacct, the fields ceems
# does not keep are Slurm's own, on every line.
#
# One cluster for the file (setup_file), the jobs submitted together;
# the timed out job's one-minute limit (Slurm ends it after 87 s) is the
# longest part: about 2 minutes in all (100 s from the first submit to
# the comparison's end, plus the cluster's start with MariaDB and
# slurmdbd).  Runs as root; needs CEEMS_SPANK_PLUGIN (make
# check-integration), mariadb-server and slurmdbd.

load lib/ceems-cluster
load lib/sacct-compare

_skip_reason() {
	if [ -z "${CEEMS_SPANK_PLUGIN:-}" ]; then
		echo "CEEMS_SPANK_PLUGIN is not set (run through make check-integration)"
	elif ! command -v slurmdbd >/dev/null || ! command -v mariadbd >/dev/null; then
		echo "slurmdbd or mariadbd not found (packages slurmdbd, mariadb-server)"
	fi
}

setup_file() {
	[ -z "$(_skip_reason)" ] || return 0
	export CEEMS_TEST_SLURMDBD=1 CEEMS_TEST_SLURMDBD_USERS=nobody
	ceems_cluster_setup sacctdropin || return 1
	_jobs
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	local why
	load_lib
	why=$(_skip_reason)
	[ -z "$why" ] || skip "$why"
}

# _jobs: one job of each end, submitted together; "ID KIND" lines in
# CEEMS_DIR/jobs once every one has ended and has its record.
_jobs() {
	local t c f o a k id
	# the one-minute limit first: it runs beside the others
	t=$(submit nobody -J timeout -c1 --mem=128M --time=1 --wrap 'srun -n1 sleep 300') || return 1
	c=$(submit nobody -J completed -c1 --mem=128M --wrap 'srun -n1 true; srun -n1 sleep 1') || return 1
	f=$(submit nobody -J failed -c1 --mem=128M --wrap 'exit 3') || return 1
	o=$(submit nobody -J oom -c1 --mem=100M \
		--wrap 'python3 -c "b = bytearray(400 * 1024 * 1024)"') || return 1
	a=$(submit nobody -J array -c1 --mem=128M --array=0-1 --wrap 'sleep 1') || return 1
	k=$(submit nobody -J cancelled -c1 --mem=128M --wrap 'sleep 300') || return 1
	printf '%s\n' "$t timeout" "$c completed" "$f failed" "$o oom" \
		"$a array" "$k cancelled" >"$CEEMS_DIR/jobs"
	wait_running "$k" || return 1
	sleep 1
	scancel "$k"
	for id in $c $f $o "${a}_0" "${a}_1" $k $t; do
		finish "$id" >/dev/null || return 1
	done
	for id in $c $f $o $k $t; do
		record_of "$id" >/dev/null || return 1
	done
	_slurm_settled
}

# _ids: the jobs' ids, comma-separated.
_ids() {
	cut -d' ' -f1 "$CEEMS_DIR/jobs" | paste -sd,
}

# _slurm_settled: until slurmdbd holds every job and step ended.
_slurm_settled() {
	local out
	for _ in $(seq 1 100); do
		out=$(sacct -n -P -j "$(_ids)" -o JobID,State)
		[ -n "$out" ] && ! grep -q 'RUNNING\|PENDING\|COMPLETING' <<<"$out" && return 0
		sleep 0.2
	done
	echo "sacct never showed the jobs ended: $out" >&2
	return 1
}

# _listing TOOL FIELDS: TOOL's lines for the jobs, sorted by JobID.
_listing() {
	sacct_compare_listing "$1" "$(_ids)" "$CEEMS_DIR/ceems.conf" "$2"
}

@test "sacct's own --helpformat names fields ceems-sacct accepts, every one" {
	local f missing=""
	for f in $(sacct_compare_fields); do
		"$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" \
			-j 1 -n -P -o "$f" >/dev/null 2>&1 || missing="$missing $f"
	done
	[ -z "$missing" ] || { echo "refused:$missing"; false; }
}

@test "the same jobs: sacct and ceems-sacct list the same lines" {
	local s c
	s=$(_listing sacct State | cut -d'|' -f1)
	c=$(_listing ceems State | cut -d'|' -f1)
	echo "# sacct's lines: $(paste -sd' ' <<<"$s")" >&3
	echo "# ceems-sacct's lines: $(paste -sd' ' <<<"$c")" >&3
	[ "$s" = "$c" ] || { diff <(echo "$s") <(echo "$c"); false; }
}

@test "every field sacct 22.05 prints: identical where ceems fills it, empty where it has none" {
	sacct_compare "$(_ids)" "$CEEMS_DIR/ceems.conf"
}

@test "with slurm_sacct, every field ceems does not keep is Slurm's own value, line by line" {
	local names=() fields s c f i n sv cv kinds bad=0 filled=0 conf id
	id=$(cut -d' ' -f1 "$CEEMS_DIR/jobs" | sed -n 2p)
	# a value only Slurm has: an admin's comment on the completed job
	sacctmgr -i modify job where jobid="$id" set AdminComment="ceems checked|here" >/dev/null ||
		skip "sacctmgr cannot set an AdminComment here"
	for _ in $(seq 1 50); do
		[ -n "$(sacct -n -P -j "$id" -X -o AdminComment)" ] && break
		sleep 0.2
	done
	conf=$BATS_TEST_TMPDIR/ceems.conf
	{ cat "$CEEMS_DIR/ceems.conf"; echo "slurm_sacct = $(command -v sacct)"; } >"$conf"
	while read -r f st _; do
		[ "$st" = empty ] && [ -n "$(sacct_compare_fields | grep -x "$f")" ] && names+=("$f")
	done < <("$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" --explain-fields)
	fields=$(IFS=,; echo "${names[*]}")
	# '|' is in the comment: another delimiter for both
	s=$(sacct --delimiter=@@ -P -n -j "$(_ids)" -o "JobID,$fields" | LC_ALL=C sort)
	c=$("$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$conf" --delimiter=@@ \
		-P -n -j "$(_ids)" -o "JobID,$fields" | LC_ALL=C sort)
	grep -q "^$id@@ceems checked|here@@" <<<"$c" ||
		{ echo "the AdminComment is not in ceems-sacct's line of job $id"; false; }
	n=${#names[@]}
	for i in $(seq 1 "$n"); do
		f=${names[$((i - 1))]}
		sv=$(sed 's/@@/\x1e/g' <<<"$s" | cut -d$'\x1e' -f$((i + 1)))
		cv=$(sed 's/@@/\x1e/g' <<<"$c" | cut -d$'\x1e' -f$((i + 1)))
		kinds=$(sacct_compare_cells "$sv" "$cv" | sort -u | paste -sd' ')
		if [ "$kinds" = same ]; then
			[ -n "$(tr -d '\n' <<<"$sv")" ] && filled=$((filled + 1))
		else
			echo "$f: sacct [$(paste -sd' ' <<<"$sv")] ceems [$(paste -sd' ' <<<"$cv")]"
			bad=1
		fi
	done
	echo "# $n fields ceems does not keep: each identical to sacct's on every line, $filled of them with a value" >&3
	[ "$bad" = 0 ] && [ "$filled" -gt 10 ]
}

@test "with slurm_sacct naming a program that fails, one warning and the empty cells" {
	local conf out
	conf=$BATS_TEST_TMPDIR/ceems.conf
	{ cat "$CEEMS_DIR/ceems.conf"; echo "slurm_sacct = /bin/false"; } >"$conf"
	run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$conf" -P -n -j "$(_ids)" -o JobID,AdminComment
	[ "$status" -eq 0 ]
	echo "$output" | grep -qx "ceems-sacct: warning: Slurm's sacct: /bin/false exited with 1; the fields ceems does not keep are empty" ||
		{ echo "$output"; false; }
	[ "$(echo "$output" | grep -c '|$')" -ge 6 ]
}
