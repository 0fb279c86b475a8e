// SPDX-License-Identifier: GPL-2.0-only
/* Numbers given on command lines and in tables, read one way everywhere. */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>

#include "opal.h"

bool opal_parse_u64(const char *s, int base, uint64_t max, uint64_t *v)
{
	unsigned long long x;
	char *end;

	/* strtoull would take leading blanks, a sign (even '-') and nothing at all. */
	if (!s || !isdigit((unsigned char)*s))
		return false;
	errno = 0;
	x = strtoull(s, &end, base);
	if (errno || *end || x > max)
		return false;
	*v = x;
	return true;
}
