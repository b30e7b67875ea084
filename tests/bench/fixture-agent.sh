# fixture-agent.sh - sourced by the benches that run the built node agent
# without Slurm (run-plugin.sh, run-agent-jobs.sh): the agent on a copy
# of the RAPL fixture tree, with real /proc and cgroups and production
# timing (a tick every second, full readings every 10 s).
# Needs CEEMS_FIXTURES and top_srcdir set.

# fixture_agent_conf DIR: the fixture tree and ceems.conf in DIR.
fixture_agent_conf() {
	cp -r "$CEEMS_FIXTURES/sys/rapl-intel" "$1/sys"
	cat >"$1/ceems.conf" <<-CONF
	# a bench's node: fixture RAPL, real /proc and cgroups, production timing
	interval = 1s
	usage_interval = 10s
	max_jobs = 4096
	socket = $1/agent.sock
	state_dir = $1/state
	spool_dir = $1/spool
	sysfs_root = $1/sys
	source_hwmon = no
	source_pm_counters = no
	# a real node learns its idle power in its first quiet seconds; the
	# fixture's counters do not move, so it is given (the agent holding
	# no job then ticks every idle_interval, as on a real node)
	idle_power_package = 20W
	idle_power_dram = 2W
	zone = FR
	emissions_table = $top_srcdir/lib/data/carbon-intensity.tsv
	CONF
}

# fixture_agent_start AGENT DIR: AGENT on DIR's ceems.conf, its log in
# DIR/agent.log, its pid in agent_pid (a libtool wrapper execs the real
# program: the pid stays), once it answers.
fixture_agent_start() {
	"$1" -c "$2/ceems.conf" 2>"$2/agent.log" &
	agent_pid=$!
	for _ in $(seq 100); do
		"$1" --socket "$2/agent.sock" --status >/dev/null 2>&1 && return 0
		sleep 0.05
	done
	echo "the agent $1 does not answer; its log:" >&2
	tail -n 20 "$2/agent.log" >&2
	return 1
}
