#!/bin/sh
# cryptbench in the guest: against xts-aes-offload and the kernel's aesni
# driver in the same boot; --compare-cryptsetup ratio; engine share; JSON
# carries the table's figures; exit codes of bad input.
# The [0.8, 1.25] bound of the cryptsetup ratio holds in the deterministic
# mode (run-guest.py --icount, which adds fdekit.icount): both tools run the
# same kernel code, so they must agree. Under plain TCG guest time follows
# the host's load (a CI host running two guests at once on two cores saw
# 0.41), so there only a positive ratio is checked, named as such.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 50

T=/tmp/cryptbench
mkdir -p "$T"
if grep -q 'fdekit.icount' /proc/cmdline; then
	deterministic=1
	lo=0.8 hi=1.25
	diag "deterministic mode (icount): ratio bound [$lo, $hi]"
else
	deterministic=0
	diag "wall-clock mode (plain TCG): the ratio bound is checked only with icount"
fi

# in_range VALUE LO HI: VALUE is a decimal number (not empty, nan or inf)
# and LO <= VALUE <= HI.
in_range() {
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN {
		exit !(v ~ /^[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?$/ &&
		       v + 0 >= lo && v + 0 <= hi) }'
}

# ratio_check DRIVER ENC DEC: the cryptbench/cryptsetup ratios, bounded in
# the deterministic mode, present and positive in wall-clock mode.
ratio_check() {
	if [ $deterministic = 1 ]; then
		in_range "$2" $lo $hi && in_range "$3" $lo $hi
		result "$1: cryptbench --copy / cryptsetup ratio within [$lo, $hi] (enc $2, dec $3)" $?
	else
		in_range "$2" 0.000001 1000000 && in_range "$3" 0.000001 1000000
		result "$1: cryptbench --copy / cryptsetup ratio present and positive (enc $2, dec $3; bound only with icount)" $?
	fi
}

# csv_field FILE DRIVER REQUEST COLUMN: a field of cryptbench's CSV row.
csv_field() {
	awk -F, -v drv="$2" -v req="$3" -v col="$4" '
		NR == 1 { for (i = 1; i <= NF; i++) idx[$i] = i; next }
		$3 == drv && $6 == req { print $idx[col]; exit }
	' "$1"
}

# expect_exit DESCRIPTION CODE CMD...: CMD exits with CODE and prints one
# error line on stderr.
expect_exit() {
	_d=$1 _want=$2
	shift 2
	"$@" >"$T/out" 2>"$T/err"
	_got=$?
	if [ "$_got" -eq "$_want" ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then
		ok "$_d (exit $_got: $(cat "$T/err"))"
	else
		not_ok "$_d"
		diag "expected exit $_want and one error line, got exit $_got:"
		sed 's/^/#   /' "$T/err"
	fi
}

check "prerequisite modules load (aesni_intel, xts, algif_skcipher, crypto_user)" xo_prereqs
# Earlier scripts may have left the module loaded: start without it.
if xo_loaded; then
	xo_unload || bail "xts_offload is loaded and cannot be removed"
fi
aesni=$(awk '/^name/ { n = $3 } /^driver/ { d = $3 } /^priority/ && n == "xts(aes)" && d ~ /aesni/ {
	if ($3 > max) { max = $3; drv = d } } END { print drv }' /proc/crypto)
[ -n "$aesni" ] || aesni=xts-aes-aesni
diag "aesni driver: $aesni"

# 1. Before the module: the aesni driver is the default, cryptsetup measures it.
# With --copy cryptbench uses cryptsetup's own access (sendmsg + read of
# each 64 KiB piece): the same code path, so the ratio must be near 1.
cryptbench --cipher aes-xts --key 256 --compare-cryptsetup --copy --time 1 --csv \
	>"$T/cmp-aesni.csv" 2>"$T/cmp-aesni.err"
result "cryptbench --compare-cryptsetup --copy runs ($aesni default)" $?
cat "$T/cmp-aesni.csv" >&2
expect_eq "the measured default is $aesni, as cryptsetup's" "$aesni" \
	"$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 cryptsetup_driver)"
r_enc=$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 ratio_enc)
r_dec=$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 ratio_dec)
diag "$aesni 1M, copy: cryptbench/cryptsetup ratio enc $r_enc dec $r_dec"
ratio_check "$aesni" "$r_enc" "$r_dec"
cs_aesni_enc=$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 cryptsetup_enc_mib_s)
cs_aesni_dec=$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 cryptsetup_dec_mib_s)

