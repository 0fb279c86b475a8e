/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One AF_ALG skcipher socket, opened through libkcapi or, where libkcapi
 * cannot open one, with the socket calls themselves (internal to the
 * library, used by measure.c).
 *
 * libkcapi asks NETLINK_CRYPTO (the crypto_user module) for a cipher's IV
 * and block sizes when it binds, and fails when crypto_user is not there.
 * The direct socket takes those sizes from /proc/crypto instead and does
 * what libkcapi's calls used here do: the same system calls per request.
 */
#ifndef CB_AFALG_H
#define CB_AFALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

struct kcapi_handle;

struct cb_sock {
	struct kcapi_handle *h;	/* libkcapi; NULL for a direct socket */
	bool direct;
	bool owns_tfm;		/* direct: this socket closes tfmfd */
	int tfmfd;		/* direct: the bound socket holding the key */
	int opfd;		/* direct: the accepted request socket */
	int pipes[2];		/* direct: vmsplice pipe */
	unsigned long aio;	/* direct: aio_context_t, 0 if none */
	unsigned int ivsize;	/* direct: from /proc/crypto */
	unsigned int blocksize;
};

/*
 * Bind ALG: through libkcapi, or directly (the caller then sets ivsize and
 * blocksize from /proc/crypto). Returns 0 or -errno (-ENOENT: no such name).
 */
int cb_sock_open(struct cb_sock *s, const char *alg, bool direct, bool aio);
/* One more request socket on the tfm of FROM (same key); 0 or -errno. */
int cb_sock_clone(struct cb_sock *s, const struct cb_sock *from, bool aio);
int cb_sock_setkey(struct cb_sock *s, const uint8_t *key, unsigned int len);
void cb_sock_close(struct cb_sock *s);

unsigned int cb_sock_ivsize(const struct cb_sock *s);
unsigned int cb_sock_blocksize(const struct cb_sock *s);
/* Bytes one vmsplice into the socket's pipe can take; <= 0 on error. */
int cb_sock_maxsplice(struct cb_sock *s);

/* Zero copy, as libkcapi's stream calls: operation and IV, then pieces. */
ssize_t cb_sock_stream_init(struct cb_sock *s, bool encrypt, uint8_t *iv);
ssize_t cb_sock_stream_update(struct cb_sock *s, struct iovec *io);
ssize_t cb_sock_stream_op(struct cb_sock *s, struct iovec *io);
/* Copy mode (cryptsetup's): sendmsg and read of each 64 KiB piece. */
ssize_t cb_sock_crypt_copy(struct cb_sock *s, bool encrypt, uint8_t *buf,
			   size_t len, uint8_t *iv);
/* One AIO request (at most 64 KiB) in flight, waited for. */
ssize_t cb_sock_crypt_aio(struct cb_sock *s, bool encrypt, uint8_t *buf,
			  size_t len, uint8_t *iv, bool zero_copy);

#endif /* CB_AFALG_H */
