#!/bin/sh
# run-vm.sh - run a command as root in a throw-away virtual machine that
# boots Debian 12's own kernel, so that the eBPF programs are loaded and
# attached by a distribution kernel rather than by whatever kernel the
# build machine runs.  Nothing of the host's kernel state is touched:
# the programs load in the guest only.
#
# The kernel comes from the Debian archive as a package (apt-get
# download, dpkg-deb -x), never installed, cached under CACHE.  The
# guest's root is an initramfs built here: busybox-static, the FILEs
# given (each into /ceems/bin) and the shared libraries they need (from
# ldd), with /proc, /sys, devtmpfs, tmpfs /tmp, bpffs, cgroup2, tracefs
# and debugfs mounted and loopback up.  The command's output comes back
# on the guest's second serial port, its exit status on the first (the
# console), and becomes this script's.
#
#   run-vm.sh [-c CACHE] [-f FILE]... [-i] [-m MIB] [-t SECONDS] -- COMMAND [ARG]...
#   run-vm.sh [-c CACHE] -k      fetch the kernel only, print its path
#
# -i: under TCG, the guest's clock counts instructions (qemu -icount
# shift=0: one nanosecond per instruction executed), so that timings
# compare code paths whatever the host's load; one CPU then.  No effect
# under KVM.
#
# Exit status: the command's; 77 when the machine cannot be made here
# (no qemu, no busybox-static, no kernel to fetch), with the reason on
# stderr; 99 when the guest did not run the command to its end (no
# boot, timeout, panic).  Environment: CEEMS_VM_KERNEL (a vmlinuz to
# boot instead of Debian's), CEEMS_VM_FLAVOUR (the kernel flavour,
# cloud-amd64 unless told), CEEMS_VM_ACCEL (kvm or tcg; kvm when
# /dev/kvm is usable).
set -u

cache=${CEEMS_VM_CACHE:-vm-cache}
flavour=${CEEMS_VM_FLAVOUR:-cloud-amd64}
mem=1024
limit=600
files=
fetch_only=no
icount=no

cannot() {
	echo "run-vm.sh: cannot run the virtual machine: $*" >&2
	exit 77
}

usage() {
	echo "usage: run-vm.sh [-c CACHE] [-f FILE]... [-i] [-m MIB] [-t SECONDS] -- COMMAND [ARG]..." >&2
	echo "       run-vm.sh [-c CACHE] -k" >&2
	exit 2
}

while getopts c:f:ikm:t: opt; do
	case $opt in
	c) cache=$OPTARG ;;
	f) files="$files
$OPTARG" ;;
	i) icount=yes ;;
	k) fetch_only=yes ;;
	m) mem=$OPTARG ;;
	t) limit=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "$fetch_only" = yes ] || [ $# -gt 0 ] || usage
case $mem$limit in *[!0-9]*) usage ;; esac

mkdir -p "$cache" || cannot "cannot create the cache $cache"
cache=$(cd "$cache" && pwd)

