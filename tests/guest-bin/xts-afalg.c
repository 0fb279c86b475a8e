// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts-afalg: checks an xts(aes) driver of the running kernel through AF_ALG
 * (libkcapi) against the IEEE 1619 vectors and against a reference driver.
 *
 *   xts-afalg vectors DRIVER
 *   xts-afalg compare DRIVER REFERENCE [-n ITERATIONS] [-s SEED] [-k KEYBYTES]
 *   xts-afalg keys DRIVER REFERENCE
 *   xts-afalg stream DRIVER REFERENCE [-s SEED] [-k KEYBYTES]
 *   xts-afalg hold DRIVER REFERENCE [-n HANDLES] [-s SEED] [-k KEYBYTES]
 *
 * compare: random keys, lengths (ciphertext stealing included), buffer
 * offsets, scatterlist layouts (several iovecs, zero-copy and copying
 * kernel access) and in-place vs out-of-place; encryption and decryption
 * through DRIVER must equal REFERENCE's.
 * keys: key1 == key2 and invalid key lengths are accepted or rejected as
 * REFERENCE does, with equal results where accepted.
 * stream: 1 MiB in 16 requests of 64 KiB on one AF_ALG socket whose IV is
 * set once, as a streaming user (kcapi-enc) sends it: each request takes
 * the IV the previous one left. DRIVER's ciphertext must equal REFERENCE's
 * (and so must its IV semantics), and each decrypts the other's.
 *
 * hold: N handles of DRIVER, each with its own random key, held open at
 * once (each key wants its own device sessions). A round encrypts and
 * decrypts 4 KiB through every handle and compares with REFERENCE; one
 * round runs at start and one per line read on stdin; EOF ends. Each round
 * prints "round R ok" or "round R mismatch".
 *
 * Exit: 0 all equal, 1 a mismatch, 2 usage, 3 the driver is unavailable.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <unistd.h>

#include <kcapi.h>

#include "ieee1619.h"

#define XTS_IV_SIZE	16
#define MAX_LEN		(64 * 1024)
#define MAX_IOV		8
/* Slack for random buffer offsets, so data may start anywhere in a page. */
#define SLACK		4096

enum { EXIT_OK, EXIT_MISMATCH, EXIT_USAGE, EXIT_NODRIVER };

static uint64_t rng_state;

/* splitmix64: reproducible from the printed seed. */
static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static size_t rnd_below(size_t n)
{
	return (size_t)(rnd() % n);
}

static void rnd_fill(uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < len; i++)
		buf[i] = (uint8_t)rnd();
}

static size_t unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (n > max)
		return 0;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return 0;
		out[i] = (uint8_t)v;
	}
	return n;
}

static void hexdump(const char *label, const uint8_t *buf, size_t len)
{
	fprintf(stderr, "  %s:", label);
	for (size_t i = 0; i < len && i < 64; i++)
		fprintf(stderr, "%02x", buf[i]);
	fprintf(stderr, "%s\n", len > 64 ? "..." : "");
}

static struct kcapi_handle *open_driver(const char *name)
{
	struct kcapi_handle *h = NULL;
	int ret = kcapi_cipher_init(&h, name, 0);

	if (ret) {
		fprintf(stderr, "xts-afalg: cannot open %s through AF_ALG (%s): "
			"load algif_skcipher and the driver's module\n",
			name, strerror(-ret));
		return NULL;
	}
	return h;
}

/*
 * A handle keyed with KEY. AF_ALG refuses a new key once an operation
 * socket exists (EBUSY), so every key gets a fresh handle. Returns the
 * setkey error (0: accepted) or EXIT_NODRIVER's negative marker.
 */
#define NO_DRIVER (-100000)
static int keyed(struct kcapi_handle **h, const char *name, const uint8_t *key,
		 size_t klen)
{
	if (*h)
		kcapi_cipher_destroy(*h);
	*h = open_driver(name);
	if (!*h)
		return NO_DRIVER;
	return kcapi_cipher_setkey(*h, key, (uint32_t)klen);
}

