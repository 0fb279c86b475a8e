#!/bin/sh
# Multi-queue: on a virtio-crypto device with several data queues (the
# harness's --crypto-queues N, which the guest sees as fdekit.crypto_queues=N)
# the module uses all N: dm-crypt's requests spread over every data queue,
# the device computes each one (no engine error, no fallback), the data reads
# back intact, and the raw ciphertext equals the kernel's xts-aes-aesni on
# the same key. With the default device (one data queue) every test is
# skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 17

MIB=1048576
DATA_MIB=4
queues=$(sed -n 's/.*fdekit\.crypto_queues=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
if [ -z "$queues" ] || [ "$queues" -le 1 ]; then
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		skip "multi-queue test $((_tap_n + 1))" \
			"the device has one data queue (run-guest.py --crypto-queues N)"
	done
	done_testing
fi

check "xts_offload loaded with threshold=0" xo_ensure 0
vdev=$(xo_vdev)
xo_bound
result "the virtio-crypto device ($vdev) is bound to xts_offload" $?
queues_file=/sys/kernel/debug/xts_offload/$vdev/queues
[ -r "$queues_file" ] || bail "no $queues_file: the device is not bound"
expect_eq "the driver set up all $queues data queues ($queues_file)" \
	"$queues" "$(wc -l <"$queues_file")"

# queue_counts: the submission count of each data queue, in queue order.
queue_counts() {
	awk '{ print $2 }' "$queues_file"
}

# queue_increase BEFORE AFTER: each queue's increase, one a line.
queue_increase() {
	echo "$1" >/tmp/mq-before
	echo "$2" >/tmp/mq-after
	paste /tmp/mq-before /tmp/mq-after | awk '{ print $2 - $1 }'
}

# spread INCREASE...: every queue took at least a quarter of its fair share
# (round robin gives each about total/N).
spread() {
	printf '%s\n' "$@" | awk -v n="$queues" '
		{ d[NR] = $1; total += $1 }
		END {
			if (NR != n || total < n)
				exit 1
			for (i = 1; i <= n; i++)
				if (d[i] * 4 * n < total)
					exit 1
		}'
}

# Both ramdisks hold exactly DATA_MIB: /dev/ram0 under the module, /dev/ram1
# under xts-aes-aesni (dm-crypt's capi: form names the driver).
for bits_sector in 512:4096 256:512; do
	bits=${bits_sector%:*}
	sector=${bits_sector#*:}
	name="${bits}-bit key, ${sector}-byte sectors"
	sectors=$((DATA_MIB * MIB / sector))
	if grep -q '^brd ' /proc/modules; then
		rmmod brd >&2 || bail "cannot reload brd"
	fi
	modprobe brd rd_nr=2 rd_size=$((DATA_MIB * 1024)) >&2 || bail "no ramdisks"
	new_key /tmp/key $((bits / 8))
	xts_open mq0 /dev/ram0 /tmp/key "$bits" "$sector" &&
		cryptsetup open --type plain --cipher capi:xts-aes-aesni-plain64 \
			--hash plain --key-size "$bits" --sector-size "$sector" \
			--key-file - /dev/ram1 mqref </tmp/key >&2
	result "$name: open the mapping under test and the xts-aes-aesni reference" $?
	rm -f /tmp/key
	dmsetup table mq0 | sed 's/^/# /'
	dmsetup table mqref | sed 's/^/# /'

	random_file /tmp/plain $DATA_MIB
	# The key's sessions come from a worker after its first request.
	xo_sessions_ready mq0 || diag "$name: no engine sessions for the key after 30 s"
	q0=$(queue_counts)
	req0=$(xo_dev_counter requests)
	err0=$(xo_dev_counter errors)
	check "$name: write ${DATA_MIB} MiB and read them back intact" \
		write_verify mq0 /tmp/plain
	q1=$(queue_counts)
	req1=$(xo_dev_counter requests)
	err1=$(xo_dev_counter errors)
	inc=$(queue_increase "$q0" "$q1")
	diag "per-queue submissions: +$(echo $inc | sed 's/ / +/g')"
	# $inc unquoted: one argument per queue.
	check "$name: requests spread over all $queues data queues" spread $inc
	expect_ge "$name: the device encrypted and decrypted every sector (requests +$((req1 - req0)))" \
		$((req1 - req0)) $((2 * sectors))
	expect_eq "$name: the device failed no request (errors)" 0 $((err1 - err0))

	dd if=/tmp/plain of=/dev/mapper/mqref bs=64k oflag=direct conv=fsync 2>/dev/null ||
		diag "writing through the reference mapping failed"
	drop_caches
	check "$name: raw ciphertext equals xts-aes-aesni's" cmp /dev/ram0 /dev/ram1
	check "$name: close both mappings" \
		sh -c 'cryptsetup close mq0 && cryptsetup close mqref'
done
rm -f /tmp/plain /tmp/mq-before /tmp/mq-after
done_testing
