// SPDX-License-Identifier: GPL-2.0-only
/*
 * AF_ALG skcipher sockets: libkcapi's, or the socket calls themselves where
 * libkcapi cannot bind without crypto_user. The direct calls are the ones
 * libkcapi makes for the calls measure.c uses (kcapi-kernel-if.c, 1.4):
 * the operation and IV in a control message, vmsplice + splice of user
 * pages, recvmsg or read into the same pages, io_submit for AIO.
 */
#include <errno.h>
#include <fcntl.h>
#include <kcapi.h>
#include <linux/aio_abi.h>
#include <linux/if_alg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "afalg.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

/* libkcapi's piece for sendmsg (ALG_MAX_PAGES pages). */
#define COPY_PAGES 16

static void direct_init_fds(struct cb_sock *s)
{
	s->tfmfd = -1;
	s->opfd = -1;
	s->pipes[0] = -1;
	s->pipes[1] = -1;
	s->aio = 0;
}

static int direct_op_init(struct cb_sock *s, bool aio)
{
	if (pipe2(s->pipes, O_CLOEXEC))
		return -errno;
	if (aio) {
		aio_context_t ctx = 0;

		if (syscall(SYS_io_setup, 1, &ctx))
			return -errno;
		s->aio = (unsigned long)ctx;
	}
	return 0;
}

int cb_sock_open(struct cb_sock *s, const char *alg, bool direct, bool aio)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int rc;

	memset(s, 0, sizeof(*s));
	direct_init_fds(s);
	s->direct = direct;
	if (!direct) {
		rc = kcapi_cipher_init(&s->h, alg, aio ? KCAPI_INIT_AIO : 0);
		if (rc) {
			s->h = NULL;
			return rc < 0 ? rc : -EIO;
		}
		return 0;
	}
	s->owns_tfm = true;
	if (strlen(alg) >= sizeof(sa.salg_name))
		return -ENOENT;	/* longer than any name AF_ALG binds */
	memcpy(sa.salg_type, "skcipher", sizeof("skcipher"));
	memcpy(sa.salg_name, alg, strlen(alg) + 1);
	s->tfmfd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (s->tfmfd < 0)
		return -errno;
	if (bind(s->tfmfd, (struct sockaddr *)&sa, sizeof(sa)))
		rc = -errno;
	else
		rc = direct_op_init(s, aio);
	if (rc)
		cb_sock_close(s);
	return rc;
}

int cb_sock_clone(struct cb_sock *s, const struct cb_sock *from, bool aio)
{
	int rc;

	memset(s, 0, sizeof(*s));
	direct_init_fds(s);
	s->direct = from->direct;
	if (!from->direct) {
		rc = kcapi_handle_reinit(&s->h, from->h, aio ? KCAPI_INIT_AIO : 0);
		if (rc) {
			s->h = NULL;
			return rc < 0 ? rc : -EIO;
		}
		return 0;
	}
	s->ivsize = from->ivsize;
	s->blocksize = from->blocksize;
	s->tfmfd = from->tfmfd;
	s->opfd = accept4(from->tfmfd, NULL, NULL, SOCK_CLOEXEC);
	rc = s->opfd < 0 ? -errno : direct_op_init(s, aio);
	if (rc)
		cb_sock_close(s);
	return rc;
}

int cb_sock_setkey(struct cb_sock *s, const uint8_t *key, unsigned int len)
{
	int rc;

	if (!s->direct) {
		rc = kcapi_cipher_setkey(s->h, key, len);
		return rc > 0 ? 0 : rc;
	}
	if (setsockopt(s->tfmfd, SOL_ALG, ALG_SET_KEY, key, len))
		return -errno;
	/* A request socket of a keyless skcipher cannot work: accept now. */
	if (s->opfd < 0) {
		s->opfd = accept4(s->tfmfd, NULL, NULL, SOCK_CLOEXEC);
		if (s->opfd < 0)
			return -errno;
	}
	return 0;
}

void cb_sock_close(struct cb_sock *s)
{
	if (s->h)
		kcapi_cipher_destroy(s->h);
	s->h = NULL;
	if (!s->direct)
		return;
	if (s->aio)
		syscall(SYS_io_destroy, (aio_context_t)s->aio);
	if (s->opfd >= 0)
		close(s->opfd);
	if (s->pipes[0] >= 0)
		close(s->pipes[0]);
	if (s->pipes[1] >= 0)
		close(s->pipes[1]);
	if (s->owns_tfm && s->tfmfd >= 0)
		close(s->tfmfd);
	direct_init_fds(s);
}

unsigned int cb_sock_ivsize(const struct cb_sock *s)
{
	return s->direct ? s->ivsize : kcapi_cipher_ivsize(s->h);
}

unsigned int cb_sock_blocksize(const struct cb_sock *s)
{
	return s->direct ? s->blocksize : kcapi_cipher_blocksize(s->h);
}

int cb_sock_maxsplice(struct cb_sock *s)
{
	if (!s->direct)
		return kcapi_get_maxsplicesize(s->h);
	return fcntl(s->pipes[1], F_GETPIPE_SZ);
}

