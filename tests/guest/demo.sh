#!/bin/sh
# Demo (plain output, not TAP): xts_offload under dm-crypt on a ramdisk,
# cryptbench across the xts(aes) drivers, and opalctl unlocking a virtual
# self-encrypting drive without a pre-boot prompt.
# Run by scripts/demo through tests/qemu/run-guest.py --plain.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"

DATA_MIB=32
step() { printf '\n== %s\n' "$*"; }
fail() { echo "demo: $*" >&2; exit 1; }

step "Kernel $(uname -r); virtio-crypto device: $(xo_vdev || echo none)"
xo_prereqs || fail "loading aesni_intel/xts/dm_crypt failed"
modprobe xts_offload_virtio >&2 || fail "modprobe xts_offload_virtio failed"
vdev=$(xo_vdev) || fail "no virtio-crypto device"
echo "modules: $(grep -o '^xts_offload[a-z_]*' /proc/modules | sort | tr '\n' ' ')(modprobe xts_offload_virtio loads the core it depends on)"
echo "driver bound to $vdev: $(basename "$(readlink "/sys/bus/virtio/devices/$vdev/driver")")"
echo "threshold: $(cat "$XO_PARAM/threshold") bytes (requests below go to software)"

step "xts(aes) implementations in /proc/crypto (highest priority wins)"
awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ && n == "xts(aes)" && !seen[d]++ {
	printf "  %-26s priority %s\n", d, $3 }' /proc/crypto
wait_until 120 xo_selftest_done
echo "  xts-aes-offload selftest: $(xo_selftest)"

step "dm-crypt: cryptsetup open --type plain --cipher aes-xts-plain64 --key-size 512 --sector-size 4096 on a 64 MiB ramdisk"
ramdisk 64 || fail "cannot create /dev/ram0"
new_key /tmp/key 64
ref0=$(crypto_field xts-aes-offload refcnt)
xts_open demo /dev/ram0 /tmp/key 512 4096 || fail "cryptsetup open failed"
rm -f /tmp/key
ref1=$(crypto_field xts-aes-offload refcnt)
echo "dmsetup table (key hidden):"
echo "  $(dmsetup table demo)"
echo "xts-aes-offload users (/proc/crypto refcnt): $ref0 before open, $ref1 after"
[ "$ref1" -gt "$ref0" ] || fail "dm-crypt does not use xts-aes-offload"
echo "dm-crypt's cipher: xts(aes) -> xts-aes-offload (engine: $vdev, fallback: software)"

step "Write $DATA_MIB MiB of random data, read it back, compare"
random_file /tmp/plain $DATA_MIB
req0=$(xo_total requests)
t0=$(cut -d' ' -f1 /proc/uptime)
write_verify demo /tmp/plain || fail "write/verify failed"
t1=$(cut -d' ' -f1 /proc/uptime)
echo "written and verified: $DATA_MIB MiB, identical ($(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s guest time, emulated: not a performance figure)"
if dd if=/dev/ram0 bs=1M count=$DATA_MIB 2>/dev/null | cmp -s /tmp/plain -; then
	fail "the ramdisk holds plaintext"
fi
echo "the ramdisk holds ciphertext (raw device differs from the data)"

step "Counters: /sys/kernel/debug/xts_offload/stats (all engines; debugfs)"
for c in requests bytes errors in_flight fallback_small fallback_keysize \
	fallback_length fallback_layout fallback_inplace fallback_busy fallback_noengine \
	fallback_error completed_async completed_bh backlogged timeouts; do
	printf '  %-18s %s\n' "$c" "$(xo_total "$c")"
done
echo "per device (/sys/bus/virtio/devices/$vdev/xts_offload): requests $(xo_dev_counter requests), bytes $(xo_dev_counter bytes)"
req1=$(xo_total requests)
[ "$req1" -gt "$req0" ] || fail "the engine did no work"
echo "the engine did $((req1 - req0)) requests of this run"

step "Close the mapping"
xts_close demo || fail "cryptsetup close failed"

