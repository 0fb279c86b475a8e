/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Key slots sealed with Clevis. A key slot is a User authority of the
 * Locking SP with a random PIN, allowed to lock and unlock a range; the
 * PIN is sealed by `clevis encrypt` (tang, tpm2, sss) into a JWE that is
 * safe to keep in the clear. Admin1's key is never replaced: it stays the
 * recovery key. The PIN travels only through pipes, to clevis encrypt on
 * its stdin, and lives in locked memory.
 */
#ifndef FDEKIT_NBDE_SLOTS_H
#define FDEKIT_NBDE_SLOTS_H

#include <limits.h>
#include <stddef.h>

#include "nbde.h"
#include "opal.h"
#include "opal-drive-id.h"

/* Where bind writes sealed keys unless told otherwise. */
#define NBDE_KEYS_DIR "/etc/fdekit/keys"
/* A slot's PIN: random bytes. */
#define NBDE_SLOT_PIN_BYTES 32

/*
 * What names the drive: its identity as udev reads it (opal-drive-id.h),
 * for file names (file_id: unique per drive, so that two drives of one
 * vendor never share a JWE) and for the table line bind says (selector:
 * serial= for NVMe, wwn= for SCSI and ATA; empty: name the drive by path).
 * A device sysfs does not know (a sedsim directory) falls back to the Opal
 * transport's serial number (opal may be NULL), or the device's name.
 */
struct nbde_drive_name {
	char file_id[OPAL_DRIVE_FILE_ID_MAX];
	char selector[OPAL_DRIVE_SELECTOR_MAX];
	char serial[OPAL_DRIVE_SERIAL_MAX];
	char wwn[OPAL_DRIVE_WWN_MAX];
};

void nbde_drive_name(const char *path, struct opal_dev *opal, struct nbde_drive_name *dn);
/* The JWE bind writes for key slot user of the drive: NBDE_KEYS_DIR/FILE_ID-userN.jwe. */
void nbde_default_jwe(const char *path, struct opal_dev *opal, unsigned int user, char *out,
		      size_t cap);

/*
 * Whether clevis encrypt can seal with pin's configuration (JSON) asking
 * nothing: a JSON object whose every tang configuration (sss ones' too)
 * has a URL curl may be given and the server's trust ("thp", or a trusted
 * advertisement, "adv"); without them clevis asks on the terminal whether
 * to trust the keys, and a bind in a background process group waits for
 * ever (SIGTTIN). 0, or -EINVAL with why.
 */
int nbde_bind_config_check(const char *pin, const char *config, char *why, size_t whylen);

enum nbde_bind_status {
	NBDE_BIND_OK,
	NBDE_BIND_BAD_CONFIG,	/* nbde_bind_config_check refused it */
	NBDE_BIND_AUTH,		/* Admin1's session failed (opal_rc) */
	NBDE_BIND_READ_FAILED,	/* reading the users and ACEs failed (opal_rc) */
	NBDE_BIND_NO_RANGE,	/* the range is not configured */
	NBDE_BIND_NO_SLOT,	/* every user is enabled or named in an ACE */
	NBDE_BIND_NO_MEMORY,	/* no locked memory or random bytes for the PIN */
	NBDE_BIND_EXISTS,	/* the JWE exists: nothing done */
	NBDE_BIND_FILE,		/* a file or directory could not be made or renamed */
	NBDE_BIND_CLEVIS,	/* clevis encrypt failed */
	NBDE_BIND_SETUP_FAILED,	/* setting up the user failed (opal_rc) */
};

struct nbde_bind_rq {
	struct opal_dev *opal;		/* the drive, open */
	const char *path;		/* its device, for names and messages */
	const struct opal_key *admin;	/* Admin1's key */
	unsigned int range;
	const char *pin;		/* tang, tpm2 or sss */
	const char *config;		/* its configuration, as clevis encrypt takes it */
	const char *jwe;		/* where the sealed PIN goes; NULL: nbde_default_jwe */
	struct nbde_log log;
};

struct nbde_bind_result {
	enum nbde_bind_status status;
	int opal_rc;			/* AUTH, READ_FAILED, SETUP_FAILED: lib/opal's status */
	char error[NBDE_WHY_MAX];	/* the other failures, said as a person reads it */
	unsigned int user;		/* the key slot: UserN */
	unsigned int range;
	char jwe[PATH_MAX];
	char opaltab[PATH_MAX * 2 + 128];	/* the unlock table line for it (NAME to fill) */
};

/*
 * A new key slot: a free user picked, a random PIN sealed into JWE.new
 * (a stale one from an interrupted bind removed), the user enabled with
 * the PIN and granted the range, JWE.new renamed to the JWE. The drive is
 * touched only after the PIN is sealed. 0, or -1 with res->status saying
 * what failed.
 */
int nbde_bind(const struct nbde_bind_rq *rq, struct nbde_bind_result *res);

#endif
