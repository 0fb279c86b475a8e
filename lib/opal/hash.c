// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedutil-compatible PIN derivation, so drives set up with sedutil-cli can
 * be managed: PBKDF2-HMAC-SHA1 over the password, salted with the drive's
 * 20-byte serial number as the drive reports it, 75000 iterations, 32 bytes.
 */
#include <openssl/evp.h>

#include "opal.h"

static int pbkdf2(const uint8_t *pw, size_t pwlen, const char serial[OPAL_SERIAL_MAX],
		  int iterations, const EVP_MD *md, uint8_t out[32])
{
	if (pwlen > INT32_MAX)
		return OPAL_ERR_INVAL;
	if (!PKCS5_PBKDF2_HMAC((const char *)pw, (int)pwlen, (const unsigned char *)serial,
			       OPAL_SERIAL_MAX, iterations, md, 32, out))
		return OPAL_ERR_NOMEM;
	return 0;
}

int opal_hash_sedutil(const uint8_t *pw, size_t pwlen, const char serial[OPAL_SERIAL_MAX],
		      uint8_t out[32])
{
	return pbkdf2(pw, pwlen, serial, OPAL_SEDUTIL_ITERATIONS, EVP_sha1(), out);
}

/*
 * The maintained sedutil fork (and go-tcg-storage's HashSedutil512):
 * PBKDF2-HMAC-SHA512, 500000 iterations, the same salt and length.
 */
int opal_hash_sedutil512(const uint8_t *pw, size_t pwlen, const char serial[OPAL_SERIAL_MAX],
			 uint8_t out[32])
{
	return pbkdf2(pw, pwlen, serial, OPAL_SEDUTIL512_ITERATIONS, EVP_sha512(), out);
}
