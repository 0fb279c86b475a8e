#!/bin/sh
# rmmod xts_offload is refused while a mapping uses the cipher, the system
# stays healthy, and succeeds once the mapping is closed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 10

check "xts_offload loaded with threshold=0" xo_ensure 0
ramdisk 8 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64, 512-bit key, 4096-byte sectors" \
	xts_open xtsr /dev/ram0 /tmp/key 512 4096
rm -f /tmp/key
if rmmod xts_offload 2>&1 | sed 's/^/# rmmod: /'; [ -d /sys/module/xts_offload ] && xo_loaded; then
	ok "rmmod xts_offload is refused while the mapping uses it"
else
	not_ok "rmmod xts_offload is refused while the mapping uses it"
	bail "module unloaded under a live mapping"
fi
expect_eq "xts-aes-offload is still registered" passed "$(crypto_field xts-aes-offload selftest)"
random_file /tmp/plain 4
check "the mapping still writes and verifies 4 MiB" write_verify xtsr /tmp/plain
rm -f /tmp/plain
check "cryptsetup close" xts_close xtsr
check "rmmod xts_offload succeeds once the mapping is closed" rmmod xts_offload
expect_eq "xts-aes-offload is gone from /proc/crypto" "" "$(crypto_field xts-aes-offload driver)"
if [ -e "$XO_DRV" ] || [ -e "/sys/bus/virtio/devices/$(xo_vdev)/driver" ]; then
	not_ok "the virtio-crypto device is unbound"
else
	ok "the virtio-crypto device is unbound"
fi
xo_load
wait_until 10 xo_bound
result "the module loads again and binds the device" $?
done_testing
