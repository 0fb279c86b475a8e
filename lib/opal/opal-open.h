/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Opening a drive: the transport chosen for a device path and the backend
 * on it (opal-backend.h). auto takes the kernel's sed-opal ioctls for the
 * operations the kernel offers when it has a context for the disk, and our
 * protocol code (NVMe Security Send/Receive, or SCSI SECURITY PROTOCOL
 * IN/OUT through SG_IO) for everything else; the kernel backend gets the
 * protocol transport to the same disk as its aid. A path that is not a
 * disk is refused, saying what it is. A program may add a transport of its
 * own (a test build's in-process simulator).
 */
#ifndef FDEKIT_OPAL_OPEN_H
#define FDEKIT_OPAL_OPEN_H

#include <stdbool.h>
#include <stddef.h>

#include "opal.h"
#include "opal-backend.h"

struct opal_drive {
	/*
	 * lib/opal's protocol transport: the protocol backend's, or the kernel
	 * backend's aid (NULL when the disk cannot be reached that way).
	 * Operations only our protocol code can run use it directly.
	 */
	struct opal_dev *opal;
	struct opal_backend be;	/* be.fd (the kernel's block device) is owned */
	const char *transport;	/* "ioctl", "nvme", "scsi", or the extra's name */
};

/* A transport a program adds, by name (and, for auto, by the paths it claims). */
struct opal_open_extra {
	const char *name;
	bool (*claims)(const char *path);
	int (*open)(const char *path, struct opal_dev **dev, char *why, size_t whylen);
};

/*
 * transport: auto, ioctl, nvme, scsi, or extra->name. kernel_op: the
 * operation is one the kernel's sed-opal offers, so auto uses the ioctls
 * for it. Every wait on the drive is bounded by timeout_ms. Returns 0, or
 * an opal error with the reason in why (OPAL_ERR_INVAL: the path or the
 * transport is wrong for this; OPAL_ERR_TRANSPORT: it cannot be opened).
 */
int opal_drive_open(const char *path, const char *transport, unsigned int timeout_ms,
		    bool kernel_op, const struct opal_open_extra *extra, struct opal_drive **out,
		    char *why, size_t whylen);
void opal_drive_close(struct opal_drive *d);

#endif
