#!/bin/sh
# The guest itself: the harness's assumptions about the initramfs hold.
. "$(dirname "$0")/lib.sh"
plan 5

expect_eq "guest runs the kernel the harness booted" "$(uname -r)" \
	"$(ls /lib/modules)"
check "in-tree modules load (dm_crypt, brd, algif_skcipher)" \
	modprobe -a dm_crypt brd algif_skcipher
check "cryptsetup runs with its libraries" cryptsetup --version
load algif_hash crypto_user
# FIPS 180-2 appendix B.1: SHA-256("abc").
expect_eq "kcapi-dgst computes SHA-256 through AF_ALG" \
	ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad \
	"$(printf abc | kcapi-dgst -c sha256 --hex)"
if grep -q virtio_crypto /proc/modules; then
	not_ok "in-kernel virtio_crypto driver is not loaded"
else
	ok "in-kernel virtio_crypto driver is not loaded"
fi
done_testing
