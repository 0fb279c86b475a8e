/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Secrets (keys, PINs, passphrases) in locked memory, and the clock every
 * deadline of the boot agent is counted in.
 */
#ifndef FDEKIT_NBDE_SECRET_H
#define FDEKIT_NBDE_SECRET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

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
uint64_t nbde_now_ms(void);
/*
 * Wait until fd is readable (0), or wake_fd (>= 0) is (1), or the clock
 * reaches end (-ETIMEDOUT); -errno when poll fails.
 */
int wait_readable(int fd, int wake_fd, uint64_t end);

#endif