# at_least DRIVER CSV: the issue's performance target, cryptbench's default
# (zero copy) 1 MiB figure at least cryptsetup's for the same driver. Only
# guest time is comparable (deterministic mode).
at_least() {
	_e=$(csv_field "$2" "$1" 1048576 enc_mib_s)
	_d=$(csv_field "$2" "$1" 1048576 dec_mib_s)
	if [ $deterministic = 1 ]; then
		awk -v e="$_e" -v d="$_d" -v ce="$3" -v cd="$4" \
			'BEGIN { exit !(e != "" && ce != "" && e + 0 >= ce + 0 && d + 0 >= cd + 0) }'
		result "$1 1M: cryptbench zero copy $_e/$_d MiB/s at least cryptsetup's $3/$4" $?
	else
		skip "$1 1M: cryptbench zero copy at least cryptsetup's figure" \
			"wall-clock mode: only the deterministic mode compares"
	fi
}
# Zero copy means every 64 KiB piece of a 1 MiB request is vmspliced: count
# the system calls of a short run (x86_64: sendmsg 46, vmsplice 278).
TR=/sys/kernel/tracing
[ -e $TR/trace ] || mount -t tracefs none $TR 2>/dev/null
if [ -w $TR/events/raw_syscalls/sys_enter/enable ]; then
	echo 0 >$TR/tracing_on
	echo >$TR/trace
	echo 'id == 46 || id == 278' >$TR/events/raw_syscalls/sys_enter/filter
	echo 1 >$TR/events/raw_syscalls/sys_enter/enable
	echo 1 >$TR/tracing_on
	cryptbench --cipher aes-xts --key 256 --driver "$aesni" --time 0.05 >/dev/null 2>&1
	zc_rc=$?
	echo 0 >$TR/tracing_on
	echo 0 >$TR/events/raw_syscalls/sys_enter/enable
	echo 0 >$TR/events/raw_syscalls/sys_enter/filter
	n_send=$(grep -c 'cryptbench-.*NR 46 ' $TR/trace)
	n_splice=$(grep -c 'cryptbench-.*NR 278 ' $TR/trace)
	echo >$TR/trace
	diag "1 MiB requests: $n_splice vmsplice, $n_send sendmsg calls"
	# libkcapi's one-shot call spliced one piece per request and sent
	# fifteen with sendmsg (vmsplice < sendmsg); one sendmsg per request
	# here, besides libkcapi's own setup calls.
	[ $zc_rc = 0 ] && [ "$n_send" -gt 0 ] && [ "$n_splice" -ge $((n_send * 4)) ]
	result "1 MiB zero copy: every 64 KiB piece is vmspliced ($n_splice vmsplice for $n_send sendmsg)" $?
else
	not_ok "1 MiB zero copy: tracefs raw_syscalls events not available"
fi
expect_eq "no offload counters before the module loads: engine share empty" "" \
	"$(csv_field "$T/cmp-aesni.csv" "$aesni" 1048576 engine_share)"
expect_eq "progress indication stays off in pipes (stderr empty)" "" "$(cat "$T/cmp-aesni.err")"

# 2. With the module (engine takes every request), it is the default.
check "modprobe xts_offload threshold=0" xo_load threshold=0
cryptbench --cipher aes-xts --key 256 --compare-cryptsetup --copy --time 1 --csv \
	>"$T/cmp-off.csv" 2>&1
result "cryptbench --compare-cryptsetup --copy runs (xts-aes-offload default)" $?
cat "$T/cmp-off.csv" >&2
expect_eq "the measured default is xts-aes-offload, as cryptsetup's" xts-aes-offload \
	"$(csv_field "$T/cmp-off.csv" xts-aes-offload 1048576 cryptsetup_driver)"
