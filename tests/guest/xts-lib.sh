# xts-lib.sh: helpers for the xts_offload guest tests (sourced after lib.sh).
# Interface under test: Documentation/xts-offload.md.

# Totals, the engine list and inject_errors are in debugfs (not ABI);
# per-device counters in sysfs, <device>/xts_offload/<counter>.
XO_DEBUGFS=/sys/kernel/debug/xts_offload
XO_DRV=/sys/bus/virtio/drivers/xts_offload
XO_PARAM=/sys/module/xts_offload/parameters
VIRTIO_ID_CRYPTO=0x0014

# The guest's init mounts debugfs; a script that unmounted it gets it back.
debugfs_mounted() {
	awk '$2 == "/sys/kernel/debug" && $3 == "debugfs" { f = 1 } END { exit !f }' /proc/mounts
}
debugfs_mounted || mount -t debugfs debugfs /sys/kernel/debug >&2

# Modules the tests rely on, loaded before xts_offload so that its fallback
# finds the x86 driver, and the reference driver is there to compare with.
xo_prereqs() {
	modprobe -a aesni_intel xts algif_skcipher crypto_user dm_crypt >&2
}

# The engines are modules of their own on top of the core (xts_offload):
# they come after it and go before it.
XO_ENGINE_MODULES="xts_offload_virtio xts_offload_loopback"

xo_loaded() {
	grep -q '^xts_offload ' /proc/modules
}

# xo_mod_loaded MODULE
xo_mod_loaded() {
	grep -q "^$1 " /proc/modules
}

# xo_rmmod MODULE: remove MODULE if it is loaded. A closed mapping's engine
# sessions (and with them the module reference on their engine) are released
# from a worker: retry for up to 10 s.
xo_rmmod() {
	xo_mod_loaded "$1" || return 0
	wait_until 10 rmmod "$1" || rmmod "$1" >&2
}

# xo_unload: the engine modules, then the core.
xo_unload() {
	for _m in $XO_ENGINE_MODULES xts_offload; do
		xo_rmmod "$_m" || return 1
	done
}

# xo_load [PARAM=VALUE...]: (re)load the core with these parameters, then
# the virtio-crypto engine (which binds the device).
xo_load() {
	xo_prereqs || return 1
	xo_unload || return 1
	modprobe xts_offload "$@" >&2 && modprobe xts_offload_virtio >&2
}

# xo_ensure THRESHOLD: the core is loaded and uses THRESHOLD, and the
# virtio-crypto engine is loaded.
xo_ensure() {
	if xo_loaded; then
		echo "$1" >"$XO_PARAM/threshold" && modprobe xts_offload_virtio >&2
	else
		xo_load threshold="$1"
	fi
}

# xo_total NAME: the module-wide counter NAME (debugfs).
xo_total() {
	cat "$XO_DEBUGFS/stats/$1"
}

# xo_vdev: name (virtioN) of the virtio-crypto device, if there is one.
xo_vdev() {
	for _d in /sys/bus/virtio/devices/virtio*; do
		[ -r "$_d/device" ] || continue
		if [ "$(cat "$_d/device")" = "$VIRTIO_ID_CRYPTO" ]; then
			echo "${_d##*/}"
			return 0
		fi
	done
	return 1
}

# xo_bound: the virtio-crypto device is bound to the driver xts_offload (of
# the module xts_offload_virtio).
xo_bound() {
	_v=$(xo_vdev) || return 1
	[ -e "$XO_DRV/$_v" ]
}

# xo_dev_counter NAME: the counter of the bound device.
xo_dev_counter() {
	_v=$(xo_vdev) || return 1
	cat "/sys/bus/virtio/devices/$_v/xts_offload/$1"
}

# xo_pci_bdf: PCI address of the virtio-crypto device.
xo_pci_bdf() {
	_v=$(xo_vdev) || return 1
	_p=$(readlink -f "/sys/bus/virtio/devices/$_v/..")
	echo "${_p##*/}"
}

# crypto_field DRIVER FIELD: a field of DRIVER's entry in /proc/crypto.
crypto_field() {
	awk -v drv="$1" -v field="$2" '
		/^name/ { found = 0 }
		$1 == "driver" && $3 == drv { found = 1 }
		found && $1 == field { print $3; exit }
	' /proc/crypto
}

