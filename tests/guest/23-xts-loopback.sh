#!/bin/sh
# A second engine type, from a module of its own, through the exported
# engine interface: xts_offload_loopback computes with the kernel's own
# xts(aes) and misbehaves on request. The known-answer test at registration
# refuses engines that compute wrongly (also those wrong only for 512-byte
# requests or only across a page boundary); a correct one serves dm-crypt; an
# in-place request that fails after the engine wrote its destination is an
# I/O error, never wrong data; a module with a bound tfm cannot go away.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 25

LB=/sys/module/xts_offload_loopback/parameters
# Its device has no driver: its counters are in debugfs.
LBDEV=$XO_DEBUGFS/xts_offload_loopback
check "xts_offload loaded with threshold=0" xo_ensure 0
check "the virtio-crypto engine passed the known-answer test at registration" \
	sh -c "dmesg | grep -q 'xts(aes) engine registered (known-answer test passed)'"

# defect=len-512 is wrong only for 512-byte requests, cross-page only when
# an entry crosses a page boundary: the 4 KiB page-aligned checks pass both.
for d in swap-keys:'encryption, out of place' tweak-endian:'encryption, out of place' \
	len-512:'encryption of 512 bytes' cross-page:'encryption across a page boundary'; do
	what=${d#*:}
	d=${d%%:*}
	dmesg -c >/dev/null
	if modprobe xts_offload_loopback defect=$d 2>/dev/null; then
		rmmod xts_offload_loopback
		not_ok "defect=$d: the engine is refused at registration"
	else
		ok "defect=$d: the engine is refused at registration"
	fi
	check "defect=$d: the log says which check failed ($what)" \
		sh -c "dmesg | grep -q 'known-answer test failed for 256-bit keys ($what: wrong result)'"
done

check "a correct loopback engine registers" modprobe xts_offload_loopback
lb() { cat "$LBDEV/$1"; }
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64 (binds to the highest-priority engine, the loopback)" \
	xts_open xtsl /dev/ram0 /tmp/key 512 4096
random_file /tmp/plain 8
xo_sessions_ready xtsl || diag "no engine sessions for the key after 30 s"
r0=$(lb requests)
v0=$(xo_dev_counter requests)
check "write and verify 8 MiB through the loopback engine" write_verify xtsl /tmp/plain
expect_ge "the loopback engine did it (requests +$(($(lb requests) - r0)))" \
	$(($(lb requests) - r0)) 4096
expect_eq "the virtio-crypto engine did none of it" 0 $(($(xo_dev_counter requests) - v0))
check "AF_ALG through the loopback engine equals xts(ecb(aes-generic)) (random lengths and layouts)" \
	xts-afalg compare xts-aes-offload 'xts(ecb(aes-generic))' -n 60 -k 64

# dm-crypt reads decrypt in place: a failure after the engine wrote dst
# leaves nothing to recompute from.
echo 8 >"$LB/fail_written"
drop_caches
if dd if=/dev/mapper/xtsl of=/tmp/back bs=64k count=16 iflag=direct 2>/dev/null; then
	not_ok "a read whose in-place decryption failed after writing is an I/O error"
else
	ok "a read whose in-place decryption failed after writing is an I/O error"
fi
check "the kernel log says why" \
	sh -c "dmesg | grep -q 'in-place request failed in the engine after it may have written'"
echo 0 >"$LB/fail_written"
check "read back intact once the engine behaves" readback_equal xtsl /tmp/plain
# Writes encrypt out of place: the source is intact, so they are recomputed.
echo 8 >"$LB/fail_written"
check "write and verify with failing engine writes: recomputed in software" \
	write_verify xtsl /tmp/plain
expect_eq "the engine's failures were all consumed" 0 "$(cat "$LB/fail_written")"
echo 0 >"$LB/fail_written"

echo 20 >"$LB/delay_ms"
random_file /tmp/plain2 1
check "write and verify with the engine answering 20 ms late" write_verify xtsl /tmp/plain2
echo 0 >"$LB/delay_ms"

if rmmod xts_offload_loopback 2>/dev/null; then
	not_ok "rmmod xts_offload_loopback while a mapping uses it is refused"
else
	ok "rmmod xts_offload_loopback while a mapping uses it is refused"
fi
check "cryptsetup close" xts_close xtsl
check "rmmod xts_offload_loopback once nothing uses it" rmmod xts_offload_loopback
rm -f /tmp/key /tmp/plain /tmp/plain2 /tmp/back
done_testing
