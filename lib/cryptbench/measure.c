// SPDX-License-Identifier: GPL-2.0-only
/*
 * The measurement: AF_ALG through libkcapi (or, without crypto_user, the
 * same calls made directly: afalg.c), sockets sharing one key,
 * synchronous requests or AIO with many requests in flight, zero-copy
 * (vmsplice) or cryptsetup's copy mode (sendmsg).
 *
 * AF_ALG keeps at most one AIO request in flight per socket (a second one
 * gets -EBUSY from af_alg_alloc_areq until the first completes), and
 * libkcapi's AIO call waits for its requests. So a queue depth of N is N
 * sockets per thread, each with its own submitter keeping one libkcapi AIO
 * request in flight: N requests reach an asynchronous driver at once.
 */
#include <errno.h>
#include <kcapi.h>
#include <linux/netlink.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "afalg.h"
#include "cryptbench.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif

#define CB_MAX_IV 64

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void cb_quiet_backends(void)
{
	kcapi_set_verbosity(KCAPI_LOG_NONE);
}

int cb_afalg_check(struct cb_error *err)
{
	int fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EACCES || errno == EPERM)
		cb_error_set(err, CB_EXIT_PERM,
			     "AF_ALG socket: permission denied: run as root or allow AF_ALG sockets for this user");
	else
		cb_error_set(err, CB_EXIT_NO_AFALG,
			     "AF_ALG not available: run `modprobe af_alg algif_skcipher`");
	return -1;
}

bool cb_crypto_user_available(void)
{
	/* The kernel loads crypto_user on this call where it can. */
	int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

void cb_afalg_error(int rc, const char *alg, const char *what,
		    const struct cb_alg_list *procs, struct cb_error *err)
{
	switch (rc) {
	case -ENOENT:
		if (procs && cb_alg_known(procs, alg))
			cb_error_set(err, CB_EXIT_NO_AFALG,
				     "AF_ALG skcipher interface not available for %s: run `modprobe algif_skcipher`",
				     alg);
		else
			cb_error_set(err, CB_EXIT_CIPHER,
				     "unknown cipher or driver '%s': see /proc/crypto or load its module",
				     alg);
		break;
	case -EAFNOSUPPORT:
	case -EOPNOTSUPP:
		cb_error_set(err, CB_EXIT_NO_AFALG,
			     "AF_ALG not available: run `modprobe af_alg algif_skcipher`");
		break;
	case -EPROTONOSUPPORT:
		/* libkcapi asks NETLINK_CRYPTO for the cipher's sizes. */
		cb_error_set(err, CB_EXIT_NO_AFALG,
			     "kernel crypto user interface not available: run `modprobe crypto_user`");
		break;
	case -EACCES:
	case -EPERM:
		cb_error_set(err, CB_EXIT_PERM,
			     "%s %s: permission denied: run as root", what, alg);
		break;
	case -EINVAL:
		if (!strcmp(what, "setkey")) {
			cb_error_set(err, CB_EXIT_CIPHER,
				     "invalid key size for %s: the kernel rejected the key, see min/max keysize in /proc/crypto",
				     alg);
			break;
		}
		/* fall through */
	default:
		cb_error_set(err, CB_EXIT_RUNTIME, "%s %s failed: %s: check dmesg",
			     what, alg, strerror(rc < 0 ? -rc : rc));
		break;
	}
}

/* A random key in locked memory, set on the socket, then wiped. */
static int set_random_key(struct cb_sock *sk, unsigned int key_bytes)
{
	uint8_t key[512] = { 0 };
	size_t got = 0;
	int rc;

	if (key_bytes > sizeof(key))
		return -EINVAL;
	if (mlock(key, sizeof(key)))
		return -errno;
	while (got < key_bytes) {
		ssize_t n = getrandom(key + got, key_bytes - got, 0);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = -errno;
			goto out;
		}
		got += (size_t)n;
	}
	rc = cb_sock_setkey(sk, key, key_bytes);
out:
	explicit_bzero(key, sizeof(key));
	munlock(key, sizeof(key));
	return rc;
}

