// SPDX-License-Identifier: GPL-2.0-only
/* Opening a drive (opal-open.h): the transport and the backend for a path. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "opal-open.h"

/*
 * Whether path is an NVMe device (namespace, multipath head or controller),
 * asked of sysfs: a stable name such as /dev/disk/by-id/wwn-... says nothing.
 * The name decides only when sysfs cannot be read.
 */
static bool is_nvme(const char *path)
{
	char sys[64], real[PATH_MAX];
	struct stat st;

	if (stat(path, &st) || (!S_ISBLK(st.st_mode) && !S_ISCHR(st.st_mode)))
		return strstr(path, "nvme") != NULL;
	snprintf(sys, sizeof(sys), "/sys/dev/%s/%u:%u", S_ISBLK(st.st_mode) ? "block" : "char",
		 major(st.st_rdev), minor(st.st_rdev));
	if (!realpath(sys, real))
		return strstr(path, "nvme") != NULL;
	return strstr(real, "/nvme") != NULL;
}

/*
 * What an Opal command can be sent to: a block device (a disk: NVMe, SCSI,
 * ATA), an NVMe controller or generic namespace, a SCSI generic device.
 * Anything else is refused here, saying what it is, rather than sent
 * "through scsi" to fail with an ioctl error.
 */
static int drive_node(const char *path, char *why, size_t whylen)
{
	char sys[64], real[PATH_MAX];
	struct stat st;

	if (stat(path, &st)) {
		snprintf(why, whylen, "%s", strerror(errno));
		return OPAL_ERR_TRANSPORT;
	}
	if (S_ISBLK(st.st_mode))
		return 0;
	if (S_ISCHR(st.st_mode)) {
		snprintf(sys, sizeof(sys), "/sys/dev/char/%u:%u", major(st.st_rdev),
			 minor(st.st_rdev));
		if (realpath(sys, real) && (strstr(real, "/nvme") || strstr(real, "/scsi_generic/")))
			return 0;
		snprintf(why, whylen, "a character device that is neither an NVMe controller nor a SCSI generic device (%u:%u): give the disk, e.g. /dev/nvme0n1 or /dev/sda",
			 major(st.st_rdev), minor(st.st_rdev));
		return OPAL_ERR_INVAL;
	}
	snprintf(why, whylen, "%s, not a disk: give a whole-disk block device (/dev/nvme0n1, /dev/sda) or an NVMe controller (/dev/nvme0)",
		 S_ISDIR(st.st_mode) ? "a directory" : S_ISREG(st.st_mode) ? "a regular file" :
		 "not a device");
	return OPAL_ERR_INVAL;
}

/* NVMe for NVMe devices, SG_IO for anything else. */
static int open_raw(const char *path, bool nvme, struct opal_drive *dev, char *why,
		    size_t whylen)
{
	int err_no = 0, rc;

	rc = nvme ? opal_open_nvme(path, &dev->opal, &err_no) :
		    opal_open_sg(path, &dev->opal, &err_no);
	if (rc)
		snprintf(why, whylen, "%s", err_no ? strerror(err_no) : opal_strerror(rc));
	else
		dev->transport = nvme ? "nvme" : "scsi";
	return rc;
}

int opal_drive_open(const char *path, const char *transport, unsigned int timeout_ms,
		    bool kernel_op, const struct opal_open_extra *extra, struct opal_drive **out,
		    char *why, size_t whylen)
{
	struct opal_drive *dev = calloc(1, sizeof(*dev));
	bool nvme = is_nvme(path);
	struct stat st;
	int rc = 0;

	*out = NULL;
	snprintf(why, whylen, "unknown error");
	if (!dev)
		return OPAL_ERR_NOMEM;
	dev->be.fd = -1;
	if (extra && (!strcmp(transport, extra->name) ||
		      (!strcmp(transport, "auto") && extra->claims(path)))) {
		rc = extra->open(path, &dev->opal, why, whylen);
		if (!rc)
			dev->transport = extra->name;
	} else if (strcmp(transport, "nvme") && strcmp(transport, "scsi") &&
		   strcmp(transport, "ioctl") && strcmp(transport, "auto")) {
		snprintf(why, whylen, "unknown transport %s: use auto, ioctl, nvme or scsi", transport);
		rc = OPAL_ERR_INVAL;
	} else if ((rc = drive_node(path, why, whylen))) {
		/* why says what it is */
	} else if (!strcmp(transport, "nvme") || !strcmp(transport, "scsi")) {
		rc = open_raw(path, !strcmp(transport, "nvme"), dev, why, whylen);
	} else if (!strcmp(transport, "ioctl") || !strcmp(transport, "auto")) {
		bool ioctl_only = !strcmp(transport, "ioctl");

		if (stat(path, &st)) {
			snprintf(why, whylen, "%s", strerror(errno));
			rc = OPAL_ERR_TRANSPORT;
		} else if (ioctl_only && !S_ISBLK(st.st_mode)) {
			snprintf(why, whylen, "the sed-opal ioctls need a block device");
			rc = OPAL_ERR_INVAL;
		} else if (S_ISBLK(st.st_mode) && (kernel_op || ioctl_only)) {
			int fd = open(path, O_RDWR | O_CLOEXEC), probe, err_no = 0;

			if (fd < 0) {
				snprintf(why, whylen, "%s", strerror(errno));
				rc = OPAL_ERR_TRANSPORT;
			} else {
				probe = opal_backend_kernel_probe(fd, &err_no);
				/* The aid: our protocol code for what no ioctl offers. */
				open_raw(path, nvme, dev, why, whylen);
				/*
				 * auto: without a sed-opal context for the disk in the
				 * kernel (ENOTSUPP), or without sed-opal at all (ENOTTY:
				 * CONFIG_BLK_SED_OPAL off), speak the protocol ourselves.
				 */
				if (!ioctl_only && dev->opal && probe == OPAL_ERR_UNSUPPORTED) {
					close(fd);
				} else {
					opal_backend_kernel(&dev->be, fd, dev->opal);
					dev->transport = "ioctl";
				}
			}
		} else {
			rc = open_raw(path, nvme, dev, why, whylen);
		}
	}
	if (rc) {
		opal_drive_close(dev);
		return rc;
	}
	if (!dev->be.ops)
		opal_backend_protocol(&dev->be, dev->opal);
	if (dev->opal) {
		opal_dev_set_timeout(dev->opal, timeout_ms);
		/* A session a crashed host left open answers SP_BUSY: reset it once. */
		opal_dev_set_reset_on_busy(dev->opal, true);
	}
	*out = dev;
	return 0;
}

void opal_drive_close(struct opal_drive *dev)
{
	if (!dev)
		return;
	opal_dev_free(dev->opal);
	if (dev->be.fd >= 0)
		close(dev->be.fd);
	free(dev);
}
