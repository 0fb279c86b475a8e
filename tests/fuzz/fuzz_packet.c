// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: ComPacket/Packet/SubPacket parsing, then the payload. */
#include <stdint.h>

#include "opal-wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct opal_token tok[OPAL_MAX_TOKENS];
	struct opal_tokens t = { tok, 0, OPAL_MAX_TOKENS };
	struct opal_frame f;

	if (opal_frame_parse(data, size, &f) == 0 && f.payload_len) {
		/* The payload must lie inside the input. */
		if (f.payload < data || f.payload + f.payload_len > data + size)
			__builtin_trap();
		opal_tokens_parse(f.payload, f.payload_len, &t);
	}
	return 0;
}
