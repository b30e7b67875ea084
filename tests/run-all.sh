#!/bin/bash
# run-all.sh - the full ceems test suite, exactly as CI runs it: install the
# dependencies, then in fresh out-of-tree builds run
#   1. unit tests (warnings are errors),
#   2. integration tests on real Slurm and PostgreSQL: each runs once,
#      in the sanitizer build (3.) when it can; the plain build runs
#      only those it cannot (Makefile.am's PLAIN_BUILD_TESTS: agent.bats,
#      whose memory budget and valgrind tests a sanitizer build skips),
#   3. the unit tests again and the integration tests, built with ASan
#      + UBSan,
#   4. make distcheck,
#   5. the Debian packages: built, lintian, installed, run, purged; then
#      the installation from the source, run and uninstalled,
#   6. the README's demo (tests/demo.sh), run and checked,
#   7. the matrix: the end-to-end core on Slurm 24.11 and 26.05, each in
#      a debootstrapped Debian root (tests/matrix/run.sh), within a time
#      budget (CEEMS_MATRIX_BUDGET_MIN); it says what ran and what was
#      skipped and why,
# and end with one line "N passed, N failed".  Exits non-zero on any failure.
# Run as root from anywhere; build trees go to _build/ in the checkout.
set -u

top=$(cd "$(dirname "$0")/.." && pwd)
build_root="$top/_build"
jobs=$(nproc 2>/dev/null || echo 2)
total_pass=0
total_fail=0
total_skip=0
summary=""

note() { printf '== %s\n' "$*"; }

# Minutes since the Unix time START, one decimal: each suite's cost in the
# summary, to see what a new suite adds to the hour CI has.
minutes_since() {
	awk -v s="$1" -v e="$(date +%s)" 'BEGIN { printf "%.1f", (e - s) / 60 }'
}

# Count the TAP results a suite left in its build dir (*.trs files).
count_results() {
	local dir=$1 pass fail skip
	pass=$(find "$dir" -name '*.trs' -exec grep -h '^:test-result: \(PASS\|XFAIL\)' {} + 2>/dev/null | wc -l)
	fail=$(find "$dir" -name '*.trs' -exec grep -h '^:test-result: \(FAIL\|XPASS\|ERROR\)' {} + 2>/dev/null | wc -l)
	skip=$(find "$dir" -name '*.trs' -exec grep -h '^:test-result: SKIP' {} + 2>/dev/null | wc -l)
	echo "$pass $fail $skip"
}

# run_suite NAME BUILD MAKE-TARGET: run one suite in _build/BUILD, add its counts.
run_suite() {
	local name=$1 dir=$build_root/$2 target=$3 rc pass fail skip start
	start=$(date +%s)
	note "suite $name: make $target"
	find "$dir" -name '*.trs' -delete 2>/dev/null
	( cd "$dir" && make -j"$jobs" "$target" ) >"$build_root/logs/$name.log" 2>&1
	rc=$?
	read -r pass fail skip < <(count_results "$dir")
	if [ $rc -ne 0 ] && [ "$fail" -eq 0 ]; then
		fail=1	# the suite broke before or outside its tests
	elif [ $rc -eq 0 ] && [ "$pass" -eq 0 ] && [ "$fail" -eq 0 ] && [ "$skip" -eq 0 ]; then
		pass=1	# a suite with no TAP of its own (distcheck) passed whole
	fi
	grep -E '^(PASS|FAIL|ERROR|XPASS|SKIP):' "$build_root/logs/$name.log" | grep -v '^PASS:' || true
	grep '^matrix: ' "$build_root/logs/$name.log" || true	# what of it ran
	if [ $rc -ne 0 ]; then
		echo "--- last lines of $build_root/logs/$name.log:"
		tail -n 40 "$build_root/logs/$name.log"
		find "$dir" -name 'test-suite.log' -newer "$build_root/logs/.start" \
			-exec tail -n 60 {} \;
	fi
	total_pass=$((total_pass + pass))
	total_fail=$((total_fail + fail))
	total_skip=$((total_skip + skip))
	summary="$summary$(printf '%-22s %-36s %5s min' "$name" \
		"$(printf '%4d passed, %d failed, %d skipped' "$pass" "$fail" "$skip")" \
		"$(minutes_since "$start")")\n"
}

# configure_build NAME [CONFIGURE-ARGS...]: a fresh out-of-tree build.
configure_build() {
	local name=$1 dir="$build_root/$1" start
	shift
	start=$(date +%s)
	rm -rf "$dir"
	mkdir -p "$dir"
	note "configure $name: $*"
	if ! ( cd "$dir" && "$top/configure" "$@" && make -j"$jobs" ) \
		>"$build_root/logs/build-$name.log" 2>&1; then
		echo "--- build $name failed; last lines of $build_root/logs/build-$name.log:"
		tail -n 60 "$build_root/logs/build-$name.log"
		total_fail=$((total_fail + 1))
		summary="$summary$(printf '%-22s build failed' "build-$name")\n"
		return 1
	fi
	summary="$summary$(printf '%-22s %-36s %5s min' "build-$name" "" "$(minutes_since "$start")")\n"
	return 0
}

if [ "$(id -u)" != 0 ]; then
	echo "run-all.sh: run as root (it installs packages and starts Slurm and PostgreSQL)" >&2
	exit 2
fi

run_start=$(date +%s)
note "installing dependencies"
"$top/tests/install-deps.sh" suite || { echo "0 passed, 1 failed"; exit 1; }

mkdir -p "$build_root/logs"
touch "$build_root/logs/.start"

# The kernel the eBPF tests boot in a virtual machine (tests/vm/README),
# fetched once from the Debian archive for the integration suites;
# stale package lists are refreshed once.
export CEEMS_VM_CACHE="$build_root/vm-cache"
note "fetching the virtual machine's kernel"
if ! "$top/tests/vm/run-vm.sh" -c "$CEEMS_VM_CACHE" -k; then
	apt-get update -qq
	"$top/tests/vm/run-vm.sh" -c "$CEEMS_VM_CACHE" -k ||
		echo "run-all.sh: no kernel for the virtual machine: tests/vm/bpf-vm.sh will skip"
fi
# The matrix's Debian roots (tests/matrix/run.sh), made once per run (or
# kept from an earlier one) beside the build trees.
export CEEMS_MATRIX_CACHE="$build_root/matrix-roots"
export CEEMS_MATRIX_BUDGET_MIN="${CEEMS_MATRIX_BUDGET_MIN:-16}"
note "autoreconf"
( cd "$top" && autoreconf -fi ) >"$build_root/logs/autoreconf.log" 2>&1 || {
	tail -n 30 "$build_root/logs/autoreconf.log"
	echo "0 passed, 1 failed"
	exit 1
}

if configure_build default --enable-werror; then
	run_suite unit default check
	run_suite integration default check-integration-plain
	run_suite distcheck default distcheck
	run_suite packages default check-packages
	run_suite demo default check-demo
	run_suite matrix default check-matrix
fi
if configure_build sanitizers --enable-werror --enable-sanitizers; then
	run_suite unit-sanitizers sanitizers check
	run_suite integration-sanitizers sanitizers check-integration-sanitizers
fi

printf '\n'
printf "%b" "$summary"
printf '%-22s %-36s %5s min\n' "all" "" "$(minutes_since "$run_start")"
if [ $total_skip -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ $total_fail -eq 0 ]