r_enc=$(csv_field "$T/cmp-off.csv" xts-aes-offload 1048576 ratio_enc)
r_dec=$(csv_field "$T/cmp-off.csv" xts-aes-offload 1048576 ratio_dec)
diag "xts-aes-offload 1M, copy: cryptbench/cryptsetup ratio enc $r_enc dec $r_dec"
ratio_check xts-aes-offload "$r_enc" "$r_dec"
cs_off_enc=$(csv_field "$T/cmp-off.csv" xts-aes-offload 1048576 cryptsetup_enc_mib_s)
cs_off_dec=$(csv_field "$T/cmp-off.csv" xts-aes-offload 1048576 cryptsetup_dec_mib_s)

# 3. Both drivers side by side, per request size: engine share from counters.
cryptbench --cipher aes-xts --key 256 --driver "xts-aes-offload,$aesni" \
	--request-size 4096,1M --time 0.5 --csv >"$T/drivers.csv" 2>&1
result "cryptbench --driver xts-aes-offload,$aesni --request-size 4096,1M" $?
cat "$T/drivers.csv" >&2
s=$(csv_field "$T/drivers.csv" xts-aes-offload 4096 engine_share)
in_range "$s" 0.000001 1
result "xts-aes-offload 4096-byte requests: engine share > 0 ($s)" $?
for req in 4096 1048576; do
	s=$(csv_field "$T/drivers.csv" "$aesni" $req engine_share)
	expect_eq "$aesni $req-byte requests: engine share 0" 0 "$s"
done
# Larger requests reach the module as 64 KiB pieces of user pages, spliced:
# the engine takes them.
s=$(csv_field "$T/drivers.csv" xts-aes-offload 1048576 engine_share)
in_range "$s" 0.000001 1
result "xts-aes-offload 1 MiB requests: engine share > 0 ($s)" $?
for f in "$XO_DEBUGFS"/stats/*; do
	diag "  ${f##*/} $(cat "$f")"
done
at_least "$aesni" "$T/drivers.csv" "$cs_aesni_enc" "$cs_aesni_dec"
at_least xts-aes-offload "$T/drivers.csv" "$cs_off_enc" "$cs_off_dec"
c=$(csv_field "$T/drivers.csv" "$aesni" 4096 cpu_s_per_gib_enc)
in_range "$c" 0.000001 100000
result "CPU cost measured for $aesni ($c s/GiB)" $?

# The engine share comes from the module's counters in debugfs. Without
# debugfs the run goes on, the share is empty rather than 0, and one line
# on stderr says why.
if umount /sys/kernel/debug 2>/dev/null || umount -l /sys/kernel/debug; then
	cryptbench --cipher aes-xts --key 256 --driver xts-aes-offload --request-size 4096 \
		--time 0.2 --csv >"$T/nodbg.csv" 2>"$T/nodbg.err"
	rc=$?
	mount -t debugfs debugfs /sys/kernel/debug
	cat "$T/nodbg.csv" >&2
	e=$(csv_field "$T/nodbg.csv" xts-aes-offload 4096 enc_mib_s)
	[ $rc = 0 ] && in_range "$e" 0.000001 1000000
	result "debugfs not mounted: cryptbench runs (exit $rc, enc $e MiB/s)" $?
	expect_eq "debugfs not mounted: engine share empty, not 0" "" \
		"$(csv_field "$T/nodbg.csv" xts-aes-offload 4096 engine_share)"
	if [ "$(wc -l <"$T/nodbg.err")" -eq 1 ] &&
	   grep -q '^cryptbench: xts_offload is loaded but debugfs is not mounted' "$T/nodbg.err"; then
		ok "debugfs not mounted: one line on stderr says so ($(cat "$T/nodbg.err"))"
	else
		not_ok "debugfs not mounted: one line on stderr says so"
		sed 's/^/#   /' "$T/nodbg.err"
	fi
else
	for _d in "cryptbench runs" "engine share empty, not 0" "one line on stderr says so"; do
		not_ok "debugfs not mounted: $_d (cannot unmount /sys/kernel/debug)"
	done
fi

# 4. The README demo command; the default is marked.
cryptbench --cipher aes-xts --key 256 --all-drivers --request-size 4096,1M \
	--time 0.5 >"$T/all.txt" 2>&1
result "cryptbench --all-drivers --request-size 4096,1M" $?
sed 's/^/# /' "$T/all.txt"
grep -q ' \*xts-aes-offload$' "$T/all.txt"
result "--all-drivers marks xts-aes-offload as the default" $?
grep -q " $aesni\$" "$T/all.txt"
result "--all-drivers lists $aesni" $?

