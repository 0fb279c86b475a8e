/* SPDX-License-Identifier: GPL-2.0-only */
/* opalctl's view of a drive: lib/opal's (opal-open.h), the simulator added in test builds. */
#ifndef FDEKIT_OPALCTL_DEV_H
#define FDEKIT_OPALCTL_DEV_H

#include <stdbool.h>
#include <stddef.h>

#include "opal-open.h"

/* transport: auto, ioctl, nvme, scsi or sedsim (test builds): see opal_drive_open. */
int opalctl_dev_open(const char *path, const char *transport, unsigned int timeout_ms,
		     bool kernel_op, struct opal_drive **out, char *why, size_t whylen);
void opalctl_dev_close(struct opal_drive *dev);
/* The transport of test builds (sedsim), for lib/nbde; NULL in what is installed. */
const struct opal_open_extra *opalctl_dev_extra(void);

#endif
