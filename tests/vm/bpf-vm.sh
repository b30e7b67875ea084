#!/bin/sh
# bpf-vm.sh - the eBPF programs loaded and attached for real by Debian
# 12's own kernel, in a virtual machine (tests/vm/run-vm.sh): the loader's
# unit test (test_bpf_io) and the IO acceptance in miniature (vm_io) for
# every attach type the guest kernel should offer, each forced.  TAP.
#
# A type the guest kernel refuses is a failure, not a skip.  The test
# skips only when the machine cannot be made here (no qemu, no static
# busybox, no kernel package to fetch and none cached), or when the
# build has no eBPF, and says why.  The kernel package is cached in
# CEEMS_VM_CACHE (the build directory's vm-cache unless told).  Under TCG
# the guest's clock counts instructions (run-vm.sh -i), so that the
# timings test_bpf_io checks do not depend on the host's load.
set -u

src=${CEEMS_TOP_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${CEEMS_TOP_BUILDDIR:-.}
cache=${CEEMS_VM_CACHE:-$build/vm-cache}
vm=$src/tests/vm/run-vm.sh

# The attach types to force in the guest (words of the ebpf key), each
# with whether Debian 12's kernel (6.1) offers its network hook: TYPE:net
# or TYPE:nonet.  The sock_send_length tracepoints came with Linux 6.3;
# fentry and kprobes hook inet_sendmsg and its kin on any kernel.
CASES="auto:net fentry:net kprobe:net btf:nonet tracepoint:nonet"

skip_all() {
	echo "1..0 # SKIP $*"
	exit 0
}

grep -q '^#define HAVE_BPF 1' "$build/config.h" 2>/dev/null ||
	skip_all "built without eBPF (configure found no libbpf, clang or bpftool)"
for p in tests/unit/test_bpf_io tests/vm/vm_io; do
	[ -x "$build/$p" ] || skip_all "$build/$p is not built"
done

why=$(sh "$vm" -c "$cache" -k 2>&1 >/dev/null)
case $? in
0) ;;
77) skip_all "$(printf '%s' "$why" | tail -n 1)" ;;
*) echo "Bail out! fetching the kernel failed: $why"; exit 1 ;;
esac

guest_cmd='echo "=== test_bpf_io"; test_bpf_io; echo "=== status $?"'
for c in $CASES; do
	guest_cmd="$guest_cmd; echo \"=== vm_io ${c%%:*}\"; vm_io ${c%%:*} ${c#*:}; echo \"=== status \$?\""
done

out=$(mktemp "${TMPDIR:-/tmp}/bpf-vm.XXXXXX") || exit 99
trap 'rm -f "$out"' EXIT
sh "$vm" -c "$cache" -i -t 480 -f "$build/tests/unit/test_bpf_io" -f "$build/tests/vm/vm_io" \
	-- sh -c "$guest_cmd" > "$out" 2> "$out.err"
rc=$?
sed 's/^/# /' "$out.err"
rm -f "$out.err"
if [ $rc -eq 77 ]; then
	skip_all "the virtual machine cannot run here (see above)"
fi

# The guest programs' TAP, numbered as one, each line named after its
# program; a program whose plan is not met or that ended badly fails.
awk -v vm_rc="$rc" '
function close_program() {
	if (prog == "")
		return
	if (status != 0 && failed == 0)
		result(0, prog ": ended with status " status)
	else if (plan != count)
		result(0, prog ": " count " results, its plan said " plan)
	prog = ""
}
function result(pass, text) {
	n++
	printf "%s %d - %s\n", pass ? "ok" : "not ok", n, text
}
/^=== status / { status = $3; close_program(); next }
/^=== / { prog = substr($0, 5); count = 0; failed = 0; plan = -1; status = -1; next }
prog != "" && /^ok / { count++; sub(/^ok [0-9]+ - /, ""); result(1, prog ": " $0); next }
prog != "" && /^not ok / { count++; failed++; sub(/^not ok [0-9]+ - /, ""); result(0, prog ": " $0); next }
prog != "" && /^1\.\.[0-9]+$/ { plan = substr($0, 4) + 0; next }
{ print "# " $0 }
END {
	if (prog != "")
		result(0, prog ": cut short")
	if (vm_rc != 0 && vm_rc != 1)
		result(0, "the virtual machine ran the tests to their end (status " vm_rc ")")
	printf "1..%d\n", n
}' "$out"
