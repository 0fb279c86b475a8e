#!/bin/sh
# The engine interface, through the loopback test engine: the choice among
# several engines (priority, then load), capabilities an engine declares and
# the core honours (key sizes, length granularity, in place, per-job room),
# and paths QEMU's device never takes: completions out of order, a full
# queue, an engine that vanishes with jobs in flight (-ESTALE), out of place
# and in place. Every mapping's raw ciphertext is compared with the same
# data written through xts-aes-aesni.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 99

MIB=1048576
DATA_MIB=4
LB=/sys/module/xts_offload_loopback/parameters
# Engine 0's device is xts_offload_loopback, engine N's xts_offload_loopback.N.
LBD=$XO_DEBUGFS/xts_offload_loopback
LBD1=$XO_DEBUGFS/xts_offload_loopback.1
lb() { cat "$LBD/$1"; }
lb1() { cat "$LBD1/$1"; }


check "xts_offload loaded with threshold=0" xo_ensure 0
random_file /tmp/plain $DATA_MIB
sectors=$((DATA_MIB * MIB / 4096))

# 1. Several engines: priority first, then the least loaded.
check "two loopback engines of equal priority register (count=2)" lb_load count=2
ramdisks 4 || bail "cannot create ramdisks"
i=0
while [ $i -lt 4 ]; do
	new_key /tmp/key 64
	xts_open "lbm$i" "/dev/ram$i" /tmp/key 512 4096 >&2
	rm -f /tmp/key
	xo_sessions_ready "lbm$i" || diag "lbm$i: no engine sessions after 30 s"
	i=$((i + 1))
done
expect_eq "four keys spread over two equal engines: 2 keys (4 sessions) each" "4 4" \
	"$(lb sessions) $(lb1 sessions)"
for i in 0 1 2 3; do xts_close "lbm$i"; done
check "a higher priority wins over load (count=2 priority=10,20)" lb_load count=2 priority=10,20
new_key /tmp/key 64
xts_open lbm0 /dev/ram0 /tmp/key 512 4096 >&2
rm -f /tmp/key
xo_sessions_ready lbm0 || diag "lbm0: no engine sessions after 30 s"
expect_eq "the key is on engine 1 (priority 20), none on engine 0" "0 2" \
	"$(lb sessions) $(lb1 sessions)"
xts_close lbm0
# The virtio-crypto engine's priority is a parameter of its module.
vdev=$(xo_vdev)
# virtio_reload [PARAM=VALUE...]
virtio_reload() {
	xo_rmmod xts_offload_virtio && modprobe xts_offload_virtio "$@" >&2
}
check "xts_offload_virtio reloaded with priority=30" virtio_reload priority=30
expect_eq "debugfs engines shows it ($vdev priority=30)" 30 "$(engine_field "$vdev" priority)"
vs0=$(xo_dev_counter sessions)
new_key /tmp/key 64
xts_open lbm0 /dev/ram0 /tmp/key 512 4096 >&2
rm -f /tmp/key
xo_sessions_ready lbm0 || diag "lbm0: no engine sessions after 30 s"
expect_eq "a new key goes to virtio-crypto (30) over the loopback engines (10, 20)" \
	"0 0 $((vs0 + 2))" "$(lb sessions) $(lb1 sessions) $(xo_dev_counter sessions)"
xts_close lbm0
check "xts_offload_virtio reloaded with its default priority" virtio_reload
expect_eq "debugfs engines shows priority=0" 0 "$(engine_field "$vdev" priority)"

# 2. Declared capabilities: AES-128-XTS only, lengths in 4096-byte units,
# out of place only. The engine counts what reaches it outside them.
dmesg -c >/dev/null
check "an engine declaring keysizes=256 granularity=4096 no_inplace=1 registers" \
	lb_load keysizes=256 granularity=4096 no_inplace=1
