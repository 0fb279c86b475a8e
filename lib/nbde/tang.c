// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tang advertisements: fetched with curl, checked with OpenSSL (tang.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/evp.h>
#include <openssl/param_build.h>

#include "nbde-clevis.h"
#include "nbde-tang.h"

/* An advertisement of a few keys is a few KiB; a server sending more is not Tang. */
#define ADV_MAX 65536

static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : NULL;
}

void tang_url_show(const char *url, char *out, size_t cap)
{
	size_t n = 0, max = cap > 4 ? cap - 4 : 0;

	for (; url[n] && n < max && n < 120; n++)
		out[n] = (unsigned char)url[n] < 0x20 || url[n] == 0x7f ||
			 (unsigned char)url[n] >= 0x80 ? '?' : url[n];
	if (url[n] && cap > 4)
		memcpy(out + n, "...", 3), n += 3;
	if (cap)
		out[n < cap ? n : cap - 1] = 0;
}

int tang_url_check(const char *url, char *why, size_t whylen)
{
	const char *host = !strncasecmp(url, "http://", 7) ? url + 7 :
			   !strncasecmp(url, "https://", 8) ? url + 8 : NULL;
	char shown[128];

	tang_url_show(url, shown, sizeof(shown));
	for (const char *p = url; *p; p++) {
		if ((unsigned char)*p <= 0x20 || *p == 0x7f) {
			snprintf(why, whylen, "Tang URL '%s' holds a blank or a control character: refused",
				 shown);
			return -EINVAL;
		}
	}
	if (!host || !(isalnum((unsigned char)*host) || *host == '[')) {
		snprintf(why, whylen, "Tang URL '%s' is not http:// or https:// followed by a host: refused",
			 shown);
		return -EINVAL;
	}
	if (strlen(url) > TANG_URL_MAX) {
		snprintf(why, whylen, "Tang URL '%s' is longer than %d characters: refused", shown,
			 TANG_URL_MAX);
		return -EINVAL;
	}
	return 0;
}

