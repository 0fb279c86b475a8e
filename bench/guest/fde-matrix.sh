#!/bin/sh
# Guest side of bench/fde-matrix: the disk-encryption studies' fio matrix
# (pattern x block size x iodepth) on every target (plain device, dm-crypt
# on the kernel's AES-NI driver, on xts_offload with and without its
# engine, ...) and device (brd, null_blk, MD RAID-0 over three brd), all in
# one boot; or, with FDM_WORKLOAD=sysbench, sysbench fileio (mode x block
# size) on an ext4 file system made on each target. The host fills in the
# configuration below, collects the raw results from the "results" disk (a
# tar archive: fio's JSON or sysbench's output, and the counters read at
# each job's start and end) and computes everything else.
#
# Lines for the host on stdout, all starting with "FDM ":
#   FDM info KEY VALUE...           facts about the guest and the setup
#   FDM row I N TARGET DEVICE       row I of N starts
#   FDM error CODE MESSAGE          a condition the host turns into exit CODE
#   FDM done                        every row ran; results are on the disk
# Per-job progress ("FDM cell ...") goes to the same channel from the
# snapshot helper that fio runs before and after each job.
#
# harness: disk results 64M
set -u
# @CONFIG@ (replaced by bench/fde-matrix with the run's configuration)
FDM_ROWS=${FDM_ROWS:-plain:brd}	# TARGET:DEVICE, targets in the order below
FDM_CELLS=${FDM_CELLS:-randwrite:4k:1}
FDM_RUNTIME_MS=${FDM_RUNTIME_MS:-100}
FDM_DEV_MIB=${FDM_DEV_MIB:-64}
FDM_NULLB_MIB=${FDM_NULLB_MIB:-1024}
FDM_SECTOR=${FDM_SECTOR:-4096}
FDM_FIO=${FDM_FIO:-fio}
FDM_WORKLOAD=${FDM_WORKLOAD:-fio}	# fio or sysbench
FDM_SYSBENCH=${FDM_SYSBENCH:-sysbench}
FDM_SB_FILE_MIB=${FDM_SB_FILE_MIB:-16}	# sysbench's file set (--file-total-size)
FDM_SB_FILES=${FDM_SB_FILES:-128}	# files in it (--file-num; sysbench's default)
FDM_SB_FLAGS=${FDM_SB_FLAGS:-}	# --file-extra-flags: empty (buffered) or direct
FDM_ROW_LIMIT=${FDM_ROW_LIMIT:-600}	# guest seconds before a row's I/O counts as hung
FDM_HOST_TAR=${FDM_HOST_TAR:-/dev/null}

GUEST_DIR=$(dirname "$0")
. "$GUEST_DIR/lib.sh"
. "$GUEST_DIR/xts-lib.sh"
umask 022

OUT=/tmp/fdm-out
WORK=/tmp/fdm
KEY=$WORK/key
MAP=fdm
LUKS_MIB=16	# LUKS2 header and key slots: data starts 16 MiB in
mkdir -p "$OUT" "$WORK"
# The channel to the host, for the snapshot helper fio runs (whose own
# output fio redirects to a file).
CHANNEL=$(readlink /proc/$$/fd/1)

say() { echo "FDM $*"; }
fail() {	# fail CODE MESSAGE: one line for the host, exit CODE
	_code=$1
	shift
	say error "$_code" "$*"
	exit "$_code"
}

if [ "$FDM_WORKLOAD" = sysbench ]; then
	command -v "$FDM_SYSBENCH" >/dev/null 2>&1 ||
		fail 7 "sysbench not found in the guest (looked for '$FDM_SYSBENCH' in PATH): add sysbench to tests/qemu/host-binaries.txt and install it on the host (scripts/bootstrap)"
	command -v mkfs.ext4 >/dev/null 2>&1 ||
		fail 6 "mkfs.ext4 not found in the guest: add it to tests/qemu/host-binaries.txt and install e2fsprogs on the host (scripts/bootstrap)"
else
	command -v "$FDM_FIO" >/dev/null 2>&1 ||
		fail 5 "fio not found in the guest (looked for '$FDM_FIO' in PATH): add fio to tests/qemu/host-binaries.txt and install it on the host (scripts/bootstrap)"
