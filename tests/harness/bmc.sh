#!/bin/bash
# tests/harness/bmc.sh -- run OpenIPMI's ipmi_sim as a simulated BMC on
# loopback, for the BMC energy source's tests (no systemd: the script
# starts and stops the simulator itself, as root, in a private directory).
#
# Usage:
#   bmc.sh start DIR PORT [DCMI_MODULE]
#                           write DIR/lan.conf, DIR/bmc.emu and
#                           DIR/credentials (mode 0600) and start ipmi_sim
#                           listening on 127.0.0.1:PORT (LAN and LANplus,
#                           user "ceems", password "ceems-test-pw", up to
#                           admin privilege); returns once the simulator
#                           runs.  With DCMI_MODULE (the build's
#                           tests/doubles/.libs/ipmi_sim_dcmi.so) it also
#                           answers DCMI Get Power Reading from DIR/dcmi
#   bmc.sh dcmi DIR WATTS STAMP ACTIVE
#                           set that answer (tests/doubles/ipmi_sim_dcmi.c)
#   bmc.sh set DIR RAW      set the power sensor's raw byte (power = 2 x
#                           RAW W) through the simulator's console
#   bmc.sh stop DIR         stop the simulator started in DIR
#
# The simulated BMC has one power sensor (number 0x40, "Node Power",
# Watts, reading = 2 x raw byte, 200 W at start).  Its console listens on
# 127.0.0.1:PORT+1 (DIR/console_port): a test sets the node's power by
# sending "sensor_set_value 0x20 0 0x40 RAW 0" there while the agent
# runs.  Without the DCMI module the simulator answers no DCMI command, so
# the source falls back to the SDR sensor; with it, DCMI needs an admin
# session (bmc_privilege = admin).  Its RMCP+ Open Session answer carries no privilege
# level: clients need freeipmi's "opensesspriv" workaround
# (bmc_workarounds = opensesspriv).
set -eu

usage() {
	echo "usage: bmc.sh start DIR PORT [DCMI_MODULE] | set DIR RAW | dcmi DIR WATTS STAMP ACTIVE | stop DIR" >&2
	exit 2
}

write_files() {
	dir=$1
	port=$2
	module=${3:-}
	: >"$dir/lan.conf"
	if [ -n "$module" ]; then
		[ -f "$dir/dcmi" ] || echo "0 0 0" >"$dir/dcmi"
		echo "loadlib \"$module\" \"$dir/dcmi\"" >>"$dir/lan.conf"
	fi
	cat >>"$dir/lan.conf" <<EOF
name "ceemstest"
set_working_mc 0x20
  startlan 1
    addr 127.0.0.1 $port
    priv_limit admin
    allowed_auths_callback none md2 md5 straight
    allowed_auths_user none md2 md5 straight
    allowed_auths_operator none md2 md5 straight
    allowed_auths_admin none md2 md5 straight
    guid a123456789abcdefa123456789abcdef
  endlan
  console 127.0.0.1 $((port + 1))
  user 2 true "ceems" "ceems-test-pw" admin 10 none md2 md5 straight
EOF
	# Full sensor record (type 0x01) of a threshold sensor of type
	# 0x0b (other units), unit Watts (6), M = 2, B = 0, exponents 0,
	# id string "Node Power".
	cat >"$dir/bmc.emu" <<EOF
mc_setbmc 0x20
mc_add 0x20 0 no-device-sdrs 0x23 9 8 0x9f 0x1291 0xf02
sel_enable 0x20 1000 0x0a
sensor_add 0x20 0 0x40 0x0b 0x01
main_sdr_add 0x20 \\
	0x00 0x00 0x51 0x01 0x35 \\
	0x20 0x00 0x40 0x17 0x01 0x41 0x40 0x0b 0x01 0x00 0x00 0x00 0x00 0x00 0x00 \\
	0x00 0x06 0x00 0x00 0x02 0x00 0x00 0x00 0x00 0x00 0x00 \\
	0x00 0x00 0x00 0xff 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 0x00 \\
	0xca 'N 'o 'd 'e 0x20 'P 'o 'w 'e 'r
sensor_set_value 0x20 0 0x40 100 0
mc_enable 0x20
EOF
	echo $((port + 1)) >"$dir/console_port"
	umask 077
	printf 'username ceems\npassword ceems-test-pw\n' >"$dir/credentials"
	chmod 0600 "$dir/credentials"
}

start() {
	dir=$1
	port=$2
	mkdir -p "$dir/state"
	write_files "$dir" "$port" "${3:-}"
	ipmi_sim -n -c "$dir/lan.conf" -f "$dir/bmc.emu" -s "$dir/state" \
		</dev/null >"$dir/sim.log" 2>&1 &
	echo $! >"$dir/pid"
	# Up once its UDP port is bound.
	i=0
	while [ $i -lt 100 ]; do
		if ! kill -0 "$(cat "$dir/pid")" 2>/dev/null; then
			echo "bmc.sh: ipmi_sim exited, see $dir/sim.log" >&2
			return 1
		fi
		if ss -Hlun "sport = :$port" 2>/dev/null | grep -q .; then
			return 0
		fi
		sleep 0.05
		i=$((i + 1))
	done
	echo "bmc.sh: ipmi_sim did not bind port $port" >&2
	return 1
}

set_dcmi() {
	printf '%s %s %s\n' "$2" "$3" "$4" >"$1/dcmi.new"
	mv "$1/dcmi.new" "$1/dcmi"
}

set_raw() {
	dir=$1
	exec 3<>"/dev/tcp/127.0.0.1/$(cat "$dir/console_port")"
	printf 'sensor_set_value 0x20 0 0x40 %s 0\n' "$2" >&3
	# Read the console's answer before closing: a console closed with
	# its answer unread leaves the simulator deaf on LAN.
	# The prompt before the command, then the one after it.
	read -r -t 2 -d '>' _ <&3 || true
	read -r -t 2 -d '>' _ <&3 || true
	exec 3>&-
}

stop() {
	dir=$1
	[ -f "$dir/pid" ] || return 0
	pid=$(cat "$dir/pid")
	kill "$pid" 2>/dev/null || true
	i=0
	while kill -0 "$pid" 2>/dev/null && [ $i -lt 100 ]; do
		sleep 0.05
		i=$((i + 1))
	done
	kill -9 "$pid" 2>/dev/null || true
	rm -f "$dir/pid"
}

[ $# -ge 2 ] || usage
case $1 in
start) [ $# -eq 3 ] || [ $# -eq 4 ] || usage; start "$2" "$3" "${4:-}" ;;
dcmi) [ $# -eq 5 ] || usage; set_dcmi "$2" "$3" "$4" "$5" ;;
set) [ $# -eq 3 ] || usage; set_raw "$2" "$3" ;;
stop) stop "$2" ;;
*) usage ;;
esac