expect_eq "debugfs engines shows its declaration" "256 4096 0" \
	"$(engine_field xts_offload_loopback key_bits) $(engine_field xts_offload_loopback len_align) $(engine_field xts_offload_loopback inplace)"
check "its known-answer test passed (out of place only, 256-bit keys only)" \
	sh -c "dmesg | grep -q 'xts_offload_loopback: xts(aes) engine registered (known-answer test passed)'"

check "256-bit key, 4096-byte sectors: open the pair" pair_open 256 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
expect_eq "the key is bound to the loopback engine" 2 "$(lb sessions)"
r0=$(lb requests)
i0=$(lb fallback_inplace)
ti0=$(xo_total fallback_inplace)
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
r1=$(lb requests)
i1=$(lb fallback_inplace)
expect_ge "writes (out of place) went to the engine (requests +$((r1 - r0)))" \
	$((r1 - r0)) $sectors
expect_ge "reads (in place) did not: fallback_inplace +$((i1 - i0)) on the engine" \
	$((i1 - i0)) $sectors
expect_ge "and in the totals (+$(($(xo_total fallback_inplace) - ti0)))" \
	$(($(xo_total fallback_inplace) - ti0)) $sectors
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

check "256-bit key, 512-byte sectors: open the pair" pair_open 256 512
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
r0=$(lb requests)
l0=$(lb fallback_length)
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_eq "512-byte requests never reach an engine of 4096-byte granularity" 0 \
	$(($(lb requests) - r0))
expect_ge "they count as fallback_length on the engine (+$(($(lb fallback_length) - l0)))" \
	$(($(lb fallback_length) - l0)) $((2 * DATA_MIB * MIB / 512))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

check "512-bit key: open the pair" pair_open 512 4096
r0=$(lb requests)
v0=$(xo_dev_counter requests)
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_eq "a key size the loopback engine lacks never reaches it" 0 $(($(lb requests) - r0))
expect_ge "the virtio-crypto engine, lower in priority, takes it (requests +$(($(xo_dev_counter requests) - v0)))" \
	$(($(xo_dev_counter requests) - v0)) $((2 * sectors))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

vdev=$(xo_vdev)
echo "$vdev" >"$XO_DRV/unbind"
check "512-bit key, no engine for it: open the pair" pair_open 512 4096
k0=$(xo_total fallback_keysize)
dd if=/dev/zero of=/dev/mapper/lbt bs=64k count=1 oflag=direct 2>/dev/null
sleep 1
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_ge "its requests count as fallback_keysize (+$(($(xo_total fallback_keysize) - k0)))" \
	$(($(xo_total fallback_keysize) - k0)) $((2 * sectors))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close
echo "$vdev" >"$XO_DRV/bind"
wait_until 10 xo_bound
result "the virtio-crypto device binds again" $?

check "AF_ALG, 256-bit keys, random lengths, in and out of place, equals xts(ecb(aes-generic))" \
	xts-afalg compare xts-aes-offload 'xts(ecb(aes-generic))' -n 60 -k 32
expect_eq "nothing outside the declaration reached the engine (violations)" 0 "$(lb violations)"

check "rmmod xts_offload_loopback" xo_rmmod xts_offload_loopback
dmesg -c >/dev/null
if modprobe xts_offload_loopback priv_size=100000 2>/dev/null; then
	not_ok "an engine declaring more per-job room than the core has is refused"
else
	ok "an engine declaring more per-job room than the core has is refused"
fi
check "the log says why" sh -c "dmesg | grep -q 'engine refused: priv_size above XO_JOB_PRIV_SIZE'"

# An engine that answers after the known-answer test gave up (5 s) is
# refused, and the job it still holds completes before its module goes:
# insmod returns once the late answer is in, and nothing of the refused
# engine is left for it to land on. Before, the job's timer fired a second
# after the module had gone, into a destroyed workqueue and freed memory.
# busybox's insmod and modprobe try init_module() again when
# finit_module() fails, for whatever reason: each attempt's late answer is
# waited for, so the load takes at least 6 s per attempt the log shows.
dmesg -c >/dev/null
f0=$(xo_total in_flight)
t0=$(cut -d. -f1 /proc/uptime)
if insmod "/lib/modules/$(uname -r)/extra/xts_offload_loopback.ko" delay_ms=6000 2>/dev/null; then
	rmmod xts_offload_loopback
	not_ok "delay_ms=6000: an engine slower than the known-answer test's 5 s is refused"