fi

# snap pre|post JOB: the counters at one boundary of one fio job.
#   clock   the guest clock in microseconds (busybox sh's EPOCHREALTIME)
#   cpu     /proc/stat's first line (USER_HZ ticks)
#   idle    the CPUs' idle and iowait time in nanoseconds, from
#           /proc/timer_list: the same per-CPU idle time /proc/stat's idle
#           column is made of, without its rounding to 10 ms
#   xo_*    xts_offload's counters, when the module is loaded
# Before the job the clock is read last, after it first: what the helper
# costs itself stays outside the interval. Idle time cannot grow while the
# helper runs (it keeps the one CPU busy), so reading it outside is exact.
cat >"$WORK/snap" <<EOF
#!/bin/sh
xo() {
	[ -d $XO_DEBUGFS/stats ] || return 0
	for c in requests bytes completed_async fallback_small fallback_busy fallback_noengine fallback_error; do
		read -r v <$XO_DEBUGFS/stats/\$c
		echo "xo_\$c \$v"
	done
}
idle() {
	grep -E '^ +\.(idle|iowait)_sleeptime' /proc/timer_list |
		awk '{ s += \$(NF - 1) } END { printf "idle %.0f\\n", s }'
}
if [ "\$1" = pre ]; then
	{ xo; idle; read -r l </proc/stat; echo "\$l"; echo "clock \$EPOCHREALTIME"; } >"\$2.pre"
else
	{ echo "clock \$EPOCHREALTIME"; read -r l </proc/stat; echo "\$l"; idle; xo; } >"\$2.post"
	echo "FDM cell \$2" >$CHANNEL
fi
EOF
chmod +x "$WORK/snap"

say info kernel "$(uname -r)"
if [ "$FDM_WORKLOAD" = sysbench ]; then
	say info sysbench "$("$FDM_SYSBENCH" --version)"
	say info mkfs "$(mkfs.ext4 -V 2>&1 | head -n1)"
else
	say info fio "$("$FDM_FIO" --version)"
fi
say info cpus "$(grep -c ^processor /proc/cpuinfo)"
say info cpu_model "$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n1)"
say info icount "$(grep -qw fdekit.icount /proc/cmdline && echo yes || echo no)"
say info user_hz "$(getconf CLK_TCK 2>/dev/null || echo 100)"

has() {	# has WORD LIST
	case " $2 " in *" $1 "*) return 0 ;; esac
	return 1
}
FDM_TARGETS=""
FDM_DEVICES=""
for r in $FDM_ROWS; do
	has "${r%%:*}" "$FDM_TARGETS" || FDM_TARGETS="$FDM_TARGETS ${r%%:*}"
	has "${r#*:}" "$FDM_DEVICES" || FDM_DEVICES="$FDM_DEVICES ${r#*:}"
done

modprobe -a dm_mod dm_crypt aesni_intel xts crypto_null >&2 ||
	fail 1 "cannot load dm_crypt and the AES-NI modules"
if [ "$FDM_WORKLOAD" = sysbench ]; then
	modprobe ext4 >&2 || fail 1 "cannot load ext4"
fi
head -c 64 /dev/urandom >"$KEY"

# --- devices -------------------------------------------------------------
nram=0
has brd "$FDM_DEVICES" && nram=1
has raid0 "$FDM_DEVICES" && nram=$((nram + 3))
if [ "$nram" -gt 0 ]; then
	modprobe brd rd_nr=$nram rd_size=$((FDM_DEV_MIB * 1024)) >&2 ||
		fail 1 "cannot load brd"
	# Every page written once: a first write allocates the page, a read
	# of a page never written returns zeros without copying.
	i=0
	while [ "$i" -lt "$nram" ]; do
		dd if=/dev/zero of=/dev/ram$i bs=1M count="$FDM_DEV_MIB" oflag=direct 2>/dev/null ||
			fail 1 "cannot fill /dev/ram$i"
		i=$((i + 1))
	done
