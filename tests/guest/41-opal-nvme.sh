#!/bin/sh
# sedsim as an NVMe/TCP target on 127.0.0.1: the kernel's nvme-tcp host
# connects to it and, as for any NVMe controller with Security Send/Receive,
# attaches its own sed-opal to the namespace (6.2 and later, see below).
# opalctl then drives the drive through the kernel's sed-opal ioctls (the
# only path for unlock --save) and through NVMe Security Send/Receive
# (libnvme) on the controller.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/opal-nvme-lib.sh"
plan 48

D=/tmp/opal-nvme
BLOCKS=32768
PORT=4420
NQN=nqn.2026-11.org.fdekit:sedsim-guest
HOSTNQN=nqn.2026-11.org.fdekit:guest-host
# A host ID of its own: 6.12 refuses a new host NQN with the default host's ID.
HOSTID=5e5e5e5e-0041-4e56-8d65-000000000041
# Locking range 1: LBA 2048 (1 MiB) for 4096 blocks (2 MiB); the data we
# check is the 1 MiB at 1 MiB, the data outside is the first 64 KiB.
START=2048
LENGTH=4096
mkdir -p "$D/drive"

# The device and transport for the steps the kernel's sed-opal runs.
pick() {
	if [ -n "$KERNEL_OPAL" ]; then
		KDEV=$DEV KT=ioctl KNAME="kernel ioctl"
	else
		KDEV=$CTRL KT=nvme KNAME="nvme transport (no kernel sed-opal in $(uname -r))"
	fi
}

check "nvme-tcp host modules load" load nvme_tcp
check "loopback interface up" ip link set lo up

# range1 FIELD: the value of FIELD for range 1 in `status --json`.
range1() {
	opalctl --json status "$DEV" --transport ioctl -k "$D/key" >"$D/status.json" &&
		tr -d ' \n' <"$D/status.json" | grep -o '"range":1,[^}]*' |
		grep -o "\"$1\":[a-z]*" | cut -d: -f2
}

sedsim create "$D/drive" --blocks $BLOCKS --serial GUESTNVME1 --try-limit 5 ||
	bail "sedsim create failed"
serve || bail "sedsim serve-nvme did not start: $(cat "$D/serve.log")"
ok "sedsim listens for NVMe/TCP on 127.0.0.1:$PORT"
if connect; then
	ok "nvme-tcp host connects: $CTRL, namespace $DEV"
else
	dmesg | tail -20 >&2
	cat "$D/serve.log" >&2
	bail "no NVMe/TCP controller or namespace for $NQN"
