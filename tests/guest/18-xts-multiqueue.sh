#!/bin/sh
# Multi-queue: on a virtio-crypto device with several data queues (the
# harness's --crypto-queues N, which the guest sees as fdekit.crypto_queues=N)
# the module assigns the queues to CPUs and steers each queue's interrupt
# to its CPUs. Checked here:
#  - the assignment is the documented one (N >= CPUs: queue q belongs to
#    CPU q mod CPUs; N < CPUs: CPU i uses queue i * N / CPUs), as debugfs
#    shows it, and every CPU has a queue;
#  - with an interrupt per queue (--crypto-vectors N+2), each queue's
#    interrupt affinity (/proc/irq/IRQ/smp_affinity_list, the kernel's own
#    view) is that queue's CPU list;
#  - dm-crypt pinned to one CPU (no workqueues: the cipher runs in the
#    submitter's context) puts its requests on that CPU's queues only,
#    spread over them when it has several, and each queue's interrupts
#    arrive on that queue's CPUs only (on the submitting CPU itself when
#    it has queues of its own); every queue is used by some CPU;
#  - the device computes each request (no engine error, no fallback), the
#    data reads back intact, and the raw ciphertext equals xts-aes-aesni's.
# With the default device (one data queue) every test is skipped.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
# The test pins work to each CPU in turn: all CPUs must be online.
ncpu=$(grep -c '^processor' /proc/cpuinfo)
# 6 checks of the assignment, per key 5 + 3 per CPU, 1 at the end.
plan $((6 + 2 * (5 + 3 * ncpu) + 1))

MIB=1048576
DATA_MIB=4
queues=$(sed -n 's/.*fdekit\.crypto_queues=\([0-9][0-9]*\).*/\1/p' /proc/cmdline)
if [ -z "$queues" ] || [ "$queues" -le 1 ]; then
	while [ "$_tap_n" -lt "$_tap_plan" ]; do
		skip "multi-queue test $((_tap_n + 1))" \
			"the device has one data queue (run-guest.py --crypto-queues N)"
	done
	done_testing
fi
check "xts_offload loaded with threshold=0" xo_ensure 0
vdev=$(xo_vdev)
xo_bound
result "the virtio-crypto device ($vdev) is bound to xts_offload" $?
queues_file=/sys/kernel/debug/xts_offload/$vdev/queues
[ -r "$queues_file" ] || bail "no $queues_file: the device is not bound"
sed 's/^/# /' "$queues_file"
expect_eq "the driver set up all $queues data queues ($queues_file)" \
	"$queues" "$(wc -l <"$queues_file")"

# queue_cpus Q: the CPU list debugfs gives for data queue Q.
queue_cpus() {
	awk -v q="dataq.$1" '$1 == q && $3 == "cpus" { print $4 }' "$queues_file"
}

# expected_cpus Q: the documented assignment, computed here.
expected_cpus() {
	awk -v q="$1" -v n="$queues" -v c="$ncpu" 'BEGIN {
		s = ""
		for (i = 0; i < c; i++)
			if ((n >= c && q % c == i) || (n < c && int(i * n / c) == q))
				s = s (s == "" ? "" : ",") i
		print s
	}'
}

# each_queue_matches WHAT CMD: for every data queue q, the output of
# "CMD q" equals debugfs's CPU list of q.
each_queue_matches() {
	_q=0
	while [ "$_q" -lt "$queues" ]; do
		_got=$("$2" "$_q")
		if [ "$_got" != "$(queue_cpus "$_q")" ]; then
			echo "dataq.$_q: $1 '$_got', debugfs's CPUs '$(queue_cpus "$_q")'"
			return 1
		fi
		_q=$((_q + 1))
	done
}
check "queues are assigned to the $ncpu CPUs as documented" \
	each_queue_matches "documented assignment" expected_cpus

# cpu_queues CPU: the queues whose CPU list holds CPU, one a line.
cpu_queues() {
	awk -v c="$1" '$3 == "cpus" {
		n = split($4, l, ",")
		for (i = 1; i <= n; i++)
			if (l[i] == c) { sub("dataq.", "", $1); print $1 }
	}' "$queues_file"
}

every_cpu_has_a_queue() {
	_c=0
	while [ "$_c" -lt "$ncpu" ]; do
		[ -n "$(cpu_queues "$_c")" ] || { echo "CPU $_c has no queue"; return 1; }
		_c=$((_c + 1))
	done
}
check "every CPU has a data queue" every_cpu_has_a_queue

# queue_irq Q: the interrupt of data queue Q when it has one of its own.
queue_irq() {
	awk -v name="$vdev-dataq.$1" '$NF == name { sub(":", "", $1); print $1 }' \
		/proc/interrupts
}