# 5. JSON parses and carries every figure of the table (same options).
cryptbench --cipher aes-xts --key 256 --all-drivers --request-size 4096 \
	--repeat 2 --time 0.2 --compare-cryptsetup >"$T/t.txt" 2>&1 &&
	cryptbench --cipher aes-xts --key 256 --all-drivers --request-size 4096 \
		--repeat 2 --time 0.2 --compare-cryptsetup --json >"$T/t.json" 2>"$T/t.err"
result "table and --json runs" $?
if test_cryptbench_jsoncheck "$T/t.txt" "$T/t.json" >&2; then
	ok "--json parses and carries every figure of the table"
else
	not_ok "--json parses and carries every figure of the table"
	sed 's/^/#   /' "$T/t.txt"
fi
expect_eq "--json prints nothing on stderr" "" "$(cat "$T/t.err")"

# 6. Queue depth and threads (libkcapi AIO) run and count every byte.
cryptbench --cipher aes-xts --key 256 --driver "$aesni" --request-size 4096 \
	--queue-depth 16 --threads 2 --time 0.5 --csv >"$T/qd-aesni.csv" 2>&1
result "--queue-depth 16 --threads 2 on $aesni" $?
cat "$T/qd-aesni.csv" >&2
cryptbench --cipher aes-xts --key 256 --driver xts-aes-offload --request-size 4096 \
	--queue-depth 16 --threads 2 --time 0.5 --csv >"$T/qd.csv" 2>&1
result "--queue-depth 16 --threads 2 on xts-aes-offload" $?
cat "$T/qd.csv" >&2
s=$(csv_field "$T/qd.csv" xts-aes-offload 4096 engine_share)
in_range "$s" 0.000001 1
result "AIO requests reach the engine (share $s)" $?

# 7. No arguments: the rows and format of `cryptsetup benchmark` (figures
# differ, the layout must not: numbers become N, blank runs one blank).
shape() {
	sed -E 's/[0-9]+(\.[0-9]+)?/N/g; s/ +/ /g' "$1"
}
cryptsetup benchmark >"$T/cs-all.txt" 2>&1
cryptbench --time 0.2 >"$T/cb-all.txt" 2>&1
result "cryptbench without arguments runs" $?
sed 's/^/# /' "$T/cb-all.txt"
if [ "$(shape "$T/cs-all.txt")" = "$(shape "$T/cb-all.txt")" ] &&
   [ "$(wc -l <"$T/cb-all.txt")" -ge 20 ]; then
	ok "without arguments: the same rows and format as cryptsetup benchmark"
else
	not_ok "without arguments: the same rows and format as cryptsetup benchmark"
	sed 's/^/#   cryptsetup: /' "$T/cs-all.txt"
fi
# Same columns as cryptsetup's: column 1 to 3 of aes-xts 512b identical.
expect_eq "aes-xts 512b row: cipher and key in cryptsetup's columns" \
	"$(grep -m1 'aes-xts *512b' "$T/cs-all.txt" | cut -c1-27)" \
	"$(grep -m1 'aes-xts *512b' "$T/cb-all.txt" | cut -c1-27)"

# 8. Bad input: one line and a distinct exit code each.
expect_exit "unknown driver: exit 2" 2 cryptbench -c aes-xts -d xts-aes-nonesuch --time 0.05
expect_exit "driver of another cipher: exit 2" 2 cryptbench -c aes-xts -d xts-aes-offload,cbc-aes-aesni --time 0.05
expect_exit "unknown cipher: exit 2" 2 cryptbench -c nonesuch-xts -s 256 --time 0.05
expect_exit "unknown cipher with an IV generator: exit 2" 2 cryptbench -c no-such-cipher --time 0.05
grep -q "unknown cipher 'no-such-cipher' (kernel name 'such(no)')" "$T/err"
result "the unknown-cipher error names what was typed and the kernel name" $?
expect_exit "request size not a multiple of the block: exit 1" 1 cryptbench -c aes-cbc -s 128 -r 100 --time 0.05
xo_unload
# The kernel would load algif_skcipher on demand: not during this check.
helper=$(cat /proc/sys/kernel/modprobe)
if rmmod algif_skcipher >&2; then
	echo /bin/false >/proc/sys/kernel/modprobe
	expect_exit "AF_ALG skcipher missing: exit 3" 3 cryptbench -c aes-xts --time 0.05
	grep -q 'modprobe algif_skcipher' "$T/err"
	result "the AF_ALG error names the modprobe to run" $?
	echo "$helper" >/proc/sys/kernel/modprobe
	modprobe algif_skcipher >&2