# The newest kernel package of FLAVOUR the archive offers: the package
# the meta-package linux-image-FLAVOUR depends on.  Downloaded once into
# the cache; offline, the newest already there serves.
fetch_kernel() {
	if [ -n "${CEEMS_VM_KERNEL:-}" ]; then
		[ -r "$CEEMS_VM_KERNEL" ] || cannot "CEEMS_VM_KERNEL=$CEEMS_VM_KERNEL is not readable"
		kernel=$CEEMS_VM_KERNEL
		return
	fi
	pkg=
	if command -v apt-cache >/dev/null 2>&1; then
		pkg=$(apt-cache depends "linux-image-$flavour" 2>/dev/null |
		      sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*\)$/\1/p' | head -n 1)
	fi
	if [ -n "$pkg" ] && [ ! -d "$cache/$pkg/boot" ]; then
		rm -rf "$cache/download" && mkdir -p "$cache/download" || cannot "cannot write $cache"
		if (cd "$cache/download" &&
		    apt-get -q -o APT::Sandbox::User=root download "$pkg" >&2 &&
		    dpkg-deb -x ./"$pkg"_*.deb "$cache/$pkg.tmp"); then
			mv "$cache/$pkg.tmp" "$cache/$pkg"
		else
			echo "run-vm.sh: could not fetch $pkg from the Debian archive" >&2
			rm -rf "$cache/$pkg.tmp"
		fi
		rm -rf "$cache/download"
	fi
	if [ -z "$pkg" ] || [ ! -d "$cache/$pkg/boot" ]; then
		pkg=$(cd "$cache" && ls -d linux-image-*-"$flavour" 2>/dev/null | sort -V | tail -n 1)
	fi
	[ -n "$pkg" ] || cannot "no linux-image-$flavour: apt knows none (is this Debian, has apt-get update run?) and none is cached in $cache"
	kernel=$(ls "$cache/$pkg"/boot/vmlinuz-* 2>/dev/null | head -n 1)
	[ -n "$kernel" ] || cannot "$cache/$pkg holds no boot/vmlinuz"
}

fetch_kernel
if [ "$fetch_only" = yes ]; then
	echo "$kernel"
	exit 0
fi

command -v qemu-system-x86_64 >/dev/null 2>&1 ||
	cannot "no qemu-system-x86_64 (Debian package qemu-system-x86)"
busybox=
for b in /bin/busybox /usr/bin/busybox; do
	if [ -x "$b" ] && ! ldd "$b" >/dev/null 2>&1; then
		busybox=$b
		break
	fi
done
[ -n "$busybox" ] || cannot "no static busybox (Debian package busybox-static)"

work=$(mktemp -d "${TMPDIR:-/tmp}/ceems-vm.XXXXXX") || cannot "no temporary directory"
trap 'rm -rf "$work"' EXIT
trap 'exit 99' HUP INT TERM
root=$work/root
mkdir -p "$root/bin" "$root/ceems/bin" "$root/proc" "$root/sys" "$root/dev" "$root/tmp" \
	"$root/etc" "$root/root"
cp "$busybox" "$root/bin/busybox"

# A file and the libraries its loader needs, at the paths ldd names.
add_libs() {
	ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) .*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
	while read -r lib; do
		[ -e "$root$lib" ] && continue
		mkdir -p "$root$(dirname "$lib")" && cp -L "$lib" "$root$lib" || exit 1
	done
}
old_ifs=$IFS
IFS='
'
for f in $files; do
	[ -r "$f" ] || { echo "run-vm.sh: $f: not readable" >&2; exit 2; }
	cp -L "$f" "$root/ceems/bin/" || exit 99
	add_libs "$f" || exit 99
done
IFS=$old_ifs

# The command, quoted for the guest's shell.
quote() {
	printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"
}
{
	printf 'exec'
	for a in "$@"; do
		printf ' %s' "$(quote "$a")"
	done
	printf '\n'
} > "$root/ceems/command"

cat > "$root/init" <<'INIT'
#!/bin/busybox sh
/bin/busybox --install -s /bin
echo "ceems-vm: init" > /dev/console
export PATH=/ceems/bin:/bin HOME=/root
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
mount -t tmpfs tmpfs /tmp
mount -t bpf bpf /sys/fs/bpf
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tracefs tracefs /sys/kernel/tracing
mount -t debugfs debugfs /sys/kernel/debug
ip link set lo up
stty -F /dev/ttyS1 raw -echo 2>/dev/null
cd /tmp
sh /ceems/command </dev/null >/dev/ttyS1 2>&1
echo "ceems-vm: exit $?" > /dev/console
sync
poweroff -f
INIT
chmod 755 "$root/init"
(cd "$root" && find . | "$root/bin/busybox" cpio -o -H newc -R 0:0 2>/dev/null) |
	gzip -1 > "$work/initrd" || exit 99

