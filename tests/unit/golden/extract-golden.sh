#!/bin/sh
# extract-golden.sh CONSOLE_LOG OUTDIR: write the golden vectors that a guest
# run of tests/guest/42-opal-kernel-users.sh printed to its console
# ("@golden NAME LINE", see README.md) as OUTDIR/NAME.hex, one file per
# name. Every line must be a comment ("# ..."), a request
# ("> TSN HSN HEX") or a reply ("< HEX"); anything else (a kernel message
# that cut into a line, say) is an error and nothing is written.
set -eu
[ $# -eq 2 ] || { echo "usage: $0 CONSOLE_LOG OUTDIR" >&2; exit 1; }
log=$1 out=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
grep '^@golden ' "$log" | awk -v dir="$tmp" '
{
	name = $2
	line = substr($0, length("@golden ") + length(name) + 2)
	if (name !~ /^[a-z0-9-]+$/) { print "bad name: " name > "/dev/stderr"; bad = 1; next }
	if (line !~ /^# / &&
	    line !~ /^> [0-9]+ [0-9]+ ([0-9a-f][0-9a-f])+$/ &&
	    line !~ /^< ([0-9a-f][0-9a-f])+$/) {
		print "bad line for " name ": " line > "/dev/stderr"; bad = 1; next
	}
	print line > (dir "/" name ".hex")
}
END { exit bad }'
n=$(ls "$tmp" | wc -l)
[ "$n" -gt 0 ] || { echo "no @golden lines in $log" >&2; exit 1; }
mkdir -p "$out"
cp "$tmp"/*.hex "$out"/
echo "$n files in $out"
