# io-net.bash - the checks of io-net.bats, io-net-tracepoint.bats,
# io-net-forced.bats and io-pertick.bats:
# per-job IO and network from the node agent's eBPF programs, end to end
# on the real local Slurm cluster (cgroup v1 here: the job's processes
# are tagged and their forks followed in BPF).  Every figure checked is
# read from the job's record (measurements.io, measurements.net).
#
# CEEMS_EBPF_ATTACH: the ebpf = key the agent gets (auto, fentry, kprobe,
# btf, tracepoint; per-tick for io-pertick.bats).

load lib/ceems-cluster

MIB=1048576

io_net_setup_file() {
	CEEMS_CLUSTER_CONF="ebpf = ${CEEMS_EBPF_ATTACH:-auto}" ceems_cluster_setup io-net summary=full
	[ -n "${SLURM_DIR:-}" ] || return 0
	cp "$CEEMS_TOP_SRCDIR/tests/integration/lib/netpair.py" "$SLURM_DIR/out/"
}

# A build without eBPF (--disable-bpf, no clang or bpftool) skips; any
# other agent that does not measure fails.
io_net_setup() {
	ceems_cluster_skip_unless_set
	if grep -q 'built without eBPF' "$CEEMS_DIR/agent.log"; then
		skip "ceems was built without eBPF"
	fi
}

# near GOT WANT PCT: GOT within PCT per cent of WANT.
near() {
	check "$1 >= $2 * (1 - $3 / 100) && $1 <= $2 * (1 + $3 / 100)" || {
		echo "$1 is not within $3% of $2" >&2
		return 1
	}
}

# io FIELD RECORD: a figure of measurements.io.
io() { jq -r ".measurements.io.$1" "$2"; }
# net KEY PART RECORD: a figure of measurements.net.KEY ("tcp4"...).
net() { jq -r ".measurements.net.$1.$2" "$3"; }

# The agent loaded the programs once, with the attach types asked for.
io_net_loaded() {
	local want=${CEEMS_EBPF_ATTACH:-auto} line by proc
	[ "$(grep -c 'eBPF loaded' "$CEEMS_DIR/agent.log")" -eq 1 ]
	line=$(grep 'eBPF loaded' "$CEEMS_DIR/agent.log")
	echo "# $line" >&3
	# On cgroup v2 the programs find a job by its cgroup id and need
	# no hook on processes; on v1, by the processes they follow.
	if [ "$(stat -f -c %T /sys/fs/cgroup)" = cgroup2fs ]; then
		by="cgroup v2 id" proc=none
	else
		by=process proc=
	fi
	case $want in
	tracepoint|btf)
		[ "$want" = btf ] && want=tp_btf
		[[ $line == *"(jobs by $by): io $want, net $want, tcp_retrans $want, proc ${proc:-$want}"* ]] ;;
	fentry|kprobe)
		# Retransmissions and processes keep their tracepoints.
		[[ $line == *"(jobs by $by): io $want, net $want, tcp_retrans tp_btf, proc ${proc:-tp_btf}"* ]] ;;
	*)
		# The best the kernel accepts; short of fentry, the line
		# says why fentry was refused.
		[[ $line == *"(jobs by $by): io fentry, net fentry"* ]] ||
			[[ $line == *"better types refused: io: fentry "* ]] ;;
	esac
}

# dd writes 256 MiB and reads it back; a job next to it doing no IO.
io_net_dd() {
	IDLE_ID=$(submit nobody -J idle -c1 --wrap 'sleep 6')
	DD_ID=$(submit nobody -J dd -c1 --wrap \
		'dd if=/dev/zero of=big.$SLURM_JOB_ID bs=1M count=256 conv=fsync status=none &&
		 dd if=big.$SLURM_JOB_ID of=/dev/null bs=1M status=none; rm -f big.$SLURM_JOB_ID')
	[ "$(finish "$DD_ID")" = COMPLETED ]
	[ "$(finish "$IDLE_ID")" = COMPLETED ]
	d=$(record_of "$DD_ID")
	i=$(record_of "$IDLE_ID")
	echo "dd: $(jq -c .measurements.io "$d")  idle: $(jq -c .measurements.io "$i")"
	# The figures measured, in the TAP log.
	echo "# dd: read $(io read_bytes "$d") written $(io write_bytes "$d") bytes; idle job: read $(io read_bytes "$i") written $(io write_bytes "$i")" >&3
	near "$(io write_bytes "$d")" $((256 * MIB)) 2
	check "$(io read_bytes "$d") >= 256 * $MIB"
	check "$(io read_bytes "$d") <= 256 * $MIB * 1.02"
	check "$(io write_ops "$d") >= 256"
	[ "$(io write_errors "$d")" = 0 ]
	# The idle job: the shell reading its script, no more.
	check "$(io read_bytes "$i") + $(io write_bytes "$i") < 1024 * 1024"
	[ "$(jq -r '.measurements | has("ebpf_absent")' "$d")" = false ]
	# ceems-sacct shows them, sacct's way.
	run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" -a -X -n -P \
		-j "$DD_ID" --format=JobID,ReadBytes,WriteBytes
	[ "$status" -eq 0 ]
	[[ "$output" == "$DD_ID|256."??"M|256."??"M" ]] || {
		echo "ceems-sacct: $output" >&2
		return 1
	}
}

# pair PROTO FAMILY KEY: a listener job and a sender job of 100 MiB; the
# sender's bytes out and the listener's bytes in within 5% of 100 MiB.
pair() {
	local proto=$1 fam=$2 key=$3 tag=$1$2 l s rl rs
	L_ID=$(submit nobody -J "listen-$tag" -c1 --wrap \
		"/usr/bin/python3 netpair.py listen $proto $fam port.$tag count.$tag")
	S_ID=$(submit nobody -J "send-$tag" -c1 --wrap \
		"/usr/bin/python3 netpair.py send $proto $fam port.$tag $((100 * MIB))")
	[ "$(finish "$S_ID")" = COMPLETED ]
	[ "$(finish "$L_ID")" = COMPLETED ]
	rl=$(record_of "$L_ID")
	rs=$(record_of "$S_ID")
	echo "listener: $(jq -c .measurements.net "$rl")"
	echo "sender: $(jq -c .measurements.net "$rs")"
	echo "# $key: sender out $(net "$key" out_bytes "$rs"), listener in $(net "$key" in_bytes "$rl") bytes" >&3
	# What the listener itself counted: all of it arrived.
	[ "$(cat "$SLURM_DIR/out/count.$tag")" = $((100 * MIB)) ]
	near "$(net "$key" out_bytes "$rs")" $((100 * MIB)) 5
	near "$(net "$key" in_bytes "$rl")" $((100 * MIB)) 5
	# Each job's traffic is its own: the sender received next to
	# nothing, the listener sent next to nothing.
	check "$(net "$key" in_bytes "$rs") < $MIB"
	check "$(net "$key" out_bytes "$rl") < $MIB"
	# The other protocol and family saw nothing of it.
	for other in tcp4 tcp6 udp4 udp6; do
		[ "$other" = "$key" ] && continue
		check "$(net "$other" out_bytes "$rs") < $MIB"
	done
	run "$CEEMS_TOP_BUILDDIR/tools/ceems-sacct" -c "$CEEMS_DIR/ceems.conf" -a -X -n -P \
		-j "$S_ID" --format=NetOut
	[[ "$output" == 10?.??M ]] || {
		echo "ceems-sacct NetOut: $output" >&2
		return 1
	}
	rm -f "$SLURM_DIR/out/port.$tag" "$SLURM_DIR/out/count.$tag"
}

