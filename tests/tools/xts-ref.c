// SPDX-License-Identifier: GPL-2.0-only
/*
 * xts-ref: host-side reference for dm-crypt's aes-xts-plain64, computed with
 * OpenSSL. Encrypts a plaintext region sector by sector and compares it
 * with the raw ciphertext a guest read from its backing device.
 *
 *   xts-ref check --key FILE[:OFFSET] --key-bytes 32|64 --sector-size N
 *                 [--iv-large-sectors] [--iv-offset SECTOR]
 *                 --plain FILE[:OFFSET] --cipher FILE[:OFFSET] --bytes N
 *   xts-ref vectors          check OpenSSL against the IEEE 1619 vectors
 *
 * plain64: the tweak of each data unit (one sector) is its sector number as
 * a 64-bit little-endian integer, zero-padded to 16 bytes; it counts 512-byte
 * sectors unless --iv-large-sectors (cryptsetup's option of the same name).
 *
 * The key is read from a file, held in locked memory, wiped after use.
 * Exit: 0 equal, 1 ciphertext differs, 2 usage, 3 I/O or OpenSSL error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <openssl/evp.h>

#include "ieee1619.h"

enum { EXIT_EQUAL, EXIT_DIFFERS, EXIT_USAGE, EXIT_IO };

struct region {
	const char *path;
	long long offset;
};

static bool parse_region(const char *arg, struct region *r)
{
	char *colon;

	/* FILE[:OFFSET]; the copy lives until the process exits. */
	r->path = strdup(arg);
	r->offset = 0;
	if (!r->path)
		return false;
	colon = strrchr(r->path, ':');
	if (colon) {
		char *end;

		*colon = '\0';
		r->offset = strtoll(colon + 1, &end, 0);
		if (*end || r->offset < 0)
			return false;
	}
	return true;
}

static int read_region(const struct region *r, uint8_t *out, size_t len)
{
	FILE *f = fopen(r->path, "rb");
	size_t got;

	if (!f) {
		fprintf(stderr, "xts-ref: cannot open %s: %s\n", r->path, strerror(errno));
		return -1;
	}
	if (fseeko(f, r->offset, SEEK_SET)) {
		fprintf(stderr, "xts-ref: cannot seek %s: %s\n", r->path, strerror(errno));
		fclose(f);
		return -1;
	}
	got = fread(out, 1, len, f);
	fclose(f);
	if (got != len) {
		fprintf(stderr, "xts-ref: %s: short read (%zu of %zu bytes at %lld): "
			"the guest did not write it\n", r->path, got, len, r->offset);
		return -1;
	}
	return 0;
}

static const EVP_CIPHER *xts_cipher(size_t key_bytes)
{
	return key_bytes == 32 ? EVP_aes_128_xts() : EVP_aes_256_xts();
}

static int xts_encrypt(EVP_CIPHER_CTX *ctx, const uint8_t *key, size_t key_bytes,
		       const uint8_t iv[16], const uint8_t *in, size_t len, uint8_t *out)
{
	int outl = 0;

	if (EVP_EncryptInit_ex(ctx, xts_cipher(key_bytes), NULL, key, iv) != 1 ||
	    EVP_EncryptUpdate(ctx, out, &outl, in, (int)len) != 1 || (size_t)outl != len)
		return -1;
	return 0;
}

static int unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex) / 2;

	if (n > max)
		return -1;
	for (size_t i = 0; i < n; i++) {
		unsigned int v;

		if (sscanf(hex + 2 * i, "%2x", &v) != 1)
			return -1;
		out[i] = (uint8_t)v;
	}
	return (int)n;
}

static int cmd_vectors(void)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	size_t n = sizeof(ieee1619_vectors) / sizeof(ieee1619_vectors[0]);
	int bad = 0;

	if (!ctx)
		return EXIT_IO;
	for (size_t i = 0; i < n; i++) {
		const struct xts_vector *v = &ieee1619_vectors[i];
		uint8_t key[64], iv[16], pt[512], ct[512], out[512];
		int klen = unhex(v->key, key, sizeof(key));
		int len = unhex(v->ptext, pt, sizeof(pt));

		if (klen <= 0 || len <= 0 || unhex(v->iv, iv, sizeof(iv)) != 16 ||
		    unhex(v->ctext, ct, sizeof(ct)) != len) {
			printf("not ok %zu - %s: malformed vector\n", i + 1, v->name);
			bad++;
			continue;
		}
		if (!memcmp(key, key + klen / 2, (size_t)klen / 2)) {
			/* OpenSSL 3 refuses XTS keys whose halves are equal. */
			bool refused = xts_encrypt(ctx, key, (size_t)klen, iv, pt,
						   (size_t)len, out) != 0;

			printf("%s %zu - %s: OpenSSL refuses key1 == key2\n",
			       refused ? "ok" : "not ok", i + 1, v->name);
			bad += !refused;
			continue;
		}
		if (xts_encrypt(ctx, key, (size_t)klen, iv, pt, (size_t)len, out) ||
		    memcmp(out, ct, (size_t)len)) {
			printf("not ok %zu - %s\n", i + 1, v->name);
			bad++;
		} else {
			printf("ok %zu - %s\n", i + 1, v->name);
		}
	}
	printf("1..%zu\n", n);
	EVP_CIPHER_CTX_free(ctx);
	return bad ? EXIT_DIFFERS : EXIT_EQUAL;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: xts-ref check --key FILE[:OFFSET] --key-bytes 32|64 --sector-size N\n"
		"                     [--iv-large-sectors] [--iv-offset SECTOR]\n"
		"                     --plain FILE[:OFFSET] --cipher FILE[:OFFSET] --bytes N\n"
		"       xts-ref vectors\n");
}

