/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the running system needs to know of each unlocked entry, in
 * DIR/NAME (key=value lines): the sleep guard holds off suspend while a
 * range the kernel will not unlock on resume is unlocked, and regen
 * --remove-old learns which JWE opened it.
 */
#ifndef FDEKIT_NBDE_STATE_H
#define FDEKIT_NBDE_STATE_H

#include <stddef.h>
#include <sys/types.h>

#include "nbde.h"

/*
 * Write r's record (only for an entry that is unlocked) by rename. 0, or
 * -errno with why.
 */
/* path and its parents (made with mode parents; path itself leaf): 0 or -errno. */
int nbde_mkdir_p(const char *path, mode_t parents, mode_t leaf);

int nbde_state_write(const char *dir, const struct nbde_entry_result *r, char *why, size_t whylen);

#endif
