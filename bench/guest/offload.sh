#!/bin/sh
# Guest side of bench/offload-bench: dm-crypt sequential writes on a brd
# ramdisk, timed in guest CPU time (busy = uptime - idle, from /proc/uptime).
# Under -icount shift=0,sleep=off one guest instruction is one nanosecond of
# guest time and idle time is skipped, so busy time counts the instructions
# the guest spent: its CPU cost. The device's own work costs the guest
# nothing in this mode; that is the point of an offload and is what is shown.
set -eu
MIB=256
KEY=/tmp/bench.key

modprobe brd rd_nr=1 rd_size=$((MIB * 1024 + 4096))
modprobe -a dm_crypt aesni_intel xts virtio_pci crypto_null
head -c 64 /dev/urandom >"$KEY"

busy_cs() {	# guest CPU busy time so far, centiseconds
	awk '{ printf "%d\n", ($1 - $2) * 100 + 0.5 }' /proc/uptime
}

# run NAME SECTOR [cryptsetup cipher]: one timed sequential write.
run() {
	name=$1 sector=$2
	if [ "$name" = plain ]; then
		dev=/dev/ram0
	elif [ "$name" = null ]; then
		# dm-crypt with a cipher that costs nothing: its own overhead.
		dmsetup create bench --table "0 $((MIB * 2048)) crypt cipher_null-ecb - 0 /dev/ram0 0 1 sector_size:$sector"
		dev=/dev/mapper/bench
	else
		cryptsetup open --type plain --cipher aes-xts-plain64 \
			--key-size 512 --sector-size "$sector" \
			--key-file "$KEY" /dev/ram0 bench
		dev=/dev/mapper/bench
	fi
	# Warm up: first touch of the ramdisk pages allocates them.
	dd if=/dev/zero of="$dev" bs=1M count="$MIB" oflag=direct 2>/dev/null
	sync
	t0=$(busy_cs)
	dd if=/dev/zero of="$dev" bs=1M count="$MIB" oflag=direct 2>/dev/null
	t1=$(busy_cs)
	driver=-
	if [ "$name" = null ]; then
		dmsetup remove bench
	elif [ "$name" != plain ]; then
		driver=$(awk '/^driver/ { d = $3 } /^refcnt/ && $3 > 1 && d ~ /^xts/ { print d; exit }' /proc/crypto)
		cryptsetup close bench
	fi
	echo "RESULT $name $sector $((t1 - t0)) $MIB $driver"
}

stat() { cat /sys/kernel/xts_offload/stats/"$1"; }

echo "# guest: $(uname -r), $MIB MiB per run"
run plain 4096
for s in 512 4096; do run null "$s"; done
for s in 512 1024 2048 4096; do run aesni "$s"; done

modprobe xts_offload threshold=0
for s in 512 1024 2048 4096; do
	r0=$(stat requests)
	run engine "$s"
	echo "# engine $s: requests offloaded $(( $(stat requests) - r0 )), busy fallbacks $(stat fallback_busy)"
done

# Every request on the fallback: no engine bound.
for d in /sys/bus/virtio/drivers/xts_offload/virtio*; do
	echo "${d##*/}" >/sys/bus/virtio/drivers/xts_offload/unbind
done
for s in 512 4096; do run fallback "$s"; done
rmmod xts_offload

# The default threshold, engine present.
modprobe xts_offload
echo "# default threshold: $(cat /sys/module/xts_offload/parameters/threshold)"
for s in 512 4096; do run default "$s"; done
rmmod xts_offload