static int cmd_check(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "key", required_argument, NULL, 'k' },
		{ "key-bytes", required_argument, NULL, 'K' },
		{ "sector-size", required_argument, NULL, 's' },
		{ "iv-large-sectors", no_argument, NULL, 'L' },
		{ "iv-offset", required_argument, NULL, 'o' },
		{ "plain", required_argument, NULL, 'p' },
		{ "cipher", required_argument, NULL, 'c' },
		{ "bytes", required_argument, NULL, 'b' },
		{ NULL, 0, NULL, 0 },
	};
	struct region key_r = { 0 }, plain_r = { 0 }, cipher_r = { 0 };
	size_t key_bytes = 0, sector = 0, bytes = 0;
	unsigned long long iv_offset = 0;
	bool large = false;
	uint8_t *key = NULL, *plain = NULL, *cipher = NULL, *out = NULL;
	EVP_CIPHER_CTX *ctx = NULL;
	size_t bad = 0, first_bad = 0;
	int opt, ret = EXIT_IO;

	while ((opt = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (opt) {
		case 'k':
			if (!parse_region(optarg, &key_r))
				goto usage;
			break;
		case 'K':
			key_bytes = strtoul(optarg, NULL, 0);
			break;
		case 's':
			sector = strtoul(optarg, NULL, 0);
			break;
		case 'L':
			large = true;
			break;
		case 'o':
			iv_offset = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			if (!parse_region(optarg, &plain_r))
				goto usage;
			break;
		case 'c':
			if (!parse_region(optarg, &cipher_r))
				goto usage;
			break;
		case 'b':
			bytes = strtoul(optarg, NULL, 0);
			break;
		default:
			goto usage;
		}
	}
	if (!key_r.path || !plain_r.path || !cipher_r.path ||
	    (key_bytes != 32 && key_bytes != 64) ||
	    (sector != 512 && sector != 1024 && sector != 2048 && sector != 4096) ||
	    !bytes || bytes % sector)
		goto usage;

	key = mmap(NULL, 64, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (key == MAP_FAILED || mlock(key, 64)) {
		fprintf(stderr, "xts-ref: cannot lock memory for the key: raise RLIMIT_MEMLOCK\n");
		key = key == MAP_FAILED ? NULL : key;
		goto out;
	}
	plain = malloc(bytes);
	cipher = malloc(bytes);
	out = malloc(sector);
	ctx = EVP_CIPHER_CTX_new();
	if (!plain || !cipher || !out || !ctx) {
		fprintf(stderr, "xts-ref: out of memory\n");
		goto out;
	}
	if (read_region(&key_r, key, key_bytes) || read_region(&plain_r, plain, bytes) ||
	    read_region(&cipher_r, cipher, bytes))
		goto out;

	for (size_t s = 0; s < bytes / sector; s++) {
		uint64_t n = iv_offset + (large ? s : s * (sector / 512));
		uint8_t iv[16] = { 0 };

		for (int i = 0; i < 8; i++)
			iv[i] = (uint8_t)(n >> (8 * i));
		if (xts_encrypt(ctx, key, key_bytes, iv, plain + s * sector, sector, out)) {
			fprintf(stderr, "xts-ref: OpenSSL AES-XTS failed\n");
			goto out;
		}
		if (memcmp(out, cipher + s * sector, sector)) {
			if (!bad)
				first_bad = s;
			bad++;
		}
	}
	if (bad) {
		printf("%zu of %zu sectors differ from OpenSSL's AES-XTS (first: sector %zu)\n",
		       bad, bytes / sector, first_bad);
		ret = EXIT_DIFFERS;
	} else {
		printf("%zu sectors of %zu bytes equal OpenSSL's AES-%zu-XTS plain64%s\n",
		       bytes / sector, sector, key_bytes * 4,
		       large ? " (large-sector IVs)" : "");
		ret = EXIT_EQUAL;
	}
out:
	if (key) {
		explicit_bzero(key, 64);
		munlock(key, 64);
		munmap(key, 64);
	}
	EVP_CIPHER_CTX_free(ctx);
	free(plain);
	free(cipher);
	free(out);
	return ret;
usage:
	usage();
	return EXIT_USAGE;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && !strcmp(argv[1], "vectors"))
		return cmd_vectors();
	if (argc >= 2 && !strcmp(argv[1], "check"))
		return cmd_check(argc - 1, argv + 1);
	usage();
	return EXIT_USAGE;
}
