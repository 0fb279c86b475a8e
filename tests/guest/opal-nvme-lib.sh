# opal-nvme-lib.sh: sedsim as an NVMe/TCP target on 127.0.0.1 and the
# guest's nvme-tcp host connected to it, for the Opal guest tests.
# The script sets D (work directory, with D/drive the sedsim drive), PORT,
# NQN, HOSTNQN, HOSTID; optionally SERVE_ARGS (more sedsim serve-nvme
# options) and CONNECT_OPTS (more /dev/nvme-fabrics options, ",k=v,...").

# The kernel attaches sed-opal to every NVMe controller with Security
# Send/Receive only since 6.2 (commit 94cc781f69f4, "nvme: move OPAL setup
# from PCIe to core"); 6.1 calls init_opal_dev() from the PCIe driver alone
# (drivers/nvme/host/pci.c, nvme_reset_work), so a fabrics namespace has no
# sed-opal context there and its ioctls fail with ENOTSUPP.
case $(uname -r) in
[0-5].* | 6.[01].*) KERNEL_OPAL= ;;
*) KERNEL_OPAL=1 ;;
esac

# Start the drive's NVMe/TCP target (a power-on) and wait until it listens.
serve() {
	# shellcheck disable=SC2086 # SERVE_ARGS is a list of options
	start_server "$D/serve.log" sedsim serve-nvme "$D/drive" --port $PORT --nqn $NQN \
		${SERVE_ARGS:-}
	_rc=$?
	SERVE_PID=$SERVER_PID
	return $_rc
}

# The controller the host created for our subsystem: nvmeN.
find_ctrl() {
	for _c in /sys/class/nvme/nvme*; do
		[ -r "$_c/subsysnqn" ] || continue
		if [ "$(cat "$_c/subsysnqn")" = "$NQN" ]; then
			echo "${_c##*/}"
			return 0
		fi
	done
	return 1
}

# Connect through the fabrics device, as nvme-cli does, then wait for the
# namespace's block device. Sets CTRL (/dev/nvmeN) and DEV (/dev/nvmeNn1).
connect() {
	CTRL=
	DEV=
	echo "transport=tcp,traddr=127.0.0.1,trsvcid=$PORT,nqn=$NQN,hostnqn=$HOSTNQN,hostid=$HOSTID,nr_io_queues=1${CONNECT_OPTS:-}" \
		>/dev/nvme-fabrics || return 1
	_c=$(find_ctrl) || return 1
	CTRL=/dev/$_c
	for _i in $(seq 1 100); do
		for _n in /sys/class/nvme/"$_c"/nvme*n1; do
			[ -e "$_n" ] && [ -b "/dev/${_n##*/}" ] && DEV=/dev/${_n##*/} && return 0
		done
		sleep 0.1
	done
	return 1
}

disconnect() {
	_c=$(find_ctrl) || return 0
	echo 1 >"/sys/class/nvme/$_c/delete_controller"
}

# SHA-256 of the 1 MiB at 1 MiB (inside range 1), bypassing the page cache;
# fails when it cannot be read.
read_sum() {
	echo 3 >/proc/sys/vm/drop_caches
	dd if="$DEV" bs=65536 skip=16 count=16 iflag=direct 2>/dev/null >"$D/back" &&
		[ "$(wc -c <"$D/back")" -eq 1048576 ] && sha256sum <"$D/back" | cut -d' ' -f1
}

# SHA-256 of the first 64 KiB (the global range).
head_sum() {
	dd if="$DEV" bs=65536 count=1 iflag=direct 2>/dev/null | sha256sum | cut -d' ' -f1
}

# locked DESC: ok when range 1 cannot be read.
locked() {
	if read_sum >/dev/null; then not_ok "$1"; else ok "$1"; fi
}
