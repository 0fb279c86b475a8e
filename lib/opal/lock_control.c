// SPDX-License-Identifier: GPL-2.0-only
/*
 * Lock control (opal-lock.h): the policy around locking and unlocking a
 * range, over the backend interface, and the partition re-read after an
 * unlock.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <linux/fs.h>
#include <unistd.h>

#include "opal-drive-id.h"
#include "opal-lock.h"

int opal_range_in_use(struct opal_backend *be, unsigned who, const struct opal_key *key,
		      unsigned range, const char *devpath, char *why, size_t cap)
{
	struct opal_range r;
	int rc;

	/* Nothing on the drive in use (or no way to tell): no need to ask the drive. */
	if (opal_drive_in_use(devpath, 0, 0, why, cap) != 1)
		return 0;
	if (!range || !be->ops->range_read)
		return 1;
	rc = be->ops->range_read(be, who, key, range, &r);
	if (rc == OPAL_ERR_AUTH || rc == OPAL_ST_NOT_AUTHORIZED ||
	    rc == OPAL_ST_AUTHORITY_LOCKED_OUT)
		return rc;
	if (rc)
		return 1;	/* where the range is is unknown: the whole drive's answer */
	return r.length && opal_drive_in_use(devpath, r.start, r.length, why, cap) == 1;
}

/* What a lock's read-back says. */
static enum opal_lock_check classify(const struct opal_range *r)
{
	if (r->n && !r->length)
		return OPAL_LOCK_CHECK_NO_LBAS;
	if (!r->read_lock_enabled && !r->write_lock_enabled)
		return OPAL_LOCK_CHECK_NOT_ENABLED;
	if (!r->read_lock_enabled || !r->write_lock_enabled)
		return OPAL_LOCK_CHECK_HALF;
	if (!r->read_locked || !r->write_locked)
		return OPAL_LOCK_CHECK_STILL_UNLOCKED;
	return OPAL_LOCK_CHECK_LOCKED;
}

/*
 * Unlock with the shadow MBR enabled: set Done, or the drive keeps showing
 * the shadow image over LBA 0. Through the kernel only as Admin1 (its
 * IOC_OPAL_MBR_DONE always authenticates as Admin1: a user's key there
 * would burn one of Admin1's tries); the kernel backend does that with its
 * protocol aid.
 */
static void mbr_done(struct opal_backend *be, unsigned who, const struct opal_key *key,
		     struct opal_lock_result *res)
{
	struct opal_discovery d;

	if (!be->ops->discovery || !be->ops->mbr_control || be->ops->discovery(be, &d) ||
	    !(d.locking_flags & OPAL_LF_MBR_ENABLED) || (d.locking_flags & OPAL_LF_MBR_DONE))
		return;
	res->mbr_rc = be->ops->mbr_control(be, who, key, -1, 1);
	res->mbr_done_set = !res->mbr_rc;
}

int opal_lock_control(struct opal_backend *be, const struct opal_key *key,
		      const struct opal_lock_request *rq, struct opal_lock_result *res)
{
	bool unlock = rq->state != OPAL_LOCKED, save;
	int rc, vr = OPAL_ERR_UNSUPPORTED;

	memset(res, 0, sizeof(*res));
	res->check = OPAL_LOCK_CHECK_UNREAD;
	if (!unlock && rq->devpath && !rq->force) {
		rc = opal_range_in_use(be, rq->who, key, rq->range, rq->devpath, res->in_use,
				       sizeof(res->in_use));
		if (rc == 1) {
			res->step = OPAL_LOCK_IN_USE;
			return res->rc = -EBUSY;
		}
		if (rc) {
			res->step = OPAL_LOCK_SPAN;
			return res->rc = rc;
		}
	}
	if (unlock && rq->save && !be->ops->can_save) {
		res->step = OPAL_LOCK_NO_SAVE;
		return res->rc = OPAL_ERR_UNSUPPORTED;
	}
	/* The kernel replays the state saved for a range on resume: a lock replaces a saved unlock. */
	save = unlock ? rq->save : be->ops->can_save;
	rc = be->ops->lock_unlock(be, rq->who, key, rq->range, rq->state, save,
				  unlock ? NULL : &res->range, &vr);
	if (rc) {
		res->step = OPAL_LOCK_SET;
		return res->rc = rc;
	}
	res->saved = save;
	if (unlock) {
		if (!rq->keep_mbr)
			mbr_done(be, rq->who, key, res);
		return 0;
	}
	if (vr) {
		res->check_rc = vr;
		return 0;	/* sent, not verified: the caller says so */
	}
	res->check = classify(&res->range);
	if (res->check != OPAL_LOCK_CHECK_LOCKED) {
		res->step = OPAL_LOCK_NOT_LOCKED;
		return res->rc = OPAL_ST_FAIL;
	}
	return 0;
}

