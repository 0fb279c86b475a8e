// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: the token stream decoder and the method-response parser. */
#include <stdint.h>
#include <string.h>

#include "opal-wire.h"
#include "opal-internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct opal_token tok[OPAL_MAX_TOKENS];
	static struct opal_resp r;
	struct opal_tokens t = { tok, 0, OPAL_MAX_TOKENS };
	uint64_t v;
	const uint8_t *p;
	size_t n;

	if (opal_tokens_parse(data, size, &t) == 0) {
		for (size_t i = 0; i < t.n; i++)
			if (opal_tok_skip(&t, i) > t.n)
				__builtin_trap();
	}
	if (size <= sizeof(r.raw)) {
		memcpy(r.raw, data, size);
		r.raw_len = size;
		if (opal_resp_parse(&r) == 0) {
			opal_resp_column_uint(&r, 3, &v);
			opal_resp_column_bytes(&r, 3, &p, &n);
			/* Every result the typed walk finds lies inside the token list. */
			for (size_t k = 0, i; (i = opal_resp_result(&r, k)); k++) {
				if (i <= r.results || i >= r.t.n)
					__builtin_trap();
				opal_resp_uint(&r, k, &v);
				opal_resp_bytes(&r, k, &p, &n);
			}
			if (r.results >= r.t.n)
				__builtin_trap();
		}
	}
	return 0;
}
