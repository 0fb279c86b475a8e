/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The real effects of nbde.h's callbacks: the monotonic clock, drives
 * through lib/opal, Clevis as a child, key files checked as secrets are,
 * and a person asked through an askpass program or the terminal.
 */
#ifndef FDEKIT_NBDE_SYSTEM_H
#define FDEKIT_NBDE_SYSTEM_H

#include <stdbool.h>
#include <stdio.h>

#include "nbde.h"
#include "opal-open.h"

/* How long an askpass has to go after SIGTERM before SIGKILL. */
#define NBDE_ASKPASS_GRACE_MS 2000

struct nbde_system {
	FILE *err;			/* the log: "opalctl: NAME: ..." lines */
	const char *prog;		/* the log's prefix ("opalctl") */
	FILE *in;			/* the terminal, when there is no /dev/tty */
	const char *askpass;		/* a program asked with the prompt in argv[1], or NULL */
	const char *transport;		/* the entries' default ("auto") */
	unsigned int timeout_ms;	/* each drive exchange */
	const struct opal_open_extra *extra;	/* a transport of the program's own (tests) */
	bool insecure_keyfile;		/* key files others can read are used anyway */
	bool verbose;
};

/* ops for sys (which must outlive them). */
void nbde_system_ops(struct nbde_system *sys, struct nbde_ops *ops);

/*
 * Read a key file as a secret: opened without following a symlink,
 * checked on the open file (a regular file of root's or of this user's,
 * no group or other bits unless insecure), at most a PIN long. 0, or
 * -errno with why.
 */
int nbde_key_file_read(const char *path, bool insecure, struct secret *out, char *why,
		       size_t whylen);

/*
 * Will the kernel unlock the drive again on resume from S3 with the key
 * it was given? Only for libata disks and PCIe NVMe.
 */
bool nbde_resume_unlocks(const char *path);

#endif
