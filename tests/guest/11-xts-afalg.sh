#!/bin/sh
# xts-aes-offload through AF_ALG (libkcapi): IEEE 1619 vectors, random
# keys/lengths/offsets/scatterlists/in-place equal to xts-aes-aesni, AES-192
# on the fallback, key checks as the kernel's xts does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 13

ref=xts-aes-aesni
check "xts_offload loaded with threshold=0" xo_ensure 0
check "IEEE 1619 vectors on $ref (the reference itself)" xts-afalg vectors $ref
# Negative control: the checker notices a wrong cipher.
xts-afalg vectors cbc-aes-aesni >/dev/null 2>&1
expect_eq "negative control: cbc-aes-aesni fails the XTS vectors (exit 1)" 1 $?

req0=$(xo_total requests)
noe0=$(xo_total fallback_noengine)
len0=$(xo_total fallback_length)
lay0=$(xo_total fallback_layout)
check "IEEE 1619 vectors on xts-aes-offload" xts-afalg vectors xts-aes-offload
check "random 256-bit keys, lengths, offsets, layouts equal $ref" \
	xts-afalg compare xts-aes-offload $ref -n 300 -k 32
check "random 512-bit keys equal $ref" xts-afalg compare xts-aes-offload $ref -n 100 -k 64
req1=$(xo_total requests)
diag "fallback_length +$(($(xo_total fallback_length) - len0)), fallback_layout +$(($(xo_total fallback_layout) - lay0))"
# 800 operations, half of them on lengths that are a multiple of 16 (the
# others may need ciphertext stealing, which an engine may leave to the
# fallback). Each key has its own handle, and a key's sessions are created
# by a worker after its first request: the requests before that run in
# software (fallback_noengine). Together at least a quarter; the engine
# computed some of them.
noe1=$(xo_total fallback_noengine)
expect_ge "the engine, or software while a key had no session yet, computed them (requests +$((req1 - req0)), fallback_noengine +$((noe1 - noe0)))" \
	$((req1 - req0 + noe1 - noe0)) 200
expect_ge "the engine computed some of them" $((req1 - req0)) 1

ks0=$(xo_total fallback_keysize)
check "AES-192-XTS (48-byte keys) equals $ref" xts-afalg compare xts-aes-offload $ref -n 100 -k 48
ks1=$(xo_total fallback_keysize)
expect_ge "AES-192-XTS went to the fallback (fallback_keysize +$((ks1 - ks0)))" \
	$((ks1 - ks0)) 100

check "key1 == key2 and invalid key lengths handled as $ref does" \
	xts-afalg keys xts-aes-offload $ref

echo 4096 >"$XO_PARAM/threshold"
sm0=$(xo_total fallback_small)
check "with threshold=4096, random cases still equal $ref" \
	xts-afalg compare xts-aes-offload $ref -n 100
sm1=$(xo_total fallback_small)
echo 0 >"$XO_PARAM/threshold"
expect_ge "short requests went to the fallback (fallback_small +$((sm1 - sm0)))" \
	$((sm1 - sm0)) 50
done_testing