int tang_fetch_adv(const char *url, const char *thp, unsigned int timeout_s, json_object **jws,
		   char *why, size_t whylen)
{
	char full[TANG_URL_MAX + TANG_THP_MAX + 8], tmo[16], conn[16];
	/*
	 * -q first: no .curlrc. The URL only as --url's value, whatever it
	 * begins with; and only HTTP(S), even a redirect.
	 */
	char *const argv[] = { (char *)"curl", (char *)"-q", (char *)"-s", (char *)"-g",
			       (char *)"--proto", (char *)"=http,https",
			       (char *)"--proto-redir", (char *)"=http,https",
			       (char *)"--connect-timeout", conn, (char *)"-m", tmo,
			       (char *)"-w", (char *)"\n%{http_code}", (char *)"--url", full, NULL };
	struct secret buf = { .data = malloc(ADV_MAX), .cap = ADV_MAX };
	struct child_io io = { .in_fd = -1, .out_fd = -1, .capture = &buf };
	char *nl;
	long code;
	int rc;

	*jws = NULL;
	if (tang_url_check(url, why, whylen)) {
		free(buf.data);
		return -EINVAL;
	}
	if (thp && (!*thp || strlen(thp) >= TANG_THP_MAX ||
		    strspn(thp, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
		    strlen(thp))) {
		snprintf(why, whylen, "a signing key thumbprint that is not base64url: refused");
		free(buf.data);
		return -EINVAL;
	}
	if (!buf.data) {
		snprintf(why, whylen, "out of memory");
		return -ENOMEM;
	}
	snprintf(full, sizeof(full), "%s/adv%s%s", url, thp ? "/" : "", thp ? thp : "");
	snprintf(tmo, sizeof(tmo), "%u", timeout_s ? timeout_s : 1);
	snprintf(conn, sizeof(conn), "%u",
		 timeout_s && timeout_s < CURL_CONNECT_TIMEOUT ? timeout_s : CURL_CONNECT_TIMEOUT);
	rc = run_child(argv, &io, (uint64_t)(timeout_s + 2) * 1000);
	if (rc) {
		free(buf.data);
		if (rc == 127)
			snprintf(why, whylen, "curl is not installed");
		else
			snprintf(why, whylen, "%s did not answer (%s %d)", url,
				 rc < 0 ? "error" : "curl exit", rc < 0 ? -rc : rc);
		return -EHOSTUNREACH;
	}
	buf.data[buf.len < buf.cap ? buf.len : buf.cap - 1] = 0;
	nl = strrchr((char *)buf.data, '\n');
	code = nl ? strtol(nl + 1, NULL, 10) : 0;
	if (nl)
		*nl = 0;
	if (code == 404) {
		snprintf(why, whylen, "%s has no signing key %s", url, thp ? thp : "(none advertised)");
		rc = -ENOENT;
	} else if (code != 200) {
		snprintf(why, whylen, "%s answered HTTP %ld to GET %s", url, code, full);
		rc = code ? -EBADMSG : -EHOSTUNREACH;
	} else {
		*jws = json_tokener_parse((char *)buf.data);
		if (!*jws || !json_object_is_type(*jws, json_type_object) ||
		    !jstr(*jws, "payload")) {
			json_object_put(*jws);
			*jws = NULL;
			snprintf(why, whylen, "%s: the advertisement is not a JWS", url);
			rc = -EBADMSG;
		}
	}
	free(buf.data);
	return rc;
}

json_object *tang_adv_keys(json_object *jws)
{
	const char *p = jstr(jws, "payload");
	json_object *keys = NULL, *arr;
	unsigned char *raw;
	size_t len;

	if (!p || b64url_decode(p, strlen(p), &raw, &len))
		return NULL;
	{
		json_tokener *tok = json_tokener_new();

		keys = tok ? json_tokener_parse_ex(tok, (const char *)raw, (int)len) : NULL;
		if (tok)
			json_tokener_free(tok);
	}
	free(raw);
	if (!keys || !json_object_object_get_ex(keys, "keys", &arr) ||
	    !json_object_is_type(arr, json_type_array)) {
		json_object_put(keys);
		return NULL;
	}
	return keys;
}

bool tang_jwk_has_op(json_object *jwk, const char *op)
{
	json_object *ops;

	if (!json_object_object_get_ex(jwk, "key_ops", &ops) ||
	    !json_object_is_type(ops, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(ops); i++) {
		json_object *o = json_object_array_get_idx(ops, i);

		if (json_object_is_type(o, json_type_string) && !strcmp(json_object_get_string(o), op))
			return true;
	}
	return false;
}

int tang_jwk_thumbprint(json_object *jwk, const char *alg, char *out, size_t cap)
{
	/* RFC 7638: the required members only, in lexicographic order, no blanks. */
	static const char *const ec[] = { "crv", "kty", "x", "y", NULL };
	static const char *const rsa[] = { "e", "kty", "n", NULL };
	static const char *const oct[] = { "k", "kty", NULL };
	const char *kty = jstr(jwk, "kty");
	const char *const *m = !kty ? NULL : !strcmp(kty, "EC") ? ec : !strcmp(kty, "RSA") ? rsa :
			       !strcmp(kty, "oct") ? oct : NULL;
	const EVP_MD *md = !strcmp(alg, "S1") ? EVP_sha1() : !strcmp(alg, "S256") ? EVP_sha256() :
			   !strcmp(alg, "S512") ? EVP_sha512() : NULL;
	unsigned char dig[EVP_MAX_MD_SIZE];
	unsigned int dlen = 0;
	char canon[4096];
	size_t n = 0;

	if (!m || !md)
		return -EINVAL;
	n += (size_t)snprintf(canon + n, sizeof(canon) - n, "{");
	for (size_t i = 0; m[i]; i++) {
		const char *v = jstr(jwk, m[i]);

		/* The values are base64url or names: nothing to escape, or refuse. */
		if (!v || strpbrk(v, "\"\\") || n >= sizeof(canon))
			return -EINVAL;
		n += (size_t)snprintf(canon + n, sizeof(canon) - n, "%s\"%s\":\"%s\"", i ? "," : "",
				      m[i], v);
	}
	if (n + 2 >= sizeof(canon))
		return -EINVAL;
	n += (size_t)snprintf(canon + n, sizeof(canon) - n, "}");
	if (!EVP_Digest(canon, n, dig, &dlen, md, NULL))
		return -EINVAL;
	if (cap < 4 * ((dlen + 2) / 3) + 1)
		return -EINVAL;
	b64url_encode(dig, dlen, out, cap);
	return 0;
}

json_object *tang_keys_find(json_object *keys, const char *op, const char *thp)
{
	size_t l = strlen(thp);
	/* base64url of a SHA-1, SHA-256, SHA-512 digest */
	const char *alg = l == 27 ? "S1" : l == 43 ? "S256" : l == 86 ? "S512" : NULL;
	json_object *arr;

	if (!alg || !json_object_object_get_ex(keys, "keys", &arr) ||
	    !json_object_is_type(arr, json_type_array))
		return NULL;
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *k = json_object_array_get_idx(arr, i);
		char t[TANG_THP_MAX];

		if (op && !tang_jwk_has_op(k, op))
			continue;
		if (!tang_jwk_thumbprint(k, alg, t, sizeof(t)) && !strcmp(t, thp))
			return k;
	}
	return NULL;
}

/* An EC public key from a JWK of the curve alg needs. */
static EVP_PKEY *ec_key(json_object *jwk, const char *crv, size_t coord)
{
	const char *x = jstr(jwk, "x"), *y = jstr(jwk, "y"), *kc = jstr(jwk, "crv"), *kty = jstr(jwk, "kty");
	const char *group = !strcmp(crv, "P-256") ? "prime256v1" : !strcmp(crv, "P-384") ?
			    "secp384r1" : "secp521r1";
	unsigned char *bx = NULL, *by = NULL, pub[1 + 2 * 66];
	size_t lx = 0, ly = 0;
	EVP_PKEY *pkey = NULL;
	EVP_PKEY_CTX *pctx = NULL;
	OSSL_PARAM_BLD *bld = NULL;
	OSSL_PARAM *params = NULL;

	if (!x || !y || !kc || !kty || strcmp(kty, "EC") || strcmp(kc, crv) ||
	    b64url_decode(x, strlen(x), &bx, &lx) || b64url_decode(y, strlen(y), &by, &ly) ||
	    lx != coord || ly != coord)
		goto out;
	pub[0] = 0x04;
	memcpy(pub + 1, bx, coord);
	memcpy(pub + 1 + coord, by, coord);
	bld = OSSL_PARAM_BLD_new();
	if (!bld || !OSSL_PARAM_BLD_push_utf8_string(bld, OSSL_PKEY_PARAM_GROUP_NAME, group, 0) ||
	    !OSSL_PARAM_BLD_push_octet_string(bld, OSSL_PKEY_PARAM_PUB_KEY, pub, 1 + 2 * coord))
		goto out;
	params = OSSL_PARAM_BLD_to_param(bld);
	pctx = EVP_PKEY_CTX_new_from_name(NULL, "EC", NULL);
	if (!params || !pctx || EVP_PKEY_fromdata_init(pctx) <= 0 ||
	    EVP_PKEY_fromdata(pctx, &pkey, EVP_PKEY_PUBLIC_KEY, params) <= 0)
		pkey = NULL;
out:
	EVP_PKEY_CTX_free(pctx);
	OSSL_PARAM_free(params);
	OSSL_PARAM_BLD_free(bld);
	free(bx);
	free(by);
	return pkey;
}

/* One signature: protected and signature in base64url, over payload. */
static int verify_one(const char *prot, const char *payload, const char *sig, json_object *jwk)
{
	json_object *hdr = NULL;
	unsigned char *raw = NULL, *rs = NULL, *der = NULL;
	size_t len, rslen, coord;
	const char *alg, *crv;
	const EVP_MD *md;
	EVP_PKEY *pkey = NULL;
	EVP_MD_CTX *mctx = NULL;
	ECDSA_SIG *es = NULL;
	char *tbs = NULL;
	int derlen, rc = -EBADMSG;

	if (b64url_decode(prot, strlen(prot), &raw, &len))
		return rc;
	{
		json_tokener *tok = json_tokener_new();

		hdr = tok ? json_tokener_parse_ex(tok, (const char *)raw, (int)len) : NULL;
		if (tok)
			json_tokener_free(tok);
	}
	free(raw);
	alg = hdr ? jstr(hdr, "alg") : NULL;
	if (!alg)
		goto out;
	if (!strcmp(alg, "ES256")) {
		md = EVP_sha256(), crv = "P-256", coord = 32;
	} else if (!strcmp(alg, "ES384")) {
		md = EVP_sha384(), crv = "P-384", coord = 48;
	} else if (!strcmp(alg, "ES512")) {
		md = EVP_sha512(), crv = "P-521", coord = 66;
	} else {
		goto out;
	}
	pkey = ec_key(jwk, crv, coord);
	if (!pkey || b64url_decode(sig, strlen(sig), &rs, &rslen) || rslen != 2 * coord)
		goto out;
	es = ECDSA_SIG_new();
	if (!es)
		goto out;
	{
		BIGNUM *r = BN_bin2bn(rs, (int)coord, NULL), *s = BN_bin2bn(rs + coord, (int)coord, NULL);

		if (!r || !s || !ECDSA_SIG_set0(es, r, s)) {
			BN_free(r);
			BN_free(s);
			goto out;
		}
	}
	derlen = i2d_ECDSA_SIG(es, &der);
	if (derlen <= 0)
		goto out;
	tbs = malloc(strlen(prot) + strlen(payload) + 2);
	mctx = EVP_MD_CTX_new();
	if (!tbs || !mctx)
		goto out;
	sprintf(tbs, "%s.%s", prot, payload);
	if (EVP_DigestVerifyInit(mctx, NULL, md, NULL, pkey) == 1 &&
	    EVP_DigestVerify(mctx, der, (size_t)derlen, (unsigned char *)tbs, strlen(tbs)) == 1)
		rc = 0;
out:
	EVP_MD_CTX_free(mctx);
	free(tbs);
	OPENSSL_free(der);
	ECDSA_SIG_free(es);
	free(rs);
	EVP_PKEY_free(pkey);
	json_object_put(hdr);
	return rc;
}

int tang_jws_verify(json_object *jws, json_object *jwk)
{
	const char *payload = jstr(jws, "payload"), *prot, *sig;
	json_object *sigs;

	if (!payload)
		return -EBADMSG;
	if (json_object_object_get_ex(jws, "signatures", &sigs) &&
	    json_object_is_type(sigs, json_type_array)) {
		for (size_t i = 0; i < json_object_array_length(sigs); i++) {
			json_object *s = json_object_array_get_idx(sigs, i);

			prot = jstr(s, "protected");
			sig = jstr(s, "signature");
			if (prot && sig && !verify_one(prot, payload, sig, jwk))
				return 0;
		}
		return -EBADMSG;
	}
	prot = jstr(jws, "protected");
	sig = jstr(jws, "signature");
	return prot && sig ? verify_one(prot, payload, sig, jwk) : -EBADMSG;
}
