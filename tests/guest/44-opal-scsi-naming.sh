#!/bin/sh
# Naming Opal drives on their SCSI face so that a name finds the same drive
# again (lib/opal/drive_id.c through the drive-id helper): three sedsim
# drives over TCMU/tcm_loop, all of one vendor, as SAS drives of one make
# are. A and B differ in serial and WWN; C has A's serial and a WWN of its
# own. The Opal transport's "serial" of a SAS disk (the T10 vendor
# identification sedutil salts with, see 40-opal.sh) is one for all three:
# key slot file names must come from elsewhere, and serial= must refuse to
# guess between two drives.
. "$(dirname "$0")/lib.sh"
plan 23

CFG=/sys/kernel/config/target
TARGET=naa.5001405fde000441
NEXUS=naa.5001405fde000442
D=/tmp/opal-naming
VENDOR=ACME
BLOCKS=8192
WWN_A=naa.5000c50000000a01
WWN_B=naa.5000c50000000a02
WWN_C=naa.5000c50000000a03

check "TCMU and SCSI modules load" load configfs target_core_user tcm_loop sd_mod sg
[ -d "$CFG" ] || mount -t configfs configfs /sys/kernel/config

# drive LETTER SERIAL WWN LUN: create a drive, serve it, link it as LUN.
drive() {
	_dir=$D/$1
	_dev=$CFG/core/user_44/naming$1
	mkdir -p "$_dir" &&
		sedsim create "$_dir" --blocks $BLOCKS --serial "$2" --vendor $VENDOR --wwn "$3" &&
		mkdir -p "$_dev" &&
		printf '%s' "dev_config=fdekit/naming$1,dev_size=$((BLOCKS * 512)),hw_block_size=512" \
			>"$_dev/control" &&
		echo 1 >"$_dev/enable" &&
		start_server "$D/serve-$1.log" sedsim serve "$_dir" "naming$1" &&
		eval "PID_$1=\$SERVER_PID" &&
		mkdir -p "$CFG/loopback/$TARGET/tpgt_1/lun/lun_$4" &&
		ln -s "$_dev" "$CFG/loopback/$TARGET/tpgt_1/lun/lun_$4/naming$1"
}

# The sd disk of LUN N on our target, by SCSI address (tcm_loop's tpgt
# "address" is HOST:0:TPGT), never by the identities under test.
disk_of_lun() {
	_addr=$(cat "$CFG/loopback/$TARGET/tpgt_1/address" 2>/dev/null) || return 1
	for _d in /sys/block/sd*; do
		[ "$(basename "$(realpath "$_d/device")")" = "$_addr:$1" ] || continue
		echo "/dev/${_d##*/}"
		return 0
	done
	return 1
}

mkdir -p "$D" "$CFG/core/user_44" "$CFG/loopback/$TARGET/tpgt_1" &&
	echo "$NEXUS" >"$CFG/loopback/$TARGET/tpgt_1/nexus" ||
	bail "configfs: the TCMU HBA or the tcm_loop target and nexus failed"
drive A SASDRIVE01 $WWN_A 0 || bail "drive A: $(cat "$D/serve-A.log" 2>/dev/null)"
drive B SASDRIVE02 $WWN_B 1 || bail "drive B: $(cat "$D/serve-B.log" 2>/dev/null)"
A='' B=''
for _i in $(seq 1 100); do
	A=$(disk_of_lun 0) && B=$(disk_of_lun 1) && [ -b "$A" ] && [ -b "$B" ] && break
	sleep 0.1
done
if [ -b "$A" ] && [ -b "$B" ] && [ "$A" != "$B" ]; then
	ok "two drives of one vendor appear as SCSI disks $A and $B"
else
	cat "$D"/serve-*.log >&2
	bail "no sd disks for LUNs 0 and 1 (got '$A' '$B')"
