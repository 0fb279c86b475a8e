#!/bin/sh
# Engine errors (fault injection) during a dm-crypt write-and-verify run:
# no I/O error, data intact, the failed requests were recomputed in software.
# harness: disk fault 20M
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 11

MIB=1048576
DATA_MIB=8
INJECT=200
check "xts_offload loaded with threshold=0" xo_ensure 0
scratch=$(disk_by_serial fault)
result "scratch disk for the host post-check is present ($scratch)" $?
[ -n "$scratch" ] || bail "no scratch disk"
ramdisk 16 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64, 512-bit key, 512-byte sectors" \
	xts_open xtsf /dev/ram0 /tmp/key 512 512
random_file /tmp/plain $DATA_MIB

err0=$(xo_total errors)
fbe0=$(xo_total fallback_error)
echo $INJECT >"$XO_DEBUGFS/inject_errors"
check "write and verify ${DATA_MIB} MiB while $INJECT engine requests fail" \
	write_verify xtsf /tmp/plain
err1=$(xo_total errors)
fbe1=$(xo_total fallback_error)
diag "errors +$((err1 - err0)), fallback_error +$((fbe1 - fbe0))"
expect_ge "the engine reported the injected errors (errors counter)" \
	$((err1 - err0)) 1
expect_ge "failed requests were recomputed in software (fallback_error)" \
	$((fbe1 - fbe0)) 1
expect_eq "every injected error was consumed" 0 "$(cat "$XO_DEBUGFS/inject_errors")"

# Decryption (dm-crypt reads decrypt in place) under injected errors.
echo $INJECT >"$XO_DEBUGFS/inject_errors"
check "read back ${DATA_MIB} MiB intact while $INJECT engine requests fail" \
	readback_equal xtsf /tmp/plain
fbe2=$(xo_total fallback_error)
expect_ge "failed decryptions were recomputed in software (fallback_error +$((fbe2 - fbe1)))" \
	$((fbe2 - fbe1)) 1
echo 0 >"$XO_DEBUGFS/inject_errors"
check "cryptsetup close" xts_close xtsf

drop_caches
dd if=/tmp/plain of="$scratch" bs=1M conv=fsync 2>/dev/null &&
dd if=/dev/ram0 of="$scratch" bs=1M count=$DATA_MIB seek=8 conv=fsync 2>/dev/null &&
dd if=/tmp/key of="$scratch" bs=1M seek=16 conv=fsync 2>/dev/null ||
	diag "copying to the scratch disk failed"
rm -f /tmp/key
postcheck "ciphertext written under fault injection equals OpenSSL AES-XTS plain64" \
	xts-ref check --key "@disk:fault:$((16 * MIB))" --key-bytes 64 --sector-size 512 \
	--plain "@disk:fault:0" --cipher "@disk:fault:$((8 * MIB))" --bytes $((DATA_MIB * MIB))
done_testing