# xo_selftest: the selftest field of the skcipher entry xts_offload
# registered (not a larval entry of the same driver name, which 6.12 shows
# while the self-test still runs).
xo_selftest() {
	awk '
		function flush() {
			if (drv == "xts-aes-offload" && mod == "xts_offload" && type == "skcipher")
				print st
			drv = mod = st = type = ""
		}
		/^$/ { flush(); next }
		$1 == "driver" { drv = $3 } $1 == "module" { mod = $3 }
		$1 == "selftest" { st = $3 } $1 == "type" { type = $3 }
		END { flush() }
	' /proc/crypto | head -n 1
}

xo_selftest_done() {
	[ -n "$(xo_selftest)" ] && [ "$(xo_selftest)" != unknown ]
}

# Everything read back must come from the device, not the page cache.
drop_caches() {
	sync
	echo 3 >/proc/sys/vm/drop_caches
}

# ramdisk SIZE_MIB: (re)create /dev/ram0 of SIZE_MIB, zeroed.
ramdisk() {
	if grep -q '^brd ' /proc/modules; then
		rmmod brd >&2 || return 1
	fi
	modprobe brd rd_nr=1 rd_size=$(($1 * 1024)) >&2 && [ -b /dev/ram0 ]
}

# random_file PATH SIZE_MIB
random_file() {
	dd if=/dev/urandom of="$1" bs=1M count="$2" 2>/dev/null
}

# new_key PATH BYTES: a fresh random key in a file (never on argv).
new_key() {
	dd if=/dev/urandom of="$1" bs="$2" count=1 2>/dev/null
}

# xts_open NAME DEVICE KEYFILE KEY_BITS SECTOR_SIZE
# Plain dm-crypt, aes-xts-plain64, the key read from stdin; "--hash plain"
# makes the key file's bytes the volume key as they are.
xts_open() {
	cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
		--key-size "$4" --sector-size "$5" --key-file - "$2" "$1" <"$3" >&2
}

xts_close() {
	cryptsetup close "$1" >&2
}

# readback_equal MAPPING FILE: the first size(FILE) bytes read from the
# mapping (after dropping caches) equal FILE. FILE is a multiple of 64 KiB.
readback_equal() {
	_n=$(stat -c %s "$2")
	drop_caches
	dd if="/dev/mapper/$1" bs=64k count=$((_n / 65536)) 2>/dev/null | cmp "$2" - >&2
}

# write_verify MAPPING FILE: write FILE through the mapping (direct I/O,
# fsync: an I/O error fails dd), read it back and compare.
write_verify() {
	if ! dd if="$2" of="/dev/mapper/$1" bs=64k oflag=direct conv=fsync 2>/dev/null; then
		echo "write_verify: writing $2 to $1 failed" >&2
		return 1
	fi
	if ! readback_equal "$1" "$2"; then
		echo "write_verify: $1 reads back different data" >&2
		return 1
	fi
}

# wait_until SECONDS CMD [ARGS...]: poll CMD every 0.1 s until it succeeds;
# fails when SECONDS pass first. For events with no notification in sysfs.
wait_until() {
	_left=$(($1 * 10))
	shift
	while ! "$@" 2>/dev/null; do
		_left=$((_left - 1))
		[ "$_left" -gt 0 ] || return 1
		sleep 0.1
	done
}

# xo_after_removal MAPPING FILE NOENGINE0 WHAT: two results after the device
# went away during a write of FILE: requests went to the fallback
# (fallback_noengine above NOENGINE0), and FILE reads back intact.
xo_after_removal() {
	_noe=$(xo_total fallback_noengine)
	expect_ge "requests went to the fallback without the engine (fallback_noengine +$((_noe - $3)))" \
		$((_noe - $3)) 1
	check "the data written across the $4 reads back intact" readback_equal "$1" "$2"
}

# xo_offload_resumes MAPPING FILE WHAT: three results once the device is
# back: it binds within 60 s, FILE is written and read back through MAPPING,
# and the engine did it (at least one request per 512 bytes of FILE).
xo_offload_resumes() {
	wait_until 60 xo_bound
	result "after the $3 the device is bound to xts_offload ($(xo_vdev))" $?
	_r1=$(xo_total requests)
	check "write and verify $(($(stat -c %s "$2") >> 20)) MiB after the $3" write_verify "$1" "$2"
	_r2=$(xo_total requests)
	expect_ge "the engine does the work again (requests +$((_r2 - _r1)))" \
		$((_r2 - _r1)) $(($(stat -c %s "$2") / 512))
}

