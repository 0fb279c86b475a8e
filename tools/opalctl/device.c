// SPDX-License-Identifier: GPL-2.0-only
/*
 * opalctl's drives: lib/opal's opal_drive_open, with the in-process
 * simulator as one more transport in test builds (meson's opalctl-sim).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "opalctl-dev.h"
#if OPALCTL_SIM
#include "sedsim.h"

static bool is_sedsim_dir(const char *path)
{
	char state[4096];

	snprintf(state, sizeof(state), "%s/state", path);
	return access(state, R_OK) == 0;
}

static int open_sedsim(const char *path, struct opal_dev **dev, char *why, size_t whylen)
{
	struct sedsim *sim;
	int rc = sedsim_open(path, false, &sim);

	if (rc) {
		snprintf(why, whylen, "not a sedsim drive directory: %s", strerror(-rc));
		return OPAL_ERR_TRANSPORT;
	}
	*dev = sedsim_opal_dev(sim);
	return *dev ? 0 : OPAL_ERR_NOMEM;
}

static const struct opal_open_extra sedsim_transport = {
	.name = "sedsim", .claims = is_sedsim_dir, .open = open_sedsim,
};
#endif

int opalctl_dev_open(const char *path, const char *transport, unsigned int timeout_ms,
		     bool kernel_op, struct opal_drive **out, char *why, size_t whylen)
{
#if OPALCTL_SIM
	return opal_drive_open(path, transport, timeout_ms, kernel_op, &sedsim_transport, out, why,
			       whylen);
#else
	*out = NULL;
	if (!strcmp(transport, "sedsim")) {
		snprintf(why, whylen, "this opalctl is built without the sedsim transport (test builds have it: opalctl-sim)");
		return OPAL_ERR_INVAL;
	}
	return opal_drive_open(path, transport, timeout_ms, kernel_op, NULL, out, why, whylen);
#endif
}

const struct opal_open_extra *opalctl_dev_extra(void)
{
#if OPALCTL_SIM
	return &sedsim_transport;
#else
	return NULL;
#endif
}

void opalctl_dev_close(struct opal_drive *dev)
{
	opal_drive_close(dev);
}
