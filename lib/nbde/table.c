// SPDX-License-Identifier: GPL-2.0-only
/* The unlock table parser (opaltab(5)). */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opaltab.h"

static bool parse_uint(const char *s, unsigned int max, unsigned int *v)
{
	uint64_t x;

	if (!opal_parse_u64(s, 10, max, &x))
		return false;
	*v = (unsigned int)x;
	return true;
}

static bool copy_field(char *dst, size_t cap, const char *src)
{
	size_t n = strlen(src);

	if (!n || n >= cap)
		return false;
	memcpy(dst, src, n + 1);
	return true;
}

static int bad(char *err, size_t errlen, unsigned int line, const char *fmt, const char *what)
{
	char msg[256];

	snprintf(msg, sizeof(msg), fmt, what);
	snprintf(err, errlen, "line %u: %s", line, msg);
	return -1;
}

static int parse_ranges(struct opaltab_entry *e, char *s, char *err, size_t errlen)
{
	char *save = NULL;

	for (char *r = strtok_r(s, ",", &save); r; r = strtok_r(NULL, ",", &save)) {
		unsigned int v;

		if (!parse_uint(r, 8, &v))
			return bad(err, errlen, e->line, "range '%s': use 0 (global) to 8, comma-separated", r);
		for (unsigned int i = 0; i < e->nranges; i++)
			if (e->ranges[i] == v)
				return bad(err, errlen, e->line, "range %s given twice", r);
		if (e->nranges >= OPALTAB_MAX_RANGES)
			return bad(err, errlen, e->line, "%s", "too many ranges");
		e->ranges[e->nranges++] = v;
	}
	return e->nranges ? 0 : bad(err, errlen, e->line, "%s", "no range given");
}

static int parse_option(struct opaltab_entry *e, char *o, char *err, size_t errlen)
{
	char *eq = strchr(o, '=');
	const char *v = eq ? eq + 1 : NULL;

	if (eq)
		*eq = 0;
	if (!strcmp(o, "save") && !v)
		e->save = true;
	else if (!strcmp(o, "nosave") && !v)
		e->save = false;
	else if (!strcmp(o, "readonly") && !v)
		e->readonly = true;
	else if (!strcmp(o, "noauto") && !v)
		e->noauto = true;
	else if (!strcmp(o, "keep-mbr") && !v)
		e->keep_mbr = true;
	else if (!strcmp(o, "cleartext-key-on-boot") && !v)
		e->cleartext_key_on_boot = true;
	else if (!strcmp(o, "timeout") && v) {
		if (!parse_uint(v, 3600, &e->timeout_s) || !e->timeout_s)
			return bad(err, errlen, e->line, "timeout=%s: use 1 to 3600 seconds", v);
	} else if (!strcmp(o, "retry") && v) {
		if (!parse_uint(v, 100, &e->retry))
			return bad(err, errlen, e->line, "retry=%s: use 0 to 100", v);
	} else if (!strcmp(o, "prompt-tries") && v) {
		if (!parse_uint(v, 10, &e->prompt_tries) || !e->prompt_tries)
			return bad(err, errlen, e->line, "prompt-tries=%s: use 1 to 10 (fewer than the authority's TryLimit)", v);
	} else if (!strcmp(o, "user") && v) {
		if (!parse_uint(v, 9, &e->user) || !e->user)
			return bad(err, errlen, e->line, "user=%s: use 1 to 9 (Admin1: leave it out)", v);
	} else if (!strcmp(o, "fallback") && v) {
		if (strcmp(v, "prompt") && strcmp(v, "fail"))
			return bad(err, errlen, e->line, "fallback=%s: use prompt or fail", v);
		e->fallback_prompt = !strcmp(v, "prompt");
	} else if (!strcmp(o, "transport") && v) {
		if (strcmp(v, "auto") && strcmp(v, "ioctl") && strcmp(v, "nvme") && strcmp(v, "scsi") &&
		    strcmp(v, "sedsim"))
			return bad(err, errlen, e->line, "transport=%s: use auto, ioctl, nvme, scsi or sedsim", v);
		snprintf(e->transport, sizeof(e->transport), "%s", v);
	} else {
		if (eq)
			*eq = '=';
		return bad(err, errlen, e->line, "unknown option '%s'", o);
	}
	return 0;
}