fi
dev_path() {
	case $1 in
	brd) echo /dev/ram0 ;;
	null_blk) echo /dev/nullb0 ;;
	raid0) echo /dev/md0 ;;
	esac
}
if has null_blk "$FDM_DEVICES"; then
	# Default queue mode (blk-mq) and completion (softirq); no memory.
	modprobe null_blk nr_devices=1 gb=$((FDM_NULLB_MIB / 1024)) >&2 ||
		fail 1 "cannot load null_blk"
fi
if has raid0 "$FDM_DEVICES"; then
	first=$([ "$nram" -eq 4 ] && echo 1 || echo 0)
	modprobe -a md_mod raid0 >&2 || fail 1 "cannot load md_mod/raid0"
	mdadm --create /dev/md0 --run --quiet --level=0 --raid-devices=3 \
		--chunk=512 --metadata=1.2 \
		/dev/ram$first /dev/ram$((first + 1)) /dev/ram$((first + 2)) >&2 ||
		fail 1 "mdadm cannot create the RAID-0 over three brd ramdisks"
	say info raid0 "$(cat /sys/block/md0/md/level) chunk $(cat /sys/block/md0/md/chunk_size) over $(ls /sys/block/md0/slaves | tr '\n' ' ')"
fi

# The largest block size must fit the smallest mapping.
maxbs=0
for c in $FDM_CELLS; do
	bs=${c#*:}
	bs=${bs%%:*}
	n=${bs%[kKmM]}
	case $bs in *[kK]) n=$((n * 1024)) ;; *[mM]) n=$((n << 20)) ;; esac
	[ "$n" -gt "$maxbs" ] && maxbs=$n
done
for d in $FDM_DEVICES; do
	p=$(dev_path "$d")
	[ -b "$p" ] || fail 1 "device $d ($p) did not appear"
	size=$(blockdev --getsize64 "$p")
	say info device "$d $p $size"
	usable=$((size - (LUKS_MIB << 20)))
	[ "$maxbs" -le "$usable" ] ||
		fail 4 "block size $maxbs bytes is larger than device $d ($p: $usable bytes usable after the LUKS2 header)"
done

# --- targets -------------------------------------------------------------
# The xts(aes) driver the open mapping uses: the one with a user beyond
# itself (refcnt above 1), as /proc/crypto lists it.
xts_driver() {
	awk '/^driver/ { d = $3 } /^refcnt/ && $3 > 1 && d ~ /^xts/ { print d; exit }' /proc/crypto
}

# null_blk keeps no data: its LUKS2 header lives in a file (detached
# header, data from sector 0), as cryptsetup's --header allows.
luks_header() {
	[ "$1" = null_blk ] && echo "--header $WORK/luks-$1.hdr"
}
luks_done=""
luks_format() {	# once per device: every LUKS2 target shares the header
	has "$1" "$luks_done" && return 0
	# shellcheck disable=SC2046
	cryptsetup luksFormat --batch-mode --type luks2 --cipher aes-xts-plain64 \
		--key-size 512 --sector-size "$FDM_SECTOR" --pbkdf pbkdf2 \
		--pbkdf-force-iterations 1000 --hash sha256 \
		$(luks_header "$1") --key-file "$KEY" "$2" >&2 || return 1
	luks_done="$luks_done $1"
}

NOWQ="--perf-no_read_workqueue --perf-no_write_workqueue"
# open_target TARGET DEVICE PATH: prints the block device to test.
open_target() {
	case $1 in
	plain)
		echo "$3"
		return 0 ;;
	null)
		_s=$(($(blockdev --getsz "$3") / (FDM_SECTOR / 512) * (FDM_SECTOR / 512)))
		dmsetup create $MAP --table "0 $_s crypt cipher_null-ecb - 0 $3 0 1 sector_size:$FDM_SECTOR" >&2 ||
			return 1 ;;
	aesni-plain)
		cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
			--key-size 512 --sector-size "$FDM_SECTOR" \
			--key-file "$KEY" "$3" $MAP >&2 || return 1 ;;
	aesni | offload | fallback)
		luks_format "$2" "$3" || return 1
		# shellcheck disable=SC2046
		cryptsetup open $(luks_header "$2") --key-file "$KEY" "$3" $MAP >&2 || return 1 ;;
	aesni-nowq | offload-nowq)
		luks_format "$2" "$3" || return 1
		# shellcheck disable=SC2086
		cryptsetup open $NOWQ $(luks_header "$2") --key-file "$KEY" "$3" $MAP >&2 || return 1 ;;
	*)
		return 1 ;;
	esac
	echo /dev/mapper/$MAP
}

