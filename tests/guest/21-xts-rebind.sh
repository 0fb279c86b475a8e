#!/bin/sh
# Rebind storm: while three dm-crypt mappings with different keys are
# written and read back without pause, the host hot-unplugs and hot-plugs
# the virtio-crypto device again and again, and every mapping is rekeyed
# (dmsetup message ... key set, its own key again, taken from the kernel
# keyring), so every tfm retires its binding and binds again many times
# with jobs in the device. A job computed with a session that was destroyed
# under it, or handed meanwhile to another mapping's key, shows as: a
# mismatch, a ciphertext unequal to OpenSSL's, or an engine error between
# the unplugs (QEMU fails a job whose session no longer exists). Every
# session is released once the mappings are closed.
# harness: disk storm 72M
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 16

MIB=1048576
DATA_MIB=4
ROUNDS=3
MAPS="st0 st1 st2"
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
scratch=$(disk_by_serial storm)
[ -n "$scratch" ] || bail "no scratch disk"
if grep -q '^brd ' /proc/modules; then
	rmmod brd || bail "cannot reload brd"
fi
modprobe brd rd_nr=3 rd_size=$((DATA_MIB * 1024)) || bail "cannot create three ramdisks"
sess0=$(xo_total sessions)

# NAME KEY_BYTES SECTOR_SIZE for each mapping.
set -- st0 64 512 st1 32 4096 st2 64 4096
i=0
while [ $# -ge 3 ]; do
	new_key "/tmp/key-$1" "$2"
	random_file "/tmp/plain-$1" $DATA_MIB
	check "open $1: $(($2 * 8))-bit key, $3-byte sectors, on /dev/ram$i" \
		xts_open "$1" "/dev/ram$i" "/tmp/key-$1" $(($2 * 8)) "$3"
	echo "$2" >"/tmp/keylen-$1"
	echo "$3" >"/tmp/sector-$1"
	i=$((i + 1))
	shift 3
done
add_keys() {
	for m in $MAPS; do
		logon-key "fdekit:$m" <"/tmp/key-$m" >/dev/null || return 1
	done
}
check "each mapping's key is in the kernel keyring (logon)" add_keys

# rekey NAME: give the mapping its key again, as cryptsetup does on resume.
rekey() {
	dmsetup suspend "$1" || return 1
	dmsetup message "$1" 0 key set ":$(cat "/tmp/keylen-$1"):logon:fdekit:$1"
	_rc=$?
	dmsetup resume "$1" && [ $_rc -eq 0 ]
}

# writer NAME: write the mapping's data and read it back until told to stop.
writer() {
	while [ ! -e /tmp/storm-stop ]; do
		dd if="/tmp/plain-$1" of="/dev/mapper/$1" bs=64k oflag=direct \
			conv=fsync 2>/dev/null || { echo "writing $1 failed"; return 1; }
		dd if="/dev/mapper/$1" bs=64k count=$((DATA_MIB * 16)) iflag=direct \
			2>/dev/null | cmp -s "/tmp/plain-$1" - ||
			{ echo "$1 read back different data"; return 1; }
	done
}

gone() { ! xo_vdev >/dev/null; }

rm -f /tmp/storm-stop
pids=
for m in $MAPS; do
	writer "$m" >"/tmp/storm-log-$m" 2>&1 &
	pids="$pids $!"
done

# Engine errors counted while the device is there: outside the unplugs,
# whose drain fails the jobs the device never took.
err_between=0
err_mark=$(xo_total errors)
for r in $(seq $ROUNDS); do
	why=
	if ! wait_until 60 counter_above requests $(($(xo_total requests) + 200)); then
		why="the engine did not take the writes"
	fi
	err_between=$((err_between + $(xo_total errors) - err_mark))
	host_hotplug del
	wait_until 60 gone || why="$why; the device did not go"
	m=st$((r % 3))
	rekey "$m" || why="$why; rekeying $m without the device failed"
	host_hotplug add
	wait_until 60 xo_bound || why="$why; the device did not come back"
	err_mark=$(xo_total errors)
	for m in $MAPS; do
		rekey "$m" || why="$why; rekeying $m failed"
	done
	[ -z "$why" ] || diag "round $r:$why"
	result "round $r: engine busy, device unplugged, one mapping rekeyed, device back, all rekeyed" \
		"$([ -z "$why" ]; echo $?)"
done
wait_until 60 counter_above requests $(($(xo_total requests) + 200))
result "the engine takes the writes after the last rebinds" $?
err_between=$((err_between + $(xo_total errors) - err_mark))
touch /tmp/storm-stop
failed=0
for p in $pids; do
	wait "$p" || failed=$((failed + 1))
done
cat /tmp/storm-log-* 2>/dev/null | sed 's/^/# /'
expect_eq "3 writers through the storm: no I/O error, no mismatch" 0 "$failed"
expect_eq "the device failed no job outside the unplugs (engine errors)" 0 "$err_between"

closed() {
	for m in $MAPS; do
		xts_close "$m" || return 1
	done
}
check "close the three mappings" closed
sessions_back() { [ "$(xo_total sessions)" -eq "$sess0" ]; }
wait_until 30 sessions_back
result "every session is released once the mappings are gone (sessions $(xo_total sessions), was $sess0)" $?

drop_caches
i=0
for m in $MAPS; do
	base=$((i * 24))
	dd if="/tmp/plain-$m" of="$scratch" bs=1M seek=$base conv=fsync 2>/dev/null &&
	dd if="/dev/ram$i" of="$scratch" bs=1M count=$DATA_MIB seek=$((base + 8)) conv=fsync 2>/dev/null &&
	dd if="/tmp/key-$m" of="$scratch" bs=1M seek=$((base + 16)) conv=fsync 2>/dev/null ||
		diag "copying $m to the scratch disk failed"
	postcheck "$m: the ciphertext after the storm equals OpenSSL AES-XTS plain64" \
		xts-ref check --key "@disk:storm:$(((base + 16) * MIB))" \
		--key-bytes "$(cat "/tmp/keylen-$m")" --sector-size "$(cat "/tmp/sector-$m")" \
		--plain "@disk:storm:$((base * MIB))" --cipher "@disk:storm:$(((base + 8) * MIB))" \
		--bytes $((DATA_MIB * MIB))
	i=$((i + 1))
done
rm -f /tmp/key-* /tmp/plain-* /tmp/keylen-* /tmp/sector-* /tmp/storm-*
done_testing
