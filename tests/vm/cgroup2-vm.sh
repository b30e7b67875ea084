#!/bin/bash
# tests/vm/cgroup2-vm.sh -- the end-to-end core on cgroup v2 for real:
# a virtual machine booting Debian 13's own kernel with systemd as init
# on the unified cgroup hierarchy (as RHEL 9 and Debian 13 nodes run),
# Slurm 24.11 with its cgroup/v2 plugin, PostgreSQL, and ceems built
# against that Slurm (--enable-werror), running the integration tests of
# the core there (CEEMS_CGROUP2_TESTS).  The build machine's own cgroups
# may be v1: nothing here depends on them.
#
#   cgroup2-vm.sh               (as root, from the build directory)
#
# The guest's root is a matrix root, trixie's unless CEEMS_CGROUP2_SUITE
# names another (sid: Slurm 26.05, whose v2 job directories are named by
# SLUID) (tests/matrix/root.sh,
# cached in CEEMS_MATRIX_CACHE; made there when absent), copied, with
# Debian's cloud kernel, systemd-sysv and udev added (cached in DIR/root
# while the package lists are the same); the source is copied in and
# built by chroot on this machine (the guest would compile ten times
# slower without KVM), then the root becomes an ext4 image and boots.
# The tests' results come back on a second disk and go to DIR/results.
#
# Environment:
#   CEEMS_CGROUP2_VM_DIR   where the root, image and results live
#                          (default ./cgroup2-vm)
#   CEEMS_CGROUP2_TESTS    tests/integration/NAME.bats to run in the guest
#   CEEMS_CGROUP2_BATS_FLAGS  BATS_LOG_FLAGS for them (--tap -f PATTERN...)
#   CEEMS_CGROUP2_LIMIT    seconds the guest may run (default 3000)
#   CEEMS_CGROUP2_SUITE    the matrix root the guest is made of: trixie
#                          (default) or sid
#   CEEMS_MATRIX_CACHE     the matrix's roots (default ./matrix-roots)
#   CEEMS_VM_ACCEL, CEEMS_VM_CPU   as tests/vm/run-vm.sh: kvm or tcg (kvm
#                          when /dev/kvm is usable, TCG when KVM cannot
#                          boot the guest), qemu's -cpu
# Exit status: 0 when every test passed, 77 when the machine cannot be
# made here (why is printed), 99 when the guest did not run the tests to
# their end, 1 when a test failed.
set -u

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
# shellcheck source=tests/matrix/root.sh
. "$top/tests/matrix/root.sh"

dir=${CEEMS_CGROUP2_VM_DIR:-$PWD/cgroup2-vm}
cache=${CEEMS_MATRIX_CACHE:-$PWD/matrix-roots}
tests=${CEEMS_CGROUP2_TESTS:-smoke jobs ends io-net thin}
limit=${CEEMS_CGROUP2_LIMIT:-3000}
suite=${CEEMS_CGROUP2_SUITE:-trixie}
case $suite in trixie | sid) ;; *) echo "cgroup2-vm: no matrix root $suite" >&2; exit 77 ;; esac
# What the guest needs besides the matrix's root: a kernel and its
# initramfs, systemd as /sbin/init, udev for /dev.
vm_packages="linux-image-cloud-amd64 initramfs-tools systemd-sysv dbus udev kmod"
start=$(date +%s)

say() { printf 'cgroup2-vm: %s\n' "$*"; }
cannot() { say "cannot run: $*"; exit 77; }
since() { echo $(( $(date +%s) - $1 )); }

[ "$(id -u)" = 0 ] || cannot "run as root (debootstrap, chroot, mkfs)"
for c in qemu-system-x86_64 mkfs.ext4 debootstrap; do
	command -v "$c" >/dev/null || cannot "no $c"
done
mkdir -p "$dir" || cannot "cannot create $dir"
dir=$(cd "$dir" && pwd)
root=$dir/root

mirror() {
	local m
	m=$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
		/etc/apt/sources.list.d/*.sources 2>/dev/null |
		grep -v '^[[:space:]]*#' | grep -o 'https\?://[^ ]*/debian/\?' |
		grep -v security | head -n 1)
	echo "${CEEMS_MATRIX_MIRROR:-${m:-http://deb.debian.org/debian}}"
}

