#!/bin/sh
# xts-aes-offload through AF_ALG (libkcapi): IEEE 1619 vectors, random
# keys/lengths/offsets/scatterlists/in-place equal to xts-aes-aesni, AES-192
# on the fallback, key checks as the kernel's xts does.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/xts-lib.sh"
plan 15

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
# fallback). Each key has its own handle, whose setkey creates the key's
# sessions (fallback_noengine only if that failed). Together at least a
# quarter; the engine computed some of them.
noe1=$(xo_total fallback_noengine)
expect_ge "the engine, or software if a key found no session, computed them (requests +$((req1 - req0)), fallback_noengine +$((noe1 - noe0)))" \
	$((req1 - req0 + noe1 - noe0)) 200
expect_ge "the engine computed some of them" $((req1 - req0)) 1

# One-shot users (kcapi-enc, OpenSSL's afalg engine): a fresh key, one
# request. setkey creates the key's sessions, so even the first request runs
# on the engine. The ciphertext must equal $ref's.
# oneshot N: kcapi-enc of N random bytes under a fresh 512-bit key.
oneshot() {
	head -c "$1" /dev/urandom >/tmp/os.in
	head -c 64 /dev/urandom >/tmp/os.key
	_r0=$(xo_total requests)
	_n0=$(xo_total fallback_noengine)
	kcapi-enc -q -e -c xts-aes-offload --iv 000102030405060708090a0b0c0d0e0f \
		--keyfd 3 -i /tmp/os.in -o /tmp/os.out 3</tmp/os.key || return 1
	_r=$(($(xo_total requests) - _r0))
	_n=$(($(xo_total fallback_noengine) - _n0))
	kcapi-enc -q -e -c $ref --iv 000102030405060708090a0b0c0d0e0f \
		--keyfd 3 -i /tmp/os.in -o /tmp/os.ref 3</tmp/os.key || return 1
	diag "$1 bytes on a fresh key: engine requests +$_r, fallback_noengine +$_n, output $(wc -c </tmp/os.out) bytes"
	rm -f /tmp/os.in /tmp/os.key
	cmp -s /tmp/os.out /tmp/os.ref && [ "$_r" -eq 1 ] && [ "$_n" -eq 0 ]
}
for n in 512 4096; do
	check "a fresh key's first request of $n bytes (kcapi-enc) runs on the engine and equals $ref" \
		oneshot $n
done

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