close_target() {
	case $1 in
	plain) ;;
	null) dmsetup remove $MAP >&2 ;;
	*) cryptsetup close $MAP >&2 ;;
	esac
}

# Module state a target needs. Targets arrive in this order from the host:
# plain, null, aesni, aesni-plain, aesni-nowq (xts_offload not loaded, so
# dm-crypt gets the kernel's default xts(aes)), offload, offload-nowq (module
# loaded, engine bound, threshold 0), fallback (engine unbound).
prepare_target() {
	case $1 in
	offload | offload-nowq)
		xo_loaded || xo_load threshold=0 || return 1
		wait_until 30 xo_bound || return 1
		wait_until 30 xo_selftest_done || return 1
		say info threshold "$(cat $XO_PARAM/threshold)" ;;
	fallback)
		xo_loaded || xo_load threshold=0 || return 1
		for _d in "$XO_DRV"/virtio*; do
			[ -e "$_d" ] || continue
			echo "${_d##*/}" >"$XO_DRV/unbind" || return 1
		done
		! xo_bound || return 1 ;;
	esac
}

expected_driver() {
	case $1 in
	plain | null) echo - ;;
	offload | offload-nowq | fallback) echo xts-aes-offload ;;
	*) echo any ;;
	esac
}

# The fio job file of one row: one job per cell, one after another
# (stonewall), each bounded by time, the snapshot helper around it.
# fio touches (fills) its buffers while it sets a job up, before the
# snapshot helper runs, only when the job may write: a read job would fault
# in and clear iodepth x block size of fresh memory (128 MiB at iodepth 32
# and 4M) inside the measured interval, which swamps a short cell. So reads
# run as a read/write mix with 100% reads (rw=rw or randrw, rwmixread=100):
# the same I/O, its buffers touched up front as for writes.
job_file() {
	cat <<EOF
[global]
ioengine=libaio
direct=1
filename=$1
time_based=1
runtime=${FDM_RUNTIME_MS}ms
stonewall
clat_percentiles=0
lat_percentiles=1
percentile_list=50:99
EOF
	for c in $FDM_CELLS; do
		_p=${c%%:*}
		_r=${c#*:}
		_bs=${_r%%:*}
		_qd=${_r#*:}
		_job="$_p-$_bs-$_qd"
		case $_p in
		read) _rw="rw=rw
rwmixread=100" ;;
		randread) _rw="rw=randrw
rwmixread=100" ;;
		*) _rw="rw=$_p" ;;
		esac
		cat <<EOF

[$_job]
$_rw
bs=$_bs
iodepth=$_qd
exec_prerun=$WORK/snap pre $_job
exec_postrun=$WORK/snap post $_job
EOF
	done
}

# run_fio TARGET DEVICE DIR: the row's fio run, watched: when it outlives
# FDM_ROW_LIMIT seconds of guest time, I/O is taken as hung (a row's cells
# take a fraction of that), the blocked tasks go to the console, and the
# guest powers off with one line for the host naming the cell.
run_fio() {
	(cd "$3" && exec "$FDM_FIO" --eta=never --output-format=json --output=fio.json job.fio) >&2 &
	_fpid=$!
	(
		sleep "$FDM_ROW_LIMIT"
		_last=$(cd "$3" && ls -t -- *.post 2>/dev/null | head -n 1)
		_last=${_last%.post}
		if [ -d $XO_DEBUGFS/stats ]; then
			for _f in $XO_DEBUGFS/stats/*; do echo "xts_offload ${_f##*/} $(cat "$_f")"; done >&2
		fi
		echo w >/proc/sysrq-trigger
		say error 1 "target $1 on $2: fio still runs after $FDM_ROW_LIMIT s of guest time: I/O hung in the cell after ${_last:-the start} (blocked tasks and counters are in the guest log)"
		sleep 1
		poweroff -f
	) &
	_wpid=$!
	wait "$_fpid"
	_rc=$?
	kill "$_wpid" 2>/dev/null
	return $_rc
}

