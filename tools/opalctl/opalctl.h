/* SPDX-License-Identifier: GPL-2.0-only */
/* opalctl internals: the command runner is a function so tests can drive it. */
#ifndef FDEKIT_OPALCTL_H
#define FDEKIT_OPALCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "nbde-secret.h"

/* Exit codes (documented in opalctl(8)). */
enum opalctl_exit {
	EXIT_OK = 0,
	EXIT_USAGE = 1,		/* bad command line */
	EXIT_DEVICE = 2,	/* cannot open or talk to the device */
	EXIT_UNSUPPORTED = 3,	/* not Opal, or the transport lacks the operation */
	EXIT_AUTH = 4,		/* authentication failed */
	EXIT_LOCKED_OUT = 5,	/* authority locked out (TryLimit reached) */
	EXIT_DRIVE = 6,		/* the drive refused the operation */
	EXIT_KEYFILE = 7,	/* key file missing, empty or too long */
	EXIT_TIMEOUT = 8,	/* the drive did not answer in time */
	EXIT_PROTOCOL = 9,	/* malformed response from the drive */
	EXIT_REFUSED = 10,	/* destructive operation without --yes-destroy-data */
	EXIT_INCOMPLETE = 11,	/* unlock-all: some required entries were not unlocked */
	EXIT_TABLE = 12,	/* the unlock table is missing, unreadable or has bad entries */
	EXIT_CLEVIS = 13,	/* clevis could not seal the key (its server, TPM or config) */
	EXIT_DENIED = 14,	/* the key was right, the authority may not do it (no try used) */
	EXIT_STALE = 15,	/* slots --report: a sealed key needs regen or rebind, or its initramfs copy is old */
	EXIT_UNSEAL = 16,	/* regen: the sealed key no longer opens (its keys deleted): rebind */
};

/* Run one opalctl command line; returns the exit code. */
int opalctl_run(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
