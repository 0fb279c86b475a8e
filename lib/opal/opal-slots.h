/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Key slots: as LUKS has key slots, an Opal drive has authorities. A slot
 * is a user (User1-9) with a PIN of its own, allowed to lock and unlock a
 * range; Admin1's PIN is never a slot (it stays the recovery key). This is
 * the drive's side of a slot: who may lock what (the picture every slot
 * decision starts from), a free slot, making one and removing one. Sealing
 * the PIN (Clevis) and its file are the tool's. Protocol code only: the
 * kernel has no ioctl that reads an ACE.
 */
#ifndef FDEKIT_OPAL_SLOTS_H
#define FDEKIT_OPAL_SLOTS_H

#include <stdbool.h>
#include <stdint.h>

#include "opal.h"

#define OPAL_SLOT_RANGES 8	/* ranges 1-8 beside the global range */
#define OPAL_SLOT_USERS 9	/* User1-9 */

struct opal_range_acl {
	bool configured;	/* the global range, or a range with a length */
	uint64_t start, length;
	struct opal_range_access ace;
};

/* Who may lock and unlock what: the ranges' ACEs and the enabled users. */
struct opal_access {
	unsigned int nranges;	/* 1 + the ranges the drive has */
	struct opal_range_acl range[1 + OPAL_SLOT_RANGES];
	unsigned int nusers;	/* the users the drive has */
	bool user_enabled[1 + OPAL_SLOT_USERS];
};

/* The whole picture, read in an Admin1 session. 0 or a status. */
int opal_read_access(struct opal_session *s, struct opal_access *acc);

/* Is User `user` free: neither enabled nor named in any range's ACE? */
bool opal_slot_is_free(const struct opal_access *acc, unsigned int user);
/* The first free user, or 0 when every one is taken. */
unsigned int opal_slot_find_free(const struct opal_access *acc);

/*
 * Make slot `user` in an Admin1 session: its PIN, enabled, granted lock and
 * unlock of `range` (Admin1 keeps its control). On failure nothing
 * half-made stays: the grant and the enable are undone. 0 or a status.
 */
int opal_slot_bind(struct opal_session *s, unsigned int user, unsigned int range,
		   const struct opal_key *pin);

/*
 * Remove slot `user` in an Admin1 session: revoked on every configured
 * range of acc, its PIN replaced with scrap (random, kept by nobody: a
 * sealed copy of the old PIN never works again), disabled. 0 or a status.
 */
int opal_slot_unbind(struct opal_session *s, const struct opal_access *acc, unsigned int user,
		     const struct opal_key *scrap);

#endif