int cb_probe(const char *alg, unsigned int key_bytes, bool direct,
	     const struct cb_alg_list *procs, struct cb_error *err)
{
	struct cb_sock sk;
	int rc;

	rc = cb_sock_open(&sk, alg, direct, false);
	if (rc) {
		cb_afalg_error(rc, alg, "AF_ALG bind", procs, err);
		return rc;
	}
	rc = set_random_key(&sk, key_bytes);
	cb_sock_close(&sk);
	if (rc) {
		cb_afalg_error(rc, alg, "setkey", procs, err);
		return rc < 0 ? rc : -EIO;
	}
	return 0;
}

/* Start gate: workers warm up, report ready, and wait for one start. */
struct shared {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	unsigned int ready;
	bool go;
	bool abort;
	double deadline;
	double warm_seconds;
	bool encrypt;
};

struct worker {
	struct cb_sock sk;
	const struct cb_job *job;
	struct shared *sh;
	uint8_t *buf;
	uint8_t iv[CB_MAX_IV];
	size_t splice_max;	/* bytes one vmsplice can take (pipe size) */
	uint64_t bytes;
	int rc;
	pthread_t tid;
};

/*
 * One synchronous zero-copy request. libkcapi's one-shot call
 * (kcapi_cipher_encrypt with KCAPI_ACCESS_VMSPLICE) splices only the first
 * pipe-full of a larger request and sends the rest with sendmsg, which
 * copies: for 1 MiB requests a syscall trace showed one vmsplice per request
 * against fifteen data-carrying sendmsg calls. So the request is streamed:
 * its operation and IV once, then per pipe-full (64 KiB by default, the size
 * of cryptsetup's blocks) vmsplice + splice and a recvmsg into the same
 * pages. Every pipe-full is one kernel request, taking the IV as the
 * previous one left it (the work per byte does not depend on the IV); the
 * socket stays in the "more data follows" state between requests.
 */
static ssize_t zero_copy_op(struct worker *w, bool encrypt, size_t want)
{
	size_t done = 0;
	ssize_t r;

	r = cb_sock_stream_init(&w->sk, encrypt, w->iv);
	if (r < 0)
		return r;
	while (done < want) {
		size_t n = want - done < w->splice_max ? want - done : w->splice_max;
		struct iovec io = { .iov_base = w->buf + done, .iov_len = n };

		r = cb_sock_stream_update(&w->sk, &io);
		if (r < 0)
			return r;
		if ((size_t)r != n)
			return -EIO;
		io.iov_base = w->buf + done;
		io.iov_len = n;
		r = cb_sock_stream_op(&w->sk, &io);
		if (r < 0)
			return r;
		if ((size_t)r != n)
			return -EIO;
		done += n;
	}
	return (ssize_t)done;
}

static int one_op(struct worker *w, bool encrypt)
{
	const struct cb_job *j = w->job;
	size_t want = j->request_size;
	ssize_t r;

	if (j->queue_depth == 1 && j->zero_copy)
		r = zero_copy_op(w, encrypt, want);
	else if (j->queue_depth == 1)
		r = cb_sock_crypt_copy(&w->sk, encrypt, w->buf, want, w->iv);
	else
		r = cb_sock_crypt_aio(&w->sk, encrypt, w->buf, want, w->iv,
				      j->zero_copy);
	if (r < 0)
		return (int)r;
	if ((size_t)r != want)
		return -EIO;
	w->bytes += want;
	return 0;
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	struct shared *sh = w->sh;
	double end = now_s() + sh->warm_seconds;

	/* Warm-up: fault in buffers, pipes, the tfm and caches. */
	w->bytes = 0;
	do {
		w->rc = one_op(w, sh->encrypt);
	} while (!w->rc && now_s() < end);
	w->bytes = 0;

	pthread_mutex_lock(&sh->lock);
	sh->ready++;
	pthread_cond_broadcast(&sh->cond);
	while (!sh->go)
		pthread_cond_wait(&sh->cond, &sh->lock);
	pthread_mutex_unlock(&sh->lock);
	while (!w->rc && !sh->abort && now_s() < sh->deadline)
		w->rc = one_op(w, sh->encrypt);
	return NULL;
}

