// SPDX-License-Identifier: GPL-2.0-only
/* The state records of unlocked entries (nbde-state.h). */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbde-clevis.h"
#include "nbde-state.h"
#include "nbde-system.h"

int nbde_mkdir_p(const char *path, mode_t parents, mode_t leaf)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *p = buf + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(buf, parents) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(buf, leaf) && errno != EEXIST ? -errno : 0;
}

int nbde_state_write(const char *dir, const struct nbde_entry_result *r, char *why, size_t whylen)
{
	const struct opaltab_entry *e = r->entry;
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	bool already = r->status == NBDE_ALREADY_UNLOCKED;
	FILE *f;

	if ((r->status != NBDE_UNLOCKED && !already) || strchr(e->name, '/') || e->name[0] == '.')
		return 0;
	if (nbde_mkdir_p(dir, 0755, 0755)) {
		snprintf(why, whylen, "cannot create %s: %s", dir, strerror(errno));
		return -errno;
	}
	snprintf(path, sizeof(path), "%s/%s", dir, e->name);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f) {
		snprintf(why, whylen, "cannot write %s: %s", tmp, strerror(errno));
		return -errno;
	}
	fprintf(f, "device=%s\nranges=", r->device);
	for (unsigned int i = 0; i < e->nranges; i++)
		fprintf(f, "%s%u", i ? "," : "", e->ranges[i]);
	fprintf(f, "\nalready_unlocked=%s\nsaved_for_resume=%s\nresume_unlocks=%s\n",
		already ? "yes" : "no", r->saved ? "yes" : "no",
		r->saved && nbde_resume_unlocks(r->device) ? "yes" : "no");
	/*
	 * The key that opened it; for a JWE, its content's hash: once a boot
	 * has unlocked with the JWE regen made, the copy regen kept of the
	 * one before can go (regen --remove-old --state-dir).
	 */
	fprintf(f, "key=%s\n", already ? "none" : r->key == NBDE_KEY_REUSED ? "passphrase" :
		nbde_key_name(r->key));
	if (!already && r->key == NBDE_KEY_CLEVIS) {
		char hex[2 * 32 + 1];

		if (!file_sha256_hex(e->key_path, hex))
			fprintf(f, "jwe=%s\njwe_sha256=%s\n", e->key_path, hex);
	}
	if (fclose(f) || rename(tmp, path)) {
		int err = errno;

		snprintf(why, whylen, "cannot write %s: %s", path, strerror(err));
		unlink(tmp);
		return -err;
	}
	return 0;
}
