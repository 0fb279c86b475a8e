#!/bin/sh
# Single User Mode: opalctl setup --sum activates the Locking SP with range 1
# given to its owner, User2, who alone may lock and unlock it. On 6.12 the
# steps run through the kernel's sed-opal (IOC_OPAL_ACTIVATE_LSP with sum,
# IOC_OPAL_SET_PW and IOC_OPAL_LR_SETUP as the owner); before 6.2 (no
# sed-opal for NVMe over fabrics) through NVMe Security Send/Receive.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/opal-nvme-lib.sh"
plan 8

D=/tmp/opal-sum
PORT=4423
NQN=nqn.2026-11.org.fdekit:sedsim-sum
HOSTNQN=nqn.2026-11.org.fdekit:guest-host-sum
HOSTID=5e5e5e5e-0043-4e56-8d65-000000000043
mkdir -p "$D/drive"

check "nvme-tcp host modules load" load nvme_tcp
check "loopback interface up" ip link set lo up
sedsim create "$D/drive" --blocks 32768 --serial GUESTSUM1 --try-limit 5 ||
	bail "sedsim create failed"
serve || bail "sedsim serve-nvme did not start: $(cat "$D/serve.log")"
connect || bail "no NVMe/TCP connection"
if [ -n "$KERNEL_OPAL" ]; then
	KDEV=$DEV KT=ioctl KNAME="kernel ioctl"
else
	KDEV=$CTRL KT=nvme KNAME="nvme transport (no kernel sed-opal in $(uname -r))"
fi
head -c 32 /dev/urandom >"$D/admin"
head -c 32 /dev/urandom >"$D/owner"
check "$KNAME: setup --sum gives range 1 to User2" \
	opalctl setup "$KDEV" -k "$D/admin" --range 1 --start 2048 --length 4096 --sum \
	--new-keyfile "$D/owner" --yes-destroy-data --transport $KT
head -c 1048576 /dev/urandom | dd of="$DEV" bs=65536 seek=16 oflag=direct 2>/dev/null
WANT=$(read_sum)
check "$KNAME: the owner locks range 1" \
	opalctl lock "$KDEV" -k "$D/owner" --user 2 --range 1 --transport $KT
locked "range 1 unreadable while locked"
opalctl unlock "$KDEV" -k "$D/admin" --range 1 --transport $KT 2>"$D/err"
_rc=$?
# Our protocol code tells "not authorized" (14: Admin1's key is right, the
# range is the owner's) from a wrong key (4); the kernel's ioctls cannot.
if [ "$KT" = ioctl ]; then _want=4; else _want=14; fi
expect_eq "$KNAME: Admin1 may not unlock the owner's range (exit $_want)" $_want $_rc
check "$KNAME: the owner unlocks range 1" \
	opalctl unlock "$KDEV" -k "$D/owner" --user 2 --range 1 --transport $KT
expect_eq "data intact after the owner's lock and unlock" "$WANT" "$(read_sum)"

disconnect
kill "$SERVE_PID" 2>/dev/null
wait "$SERVE_PID"
done_testing
