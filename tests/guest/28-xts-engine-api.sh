#!/bin/sh
# The engine interface a PCIe card needs, through the loopback engine's
# CCP-like mode (model=ccp): per-request room sized and aligned by the
# engine (192 bytes at 64), lengths of 16 to 4096 bytes in powers of two
# only (len_mask), a queue of 4 whose overflow waits in the core's backlog
# for callers that allow it (dm-crypt), a per-job timeout that aborts a
# lost job without retiring the engine, and a reset (pause, resume) that
# keeps the key's binding. Every mapping's raw ciphertext is compared with
# xts-aes-aesni's, every AF_ALG result with the kernel's software xts.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 83

MIB=1048576
DATA_MIB=4
LB=/sys/module/xts_offload_loopback/parameters
LBD=$XO_DEBUGFS/xts_offload_loopback
lb() { cat "$LBD/$1"; }
lb_sessions_2() { [ "$(lb sessions 2>/dev/null)" -ge 2 ] 2>/dev/null; }

check "xts_offload loaded with threshold=0" xo_ensure 0
check "no loopback engine to begin with" xo_rmmod xts_offload_loopback
random_file /tmp/plain $DATA_MIB
sectors=$((DATA_MIB * MIB / 4096))
echo "28-xts-engine-api: start" >/dev/kmsg

# 1. The declaration's range: priv_align must be a power of two.
if modprobe xts_offload_loopback model=ccp priv_align=48 2>/dev/null; then
	rmmod xts_offload_loopback
	not_ok "priv_align=48 (not a power of two): the engine is refused"
else
	ok "priv_align=48 (not a power of two): the engine is refused"
fi
check "the log names the field" sh -c "dmesg | grep -q 'engine refused: priv_align not a power of two'"

# 2. A tfm created before a bigger engine registered has too little room
# for it: its requests run in software (fallback_layout), never on it.
check "512-bit key, 4096-byte sectors, before the CCP-like engine: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
check "model=ccp: the CCP-like engine registers" lb_load model=ccp
# priv_size: 192, or its job's size where that is more (debug kernels).
expect_eq "debugfs engines shows its declaration (len_mask, priv_align, max_len)" \
	"0x1ff0 64 4096" \
	"$(engine_field xts_offload_loopback len_mask) $(engine_field xts_offload_loopback priv_align) $(engine_field xts_offload_loopback max_len)"
expect_ge "and at least 192 bytes of per-job room (priv_size $(engine_field xts_offload_loopback priv_size))" \
	"$(engine_field xts_offload_loopback priv_size)" 192
wait_until 10 lb_sessions_2
result "the open mapping's key moves to it (priority 10)" $?
r0=$(lb requests)
l0=$(lb fallback_layout)
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_eq "the older tfm sends the engine nothing" 0 $(($(lb requests) - r0))
expect_ge "its requests count as fallback_layout on the engine (+$(($(lb fallback_layout) - l0)))" \
	$(($(lb fallback_layout) - l0)) $((2 * sectors))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

