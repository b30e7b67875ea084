#!/usr/bin/env bats
# marks.bats - a job's own account of its work, end to end on the
# cluster (doc/marks.md): one job marks a counter from a shell loop
# (ceems-mark), one from a C program through libceems_mark (100,000
# marks, summed in the process) and one from Python through ctypes (a
# cumulative value); the agent takes them, the summary prints the energy
# per unit and the record keeps the counters.  Then who may mark a job:
# a process of the job's owner outside the job, and a job of another
# user, are refused; the same through the plain-text line protocol.

load lib/ceems-cluster

setup_file() {
	ceems_cluster_setup marks summary=full
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
	MARK=$CEEMS_TOP_BUILDDIR/tools/ceems-mark
	LIB=$CEEMS_TOP_BUILDDIR/lib/.libs/libceems_mark.so
	OUT=$SLURM_DIR/out
	# A sanitizer build's library needs ASan's runtime loaded first in
	# a program that was not built with it (the C program here, Python),
	# and Python's own allocations are not this test's leaks.
	RUN=
	asan=$(ldd "$LIB" | awk '/libasan/ { print $3 }')
	[ -z "$asan" ] || RUN="env LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"
}

_fail() {
	echo "$*" >&2
	return 1
}

# summary_per_unit ID UNIT: the energy per unit of the job's Work line
# for UNIT, in J.
summary_per_unit() {
	out_of "$1" | awk -v u="$2" '
		$0 ~ "^(Work)? +[0-9.e+]+ " u " " {
			for (i = 1; i <= NF; i++)
				if ($(i + 1) ~ /^(uJ|mJ|J|Wh|kWh)$/ && $(i + 2) == "per") {
					m = $(i + 1) == "uJ" ? 1e-6 : $(i + 1) == "mJ" ? 1e-3 :
					    $(i + 1) == "Wh" ? 3600 : $(i + 1) == "kWh" ? 3.6e6 : 1
					printf "%.10g\n", $i * m
				}
		}'
}

# markline_py: $OUT/markline.py LINE sends LINE as one message on the
# agent's socket (CEEMS_AGENT_SOCKET, as in a job) and prints the answer;
# exit 0 when it is OK.
markline_py() {
	cat >"$OUT/markline.py" <<-EOF
		import os, socket, sys
		s = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
		s.connect(os.environ.get("CEEMS_AGENT_SOCKET", "$CEEMS_DIR/agent.sock"))
		s.send((sys.argv[1] + "\\n").encode())
		answer = s.recv(1024).decode()
		print(answer, end="")
		sys.exit(0 if answer == "OK\\n" else 1)
	EOF
	chmod 0644 "$OUT/markline.py"
}

@test "a shell loop, a C program and Python mark one job; the summary divides its energy by each counter" {
	cat >"$OUT/markc.c" <<-'EOF'
		#include <stdio.h>
		#include <stdlib.h>
		#include <ceems_mark.h>
		int main(int argc, char **argv)
		{
			long n = atol(argv[1]);
			volatile double x = 0;
			for (long i = 0; i < n; i++) {
				for (int k = 0; k < 2000; k++)
					x += k;
				if (ceems_mark_add("samples", "samples", 1) < 0 &&
				    i == 0)
					fprintf(stderr, "markc: %s\n", ceems_mark_error());
			}
			return ceems_mark_flush() < 0;
		}
	EOF
	gcc -O1 -I"$CEEMS_TOP_SRCDIR/lib/mark" -o "$OUT/markc" "$OUT/markc.c" \
		-L"$(dirname "$LIB")" -lceems_mark -Wl,-rpath,"$(dirname "$LIB")" ||
		_fail "the C program does not build against ceems_mark.h"
	cat >"$OUT/mark.py" <<-'EOF'
		import ctypes, sys
		lib = ctypes.CDLL(sys.argv[1])
		lib.ceems_mark_set.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_double]
		lib.ceems_mark_error.restype = ctypes.c_char_p
		for i in range(1, 11):
		    if lib.ceems_mark_set(b"ns", b"ns_simulated", 0.25 * i) < 0:
		        print("mark.py:", lib.ceems_mark_error().decode(), file=sys.stderr)
		sys.exit(1 if lib.ceems_mark_flush() < 0 else 0)
	EOF
	markline_py
	cat >"$OUT/marks.sh" <<-EOF
		#!/bin/bash
		set -e
		for i in \$(seq 1 50); do $MARK --strict --unit timesteps steps 20; done
		$RUN $OUT/markc 100000
		$RUN /usr/bin/python3 $OUT/mark.py $LIB
		# The line protocol: taken, and a bad line refused with its why.
		/usr/bin/python3 $OUT/markline.py "MARK \$SLURM_JOB_ID lines 7 lines add"
		/usr/bin/python3 $OUT/markline.py "MARK \$SLURM_JOB_ID lines 7 lines sum" || true
		echo marks-done
	EOF
	chmod 0755 "$OUT/marks.sh" "$OUT/markc"
	chmod 0644 "$OUT/mark.py"
	ID=$(submit nobody -J marks -c1 "$OUT/marks.sh") || _fail "sbatch"
	[ "$(finish "$ID")" = COMPLETED ] || { out_of "$ID" >&2; _fail "job $ID did not complete"; }
	out_of "$ID" | grep -qx marks-done || { out_of "$ID" >&2; _fail "a marker failed"; }
	out_of "$ID" | grep -qx "OK" || { out_of "$ID" >&2; _fail "the line was not taken"; }
	out_of "$ID" | grep -q '^ERR EINVAL mark line: the last field is "add"' ||
		{ out_of "$ID" >&2; _fail "the bad line's answer"; }
	R=$(record_of "$ID") || _fail "no record"
	# Every mark made reached the record: exact sums, each counter in
	# the unit of its marks; the C program's 100,000 arrived summed.
	[ "$(jq -c '[.marks[] | [.name, .unit, .work]]' "$R")" = \
	  '[["steps","timesteps",1000],["samples","samples",100000],["ns","ns_simulated",2.5],["lines","lines",7]]' ] ||
		_fail "marks: $(jq -c .marks "$R")"
	[ "$(jq '.marks[0].marks' "$R")" = 50 ] || _fail "the shell loop's 50 marks"
	check "$(jq '.marks[1].marks' "$R") <= 20" || _fail "the C program's marks were not summed"
	total=$(jq '[.measurements.ledger | .package.joules, .dram.joules, .gpu.joules, .node.joules
		    | values] | add' "$R")
	check "$total > 0" || _fail "the job has no energy"
	for c in "1000 timesteps" "100000 samples" "2.5 ns_simulated" "7 lines"; do
		set -- $c
		per=$(summary_per_unit "$ID" "$2")
		[ -n "$per" ] || { out_of "$ID" >&2; _fail "no Work line for $2"; }
		# The summary's figure is of the batch step's end, the
		# record's of the job's: the job holds its cores (and their
		# idle power) a moment longer.  The figure is exactly the
		# energy over the work: 4 digits of it, and what the job
		# spent after.
		check "$per * $1 <= $total * 1.0005 && $per * $1 >= $total * 0.95" ||
			_fail "$2: $per J per unit x $1 is not the job's $total J"
	done
	# The three lines divide the same energy: to their 4 digits.
	s=$(summary_per_unit "$ID" timesteps); p=$(summary_per_unit "$ID" samples)
	check "($s * 1000) / ($p * 100000) > 0.999 && ($s * 1000) / ($p * 100000) < 1.001" ||
		_fail "the lines divide different energies: $s x 1000, $p x 100000"
}