# expand_list LIST: a CPU list with ranges ("0-2,5") as single CPUs ("0,1,2,5").
expand_list() {
	echo "$1" | awk -F, '{
		s = ""
		for (i = 1; i <= NF; i++) {
			n = split($i, r, "-")
			for (c = r[1]; c <= (n > 1 ? r[2] : r[1]); c++)
				s = s (s == "" ? "" : ",") c
		}
		print s
	}'
}

# irq_affinity Q: the CPUs data queue Q's interrupt may go to.
irq_affinity() {
	_irq=$(queue_irq "$1")
	_aff=$(expand_list "$(cat "/proc/irq/$_irq/smp_affinity_list")")
	echo "# dataq.$1: interrupt $_irq, affinity $_aff" >&2
	echo "$_aff"
}
if [ -n "$(queue_irq 0)" ]; then
	per_queue_irq=1
	check "each queue's interrupt is steered to its CPUs (/proc/irq)" \
		each_queue_matches "interrupt affinity" irq_affinity
else
	per_queue_irq=0
	skip "each queue's interrupt is steered to its CPUs" \
		"the queues share one interrupt (run-guest.py --crypto-vectors N+2)"
fi

# queue_counts: the submission count of each data queue, in queue order.
queue_counts() {
	awk '{ print $2 }' "$queues_file"
}

# irq_counts: per data queue, its interrupt count on each CPU ("q cpu n").
irq_counts() {
	_q=0
	while [ "$_q" -lt "$queues" ]; do
		grep " $vdev-dataq.$_q\$" /proc/interrupts |
			awk -v q="$_q" -v c="$ncpu" '{ for (i = 0; i < c; i++) print q, i, $(i + 2) }'
		_q=$((_q + 1))
	done
}