# The guest's root: the matrix's root copied (never changed in place:
# the matrix runs in it) and the VM's packages added.  Kept while both
# package lists stay the same.
make_root() {
	local stamp
	stamp="$(_matrix_root_stamp "$suite") $vm_packages"
	if [ -f "$root/.ceems-vm-stamp" ] && [ "$(cat "$root/.ceems-vm-stamp")" = "$stamp" ]; then
		say "guest root in $root is ready (cached)"
		return 0
	fi
	matrix_root_make "$cache/$suite" "$suite" "$(mirror)" "$dir/root.log" || return 1
	[ -z "$(matrix_root_mounted "$root")" ] || { say "$root has mounts"; return 1; }
	rm -rf --one-file-system "$root" "$root.tmp"
	cp -a "$cache/$suite" "$root.tmp" || return 1
	matrix_root_mount "$root.tmp" || { matrix_root_umount "$root.tmp"; return 1; }
	# shellcheck disable=SC2086 # one word a package
	if ! matrix_root_run "$root.tmp" sh -c 'apt-get update &&
		apt-get install -y --no-install-recommends -o Dpkg::Use-Pty=0 "$@" &&
		apt-get clean' sh $vm_packages >>"$dir/root.log" 2>&1; then
		matrix_root_umount "$root.tmp"
		say "installing $vm_packages failed (see $dir/root.log)"
		return 1
	fi
	matrix_root_umount "$root.tmp" || return 1
	echo "$stamp" >"$root.tmp/.ceems-vm-stamp"
	mv "$root.tmp" "$root"
	say "guest root made in $root"
}

# What the guest boots into: the daemons the packages enabled stay off
# (the tests' harness starts its own munged, PostgreSQL and Slurm), the
# test service runs once the system is up.
configure_guest() {
	local u
	for u in munge.service postgresql.service postgresql@.service \
		slurmctld.service slurmd.service slurmdbd.service \
		apt-daily.timer apt-daily-upgrade.timer dpkg-db-backup.timer \
		e2scrub_all.timer fstrim.timer; do
		ln -sf /dev/null "$root/etc/systemd/system/$u"
	done
	echo ceems-vm >"$root/etc/hostname"
	printf '127.0.0.1\tlocalhost ceems-vm\n::1\tlocalhost ip6-localhost\n' >"$root/etc/hosts"
	printf '/dev/vda / ext4 rw,noatime 0 1\n' >"$root/etc/fstab"
	cat >"$root/etc/systemd/system/ceems-cgroup2-test.service" <<-'UNIT'
	[Unit]
	Description=ceems integration tests on cgroup v2
	After=basic.target systemd-user-sessions.service

	[Service]
	Type=oneshot
	ExecStart=/ceems/src/tests/vm/cgroup2-guest.sh
	StandardOutput=file:/dev/ttyS1
	StandardError=inherit
	TimeoutStartSec=infinity

	[Install]
	WantedBy=multi-user.target
	UNIT
	mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
	ln -sf ../ceems-cgroup2-test.service \
		"$root/etc/systemd/system/multi-user.target.wants/ceems-cgroup2-test.service"
	echo "$tests" >"$root/ceems/vm-tests"
	# The tests' share of LIMIT: booting, the cleanup and sending the
	# results back take the rest.
	echo $(( limit > 300 ? limit - 150 : limit / 2 )) >"$root/ceems/vm-test-limit"
	printf '%s\n' "${CEEMS_CGROUP2_BATS_FLAGS:-}" >"$root/ceems/vm-bats-flags"
}

build() {
	rm -rf "${root:?}/ceems"
	mkdir -p "$root/ceems/src"
	tar -C "$top" --exclude=./_build --exclude=./.git -cf - . | tar -C "$root/ceems/src" -xf - || return 1
	matrix_root_mount "$root" || { matrix_root_umount "$root"; return 1; }
	matrix_root_run "$root" /ceems/src/tests/matrix/inside.sh build >"$dir/build.log" 2>&1
	local rc=$?
	matrix_root_umount "$root" || rc=1
	[ $rc = 0 ] || tail -n 40 "$dir/build.log"
	return $rc
}

