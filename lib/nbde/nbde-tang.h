/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What opalctl reads of a Tang server without Clevis: its advertisement
 * (a JWS whose payload is the JWK set of its current keys), the RFC 7638
 * thumbprints that name those keys, and whether a signing key signed it.
 * Used to tell a slot's key rotated from current, and to carry the trust a
 * slot was bound with over to the server's new keys.
 */
#ifndef FDEKIT_NBDE_TANG_H
#define FDEKIT_NBDE_TANG_H

#include <stdbool.h>
#include <stddef.h>

#include <json-c/json.h>

/* An RFC 7638 thumbprint in base64url: SHA-512's is 86 characters. */
#define TANG_THP_MAX 96

/* The longest Tang URL taken. */
#define TANG_URL_MAX 1024

/*
 * Whether url may be given to curl (or to clevis, which gives it to curl):
 * http:// or https:// followed by a host (a letter, a digit or an IPv6
 * literal's '['), no blank or control character, at most TANG_URL_MAX
 * characters. 0, or -EINVAL with why saying what is wrong.
 */
int tang_url_check(const char *url, char *why, size_t whylen);
/* url for a message: control and non-ASCII characters as '?', shortened. */
void tang_url_show(const char *url, char *out, size_t cap);

/*
 * GET URL/adv (thp NULL) or URL/adv/THP (the advertisement signed by that
 * signing key too, rotated ones included), bounded by timeout_s, with
 * curl -q (no .curlrc), the URL only as --url's value, HTTP(S) only.
 * Returns 0 and the JWS in *jws; -EINVAL when url fails tang_url_check
 * (or thp is not base64url): nothing run; -ENOENT when the server
 * answered 404 (it has no such key); -EHOSTUNREACH when it did not
 * answer; -EBADMSG when the answer is not a JWS. why says which.
 */
int tang_fetch_adv(const char *url, const char *thp, unsigned int timeout_s, json_object **jws,
		   char *why, size_t whylen);
/* The JWS's payload parsed, a JWK set {"keys": [...]}: a new reference, or NULL. */
json_object *tang_adv_keys(json_object *jws);
/* key_ops of jwk has op ("verify", "deriveKey"). */
bool tang_jwk_has_op(json_object *jwk, const char *op);
/*
 * The RFC 7638 thumbprint of an EC, RSA or oct JWK with hash alg "S1",
 * "S256" or "S512" (jose's names). 0, or -EINVAL.
 */
int tang_jwk_thumbprint(json_object *jwk, const char *alg, char *out, size_t cap);
/*
 * A key of the set (with key_ops op, or any when op is NULL) whose
 * thumbprint is thp, whatever the hash its length says: the key, borrowed
 * from keys, or NULL.
 */
json_object *tang_keys_find(json_object *keys, const char *op, const char *thp);
/* One of the JWS's signatures verifies with jwk (ES256, ES384, ES512): 0, else -EBADMSG. */
int tang_jws_verify(json_object *jws, json_object *jwk);

#endif
