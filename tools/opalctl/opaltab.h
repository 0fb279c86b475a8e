/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The unlock table, /etc/fdekit/opaltab (opaltab(5)): which drives and
 * ranges to unlock at boot, with which key source. One entry per line:
 *   NAME DEVICE RANGES KEY [OPTIONS]
 */
#ifndef FDEKIT_OPALTAB_H
#define FDEKIT_OPALTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define OPALTAB_DEFAULT "/etc/fdekit/opaltab"
#define OPALTAB_MAX_RANGES 9
#define OPALTAB_TIMEOUT_DEFAULT 30
#define OPALTAB_RETRY_DEFAULT 3

enum opaltab_dev { OPALTAB_DEV_PATH, OPALTAB_DEV_SERIAL, OPALTAB_DEV_WWN };
enum opaltab_key { OPALTAB_KEY_CLEVIS, OPALTAB_KEY_FILE, OPALTAB_KEY_PROMPT };

struct opaltab_entry {
	unsigned int line;
	char name[64];
	enum opaltab_dev dev_kind;
	char dev[256];			/* path, serial or WWN */
	unsigned int ranges[OPALTAB_MAX_RANGES];
	unsigned int nranges;
	enum opaltab_key key_kind;
	char key_path[256];		/* clevis: the JWE; keyfile: the key */
	unsigned int user;		/* 0: Admin1 */
	bool save;			/* IOC_OPAL_SAVE for S3 resume (default on) */
	unsigned int timeout_s;		/* device wait, and each key attempt */
	unsigned int retry;		/* retries of obtaining the key */
	bool readonly;
	bool fallback_prompt;		/* when the key source fails: ask (default) */
	bool noauto;
	bool keep_mbr;
	char transport[16];		/* "" = auto */
};

/*
 * Parse a table. Returns 0 and a malloc'ed array (*out, *n), or -1 with a
 * one-line reason naming the line in err. Blank lines and # comments are
 * skipped; a field or option it does not know is an error, not ignored.
 */
int opaltab_parse(FILE *f, struct opaltab_entry **out, size_t *n, char *err, size_t errlen);

#endif