else
	ok "delay_ms=6000: an engine slower than the known-answer test's 5 s is refused"
fi
t1=$(cut -d. -f1 /proc/uptime)
tries=$(dmesg | grep -c 'known-answer test: the engine did not answer within 5 s')
expect_ge "the log says it did not answer in time" "$tries" 1
expect_ge "insmod returned only after the late answers ($tries attempts, $((t1 - t0)) s)" \
	$((t1 - t0)) $((6 * tries))
# Past the late answer's due time even if insmod had not waited for it.
sleep 2
expect_eq "no job left in flight (in_flight total)" "$f0" "$(xo_total in_flight)"
check "a loopback engine loads and passes its test afterwards" lb_load

# 3. Completions out of order.
check "reorder=8: jobs held in batches of 8, completed last first" lb_load reorder=8
check "512-bit key: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
r0=$(lb requests)
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_ge "the engine did it (requests +$(($(lb requests) - r0)))" $(($(lb requests) - r0)) $((2 * sectors))
expect_ge "completions came out of order (reordered: $(lb reordered))" "$(lb reordered)" 1
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

# 4. A full queue: what does not fit runs in software, no waiting.
check "queue_depth=2 delay_ms=1: at most 2 jobs in flight" lb_load queue_depth=2 delay_ms=1
check "512-bit key: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
b0=$(xo_total fallback_busy)
r0=$(lb requests)
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_ge "the engine took some (requests +$(($(lb requests) - r0)))" $(($(lb requests) - r0)) 1
expect_ge "the rest found the queue full (fallback_busy: engine $(lb fallback_busy), total +$(($(xo_total fallback_busy) - b0)))" \
	"$(lb fallback_busy)" 1
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

# 5. Completions reported inside another job's submit call (inline_done=1),
# as a driver that reaps its ring when it submits. The core must only
# queue them there: no caller's callback runs inside a submit call, so a
# callback that submits again (dm-crypt without its write workqueue)
# re-enters nothing (28-xts-engine-api.sh does the same under model=ccp's
# backlog). fio keeps requests in flight (one CPU: otherwise no submit
# call comes while jobs wait).
check "inline_done=1: finished jobs are reported from the next submit call" lb_load inline_done=1
check "512-bit key: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
r0=$(lb requests)
check "fio: random writes at iodepth 16, read back and verified" inline_io lbt
expect_ge "the engine did it (requests +$(($(lb requests) - r0)))" $(($(lb requests) - r0)) $((2 * sectors))
expect_ge "jobs were reported inside another job's submit call (reaped_inline $(lb reaped_inline))" \
	"$(lb reaped_inline)" 1
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close
ramdisks 1 || bail "cannot create a ramdisk"
new_key /tmp/key 64
cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain --key-size 512 \
	--sector-size 4096 --perf-no_read_workqueue --perf-no_write_workqueue \
	--key-file - /dev/ram0 lbnowq </tmp/key >&2
result "a mapping without dm-crypt's workqueues on it" $?
rm -f /tmp/key
xo_sessions_ready lbnowq || diag "no engine sessions for the key after 30 s"
i0=$(lb reaped_inline)
check "without workqueues: fio's random writes and reads end, verified" inline_io lbnowq
expect_ge "without workqueues: jobs were reported inside a submit call (reaped_inline +$(($(lb reaped_inline) - i0)))" \
	$(($(lb reaped_inline) - i0)) 1
check "without workqueues: write 4 MiB and read it back" write_verify lbnowq /tmp/plain
check "close it" xts_close lbnowq
expect_eq "the engine saw nothing it does not take (violations)" 0 "$(lb violations)"

