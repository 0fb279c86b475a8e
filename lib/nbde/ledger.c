// SPDX-License-Identifier: GPL-2.0-only
/* The try ledger (nbde-ledger.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nbde-ledger.h"
#include "nbde-state.h"

/* DRIVE.AUTH with every byte outside [A-Za-z0-9._-] as '_' (a serial is the drive's text). */
static void ledger_key(const char *drive, unsigned int user, char *out, size_t cap)
{
	size_t i = 0;

	for (const char *p = drive; *p && i + 1 < cap; p++) {
		char ch = *p;

		out[i++] = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') ||
			   (ch >= '0' && ch <= '9') || ch == '-' || ch == '_' ? ch : '_';
	}
	out[i] = 0;
	if (!i)
		snprintf(out, cap, "unknown");
	snprintf(out + strlen(out), cap - strlen(out), ".%s%u", user ? "user" : "admin",
		 user ? user : 1);
}

static unsigned int *mem_slot(struct nbde_ledger *l, const char *key)
{
	for (size_t i = 0; i < l->nmem; i++)
		if (!strcmp(l->mem[i].key, key))
			return &l->mem[i].count;
	if (l->nmem == NBDE_LEDGER_SLOTS)
		return NULL;
	snprintf(l->mem[l->nmem].key, sizeof(l->mem[l->nmem].key), "%s", key);
	l->mem[l->nmem].count = 0;
	return &l->mem[l->nmem++].count;
}

static unsigned int file_get(const char *dir, const char *key)
{
	char path[PATH_MAX], buf[32];
	unsigned long v;
	char *end;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, key);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	v = strtoul(buf, &end, 10);
	return end == buf || v > 1000 ? 0 : (unsigned int)v;
}

static int file_put(const char *dir, const char *key, unsigned int v)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], buf[16];
	int fd, len, rc = nbde_mkdir_p(dir, 0755, 0700);	/* the state directory may not exist yet */

	if (rc)
		return rc;
	snprintf(path, sizeof(path), "%s/%s", dir, key);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -errno;
	len = snprintf(buf, sizeof(buf), "%u\n", v);
	if (write(fd, buf, (size_t)len) != len)
		rc = -EIO;
	if (fsync(fd) && !rc)
		rc = -errno;
	if (close(fd) && !rc)
		rc = -errno;
	if (!rc && rename(tmp, path))
		rc = -errno;
	if (rc)
		unlink(tmp);
	return rc;
}

unsigned int nbde_ledger_get(struct nbde_ledger *l, const char *drive, unsigned int user)
{
	char key[96];
	unsigned int *m, f = 0;

	ledger_key(drive, user, key, sizeof(key));
	m = mem_slot(l, key);
	if (l->dir)
		f = file_get(l->dir, key);
	/* The larger: a file another run wrote, or what this one counted when it could not write. */
	return m && *m > f ? *m : f;
}

static int ledger_set(struct nbde_ledger *l, const char *drive, unsigned int user, bool add)
{
	char key[96];
	unsigned int v = add ? nbde_ledger_get(l, drive, user) + 1 : 0;
	unsigned int *m;

	ledger_key(drive, user, key, sizeof(key));
	m = mem_slot(l, key);
	if (m)
		*m = v;
	return l->dir ? file_put(l->dir, key, v) : 0;
}

int nbde_ledger_add(struct nbde_ledger *l, const char *drive, unsigned int user)
{
	return ledger_set(l, drive, user, true);
}

int nbde_ledger_reset(struct nbde_ledger *l, const char *drive, unsigned int user)
{
	return ledger_set(l, drive, user, false);
}
