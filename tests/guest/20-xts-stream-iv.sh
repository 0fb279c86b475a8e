#!/bin/sh
# One AF_ALG stream (the IV set once, then 16 requests of 64 KiB, as
# kcapi-enc sends a file) gives the same ciphertext whichever path
# xts_offload takes: the engine, the software fallback, or the engine
# failing and the request recomputed. Every path leaves the IV as the
# generic xts template does (unchanged), and decrypts the others' streams.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 9

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

r0=$(xo_total requests)
check "engine: xts-aes-offload streams as $REF" xts-afalg stream xts-aes-offload "$REF"
expect_ge "the engine did the stream's 32 requests (requests +$(($(xo_total requests) - r0)))" \
	$(($(xo_total requests) - r0)) 32

echo 4294967295 >"$XO_PARAM/threshold"
r0=$(xo_total requests)
check "fallback (threshold above every request): xts-aes-offload streams as $REF" \
	xts-afalg stream xts-aes-offload "$REF"
expect_eq "the engine took none of it" 0 $(($(xo_total requests) - r0))
echo 0 >"$XO_PARAM/threshold"

echo 1000 >"$XO_SYS/inject_errors"
check "engine errors, recomputed in software: xts-aes-offload streams as $REF" \
	xts-afalg stream xts-aes-offload "$REF"
left=$(cat "$XO_SYS/inject_errors")
echo 0 >"$XO_SYS/inject_errors"
expect_ge "every request of the stream failed in the engine first (errors injected: $((1000 - left)))" \
	$((1000 - left)) 32
done_testing
