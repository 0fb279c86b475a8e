#!/bin/sh
# dm-crypt without its workqueues (--perf-no_read_workqueue
# --perf-no_write_workqueue) on xts-aes-offload with the engine: dm-crypt
# then submits each encrypted bio from the request's completion. Random
# writes of 4 KiB, 64 KiB and 1 MiB at iodepth 1, and random reads, each
# run must end (a completion in a softirq that interrupted a task inside
# submit_bio once lost the bio: the write never completed), and data
# written through the mapping reads back intact, and decrypts the same
# under xts-aes-aesni.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
ROUNDS=4
plan $((5 + ROUNDS * 4 + 4))

check "xts_offload loaded with threshold=0" xo_ensure 0
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
	--key-size 512 --sector-size 4096 \
	--perf-no_read_workqueue --perf-no_write_workqueue \
	--key-file - /dev/ram0 nowq0 </tmp/key >&2
result "cryptsetup open with --perf-no_read_workqueue --perf-no_write_workqueue" $?
dmsetup table nowq0 | grep -q 'no_read_workqueue.*no_write_workqueue\|no_write_workqueue.*no_read_workqueue'
result "the mapping runs without dm-crypt's workqueues" $?
check "the key's sessions exist" xo_sessions_ready nowq0

# fio_bounded LIMIT FIO-ARGS...: fio runs to its end within LIMIT seconds.
fio_bounded() {
	_limit=$1
	shift
	fio --name=nowq --filename=/dev/mapper/nowq0 --ioengine=libaio --direct=1 \
		--iodepth=1 --runtime=300ms --time_based --size=64M \
		--output-format=terse "$@" >/dev/null 2>&1 &
	_pid=$!
	_t=0
	while kill -0 "$_pid" 2>/dev/null; do
		if [ "$_t" -ge $((_limit * 10)) ]; then
			diag "fio $* still runs after $_limit s: dm inflight $(cat /sys/block/dm-0/inflight 2>/dev/null), engine in_flight $(xo_total in_flight)"
			kill -9 "$_pid" 2>/dev/null
			return 1
		fi
		sleep 0.1
		_t=$((_t + 1))
	done
	wait "$_pid"
}

r0=$(xo_total requests)
i=1
while [ $i -le $ROUNDS ]; do
	for bs in 4k 64k 1m; do
		check "round $i: random writes of $bs at iodepth 1 end" fio_bounded 120 --rw=randwrite --bs=$bs
	done
	check "round $i: random reads of 64k at iodepth 1 end" fio_bounded 120 --rw=randread --bs=64k
	i=$((i + 1))
done
r1=$(xo_total requests)
expect_ge "the engine took the I/O (requests +$((r1 - r0)))" $((r1 - r0)) 1000
diag "completed asynchronously $(xo_total completed_async), of which from the workqueue $(xo_total completed_deferred)"

random_file /tmp/plain 8
check "8 MiB written through the mapping read back intact" write_verify nowq0 /tmp/plain
check "cryptsetup close" xts_close nowq0
# The reference: the same key under xts-aes-aesni (dm-crypt's capi: form
# names the driver) must read back what went through the engine.
cryptsetup open --type plain --cipher capi:xts-aes-aesni-plain64 --hash plain \
	--key-size 512 --sector-size 4096 --key-file - /dev/ram0 nowqref </tmp/key >&2
result "open the same device under xts-aes-aesni" $?
check "xts-aes-aesni decrypts what the engine encrypted without workqueues" \
	readback_equal nowqref /tmp/plain
xts_close nowqref
rm -f /tmp/key
done_testing
