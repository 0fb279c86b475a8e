/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The try ledger: how many keys each drive's authority refused in this
 * boot, whoever or whatever offered them, over every entry and every run
 * of the agent (dracut runs it again from its online and timeout hooks).
 * One file per drive and authority in a directory on /run (DIR/DRIVE.AUTH,
 * the count in decimal), written by rename so a crash leaves the old count
 * or the new one. Without a directory the count lives in the process only.
 *
 * A successful authentication resets the drive's own count (Opal's C_PIN
 * Tries), and so it resets the ledger's. The ledger does not survive a
 * warm reboot while the drive's count does: the agent may then ask again
 * within its budget; a power cycle clears both.
 */
#ifndef FDEKIT_NBDE_LEDGER_H
#define FDEKIT_NBDE_LEDGER_H

#include <stddef.h>

#define NBDE_LEDGER_SLOTS 32

struct nbde_ledger {
	const char *dir;	/* NULL: in memory only */
	struct {
		char key[96];
		unsigned int count;
	} mem[NBDE_LEDGER_SLOTS];
	size_t nmem;
};

/* drive: its serial (or, unknown, its device path); user: 0 Admin1. */
unsigned int nbde_ledger_get(struct nbde_ledger *l, const char *drive, unsigned int user);
/* One more refusal; 0 or -errno (the count in memory is kept either way). */
int nbde_ledger_add(struct nbde_ledger *l, const char *drive, unsigned int user);
/* The authority signed in: its count is back to 0. */
int nbde_ledger_reset(struct nbde_ledger *l, const char *drive, unsigned int user);

#endif