/* Simple contiguous one-shot operation: the reference path. */
static int oneshot(struct kcapi_handle *h, bool enc, const uint8_t *in,
		   size_t len, const uint8_t *iv, uint8_t *out)
{
	ssize_t r;

	if (enc)
		r = kcapi_cipher_encrypt(h, in, len, iv, out, len,
					 KCAPI_ACCESS_SENDMSG);
	else
		r = kcapi_cipher_decrypt(h, in, len, iv, out, len,
					 KCAPI_ACCESS_SENDMSG);
	if (r < 0)
		return (int)r;
	return (size_t)r == len ? 0 : -EIO;
}

/* Split [buf, buf + len) into 1..MAX_IOV random pieces. */
static size_t split_iov(uint8_t *buf, size_t len, struct iovec *iov)
{
	size_t n = 1 + rnd_below(MAX_IOV), used = 0, i;

	for (i = 0; i < n - 1 && used < len; i++) {
		size_t piece = 1 + rnd_below(len - used);

		if (used + piece >= len)
			break;
		iov[i].iov_base = buf + used;
		iov[i].iov_len = piece;
		used += piece;
	}
	iov[i].iov_base = buf + used;
	iov[i].iov_len = len - used;
	return i + 1;
}

/*
 * The path under test: one request whose source and destination are
 * several iovecs (one scatterlist entry or more each), or a one-shot call
 * with zero-copy (vmsplice) or copying (sendmsg) access, possibly in place.
 */
static int fancy(struct kcapi_handle *h, bool enc, const uint8_t *in,
		 size_t len, const uint8_t *iv, uint8_t *out, int *layout)
{
	struct iovec iniov[MAX_IOV], outiov[MAX_IOV];
	size_t nin, nout;
	ssize_t r;

	*layout = (int)rnd_below(3);
	if (*layout < 2) {
		int access = *layout ? KCAPI_ACCESS_VMSPLICE : KCAPI_ACCESS_SENDMSG;

		if (enc)
			r = kcapi_cipher_encrypt(h, in, len, iv, out, len, access);
		else
			r = kcapi_cipher_decrypt(h, in, len, iv, out, len, access);
		if (r < 0)
			return (int)r;
		return (size_t)r == len ? 0 : -EIO;
	}
	nin = split_iov((uint8_t *)in, len, iniov);
	nout = split_iov(out, len, outiov);
	r = enc ? kcapi_cipher_stream_init_enc(h, iv, NULL, 0) :
		  kcapi_cipher_stream_init_dec(h, iv, NULL, 0);
	if (r < 0)
		return (int)r;
	r = kcapi_cipher_stream_update_last(h, iniov, nin);
	if (r < 0)
		return (int)r;
	r = kcapi_cipher_stream_op(h, outiov, nout);
	if (r < 0)
		return (int)r;
	return (size_t)r == len ? 0 : -EIO;
}

static int cmd_vectors(const char *driver)
{
	struct kcapi_handle *h = NULL;
	uint8_t key[64], iv[XTS_IV_SIZE], pt[512], ct[512], out[512];
	int bad = 0;

	for (size_t i = 0; i < sizeof(ieee1619_vectors) / sizeof(ieee1619_vectors[0]); i++) {
		const struct xts_vector *v = &ieee1619_vectors[i];
		size_t klen = unhex(v->key, key, sizeof(key));
		size_t len = unhex(v->ptext, pt, sizeof(pt));
		int ret;

		unhex(v->iv, iv, sizeof(iv));
		unhex(v->ctext, ct, sizeof(ct));
		ret = keyed(&h, driver, key, klen);
		if (ret == NO_DRIVER)
			return EXIT_NODRIVER;
		if (ret) {
			fprintf(stderr, "%s: setkey failed: %s\n", v->name, strerror(-ret));
			bad++;
			continue;
		}
		ret = oneshot(h, true, pt, len, iv, out);
		if (ret || memcmp(out, ct, len)) {
			fprintf(stderr, "%s: encryption differs (%s)\n", v->name,
				ret ? strerror(-ret) : "wrong ciphertext");
			hexdump("expected", ct, len);
			hexdump("got     ", out, len);
			bad++;
		}
		ret = oneshot(h, false, ct, len, iv, out);
		if (ret || memcmp(out, pt, len)) {
			fprintf(stderr, "%s: decryption differs (%s)\n", v->name,
				ret ? strerror(-ret) : "wrong plaintext");
			bad++;
		}
	}
	if (h)
		kcapi_cipher_destroy(h);
	printf("# %s: %zu IEEE 1619 vectors, %d failed\n", driver,
	       sizeof(ieee1619_vectors) / sizeof(ieee1619_vectors[0]), bad);
	return bad ? EXIT_MISMATCH : EXIT_OK;
}