accel=${CEEMS_VM_ACCEL:-}
if [ -z "$accel" ]; then
	if [ -r /dev/kvm ] && [ -w /dev/kvm ]; then accel=kvm; else accel=tcg; fi
fi
case $accel in
kvm) cpu=${CEEMS_VM_CPU:-host} ;;
tcg) cpu=${CEEMS_VM_CPU:-max} ;;
*) echo "run-vm.sh: CEEMS_VM_ACCEL must be kvm or tcg" >&2; exit 2 ;;
esac

# Boot and wait for the guest to power off, LIMIT seconds at most.  A
# KVM that cannot run the guest (nested virtualization failing to
# emulate an instruction: "KVM internal error", after which qemu pauses,
# not exits; a qemu that aborts before the guest's init; or a guest that
# never reaches its init) is given up, for TCG, at once or after
# KVM_BOOT_LIMIT seconds.
kvm_boot_limit=30
qemu_pid=
trap 'rm -rf "$work"' EXIT
trap '[ -n "$qemu_pid" ] && kill "$qemu_pid" 2>/dev/null; exit 99' HUP INT TERM
boot() {
	clock=
	cpus=2
	if [ "$icount" = yes ] && [ "$accel" = tcg ]; then
		# One CPU: with two, the guest hangs under -icount.
		clock="-icount shift=0,sleep=off"
		cpus=1
		echo "run-vm.sh: booting $(basename "$kernel") under tcg, time counting instructions" >&2
	else
		echo "run-vm.sh: booting $(basename "$kernel") under $accel" >&2
	fi
	: > "$work/console"
	: > "$work/output"
	: > "$work/qemu.err"
	# shellcheck disable=SC2086 # CLOCK is two words or none
	qemu-system-x86_64 -accel "$accel" -cpu "$cpu" $clock \
		-m "$mem" -smp "$cpus" -nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$work/initrd" \
		-append "console=ttyS0 panic=-1 loglevel=4 rdinit=/init" \
		-serial "file:$work/console" -serial "file:$work/output" \
		</dev/null >/dev/null 2>"$work/qemu.err" &
	qemu_pid=$!
	waited=0
	kvm_failed=no
	while kill -0 "$qemu_pid" 2>/dev/null; do
		if grep -q 'KVM internal error' "$work/qemu.err" ||
		   { [ "$accel" = kvm ] && [ "$waited" -ge "$kvm_boot_limit" ] &&
		     ! grep -q 'ceems-vm: init' "$work/console"; }; then
			kvm_failed=yes
			break
		fi
		if [ "$waited" -ge "$limit" ]; then
			echo "run-vm.sh: the guest ran past $limit seconds" >&2
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	kill "$qemu_pid" 2>/dev/null
	wait "$qemu_pid"
	qemu_rc=$?
	qemu_pid=
	# A qemu that died under KVM before the guest's init ran (an
	# assertion on a model-specific register the host refuses, exit
	# 134) is KVM that cannot run the guest here, as above.
	if [ "$accel" = kvm ] && ! grep -q 'ceems-vm: init' "$work/console"; then
		kvm_failed=yes
	fi
	head -n 5 "$work/qemu.err" >&2
}
boot
if [ "$kvm_failed" = yes ] && [ -z "${CEEMS_VM_ACCEL:-}" ]; then
	echo "run-vm.sh: KVM cannot run this guest here, TCG instead" >&2
	accel=tcg cpu=${CEEMS_VM_CPU:-max}
	boot
fi
tr -d '\r' < "$work/output"
rc=$(tr -d '\r' < "$work/console" | sed -n 's/^ceems-vm: exit \([0-9][0-9]*\)$/\1/p' | tail -n 1)
if [ -z "$rc" ]; then
	echo "run-vm.sh: the guest did not finish the command (qemu status $qemu_rc); its console:" >&2
	tr -d '\r' < "$work/console" | tail -n 40 >&2
	exit 99
fi
exit "$rc"
