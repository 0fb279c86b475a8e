#!/bin/sh
# Last of the xts tests, for the debug kernel (scripts/debug-kernel): with
# every xts_offload module unloaded, kmemleak's scan finds no leaked object.
# kmemleak reports only objects older than 5 s (its fixed minimum age), so
# the scan comes 6 s after the unload; a second scan confirms what the
# first found. Every report also reaches the kernel log ("N new suspected
# memory leaks"), which fails the run in the harness. Kernels without
# kmemleak (Debian's) skip it.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 2

KML=/sys/kernel/debug/kmemleak
if [ ! -e "$KML" ]; then
	skip "the xts modules unload" "no kmemleak in this kernel"
	skip "kmemleak finds no leaked object" "no kmemleak in this kernel"
	done_testing
fi

check "the xts modules unload" xo_unload
sleep 6
echo scan >"$KML"
echo scan >"$KML"
leaks=$(cat "$KML")
if [ -z "$leaks" ]; then
	ok "kmemleak finds no leaked object"
else
	echo "$leaks" >&2
	not_ok "kmemleak finds no leaked object ($(echo "$leaks" | grep -c '^unreferenced object') reported)"
fi
done_testing