static int cmd_compare(const char *driver, const char *reference,
		       unsigned long iterations, size_t only_klen)
{
	static const size_t klens[] = { 32, 48, 64 };
	struct kcapi_handle *h = NULL, *r = NULL;
	uint8_t *pt = malloc(MAX_LEN + SLACK), *ref = malloc(MAX_LEN);
	uint8_t *buf = malloc(MAX_LEN + SLACK), *back = malloc(MAX_LEN + SLACK);
	unsigned long bad = 0, inplace = 0;
	int ret = EXIT_OK;

	if (!pt || !ref || !buf || !back) {
		fprintf(stderr, "xts-afalg: out of memory\n");
		ret = EXIT_USAGE;
		goto out;
	}
	for (unsigned long i = 0; i < iterations; i++) {
		uint8_t key[64], iv[XTS_IV_SIZE];
		size_t klen = only_klen ? only_klen : klens[rnd_below(3)];
		/* Mostly sector-like sizes, often not a multiple of 16. */
		size_t len = 16 + rnd_below(i % 4 ? 4096 : MAX_LEN - 16);
		size_t ioff = rnd_below(SLACK), ooff = rnd_below(SLACK);
		bool in_place = rnd_below(4) == 0;
		uint8_t *src = pt + ioff, *dst;
		int layout, e1, e2;

		if (rnd_below(2))
			len &= ~(size_t)15;
		rnd_fill(key, klen);
		rnd_fill(iv, sizeof(iv));
		rnd_fill(src, len);
		e1 = keyed(&r, reference, key, klen);
		e2 = keyed(&h, driver, key, klen);
		if (e1 == NO_DRIVER || e2 == NO_DRIVER) {
			ret = EXIT_NODRIVER;
			goto out;
		}
		if (e1 || e2) {
			fprintf(stderr, "iteration %lu: setkey(%zu bytes) failed\n",
				i, klen);
			bad++;
			continue;
		}
		e1 = oneshot(r, true, src, len, iv, ref);
		if (in_place) {
			memcpy(buf + ioff, src, len);
			dst = buf + ioff;
			e2 = fancy(h, true, dst, len, iv, dst, &layout);
			inplace++;
		} else {
			dst = buf + ooff;
			e2 = fancy(h, true, src, len, iv, dst, &layout);
		}
		if (e1 || e2 || memcmp(ref, dst, len)) {
			fprintf(stderr, "iteration %lu: encrypt differs: key %zu bytes, "
				"length %zu, offsets %zu/%zu, %s, layout %d, "
				"errors %d/%d\n", i, klen, len, ioff, ooff,
				in_place ? "in place" : "out of place", layout, e1, e2);
			bad++;
			continue;
		}
		/* Decrypt the reference ciphertext through the path under test. */
		memcpy(back + ooff, ref, len);
		e2 = fancy(h, false, back + ooff, len, iv,
			   in_place ? back + ooff : buf + ioff, &layout);
		if (e2 || memcmp(in_place ? back + ooff : buf + ioff, src, len)) {
			fprintf(stderr, "iteration %lu: decrypt differs: key %zu bytes, "
				"length %zu, %s, layout %d, error %d\n", i, klen,
				len, in_place ? "in place" : "out of place", layout, e2);
			bad++;
		}
	}
	printf("# %s vs %s: %lu random cases (%lu in place), %lu differ\n",
	       driver, reference, iterations, inplace, bad);
	if (bad)
		ret = EXIT_MISMATCH;
out:
	free(pt);
	free(ref);
	free(buf);
	free(back);
	if (h)
		kcapi_cipher_destroy(h);
	if (r)
		kcapi_cipher_destroy(r);
	return ret;
}

