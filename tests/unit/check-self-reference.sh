#!/bin/sh
# check-self-reference.sh - the product speaks only of itself: no file of
# the source tree (code, comments, docs, SQL, tests, packaging) may refer
# to the process that made it ("session 4", "issue 5", "issue #5",
# "item 3") or to files outside the repository (a design document other
# than doc/design.md, "research/", "shared/", "seeds/", "/work/").  The design
# document is doc/design.md; code cites it as "design invariant N".
# Each hit is a failure naming file:line.  TAP on stdout; `make check`
# runs it.
#
# The files scanned are those `git ls-files` lists when the source tree is
# a git checkout, else (the distcheck tarball has no .git) every file
# under the project's own directories and top-level files.  The patterns
# are precise so that technical words stay legal: PostgreSQL's or TLS's
# "session" is never followed by a number, and debian/control's
# "Architecture:" field is not upper case.  Fixtures (tests/fixtures) are
# scanned too: they are data the project wrote, and none needs these words.
# Binary files are skipped (grep -I).  Only this file is excluded: it
# must name the patterns it looks for.
set -u

top=${CEEMS_TOP_SRCDIR:-.}
self=tests/unit/check-self-reference.sh
pattern='[Ss]essions? [0-9]|[Ii]ssues? #?[0-9]|[Ii]ssues? #|[Ii]tems? [0-9]|ARCHITECTURE|[Aa]rchitecture\.md|research/|shared/|seeds/|/work/'

list_files() {
	if git -C "$top" rev-parse --is-inside-work-tree >/dev/null 2>&1 &&
	    [ "$(git -C "$top" rev-parse --show-toplevel 2>/dev/null)" = \
	    "$(cd "$top" && pwd -P)" ]; then
		git -C "$top" ls-files
		return
	fi
	(cd "$top" && for f in README COPYING Makefile.am configure.ac; do
		[ -f "$f" ] && echo "$f"
	done
	for d in .ci bpf dashboards debian doc lib m4 plugins sql tests tools; do
		[ -d "$d" ] && find "$d" -type f
	done) | sort
}

files=$(list_files | grep -v "^$self\$")
nfiles=$(printf '%s\n' "$files" | grep -c .)
hits=$(cd "$top" && printf '%s\n' "$files" | tr '\n' '\0' |
    xargs -0 grep -nIE "$pattern" -- 2>/dev/null)

echo "1..2"
if [ "$nfiles" -gt 0 ] && printf '%s\n' "$files" | grep -q '^lib/'; then
	echo "ok 1 - $nfiles files of the source tree found under $top"
else
	echo "not ok 1 - $nfiles files of the source tree found under $top"
fi
if [ -z "$hits" ]; then
	echo "ok 2 - no file refers to the development process or outside paths"
else
	echo "not ok 2 - $(printf '%s\n' "$hits" | grep -c .) lines refer to the development process or outside paths"
	printf '%s\n' "$hits" | cut -c1-200 | sed 's/^/# /'
fi
exit 0
