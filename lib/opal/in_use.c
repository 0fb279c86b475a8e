// SPDX-License-Identifier: GPL-2.0-only
/*
 * Whether anything uses the part of a drive a command is about to lock or
 * make unreadable: a mounted file system, a holder (dm, md, bcache) or an
 * exclusive open (swap, another program), found as lsblk and cryptsetup
 * find them: sysfs (holders/, partition start and size), the mount table,
 * and O_EXCL on the device node.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "opal-drive-id.h"

#define MAX_DISKS 16

/* snprintf that says whether everything fitted (a path cut short is not used). */
static bool pathf(char *out, size_t cap, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(out, cap, fmt, ap);
	va_end(ap);
	return n >= 0 && (size_t)n < cap;
}

static const char *sysfs_of(const struct opal_drive_roots *r)
{
	return r && r->sysfs ? r->sysfs : "/sys";
}

static const char *dev_of(const struct opal_drive_roots *r)
{
	return r && r->dev ? r->dev : "/dev";
}

static const char *mountinfo_of(const struct opal_drive_roots *r)
{
	return r && r->mountinfo ? r->mountinfo : "/proc/self/mountinfo";
}

static bool read_u64(const char *path, uint64_t *v)
{
	char buf[32];
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(buf, sizeof(buf), f) && sscanf(buf, "%" SCNu64, v) == 1;
	fclose(f);
	return ok;
}

static bool read_line(const char *path, char *out, size_t cap)
{
	FILE *f = fopen(path, "re");
	bool ok;

	if (!f)
		return false;
	ok = fgets(out, (int)cap, f) != NULL;
	fclose(f);
	out[strcspn(out, "\n")] = 0;
	return ok;
}

/* The first entry of dir/holders, the device-mapper or md device built on it. */
static bool holder(const char *dir, char *out, size_t cap)
{
	char path[PATH_MAX];
	struct dirent *e;
	DIR *d;
	bool found = false;

	pathf(path, sizeof(path), "%s/holders", dir);
	d = opendir(path);
	if (!d)
		return false;
	while (!found && (e = readdir(d)))
		if (e->d_name[0] != '.') {
			snprintf(out, cap, "%s", e->d_name);
			found = true;
		}
	closedir(d);
	return found;
}

/* Where the device numbered dev ("8:1") is mounted, from the mount table. */
static bool mounted(const struct opal_drive_roots *roots, const char *dev, char *out, size_t cap)
{
	FILE *f = fopen(mountinfo_of(roots), "re");
	char line[4096];
	bool found = false;

	if (!f)
		return false;
	/* "ID PARENT MAJ:MIN ROOT MOUNTPOINT ..." (proc(5)) */
	while (!found && fgets(line, sizeof(line), f)) {
		char mm[32], mp[PATH_MAX];

		if (sscanf(line, "%*s %*s %31s %*s %4095s", mm, mp) == 2 && !strcmp(mm, dev)) {
			snprintf(out, cap, "%s", mp);
			found = true;
		}
	}
	fclose(f);
	return found;
}

/*
 * What uses the block device name (a disk or a partition) whose sysfs
 * directory is dir: 1 and why, or 0. check_excl: also try to open its
 * node exclusively (not for a disk with partitions: a claimed partition
 * makes the whole disk's exclusive open fail too, used range or not).
 */
