// SPDX-License-Identifier: GPL-2.0-only
/* libFuzzer target: the Session Manager Properties reply parser. */
#include <stdint.h>
#include <string.h>

#include "opal-wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What a caller relies on: bounded counts, terminated printable names. */
static void check_list(const struct opal_prop_list *l)
{
	if (l->n > OPAL_PROPS_MAX)
		__builtin_trap();
	for (size_t i = 0; i < l->n; i++) {
		size_t len = strnlen(l->pair[i].name, sizeof(l->pair[i].name));

		if (len == 0 || len > OPAL_PROP_NAME_MAX)
			__builtin_trap();
		for (size_t k = 0; k < len; k++)
			if (l->pair[i].name[k] < 0x21 || l->pair[i].name[k] > 0x7e)
				__builtin_trap();
	}
	for (unsigned p = 0; p < OPAL_PROP_KNOWN; p++) {
		uint64_t v;
		bool found = false;

		if (!opal_prop_get(l, p, &v))
			continue;
		for (size_t i = 0; i < l->n && !found; i++)
			found = !strcmp(l->pair[i].name, opal_prop_name(p)) && l->pair[i].value == v;
		if (!found)
			__builtin_trap();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct opal_props p;

	if (opal_properties_parse(data, size, &p) == 0) {
		check_list(&p.tper);
		check_list(&p.host);
		if (!p.have_host && p.host.n)
			__builtin_trap();
	}
	return 0;
}
