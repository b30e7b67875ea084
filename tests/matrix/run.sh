#!/bin/bash
# tests/matrix/run.sh -- the end-to-end core on newer Slurm releases: for
# each Debian suite named (trixie: Slurm 24.11; sid: Slurm 26.05), a
# debootstrapped root (tests/matrix/root.sh, cached), ceems built in it
# against that Slurm's headers (--enable-werror, the suite's compiler),
# then the integration tests of the core run in it on a one-node cluster
# of that Slurm, with the suite's PostgreSQL, on this machine's kernel
# and cgroups.  Says for each suite what ran, what was skipped and why.
#
#   run.sh [SUITE...]          (default: $CEEMS_MATRIX_SUITES, "trixie sid")
#
# Environment:
#   CEEMS_MATRIX_RESULTS  where each suite's logs and TAP results (.trs)
#                         go, in SUITE/ (default ./matrix-results)
#   CEEMS_MATRIX_CACHE    where the roots are kept between runs (default
#                         ./matrix-roots); a root is made again when the
#                         package list changes
#   CEEMS_MATRIX_BUDGET_MIN  minutes for the whole run (default 30): a
#                         suite is skipped when less is left than the one
#                         before took, and one running past it is stopped
#                         (and fails)
#   CEEMS_MATRIX_TESTS    the tests (tests/integration/NAME.bats) run in
#                         each root
#   CEEMS_MATRIX_MIRROR   Debian's archive (default: the host's own
#                         deb.debian.org-style mirror from its apt sources)
#   CEEMS_CLUSTER_LOCK    the lock held while a cluster runs (default
#                         /tmp/ceems-cluster.lock: ports and cgroups are
#                         the machine's); "held" when the caller holds it
#                         already (flock LOCK ./.ci/run), or each root's
#                         tests would wait for the caller's lock forever
# Exit status: 0 when every suite run passed (skips included), 1 otherwise.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/matrix/root.sh
. "$here/root.sh"

results=${CEEMS_MATRIX_RESULTS:-$PWD/matrix-results}
cache=${CEEMS_MATRIX_CACHE:-$PWD/matrix-roots}
budget_min=${CEEMS_MATRIX_BUDGET_MIN:-30}
lock=${CEEMS_CLUSTER_LOCK:-/tmp/ceems-cluster.lock}
# The core: jobs of the demo's kinds with their summaries and records,
# ceems-sacct, the agent killed mid-job and slurmd restarted (jobs,
# recover), the extern step and the epilog's safety net (options),
# records in PostgreSQL with the agent away or slurmctld stopped (thin),
# accuracy on a node that jobs share (accuracy-mix).
tests=${CEEMS_MATRIX_TESTS:-smoke jobs recover options thin accuracy-mix}
start=$(date +%s)
failed=0
# Time spent waiting for the cluster lock (others' tests on this
# machine): not the matrix's own, so not counted in its budget.
waited_s=0
suite_wait_s=0

say() { printf 'matrix: %s\n' "$*"; }

# The Debian mirror the host's apt uses (deb.debian.org unless told).
mirror() {
	local m
	if [ -n "${CEEMS_MATRIX_MIRROR:-}" ]; then
		echo "$CEEMS_MATRIX_MIRROR"
		return
	fi
	m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v '^[[:space:]]*#' | grep -o 'https\?://[^ ]*/debian/\?' |
		grep -v security | head -n 1)
	echo "${m:-http://deb.debian.org/debian}"
}

minutes() { awk -v s="$1" -v e="$(date +%s)" 'BEGIN { printf "%.1f", (e - s) / 60 }'; }

# record SUITE RESULT REASON: one TAP result of the suite's own (a skip,
# or a failure before its tests), as automake's .trs files hold them.
record() {
	mkdir -p "$results/$1"
	printf ':test-result: %s\n:global-test-result: %s\n:recheck: no\n:copy-in-global-log: no\n' \
		"$2" "$2" >"$results/$1/matrix-$1.trs"
	printf '%s: matrix/%s: %s\n' "$2" "$1" "$3"
}

# Whether Slurm in ROOT can run on this machine's cgroups: Slurm's
# cgroup/v1 plugin is needed where the controllers are on v1.
cgroup_reason() {
	local root=$1 fs
	fs=$(stat -f -c %T /sys/fs/cgroup 2>/dev/null)
	[ "$fs" = cgroup2fs ] && return 0
	if ! find "$root/usr/lib" -path '*slurm*' -name cgroup_v1.so 2>/dev/null | grep -q .; then
		echo "this Slurm has no cgroup/v1 plugin and this machine's cgroup controllers are on v1"
		return 1
	fi
}

