#!/bin/sh
# sedsim over TCMU: a virtual Opal 2 drive as a real SCSI disk (tcm_loop),
# managed by opalctl over SG_IO, and by the kernel's sed-opal ioctls where
# the kernel enables sed-opal on such a disk.
. "$(dirname "$0")/lib.sh"
plan 31

CFG=/sys/kernel/config/target
WWN=naa.5001405fde000001
NEXUS=naa.5001405fde000002
D=/tmp/opal
BLOCKS=32768
mkdir -p "$D/drive"

check "TCMU and SCSI modules load" load configfs target_core_user tcm_loop sd_mod sg
[ -d "$CFG" ] || mount -t configfs configfs /sys/kernel/config

# Start the drive's handler (a power-on) and wait until it maps the device.
serve() {
	start_server "$D/serve.log" sedsim serve "$D/drive" sedsim
	_rc=$?
	SERVE_PID=$SERVER_PID
	return $_rc
}

# The disk sd created for our LUN, by its INQUIRY model.
find_disk() {
	for _m in /sys/block/sd*/device/model; do
		[ -r "$_m" ] || continue
		case "$(cat "$_m")" in
		"sedsim Opal 2"*) _d=${_m%/device/model}; echo "/dev/${_d##*/}"; return 0 ;;
		esac
	done
	return 1
}

# Read 1 MiB at 1 MiB, bypassing the page cache; prints its SHA-256 or fails.
read_sum() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$DEV" bs=65536 skip=16 count=16 iflag=direct 2>/dev/null >"$D/back" &&
		[ "$(wc -c <"$D/back")" -eq 1048576 ] && sha256sum <"$D/back" | cut -d' ' -f1
}

locked() {
	if read_sum >/dev/null; then not_ok "$1"; else ok "$1"; fi
}

sedsim create "$D/drive" --blocks $BLOCKS --serial GUESTSIM01 --try-limit 5 ||
	bail "sedsim create failed"
mkdir -p "$CFG/core/user_1/sedsim" &&
	echo -n "dev_config=fdekit/sedsim,dev_size=$((BLOCKS * 512)),hw_block_size=512" \
		>"$CFG/core/user_1/sedsim/control" &&
	echo 1 >"$CFG/core/user_1/sedsim/enable" || bail "configfs TCMU device setup failed"
serve || bail "sedsim serve did not start: $(cat "$D/serve.log")"
mkdir -p "$CFG/loopback/$WWN/tpgt_1/lun/lun_0" &&
	echo "$NEXUS" >"$CFG/loopback/$WWN/tpgt_1/nexus" &&
	ln -s "$CFG/core/user_1/sedsim" "$CFG/loopback/$WWN/tpgt_1/lun/lun_0/sedsim" ||
	bail "tcm_loop LUN setup failed"
DEV=
for _i in $(seq 1 100); do
	DEV=$(find_disk) && [ -b "$DEV" ] && break
	sleep 0.1
done
if [ -b "$DEV" ]; then
	ok "sedsim appears as SCSI disk $DEV"
else
	cat "$D/serve.log" >&2
	bail "no sd disk for the TCMU LUN"
fi
expect_eq "disk size from READ CAPACITY" $BLOCKS "$(cat /sys/block/${DEV#/dev/}/size)"
# sd asks REPORT SUPPORTED OPERATION CODES for A2/B5 only when the low-level
# driver marks the device security_supported (6.1: libata only).
if dmesg | grep -q "${DEV#/dev/}.*supports TCG Opal"; then
	KERNEL_OPAL=1
	ok "kernel sd enables sed-opal on the disk"
else
	KERNEL_OPAL=
	skip "kernel sd enables sed-opal on the disk" "tcm_loop disks are not security_supported in $(uname -r)"
fi

check "opalctl discover over SG_IO reports Opal 2" sh -c \
	"opalctl discover $DEV --transport scsi | grep -q 'SSC: *Opal 2'"
check "status over SG_IO: locking not enabled yet" sh -c \
	"opalctl --json status $DEV --transport scsi | grep -q '\"locking_enabled\":false'"

head -c 32 /dev/urandom >"$D/key"
head -c 32 /dev/urandom >"$D/bad"
head -c 1048576 /dev/urandom >"$D/data"
WANT=$(sha256sum <"$D/data" | cut -d' ' -f1)
check "write 1 MiB of data" dd if="$D/data" of="$DEV" bs=65536 seek=16 oflag=direct conv=fsync
expect_eq "data reads back before setup" "$WANT" "$(read_sum)"

check "opalctl setup over SG_IO" opalctl setup "$DEV" --keyfile "$D/key" --global --transport scsi
check "status over SG_IO: locking enabled, global range lock-enabled" sh -c \
	"opalctl --json status $DEV --transport scsi -k $D/key >$D/status.json &&
	 grep -q '\"locking_enabled\":true' $D/status.json &&
	 grep -q '\"read_lock_enabled\":true' $D/status.json"
