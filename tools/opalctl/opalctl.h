/* SPDX-License-Identifier: GPL-2.0-only */
/* opalctl internals: the command runner is a function so tests can drive it. */
#ifndef FDEKIT_OPALCTL_H
#define FDEKIT_OPALCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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

struct secret {
	uint8_t *data;
	size_t len;
	size_t cap;
	bool locked;
};

struct secret *secret_new(void);
void secret_free(struct secret *s);
/* path "-" reads in. Returns 0 or -errno (-ENODATA when empty). */
int secret_read(struct secret *s, const char *path, FILE *in);
/*
 * One line from fd (a terminal: echo off while typing), after writing
 * "prompt: " to it when prompt is given; the newline is not kept. Bounded
 * by timeout_ms. 0, -ENODATA for an empty line, -ETIMEDOUT or -errno.
 */
int secret_read_line(struct secret *s, int fd, const char *prompt, unsigned int timeout_ms);
/*
 * The same, given up as soon as wake_fd (>= 0) is readable: then 1, with
 * nothing kept of what was typed (the key came from elsewhere).
 */
int secret_read_line_or(struct secret *s, int fd, const char *prompt, unsigned int timeout_ms,
			int wake_fd);

/* CLOCK_MONOTONIC in milliseconds: what every deadline is counted in. */
uint64_t opalctl_now_ms(void);
/*
 * Wait until fd is readable (0), or wake_fd (>= 0) is (1), or the clock
 * reaches end (-ETIMEDOUT); -errno when poll fails.
 */
int wait_readable(int fd, int wake_fd, uint64_t end);

/* Run one opalctl command line; returns the exit code. */
int opalctl_run(int argc, char **argv, FILE *in, FILE *out, FILE *err);

#endif