static int read_engine(const struct cb_job *job, uint64_t *bytes)
{
	if (!job->offload_dir)
		return -ENOENT;
	return cb_offload_counter(job->offload_dir, "bytes", bytes);
}

static int run_phase(const struct cb_job *job, struct worker *ws,
		     unsigned int n, bool encrypt, struct cb_sample *s,
		     struct cb_error *err)
{
	struct shared sh;
	uint64_t e0 = 0, e1 = 0;
	double c0 = 0, c1 = 0, t0, t1;
	bool have_cpu, have_engine;
	unsigned int i, started = 0;
	int rc = 0;

	memset(s, 0, sizeof(*s));
	memset(&sh, 0, sizeof(sh));
	sh.encrypt = encrypt;
	sh.warm_seconds = job->seconds / 10;
	if (sh.warm_seconds < 0.02)
		sh.warm_seconds = 0.02;
	if (sh.warm_seconds > 0.25)
		sh.warm_seconds = 0.25;
	pthread_mutex_init(&sh.lock, NULL);
	pthread_cond_init(&sh.cond, NULL);
	for (i = 0; i < n; i++) {
		ws[i].sh = &sh;
		ws[i].rc = 0;
		if (pthread_create(&ws[i].tid, NULL, worker_main, &ws[i]))
			break;
		started++;
	}
	if (started < n) {
		cb_error_set(err, CB_EXIT_RUNTIME,
			     "cannot start %u threads: reduce --threads or --queue-depth",
			     n);
		sh.abort = true;
		rc = -1;
	}
	pthread_mutex_lock(&sh.lock);
	while (sh.ready < started)
		pthread_cond_wait(&sh.cond, &sh.lock);
	have_engine = read_engine(job, &e0) == 0;
	have_cpu = cb_cpu_busy_seconds(NULL, &c0) == 0;
	t0 = now_s();
	sh.deadline = t0 + job->seconds;
	sh.go = true;
	pthread_cond_broadcast(&sh.cond);
	pthread_mutex_unlock(&sh.lock);
	for (i = 0; i < started; i++)
		pthread_join(ws[i].tid, NULL);
	t1 = now_s();
	have_cpu = have_cpu && cb_cpu_busy_seconds(NULL, &c1) == 0;
	have_engine = have_engine && read_engine(job, &e1) == 0;
	pthread_cond_destroy(&sh.cond);
	pthread_mutex_destroy(&sh.lock);
	if (rc)
		return rc;

	for (i = 0; i < n; i++) {
		if (ws[i].rc) {
			cb_afalg_error(ws[i].rc, job->alg,
				       encrypt ? "encryption with" : "decryption with",
				       NULL, err);
			return -1;
		}
		s->bytes += ws[i].bytes;
	}
	s->seconds = t1 - t0;
	s->cpu_seconds = have_cpu ? c1 - c0 : -1.0;
	s->has_engine = have_engine;
	s->engine_bytes = have_engine && e1 >= e0 ? e1 - e0 : 0;
	return 0;
}

/*
 * A direct socket learns the IV and block sizes from /proc/crypto, read
 * after the bind that instantiated ALG: what libkcapi asks crypto_user.
 */
static int direct_sizes(struct cb_sock *sk, const char *alg, struct cb_error *err)
{
	struct cb_alg_list procs;
	const struct cb_alg *a;
	int rc = cb_proc_crypto_read(NULL, &procs);

	a = rc ? NULL : cb_alg_bound(&procs, alg);
	if (a) {
		sk->ivsize = a->ivsize;
		sk->blocksize = a->blocksize;
	}
	cb_alg_list_free(&procs);
	if (!a)
		cb_error_set(err, CB_EXIT_NO_AFALG,
			     "no IV and block size for %s: /proc/crypto %s and crypto_user not available: run `modprobe crypto_user`",
			     alg, rc ? "not readable" : "does not list it");
	return a ? 0 : -1;
}