else
	not_ok "rmmod algif_skcipher (to test exit 3)"
	not_ok "the AF_ALG error names the modprobe to run"
fi

# 9. Without crypto_user (containers, minimal initramfs), libkcapi cannot
# bind a cipher (it asks NETLINK_CRYPTO for the IV and block sizes):
# cryptbench drives AF_ALG itself with the sizes from /proc/crypto, and
# says so in one line. The kernel must not load it back meanwhile.
nocu=8
if rmmod crypto_user >&2; then
	echo /bin/false >/proc/sys/kernel/modprobe
	cryptbench -c aes-xts -s 256 -r 4096,1M --time 0.2 --csv \
		>"$T/nocu.csv" 2>"$T/nocu.err"
	rc=$?
	cat "$T/nocu.csv" >&2
	e=$(csv_field "$T/nocu.csv" "$aesni" 1048576 enc_mib_s)
	[ $rc = 0 ] && in_range "$e" 0.000001 1000000
	result "without crypto_user: zero copy 4096 and 1M run (exit $rc, 1M enc $e MiB/s)" $?
	if [ "$(wc -l <"$T/nocu.err")" -eq 1 ] &&
	   grep -q '^cryptbench: crypto_user not available (`modprobe crypto_user`)' "$T/nocu.err"; then
		ok "without crypto_user: one line on stderr says so ($(cat "$T/nocu.err"))"
	else
		not_ok "without crypto_user: one line on stderr says so"
		sed 's/^/#   /' "$T/nocu.err"
	fi
	expect_eq "without crypto_user: the default driver measured is $aesni, marked default" \
		"1 1" "$(csv_field "$T/nocu.csv" "$aesni" 4096 default) $(csv_field "$T/nocu.csv" "$aesni" 1048576 default)"
	cryptbench -c aes-xts -s 256 --copy --time 0.2 --csv >"$T/nocu-copy.csv" 2>/dev/null
	rc=$?
	e=$(csv_field "$T/nocu-copy.csv" "$aesni" 1048576 enc_mib_s)
	[ $rc = 0 ] && in_range "$e" 0.000001 1000000
	result "without crypto_user: --copy runs (exit $rc, enc $e MiB/s)" $?
	cryptbench -c aes-xts -s 256 -d "$aesni" -r 4096 -q 4 -t 2 --time 0.2 --csv \
		>"$T/nocu-qd.csv" 2>/dev/null
	rc=$?
	e=$(csv_field "$T/nocu-qd.csv" "$aesni" 4096 enc_mib_s)
	[ $rc = 0 ] && in_range "$e" 0.000001 1000000
	result "without crypto_user: --queue-depth 4 --threads 2 (AIO) runs (exit $rc, enc $e MiB/s)" $?
	cryptbench -c aes-xts -s 256 --all-drivers -r 4096 --time 0.1 >"$T/nocu-all.txt" 2>/dev/null
	rc=$?
	sed 's/^/# /' "$T/nocu-all.txt"
	[ $rc = 0 ] && grep -q " \*$aesni\$" "$T/nocu-all.txt"
	result "without crypto_user: --all-drivers marks $aesni as the default" $?
	cryptbench -c aes-xts -s 256 -r 4096 --time 0.1 --json >"$T/nocu.json" 2>/dev/null
	grep -Eq '"crypto_user": ?false' "$T/nocu.json"
	result "without crypto_user: JSON says \"crypto_user\": false" $?
	! grep -q '^crypto_user ' /proc/modules
	result "crypto_user stayed unloaded during these runs" $?
	echo "$helper" >/proc/sys/kernel/modprobe
	modprobe crypto_user >&2
else
	while [ $nocu -gt 0 ]; do
		not_ok "rmmod crypto_user (to run without it)"
		nocu=$((nocu - 1))
	done
fi

done_testing
