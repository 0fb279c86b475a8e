#!/bin/sh
# Hot-unplug of the virtio-crypto device while dm-crypt writes (QMP
# device_del: an ACPI eject the guest's kernel carries out), then hot-plug
# (device_add): no I/O error, data intact, offload resumes on the new device.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 12

DATA_MIB=48
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
diag "virtio-crypto device $(xo_vdev) at PCI $(xo_pci_bdf)"
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64, 512-bit key, 512-byte sectors" \
	xts_open xtsh /dev/ram0 /tmp/key 512 512
random_file /tmp/plain $DATA_MIB

gone() { ! xo_vdev >/dev/null; }

noe0=$(xo_total fallback_noengine)
write_while_busy xtsh /tmp/plain 2000
host_hotplug del
wait_until 60 gone
result "the host's hot-unplug removed the virtio-crypto device" $?
if [ -e /tmp/dd.rc ]; then
	not_ok "the device went while the write was running"
else
	ok "the device went while the write was running"
fi
wait $XO_WRITER
expect_eq "the write finished without I/O error" 0 "$(cat /tmp/dd.rc 2>/dev/null)"
xo_after_removal xtsh /tmp/plain "$noe0" hot-unplug

host_hotplug add
random_file /tmp/plain2 8
xo_offload_resumes xtsh /tmp/plain2 "host's hot-plug"
check "cryptsetup close" xts_close xtsh
rm -f /tmp/key /tmp/plain /tmp/plain2
done_testing