int cb_measure(const struct cb_job *job, struct cb_sample *enc,
	       struct cb_sample *dec, const struct cb_alg_list *procs,
	       struct cb_error *err)
{
	bool aio = job->queue_depth > 1;
	unsigned int opened = 0;
	long page = sysconf(_SC_PAGESIZE);
	unsigned int n = job->threads * job->queue_depth;
	struct worker *ws;
	unsigned int i, ivsize, bs;
	int rc, ret = -1;

	if (job->threads < 1 || job->threads > CB_MAX_THREADS ||
	    job->queue_depth < 1 || job->queue_depth > CB_MAX_QDEPTH ||
	    n > CB_MAX_SOCKETS || job->request_size == 0 ||
	    (job->queue_depth > 1 && job->request_size > CB_MAX_AIO_BYTES)) {
		cb_error_set(err, CB_EXIT_USAGE, "invalid measurement parameters: see --help");
		return -1;
	}
	ws = calloc(n, sizeof(*ws));
	if (!ws) {
		cb_error_set(err, CB_EXIT_RUNTIME, "out of memory: reduce --threads");
		return -1;
	}
	rc = cb_sock_open(&ws[0].sk, job->alg, job->direct, aio);
	if (rc) {
		cb_afalg_error(rc, job->alg, "AF_ALG bind", procs, err);
		goto out;
	}
	opened = 1;
	if (job->direct && direct_sizes(&ws[0].sk, job->alg, err))
		goto out;
	rc = set_random_key(&ws[0].sk, job->key_bytes);
	if (rc) {
		cb_afalg_error(rc, job->alg, "setkey", procs, err);
		goto out;
	}
	ivsize = cb_sock_ivsize(&ws[0].sk);
	bs = cb_sock_blocksize(&ws[0].sk);
	if (ivsize > CB_MAX_IV) {
		cb_error_set(err, CB_EXIT_CIPHER, "IV of %s too large: not a disk cipher", job->alg);
		goto out;
	}
	if (bs == 0 || job->request_size % bs) {
		cb_error_set(err, CB_EXIT_USAGE,
			     "request size %zu is not a multiple of the %u-byte block of %s: change --request-size",
			     job->request_size, bs, job->alg);
		goto out;
	}
	for (i = 1; i < n; i++) {
		/* New socket on the same tfm: same key, parallel requests. */
		rc = cb_sock_clone(&ws[i].sk, &ws[0].sk, aio);
		if (rc) {
			cb_afalg_error(rc, job->alg, "AF_ALG accept", procs, err);
			goto out;
		}
		opened = i + 1;
	}
	for (i = 0; i < n; i++) {
		void *p = NULL;

		ws[i].job = job;
		if (posix_memalign(&p, (size_t)page, job->request_size)) {
			cb_error_set(err, CB_EXIT_RUNTIME,
				     "out of memory for %zu-byte buffers: reduce --threads, --queue-depth or --request-size",
				     job->request_size);
			goto out;
		}
		ws[i].buf = p;
		memset(ws[i].buf, 0x5a, job->request_size);
		rc = cb_sock_maxsplice(&ws[i].sk);
		ws[i].splice_max = rc > 0 ? (size_t)rc / bs * bs : 0;
		if (job->zero_copy && !ws[i].splice_max) {
			cb_error_set(err, CB_EXIT_RUNTIME,
				     "cannot size the splice pipe of the AF_ALG socket: use --copy");
			goto out;
		}
		if (ivsize && getrandom(ws[i].iv, ivsize, 0) != (ssize_t)ivsize) {
			cb_error_set(err, CB_EXIT_RUNTIME, "getrandom failed: check the kernel's RNG");
			goto out;
		}
	}
	if (run_phase(job, ws, n, true, enc, err))
		goto out;
	if (run_phase(job, ws, n, false, dec, err))
		goto out;
	ret = 0;
out:
	/* Request sockets first: the first one owns the direct tfm socket. */
	for (i = n; i-- > 0;) {
		free(ws[i].buf);
		if (i < opened)
			cb_sock_close(&ws[i].sk);
	}
	free(ws);
	return ret;
}
