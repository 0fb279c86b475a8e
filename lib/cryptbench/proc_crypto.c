// SPDX-License-Identifier: GPL-2.0-only
/*
 * /proc/crypto: which implementations the kernel has for a cipher, and the
 * one it picks by default.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cryptbench.h"

static void copy_field(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src);
}

static void set_field(struct cb_alg *a, const char *key, const char *val)
{
	if (!strcmp(key, "name"))
		copy_field(a->name, sizeof(a->name), val);
	else if (!strcmp(key, "driver"))
		copy_field(a->driver, sizeof(a->driver), val);
	else if (!strcmp(key, "module"))
		copy_field(a->module, sizeof(a->module), val);
	else if (!strcmp(key, "type"))
		copy_field(a->type, sizeof(a->type), val);
	else if (!strcmp(key, "selftest"))
		copy_field(a->selftest, sizeof(a->selftest), val);
	else if (!strcmp(key, "priority"))
		a->priority = atoi(val);
	else if (!strcmp(key, "internal"))
		a->internal = !strcmp(val, "yes");
	else if (!strcmp(key, "async"))
		a->async = !strcmp(val, "yes");
	else if (!strcmp(key, "min keysize"))
		a->min_keysize = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "max keysize"))
		a->max_keysize = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "ivsize"))
		a->ivsize = (unsigned int)strtoul(val, NULL, 10);
	else if (!strcmp(key, "blocksize"))
		a->blocksize = (unsigned int)strtoul(val, NULL, 10);
}

static char *trim(char *s)
{
	char *end;

	while (*s == ' ' || *s == '\t')
		s++;
	end = s + strlen(s);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
		*--end = '\0';
	return s;
}

static int append(struct cb_alg_list *list, size_t *cap, const struct cb_alg *a)
{
	if (list->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct cb_alg *n = realloc(list->algs, ncap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		list->algs = n;
		*cap = ncap;
	}
	list->algs[list->n++] = *a;
	return 0;
}

int cb_proc_crypto_parse(const char *text, struct cb_alg_list *list)
{
	struct cb_alg cur;
	bool have = false;
	size_t cap = 0;
	const char *p = text;

	list->algs = NULL;
	list->n = 0;
	memset(&cur, 0, sizeof(cur));
	cur.priority = -1;
	while (p && *p) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		char line[512], *colon, *key, *val;

		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl ? nl + 1 : NULL;

		if (!*trim(line)) {
			if (have && append(list, &cap, &cur)) {
				cb_alg_list_free(list);
				return -ENOMEM;
			}
			memset(&cur, 0, sizeof(cur));
			cur.priority = -1;
			have = false;
			continue;
		}
		colon = strchr(line, ':');
		if (!colon)
			continue;
		*colon = '\0';
		key = trim(line);
		val = trim(colon + 1);
		/* A new "name" without a blank line still starts a new entry. */
		if (!strcmp(key, "name") && have && cur.name[0]) {
			if (append(list, &cap, &cur)) {
				cb_alg_list_free(list);
				return -ENOMEM;
			}
			memset(&cur, 0, sizeof(cur));
			cur.priority = -1;
		}
		set_field(&cur, key, val);
		have = true;
	}
	if (have && append(list, &cap, &cur)) {
		cb_alg_list_free(list);
		return -ENOMEM;
	}
	return 0;
}

int cb_proc_crypto_read(const char *path, struct cb_alg_list *list)
{
	FILE *f = fopen(path ? path : "/proc/crypto", "r");
	char *text = NULL;
	size_t len = 0, cap = 0;
	int rc;

	list->algs = NULL;
	list->n = 0;
	if (!f)
		return -errno;
	for (;;) {
		size_t got;

		if (cap - len < 4096) {
			char *n = realloc(text, cap + 65536);

			if (!n) {
				free(text);
				fclose(f);
				return -ENOMEM;
			}
			text = n;
			cap += 65536;
		}
		got = fread(text + len, 1, cap - len - 1, f);
		len += got;
		if (got == 0)
			break;
	}
	rc = ferror(f) ? -EIO : 0;
	fclose(f);
	if (!rc) {
		text[len] = '\0';
		rc = cb_proc_crypto_parse(text, list);
	}
	free(text);
	return rc;
}

void cb_alg_list_free(struct cb_alg_list *list)
{
	free(list->algs);
	list->algs = NULL;
	list->n = 0;
}

const struct cb_alg *cb_alg_by_driver(const struct cb_alg_list *list,
				      const char *driver)
{
	size_t i;

	for (i = 0; list && i < list->n; i++)
		if (!strcmp(list->algs[i].driver, driver))
			return &list->algs[i];
	return NULL;
}

bool cb_alg_known(const struct cb_alg_list *list, const char *name)
{
	size_t i;

	for (i = 0; list && i < list->n; i++)
		if (!strcmp(list->algs[i].driver, name) ||
		    !strcmp(list->algs[i].name, name))
			return true;
	return false;
}

static bool usable(const struct cb_alg *a, const char *name)
{
	return !strcmp(a->name, name) && !a->internal &&
	       strcmp(a->selftest, "failed") != 0 &&
	       (!a->type[0] || !strcmp(a->type, "skcipher"));
}

const struct cb_alg *cb_alg_default(const struct cb_alg_list *list,
				    const char *name)
{
	const struct cb_alg *best = NULL;
	size_t i;

	for (i = 0; list && i < list->n; i++) {
		const struct cb_alg *a = &list->algs[i];

		if (usable(a, name) && (!best || a->priority > best->priority))
			best = a;
	}
	return best;
}

size_t cb_alg_drivers(const struct cb_alg_list *list, const char *name,
		      const struct cb_alg **out, size_t max)
{
	size_t i, n = 0;

	for (i = 0; list && i < list->n; i++) {
		const struct cb_alg *a = &list->algs[i];
		size_t j, k;

		if (!usable(a, name) || n == max)
			continue;
		/* The same driver may appear twice (module reloads): once. */
		for (j = 0; j < n; j++)
			if (!strcmp(out[j]->driver, a->driver))
				break;
		if (j < n)
			continue;
		/* Insertion sort, stable: priority descending. */
		for (k = n; k > 0 && out[k - 1]->priority < a->priority; k--)
			out[k] = out[k - 1];
		out[k] = a;
		n++;
	}
	return n;
}

const struct cb_alg *cb_alg_bound(const struct cb_alg_list *list,
				  const char *alg)
{
	size_t i;

	for (i = 0; list && i < list->n; i++) {
		const struct cb_alg *a = &list->algs[i];

		if (!strcmp(a->driver, alg) &&
		    (!a->type[0] || !strcmp(a->type, "skcipher")))
			return a;
	}
	return cb_alg_default(list, alg);
}