# only_on CPU BEFORE AFTER (queue counts): requests went to CPU's queues
# only, and each of them took at least a quarter of its fair share.
only_on() {
	echo "$2" >/tmp/mq-before
	echo "$3" >/tmp/mq-after
	cpu_queues "$1" >/tmp/mq-mine
	paste /tmp/mq-before /tmp/mq-after | awk '
		BEGIN { while ((getline l < "/tmp/mq-mine") > 0) mine[l] = 1 }
		{ d = $2 - $1; q = NR - 1
		  if (q in mine) { total += d; n++; got[q] = d }
		  else if (d != 0) { print "dataq." q " of another CPU took " d; bad = 1 } }
		END {
			if (bad) exit 1
			if (total == 0) { print "no requests on this CPU'"'"'s queues"; exit 1 }
			for (q in got)
				if (got[q] * 4 * n < total) {
					print "dataq." q " took " got[q] " of " total; exit 1
				}
		}'
}

# irqs_on_queue_cpus CPU BEFORE AFTER (irq_counts): each data queue's
# interrupts arrived on that queue's CPUs only, and CPU's queues had some.
irqs_on_queue_cpus() {
	echo "$2" >/tmp/mq-before
	echo "$3" >/tmp/mq-after
	: >/tmp/mq-owners
	_q=0
	while [ "$_q" -lt "$queues" ]; do
		echo "$_q $(queue_cpus "$_q")" >>/tmp/mq-owners
		_q=$((_q + 1))
	done
	cpu_queues "$1" >/tmp/mq-mine
	paste -d ' ' /tmp/mq-before /tmp/mq-after | awk '
		BEGIN {
			while ((getline l < "/tmp/mq-owners") > 0) {
				split(l, f, " "); n = split(f[2], c, ",")
				for (i = 1; i <= n; i++) owner[f[1] " " c[i]] = 1
			}
			while ((getline l < "/tmp/mq-mine") > 0) mine[l] = 1
		}
		{ d = $6 - $3
		  if (d != 0 && !(($1 " " $2) in owner)) {
			print "dataq." $1 ": " d " interrupts on CPU " $2 ", not one of its CPUs"; bad = 1
		  }
		  if ($1 in mine) total += d }
		END {
			if (bad) exit 1
			if (total == 0) { print "no interrupt for this CPU'"'"'s queues"; exit 1 }
		}'
}

used_queues=""
# Both ramdisks hold exactly DATA_MIB: /dev/ram0 under the module, /dev/ram1
# under xts-aes-aesni (dm-crypt's capi: form names the driver).
for bits_sector in 512:4096 256:512; do
	bits=${bits_sector%:*}
	sector=${bits_sector#*:}
	name="${bits}-bit key, ${sector}-byte sectors"
	sectors=$((DATA_MIB * MIB / sector))
	if grep -q '^brd ' /proc/modules; then
		rmmod brd >&2 || bail "cannot reload brd"
	fi
	modprobe brd rd_nr=2 rd_size=$((DATA_MIB * 1024)) >&2 || bail "no ramdisks"
	new_key /tmp/key $((bits / 8))
	# No workqueues: the cipher runs on the CPU that submits.
	cryptsetup open --type plain --cipher aes-xts-plain64 --hash plain \
		--key-size "$bits" --sector-size "$sector" \
		--perf-no_read_workqueue --perf-no_write_workqueue \
		--key-file - /dev/ram0 mq0 </tmp/key >&2 &&
		cryptsetup open --type plain --cipher capi:xts-aes-aesni-plain64 \
			--hash plain --key-size "$bits" --sector-size "$sector" \
			--key-file - /dev/ram1 mqref </tmp/key >&2
	result "$name: open the mapping under test and the xts-aes-aesni reference" $?
	rm -f /tmp/key
	dmsetup table mq0 | sed 's/^/# /'

	random_file /tmp/plain $DATA_MIB
	# setkey (the open) created the key's sessions.
	xo_sessions_ready mq0 || diag "$name: no engine sessions for the key after 30 s"
	# On x86 an MSI whose affinity changed may still be taken once by
	# its old CPU: the move completes with the first interrupt after it.
	# Have every queue interrupt before anything is counted.
	cpu=0
	while [ "$cpu" -lt "$ncpu" ]; do
		taskset -c "$cpu" dd if=/tmp/plain of=/dev/mapper/mq0 bs=64k count=16 \
			oflag=direct 2>/dev/null || diag "warm-up write on CPU $cpu failed"
		cpu=$((cpu + 1))
	done
	req0=$(xo_dev_counter requests)
	err0=$(xo_dev_counter errors)
	busy0=$(xo_dev_counter fallback_busy)
	cpu=0
	while [ "$cpu" -lt "$ncpu" ]; do
		mine=$(cpu_queues "$cpu" | tr "\n" " " | sed "s/ $//")
		taskset -p -c "$cpu" $$ >/dev/null
		q0=$(queue_counts)
		i0=$(irq_counts)
		check "$name, CPU $cpu: write ${DATA_MIB} MiB and read them back intact" \
			write_verify mq0 /tmp/plain
		q1=$(queue_counts)
		i1=$(irq_counts)
		taskset -p -c "0-$((ncpu - 1))" $$ >/dev/null
		echo "$q0" >/tmp/mq-before
		echo "$q1" >/tmp/mq-after
		diag "CPU $cpu, per-queue submissions: +$(paste /tmp/mq-before /tmp/mq-after |
			awk '{ print $2 - $1 }' | tr '\n' ' ' | sed 's/ $//; s/ / +/g')"
		check "$name, CPU $cpu: requests only on its queues ($mine), spread over them" \
			only_on "$cpu" "$q0" "$q1"
		if [ "$per_queue_irq" = 1 ]; then
			check "$name, CPU $cpu: the device's interrupts arrive on the queues' CPUs only" \
				irqs_on_queue_cpus "$cpu" "$i0" "$i1"
		else
			skip "$name, CPU $cpu: interrupts arrive on the queues' CPUs only" \
				"the queues share one interrupt"
		fi
		used_queues="$used_queues $mine"
		cpu=$((cpu + 1))
	done
	req1=$(xo_dev_counter requests)
	err1=$(xo_dev_counter errors)
	busy1=$(xo_dev_counter fallback_busy)
	# With small sectors one CPU can fill its queue's ring faster than
	# the device empties it: those requests spill to software by design
	# (fallback_busy), how many depends on host scheduling. Every other
	# sector must have gone to the device.
	expect_ge "$name: the device took every sector its rings had room for (requests +$((req1 - req0)), ring full +$((busy1 - busy0)))" \
		$((req1 - req0 + busy1 - busy0)) $((2 * ncpu * sectors))
	expect_eq "$name: the device failed no request (errors)" 0 $((err1 - err0))

	dd if=/tmp/plain of=/dev/mapper/mqref bs=64k oflag=direct conv=fsync 2>/dev/null ||
		diag "writing through the reference mapping failed"
	drop_caches
	check "$name: raw ciphertext equals xts-aes-aesni's" cmp /dev/ram0 /dev/ram1
	check "$name: close both mappings" \
		sh -c 'cryptsetup close mq0 && cryptsetup close mqref'
done
expect_eq "every data queue was used by some CPU" "$queues" \
	"$(echo $used_queues | tr ' ' '\n' | sort -u | grep -c .)"
rm -f /tmp/plain /tmp/mq-before /tmp/mq-after /tmp/mq-mine /tmp/mq-owners
done_testing
