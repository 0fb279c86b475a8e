#!/bin/sh
# Session exhaustion: 80 AF_ALG handles with their own keys want 160
# device sessions, more than max_sessions (lowered to 100 here: QEMU's
# builtin back end keeps the sessions of every device unplugged or reset
# before, so its own 256-entry table may run out first, which the module
# treats the same way). The keys past the cap run in software and compute
# correctly; the refusals are counted (sessions_exhausted) and logged once;
# a dm-crypt mapping opened meanwhile is correct in software; once the
# handles are closed their sessions are released, and the mapping, rekeyed,
# is offloaded again.
# harness: disk sess 24M
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 19

MIB=1048576
HANDLES=80
CAP=100
MSG="out of device sessions"
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
expect_eq "max_sessions defaults to 256" 256 "$(cat "$XO_PARAM/max_sessions")"
echo $CAP >"$XO_PARAM/max_sessions"
cap=$(cat "$XO_PARAM/max_sessions")
scratch=$(disk_by_serial sess)
[ -n "$scratch" ] || bail "no scratch disk"
# The self-test's keys (bound at setkey) release their sessions from a
# worker once their tfms are freed: count from a settled total.
settled() {
	_a=$(xo_total sessions)
	sleep 1
	[ "$(xo_total sessions)" -eq "$_a" ]
}
wait_until 60 settled || diag "the sessions total still moves: $(xo_total sessions)"
sess0=$(xo_total sessions)
exh0=$(xo_total sessions_exhausted)
log0=$(dmesg | grep -c "$MSG")
bound_keys=$(((cap - sess0) / 2))
diag "sessions held before: $sess0; keys that can still bind: $bound_keys"

rm -f /tmp/hold.in /tmp/hold.out
mkfifo /tmp/hold.in
xts-afalg hold xts-aes-offload xts-aes-aesni -n $HANDLES -k 64 \
	</tmp/hold.in >/tmp/hold.out 2>/tmp/hold.err &
holder=$!
exec 3>/tmp/hold.in
rounds_done() { [ "$(grep -c '^round ' /tmp/hold.out)" -ge "$1" ]; }
wait_until 120 rounds_done 1
expect_eq "$HANDLES handles, own keys: first round equals xts-aes-aesni" \
	"round 1 ok" "$(grep '^round 1 ' /tmp/hold.out)"

exhausted() { [ "$(xo_total sessions_exhausted)" -gt "$exh0" ]; }
wait_until 120 exhausted
result "keys past the cap are refused and counted (sessions_exhausted +$(($(xo_total sessions_exhausted) - exh0)))" $?
at_cap() { [ "$(xo_total sessions)" -ge "$cap" ]; }
wait_until 60 at_cap
result "the engine holds max_sessions sessions, no more ($(xo_total sessions))" \
	"$([ "$(xo_total sessions)" -eq "$cap" ]; echo $?)"

req0=$(xo_total requests)
noe0=$(xo_total fallback_noengine)
# A subshell: if the holder died, SIGPIPE ends it, not the script.
(echo again >&3)
wait_until 120 rounds_done 2
expect_eq "second round, bound and refused keys alike, equals xts-aes-aesni" \
	"round 2 ok" "$(grep '^round 2 ' /tmp/hold.out)"
expect_ge "the engine computed the bound keys' requests (requests +$(($(xo_total requests) - req0)))" \
	$(($(xo_total requests) - req0)) $((2 * bound_keys))
expect_ge "the refused keys' requests ran in software (fallback_noengine +$(($(xo_total fallback_noengine) - noe0)))" \
	$(($(xo_total fallback_noengine) - noe0)) $((2 * (HANDLES - bound_keys)))

# A mapping opened while no session is left: correct, in software.
ramdisk 8 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
# setkey (at the open) asks for the key's sessions.
exh1=$(xo_total sessions_exhausted)
check "cryptsetup open aes-xts-plain64, 512-bit key, 512-byte sectors" \
	xts_open xtss /dev/ram0 /tmp/key 512 512
random_file /tmp/plain 8
dd if=/tmp/plain of=/tmp/plain-a bs=1M count=4 2>/dev/null
dd if=/tmp/plain of=/tmp/plain-b bs=1M skip=4 2>/dev/null
check "write and verify 4 MiB through the mapping while sessions are exhausted" \
	write_verify xtss /tmp/plain-a
expect_ge "the mapping's key was refused too (sessions_exhausted +$(($(xo_total sessions_exhausted) - exh1)))" \
	$(($(xo_total sessions_exhausted) - exh1)) 1
expect_eq "the log says so once" 1 $(($(dmesg | grep -c "$MSG") - log0))
dmesg | grep "$MSG" | sed 's/^/# /'

exec 3>&-
wait $holder
expect_eq "the handles are closed, every round equal (exit 0)" 0 $?
cat /tmp/hold.err | sed 's/^/# /'
released() { [ "$(xo_total sessions)" -eq "$sess0" ]; }
wait_until 60 released
result "their sessions are released (sessions $(xo_total sessions), was $sess0)" $?

logon-key fdekit:xtss </tmp/key >/dev/null &&
	dmsetup suspend xtss &&
	dmsetup message xtss 0 key set :64:logon:fdekit:xtss &&
	dmsetup resume xtss
result "rekey the mapping with its key from the keyring" $?
req1=$(xo_total requests)
dd if=/tmp/plain-b of=/dev/mapper/xtss bs=64k seek=64 oflag=direct conv=fsync 2>/dev/null
check "write the other 4 MiB and read all 8 MiB back intact" readback_equal xtss /tmp/plain
expect_ge "the engine serves the mapping again (requests +$(($(xo_total requests) - req1)))" \
	$(($(xo_total requests) - req1)) $((4 * MIB / 512))
check "cryptsetup close" xts_close xtss
echo 256 >"$XO_PARAM/max_sessions"

drop_caches
dd if=/tmp/plain of="$scratch" bs=1M conv=fsync 2>/dev/null &&
dd if=/dev/ram0 of="$scratch" bs=1M count=8 seek=8 conv=fsync 2>/dev/null &&
dd if=/tmp/key of="$scratch" bs=1M seek=16 conv=fsync 2>/dev/null ||
	diag "copying to the scratch disk failed"
rm -f /tmp/key /tmp/plain /tmp/plain-a /tmp/plain-b /tmp/hold.*
postcheck "ciphertext written in software and on the engine equals OpenSSL AES-XTS plain64" \
	xts-ref check --key "@disk:sess:$((16 * MIB))" --key-bytes 64 --sector-size 512 \
	--plain "@disk:sess:0" --cipher "@disk:sess:$((8 * MIB))" --bytes $((8 * MIB))
done_testing