# --- sysbench fileio ---------------------------------------------------------
# Every target gets the same ext4 file system: 4 KiB blocks, the size of the
# device less the LUKS2 header (so plain, which has no header, and the
# mappings have the same geometry; see run_sysbench), inode tables and
# journal written by mkfs (no lazy init in the background of a
# measurement), no discard (brd would free the pages it was filled with). sysbench fileio prepares its
# file set once per row (seqwr, sequential creation, deletes and writes it
# again); each cell then runs one mode over it, with a fixed random seed,
# after the page cache was written back and dropped, bounded to one pass:
# as many reads and writes as the file set has blocks. sysbench counts its
# fsync() calls as events too: with writes, after every 100 requests it
# fsyncs each of its files, one event each, so --events is the pass plus
# FILES x ((PASS - 1) / 100). The counters are read around sysbench's run,
# and the block device's own statistics (sectors read and written) around
# them. Before the cells, the same command doing a single read ("_start")
# measures what sysbench costs around its I/O (loading, opening its files,
# exiting), which the host takes off each cell's CPU time.
SB_MNT=$WORK/mnt

# dev_sectors MAPPING: "dev SECTORS_READ SECTORS_WRITTEN" of its block
# device (found by its numbers: without udev, /dev/mapper/NAME is a node).
dev_sectors() {
	# shellcheck disable=SC2046
	set -- $(stat -L -c '%t %T' "$1")
	awk '{ print "dev", $3, $7 }' "/sys/dev/block/$((0x$1)):$((0x$2))/stat"
}

sysbench_cells() {	# sysbench_cells TARGET DEVICE MAPPING DIR
	_first=${FDM_CELLS%% *}
	for c in "_start:${_first#*:}" $FDM_CELLS; do
		_p=${c%%:*}
		_r=${c#*:}
		_bs=${_r%%:*}
		_job="$_p-$_bs-${_r#*:}"
		_mode=$_p
		_n=${_bs%[kKmM]}
		case $_bs in *[kK]) _n=$((_n * 1024)) ;; *[mM]) _n=$((_n << 20)) ;; esac
		_ev=$(((FDM_SB_FILE_MIB << 20) / _n))
		case $_p in
		_start) _job=_start _mode=rndrd _ev=1 ;;
		seqrd | rndrd) ;;
		*) _ev=$((_ev + FDM_SB_FILES * ((_ev - 1) / 100))) ;;
		esac
		sync
		echo 3 >/proc/sys/vm/drop_caches
		dev_sectors "$3" >"$4/$_job.dpre"
		(cd "$4" && exec "$WORK/snap" pre "$_job")
		(cd "$SB_MNT" && exec "$FDM_SYSBENCH" fileio $SB_OPTS --file-test-mode="$_mode" \
			--file-block-size="$_n" --events="$_ev" --time=0 --rand-seed=1 run) \
			>"$4/$_job.sysbench" 2>&1
		_rc=$?
		(cd "$4" && exec "$WORK/snap" post "$_job")
		dev_sectors "$3" >"$4/$_job.dpost"
		if [ "$_rc" -ne 0 ]; then
			cat "$4/$_job.sysbench" >&2
			return 1
		fi
	done
}

