#!/bin/sh
# xts_offload loads, binds the virtio-crypto device, and passes the kernel's
# self-tests with every request on the engine (threshold=0).
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 13

check "prerequisite modules load (aesni_intel, xts, algif_skcipher, dm_crypt)" xo_prereqs
if xo_loaded; then
	not_ok "xts_offload is not loaded before the test"
else
	ok "xts_offload is not loaded before the test"
fi
vdev=$(xo_vdev)
result "a virtio-crypto device (virtio ID 20) is present" $?
[ -n "$vdev" ] || bail "no virtio-crypto device: check the harness's qemu command"
diag "virtio-crypto device: $vdev at PCI $(xo_pci_bdf)"

check "modprobe xts_offload threshold=0" modprobe xts_offload threshold=0
xo_loaded || bail "module did not load"
# Totals, the engine list and the injection knob are in debugfs, which is
# not ABI; nothing of the module's own under /sys/kernel.
if [ -e /sys/kernel/xts_offload ]; then
	not_ok "no /sys/kernel/xts_offload (sysfs ABI)"
else
	ok "no /sys/kernel/xts_offload (sysfs ABI)"
fi
expect_eq "debugfs: a total per counter, engines, inject_errors" "14 yes yes" \
	"$(ls "$XO_DEBUGFS/stats" | wc -l) $([ -r "$XO_DEBUGFS/engines" ] && echo yes) $([ -w "$XO_DEBUGFS/inject_errors" ] && echo yes)"
if [ -e "$XO_DRV/$vdev" ]; then
	ok "$vdev is bound to xts_offload ($XO_DRV/$vdev)"
else
	not_ok "$vdev is bound to xts_offload"
	diag "driver of $vdev: $(readlink "/sys/bus/virtio/devices/$vdev/driver")"
fi
expect_eq "per-device counters exist for $vdev" yes \
	"$([ -r "/sys/bus/virtio/devices/$vdev/xts_offload/requests" ] && echo yes)"
expect_eq "debugfs engines lists $vdev, driver xts_offload" "$vdev xts_offload" \
	"$(cat "$XO_DEBUGFS/engines")"

# 6.12 runs the self-test after registration: give it time to finish.
wait_until 120 xo_selftest_done || diag "self-test still not finished after 120 s"
expect_eq "/proc/crypto: xts-aes-offload selftest passed" passed "$(xo_selftest)"
# The self-test sets a key and sends its requests at once: a key's device
# sessions are created by a worker after its first request, so the
# self-test's requests run in software, counted as fallback_noengine.
expect_ge "the self-test's requests ran before their keys had sessions (fallback_noengine)" \
	"$(xo_total fallback_noengine)" 1
a=$(xo_total completed_async)
r=$(xo_total requests)
e=$(xo_total errors)
diag "engine requests $r, errors $e, completed asynchronously $a"
[ -n "$a" ] && [ "$a" -ge 0 ] && [ "$a" -le $((r + e)) ] &&
	[ "$(cat "/sys/bus/virtio/devices/$vdev/xts_offload/completed_async")" -le "$a" ]
result "completed_async counts at most the engine's requests, per device and in total" $?

# dm-crypt asks for "xts(aes)": the highest priority driver wins.
best=$(awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ && n == "xts(aes)" {
	if ($3 > max) { max = $3; drv = d } } END { print drv }' /proc/crypto)
expect_eq "xts-aes-offload has the highest xts(aes) priority" xts-aes-offload "$best"
grep -A4 'xts(aes)' /proc/crypto | grep -E 'driver|priority' | paste - - | sed 's/^/# /'
done_testing