static int cmd_keys(const char *driver, const char *reference)
{
	/* Valid XTS key sizes, then invalid ones (odd, bad AES half sizes). */
	static const size_t klens[] = { 32, 48, 64, 16, 33, 40, 63, 96 };
	struct kcapi_handle *h = NULL, *r = NULL;
	uint8_t key[96], iv[XTS_IV_SIZE], pt[512], c1[512], c2[512];
	int bad = 0;

	rnd_fill(pt, sizeof(pt));
	rnd_fill(iv, sizeof(iv));
	for (size_t k = 0; k < sizeof(klens) / sizeof(klens[0]); k++) {
		for (int weak = 0; weak < 2; weak++) {
			size_t klen = klens[k];
			int e1, e2;

			rnd_fill(key, klen);
			if (weak)	/* key1 == key2 */
				memcpy(key + klen / 2, key, klen / 2);
			e1 = keyed(&r, reference, key, klen);
			e2 = keyed(&h, driver, key, klen);
			if (e1 == NO_DRIVER || e2 == NO_DRIVER) {
				bad = -1;
				goto out;
			}
			printf("# key %zu bytes%s: %s %s, %s %s\n", klen,
			       weak ? " (key1 == key2)" : "", reference,
			       e1 ? "rejects" : "accepts", driver,
			       e2 ? "rejects" : "accepts");
			if ((e1 == 0) != (e2 == 0)) {
				fprintf(stderr, "key %zu bytes%s: %s returned %d, %s %d\n",
					klen, weak ? " (key1 == key2)" : "",
					reference, e1, driver, e2);
				bad++;
				continue;
			}
			if (e1)
				continue;
			e1 = oneshot(r, true, pt, sizeof(pt), iv, c1);
			e2 = oneshot(h, true, pt, sizeof(pt), iv, c2);
			if (e1 || e2 || memcmp(c1, c2, sizeof(c1))) {
				fprintf(stderr, "key %zu bytes%s: ciphertexts differ\n",
					klen, weak ? " (key1 == key2)" : "");
				bad++;
			}
		}
	}
out:
	if (h)
		kcapi_cipher_destroy(h);
	if (r)
		kcapi_cipher_destroy(r);
	if (bad < 0)
		return EXIT_NODRIVER;
	return bad ? EXIT_MISMATCH : EXIT_OK;
}

#define STREAM_LEN	(1024 * 1024)
#define STREAM_CHUNK	(64 * 1024)

/* One streamed pass: the IV once, then a request per chunk. */
static int streamed(struct kcapi_handle *h, bool enc, const uint8_t *iv, const uint8_t *in,
		    uint8_t *out)
{
	struct iovec iov;
	size_t off;
	int ret;

	iov.iov_base = (void *)in;
	iov.iov_len = STREAM_CHUNK;
	ret = enc ? kcapi_cipher_stream_init_enc(h, iv, &iov, 1) :
		    kcapi_cipher_stream_init_dec(h, iv, &iov, 1);
	if (ret < 0)
		return ret;
	for (off = 0; off < STREAM_LEN; off += STREAM_CHUNK) {
		ssize_t r;

		if (off) {
			iov.iov_base = (void *)(in + off);
			iov.iov_len = STREAM_CHUNK;
			r = off + STREAM_CHUNK == STREAM_LEN ?
			    kcapi_cipher_stream_update_last(h, &iov, 1) :
			    kcapi_cipher_stream_update(h, &iov, 1);
			if (r < 0)
				return (int)r;
		}
		iov.iov_base = out + off;
		iov.iov_len = STREAM_CHUNK;
		r = kcapi_cipher_stream_op(h, &iov, 1);
		if (r < 0)
			return (int)r;
		if ((size_t)r != STREAM_CHUNK)
			return -EIO;
	}
	return 0;
}

