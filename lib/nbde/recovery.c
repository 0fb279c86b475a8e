// SPDX-License-Identifier: GPL-2.0-only
/*
 * The recovery key read as Crockford's base32 is meant to be read:
 * keygen --passphrase writes 25 symbols of "0123456789abcdefghjkmnpqrstvwxyz"
 * in five groups of five joined by '-'. A person may type it in capitals,
 * without the dashes, with blanks for dashes, or with the letters that look
 * like digits (i and l for 1, o for 0): all of those are the same key.
 */
#include <stdbool.h>
#include <string.h>

#include "nbde.h"

#define RECOVERY_SYMBOLS 25
#define RECOVERY_GROUP 5

/* The symbol ch stands for, lower case, or 0 when it is none. */
static char crockford(char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		ch = (char)(ch - 'A' + 'a');
	if (ch == 'i' || ch == 'l')
		return '1';
	if (ch == 'o')
		return '0';
	if ((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'z' && ch != 'u'))
		return ch;
	return 0;
}

static bool separator(char ch)
{
	return ch == '-' || ch == ' ';
}

int nbde_recovery_canonical(const struct secret *in, struct secret *out)
{
	char sym[RECOVERY_SYMBOLS];
	size_t n = 0, i = 0, len = in->len;
	bool grouped = false;

	/* Blanks around it are not part of it. */
	while (len && (in->data[len - 1] == ' ' || in->data[len - 1] == '\r'))
		len--;
	while (i < len && in->data[i] == ' ')
		i++;
	for (; i < len; i++) {
		char ch = (char)in->data[i];

		if (separator(ch)) {
			/* Between groups only, one separator (or a dash with blanks). */
			if (!n || n % RECOVERY_GROUP || n == RECOVERY_SYMBOLS)
				goto not_it;
			while (i + 1 < len && separator((char)in->data[i + 1]))
				i++;
			grouped = true;
			continue;
		}
		if (n == RECOVERY_SYMBOLS || !(sym[n] = crockford(ch)))
			goto not_it;
		if (grouped && n % RECOVERY_GROUP == 0 && !separator((char)in->data[i - 1]))
			goto not_it;	/* groups before, and now none: not the shape */
		n++;
	}
	if (n != RECOVERY_SYMBOLS || out->cap < RECOVERY_SYMBOLS + RECOVERY_SYMBOLS / RECOVERY_GROUP)
		goto not_it;
	out->len = 0;
	for (n = 0; n < RECOVERY_SYMBOLS; n++) {
		if (n && n % RECOVERY_GROUP == 0)
			out->data[out->len++] = '-';
		out->data[out->len++] = (uint8_t)sym[n];
	}
	explicit_bzero(sym, sizeof(sym));
	return 1;
not_it:
	explicit_bzero(sym, sizeof(sym));
	return 0;
}
