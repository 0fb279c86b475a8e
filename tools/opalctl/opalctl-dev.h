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
int opalctl_kernel_take_ownership(struct opalctl_dev *dev, const struct opal_key *key);
/* n > 0: Single User Mode for those ranges. */
int opalctl_kernel_activate_lsp(struct opalctl_dev *dev, const struct opal_key *key,
				const unsigned *sum_ranges, size_t n);
/* IOC_OPAL_LR_SETUP: start, length, RLE, WLE (never LockOnReset); sum: as its owner. */
int opalctl_kernel_lr_setup(struct opalctl_dev *dev, const struct opal_key *key,
			    const struct opal_range *r, bool sum);
/* IOC_OPAL_SET_PW in Single User Mode: the range's owner changes its own PIN. */
int opalctl_kernel_set_sum_owner_pin(struct opalctl_dev *dev, unsigned range,
				     const struct opal_key *old, const struct opal_key *pin);
int opalctl_kernel_lock_unlock(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			       unsigned range, enum opal_lock_state st, bool save);
int opalctl_kernel_revert(struct opalctl_dev *dev, const struct opal_key *key, bool psid);
/* IOC_OPAL_REVERT_LSP as Admin1 (6.6+), OPAL_PRESERVE when keep_global. */
int opalctl_kernel_revert_lsp(struct opalctl_dev *dev, const struct opal_key *key, bool keep_global);
int opalctl_kernel_erase_range(struct opalctl_dev *dev, const struct opal_key *key,
			       unsigned range);
int opalctl_kernel_mbr(struct opalctl_dev *dev, const struct opal_key *key, int enable, int done);
/* IOC_OPAL_ACTIVATE_USR and IOC_OPAL_SET_PW, as Admin1. */
int opalctl_kernel_activate_user(struct opalctl_dev *dev, const struct opal_key *admin,
				 unsigned user);
int opalctl_kernel_set_user_pin(struct opalctl_dev *dev, const struct opal_key *admin,
				unsigned user, const struct opal_key *pin);
/* IOC_OPAL_SAVE of a lock state: what the kernel replays on S3 resume. */
int opalctl_kernel_save(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			unsigned range, enum opal_lock_state st);
/*
 * IOC_OPAL_GET_LR_STATUS as who (kernels >= 6.6): the range's locking
 * columns; OPAL_ERR_UNSUPPORTED where the kernel lacks it.
 */
int opalctl_kernel_lr_status(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			     unsigned range, struct opal_range *r);

#endif
