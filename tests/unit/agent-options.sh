#!/bin/sh
# agent-options.sh - ceems-agent's settings on its command line are
# checked against the key table (lib/base/conf_keys.h) like ceems.conf's keys:
# the bounds are accepted, a value just outside is refused with the
# option, the value and the range; an option overrides the file's key.
# Runs the built agent without root (--check-config, and calls to a
# socket nobody listens on).  TAP on stdout; `make check` runs it.
set -u
agent=${CEEMS_TOP_BUILDDIR:-.}/tools/ceems-agent
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
n=0

say() {	# say OK|FAIL DESCRIPTION [OUTPUT]
	n=$((n + 1))
	if [ "$1" = ok ]; then
		echo "ok $n - $2"
	else
		echo "not ok $n - $2"
		printf '%s\n' "${3:-}" | sed 's/^/# /'
	fi
}

# accepts DESCRIPTION ARG...: exit 0, its output in $out.
accepts() {
	what=$1
	shift
	if out=$("$agent" "$@" 2>&1); then say ok "$what"; else say fail "$what" "$out"; fi
}

# refuses DESCRIPTION MESSAGE ARG...: exit 1 with MESSAGE on stderr.
refuses() {
	what=$1 want=$2
	shift 2
	out=$("$agent" "$@" 2>&1)
	rc=$?
	case "$out" in
	*"$want"*) [ "$rc" -eq 1 ] && { say ok "$what"; return; } ;;
	esac
	say fail "$what (exit $rc, want 1 and: $want)" "$out"
}

printf 'interval = 2s\nsocket = %s/conf.sock\n' "$tmp" >"$tmp/c.conf"
printf '# nothing\n' >"$tmp/empty.conf"
long=/$(printf '%0300d' 0)

# --interval: the bounds of ceems.conf's interval.
accepts "--interval 10ms accepted" -c "$tmp/c.conf" --interval 10ms --check-config
accepts "--interval 1h accepted" -c "$tmp/c.conf" --interval 1h --check-config
case "$out" in *"interval = 3600s"*) say ok "--interval 1h is used" ;;
*) say fail "--interval 1h is used" "$out" ;; esac
refuses "--interval below 10ms refused" \
	"ceems-agent: --interval 9999999ns is out of range; allowed: 10ms to 1h" \
	-c "$tmp/c.conf" --interval 9999999ns --check-config
refuses "--interval above 1h refused" \
	"ceems-agent: --interval 3600000000001ns is out of range; allowed: 10ms to 1h" \
	-c "$tmp/c.conf" --interval 3600000000001ns --check-config
refuses "--interval not a duration" \
	"ceems-agent: --interval fast is not a duration (examples: 250ms, 1s, 2m); allowed: 10ms to 1h" \
	-c "$tmp/c.conf" --interval fast --check-config

# Which wins: the option over the file, the file over the default.
accepts "--check-config with --interval" -c "$tmp/c.conf" --interval 500ms --check-config
case "$out" in *"interval = 500ms"*) say ok "--interval overrides the file's interval" ;;
*) say fail "--interval overrides the file's interval" "$out" ;; esac
accepts "--check-config without --interval" -c "$tmp/c.conf" --check-config
case "$out" in *"interval = 2s"*) say ok "the file's interval without the option" ;;
*) say fail "the file's interval without the option" "$out" ;; esac
accepts "--check-config of a file without interval" -c "$tmp/empty.conf" --check-config
case "$out" in *"interval = 1s"*) say ok "the default interval without either" ;;
*) say fail "the default interval without either" "$out" ;; esac
out=$("$agent" -c "$tmp/c.conf" --socket "$tmp/opt.sock" --timeout 1 --status 2>&1)
case "$out" in *"no reply from the agent at $tmp/opt.sock"*) say ok "--socket overrides the file's socket" ;;
*) say fail "--socket overrides the file's socket" "$out" ;; esac
out=$("$agent" -c "$tmp/c.conf" --timeout 3600000 --status 2>&1)
case "$out" in *"no reply from the agent at $tmp/conf.sock"*) say ok "the file's socket without --socket; --timeout 3600000 accepted" ;;
*) say fail "the file's socket without --socket; --timeout 3600000 accepted" "$out" ;; esac

# --timeout: 1 to 3600000 ms.
refuses "--timeout 0 refused" \
	"ceems-agent: --timeout 0 is out of range; allowed: 1 to 3600000" \
	-c "$tmp/c.conf" --timeout 0 --status
refuses "--timeout 3600001 refused" \
	"ceems-agent: --timeout 3600001 is out of range; allowed: 1 to 3600000" \
	-c "$tmp/c.conf" --timeout 3600001 --status

# Paths: absolute and at most 255 bytes, as in ceems.conf and
# plugstack.conf (before the table, the agent took any --socket and a
# --agent of any length).
refuses "--socket relative refused" \
	"ceems-agent: --socket agent.sock must be an absolute path" \
	-c "$tmp/c.conf" --socket agent.sock --status
refuses "--agent too long refused" \
	"ceems-agent: --agent $long is too long; allowed: at most 255 bytes" \
	-c "$tmp/c.conf" --agent "$long" --stop
refuses "--log relative refused" \
	"ceems-agent: --log agent.log must be an absolute path" \
	-c "$tmp/c.conf" --log agent.log --stop

# --check-config prints every key of the table (lib/base/conf_keys.c,
# read here from the source, not from the agent) with its value: as
# "KEY = VALUE", "# KEY = VALUE (...)" outside ceems.conf, or
# "# KEY is not set (...)" for an empty text.
keys=$(sed -n 's/^[[:space:]]*{ "\([a-z_]*\)", .*CEEMS_KEY_.*/\1/p' \
	"${CEEMS_TOP_SRCDIR:-.}/lib/base/conf_keys.c")
count=$(printf '%s\n' "$keys" | grep -c .)
if out=$("$agent" -c "$tmp/c.conf" --check-config 2>&1) && [ "$count" -gt 40 ]; then
	missing=
	for k in $keys; do
		printf '%s\n' "$out" | grep -Eq "^(# )?$k( = .| is not set)" ||
			missing="$missing $k"
	done
	if [ -z "$missing" ]; then say ok "--check-config prints all $count keys of the table"
	else say fail "--check-config leaves out:$missing" "$out"; fi
else
	say fail "--check-config and the table's $count keys" "$out"
fi
case "$out" in *"
socket = $tmp/conf.sock
"*) say ok "--check-config prints the file's value" ;;
*) say fail "--check-config prints the file's value" "$out" ;; esac

echo "1..$n"