static int cmd_stream(const char *driver, const char *reference, size_t klen)
{
	struct kcapi_handle *hd = NULL, *hr = NULL;
	uint8_t key[64], iv[XTS_IV_SIZE];
	uint8_t *plain, *cd, *cr, *back;
	int ret = EXIT_MISMATCH, e;

	if (!klen)
		klen = 64;
	plain = malloc(STREAM_LEN);
	cd = malloc(STREAM_LEN);
	cr = malloc(STREAM_LEN);
	back = malloc(STREAM_LEN);
	if (!plain || !cd || !cr || !back) {
		perror("xts-afalg: malloc");
		ret = EXIT_USAGE;
		goto out;
	}
	rnd_fill(key, klen);
	rnd_fill(iv, sizeof(iv));
	rnd_fill(plain, STREAM_LEN);
	/* One handle per pass: a stream's IV lives in its operation socket. */
	e = keyed(&hd, driver, key, klen);
	if (!e)
		e = streamed(hd, true, iv, plain, cd);
	if (e == NO_DRIVER) {
		ret = EXIT_NODRIVER;
		goto out;
	}
	if (!e && !(e = keyed(&hr, reference, key, klen)))
		e = streamed(hr, true, iv, plain, cr);
	if (e) {
		fprintf(stderr, "xts-afalg: stream encryption failed: %s\n", strerror(-e));
		goto out;
	}
	if (memcmp(cd, cr, STREAM_LEN)) {
		for (size_t i = 0; i < STREAM_LEN; i += STREAM_CHUNK)
			if (memcmp(cd + i, cr + i, STREAM_CHUNK)) {
				fprintf(stderr, "xts-afalg: %s and %s differ from request %zu of the stream on (its IV is not the one %s leaves)\n",
					driver, reference, i / STREAM_CHUNK, reference);
				break;
			}
		goto out;
	}
	/* Each decrypts the other's stream. */
	e = keyed(&hd, driver, key, klen);
	if (!e)
		e = streamed(hd, false, iv, cr, back);
	if (e || memcmp(back, plain, STREAM_LEN)) {
		fprintf(stderr, "xts-afalg: %s does not decrypt %s's stream\n", driver, reference);
		goto out;
	}
	e = keyed(&hr, reference, key, klen);
	if (!e)
		e = streamed(hr, false, iv, cd, back);
	if (e || memcmp(back, plain, STREAM_LEN)) {
		fprintf(stderr, "xts-afalg: %s does not decrypt %s's stream\n", reference, driver);
		goto out;
	}
	printf("# %s streams as %s: 16 requests of 64 KiB, IV set once\n", driver, reference);
	ret = EXIT_OK;
out:
	if (hd)
		kcapi_cipher_destroy(hd);
	if (hr)
		kcapi_cipher_destroy(hr);
	free(plain);
	free(cd);
	free(cr);
	free(back);
	return ret;
}

#define HOLD_LEN 4096

/* One round of cmd_hold: every handle against the reference. */
static int hold_round(struct kcapi_handle **hs, uint8_t (*keys)[64],
		      unsigned long n, size_t klen, const char *reference)
{
	uint8_t in[HOLD_LEN], got[HOLD_LEN], want[HOLD_LEN], iv[XTS_IV_SIZE];
	struct kcapi_handle *r = NULL;
	int ret = EXIT_OK;

	for (unsigned long i = 0; i < n && ret == EXIT_OK; i++) {
		int k = keyed(&r, reference, keys[i], klen);

		if (k == NO_DRIVER)
			return EXIT_NODRIVER;
		rnd_fill(in, sizeof(in));
		rnd_fill(iv, sizeof(iv));
		if (k || oneshot(r, true, in, sizeof(in), iv, want) ||
		    oneshot(hs[i], true, in, sizeof(in), iv, got)) {
			fprintf(stderr, "xts-afalg: handle %lu: encryption failed\n", i);
			ret = EXIT_MISMATCH;
		} else if (memcmp(got, want, sizeof(got))) {
			fprintf(stderr, "xts-afalg: handle %lu: ciphertext differs\n", i);
			hexdump("driver", got, sizeof(got));
			hexdump("reference", want, sizeof(want));
			ret = EXIT_MISMATCH;
		} else if (oneshot(hs[i], false, want, sizeof(want), iv, got) ||
			   memcmp(got, in, sizeof(got))) {
			fprintf(stderr, "xts-afalg: handle %lu: decryption differs\n", i);
			ret = EXIT_MISMATCH;
		}
	}
	if (r)
		kcapi_cipher_destroy(r);
	return ret;
}

