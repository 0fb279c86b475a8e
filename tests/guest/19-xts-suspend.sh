#!/bin/sh
# Suspend and resume while dm-crypt writes through xts_offload. First the
# PM core's device test (pm_test=devices: every device's suspend and resume
# callbacks run, and the virtio core resets the device on resume, without
# the machine sleeping), then a real ACPI S3 round trip that the host ends
# with QMP system_wakeup. Each time: no I/O error, data intact, the engine
# paused rather than removed (no new registration, the key's sessions
# recreated on resume, the per-device counters going on from where they
# were), and the engine takes work again after resume.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 25

PM=/sys/power
DATA_MIB=32
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
grep -qw mem "$PM/state" || bail "no suspend to RAM in $(uname -r): $(cat "$PM/state")"
ramdisk 64 || bail "cannot create /dev/ram0"
new_key /tmp/key 64
check "cryptsetup open aes-xts-plain64, 512-bit key, 512-byte sectors" \
	xts_open xtss /dev/ram0 /tmp/key 512 512

# suspend_during_write WHAT CMD...: write a file through the mapping, run CMD
# (a suspend) while the engine is busy with it; four results.
suspend_during_write() {
	_what=$1
	shift
	random_file /tmp/plain $DATA_MIB
	write_while_busy xtss /tmp/plain 1000 "$_what"
	_reg0=$(dmesg | grep -c "xts(aes) engine registered")
	_res0=$(dmesg | grep -c "engine resumed: sessions of 1 keys recreated")
	_dreq0=$(xo_dev_counter requests)
	"$@"
	result "$_what: suspended and resumed" $?
	wait $XO_WRITER
	expect_eq "$_what: the write went on across it without I/O error" 0 \
		"$(cat /tmp/dd.rc 2>/dev/null)"
	check "$_what: the data reads back intact" readback_equal xtss /tmp/plain
	_reg1=$(dmesg | grep -c "xts(aes) engine registered")
	expect_eq "$_what: the engine was paused, not registered again" 0 $((_reg1 - _reg0))
	_res1=$(dmesg | grep -c "engine resumed: sessions of 1 keys recreated")
	expect_eq "$_what: resume recreated the key's sessions on the same engine" 1 \
		$((_res1 - _res0))
	_dreq1=$(xo_dev_counter requests)
	expect_ge "$_what: the device's counters went on ($_dreq0 before, $_dreq1 after)" \
		"$_dreq1" "$_dreq0"
	# The old sessions are let go once their binding's last job is done.
	wait_until 10 sessions_are 2
	result "$_what: the module holds the key's two sessions, no more ($(xo_total sessions))" $?
}

sessions_are() { [ "$(xo_total sessions)" -eq "$1" ]; }

pm_test_devices() {
	echo devices >"$PM/pm_test" || return 1
	echo mem >"$PM/state"
	_rc=$?
	echo none >"$PM/pm_test"
	return $_rc
}
suspend_during_write "pm_test=devices" pm_test_devices
random_file /tmp/plain2 8
xo_offload_resumes xtss /tmp/plain2 "device suspend test"

s3() {
	grep -qw deep "$PM/mem_sleep" || return 1
	echo deep >"$PM/mem_sleep" &&
	host_wakeup &&
	echo mem >"$PM/state"
}
if grep -qw deep "$PM/mem_sleep" 2>/dev/null; then
	suspend_during_write "ACPI S3" s3
	xo_offload_resumes xtss /tmp/plain2 "S3 resume"
else
	for _d in "the engine is busy with the write" "suspended and resumed" \
		"the write went on across it without I/O error" "the data reads back intact" \
		"paused, not registered again" "sessions recreated" "counters went on" \
		"two sessions" \
		"the device is bound again" "write and verify" "the engine does the work again"; do
		not_ok "ACPI S3: $_d (no deep sleep state in $PM/mem_sleep: $(cat "$PM/mem_sleep" 2>/dev/null))"
	done
fi
check "cryptsetup close" xts_close xtss
rm -f /tmp/key /tmp/plain /tmp/plain2
done_testing
