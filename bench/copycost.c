// SPDX-License-Identifier: GPL-2.0-only
/*
 * copycost: what copying a byte costs on this machine's CPU, relative to
 * encrypting it with AES-256-XTS, measured in wall-clock time on the host.
 *
 * offload-bench counts guest instructions under QEMU's -icount, where every
 * iteration of a rep-prefixed string instruction counts as one instruction.
 * How much a copied byte weighs against an encrypted byte there depends on
 * the copy routine the guest kernel picks for the CPU model QEMU shows it.
 * This tool gives the reference the guest figures are compared with: the
 * same operations timed on real hardware: copying and clearing (Debian's
 * kernels clear every page they allocate, init_on_alloc) against AES-XTS.
 */
#include <errno.h>
#include <getopt.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SECTOR 4096
#define REPEATS 7

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Keep the compiler from dropping or merging the copies. */
static void clobber(void *p)
{
	__asm__ volatile("" : : "r"(p) : "memory");
}

static void copy_rep_movsb(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("rep movsb"
			 : "+D"(dst), "+S"(src), "+c"(n)
			 :
			 : "memory");
#else
	memcpy(dst, src, n);
#endif
}

/* What the kernel's clear_page does with fast string moves. */
static void clear_rep_stosb(void *dst, size_t n)
{
#if defined(__x86_64__)
	__asm__ volatile("rep stosb"
			 : "+D"(dst), "+c"(n)
			 : "a"(0)
			 : "memory");
#else
	memset(dst, 0, n);
#endif
}

struct buf {
	unsigned char *src, *dst;
	size_t size;		/* bytes; a multiple of SECTOR */
};

enum op { OP_MEMCPY, OP_MOVSB, OP_STOSB, OP_XTS };

static EVP_CIPHER_CTX *xts;

/* One pass over the buffer, a sector at a time. Returns 0 or -1. */
static int pass(enum op op, struct buf *b)
{
	unsigned char iv[16] = { 0 };
	size_t off;
	int outl;

	for (off = 0; off < b->size; off += SECTOR) {
		switch (op) {
		case OP_MEMCPY:
			memcpy(b->dst + off, b->src + off, SECTOR);
			break;
		case OP_MOVSB:
			copy_rep_movsb(b->dst + off, b->src + off, SECTOR);
			break;
		case OP_STOSB:
			clear_rep_stosb(b->dst + off, SECTOR);
			break;
		case OP_XTS:
			/* A new tweak per sector, as dm-crypt's plain64. */
			memcpy(iv, &off, sizeof(off));
			if (EVP_EncryptInit_ex(xts, NULL, NULL, NULL, iv) != 1 ||
			    EVP_EncryptUpdate(xts, b->dst + off, &outl,
					      b->src + off, SECTOR) != 1)
				return -1;
			break;
		}
		clobber(b->dst);
	}
	return 0;
}

/*
 * Best of REPEATS runs of at least min_s seconds each, in ns per byte: the
 * least disturbed run is the closest to what the CPU needs.
 */
static int measure(enum op op, struct buf *b, double min_s, double *ns_per_byte)
{
	double best = 0;
	int r;

	if (pass(op, b))	/* warm up: page faults, caches */
		return -1;
	for (r = 0; r < REPEATS; r++) {
		double t0 = now(), t;
		size_t bytes = 0;

		do {
			if (pass(op, b))
				return -1;
			bytes += b->size;
			t = now() - t0;
		} while (t < min_s);
		t = t * 1e9 / bytes;
		if (r == 0 || t < best)
			best = t;
	}
	*ns_per_byte = best;
	return 0;
}

static int buf_init(struct buf *b, size_t size)
{
	b->size = size;
	b->src = aligned_alloc(SECTOR, size);
	b->dst = aligned_alloc(SECTOR, size);
	if (!b->src || !b->dst)
		return -1;
	for (size_t i = 0; i < size; i++)
		b->src[i] = (unsigned char)(i * 131 + 7);
	memset(b->dst, 0, size);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: copycost [--stream-mib N]\n"
		"\n"
		"Time copying 4 KiB sectors (memcpy, rep movsb) and clearing them\n"
		"(rep stosb) against encrypting them with AES-256-XTS (OpenSSL), on\n"
		"this CPU, with the data in cache (one 4 KiB sector) and streaming\n"
		"(N MiB, default 256). Prints ns per byte and each operation's weight\n"
		"relative to AES-256-XTS.\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "stream-mib", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 }
	};
	static const char * const names[] = {
		[OP_MEMCPY] = "memcpy", [OP_MOVSB] = "rep movsb",
		[OP_STOSB] = "rep stosb (clear)",
		[OP_XTS] = "AES-256-XTS",
	};
	unsigned char key[64];
	struct buf hot, stream;
	double xts_ns[2], ns;
	unsigned long mib = 256;
	char *end;
	int c, i;

	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			errno = 0;
			mib = strtoul(optarg, &end, 10);
			if (errno || *end || mib == 0 || mib > 4096) {
				fprintf(stderr, "copycost: --stream-mib: a number of MiB from 1 to 4096\n");
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind != argc) {
		usage(stderr);
		return 2;
	}

	/* Two different key halves: XTS refuses equal ones. */
	for (i = 0; i < 64; i++)
		key[i] = (unsigned char)(i * 29 + 3);
	xts = EVP_CIPHER_CTX_new();
	if (!xts || EVP_EncryptInit_ex(xts, EVP_aes_256_xts(), NULL, key, NULL) != 1) {
		fprintf(stderr, "copycost: OpenSSL has no AES-256-XTS\n");
		return 1;
	}
	if (buf_init(&hot, SECTOR) || buf_init(&stream, (size_t)mib << 20)) {
		fprintf(stderr, "copycost: out of memory\n");
		return 1;
	}

	printf("%-32s %10s %18s\n", "operation, 4 KiB at a time", "ns/byte", "weight vs XTS");
	for (i = 0; i < 2; i++) {
		struct buf *b = i ? &stream : &hot;
		const char *where = i ? "streaming" : "in cache";
		char label[64];

		if (measure(OP_XTS, b, 0.05, &xts_ns[i])) {
			fprintf(stderr, "copycost: AES-256-XTS failed\n");
			return 1;
		}
		snprintf(label, sizeof(label), "%s, %s", names[OP_XTS], where);
		printf("%-32s %10.4f %18.3f\n", label, xts_ns[i], 1.0);
		for (enum op op = OP_MEMCPY; op <= OP_STOSB; op++) {
			if (measure(op, b, 0.05, &ns))
				return 1;
			snprintf(label, sizeof(label), "%s, %s", names[op], where);
			printf("%-32s %10.4f %18.3f\n", label, ns, ns / xts_ns[i]);
		}
	}
	EVP_CIPHER_CTX_free(xts);
	return 0;
}