fi
pick
expect_eq "namespace size from Identify Namespace" $BLOCKS "$(cat /sys/block/${DEV#/dev/}/size)"
expect_eq "controller serial from Identify Controller" GUESTNVME1 \
	"$(tr -d ' ' <"/sys/class/nvme/${CTRL#/dev/}/serial")"

check "discover on the namespace reports Opal 2" sh -c \
	"opalctl discover $DEV --transport ioctl | grep -q 'SSC: *Opal 2'"
check "status: locking not enabled yet" sh -c \
	"opalctl --json status $DEV --transport ioctl | grep -q '\"locking_enabled\":false'"

head -c 32 /dev/urandom >"$D/key"
head -c 32 /dev/urandom >"$D/bad"
head -c 1048576 /dev/urandom >"$D/data"
WANT=$(sha256sum <"$D/data" | cut -d' ' -f1)
check "write 1 MiB (R2T and H2CData)" \
	dd if="$D/data" of="$DEV" bs=65536 seek=16 oflag=direct conv=fsync
expect_eq "data reads back (C2HData)" "$WANT" "$(read_sum)"
HEAD=$(head_sum)

# Take ownership, activate the Locking SP, set up range 1.
check "$KNAME: setup range 1" \
	opalctl setup "$KDEV" --keyfile "$D/key" --range 1 --start $START --length $LENGTH \
	--yes-destroy-data --transport $KT
expect_eq "status: range 1 read-lock enabled after setup" true "$(range1 read_lock_enabled)"
# A new range has a media key of its own: write the data again, into it.
check "write 1 MiB into range 1" \
	dd if="$D/data" of="$DEV" bs=65536 seek=16 oflag=direct conv=fsync
expect_eq "data in range 1 reads back" "$WANT" "$(read_sum)"

check "$KNAME: lock range 1" opalctl lock "$KDEV" -k "$D/key" --range 1 --transport $KT
expect_eq "status: range 1 read-locked" true "$(range1 read_locked)"
locked "reads of range 1 fail while locked (Access Denied)"
expect_eq "data outside range 1 still readable" "$HEAD" "$(head_sum)"
opalctl unlock "$KDEV" --keyfile "$D/bad" --range 1 --transport $KT 2>"$D/err"
expect_eq "$KNAME: wrong key refused (exit 4)" 4 $?
check "$KNAME: unlock range 1" opalctl unlock "$KDEV" -k "$D/key" --range 1 --transport $KT
expect_eq "data intact after unlock" "$WANT" "$(read_sum)"
if [ -n "$KERNEL_OPAL" ]; then
	check "kernel ioctl: unlock --save accepted (IOC_OPAL_SAVE)" \
		opalctl unlock "$DEV" -k "$D/key" --range 1 --save --transport ioctl
	expect_eq "data intact after unlock --save" "$WANT" "$(read_sum)"
else
	opalctl lock "$DEV" -k "$D/key" --range 1 --transport ioctl 2>"$D/err"
	expect_eq "kernel ioctl on a fabrics namespace in $(uname -r): exit 3 (unsupported)" 3 $?
	skip "kernel ioctl: unlock --save accepted (IOC_OPAL_SAVE)" \
		"$(uname -r) has no sed-opal for NVMe over fabrics (init_opal_dev only in drivers/nvme/host/pci.c before 6.2)"
fi

# The protocol ourselves: Security Send/Receive on the controller (libnvme).
check "nvme transport: status on $CTRL shows locking enabled" sh -c \
	"opalctl --json status $CTRL --transport nvme -k $D/key | grep -q '\"locking_enabled\":true'"
check "nvme transport: lock range 1" opalctl lock "$CTRL" -k "$D/key" --range 1 --transport nvme
locked "nvme transport: reads of range 1 fail while locked"
check "nvme transport: unlock range 1" opalctl unlock "$CTRL" -k "$D/key" --range 1 --transport nvme
expect_eq "nvme transport: data intact after unlock" "$WANT" "$(read_sum)"

# Warm resets. The kernel's IOC_OPAL_LR_SETUP writes no LockOnReset; setup
# through the protocol with the same geometry adds Hardware Reset (and
# destroys nothing). The SIIS maps an NVM Subsystem Reset to a TCG Hardware
# Reset and a controller reset to none: reset_controller leaves range 1
# unlocked, an NVM Subsystem Reset locks it.
# lor1: range 1's LockOnReset from `status --json` through the nvme transport.
lor1() {
	opalctl --json status "$CTRL" --transport nvme -k "$D/key" >"$D/status.json" &&
		tr -d ' \n' <"$D/status.json" | grep -o '"range":1,[^}]*' |
		grep -o '"lock_on_reset_on":\[[^]]*\]' | cut -d: -f2 | tr -d '[]"'
}
# live: wait (bounded) until the controller is live again after a reset.
live() {
	_c=${CTRL#/dev/}
	for _i in $(seq 1 100); do
		[ "$(cat "/sys/class/nvme/$_c/state" 2>/dev/null)" = live ] && [ -b "$DEV" ] && return 0
		sleep 0.1
	done
	return 1
}
check "nvme transport: setup range 1 again, same geometry, no confirmation" \
	opalctl setup "$CTRL" --keyfile "$D/key" --range 1 --start $START --length $LENGTH \
	--transport nvme
expect_eq "status: range 1 locks at power cycle and hardware reset" \
	"power-cycle,hardware-reset" "$(lor1)"
expect_eq "data intact after the second setup" "$WANT" "$(read_sum)"
echo 1 >"/sys/class/nvme/${CTRL#/dev/}/reset_controller"
check "controller reset (reset_controller): controller live again" live
expect_eq "controller reset leaves range 1 unlocked (no TCG reset)" "$WANT" "$(read_sum)"
check "NVM Subsystem Reset requested (NVME_IOCTL_SUBSYS_RESET)" nvme-subsys-reset "$CTRL"
check "NVM Subsystem Reset: controller live again" live
locked "NVM Subsystem Reset locks range 1 (LockOnReset: Hardware Reset)"
check "nvme transport: unlock after the NVM Subsystem Reset" \
	opalctl unlock "$CTRL" -k "$D/key" --range 1 --transport nvme

# A malformed stream on a new connection: the target drops it and serves on.
if command -v nc >/dev/null; then
	printf 'not an NVMe/TCP PDU, just bytes to choke on\n' | nc 127.0.0.1 $PORT >/dev/null 2>&1
	check "a malformed stream leaves the target serving" sh -c \
		"kill -0 $SERVE_PID && opalctl --json status $CTRL --transport nvme | grep -q '\"locking_enabled\":true'"
else
	skip "a malformed stream leaves the target serving" "no nc in this guest"
fi

# Power cycle: disconnect, stop the target, cycle the drive, serve it again.
check "disconnect (delete_controller)" disconnect
for _i in $(seq 1 50); do find_ctrl >/dev/null || break; sleep 0.1; done
kill "$SERVE_PID"
wait "$SERVE_PID"
expect_eq "target exits 0 on SIGTERM" 0 $?
check "sedsim power-cycle" sedsim power-cycle "$D/drive"
serve || bail "sedsim serve-nvme did not restart: $(cat "$D/serve.log")"
connect || bail "no reconnect after the power cycle"
pick
ok "reconnected after the power cycle: $CTRL, $DEV"
locked "power cycle re-locks range 1 (LockOnReset)"
check "$KNAME: unlock after the power cycle" \
	opalctl unlock "$KDEV" -k "$D/key" --range 1 --transport $KT
expect_eq "data intact after power cycle and unlock" "$WANT" "$(read_sum)"

check "$KNAME: revert --yes-destroy-data" \
	opalctl revert "$KDEV" -k "$D/key" --yes-destroy-data --transport $KT
GOT=$(read_sum)
if [ -n "$GOT" ] && [ "$GOT" != "$WANT" ]; then
	ok "revert wiped the data (readable, media key regenerated)"
else
	not_ok "revert wiped the data (readable, media key regenerated)"
fi
check "after revert: locking disabled (factory state)" sh -c \
	"opalctl --json discover $CTRL --transport nvme | grep -q '\"locking_enabled\":false'"

disconnect
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID"
done_testing