int opal_lockable_ranges(struct opal_dev *dev, unsigned who, const struct opal_key *key,
			 unsigned *list, unsigned *n)
{
	struct opal_session *s;
	int rc;

	*n = 0;
	if (!dev)
		return OPAL_ERR_UNSUPPORTED;
	rc = opal_lock_session(dev, who, key, &s);
	if (rc)
		return rc;
	for (unsigned r = 0; r <= 8; r++) {
		struct opal_range x;
		int vr = opal_range_read(s, r, &x);

		if (vr == OPAL_ST_INVALID_PARAMETER && r)
			break;	/* fewer ranges */
		if (vr == OPAL_ST_NOT_AUTHORIZED)
			continue;	/* not this authority's */
		if (vr) {
			rc = vr;
			break;
		}
		if ((r == 0 || x.length) && (x.read_lock_enabled || x.write_lock_enabled))
			list[(*n)++] = r;
	}
	opal_end_session(s);
	return rc;
}

/* ------------------------------------------------------- partition tables */

/*
 * A "change" uevent for a disk and each of its partitions: udev probes
 * their contents again (file system UUIDs, LUKS headers, LVM), which a
 * range that was locked hid, when the kernel cannot re-read the partition
 * table because a partition is in use. True when the disk took it.
 */
static bool uevent_change(const char *disk)
{
	char path[600], dir[300];
	struct dirent *e;
	bool sent = false;
	DIR *d;

	snprintf(dir, sizeof(dir), "/sys/class/block/%s", disk);
	d = opendir(dir);
	if (!d)
		return false;
	while ((e = readdir(d))) {
		FILE *f;

		/* The disk itself, and its partitions: sda1, nvme0n1p1. */
		if (strcmp(e->d_name, ".") && strncmp(e->d_name, disk, strlen(disk)))
			continue;
		snprintf(path, sizeof(path), "%s/%s/uevent", dir, e->d_name);
		f = fopen(path, "w");
		if (f) {
			bool ok = fputs("change", f) >= 0;

			ok = !fclose(f) && ok;
			sent |= ok && !strcmp(e->d_name, ".");
		}
	}
	closedir(d);
	return sent;
}

/* The namespaces of the NVMe subsystem behind controller ctrl. */
static void reread_nvme_ctrl(const char *ctrl,
			     void (*report)(void *arg, const char *disk, int rc, bool uevent),
			     void *arg)
{
	char path[512], nqn[256], dnqn[256];
	DIR *d;
	struct dirent *e;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/subsysnqn", ctrl);
	f = fopen(path, "r");
	if (!f)
		return;
	if (!fgets(nqn, sizeof(nqn), f))
		nqn[0] = 0;
	fclose(f);
	d = opendir("/sys/class/block");
	if (!d || !nqn[0]) {
		if (d)
			closedir(d);
		return;
	}
	while ((e = readdir(d))) {
		if (strncmp(e->d_name, "nvme", 4))
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/partition", e->d_name);
		if (!access(path, F_OK))
			continue;
		snprintf(path, sizeof(path), "/sys/class/block/%s/device/subsysnqn", e->d_name);
		f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(dnqn, sizeof(dnqn), f) && !strcmp(dnqn, nqn)) {
			snprintf(path, sizeof(path), "/dev/%s", e->d_name);
			opal_reread_partitions(path, report, arg);
		}
		fclose(f);
	}
	closedir(d);
}

void opal_reread_partitions(const char *path,
			    void (*report)(void *arg, const char *disk, int rc, bool uevent),
			    void *arg)
{
	char base[OPAL_DRIVE_NAME_MAX];
	struct stat st;
	unsigned n;
	char tail;
	int fd;

	if (stat(path, &st))
		return;
	/*
	 * The kernel's name for sysfs, not the path's last part: a
	 * /dev/disk/by-id/ link's is not a disk's name (symlinks followed).
	 */
	if (opal_drive_kernel_name(path, base, sizeof(base))) {
		const char *slash = strrchr(path, '/');

		snprintf(base, sizeof(base), "%s", slash ? slash + 1 : path);
	}
	if (S_ISCHR(st.st_mode) && sscanf(base, "nvme%u%c", &n, &tail) == 1) {
		reread_nvme_ctrl(base, report, arg);
		return;
	}
	if (!S_ISBLK(st.st_mode))
		return;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		report(arg, path, -errno, false);
		return;
	}
	/* EINVAL: a partition, not a whole disk; nothing to re-read. */
	if (ioctl(fd, BLKRRPART) && errno != EINVAL) {
		int e = errno;

		report(arg, path, -e, e == EBUSY && uevent_change(base));
	} else {
		report(arg, path, 0, false);
	}
	close(fd);
}
