#!/bin/sh
# A device that stops answering never hangs I/O: an engine with requests in
# flight that completes none of them for watchdog_ms is retired, and what it
# held is computed again in software. The loopback engine's hang=1 holds
# every job, as a hung device would.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 11

LB=/sys/module/xts_offload_loopback/parameters
check "xts_offload loaded with threshold=0" xo_ensure 0
check "modprobe xts_offload_loopback" modprobe xts_offload_loopback
wd0=$(cat "$XO_PARAM/watchdog_ms")
echo 2000 >"$XO_PARAM/watchdog_ms"
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64 on the loopback engine" \
	xts_open xtsw /dev/ram0 /tmp/key 512 4096
random_file /tmp/plain 4
# Sessions first: only jobs the engine holds can hang.
xo_sessions_ready xtsw || diag "no engine sessions for the key after 30 s"
dmesg -c >/dev/null
echo 1 >"$LB/hang"
check "a 4 MiB write while the engine answers nothing completes without I/O error (bounded: 60 s)" \
	timeout 60 dd if=/tmp/plain of=/dev/mapper/xtsw bs=64k oflag=direct conv=fsync
check "it reads back intact" readback_equal xtsw /tmp/plain
check "the kernel log says the watchdog retired the engine" \
	sh -c "dmesg | grep -q 'completed none of its [0-9]* requests in flight for 2000 ms: retired'"
if grep -q xts_offload_loopback "$XO_DEBUGFS/engines"; then
	not_ok "the retired engine is no longer registered"
else
	ok "the retired engine is no longer registered"
fi
expect_ge "the retired engine's counters stay readable until unload (debugfs: errors $(cat "$XO_DEBUGFS/xts_offload_loopback/errors"))" \
	"$(cat "$XO_DEBUGFS/xts_offload_loopback/errors")" 1
echo 0 >"$LB/hang"
echo "$wd0" >"$XO_PARAM/watchdog_ms"
random_file /tmp/plain2 2
check "write and verify afterwards (the virtio-crypto engine or software)" write_verify xtsw /tmp/plain2
check "cryptsetup close" xts_close xtsw
check "rmmod xts_offload_loopback after its engine was retired" rmmod xts_offload_loopback
rm -f /tmp/key /tmp/plain /tmp/plain2
done_testing