# 6. Surprise removal with jobs in flight. The engine holds every job
# (hang=1), then vanishes (gone=1): what it held may have been written
# (it writes dst), and fails with -ESTALE.
# in_flight_above N: the loopback engine holds more than N jobs.
in_flight_above() {
	[ "$(lb in_flight)" -gt "$1" ]
}

check "load a fresh loopback engine" lb_load
check "512-bit key: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
e0=$(xo_total fallback_error)
echo 1 >"$LB/hang"
rm -f /tmp/dd.rc
(dd if=/tmp/plain of=/dev/mapper/lbt bs=64k oflag=direct conv=fsync 2>/dev/null
 echo $? >/tmp/dd.rc) &
wait_until 30 in_flight_above 0
result "a write is held in the engine (in_flight $(lb in_flight))" $?
dmesg -c >/dev/null
echo 1 >"$LB/gone"
wait_until 60 test -s /tmp/dd.rc
expect_eq "the engine vanishes: the write (out of place) completes without error" 0 "$(cat /tmp/dd.rc 2>/dev/null)"
expect_eq "gone reads 1; the engine is no longer registered" "1 0" \
	"$(cat "$LB/gone") $(grep -c '^xts_offload_loopback ' "$XO_DEBUGFS/engines")"
expect_ge "the jobs it held were recomputed in software (errors $(lb errors), fallback_error +$(($(xo_total fallback_error) - e0)))" \
	$(($(xo_total fallback_error) - e0)) 1
# Every keyed tfm rebinds when an engine goes: the dead engine's binding,
# and with it the reference on its module, is dropped at once, not at the
# mapping's next request (the mapping stays open and idle here).
lb_gone() { ! xo_mod_loaded xts_offload_loopback || rmmod xts_offload_loopback 2>/dev/null; }
wait_until 10 lb_gone
result "the mapping open and idle, rmmod xts_offload_loopback succeeds" $?
check "it reads back intact" readback_equal lbt /tmp/plain
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
# ... and when one comes: a better engine takes over live bindings.
lb_sessions_2() { [ "$(lb sessions)" -ge 2 ]; }
check "load a loopback engine (priority 10, above virtio-crypto's 0)" lb_load
wait_until 10 lb_sessions_2
result "the open, idle mapping's key moves to it (its sessions $(lb sessions 2>/dev/null))" $?
check "close the pair" pair_close

check "load a fresh loopback engine" lb_load
check "512-bit key: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
check "write 4 MiB through it" write_verify lbt /tmp/plain
drop_caches
echo 1 >"$LB/hang"
rm -f /tmp/dd.rc /tmp/back
(dd if=/dev/mapper/lbt of=/tmp/back bs=64k iflag=direct 2>/dev/null
 echo $? >/tmp/dd.rc) &
wait_until 30 in_flight_above 0
result "a read is held in the engine (in_flight $(lb in_flight))" $?
dmesg -c >/dev/null
echo 1 >"$LB/gone"
wait_until 60 test -s /tmp/dd.rc
rc=$(cat /tmp/dd.rc 2>/dev/null)
[ -n "$rc" ] && [ "$rc" -ne 0 ]
result "the engine vanishes: the read (in place, -ESTALE) is an I/O error (dd exit $rc)" $?
check "the kernel log says why" \
	sh -c "dmesg | grep -q 'in-place request failed in the engine after it may have written'"
n=$(stat -c %s /tmp/back 2>/dev/null || echo 0)
head -c "$n" /tmp/plain | cmp -s - /tmp/back
result "what the read returned before the error is right ($n bytes)" $?
check "read back intact afterwards" readback_equal lbt /tmp/plain
check "close the pair" pair_close
check "rmmod xts_offload_loopback" xo_rmmod xts_offload_loopback
rm -f /tmp/plain /tmp/back /tmp/dd.rc
done_testing