expect_eq "data intact after setup (the global range keeps its key)" "$WANT" "$(read_sum)"

# A disk in use is neither locked nor reverted without --force: here a
# device-mapper mapping holds it, as LUKS or a mounted file system would.
modprobe dm_mod 2>/dev/null
if dmsetup create fdekit-inuse --table "0 8 linear $DEV 0" 2>"$D/err"; then
	opalctl lock "$DEV" -k "$D/key" --transport scsi 2>"$D/err"
	expect_eq "lock while dm holds the disk: exit code 10" 10 $?
	check "lock while in use: names the holder and --force" \
		grep -q "is held by dm-.*(or add --force)" "$D/err"
	opalctl revert "$DEV" -k "$D/key" --yes-destroy-data --transport scsi 2>"$D/err"
	expect_eq "revert while dm holds the disk: exit code 10, nothing reverted" 10 $?
	dmsetup remove fdekit-inuse
else
	cat "$D/err" >&2
	for _t in "lock while dm holds the disk: exit code 10" \
		"lock while in use: names the holder and --force" \
		"revert while dm holds the disk: exit code 10, nothing reverted"; do
		not_ok "$_t"
	done
fi
check "opalctl lock over SG_IO" opalctl lock "$DEV" -k "$D/key" --transport scsi
locked "reads fail while locked"
opalctl unlock "$DEV" --keyfile "$D/bad" --transport scsi 2>"$D/err"
expect_eq "wrong key: exit code 4" 4 $?
# The Opal SSC lets only admins read the tries left: the message warns instead.
check "wrong key: says authentication failed and that it used up a try" \
	grep -q "authentication failed.*each wrong key uses up one of the authority's tries" "$D/err"
check "opalctl unlock over SG_IO" opalctl unlock "$DEV" -k "$D/key" --transport scsi
expect_eq "data intact after unlock" "$WANT" "$(read_sum)"

# Power cycle: restart the drive's handler; power-on applies LockOnReset.
kill "$SERVE_PID"
wait "$SERVE_PID"
serve || bail "sedsim serve did not restart"
locked "power cycle re-locks the range"
check "unlock after power cycle (auto transport)" opalctl unlock "$DEV" -k "$D/key"
expect_eq "data intact after power cycle and unlock" "$WANT" "$(read_sum)"

if [ -n "$KERNEL_OPAL" ]; then
	check "kernel ioctl: lock" opalctl lock "$DEV" -k "$D/key" --transport ioctl
	locked "kernel ioctl: reads fail while locked"
	check "kernel ioctl: unlock --save accepted" \
		opalctl unlock "$DEV" -k "$D/key" --save --transport ioctl
else
	why="no sed-opal context for this disk in $(uname -r)"
	opalctl lock "$DEV" -k "$D/key" --transport ioctl 2>"$D/err"
	expect_eq "kernel ioctl on a disk without sed-opal: exit code 3 (unsupported)" 3 $?
	skip "kernel ioctl: reads fail while locked" "$why"
	skip "kernel ioctl: unlock --save accepted" "$why"
fi

check "opalctl revert --yes-destroy-data over SG_IO" \
	opalctl revert "$DEV" -k "$D/key" --yes-destroy-data --transport scsi
GOT=$(read_sum)
if [ -n "$GOT" ] && [ "$GOT" != "$WANT" ]; then
	ok "revert wiped the data (media key regenerated)"
else
	not_ok "revert wiped the data (media key regenerated)"
fi
check "after revert: locking disabled (factory state)" sh -c \
	"opalctl --json discover $DEV --transport scsi | grep -q '\"locking_enabled\":false'"

# sedutil's password hashing on a SCSI disk that is not ATA (SAS; sd over
# tcm_loop answers no HDIO_GET_IDENTITY): sedutil's identify_SAS salts with
# the standard INQUIRY's 8-byte T10 vendor identification, NUL-padded to 20
# bytes, not with a serial number. The PIN below is
# PBKDF2-HMAC-SHA1("fdekit-sas-salt", "FDEKIT  " + 12 NULs, 75000, 32) as
# Python's hashlib computes it (6cdf7e78...6e84ad); salted with the VPD 0x80
# serial "GUESTSIM01" it would be b604d70a...f64c78.
printf 'fdekit-sas-salt' >"$D/password"
printf '\154\337\176\170\366\303\302\155\126\314\012\003\006\115\375\051' >"$D/sas-pin"
printf '\233\340\175\307\344\345\077\202\251\053\070\013\076\156\204\255' >>"$D/sas-pin"
check "setup --hash sedutil over SG_IO (a SAS disk)" \
	opalctl setup "$DEV" -k "$D/password" --hash sedutil --global --transport scsi
check "sedutil's SAS salt: the PIN set is PBKDF2 over the T10 vendor id (Admin1 accepts it raw)" \
	opalctl unlock "$DEV" -k "$D/sas-pin" --hash none --transport scsi

kill "$SERVE_PID" 2>/dev/null
done_testing