# run_sysbench TARGET DEVICE MAPPING PATH DIR: the row, watched as fio's
# rows are (after FDM_ROW_LIMIT seconds of guest time its I/O counts as hung).
run_sysbench() {
	SB_OPTS="--file-num=$FDM_SB_FILES --file-total-size=${FDM_SB_FILE_MIB}M --file-fsync-freq=100${FDM_SB_FLAGS:+ --file-extra-flags=$FDM_SB_FLAGS}"
	# The device less the LUKS2 header, whose end cryptsetup aligns to
	# the device's optimal I/O size (MD RAID-0: its stripe), less one
	# such size more: the same on every target of the device.
	_opt=$(cat "/sys/block/${4##*/}/queue/optimal_io_size" 2>/dev/null || echo 0)
	_kib=$((($(blockdev --getsize64 "$4") - (LUKS_MIB << 20) - ${_opt:-0}) / 4096 * 4))
	[ $((_kib * 1024)) -le "$(blockdev --getsize64 "$3")" ] || {
		echo "a $_kib KiB file system does not fit $3 ($(blockdev --getsize64 "$3") bytes)" >&2
		return 1
	}
	echo "filesystem ext4 $_kib KiB" >>"$5/info"
	mkfs.ext4 -q -F -b 4096 -T default -E lazy_itable_init=0,lazy_journal_init=0,nodiscard \
		"$3" "${_kib}k" >&2 || return 1
	mkdir -p "$SB_MNT"
	mount -t ext4 "$3" "$SB_MNT" >&2 || return 1
	# shellcheck disable=SC2086
	(cd "$SB_MNT" && exec "$FDM_SYSBENCH" fileio $SB_OPTS prepare) >"$5/prepare.sysbench" 2>&1 || {
		cat "$5/prepare.sysbench" >&2
		return 1
	}
	sysbench_cells "$1" "$2" "$3" "$5" &
	_spid=$!
	(
		sleep "$FDM_ROW_LIMIT"
		_last=$(cd "$5" && ls -t -- *.post 2>/dev/null | head -n 1)
		_last=${_last%.post}
		(cd "$5" && "$WORK/snap" pre hung >/dev/null 2>&1 && cat hung.pre) >&2
		echo w >/proc/sysrq-trigger
		say error 1 "target $1 on $2: sysbench still runs after $FDM_ROW_LIMIT s of guest time: I/O hung in the cell after ${_last:-the start} (blocked tasks and counters are in the guest log)"
		sleep 1
		poweroff -f
	) &
	_wpid=$!
	wait "$_spid"
	_rc=$?
	kill "$_wpid" 2>/dev/null
	[ "$_rc" -eq 0 ] || return "$_rc"
	umount "$SB_MNT" >&2
}

nrows=$(echo $FDM_ROWS | wc -w)
row=0
for t in $FDM_TARGETS; do
	prepare_target "$t" || fail 1 "cannot prepare target $t (module state)"
	for d in $FDM_DEVICES; do
		has "$t:$d" "$FDM_ROWS" || continue
		row=$((row + 1))
		say row $row $nrows "$t" "$d"
		p=$(dev_path "$d")
		dev=$(open_target "$t" "$d" "$p") || fail 1 "cannot set up target $t on $d ($p)"
		rdir=$OUT/$t/$d
		mkdir -p "$rdir"
		drv=$(xts_driver)
		drv=${drv:--}
		want=$(expected_driver "$t")
		if [ "$want" = - ] && [ "$drv" != - ]; then
			fail 1 "target $t on $d uses xts driver $drv, expected none"
		elif [ "$want" != any ] && [ "$want" != - ] && [ "$drv" != "$want" ]; then
			fail 1 "target $t on $d uses xts driver $drv, expected $want"
		elif [ "$want" = any ] && [ "$drv" = xts-aes-offload ]; then
			fail 1 "target $t on $d uses xts-aes-offload, expected the kernel's own driver"
		fi
		{
			echo "target $t"
			echo "device $d"
			echo "path $p"
			echo "mapping $dev"
			echo "driver $drv"
			echo "size $(blockdev --getsize64 "$dev")"
			[ "$dev" = "$p" ] || dmsetup table $MAP | sed 's/^/table /'
			if xo_loaded; then
				echo "threshold $(cat $XO_PARAM/threshold)"
				echo "engine_bound $(xo_bound && echo yes || echo no)"
			fi
		} >"$rdir/info"
		if [ "$FDM_WORKLOAD" = sysbench ]; then
			run_sysbench "$t" "$d" "$dev" "$p" "$rdir" ||
				fail 1 "sysbench failed on target $t, device $d (its output is in the guest log)"
		else
			job_file "$dev" >"$rdir/job.fio"
			run_fio "$t" "$d" "$rdir" || fail 1 "fio failed on target $t, device $d"
		fi
		close_target "$t" || fail 1 "cannot tear down target $t on $d"
	done
done

results=$(disk_by_serial results) || fail 1 "the results disk is missing"
(cd "$OUT" && tar -cf "$results" .) || fail 1 "cannot write the results to $results"
sync
postcheck "results copied to the host" copy @disk:results "$FDM_HOST_TAR"
say done
