// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: Level 0 Discovery parsing. */
#include <stdint.h>

#include "opal-wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct opal_discovery d;

	if (opal_discovery_parse(data, size, &d) == 0)
		(void)opal_discovery_ssc(&d);
	return 0;
}