# 3. dm-crypt on the CCP-like engine, 4096- and 512-byte sectors; the
# queue of 4 overflows: dm-crypt allows the backlog, so nothing spills to
# software.
# 4096-byte sectors: 4 MiB, each job a jiffy late so the queue surely
# fills; 512-byte sectors: 1 MiB (4096 jobs), at full speed.
random_file /tmp/plain1 1
for run in 4096:/tmp/plain:1 512:/tmp/plain1:0; do
	sector=${run%%:*}
	file=${run#*:}
	file=${file%:*}
	echo "${run##*:}" >"$LB/delay_ms"
	check "512-bit key, $sector-byte sectors: open the pair" pair_open 512 $sector
	xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
	r0=$(lb requests)
	b0=$(lb backlogged)
	f0=$(lb fallback_busy)
	check "$sector-byte sectors: write $(($(stat -c %s $file) / MIB)) MiB and read it back" \
		write_verify lbt $file
	expect_ge "$sector-byte sectors: the engine did it (requests +$(($(lb requests) - r0)))" \
		$(($(lb requests) - r0)) $((2 * $(stat -c %s $file) / sector))
	expect_ge "$sector-byte sectors: requests waited in the backlog (backlogged +$(($(lb backlogged) - b0)))" \
		$(($(lb backlogged) - b0)) 1
	expect_eq "$sector-byte sectors: none spilled to software (fallback_busy)" 0 $(($(lb fallback_busy) - f0))
	check "$sector-byte sectors: raw ciphertext equals xts-aes-aesni's" same_as_reference $file
	check "close the pair" pair_close
done
echo 0 >"$LB/delay_ms"
expect_ge "the totals count the backlog too (backlogged $(xo_total backlogged))" "$(xo_total backlogged)" 1

# The same, with the engine reporting the jobs it finished from the next
# submit call (inline_done=1, as a driver that reaps its ring when it
# submits): through the backlog, the core's submit calls run under its
# lock with interrupts off, and the engine completes other jobs there. fio
# keeps requests in flight.
check "model=ccp inline_done=1: reload" lb_load model=ccp inline_done=1
check "512-bit key, 4096-byte sectors: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
b0=$(lb backlogged)
f0=$(lb fallback_busy)
check "fio: random writes at iodepth 16, read back and verified" inline_io lbt
check "write 4 MiB and read it back" write_verify lbt /tmp/plain
expect_ge "requests waited in the backlog (backlogged +$(($(lb backlogged) - b0)))" \
	$(($(lb backlogged) - b0)) 1
expect_ge "jobs were reported inside submit calls (reaped_inline $(lb reaped_inline))" \
	"$(lb reaped_inline)" 1
expect_eq "none spilled to software (fallback_busy)" 0 $(($(lb fallback_busy) - f0))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close
echo 0 >"$LB/inline_done"

# 4. AF_ALG: lengths outside the mask go to software, and are right.
# afalg_one LEN: LEN random bytes under a fresh key through xts-aes-offload
# and xts-aes-aesni (one request each), the same output.
afalg_one() {
	head -c "$1" /dev/urandom >/tmp/os.in
	head -c 64 /dev/urandom >/tmp/os.key
	kcapi-enc -q -e -c xts-aes-offload --iv 000102030405060708090a0b0c0d0e0f \
		--keyfd 3 -i /tmp/os.in -o /tmp/os.out 3</tmp/os.key &&
		kcapi-enc -q -e -c xts-aes-aesni --iv 000102030405060708090a0b0c0d0e0f \
			--keyfd 3 -i /tmp/os.in -o /tmp/os.ref 3</tmp/os.key &&
		cmp /tmp/os.out /tmp/os.ref >&2
	_rc=$?
	rm -f /tmp/os.in /tmp/os.key /tmp/os.out /tmp/os.ref
	return $_rc
}
for n in 48 8192; do
	r0=$(lb requests)
	l0=$(lb fallback_length)
	check "AF_ALG, $n bytes (outside the mask): equals xts-aes-aesni" afalg_one $n
	expect_eq "$n bytes: not on the engine (requests +$(($(lb requests) - r0)), fallback_length +$(($(lb fallback_length) - l0)))" \
		"0 1" "$(($(lb requests) - r0)) $(($(lb fallback_length) - l0))"
done
r0=$(lb requests)
check "AF_ALG, 4096 bytes (in the mask): equals xts-aes-aesni" afalg_one 4096
expect_eq "4096 bytes: on the engine" 1 $(($(lb requests) - r0))
check "AF_ALG, random lengths and layouts, in and out of place, equal xts(ecb(aes-generic))" \
	xts-afalg compare xts-aes-offload 'xts(ecb(aes-generic))' -n 40 -k 64

# 5. A job the card loses: the per-job timeout (model=ccp: 1000 ms) aborts
# it (-ESTALE), the core recomputes it (a write: out of place), and the
# engine stays registered with the key bound.
check "512-bit key, 4096-byte sectors: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
t0=$(lb timeouts)
x0=$(lb expired)
m0=$(lb lost)
e0=$(lb fallback_error)
echo 1 >"$LB/lose"
check "lose=1: a 4 MiB write completes without error (bounded: 30 s)" \
	timeout 30 dd if=/tmp/plain of=/dev/mapper/lbt bs=64k oflag=direct conv=fsync
expect_eq "one job lost, aborted by the timeout (lost, expired, timeouts)" "1 1 1" \
	"$(($(lb lost) - m0)) $(($(lb expired) - x0)) $(($(lb timeouts) - t0))"
expect_ge "it was recomputed in software (fallback_error +$(($(lb fallback_error) - e0)))" \
	$(($(lb fallback_error) - e0)) 1
check "the data reads back intact" readback_equal lbt /tmp/plain
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
expect_eq "the engine is still registered, the key on it (2 sessions)" "1 2" \
	"$(grep -c '^xts_offload_loopback ' "$XO_DEBUGFS/engines") $(lb sessions)"
check "close the pair" pair_close

# 6. A reset (FLR) during a write: the engine pauses (new requests and the
# backlog in software), fails what it held (-ESTALE: recomputed), forgets
# its sessions; on resume the core recreates the key's sessions on the
# same engine. No job timeout here, so that only the reset ends the jobs
# held (hang=1).
in_flight_above() { [ "$(lb in_flight)" -gt "$1" ]; }
sessions_2() { [ "$(lb sessions)" -eq 2 ]; }
expect_eq "so far nothing outside the declaration reached the engine, its room always aligned (violations)" \
	0 "$(lb violations)"
check "model=ccp job_timeout_ms=0: reload" lb_load model=ccp job_timeout_ms=0
check "512-bit key, 4096-byte sectors: open the pair" pair_open 512 4096
xo_sessions_ready lbt || diag "no engine sessions for the key after 30 s"
v0=$(xo_dev_counter requests)
f0=$(lb reset_failed)
n0=$(lb fallback_noengine)
echo 1 >"$LB/hang"
rm -f /tmp/dd.rc
(dd if=/tmp/plain of=/dev/mapper/lbt bs=64k oflag=direct conv=fsync 2>/dev/null
 echo $? >/tmp/dd.rc) &
wait_until 30 in_flight_above 0
result "a write is held in the engine (in_flight $(lb in_flight))" $?
echo 0 >"$LB/hang"
echo "28-xts-engine-api: reset" >/dev/kmsg
echo 1 >"$LB/reset"
wait_until 60 test -s /tmp/dd.rc
expect_eq "reset=1: the write completes without error" 0 "$(cat /tmp/dd.rc 2>/dev/null)"
expect_ge "the reset failed the jobs the engine held (reset_failed +$(($(lb reset_failed) - f0)))" \
	$(($(lb reset_failed) - f0)) 1
expect_ge "what waited in the backlog ran in software (fallback_noengine +$(($(lb fallback_noengine) - n0)) on the engine)" \
	$(($(lb fallback_noengine) - n0)) 1
check "the log says the engine resumed with the key's sessions recreated" \
	sh -c "dmesg | sed -n '/28-xts-engine-api: reset/,\$p' | grep -q 'engine resumed: sessions of 1 keys recreated'"
wait_until 10 sessions_2
result "the old sessions destroyed, the new ones held: 2 sessions on the same engine" $?
expect_eq "still registered, not paused" "1 0" \
	"$(grep -c '^xts_offload_loopback ' "$XO_DEBUGFS/engines") $(engine_field xts_offload_loopback paused)"
check "the data reads back intact" readback_equal lbt /tmp/plain
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
r0=$(lb requests)
check "write 4 MiB again and read it back" write_verify lbt /tmp/plain
expect_ge "the binding stayed: the same engine does it (requests +$(($(lb requests) - r0)))" \
	$(($(lb requests) - r0)) $((2 * sectors))
expect_eq "virtio-crypto did none of it" 0 $(($(xo_dev_counter requests) - v0))

# 6b. A reset whose "device" frees its sessions (reset=forget), as a virtio
# reset may: the key's new sessions get the old handles back. The engine
# says so (xo_engine_sessions_lost()), so retiring the old binding must not
# destroy them: everything after it runs on the engine without an error.
# The key's sessions sit in slots 2 and 3 after reset=1 (it kept 0 and 1 for
# the old ones); a first reset=forget puts them in 0 and 1, the second gives
# those very handles to the new sessions.
e0=$(lb fallback_error)
echo forget >"$LB/reset"
wait_until 10 sessions_2 || diag "after a first reset=forget: $(lb sessions) sessions"
echo "28-xts-engine-api: reset forget" >/dev/kmsg
echo forget >"$LB/reset"
check "reset=forget: the log says the key's sessions were recreated" \
	sh -c "dmesg | sed -n '/28-xts-engine-api: reset forget/,\$p' | grep -q 'engine resumed: sessions of 1 keys recreated'"
wait_until 10 sessions_2
result "the old binding retired, 2 sessions held ($(lb sessions))" $?
r0=$(lb requests)
check "write 4 MiB and read it back after reset=forget" write_verify lbt /tmp/plain
expect_ge "the engine does it (requests +$(($(lb requests) - r0)))" \
	$(($(lb requests) - r0)) $((2 * sectors))
expect_eq "no request met a destroyed session (fallback_error +$(($(lb fallback_error) - e0)))" \
	0 $(($(lb fallback_error) - e0))
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain

# 7. The engine vanishes (gone=1) with jobs held and a backlog: the held
# jobs fail -ESTALE (recomputed), what waited runs in software.
b0=$(lb backlogged)
n0=$(lb fallback_noengine)
echo 1 >"$LB/hang"
rm -f /tmp/dd.rc
(dd if=/tmp/plain of=/dev/mapper/lbt bs=64k oflag=direct conv=fsync 2>/dev/null
 echo $? >/tmp/dd.rc) &
backlog_above() { [ "$(lb backlogged)" -gt "$1" ]; }
wait_until 30 backlog_above "$b0"
result "a write fills the queue and the backlog (in_flight $(lb in_flight), backlogged +$(($(lb backlogged) - b0)))" $?
echo 1 >"$LB/gone"
wait_until 60 test -s /tmp/dd.rc
expect_eq "gone=1: the write completes without error" 0 "$(cat /tmp/dd.rc 2>/dev/null)"
expect_ge "what waited in the backlog ran in software (fallback_noengine +$(($(lb fallback_noengine) - n0)) on the engine)" \
	$(($(lb fallback_noengine) - n0)) 1
check "the data reads back intact" readback_equal lbt /tmp/plain
check "raw ciphertext equals xts-aes-aesni's" same_as_reference /tmp/plain
check "close the pair" pair_close

expect_eq "nothing outside the declaration reached the engine, its room always aligned (violations)" \
	0 "$(lb violations)"
check "rmmod xts_offload_loopback" xo_rmmod xts_offload_loopback
trouble=$(dmesg | sed -n '/28-xts-engine-api: start/,$p' |
	grep -E 'WARNING:|BUG:|Oops|Call Trace:|list_(add|del) corruption|refcount_t:|the core sent')
expect_eq "the kernel log since the start is clean" "" "$trouble"
rm -f /tmp/plain /tmp/plain1 /tmp/dd.rc
done_testing
