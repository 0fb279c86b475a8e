#!/bin/sh
# Guest side of bench/tcg-profile: dm-crypt sequential writes and reads on a
# brd ramdisk, each run between two tcgprof markers (tcgprof-mark run N ...),
# so that the tcgprof QEMU plugin writes one instruction profile per run.
# Then the symbols of the loaded modules, for the host's report.
#
# Output (stdout), one line per profiled run:
#   PROFILE N NAME OP MIB SECTOR DRIVER BUSY_CS
# N is the plugin's dump label, OP write or read, BUSY_CS the guest CPU time
# of the run in centiseconds (uptime - idle: instructions / 10^7 under
# -icount shift=0), a cross-check of the profile's total. The guest's
# /proc/kallsyms and /proc/modules (every module stays loaded, so these are
# the addresses that ran) leave through a disk that a host post-check
# unpacks into SYMDIR: too much for the serial line.
# harness: disk syms 32M
set -eu
MIB=64
SECTOR=4096
RUNS="aesni engine"
SYMDIR=/tmp
KEY=/tmp/prof.key

modprobe brd rd_nr=1 rd_size=$((MIB * 1024 + 4096))
modprobe -a dm_crypt aesni_intel xts virtio_pci crypto_null
head -c 64 /dev/urandom >"$KEY"

busy_cs() {
	awk '{ printf "%d\n", ($1 - $2) * 100 + 0.5 }' /proc/uptime
}

wants() {
	case " $RUNS " in *" $1 "*) return 0 ;; esac
	return 1
}

# settle: wait (at most 60 s of guest time) until a second passes with no
# guest CPU time spent, so that work left over from boot or module loading
# (6.12 runs crypto self-tests in kernel threads) stays out of the profiles.
settle() {
	i=0
	while [ $i -lt 60 ]; do
		t0=$(busy_cs)
		sleep 1
		[ $(($(busy_cs) - t0)) -gt 0 ] || return 0
		i=$((i + 1))
	done
	echo "# guest did not settle" >&2
}

label=0
# profile NAME: open the mapping, write it once (brd allocates its pages),
# then one profiled write and one profiled read of the whole device.
profile() {
	name=$1
	if [ "$name" = null ]; then
		dmsetup create prof --table "0 $((MIB * 2048)) crypt cipher_null-ecb - 0 /dev/ram0 0 1 sector_size:$SECTOR"
	else
		cryptsetup open --type plain --cipher aes-xts-plain64 \
			--key-size 512 --sector-size "$SECTOR" \
			--key-file "$KEY" /dev/ram0 prof
	fi
	dev=/dev/mapper/prof
	driver=$(awk '/^driver/ { d = $3 } /^refcnt/ && $3 > 1 && (d ~ /^xts/ || d ~ /null/) { print d; exit }' /proc/crypto)
	dd if=/dev/zero of="$dev" bs=1M count="$MIB" oflag=direct 2>/dev/null
	sync
	for op in write read; do
		label=$((label + 1))
		settle
		t0=$(busy_cs)
		if [ "$op" = write ]; then
			tcgprof-mark run "$label" dd if=/dev/zero of="$dev" bs=1M count="$MIB" oflag=direct 2>/dev/null
		else
			tcgprof-mark run "$label" dd if="$dev" of=/dev/null bs=1M count="$MIB" iflag=direct 2>/dev/null
		fi
		t1=$(busy_cs)
		echo "PROFILE $label $name $op $MIB $SECTOR ${driver:--} $((t1 - t0))"
	done
	if [ "$name" = null ]; then dmsetup remove prof; else cryptsetup close prof; fi
}

wants aesni && profile aesni
wants null && profile null
if wants engine || wants fallback; then
	modprobe xts_offload threshold=0
	modprobe xts_offload_virtio
	grep -q ' /sys/kernel/debug debugfs ' /proc/mounts ||
		mount -t debugfs debugfs /sys/kernel/debug
	if wants engine; then
		profile engine
		# An engine run the engine never saw would profile the fallback.
		r=$(cat /sys/kernel/debug/xts_offload/stats/requests 2>/dev/null || echo 0)
		echo "# engine requests: $r"
		[ "$r" -gt 0 ] || { echo "tcg-profile: the engine took no request" >&2; exit 1; }
	fi
	if wants fallback; then
		for d in /sys/bus/virtio/drivers/xts_offload/virtio*; do
			echo "${d##*/}" >/sys/bus/virtio/drivers/xts_offload/unbind
		done
		profile fallback
	fi
fi

. /usr/share/fdekit/guest/lib.sh
cat /proc/kallsyms >/tmp/kallsyms
cat /proc/modules >/tmp/modules
tar -cf "$(disk_by_serial syms)" -C /tmp kallsyms modules
sync
postcheck "symbols saved" tar -xf @disk:syms -C "$SYMDIR"