static int parse_line(struct opaltab_entry *e, char *p, char *err, size_t errlen)
{
	char *field[6], *save = NULL;
	unsigned int nf = 0;

	for (char *t = strtok_r(p, " \t", &save); t; t = strtok_r(NULL, " \t", &save)) {
		if (nf == 5)
			return bad(err, errlen, e->line, "%s", "too many fields: options are comma-separated, without spaces");
		field[nf++] = t;
	}
	if (nf < 4)
		return bad(err, errlen, e->line, "%s", "needs NAME DEVICE RANGES KEY [OPTIONS]");
	if (!copy_field(e->name, sizeof(e->name), field[0]))
		return bad(err, errlen, e->line, "%s", "name too long");
	if (!strncmp(field[1], "serial=", 7) || !strncmp(field[1], "wwn=", 4)) {
		bool serial = field[1][0] == 's';

		e->dev_kind = serial ? OPALTAB_DEV_SERIAL : OPALTAB_DEV_WWN;
		if (!copy_field(e->dev, sizeof(e->dev), field[1] + (serial ? 7 : 4)))
			return bad(err, errlen, e->line, "device '%s': empty or too long", field[1]);
	} else if (field[1][0] == '/') {
		e->dev_kind = OPALTAB_DEV_PATH;
		if (!copy_field(e->dev, sizeof(e->dev), field[1]))
			return bad(err, errlen, e->line, "%s", "device path too long");
	} else {
		return bad(err, errlen, e->line, "device '%s': use a path (/dev/disk/by-id/...), serial=S or wwn=W", field[1]);
	}
	if (parse_ranges(e, field[2], err, errlen))
		return -1;
	if (!strcmp(field[3], "prompt")) {
		e->key_kind = OPALTAB_KEY_PROMPT;
	} else if (!strncmp(field[3], "clevis:", 7) || !strncmp(field[3], "keyfile:", 8)) {
		bool clevis = field[3][0] == 'c';
		const char *path = field[3] + (clevis ? 7 : 8);

		e->key_kind = clevis ? OPALTAB_KEY_CLEVIS : OPALTAB_KEY_FILE;
		if (path[0] != '/' || !copy_field(e->key_path, sizeof(e->key_path), path))
			return bad(err, errlen, e->line, "key '%s': needs an absolute path", field[3]);
	} else {
		return bad(err, errlen, e->line, "key '%s': use clevis:PATH, keyfile:PATH or prompt", field[3]);
	}
	if (nf == 5) {
		char *osave = NULL;

		for (char *o = strtok_r(field[4], ",", &osave); o; o = strtok_r(NULL, ",", &osave))
			if (parse_option(e, o, err, errlen))
				return -1;
	}
	return 0;
}

/*
 * A refused line still says whether it is noauto: the boot skips such an
 * entry like any noauto one, and only reports it.
 */
static bool has_noauto(const char *line)
{
	char buf[1024], *save = NULL, *opts = NULL;
	unsigned int nf = 0;

	snprintf(buf, sizeof(buf), "%s", line);
	for (char *t = strtok_r(buf, " \t", &save); t; t = strtok_r(NULL, " \t", &save))
		if (++nf == 5)
			opts = t;
	if (!opts)
		return false;
	for (char *o = strtok_r(opts, ",", &save); o; o = strtok_r(NULL, ",", &save))
		if (!strcmp(o, "noauto"))
			return true;
	return false;
}

/* The first field, or "line N" when there is none to show. */
static void entry_name(struct opaltab_entry *e, const char *line)
{
	size_t n = strcspn(line, " \t");

	if (n && n < sizeof(e->name)) {
		memcpy(e->name, line, n);
		e->name[n] = 0;
	} else {
		snprintf(e->name, sizeof(e->name), "line %u", e->line);
	}
}

