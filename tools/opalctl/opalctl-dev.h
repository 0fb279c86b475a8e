/* SPDX-License-Identifier: GPL-2.0-only */
/* opalctl's view of a drive: the backend chosen for it (opal-backend.h). */
#ifndef FDEKIT_OPALCTL_DEV_H
#define FDEKIT_OPALCTL_DEV_H

#include <stdbool.h>
#include <stddef.h>

#include "opal.h"
#include "opal-backend.h"

struct opalctl_dev {
	/*
	 * lib/opal over nvme, scsi or sedsim: the protocol backend's transport,
	 * or the kernel backend's aid; may be NULL with the kernel backend.
	 * Commands only our protocol code can run use it directly.
	 */
	struct opal_dev *opal;
	struct opal_backend be;	/* be.fd (the kernel's block device) is owned */
	const char *transport;	/* name shown to the user */
};

/*
 * transport: auto, ioctl, nvme, scsi or sedsim. kernel_op: the command is one
 * the kernel's sed-opal offers, so auto uses the ioctls for it. Returns 0 or
 * an opal error with a reason in why.
 */
int opalctl_dev_open(const char *path, const char *transport, unsigned int timeout_ms,
		     bool kernel_op, struct opalctl_dev **out, char *why, size_t whylen);
void opalctl_dev_close(struct opalctl_dev *dev);

#endif