step "cryptbench --cipher aes-xts --key 256 --all-drivers --request-size 4096,1M"
echo "(every xts(aes) driver through AF_ALG, side by side; emulated CPU: compare rows, not with hardware)"
cryptbench --cipher aes-xts --key 256 --all-drivers --request-size 4096,1M ||
	fail "cryptbench failed"

step "Unload: the engine module, then the core"
xo_unload || fail "rmmod failed"

# A self-encrypting drive unlocked by the OS, no pre-boot prompt: sedsim, a
# virtual Opal 2 drive, served over NVMe/TCP on 127.0.0.1 to the kernel's
# nvme-tcp host; opalctl drives it through the kernel's sed-opal ioctls
# (6.2 and later attach sed-opal to fabrics controllers; on older kernels
# through NVMe Security Send/Receive).
step "Self-encrypting drive: sedsim over NVMe/TCP, managed with opalctl"
S=/tmp/sed
NQN=nqn.2026-11.org.fdekit:sedsim-demo
mkdir -p "$S/drive"
modprobe nvme_tcp >&2 && ip link set lo up || fail "nvme_tcp or loopback unavailable"
sedsim create "$S/drive" --blocks 32768 --serial DEMOSED001 >&2 || fail "sedsim create failed"
start_server "$S/serve.log" sedsim serve-nvme "$S/drive" --nqn $NQN ||
	fail "sedsim serve-nvme did not start"
echo "transport=tcp,traddr=127.0.0.1,trsvcid=4420,nqn=$NQN,hostnqn=$NQN:host,hostid=5e5e5e5e-0000-4e56-8d65-0000000000de,nr_io_queues=1" \
	>/dev/nvme-fabrics || fail "nvme-tcp connect failed"
ctrl= dev=
for _i in $(seq 1 100); do
	for _c in /sys/class/nvme/nvme*; do
		[ "$(cat "$_c/subsysnqn" 2>/dev/null)" = "$NQN" ] || continue
		ctrl=/dev/${_c##*/}
		for _n in "$_c"/nvme*n1; do
			[ -b "/dev/${_n##*/}" ] && dev=/dev/${_n##*/}
		done
	done
	[ -n "$dev" ] && break
	sleep 0.1
done
[ -n "$dev" ] || fail "no NVMe/TCP namespace for $NQN"
case $(uname -r) in
[0-5].* | 6.[01].*) tdev=$ctrl t=nvme; save= ;;
*) tdev=$dev t=ioctl; save=--save ;;
esac
echo "namespace $dev on controller $ctrl; opalctl transport: $t"
opalctl discover "$tdev" --transport $t | sed 's/^/  /' | head -10

step "opalctl keygen, then setup (take ownership, activate locking, lock the global range on power loss)"
opalctl keygen "$S/key" || fail "keygen failed"
opalctl setup "$tdev" --keyfile "$S/key" --global --transport $t || fail "setup failed"
head -c 4194304 /dev/urandom >"$S/data"
dd if="$S/data" of="$dev" bs=1M oflag=direct conv=fsync 2>/dev/null || fail "write failed"
echo "wrote 4 MiB to $dev"

step "Lock: reads fail"
opalctl lock "$tdev" --keyfile "$S/key" --transport $t || fail "lock failed"
if dd if="$dev" of=/dev/null bs=1M count=1 iflag=direct 2>/dev/null; then
	fail "a locked drive was readable"
fi
echo "read of $dev while locked: refused by the drive"

step "Unlock from a key on stdin, as an initramfs hook (Clevis/Tang) would: opalctl unlock $tdev --keyfile - ${save}"
opalctl unlock "$tdev" --keyfile - $save --transport $t <"$S/key" || fail "unlock failed"
dd if="$dev" bs=1M count=4 iflag=direct 2>/dev/null | cmp -s "$S/data" - || fail "data differs after unlock"
echo "4 MiB read back after unlock: identical"
opalctl status "$tdev" --keyfile "$S/key" --transport $t | sed 's/^/  /'

echo 1 >"/sys/class/nvme/${ctrl#/dev/}/delete_controller"
kill "$SERVER_PID" 2>/dev/null
wait "$SERVER_PID" 2>/dev/null
rm -rf "$S"
echo "demo: OK"
