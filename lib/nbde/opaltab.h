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
#define OPALTAB_PROMPT_TRIES_DEFAULT 3

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
	unsigned int prompt_tries;	/* passphrases the drive may refuse */
	bool readonly;
	bool fallback_prompt;		/* when the key source fails: ask (default) */
	bool noauto;
	bool keep_mbr;
	/*
	 * keyfile: the key may be copied into the initramfs, in plain form
	 * on the unencrypted /boot: whoever holds the disk reads it. Image
	 * builds refuse keyfile entries without it.
	 */
	bool cleartext_key_on_boot;
	char transport[16];		/* "" = auto */
	/*
	 * A line the parser refused: error says why ("line N: ..."); the
	 * fields after the one refused keep their defaults (noauto is still
	 * looked for). Such an entry fails alone, the others stay usable.
	 */
	bool bad;
	char error[300];
	char text[1024];		/* the line, comment and blanks stripped */
};

/*
 * Parse a table, entry by entry. Returns 0 and a malloc'ed array (*out,
 * *n) of every entry, those refused included (bad set, error naming the
 * line: a field or option the parser does not know is an error, not
 * ignored, and a name used twice refuses the later entry); or -1 with a
 * one-line reason in err when the table cannot be read at all. Blank lines
 * and # comments are skipped.
 */
int opaltab_parse(FILE *f, struct opaltab_entry **out, size_t *n, char *err, size_t errlen);
/* How many entries of v were refused. */
size_t opaltab_bad_count(const struct opaltab_entry *v, size_t n);

#endif