make_image() {
	local mib
	mib=$(du -sm "$root" | awk '{ print $1 + 1024 }')
	rm -f "$dir/disk.img" "$dir/results.img"
	mkfs.ext4 -q -F -L ceems-root -d "$root" "$dir/disk.img" "${mib}M" || return 1
	truncate -s 256M "$dir/results.img"
}

# boot ACCEL CPU: run the guest until it powers off or runs past LIMIT.
# Sets kvm_failed=yes when KVM could not start the kernel (nested
# virtualization refusing a register, or no console line in 30 s).
boot() {
	local accel=$1 cpu=$2 pid waited=0
	local kernel initrd
	kernel=$(ls "$root"/boot/vmlinuz-* | sort -V | tail -n 1)
	initrd=$(ls "$root"/boot/initrd.img-* | sort -V | tail -n 1)
	say "booting $(basename "$kernel") under $accel"
	: >"$dir/console"
	: >"$dir/output"
	kvm_failed=no
	qemu-system-x86_64 -accel "$accel" -cpu "$cpu" -m 3072 -smp 2 \
		-nodefaults -no-user-config -display none -no-reboot \
		-kernel "$kernel" -initrd "$initrd" \
		-append "root=/dev/vda rw console=ttyS0 panic=-1 net.ifnames=0" \
		-nic user,model=virtio-net-pci,restrict=on \
		-drive "file=$dir/disk.img,format=raw,if=virtio" \
		-drive "file=$dir/results.img,format=raw,if=virtio" \
		-serial "file:$dir/console" -serial "file:$dir/output" \
		</dev/null >/dev/null 2>"$dir/qemu.err" &
	pid=$!
	trap 'kill $pid 2>/dev/null; exit 99' INT TERM
	while kill -0 $pid 2>/dev/null; do
		if [ "$accel" = kvm ] && [ $waited -ge 30 ] && ! grep -q 'Linux version' "$dir/console"; then
			kvm_failed=yes
			break
		fi
		if [ $waited -ge "$limit" ]; then
			say "the guest ran past $limit seconds"
			break
		fi
		sleep 1
		waited=$((waited + 1))
	done
	kill $pid 2>/dev/null
	wait $pid
	trap - INT TERM
	[ "$accel" = kvm ] && ! grep -q 'Linux version' "$dir/console" && kvm_failed=yes
	head -n 5 "$dir/qemu.err"
}

t=$(date +%s)
make_root || exit 99
t_root=$(since "$t")
t=$(date +%s)
build || { say "ceems does not build against this Slurm (see $dir/build.log)"; exit 1; }
configure_guest
t_build=$(since "$t")
t=$(date +%s)
make_image || exit 99
t_image=$(since "$t")

t=$(date +%s)
accel=${CEEMS_VM_ACCEL:-}
[ -n "$accel" ] || { [ -w /dev/kvm ] && accel=kvm || accel=tcg; }
cpu=${CEEMS_VM_CPU:-$([ "$accel" = kvm ] && echo host || echo max)}
boot "$accel" "$cpu"
if [ "$kvm_failed" = yes ] && [ -z "${CEEMS_VM_ACCEL:-}" ]; then
	say "KVM cannot run this guest here, TCG instead"
	accel=tcg
	cpu=${CEEMS_VM_CPU:-max}
	boot tcg "$cpu"
fi
t_vm=$(since "$t")

rm -rf "$dir/results"
tar -C "$dir" -xf "$dir/results.img" 2>/dev/null
tr -d '\r' <"$dir/output"
if [ ! -f "$dir/results/exit" ]; then
	say "the guest did not run the tests to their end; its console:"
	tr -d '\r' <"$dir/console" | tail -n 40
	exit 99
fi
rc=$(cat "$dir/results/exit")
say "times: guest root $t_root s, build $t_build s, image $t_image s, guest ($accel) $t_vm s; all $(since "$start") s"
[ "$rc" = 0 ] && exit 0
exit 1