run_suite() {
	local suite=$1 root=$cache/$1 out=$results/$1 t0 left why rc
	t0=$(date +%s)
	rm -rf "$out"
	mkdir -p "$out"
	left=$(( budget_min * 60 - ($(date +%s) - start) ))
	# A suite takes about what the one before it took: one that would
	# not end within the budget does not start.
	if [ "$left" -le "${last_suite_s:-60}" ]; then
		record "$suite" SKIP "$(awk -v l="$left" 'BEGIN { printf "%.1f", l / 60 }') min left of the matrix's time budget ($budget_min min, CEEMS_MATRIX_BUDGET_MIN), the suite before took $(awk -v l="${last_suite_s:-60}" 'BEGIN { printf "%.1f", l / 60 }')"
		return 0
	fi
	matrix_root_make "$root" "$suite" "$(mirror)" "$out/root.log" || {
		record "$suite" FAIL "its root could not be made (see $out/root.log)"
		return 1
	}
	if ! why=$(cgroup_reason "$root"); then
		record "$suite" SKIP "$why"
		return 0
	fi
	# From here on, the root's mounts come off whatever happens.
	trap 'matrix_root_umount "$root"; exit 130' INT TERM
	matrix_root_mount "$root" || { matrix_root_umount "$root"; record "$suite" FAIL "cannot mount into its root"; return 1; }
	rm -rf "${root:?}/ceems"
	mkdir -p "$root/ceems/src"
	tar -C "$top" --exclude=./_build --exclude=./.git -cf - . | tar -C "$root/ceems/src" -xf -
	say "$suite: $(matrix_root_run "$root" /ceems/src/tests/matrix/inside.sh versions 2>&1)"
	if ! matrix_root_run "$root" /ceems/src/tests/matrix/inside.sh build >"$out/build.log" 2>&1; then
		tail -n 40 "$out/build.log"
		matrix_root_umount "$root"
		trap - INT TERM
		record "$suite" FAIL "ceems does not build against this Slurm (see $out/build.log)"
		return 1
	fi
	say "$suite: built in $(minutes "$t0") min"
	left=$(( budget_min * 60 - ($(date +%s) - start) ))
	t_lock=$(date +%s)
	# shellcheck disable=SC2086 # one word a test
	if [ "$lock" = held ]; then
		bash "$0" --locked-test "$root" "$left" "$out/locked-at" $tests >"$out/test.log" 2>&1
	else
		flock "$lock" bash "$0" --locked-test "$root" "$left" "$out/locked-at" $tests >"$out/test.log" 2>&1
	fi
	rc=$?
	suite_wait_s=$(( $(cat "$out/locked-at" 2>/dev/null || echo "$t_lock") - t_lock ))
	waited_s=$(( waited_s + suite_wait_s ))
	start=$(( start + suite_wait_s ))
	[ "$suite_wait_s" -lt 60 ] || say "$suite: waited $(awk -v l="$suite_wait_s" 'BEGIN { printf "%.1f", l / 60 }') min for the cluster lock (not counted)"
	cp "$root"/ceems/build/tests/integration/*.trs "$root"/ceems/build/tests/integration/*.log "$out/" 2>/dev/null
	sed -n 's/^\(PASS\|FAIL\|ERROR\|XPASS\|XFAIL\|SKIP\): /&'"$suite"'\//p' "$out/test.log"
	matrix_root_umount "$root" || rc=1
	trap - INT TERM
	if [ $rc -ne 0 ]; then
		grep -q '^:test-result: \(FAIL\|ERROR\|XPASS\)' "$out"/*.trs 2>/dev/null ||
			record "$suite" FAIL "its tests did not run to their end (see $out/test.log)"
		tail -n 30 "$out/test.log"
		say "$suite: failed, $(minutes "$t0") min"
		return 1
	fi
	say "$suite: passed ($tests), $(minutes "$t0") min"
}

# run.sh --locked-test ROOT SECONDS STAMP TEST...: the tests in ROOT
# (mounted), stopped after SECONDS, then whatever a stopped test left
# running is stopped too; the caller holds the cluster lock throughout.
# STAMP gets the time the lock was taken.
if [ "${1:-}" = --locked-test ]; then
	root=$2 left=$3
	date +%s >"$4"
	shift 4
	export -f matrix_root_run
	timeout -k 30 "$left" bash -c 'matrix_root_run "$@"' sh \
		"$root" /ceems/src/tests/matrix/inside.sh test "$@"
	rc=$?
	if [ $rc = 124 ] || [ $rc = 137 ]; then
		echo "matrix: stopped at the time budget"
	fi
	matrix_root_run "$root" /ceems/src/tests/matrix/inside.sh cleanup || rc=1
	exit $rc
fi

if [ "$(id -u)" != 0 ]; then
	echo "run.sh: run as root (debootstrap, chroot, Slurm and PostgreSQL)" >&2
	exit 2
fi
suites=${*:-${CEEMS_MATRIX_SUITES:-trixie sid}}
if ! command -v debootstrap >/dev/null; then
	for s in $suites; do
		record "$s" SKIP "debootstrap is not installed"
	done
	exit 0
fi
for s in $suites; do
	t=$(date +%s)
	suite_wait_s=0
	run_suite "$s" || failed=1
	last_suite_s=$(( $(date +%s) - t - suite_wait_s ))
done
say "all suites: $(minutes "$start") min$([ "$waited_s" -lt 60 ] || awk -v l="$waited_s" 'BEGIN { printf ", and %.1f min waiting for the cluster lock", l / 60 }')"
exit $failed
