#!/bin/bash
# tests/vm/cgroup2-guest.sh -- runs inside the cgroup v2 virtual machine
# (tests/vm/cgroup2-vm.sh) as the systemd service ceems-cgroup2-test,
# once the guest has booted: says what the guest is (init, cgroup
# filesystem, kernel, Slurm), refuses to go on unless it is systemd on
# the unified hierarchy (the point of the machine), then runs the
# integration tests named in /ceems/vm-tests through tests/matrix/inside.sh
# (ceems was built in this root before the image was made).  Its output
# goes to the guest's second serial port; the tests' results, as a tar
# of /ceems/results, to the second disk; then the guest powers off.
set -u

results=/ceems/results
rm -rf "$results"
mkdir -p "$results"

say() { printf 'guest: %s\n' "$*"; }

run() {
	local fs init tests rc
	init=$(cat /proc/1/comm)
	fs=$(stat -f -c %T /sys/fs/cgroup)
	say "init $init, /sys/fs/cgroup $fs, kernel $(uname -r), $(nproc) CPUs, $(awk '/MemTotal/ { printf "%d MiB", $2 / 1024 }' /proc/meminfo)"
	say "controllers: $(cat /sys/fs/cgroup/cgroup.controllers 2>/dev/null)"
	say "$(/ceems/src/tests/matrix/inside.sh versions 2>&1)"
	if [ "$init" != systemd ] || [ "$fs" != cgroup2fs ]; then
		say "not systemd on the unified cgroup hierarchy: nothing to test"
		return 1
	fi
	# An address besides loopback: Slurm resolves its listening
	# addresses with AI_ADDRCONFIG, which finds none on loopback alone.
	# (The interface reaches nothing outside: qemu's restrict=on.)
	ip addr add 10.0.2.15/24 dev eth0 && ip link set eth0 up || return 1
	# The tests start their daemons by hand, as from an admin's shell:
	# a slurmd seeing this service's INVOCATION_ID would take itself for
	# slurmd.service and want this cgroup delegated to it.
	unset INVOCATION_ID JOURNAL_STREAM
	read -r tests </ceems/vm-tests
	# Which of their tests (bats -f PATTERN...), as make check takes it.
	BATS_LOG_FLAGS=$(cat /ceems/vm-bats-flags)
	export BATS_LOG_FLAGS
	say "tests: $tests${BATS_LOG_FLAGS:+ ($BATS_LOG_FLAGS)}"
	# Stopped before the host's limit, so that the results still come
	# back (a test that hangs is then one that did not end).
	read -r limit </ceems/vm-test-limit
	# shellcheck disable=SC2086 # one word a test
	timeout -k 30 "$limit" /ceems/src/tests/matrix/inside.sh test $tests
	rc=$?
	case $rc in 124|137) say "the tests ran past $limit s and were stopped" ;; esac
	cp /ceems/build/tests/integration/*.trs /ceems/build/tests/integration/*.log \
		"$results/" 2>/dev/null
	/ceems/src/tests/matrix/inside.sh cleanup || rc=1
	return $rc
}

t0=$(date +%s)
run 2>&1 | tee "$results/guest.log"
rc=${PIPESTATUS[0]}
say "done in $(( $(date +%s) - t0 )) s, exit $rc" | tee -a "$results/guest.log"
echo "$rc" >"$results/exit"
journalctl -b --no-pager >"$results/journal.log" 2>&1
tar -C /ceems -cf /dev/vdb results
sync
systemctl poweroff --no-block
