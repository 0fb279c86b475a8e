#!/bin/sh
# PCI remove of the virtio-crypto device while dm-crypt writes, then rescan:
# no I/O error, data intact, and offload resumes once the device is back.
# harness: disk pci 72M
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 14

MIB=1048576
DATA_MIB=32
check "xts_offload loaded with threshold=0" xo_ensure 0
scratch=$(disk_by_serial pci)
result "scratch disk for the host post-check is present ($scratch)" $?
[ -n "$scratch" ] || bail "no scratch disk"
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
bdf=$(xo_pci_bdf)
diag "virtio-crypto device $(xo_vdev) at PCI $bdf"
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 32
check "cryptsetup open aes-xts-plain64, 256-bit key, 512-byte sectors" \
	xts_open xtsp /dev/ram0 /tmp/key 256 512
random_file /tmp/plain $DATA_MIB

noe0=$(xo_total fallback_noengine)
# Remove the device once the engine is busy with this write.
write_while_busy xtsp /tmp/plain 2000
echo 1 >"/sys/bus/pci/devices/$bdf/remove"
if [ -e /tmp/dd.rc ]; then
	not_ok "the device was removed while the write was running"
else
	ok "the device was removed while the write was running"
fi
wait $XO_WRITER
expect_eq "the write finished without I/O error" 0 "$(cat /tmp/dd.rc 2>/dev/null)"
if xo_vdev >/dev/null; then
	not_ok "the virtio-crypto device is gone"
else
	ok "the virtio-crypto device is gone"
fi
xo_after_removal xtsp /tmp/plain "$noe0" removal

echo 1 >/sys/bus/pci/rescan
random_file /tmp/plain2 8
xo_offload_resumes xtsp /tmp/plain2 rescan
check "cryptsetup close" xts_close xtsp

# The device now holds plain2 followed by the rest of plain.
dd if=/tmp/plain2 of=/tmp/plain conv=notrunc 2>/dev/null
rm -f /tmp/plain2
drop_caches
dd if=/tmp/plain of="$scratch" bs=1M conv=fsync 2>/dev/null &&
dd if=/dev/ram0 of="$scratch" bs=1M count=$DATA_MIB seek=32 conv=fsync 2>/dev/null &&
dd if=/tmp/key of="$scratch" bs=1M seek=64 conv=fsync 2>/dev/null ||
	diag "copying to the scratch disk failed"
rm -f /tmp/key /tmp/plain
postcheck "ciphertext written across remove and rescan equals OpenSSL AES-XTS plain64" \
	xts-ref check --key "@disk:pci:$((64 * MIB))" --key-bytes 32 --sector-size 512 \
	--plain "@disk:pci:0" --cipher "@disk:pci:$((32 * MIB))" --bytes $((DATA_MIB * MIB))
done_testing
