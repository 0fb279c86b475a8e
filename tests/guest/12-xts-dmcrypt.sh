#!/bin/sh
# dm-crypt aes-xts-plain64 (plain mode, 256/512-bit keys, 512/4096-byte
# sectors) on a ramdisk uses xts-aes-offload, the engine does the work, and
# the raw ciphertext equals OpenSSL's AES-XTS on the host.
# harness: disk scratch 36M
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 36

MIB=1048576
DATA_MIB=4
# Scratch disk layout, per case i: plaintext at i*8 MiB, ciphertext at
# i*8+4 MiB; the keys at 32 MiB + i*4 KiB. The host compares them.
check "xts_offload loaded with threshold=0" xo_ensure 0
scratch=$(disk_by_serial scratch)
result "scratch disk for the host post-check is present ($scratch)" $?
[ -n "$scratch" ] || bail "no scratch disk"

i=0
for bits in 256 512; do
	for sector in 512 4096; do
		name="aes-xts-plain64 ${bits}-bit key, ${sector}-byte sectors"
		new_key /tmp/key $((bits / 8))
		ramdisk 8 || bail "cannot create /dev/ram0"
		ref0=$(crypto_field xts-aes-offload refcnt)
		check "$name: cryptsetup open (key from stdin)" \
			xts_open xts0 /dev/ram0 /tmp/key $bits $sector
		ref1=$(crypto_field xts-aes-offload refcnt)
		expect_ge "$name: the mapping holds xts-aes-offload (/proc/crypto refcnt $ref0 -> $ref1)" \
			"$ref1" $((ref0 + 1))
		dmsetup table xts0 | sed 's/^/# /'

		random_file /tmp/plain $DATA_MIB
		# setkey (the open) created the key's sessions.
		xo_sessions_ready xts0 || diag "$name: no sessions for the key after 30 s"
		req0=$(xo_total requests)
		byt0=$(xo_total bytes)
		bh0=$(xo_total completed_bh)
		dd if=/tmp/plain of=/dev/mapper/xts0 bs=64k oflag=direct conv=fsync 2>/dev/null
		result "$name: write ${DATA_MIB} MiB without I/O error" $?
		req1=$(xo_total requests)
		byt1=$(xo_total bytes)
		bh1=$(xo_total completed_bh)
		diag "engine: +$((req1 - req0)) requests, +$((byt1 - byt0)) bytes"
		expect_ge "$name: the engine encrypted every sector (requests +$((req1 - req0)))" \
			$((req1 - req0)) $((DATA_MIB * MIB / sector))
		# dm-crypt may submit a bio from an encryption's callback: never
		# run in the engine's softirq, always by the completion workers.
		expect_eq "$name: no encryption completed in the engine's bottom half" 0 $((bh1 - bh0))
		a0=$(xo_total completed_async)
		check "$name: reads back the same data" readback_equal xts0 /tmp/plain
		diag "reads: +$(($(xo_total completed_async) - a0)) completed asynchronously, +$(($(xo_total completed_bh) - bh1)) of them in the engine's bottom half"
		check "$name: cryptsetup close" xts_close xts0

		drop_caches
		dd if=/tmp/plain of="$scratch" bs=1M seek=$((i * 8)) conv=fsync 2>/dev/null &&
		dd if=/dev/ram0 of="$scratch" bs=1M count=$DATA_MIB seek=$((i * 8 + 4)) conv=fsync 2>/dev/null &&
		dd if=/tmp/key of="$scratch" bs=4096 seek=$((8192 + i)) conv=fsync 2>/dev/null ||
			diag "copying case $i to the scratch disk failed"
		postcheck "$name: raw ciphertext equals OpenSSL AES-XTS plain64" \
			xts-ref check --key "@disk:scratch:$((32 * MIB + i * 4096))" \
			--key-bytes $((bits / 8)) --sector-size $sector \
			--plain "@disk:scratch:$((i * 8 * MIB))" \
			--cipher "@disk:scratch:$((i * 8 * MIB + DATA_MIB * MIB))" \
			--bytes $((DATA_MIB * MIB))
		i=$((i + 1))
	done
done
rm -f /tmp/key
# Decryptions that went well, completed asynchronously, complete in the
# engine's tasklet (dm-crypt's read callback only ends the bio).
expect_ge "decryptions completed in the engine's bottom half (completed_bh $(xo_total completed_bh))" \
	"$(xo_total completed_bh)" 1

# Per-queue submissions (debugfs) account for every request the engine did.
# The default device has one data queue; 18-xts-multiqueue.sh checks the
# spreading over several.
queues=/sys/kernel/debug/xts_offload/$(xo_vdev)/queues
sed 's/^/# /' "$queues"
expect_ge "per-queue submissions (debugfs) cover every engine request" \
	"$(awk '{ n += $2 } END { print n + 0 }' "$queues")" \
	"$(( $(xo_dev_counter requests) + $(xo_dev_counter errors) ))"
done_testing