# write_while_busy MAPPING FILE REQUESTS [WHAT]: start writing FILE through MAPPING
# in the background (direct I/O, fsync; its exit status lands in
# /tmp/dd.rc, its pid in XO_WRITER) and return once the engine has completed
# REQUESTS more requests: one result, "[WHAT: ]the engine is busy with the write".
write_while_busy() {
	_req0=$(xo_total requests)
	rm -f /tmp/dd.rc
	(dd if="$2" of="/dev/mapper/$1" bs=64k oflag=direct conv=fsync 2>/dev/null
	 echo $? >/tmp/dd.rc) &
	XO_WRITER=$!
	wait_until 60 counter_above requests $((_req0 + $3))
	result "${4:+$4: }the engine is busy with the write" $?
}

# xo_sessions_ready MAPPING: setkey creates a key's engine sessions when an
# engine is registered; a key set before any was, or bound to an engine
# that went, is bound by a worker after its next request. Write one block
# through MAPPING (direct I/O, at offset 0) and wait up to 30 s until the
# module holds sessions.
xo_sessions_ready() {
	dd if=/dev/zero of="/dev/mapper/$1" bs=64k count=1 oflag=direct 2>/dev/null &&
		wait_until 30 counter_above sessions 1
}

# counter_above NAME VALUE: the total counter NAME exceeds VALUE.
counter_above() {
	[ "$(xo_total "$1")" -gt "$2" ]
}

# --- the loopback test engine (xts_offload_loopback) and a reference ---
# Scripts that use these set DATA_MIB (MiB per ramdisk) first.

# inline_io MAPPING: 4 MiB of fio's random writes at iodepth 16 through the
# mapping, then read back, each block's checksum verified.
inline_io() {
	fio --name=inline --filename="/dev/mapper/$1" --ioengine=libaio --direct=1 \
		--iodepth=16 --rw=randwrite --bs=16k --size=4M --verify=crc32c \
		--do_verify=1 --output-format=terse >/dev/null 2>&1
}

# lb_load [PARAM=VALUE...]: (re)load the loopback module.
lb_load() {
	xo_rmmod xts_offload_loopback || return 1
	modprobe xts_offload_loopback "$@" >&2
}

# engine_field DEVICE FIELD: FIELD=value of DEVICE's line in debugfs engines.
engine_field() {
	awk -v d="$1" -v f="$2" '$1 == d {
		for (i = 3; i <= NF; i++) { split($i, kv, "="); if (kv[1] == f) print kv[2] } }' \
		"$XO_DEBUGFS/engines"
}

# ramdisks N: N fresh ramdisks of DATA_MIB each, /dev/ram0 to /dev/ram(N-1).
ramdisks() {
	if grep -q '^brd ' /proc/modules; then
		rmmod brd >&2 || return 1
	fi
	modprobe brd rd_nr="$1" rd_size=$((DATA_MIB * 1024)) >&2 && [ -b /dev/ram0 ]
}

# pair_open BITS SECTOR: fresh ramdisks, one fresh key; the mapping under
# test, lbt on /dev/ram0, and the reference, lbref on /dev/ram1 through
# xts-aes-aesni (dm-crypt's capi: form names the driver).
pair_open() {
	ramdisks 2 || return 1
	new_key /tmp/key $(($1 / 8))
	xts_open lbt /dev/ram0 /tmp/key "$1" "$2" &&
		cryptsetup open --type plain --cipher capi:xts-aes-aesni-plain64 \
			--hash plain --key-size "$1" --sector-size "$2" \
			--key-file - /dev/ram1 lbref </tmp/key >&2
	_rc=$?
	rm -f /tmp/key
	return $_rc
}

pair_close() {
	cryptsetup close lbt >&2
	_rc=$?
	cryptsetup close lbref >&2 && return $_rc
}

# same_as_reference FILE: FILE, written through the reference as well,
# gives the same raw ciphertext.
same_as_reference() {
	dd if="$1" of=/dev/mapper/lbref bs=64k oflag=direct conv=fsync 2>/dev/null &&
		drop_caches && cmp /dev/ram0 /dev/ram1 >&2
}
