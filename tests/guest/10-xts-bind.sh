#!/bin/sh
# xts_offload loads, its virtio-crypto engine (the module
# xts_offload_virtio, found from the device's modalias as udev would)
# binds the device, and the kernel's self-tests pass.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 19

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
if [ -e "$XO_DRV" ]; then
	not_ok "the core alone has no virtio driver"
else
	ok "the core alone has no virtio driver"
fi
if grep -q '^driver *: xts-aes-offload$' /proc/crypto; then
	not_ok "the core alone registers no skcipher (it waits for the first engine)"
else
	ok "the core alone registers no skcipher (it waits for the first engine)"
fi
# What udev does for a new device: modprobe its modalias.
alias=$(cat "/sys/bus/virtio/devices/$vdev/modalias")
check "modprobe $alias (the device's modalias) loads the virtio-crypto engine" \
	modprobe "$alias"
expect_eq "the engine is the module xts_offload_virtio" yes \
	"$(xo_mod_loaded xts_offload_virtio && echo yes)"
wait_until 10 xo_bound
result "$vdev is bound within 10 s" $?
# Totals, the engine list and the injection knob are in debugfs, which is
# not ABI; nothing of the module's own under /sys/kernel.
if [ -e /sys/kernel/xts_offload ]; then
	not_ok "no /sys/kernel/xts_offload (sysfs ABI)"
else
	ok "no /sys/kernel/xts_offload (sysfs ABI)"
fi
expect_eq "debugfs: a total per counter, engines, inject_errors" "18 yes yes" \
	"$(ls "$XO_DEBUGFS/stats" | wc -l) $([ -r "$XO_DEBUGFS/engines" ] && echo yes) $([ -w "$XO_DEBUGFS/inject_errors" ] && echo yes)"
if [ -e "$XO_DRV/$vdev" ]; then
	ok "$vdev is bound to xts_offload ($XO_DRV/$vdev)"
else
	not_ok "$vdev is bound to xts_offload"
	diag "driver of $vdev: $(readlink "/sys/bus/virtio/devices/$vdev/driver")"
fi
expect_eq "per-device counters exist for $vdev" yes \
	"$([ -r "/sys/bus/virtio/devices/$vdev/xts_offload/requests" ] && echo yes)"
expect_eq "debugfs engines lists $vdev, driver xts_offload, priority 0, both key sizes, in place" \
	"$vdev xts_offload priority=0 key_bits=256,512 len_align=16 inplace=1 untouched_on_error=0" \
	"$(awk '{ print $1, $2, $3, $5, $6, $8, $9 }' "$XO_DEBUGFS/engines")"
diag "engines: $(cat "$XO_DEBUGFS/engines")"

# 6.12 runs the self-test after registration: give it time to finish.
wait_until 120 xo_selftest_done || diag "self-test still not finished after 120 s"
expect_eq "/proc/crypto: xts-aes-offload selftest passed" passed "$(xo_selftest)"
# The skcipher registers with the first engine, and setkey creates each
# key's sessions: the self-test's requests (threshold 0) run on the engine.
# The known-answer test sent it at most 12 (6 per key size); nothing else
# used the engine yet.
expect_ge "the self-test's requests ran on the engine (engine requests beyond the known-answer test's 12)" \
	"$(xo_total requests)" 13
expect_eq "none of them ran in software for want of a session (fallback_noengine)" \
	0 "$(xo_total fallback_noengine)"
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
