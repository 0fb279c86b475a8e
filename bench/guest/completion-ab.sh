#!/bin/sh
# Guest side of bench/completion-ab: the guest CPU cost of dm-crypt on the
# virtio-crypto engine (threshold=0) with two builds of xts_offload, A (the
# harness's modules) and B (/usr/bin/b-*.ko), loaded in turn in the same
# boot, round after round, so that the host's load, which sets how many
# requests complete asynchronously, falls on both alike.
#
# Busy time is guest time minus idle time, in nanoseconds, from
# /proc/timer_list (tick_sched's idle_sleeptime and iowait_sleeptime: time
# in interrupts and softirqs counts as busy, also when they interrupt the
# idle task, unlike /proc/schedstat's run time). Under -icount
# shift=0,sleep=off a guest nanosecond is an instruction.
#
# One line per run: AB ROUND BUILD SECTOR WRITE_NS READ_NS REQUESTS ASYNC BUSY
# (READ_NS: READS sequential reads of what was written; REQUESTS, ASYNC:
# the engine's requests and those completed after their submit returned;
# BUSY: fallback_busy, requests the full ring sent to software).
set -eu
MIB=64
READS=4
ROUNDS=3
SECTORS="4096 512"
KEY=/tmp/ab.key
DBG=/sys/kernel/debug/xts_offload

modprobe brd rd_nr=1 rd_size=$((MIB * 1024 + 4096))
modprobe -a dm_crypt aesni_intel xts virtio_pci
head -c 64 /dev/urandom >"$KEY"
dd if=/dev/zero of=/dev/ram0 bs=1M count="$MIB" oflag=direct 2>/dev/null
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs debugfs /sys/kernel/debug

# The first CPU's tick_sched lines read ".idle_sleeptime : N nsecs" and
# ".iowait_sleeptime: N nsecs" (a field width of 15): the number is the
# field before "nsecs". %.0f: busybox awk's %d stops at 2^31.
busy_ns() {
	awk '/^now at/ { now = $3 }
	     /\.idle_sleeptime/ && !i { idle = $(NF - 1); i = 1 }
	     /\.iowait_sleeptime/ && !w { io = $(NF - 1); w = 1 }
	     END { printf "%.0f\n", now - idle - io }' /proc/timer_list
}

stat() { cat "$DBG/stats/$1"; }

# Neither build may stay loaded: modprobe would then keep the other one
# and measure it under this build's name.
unload() {
	for _m in xts_offload_virtio xts_offload; do
		[ -d "/sys/module/$_m" ] || continue
		rmmod "$_m" || { echo "AB-ERROR: cannot unload $_m" >&2; exit 1; }
	done
}

# load A|B: the core with threshold=0 and the virtio engine, bound.
load() {
	unload
	if [ "$1" = A ]; then
		modprobe xts_offload threshold=0 && modprobe xts_offload_virtio
	else
		insmod /usr/bin/b-xts_offload.ko threshold=0 &&
			insmod /usr/bin/b-xts_offload_virtio.ko
	fi
	_n=0
	while ! grep -q '^virtio' "$DBG/engines" 2>/dev/null; do
		_n=$((_n + 1))
		[ $_n -lt 100 ] || { echo "AB-ERROR build $1: no engine" >&2; exit 1; }
		sleep 0.1
	done
}

run() {	# BUILD ROUND SECTOR
	cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 \
		--sector-size "$3" --key-file "$KEY" /dev/ram0 ab
	r0=$(stat requests) a0=$(stat completed_async) f0=$(stat fallback_busy)
	sync
	t0=$(busy_ns)
	dd if=/dev/zero of=/dev/mapper/ab bs=1M count="$MIB" oflag=direct 2>/dev/null
	t1=$(busy_ns)
	_n=0
	while [ $_n -lt $READS ]; do
		dd if=/dev/mapper/ab of=/dev/null bs=1M count="$MIB" iflag=direct 2>/dev/null
		_n=$((_n + 1))
	done
	t2=$(busy_ns)
	r1=$(stat requests) a1=$(stat completed_async) f1=$(stat fallback_busy)
	cryptsetup close ab
	echo "AB $2 $1 $3 $((t1 - t0)) $((t2 - t1)) $((r1 - r0)) $((a1 - a0)) $((f1 - f0))"
}

round=1
while [ $round -le $ROUNDS ]; do
	# A then B in odd rounds, B then A in even ones.
	if [ $((round % 2)) -eq 1 ]; then order="A B"; else order="B A"; fi
	for b in $order; do
		load "$b"
		for s in $SECTORS; do
			run "$b" "$round" "$s"
		done
	done
	round=$((round + 1))
done
unload
echo "AB-DONE"