/* The operation and IV as control messages, with or without data. */
static ssize_t send_meta(struct cb_sock *s, bool encrypt, const uint8_t *iv,
			 struct iovec *data, int flags)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) +
			 CMSG_SPACE(sizeof(struct af_alg_iv) + 64)];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { 0 };
	struct cmsghdr *c;
	struct af_alg_iv *aiv;
	uint32_t op = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	ssize_t r;

	if (s->ivsize > 64)
		return -EINVAL;
	memset(&ctl, 0, sizeof(ctl));
	msg.msg_control = ctl.buf;
	msg.msg_controllen = CMSG_SPACE(sizeof(op)) +
			     (s->ivsize ? CMSG_SPACE(sizeof(*aiv) + s->ivsize) : 0);
	msg.msg_iov = data;
	msg.msg_iovlen = data ? 1 : 0;
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(op));
	memcpy(CMSG_DATA(c), &op, sizeof(op));
	if (s->ivsize) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(*aiv) + s->ivsize);
		aiv = (struct af_alg_iv *)CMSG_DATA(c);
		aiv->ivlen = s->ivsize;
		memcpy(aiv->iv, iv, s->ivsize);
	}
	r = sendmsg(s->opfd, &msg, flags);
	return r < 0 ? -errno : r;
}

static ssize_t splice_in(struct cb_sock *s, struct iovec *io, unsigned int flags)
{
	ssize_t n = vmsplice(s->pipes[1], io, 1, SPLICE_F_GIFT | flags);

	if (n < 0)
		return -errno;
	n = splice(s->pipes[0], NULL, s->opfd, NULL, (size_t)n, flags);
	return n < 0 ? -errno : n;
}

ssize_t cb_sock_stream_init(struct cb_sock *s, bool encrypt, uint8_t *iv)
{
	if (!s->direct)
		return encrypt ? kcapi_cipher_stream_init_enc(s->h, iv, NULL, 0) :
				 kcapi_cipher_stream_init_dec(s->h, iv, NULL, 0);
	return send_meta(s, encrypt, iv, NULL, MSG_MORE);
}

ssize_t cb_sock_stream_update(struct cb_sock *s, struct iovec *io)
{
	if (!s->direct)
		return kcapi_cipher_stream_update(s->h, io, 1);
	return splice_in(s, io, SPLICE_F_MORE);
}

ssize_t cb_sock_stream_op(struct cb_sock *s, struct iovec *io)
{
	struct msghdr msg = { .msg_iov = io, .msg_iovlen = 1 };
	ssize_t r;

	if (!s->direct)
		return kcapi_cipher_stream_op(s->h, io, 1);
	r = recvmsg(s->opfd, &msg, 0);
	return r < 0 ? -errno : r;
}

ssize_t cb_sock_crypt_copy(struct cb_sock *s, bool encrypt, uint8_t *buf,
			   size_t len, uint8_t *iv)
{
	size_t piece = (size_t)sysconf(_SC_PAGESIZE) * COPY_PAGES, done = 0;

	if (!s->direct)
		return encrypt ?
			kcapi_cipher_encrypt(s->h, buf, len, iv, buf, len,
					     KCAPI_ACCESS_SENDMSG) :
			kcapi_cipher_decrypt(s->h, buf, len, iv, buf, len,
					     KCAPI_ACCESS_SENDMSG);
	while (done < len) {
		size_t n = len - done < piece ? len - done : piece;
		struct iovec io = { .iov_base = buf + done, .iov_len = n };
		ssize_t r = send_meta(s, encrypt, iv, &io, 0);

		if (r < 0)
			return r;
		r = read(s->opfd, buf + done, n);
		if (r < 0)
			return -errno;
		if ((size_t)r != n)
			return -EIO;
		done += n;
	}
	return (ssize_t)done;
}

ssize_t cb_sock_crypt_aio(struct cb_sock *s, bool encrypt, uint8_t *buf,
			  size_t len, uint8_t *iv, bool zero_copy)
{
	struct iovec io = { .iov_base = buf, .iov_len = len };
	struct iocb cb = { 0 }, *cbp = &cb;
	struct io_event ev;
	ssize_t r;

	if (!s->direct) {
		/* libkcapi may consume the vectors: set them up every time. */
		struct iovec out = io;
		int access = zero_copy ? KCAPI_ACCESS_VMSPLICE : KCAPI_ACCESS_SENDMSG;

		return encrypt ?
			kcapi_cipher_encrypt_aio(s->h, &io, &out, 1, iv, access) :
			kcapi_cipher_decrypt_aio(s->h, &io, &out, 1, iv, access);
	}
	if (zero_copy) {
		r = send_meta(s, encrypt, iv, NULL, MSG_MORE);
		if (r >= 0)
			r = splice_in(s, &io, 0);
	} else {
		r = send_meta(s, encrypt, iv, &io, 0);
	}
	if (r < 0)
		return r;
	if ((size_t)r != len)
		return -EIO;
	cb.aio_fildes = (uint32_t)s->opfd;
	cb.aio_lio_opcode = IOCB_CMD_PREAD;
	cb.aio_buf = (uint64_t)(uintptr_t)buf;
	cb.aio_nbytes = len;
	if (syscall(SYS_io_submit, (aio_context_t)s->aio, 1, &cbp) != 1)
		return -errno;
	do {
		r = syscall(SYS_io_getevents, (aio_context_t)s->aio, 1, 1, &ev, NULL);
	} while (r < 0 && errno == EINTR);
	if (r != 1)
		return r < 0 ? -errno : -EIO;
	return (ssize_t)ev.res;
}