fi
SA=${A#/dev/}
SB=${B#/dev/}
# attr FILE: a sysfs attribute without its trailing blanks (vendor is padded to 8).
attr() {
	sed 's/[[:space:]]*$//' "$1"
}

expect_eq "both report the T10 vendor identification $VENDOR" "$VENDOR $VENDOR" \
	"$(attr "/sys/block/$SA/device/vendor") $(attr "/sys/block/$SB/device/vendor")"
expect_eq "the kernel reads A's WWN from sedsim's VPD page 0x83" $WWN_A \
	"$(attr "/sys/block/$SA/device/wwid")"
expect_eq "the kernel reads B's WWN from sedsim's VPD page 0x83" $WWN_B \
	"$(attr "/sys/block/$SB/device/wwid")"

# field KEY OUTPUT: the value of KEY= in drive-id's output.
field() {
	printf '%s\n' "$2" | sed -n "s/^$1=//p"
}

IA=$(drive-id ident "$A") || bail "drive-id ident $A failed"
IB=$(drive-id ident "$B") || bail "drive-id ident $B failed"
printf '# %s\n' $IA $IB
expect_eq "A: transport scsi, serial from VPD page 0x80 (right-aligned there)" "scsi SASDRIVE01" \
	"$(field transport "$IA") $(field serial "$IA")"
expect_eq "A: the selector is its WWN" "wwn=$WWN_A" "$(field selector "$IA")"
expect_eq "B: the selector is its WWN" "wwn=$WWN_B" "$(field selector "$IB")"
FA=$(field file_id "$IA")
FB=$(field file_id "$IB")
if [ -n "$FA" ] && [ -n "$FB" ] && [ "$FA" != "$FB" ] &&
	[ "$(field stable "$IA") $(field stable "$IB")" = "yes yes" ]; then
	ok "the two key slot file names differ ($FA, $FB) and survive renumbering"
else
	not_ok "the two key slot file names differ ($FA, $FB) and survive renumbering"
fi
expect_eq "A's file name is udev's ID_SERIAL_SHORT for it (the NAA in hex)" \
	"${WWN_A#naa.}" "$FA"

expect_eq "A's selector finds A" "$A" "$(drive-id find "$(field selector "$IA")")"
expect_eq "B's selector finds B" "$B" "$(drive-id find "$(field selector "$IB")")"
expect_eq "serial= works on SCSI: serial=SASDRIVE01 finds A" "$A" "$(drive-id find serial=SASDRIVE01)"
expect_eq "serial= works on SCSI: serial=SASDRIVE02 finds B" "$B" "$(drive-id find serial=SASDRIVE02)"
expect_eq "wwn= as udev writes it (0x, upper case) finds B" "$B" \
	"$(drive-id find "wwn=0x$(echo "${WWN_B#naa.}" | tr a-f A-F)")"

# The device itself over SG_IO against the kernel's copy in sysfs: our
# reading of the raw pages (the designator the kernel prefers) agrees.
QA=$(drive-id inquire "$A")
QB=$(drive-id inquire "$B")
expect_eq "A: SG_IO INQUIRY gives what sysfs gives" "$IA" "$QA"
expect_eq "B: SG_IO INQUIRY gives what sysfs gives" "$IB" "$QB"

# C: A's serial, a WWN of its own. serial= now names two drives: refused,
# naming both; the WWNs still name one each.
drive C SASDRIVE01 $WWN_C 2 || bail "drive C: $(cat "$D/serve-C.log" 2>/dev/null)"
C=''
for _i in $(seq 1 100); do
	C=$(disk_of_lun 2) && [ -b "$C" ] && break
	sleep 0.1
done
if [ -b "$C" ]; then ok "a third drive, with A's serial, appears as $C"; else bail "no sd disk for LUN 2"; fi
OUT=$(drive-id find serial=SASDRIVE01)
RC=$?
expect_eq "serial=SASDRIVE01 names two drives: refused (exit 3)" 3 "$RC"
if [ "$OUT" = "$A $C" ] || [ "$OUT" = "$C $A" ]; then
	ok "the refusal names both disks ($OUT)"
else
	not_ok "the refusal names both disks ($OUT)"
fi
expect_eq "A's selector still finds A" "$A" "$(drive-id find "$(field selector "$IA")")"
IC=$(drive-id ident "$C")
expect_eq "C's selector is its WWN and finds C" "wwn=$WWN_C $C" \
	"$(field selector "$IC") $(drive-id find "$(field selector "$IC")")"
if [ "$(field file_id "$IC")" != "$FA" ]; then
	ok "C's file name differs from A's though their serials are one"
else
	not_ok "C's file name differs from A's though their serials are one"
fi

# Leave no disk whose handler is gone: take the LUNs away, then the handlers.
for _l in 0 1 2; do
	rm -f "$CFG/loopback/$TARGET/tpgt_1/lun/lun_$_l"/naming?
	rmdir "$CFG/loopback/$TARGET/tpgt_1/lun/lun_$_l"
done
kill "$PID_A" "$PID_B" "$PID_C" 2>/dev/null
wait
done_testing
