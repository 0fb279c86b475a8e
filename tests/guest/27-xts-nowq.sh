#!/bin/sh
# dm-crypt without its workqueues (--perf-no_read_workqueue
# --perf-no_write_workqueue) on xts-aes-offload with the engine: dm-crypt
# then submits each encrypted bio from the request's completion. Random
# writes of 4 KiB, 64 KiB and 1 MiB at iodepth 1, and random reads, each
# run must end (a completion in a softirq that interrupted a task inside
# submit_bio once lost the bio: the write never completed), and data
# written through the mapping reads back intact, and decrypts the same
# under xts-aes-aesni. Then the same on null_blk, a blk-mq device: there a
# completion in a softirq that interrupted a task under a plug (fio's
# io_submit) once lost the request. The core now runs every engine
# completion from its per-CPU completion worker (process context), so
# dm-crypt's submission from the callback neither borrows a task's
# block-layer state nor sleeps in atomic context: the debug kernel
# (scripts/debug-kernel) reports nothing here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
ROUNDS=4
# null_blk: without the fix a round of the job file hung in its first run.
NULLB_ROUNDS=2
plan $((5 + ROUNDS * 4 + 4 + 2 + NULLB_ROUNDS + 1))

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

# dm_inflight NAME: the mapping's reads and writes in flight (sysfs).
dm_inflight() {
	for _d in /sys/block/dm-*; do
		[ "$(cat "$_d/dm/name" 2>/dev/null)" = "$1" ] && cat "$_d/inflight"
	done
}

# fio_wait PID LIMIT WHAT: the fio run PID (on $FIO_MAPPING) ends within
# LIMIT seconds, with its status; else it is killed and this fails.
fio_wait() {
	_t=0
	while kill -0 "$1" 2>/dev/null; do
		if [ "$_t" -ge $(($2 * 10)) ]; then
			diag "$3 still runs after $2 s: dm inflight $(dm_inflight "$FIO_MAPPING"), engine in_flight $(xo_total in_flight)"
			kill -9 "$1" 2>/dev/null
			return 1
		fi
		sleep 0.1
		_t=$((_t + 1))
	done
	wait "$1"
}

# fio_bounded LIMIT FIO-ARGS...: fio runs to its end within LIMIT seconds.
fio_bounded() {
	_limit=$1
	shift
	fio --name=nowq --filename=/dev/mapper/$FIO_MAPPING --ioengine=libaio --direct=1 \
		--iodepth=1 --runtime=300ms --time_based --size=64M \
		--output-format=terse "$@" >/dev/null 2>&1 &
	fio_wait $! "$_limit" "fio $*"
}

FIO_MAPPING=nowq0
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
diag "completed asynchronously (from the completion worker) $(xo_total completed_async)"

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

# null_blk: blk-mq, no data kept; fio's libaio submissions run under a plug.
modprobe null_blk nr_devices=1 gb=1 >&2 && [ -b /dev/nullb0 ] &&
	cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
		--key-size 512 --sector-size 4096 \
		--perf-no_read_workqueue --perf-no_write_workqueue \
		--key-file - /dev/nullb0 nowq1 </tmp/key >&2
result "a no-workqueue mapping on null_blk" $?
check "its key's sessions exist" xo_sessions_ready nowq1
FIO_MAPPING=nowq1
# One fio run of the cells that hung in bench/fde-matrix: reads (as a
# read/write mix of 100% reads, as there) and writes of 4k and 16m at
# iodepth 1 and 32, 100 ms each, one after another.
nullb_jobs() {
	printf '[global]\nioengine=libaio\ndirect=1\nfilename=/dev/mapper/nowq1\ntime_based=1\nruntime=100ms\nstonewall\n'
	for rw in read write; do
		for qd in 1 32; do
			for bs in 4k 16m; do
				printf '[%s-%s-%s]\n' $rw $bs $qd
				[ $rw = read ] && printf 'rw=rw\nrwmixread=100\n' || printf 'rw=write\n'
				printf 'bs=%s\niodepth=%s\n' $bs $qd
			done
		done
	done
}
nullb_jobs >/tmp/nowq.fio
# fio_jobs_bounded LIMIT: the job file runs to its end within LIMIT seconds.
fio_jobs_bounded() {
	fio --output-format=terse /tmp/nowq.fio >/dev/null 2>&1 &
	fio_wait $! "$1" "fio /tmp/nowq.fio"
}
r0=$(xo_total requests)
i=1
while [ $i -le $NULLB_ROUNDS ]; do
	if fio_jobs_bounded 300; then
		ok "null_blk, round $i: reads and writes of 4k and 16m at iodepth 1 and 32 end"
	else
		# The mapping has a request that will never end: no more rounds.
		while [ $i -le $NULLB_ROUNDS ]; do
			not_ok "null_blk, round $i: reads and writes of 4k and 16m at iodepth 1 and 32 end"
			i=$((i + 1))
		done
	fi
	i=$((i + 1))
done
expect_ge "the engine took the I/O (requests +$(($(xo_total requests) - r0)))" \
	$(($(xo_total requests) - r0)) 1000
diag "completed asynchronously (from the completion worker) $(xo_total completed_async)"
xts_close nowq1
rmmod null_blk
rm -f /tmp/key /tmp/nowq.fio
done_testing
