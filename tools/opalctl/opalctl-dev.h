/* SPDX-License-Identifier: GPL-2.0-only */
/* opalctl's view of a drive: a protocol transport and/or the kernel's ioctls. */
#ifndef FDEKIT_OPALCTL_DEV_H
#define FDEKIT_OPALCTL_DEV_H

#include <stdbool.h>
#include <stddef.h>

#include "opal.h"

struct opalctl_dev {
	struct opal_dev *opal;	/* lib/opal over nvme, scsi or sedsim; may be NULL */
	int kernel_fd;		/* block device for IOC_OPAL_*; -1 when not used */
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
/* Level 0 Discovery through IOC_OPAL_DISCOVERY (kernels >= 6.5). */
int opalctl_dev_discovery(struct opalctl_dev *dev, struct opal_discovery *d);

/* The kernel's sed-opal. All return 0 or an opal error/status. */
int opalctl_kernel_setup(struct opalctl_dev *dev, const struct opal_key *key,
			 const struct opal_range *r);
int opalctl_kernel_lock_unlock(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			       unsigned range, enum opal_lock_state st, bool save);
int opalctl_kernel_revert(struct opalctl_dev *dev, const struct opal_key *key, bool psid);
int opalctl_kernel_erase_range(struct opalctl_dev *dev, const struct opal_key *key,
			       unsigned range);
int opalctl_kernel_mbr(struct opalctl_dev *dev, const struct opal_key *key, int enable, int done);

#endif
