#!/bin/sh
# One AF_ALG stream (the IV set once, then 16 requests of 64 KiB, as
# kcapi-enc sends a file) gives the same ciphertext whichever path
# xts_offload takes: the engine, the software fallback (the SIMD wrapper
# xts-aes-aesni*, always through the wrapper), or the engine failing and
# the request recomputed.
# Every path leaves the IV as the generic xts template does (unchanged),
# and decrypts the others' streams.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 13

REF='xts(ecb(aes-generic))'
check "xts_offload loaded with threshold=0" xo_ensure 0
xo_bound || bail "the virtio-crypto device is not bound to xts_offload"
check "the reference $REF streams as itself" xts-afalg stream "$REF" "$REF"
# x86's xts drivers advance the IV they are given: a stream through one of
# them differs from the reference's after the first request.
if xts-afalg stream xts-aes-aesni "$REF" >/dev/null 2>&1; then
	not_ok "xts-aes-aesni alone streams differently (it advances the IV): the check tells the two apart"
else
	ok "xts-aes-aesni alone streams differently (it advances the IV): the check tells the two apart"
fi

# setkey creates the key's sessions: the engine does every request of the
# stream, the first included.
r0=$(xo_total requests)
n0=$(xo_total fallback_noengine)
check "engine: xts-aes-offload streams as $REF" xts-afalg stream xts-aes-offload "$REF"
r1=$(($(xo_total requests) - r0))
n1=$(($(xo_total fallback_noengine) - n0))
expect_ge "the engine did the stream's 32 requests (requests +$r1)" $r1 32
expect_eq "none ran in software for want of a session (fallback_noengine +$n1)" 0 $n1

echo 4294967295 >"$XO_PARAM/threshold"
r0=$(xo_total requests)
check "fallback (threshold above every request): xts-aes-offload streams as $REF" \
	xts-afalg stream xts-aes-offload "$REF"
expect_eq "the engine took none of it" 0 $(($(xo_total requests) - r0))

# inner_refs: references held on the SIMD wrappers' inner algorithms
# (/proc/crypto, driver __xts-aes-*). A fallback holds one through the
# wrapper's cryptd, and a tfm of ours no other: the module no longer
# allocates the inner algorithm by its name (fallback_direct, removed).
inner_refs() {
	awk '/^name/ { d = 0 } $1 == "driver" && $3 ~ /^__xts-aes/ { d = 1 }
		d && $1 == "refcnt" { n += $3 } END { print n + 0 }' /proc/crypto
}
# refs_of_mapping: what opening one mapping on xts-aes-offload adds.
refs_of_mapping() {
	_r0=$(inner_refs)
	new_key /tmp/key 64
	xts_open fbd /dev/ram0 /tmp/key 512 4096 || return 1
	rm -f /tmp/key
	echo $(($(inner_refs) - _r0))
	xts_close fbd
}
ramdisk 4 || bail "cannot create a ramdisk"
expect_eq "a mapping holds the wrapper's inner algorithm only through its fallback" \
	1 "$(refs_of_mapping)"
check "no fallback_direct parameter" test ! -e "$XO_PARAM/fallback_direct"
check "the fallback through the SIMD wrapper streams as $REF again" \
	xts-afalg stream xts-aes-offload "$REF"
echo 0 >"$XO_PARAM/threshold"

echo 1000 >"$XO_DEBUGFS/inject_errors"
n0=$(xo_total fallback_noengine)
check "engine errors, recomputed in software: xts-aes-offload streams as $REF" \
	xts-afalg stream xts-aes-offload "$REF"
left=$(cat "$XO_DEBUGFS/inject_errors")
echo 0 >"$XO_DEBUGFS/inject_errors"
n1=$(($(xo_total fallback_noengine) - n0))
expect_ge "every request of the stream failed in the engine first, but those before its key had sessions (errors injected: $((1000 - left)), fallback_noengine +$n1)" \
	$((1000 - left + n1)) 32
done_testing
