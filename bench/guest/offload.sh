#!/bin/sh
# Guest side of bench/offload-bench: dm-crypt sequential writes and reads on
# a brd ramdisk, timed in guest CPU time (busy = uptime - idle, from
# /proc/uptime). Under -icount shift=0,sleep=off one guest instruction is
# one nanosecond of guest time and idle time is skipped, so busy time counts
# the instructions the guest spent: its CPU cost. The device's own work
# costs the guest nothing in this mode; that is the point of an offload and
# is what is shown.
set -eu
MIB=256
KEYS="256 512"
READS=4
KEY=/tmp/bench.key

modprobe brd rd_nr=1 rd_size=$((MIB * 1024 + 4096))
modprobe -a dm_crypt aesni_intel xts virtio_pci crypto_null
head -c 64 /dev/urandom >"$KEY"
# First touch of the ramdisk's pages allocates them: once, for every run.
dd if=/dev/zero of=/dev/ram0 bs=1M count="$MIB" oflag=direct 2>/dev/null

busy_cs() {	# guest CPU busy time so far, centiseconds
	awk '{ printf "%d\n", ($1 - $2) * 100 + 0.5 }' /proc/uptime
}

# run NAME SECTOR KEYBITS: one timed sequential write, then READS timed
# sequential reads of what it wrote.
run() {
	name=$1 sector=$2 bits=$3
	if [ "$name" = plain ]; then
		dev=/dev/ram0
	elif [ "$name" = null ]; then
		# dm-crypt with a cipher that costs nothing: its own overhead.
		# Writes copy (dm-crypt encrypts into pages of its own), reads
		# decrypt in place: no copy at all.
		dmsetup create bench --table "0 $((MIB * 2048)) crypt cipher_null-ecb - 0 /dev/ram0 0 1 sector_size:$sector"
		dev=/dev/mapper/bench
	else
		cryptsetup open --type plain --cipher aes-xts-plain64 \
			--key-size "$bits" --sector-size "$sector" \
			--key-file "$KEY" /dev/ram0 bench
		dev=/dev/mapper/bench
	fi
	r0=$(stat requests) a0=$(stat completed_async)
	sync
	t0=$(busy_cs)
	dd if=/dev/zero of="$dev" bs=1M count="$MIB" oflag=direct 2>/dev/null
	t1=$(busy_cs)
	# Reads cost a fifth of writes: read READS times for the resolution.
	_n=0
	while [ $_n -lt $READS ]; do
		dd if="$dev" of=/dev/null bs=1M count="$MIB" iflag=direct 2>/dev/null
		_n=$((_n + 1))
	done
	t2=$(busy_cs)
	r1=$(stat requests) a1=$(stat completed_async)
	case $name in
	plain) cipher=- ;;
	null) cipher=$(cipher_cost "$dev" "$sector" null_skcipher_crypt) ;;
	aesni) cipher=$(cipher_cost "$dev" "$sector" simd_skcipher_encrypt) ;;
	*) cipher=$(cipher_cost "$dev" "$sector" xo_encrypt) ;;
	esac
	driver=-
	if [ "$name" = null ]; then
		dmsetup remove bench
	elif [ "$name" != plain ]; then
		driver=$(awk '/^driver/ { d = $3 } /^refcnt/ && $3 > 1 && d ~ /^xts/ { print d; exit }' /proc/crypto)
		cryptsetup close bench
	fi
	# Engine requests of the timed write and read, and how many of them
	# completed after the submitting call returned.
	echo "RESULT $name $sector $bits $((t1 - t0)) $((t2 - t1)) $MIB $driver $cipher $((r1 - r0)) $((a1 - a0)) $READS"
}

# stat NAME: xts_offload's total counter NAME, in debugfs; 0 while the
# module is not loaded.
grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
	mount -t debugfs debugfs /sys/kernel/debug
stat() {
	if [ -r /sys/kernel/debug/xts_offload/stats/"$1" ]; then
		cat /sys/kernel/debug/xts_offload/stats/"$1"
	else
		echo 0
	fi
}

# cipher_cost DEV SECTOR FUNC: guest ns (= instructions) per byte spent in
# the driver's own encrypt entry point FUNC, the one function ftrace hooks,
# from function_graph durations summed over a 16 MiB write. Each duration
# includes one hook's cost, the same for every driver.
T=/sys/kernel/tracing
[ -e $T/trace ] || mount -t tracefs none $T
cipher_cost() {
	echo 0 >$T/tracing_on
	echo nop >$T/current_tracer
	echo 65536 >$T/buffer_size_kb
	echo "$3" >$T/set_ftrace_filter
	echo function_graph >$T/current_tracer
	echo 1 >$T/tracing_on
	dd if=/dev/zero of="$1" bs=1M count=16 oflag=direct 2>/dev/null
	echo 0 >$T/tracing_on
	overrun=$(awk '/^overrun:/ { print $2 }' $T/per_cpu/cpu0/stats)
	awk -v bytes=$((16 << 20)) -v sector="$2" -v overrun="$overrun" -v fn="$3" '
		# "fn();" or, for a module, "fn [module]();"
		$0 ~ ("\\| +" fn "( \\[[a-z0-9_]+\\])?\\(\\);") && match($0, /[0-9]+\.[0-9]+ us/) {
			sum += substr($0, RSTART, RLENGTH - 3); n++
		}
		END {
			if (overrun > 0 || n != bytes / sector) {
				printf "CIPHER-ERROR %s calls %d expected %d overrun %d\n", fn, n, bytes / sector, overrun
				exit
			}
			printf "%.3f\n", sum * 1000 / bytes
		}' $T/trace
	echo nop >$T/current_tracer
}

echo "# guest: $(uname -r), $MIB MiB per run, keys of $KEYS bits"
run plain 4096 0
for s in 512 1024 2048 4096; do run null "$s" 0; done
for k in $KEYS; do
	for s in 512 1024 2048 4096; do run aesni "$s" "$k"; done
done

# unload: the virtio-crypto engine, then the core it depends on. A closed
# mapping's engine sessions (and the module reference they hold) are
# released from a worker: retry for up to 5 s.
unload() {
	for m in xts_offload_virtio xts_offload; do
		n=0
		until rmmod "$m" 2>/dev/null; do
			n=$((n + 1))
			[ $n -lt 50 ] || { rmmod "$m"; return 1; }
			sleep 0.1
		done
	done
}

modprobe xts_offload threshold=0
modprobe xts_offload_virtio
for k in $KEYS; do
	for s in 512 1024 2048 4096; do run engine "$s" "$k"; done
done

# Every request on the fallback: no engine bound.
for d in /sys/bus/virtio/drivers/xts_offload/virtio*; do
	echo "${d##*/}" >/sys/bus/virtio/drivers/xts_offload/unbind
done
for k in $KEYS; do
	for s in 512 4096; do run fallback "$s" "$k"; done
done
unload

# The default threshold, engine present.
modprobe xts_offload
modprobe xts_offload_virtio
echo "# default threshold: $(cat /sys/module/xts_offload/parameters/threshold)"
for k in $KEYS; do
	for s in 512 1024 2048 4096; do run default "$s" "$k"; done
done
unload
