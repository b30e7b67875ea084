#!/bin/sh
# run-vm.sh - what the eBPF programs cost on Debian 12's own kernel:
# tests/bench/bench_syscall run inside the virtual machine of
# tests/vm/run-vm.sh, once per attach type, figures in doc/performance.md.
# The host's kernel is not touched.  Under TCG (no usable KVM) the guest's
# clock counts instructions (run-vm.sh -i): the ratios compare instruction
# paths, not hardware costs, and do not depend on the host's load.
#
# Usage (from the build directory): run-vm.sh [OPS] [ROUNDS]
# Environment: BENCH_VM_TYPES (the attach types, "auto fentry kprobe btf tracepoint"
# unless told), CEEMS_VM_CACHE, CEEMS_VM_ACCEL (tests/vm/run-vm.sh).
set -u

ops=${1:-5000}
rounds=${2:-5}
types=${BENCH_VM_TYPES:-auto fentry kprobe btf tracepoint}
top_srcdir=$(cd "$(dirname "$0")/../.." && pwd)
bench=tests/bench/bench_syscall

[ -x "$bench" ] || { echo "run-vm.sh: build $bench first (make $bench)" >&2; exit 2; }
cmd='uname -r; grep -m1 "model name" /proc/cpuinfo'
for t in $types; do
	cmd="$cmd; bench_syscall $t $ops $rounds"
done
exec sh "$top_srcdir/tests/vm/run-vm.sh" -c "${CEEMS_VM_CACHE:-vm-cache}" -i -t 590 \
	-f "$bench" -- sh -c "$cmd"