@test "a process of the owner outside the job, and a job of another user, cannot mark it" {
	A=$(submit nobody -J victim -c1 --wrap 'sleep 15') || _fail "sbatch"
	wait_running "$A" || _fail "job $A"
	sleep 1
	run runuser -u nobody -- env SLURM_JOB_ID="$A" CEEMS_AGENT_SOCKET="$CEEMS_DIR/agent.sock" \
		"$MARK" --strict steps 1
	[ "$status" -eq 1 ] || _fail "a process outside the job marked it: $output"
	echo "$output" | grep -q "not a process of job $A" || _fail "why: $output"
	markline_py
	run runuser -u nobody -- /usr/bin/python3 "$OUT/markline.py" "MARK $A steps 1 steps add"
	[ "$status" -eq 1 ] && echo "$output" | grep -q "^ERR EPERM .*not a process of job $A" ||
		_fail "a line from outside the job: $output"
	B=$(submit daemon -J intruder -c1 --wrap \
		"SLURM_JOB_ID=$A $MARK --strict steps 1; echo rc=\$?") || _fail "sbatch as daemon"
	finish "$B" >/dev/null
	out_of "$B" | grep -qx "rc=1" || { out_of "$B" >&2; _fail "another user's job marked job $A"; }
	out_of "$B" | grep -q "is not yours" || { out_of "$B" >&2; _fail "why"; }
	scancel "$A"
	finish "$A" >/dev/null
	R=$(record_of "$A") || _fail "no record of job $A"
	[ "$(jq 'has("marks")' "$R")" = false ] || _fail "job $A has marks: $(jq -c .marks "$R")"
}

@test "a run 30% dearer per unit than the user's earlier runs of the job name says so; one within noise does not" {
	# Four runs of lammps-md, each as long: 100 timesteps twice, then
	# 77 (30% more energy per timestep than the median of the two
	# before), then 100 again (within noise of the three before).  The
	# first two say nothing (no earlier runs, then one: too few).
	for n in 100 100 77 100; do
		ID=$(submit nobody -J lammps-md -c1 --wrap \
			"sleep 5; $MARK --strict --unit timesteps steps $n") || _fail "sbatch"
		[ "$(finish "$ID")" = COMPLETED ] || { out_of "$ID" >&2; _fail "job $ID"; }
		record_of "$ID" >/dev/null || _fail "no record of job $ID"
		IDS="${IDS:-} $ID"
	done
	set -- $IDS
	for id in "$1" "$2" "$4"; do
		out_of "$id" | grep -q "Work .*timesteps" || { out_of "$id" >&2; _fail "no Work line"; }
		! out_of "$id" | grep -q "median of your last" ||
			{ out_of "$id" >&2; _fail "job $id compared: too few runs, or within noise"; }
	done
	line=$(out_of "$3" | grep -E "^ +[0-9]+% more energy per timestep than the median of your last 2 runs of lammps-md$") ||
		{ out_of "$3" >&2; _fail "the dearer run is not compared"; }
	pct=$(echo "$line" | grep -Eo '[0-9]+%' | tr -d %)
	echo "# the run with 77 timesteps: $pct% more energy per timestep" >&3
	[ "$pct" -ge 15 ] && [ "$pct" -le 50 ] || _fail "$pct% for a run 30% dearer"
}
