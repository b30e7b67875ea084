#!/bin/sh
# doc-steps.sh - print a block of a Markdown document that the packages
# suite runs as written, so that the documents are the test.
#
#   doc-steps.sh FILE NAME     the block marked NAME, its indentation removed
#   doc-steps.sh --list FILE   the names of FILE's marked blocks
#
# A marked block is a code block, indented or fenced, right after a line
# that holds only the HTML comment (invisible to readers)
#
#   <!-- doc-test: NAME -->
#
# with blank lines at most in between.  An indented block's lines are
# those indented at least as much as its first line, and blank lines
# among them; a fenced block ends at its closing fence.
#
# Fails (status 1, one line on stderr) when the mark is missing or there
# more than once, or no code block follows it, or the block is empty:
# a document edit that drops or renames a step must fail the suite, not
# run nothing.
set -u

usage() {
	echo "usage: doc-steps.sh FILE NAME | doc-steps.sh --list FILE" >&2
	exit 2
}

if [ "${1:-}" = --list ]; then
	[ $# -eq 2 ] || usage
	[ -r "$2" ] || { echo "doc-steps.sh: cannot read $2" >&2; exit 1; }
	sed -n 's/^[[:space:]]*<!-- doc-test: \([A-Za-z0-9_.-]*\) -->[[:space:]]*$/\1/p' "$2"
	exit 0
fi
[ $# -eq 2 ] || usage
case $2 in *[!A-Za-z0-9_-]*) usage ;; esac
file=$1
name=$2
[ -r "$file" ] || { echo "doc-steps.sh: cannot read $file" >&2; exit 1; }

awk -v name="$name" -v file="$file" '
function indent(s) { match(s, /^ */); return RLENGTH }
function fail(msg) { print "doc-steps.sh: " file ": " msg > "/dev/stderr"; bad = 1; exit 1 }
BEGIN { state = "seek"; marks = 0; n = 0 }
{ gsub(/\t/, "    ") }
# The mark, anywhere (a later copy of it is an error too).
$0 ~ "^ *<!-- doc-test: " name " --> *$" {
	marks++
	if (marks > 1) fail("the mark \"doc-test: " name "\" is there more than once")
	markindent = indent($0)
	state = "after-mark"
	next
}
state == "after-mark" && /^ *$/ { next }
state == "after-mark" {
	if ($0 ~ /^ *(```|~~~)/) {
		fence = substr($0, indent($0) + 1, 3)
		blockindent = indent($0)
		state = "fenced"
		next
	}
	if (indent($0) < markindent + 4)
		fail("no code block after the mark \"doc-test: " name "\" (line " NR ")")
	blockindent = indent($0)
	state = "indented"
}
state == "fenced" {
	if (substr($0, indent($0) + 1, 3) == fence) { state = "done"; next }
	line[++n] = substr($0, indent($0) < blockindent ? indent($0) + 1 : blockindent + 1)
	next
}
state == "indented" {
	if ($0 ~ /^ *$/) { line[++n] = ""; next }
	if (indent($0) < blockindent) { state = "done"; next }
	line[++n] = substr($0, blockindent + 1)
	next
}
END {
	if (bad) exit 1
	if (marks == 0) fail("no mark \"doc-test: " name "\"")
	if (state == "fenced") fail("the block marked \"doc-test: " name "\" has no closing fence")
	while (n > 0 && line[n] == "") n--
	if (n == 0) fail("the block marked \"doc-test: " name "\" is empty")
	for (i = 1; i <= n; i++) print line[i]
}
' "$file"
