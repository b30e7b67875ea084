#!/usr/bin/env bats
# io-pertick.bats - per-job IO counted once per tick from the kernel's
# per-process counters (ebpf = per-tick), end to end: no program on any
# call, the jobs' processes read by a BPF task iterator once per tick; dd
# writing and reading back, then fifty short-lived dd children; a TCP
# stream between two jobs.  Per tick counts every descriptor: dd's writes
# to /dev/null and the stream's socket are IO here (io-net.bats holds
# the per-call figures of the same workloads: files only).

load lib/io-net

setup_file() {
	export CEEMS_EBPF_ATTACH=per-tick
	io_net_setup_file
}

teardown_file() {
	ceems_cluster_teardown
}

setup() {
	ceems_cluster_skip_unless_set
}

@test "per tick: no program on any call; the task iterator loaded, no capability added" {
	! grep -q 'eBPF loaded' "$CEEMS_DIR/agent.log"
	grep -q 'per-tick IO: the jobs.* processes read by a BPF task iterator' "$CEEMS_DIR/agent.log"
	! grep 'capabilities kept:' "$CEEMS_DIR/agent.log" | grep -q 'cap_sys_ptrace\|cap_dac'
}

@test "per tick: dd's 64 MiB out and back, then fifty short-lived children's 64 KiB each" {
	ID=$(submit nobody -J pertick -c1 --wrap \
		'dd if=/dev/zero of=big.$SLURM_JOB_ID bs=1M count=64 conv=fsync status=none &&
		 dd if=big.$SLURM_JOB_ID of=/dev/null bs=1M status=none
		 for i in $(seq 50); do
			dd if=/dev/zero of=small.$SLURM_JOB_ID bs=64k count=1 status=none
		 done
		 rm -f big.$SLURM_JOB_ID small.$SLURM_JOB_ID')
	[ "$(finish "$ID")" = COMPLETED ]
	r=$(record_of "$ID")
	echo "io: $(jq -c .measurements.io "$r")"
	echo "# per tick: read $(io read_bytes "$r") written $(io write_bytes "$r") bytes" >&3
	[ "$(io counting "$r")" = per-tick ]
	# 64 MiB to the file, 64 MiB to /dev/null, 50 x 64 KiB: all writes.
	near "$(io write_bytes "$r")" $((128 * MIB + 50 * 65536)) 2
	# As many read from /dev/zero and the file, and the shell's script.
	check "$(io read_bytes "$r") >= 128 * $MIB + 50 * 65536"
	check "$(io read_bytes "$r") <= (128 * $MIB + 50 * 65536) * 1.02"
	check "$(io write_ops "$r") >= 128 + 50"
	# No errors and no network counted per tick: absent, not 0.
	[ "$(jq -r '.measurements.io | has("read_errors") or has("write_errors")' "$r")" = false ]
	[ "$(jq -r '.measurements | has("net") or has("ebpf_absent")' "$r")" = false ]
}

@test "per tick: a TCP stream of 100 MiB written is IO; received by recv, it is not" {
	L_ID=$(submit nobody -J listen-pt -c1 --wrap \
		"/usr/bin/python3 netpair.py listen tcp 4 port.pt count.pt")
	# The sender's write(2) on its socket counts.
	S_ID=$(submit nobody -J send-pt -c1 --wrap \
		"/usr/bin/python3 netpair.py write tcp 4 port.pt $((100 * MIB))")
	[ "$(finish "$S_ID")" = COMPLETED ]
	[ "$(finish "$L_ID")" = COMPLETED ]
	rl=$(record_of "$L_ID")
	rs=$(record_of "$S_ID")
	echo "# per tick: sender wrote $(io write_bytes "$rs"), listener read $(io read_bytes "$rl") bytes" >&3
	[ "$(cat "$SLURM_DIR/out/count.pt")" = $((100 * MIB)) ]
	# The stream written (and a line of its port file read).
	near "$(io write_bytes "$rs")" $((100 * MIB)) 2
	# The listener's recv(2) calls are not the kernel's read counts:
	# what it read is Python's modules (the documented limit).
	check "$(io read_bytes "$rl") < 16 * $MIB"
	rm -f "$SLURM_DIR/out/port.pt" "$SLURM_DIR/out/count.pt"
}
