#!/bin/sh
# rmmod is refused while a mapping uses the cipher: the core's (the crypto
# API holds it per transform, and the engine module depends on it) and the
# virtio-crypto engine's (each key bound to the engine holds it). The
# system stays healthy, and both go, engine first, once the mapping is
# closed.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 13

check "xts_offload loaded with threshold=0" xo_ensure 0
ramdisk 8 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64, 512-bit key, 4096-byte sectors" \
	xts_open xtsr /dev/ram0 /tmp/key 512 4096
rm -f /tmp/key
xo_sessions_ready xtsr || diag "no engine sessions for the key after 30 s"
if rmmod xts_offload 2>&1 | sed 's/^/# rmmod: /'; [ -d /sys/module/xts_offload ] && xo_loaded; then
	ok "rmmod xts_offload is refused while the mapping uses it"
else
	not_ok "rmmod xts_offload is refused while the mapping uses it"
	bail "module unloaded under a live mapping"
fi
if rmmod xts_offload_virtio 2>&1 | sed 's/^/# rmmod: /'; xo_mod_loaded xts_offload_virtio; then
	ok "rmmod xts_offload_virtio is refused while the mapping's key is bound to its engine"
else
	not_ok "rmmod xts_offload_virtio is refused while the mapping's key is bound to its engine"
fi
expect_eq "xts-aes-offload is still registered" passed "$(crypto_field xts-aes-offload selftest)"
random_file /tmp/plain 4
r0=$(xo_dev_counter requests)
check "the mapping still writes and verifies 4 MiB" write_verify xtsr /tmp/plain
expect_ge "on the engine (requests +$(($(xo_dev_counter requests) - r0)))" \
	$(($(xo_dev_counter requests) - r0)) 1024
rm -f /tmp/plain
check "cryptsetup close" xts_close xtsr
check "rmmod xts_offload_virtio succeeds once the mapping is closed" xo_rmmod xts_offload_virtio
check "then rmmod xts_offload" rmmod xts_offload
expect_eq "xts-aes-offload is gone from /proc/crypto" "" "$(crypto_field xts-aes-offload driver)"
if [ -e "$XO_DRV" ] || [ -e "/sys/bus/virtio/devices/$(xo_vdev)/driver" ]; then
	not_ok "the virtio-crypto device is unbound"
else
	ok "the virtio-crypto device is unbound"
fi
xo_load
wait_until 10 xo_bound
result "the modules load again and the engine binds the device" $?
done_testing
