#!/bin/sh
# Engine choice by NUMA node: among engines of equal priority, a key is
# bound to one on the NUMA node of the CPU that binds it (setkey's), before
# the least loaded. Two loopback engines, one per node of a two-node guest
# (run-guest.py with two vCPUs in two NUMA nodes: the guest-numa-KVER
# tests); each mapping is opened on one CPU (taskset) and its requests are
# made there (dm-crypt's same_cpu_crypt). With one node every test is skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 10

nodes=$(ls -d /sys/devices/system/node/node[0-9]* 2>/dev/null | wc -l)
if [ "$nodes" -lt 2 ] || [ ! -d /sys/devices/system/node/node1 ]; then
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		skip "NUMA test $((_tap_n + 1))" \
			"the guest has $nodes NUMA node(s) (run-guest.py with -numa: guest-numa-KVER)"
	done
	done_testing
fi
diag "node0 cpus $(cat /sys/devices/system/node/node0/cpulist), node1 cpus $(cat /sys/devices/system/node/node1/cpulist)"
cpu0=$(cut -d, -f1 /sys/devices/system/node/node0/cpulist | cut -d- -f1)
cpu1=$(cut -d, -f1 /sys/devices/system/node/node1/cpulist | cut -d- -f1)

LBD=$XO_DEBUGFS/xts_offload_loopback
LBD1=$XO_DEBUGFS/xts_offload_loopback.1
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_rmmod xts_offload_loopback
check "two loopback engines, equal priority, on nodes 0 and 1" \
	modprobe xts_offload_loopback count=2 node=0,1
expect_eq "debugfs engines shows their nodes" "0 1" \
	"$(awk '$1 == "xts_offload_loopback" || $1 == "xts_offload_loopback.1" {
		for (i = 3; i <= NF; i++) if ($i ~ /^node=/) { sub(/node=/, "", $i); printf "%s%s", sep, $i; sep = " " } }' \
		"$XO_DEBUGFS/engines")"

if grep -q '^brd ' /proc/modules; then
	rmmod brd >&2 || bail "cannot reload brd"
fi
modprobe brd rd_nr=3 rd_size=4096 >&2 || bail "no ramdisks"

# bind_from NAME RAMDISK CPU: open a mapping from CPU: its setkey (in
# cryptsetup's table load) binds the key there.
bind_from() {
	new_key /tmp/key 64
	_s0=$(xo_total sessions)
	taskset -c "$3" cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
		--key-size 512 --sector-size 4096 --perf-same_cpu_crypt \
		--key-file - "$2" "$1" </tmp/key >&2 || return 1
	rm -f /tmp/key
	[ "$(xo_total sessions)" -gt $((_s0 + 1)) ]
}

sessions() {
	echo "$(cat "$LBD/sessions") $(cat "$LBD1/sessions")"
}
# sessions_are "N0 N1": the engines hold these (a key cryptsetup only
# checked releases its sessions from a worker).
sessions_are() {
	[ "$(sessions)" = "$1" ]
}

# The engines' registration ran the crypto API's self-test on the first
# one; that tfm's sessions go from a worker after it is freed: wait for
# them, or bind_from's count starts from them.
check "no sessions held before the first key" wait_until 10 sessions_are "0 0"
# Engine 0 registered first: with load alone the first key would go there.
check "a key bound from CPU $cpu1 (node 1)" bind_from numa0 /dev/ram0 "$cpu1"
wait_until 10 sessions_are "0 2"
expect_eq "is on the node-1 engine, not the first registered" "0 2" "$(sessions)"
check "a second key bound from CPU $cpu1 (node 1)" bind_from numa1 /dev/ram1 "$cpu1"
wait_until 10 sessions_are "0 4"
expect_eq "is on the node-1 engine too, though it is the more loaded" "0 4" "$(sessions)"
check "a key bound from CPU $cpu0 (node 0)" bind_from numa2 /dev/ram2 "$cpu0"
wait_until 10 sessions_are "2 4"
expect_eq "is on the node-0 engine" "2 4" "$(sessions)"
for m in numa0 numa1 numa2; do xts_close "$m"; done
xo_rmmod xts_offload_loopback
done_testing