/*
 * One line of f, its newline dropped, into buf (at most cap - 1 bytes
 * kept: *overlong when it had more). A NUL byte is not the line's end, as
 * it would be to fgets and the string functions after it (the rest of
 * the line read as the next one): it is left out and said in *nul.
 * False at the end of the file.
 */
static bool read_line(FILE *f, char *buf, size_t cap, bool *nul, bool *overlong)
{
	size_t len = 0;
	bool any = false;
	int ch;

	*nul = *overlong = false;
	while ((ch = getc(f)) != EOF) {
		any = true;
		if (ch == '\n')
			break;
		if (!ch)
			*nul = true;
		else if (len + 1 < cap)
			buf[len++] = (char)ch;
		else
			*overlong = true;
	}
	buf[len] = 0;
	return any;
}

int opaltab_parse(FILE *f, struct opaltab_entry **out, size_t *n, char *err, size_t errlen)
{
	struct opaltab_entry *v = NULL;
	size_t cap = 0;
	char buf[1024];
	unsigned int line = 0;
	bool overlong, nul;

	*out = NULL;
	*n = 0;
	while (read_line(f, buf, sizeof(buf), &nul, &overlong)) {
		char *p = buf, *hash, work[1024];
		struct opaltab_entry *e;
		size_t len;

		line++;
		hash = strchr(p, '#');
		if (hash)
			*hash = 0;
		p[strcspn(p, "\r\n")] = 0;
		while (*p == ' ' || *p == '\t')
			p++;
		len = strlen(p);
		while (len && (p[len - 1] == ' ' || p[len - 1] == '\t'))
			p[--len] = 0;
		if (!*p && !overlong && !nul)
			continue;
		if (*n == cap) {
			struct opaltab_entry *nv = realloc(v, (cap ? cap * 2 : 8) * sizeof(*v));

			if (!nv) {
				free(v);
				*n = 0;
				return bad(err, errlen, line, "%s", "out of memory");
			}
			v = nv;
			cap = cap ? cap * 2 : 8;
		}
		e = &v[(*n)++];
		memset(e, 0, sizeof(*e));
		e->line = line;
		e->save = true;
		e->fallback_prompt = true;
		e->timeout_s = OPALTAB_TIMEOUT_DEFAULT;
		e->retry = OPALTAB_RETRY_DEFAULT;
		e->prompt_tries = OPALTAB_PROMPT_TRIES_DEFAULT;
		snprintf(e->text, sizeof(e->text), "%s", p);
		if (overlong || nul) {
			/* Refused alone: the next line is read as its own. */
			entry_name(e, p);
			e->noauto = has_noauto(p);
			e->bad = true;
			bad(e->error, sizeof(e->error), line, "%s",
			    nul ? "contains a NUL byte" : "line longer than 1023 characters");
			continue;
		}
		snprintf(work, sizeof(work), "%s", p);
		if (parse_line(e, work, e->error, sizeof(e->error))) {
			entry_name(e, p);
			e->noauto = has_noauto(p);
			e->bad = true;
			continue;
		}
		for (size_t i = 0; i + 1 < *n; i++) {
			if (!strcmp(v[i].name, e->name)) {
				snprintf(e->error, sizeof(e->error), "line %u: name '%s' used twice (first on line %u)",
					 line, e->name, v[i].line);
				e->bad = true;
				break;
			}
		}
	}
	if (ferror(f)) {
		free(v);
		*n = 0;
		return bad(err, errlen, line, "%s", "read error");
	}
	*out = v;
	return 0;
}

size_t opaltab_bad_count(const struct opaltab_entry *v, size_t n)
{
	size_t bad_entries = 0;

	for (size_t i = 0; i < n; i++)
		bad_entries += v[i].bad;
	return bad_entries;
}
