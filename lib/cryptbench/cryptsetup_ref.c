// SPDX-License-Identifier: GPL-2.0-only
/*
 * libcryptsetup as the reference: the PBKDF rows of `cryptsetup benchmark`
 * and crypt_benchmark for --compare-cryptsetup, called the way the
 * cryptsetup tool calls them.
 */
#include <errno.h>
#include <libcryptsetup.h>
#include <string.h>

#include "cryptbench.h"

/* Fixed, public benchmark inputs (as cryptsetup uses): not secrets. */
static const char bench_password[] = "foo";
static const char bench_salt_pbkdf2[] = "bar";
static const char bench_salt_argon2[] = "0123456789abcdef0123456789abcdef";

void cb_pbkdf_run(struct cb_pbkdf_result *res, const char *type,
		  const char *hash, unsigned int key_bits)
{
	struct crypt_pbkdf_type pbkdf;
	int r;

	memset(res, 0, sizeof(*res));
	snprintf(res->type, sizeof(res->type), "%s", type);
	snprintf(res->hash, sizeof(res->hash), "%s", hash ? hash : "");
	res->key_bits = key_bits;
	memset(&pbkdf, 0, sizeof(pbkdf));
	pbkdf.type = type;
	if (!strcmp(type, CRYPT_KDF_PBKDF2)) {
		pbkdf.hash = hash;
		pbkdf.time_ms = 1000;
		r = crypt_benchmark_pbkdf(NULL, &pbkdf, bench_password, 3,
					  bench_salt_pbkdf2, 3, key_bits / 8,
					  NULL, NULL);
	} else {
		/* LUKS2 defaults of this libcryptsetup, as cryptsetup prints. */
		const struct crypt_pbkdf_type *def = crypt_get_pbkdf_default(CRYPT_LUKS2);

		pbkdf.time_ms = def ? def->time_ms : 2000;
		pbkdf.max_memory_kb = def ? def->max_memory_kb : 0;
		pbkdf.parallel_threads = def ? def->parallel_threads : 0;
		r = crypt_benchmark_pbkdf(NULL, &pbkdf, bench_password, 3,
					  bench_salt_argon2, 32, key_bits / 8,
					  NULL, NULL);
	}
	if (r < 0)
		return;
	res->available = true;
	res->iterations = pbkdf.iterations;
	res->memory_kb = pbkdf.max_memory_kb;
	res->threads = pbkdf.parallel_threads;
	res->time_ms = pbkdf.time_ms;
}

int cb_cryptsetup_cipher(const struct cb_cipher *c, double *enc_mibs,
			 double *dec_mibs)
{
	size_t buffer = 1024 * 1024;
	int r;

	/* cryptsetup doubles the buffer while the run is too short to time. */
	do {
		r = crypt_benchmark(NULL, c->cipher, c->mode, c->key_bits / 8, 0,
				    buffer, enc_mibs, dec_mibs);
		if (r == -ERANGE) {
			if (buffer >= 64u * 1024 * 1024)
				return -ERANGE;
			buffer *= 2;
		}
	} while (r == -ERANGE);
	return r;
}