static int cmd_hold(const char *driver, const char *reference,
		    unsigned long n, size_t klen)
{
	struct kcapi_handle **hs = calloc(n, sizeof(*hs));
	uint8_t (*keys)[64] = calloc(n, sizeof(*keys));
	unsigned long i, round = 1;
	char line[64];
	int ret = EXIT_OK;

	if (!klen)
		klen = 64;
	if (klen == 48 || !hs || !keys) {
		fprintf(stderr, "xts-afalg: hold takes -k 32 or 64%s\n",
			hs && keys ? "" : " (out of memory)");
		ret = EXIT_USAGE;
		goto out;
	}
	for (i = 0; i < n; i++) {
		rnd_fill(keys[i], klen);
		hs[i] = open_driver(driver);
		if (!hs[i]) {
			ret = EXIT_NODRIVER;
			goto out;
		}
		if (kcapi_cipher_setkey(hs[i], keys[i], (uint32_t)klen)) {
			fprintf(stderr, "xts-afalg: handle %lu: setkey failed\n", i);
			ret = EXIT_MISMATCH;
			goto out;
		}
	}
	for (;;) {
		int r = hold_round(hs, keys, n, klen, reference);

		printf("round %lu %s\n", round, r == EXIT_OK ? "ok" : "mismatch");
		fflush(stdout);
		if (r != EXIT_OK && ret == EXIT_OK)
			ret = r;
		if (!fgets(line, sizeof(line), stdin))
			break;
		round++;
	}
out:
	if (hs)
		for (i = 0; i < n; i++)
			if (hs[i])
				kcapi_cipher_destroy(hs[i]);
	free(hs);
	free(keys);
	return ret;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xts-afalg vectors DRIVER\n"
		"       xts-afalg compare DRIVER REFERENCE [-n ITERATIONS] [-s SEED] [-k KEYBYTES]\n"
		"       xts-afalg keys DRIVER REFERENCE\n"
		"       xts-afalg stream DRIVER REFERENCE [-s SEED] [-k KEYBYTES]\n"
		"       xts-afalg hold DRIVER REFERENCE [-n HANDLES] [-s SEED] [-k KEYBYTES]\n");
}

int main(int argc, char **argv)
{
	unsigned long iterations = 200;
	size_t klen = 0;
	bool seeded = false;
	int opt;

	if (argc < 3) {
		usage();
		return EXIT_USAGE;
	}
	optind = 2;
	while ((opt = getopt(argc, argv, "n:s:k:")) != -1) {
		switch (opt) {
		case 'n':
			iterations = strtoul(optarg, NULL, 0);
			break;
		case 's':
			rng_state = strtoull(optarg, NULL, 0);
			seeded = true;
			break;
		case 'k':
			klen = strtoul(optarg, NULL, 0);
			if (klen != 32 && klen != 48 && klen != 64) {
				fprintf(stderr, "xts-afalg: -k must be 32, 48 or 64\n");
				return EXIT_USAGE;
			}
			break;
		default:
			usage();
			return EXIT_USAGE;
		}
	}
	if (!seeded && getrandom(&rng_state, sizeof(rng_state), 0) != sizeof(rng_state)) {
		perror("xts-afalg: getrandom");
		return EXIT_USAGE;
	}
	printf("# seed %#" PRIx64 "\n", rng_state);
	fflush(stdout);

	if (!strcmp(argv[1], "vectors"))
		return cmd_vectors(argv[optind]);
	if (optind + 1 >= argc) {
		usage();
		return EXIT_USAGE;
	}
	if (!strcmp(argv[1], "compare"))
		return cmd_compare(argv[optind], argv[optind + 1], iterations, klen);
	if (!strcmp(argv[1], "keys"))
		return cmd_keys(argv[optind], argv[optind + 1]);
	if (!strcmp(argv[1], "stream"))
		return cmd_stream(argv[optind], argv[optind + 1], klen);
	if (!strcmp(argv[1], "hold"))
		return cmd_hold(argv[optind], argv[optind + 1], iterations, klen);
	usage();
	return EXIT_USAGE;
}