static int device_used(const struct opal_drive_roots *roots, const char *dir, const char *name,
		       bool check_excl, char *why, size_t cap)
{
	char path[PATH_MAX], what[PATH_MAX], dev[32];
	int fd;

	if (holder(dir, what, sizeof(what))) {
		snprintf(why, cap, "%s is held by %s", name, what);
		return 1;
	}
	pathf(path, sizeof(path), "%s/dev", dir);
	if (read_line(path, dev, sizeof(dev)) && mounted(roots, dev, what, sizeof(what))) {
		snprintf(why, cap, "%s is mounted on %s", name, what);
		return 1;
	}
	if (!check_excl)
		return 0;
	pathf(path, sizeof(path), "%s/%s", dev_of(roots), name);
	fd = open(path, O_RDONLY | O_EXCL | O_NONBLOCK | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	if (errno == EBUSY) {
		snprintf(why, cap, "%s is open exclusively (swap, a file system or another program)",
			 name);
		return 1;
	}
	return 0;
}

static int disk_used(const struct opal_drive_roots *roots, const char *disk, uint64_t first,
		     uint64_t count, char *why, size_t cap)
{
	char dir[PATH_MAX], path[PATH_MAX];
	uint64_t lbs = 512, s0 = 0, s1 = UINT64_MAX;
	bool parts = false;
	struct dirent *e;
	DIR *d;
	int rc;

	pathf(dir, sizeof(dir), "%s/class/block/%s", sysfs_of(roots), disk);
	if (access(dir, F_OK))
		return -ENOENT;
	pathf(path, sizeof(path), "%s/queue/logical_block_size", dir);
	if (!read_u64(path, &lbs) || lbs < 512)
		lbs = 512;
	if (count) {
		/* The span in the 512-byte sectors sysfs counts partitions in. */
		s0 = first * (lbs / 512);
		s1 = (first + count) * (lbs / 512);
	}
	d = opendir(dir);
	if (!d)
		return -errno;
	rc = 0;
	while (!rc && (e = readdir(d))) {
		char pdir[PATH_MAX];
		uint64_t start, size;

		if (e->d_name[0] == '.')
			continue;
		pathf(pdir, sizeof(pdir), "%s/%s", dir, e->d_name);
		pathf(path, sizeof(path), "%s/partition", pdir);
		if (access(path, F_OK))
			continue;
		parts = true;
		pathf(path, sizeof(path), "%s/start", pdir);
		if (!read_u64(path, &start))
			continue;
		pathf(path, sizeof(path), "%s/size", pdir);
		if (!read_u64(path, &size))
			continue;
		if (start + size <= s0 || start >= s1)
			continue;	/* outside the span */
		rc = device_used(roots, pdir, e->d_name, true, why, cap);
	}
	closedir(d);
	if (!rc)
		rc = device_used(roots, dir, disk, !parts, why, cap);
	return rc;
}

/*
 * The disks behind name: itself (a block device), an NVMe controller's
 * namespaces (each hidden multipath path nvmeXcYnZ as its head nvmeXnZ),
 * a generic namespace's block device (ngXnY: nvmeXnY), an sg device's disk.
 */
static int disks_of(const struct opal_drive_roots *roots, const char *name,
		    char disks[][OPAL_DRIVE_NAME_MAX], size_t *n)
{
	char dir[PATH_MAX];
	struct dirent *e;
	unsigned a, b, c;
	DIR *d;

	*n = 0;
	pathf(dir, sizeof(dir), "%s/class/block/%s", sysfs_of(roots), name);
	if (!access(dir, F_OK)) {
		pathf(disks[(*n)++], OPAL_DRIVE_NAME_MAX, "%s", name);
		return 0;
	}
	if (sscanf(name, "ng%un%u", &a, &b) == 2) {
		pathf(disks[(*n)++], OPAL_DRIVE_NAME_MAX, "nvme%un%u", a, b);
		return 0;
	}
	pathf(dir, sizeof(dir), "%s/class/nvme/%s", sysfs_of(roots), name);
	d = opendir(dir);
	if (!d) {
		pathf(dir, sizeof(dir), "%s/class/scsi_generic/%s/device/block", sysfs_of(roots),
			 name);
		d = opendir(dir);
	}
	if (!d)
		return -ENOENT;
	while ((e = readdir(d)) && *n < MAX_DISKS) {
		char head[OPAL_DRIVE_NAME_MAX];

		if (sscanf(e->d_name, "nvme%uc%un%u", &a, &b, &c) == 3)
			pathf(head, sizeof(head), "nvme%un%u", a, c);
		else if (!strncmp(e->d_name, "nvme", 4) && strchr(e->d_name + 4, 'n'))
			pathf(head, sizeof(head), "%s", e->d_name);
		else if (!strncmp(e->d_name, "sd", 2))
			pathf(head, sizeof(head), "%s", e->d_name);
		else
			continue;
		pathf(disks[(*n)++], OPAL_DRIVE_NAME_MAX, "%s", head);
	}
	closedir(d);
	return 0;
}

int opal_drive_in_use_name(const struct opal_drive_roots *roots, const char *name, uint64_t first,
			   uint64_t count, char *why, size_t cap)
{
	char disks[MAX_DISKS][OPAL_DRIVE_NAME_MAX];
	size_t n;
	int rc = disks_of(roots, name, disks, &n);

	if (rc)
		return rc;
	for (size_t i = 0; i < n; i++) {
		rc = disk_used(roots, disks[i], first, count, why, cap);
		if (rc == 1)
			return 1;
	}
	return 0;
}

int opal_drive_in_use(const char *devpath, uint64_t first, uint64_t count, char *why, size_t cap)
{
	char name[OPAL_DRIVE_NAME_MAX];
	int rc = opal_drive_kernel_name(devpath, name, sizeof(name));

	return rc ? rc : opal_drive_in_use_name(NULL, name, first, count, why, cap);
}
