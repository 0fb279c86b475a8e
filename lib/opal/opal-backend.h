/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * One interface to the operations a tool asks of an Opal drive, with two
 * implementations:
 *
 *   kernel    the kernel's sed-opal ioctls on a block device. The kernel runs
 *             the protocol; it alone can keep a key to unlock the drive again
 *             on resume from S3 (IOC_OPAL_SAVE).
 *   protocol  lib/opal's own protocol code over a transport (NVMe, SCSI, the
 *             simulator).
 *
 * A tool writes its policy (what setup does, verify after lock, save on
 * lock) once, on top of this. An operation a backend cannot do is NULL in
 * its ops and is never done another way. The kernel backend uses lib/opal's
 * protocol code on the same disk ("aid") only for what no ioctl offers:
 * Level 0 Discovery before Linux 6.5, reading a range before 6.6, the
 * LockOnReset column (no ioctl reads it), and MBR Done as a user (the
 * kernel's IOC_OPAL_MBR_DONE always signs in as Admin1).
 *
 * Every operation returns 0, a TCG method status (1..0x3f) or an
 * OPAL_ERR_* code; who is 0 for Admin1, n for UserN.
 *
 * Not here, because the kernel has no ioctl for them (a tool runs them on
 * the protocol transport only, never another way): the MSID, changing the
 * SID or Admin1 PIN, disabling a user, the ACE tables (grant, revoke,
 * access, key slots), reading every range and MBRControl in one session,
 * the tries left, and writing the MBR table.
 */
#ifndef FDEKIT_OPAL_BACKEND_H
#define FDEKIT_OPAL_BACKEND_H

#include "opal.h"

struct opal_backend;

struct opal_backend_ops {
	const char *name;	/* "kernel" or "protocol" */
	const char *via;	/* for messages: " through the kernel's sed-opal", or "" */
	bool can_save;		/* lock_unlock's save: keep the state for S3 resume */

	int (*discovery)(struct opal_backend *b, struct opal_discovery *d);
	/* SID's PIN from the MSID to sid. */
	int (*take_ownership)(struct opal_backend *b, const struct opal_key *sid);
	/* Activate the Locking SP as SID; n > 0: Single User Mode for those ranges. */
	int (*activate)(struct opal_backend *b, const struct opal_key *sid,
			const unsigned *sum_ranges, size_t n);
	/*
	 * Configure r as Admin1 (start, length, lock enables; LockOnReset only
	 * where the backend can write it: the kernel never does). back, when
	 * not NULL, gets what the drive holds afterwards (*back_rc: 0 when read).
	 */
	int (*range_setup)(struct opal_backend *b, const struct opal_key *admin,
			   const struct opal_range *r, struct opal_range *back, int *back_rc);
	int (*range_read)(struct opal_backend *b, unsigned who, const struct opal_key *key,
			  unsigned range, struct opal_range *r);
	/* Lock enables off and the range unlocked; its LBAs and key kept. */
	int (*range_disable)(struct opal_backend *b, const struct opal_key *admin,
			     const struct opal_range *r);
	/*
	 * Single User Mode: the range's owner User(r->n + 1) changes its PIN
	 * from old to pin, then configures r with it.
	 */
	int (*sum_owner_setup)(struct opal_backend *b, const struct opal_key *old,
			       const struct opal_key *pin, const struct opal_range *r);
	/*
	 * Set the lock state; save (only where can_save) also keeps it for S3
	 * resume. back, when not NULL, gets the range read back as who after
	 * the change (*back_rc: 0 when read, else why not).
	 */
	int (*lock_unlock)(struct opal_backend *b, unsigned who, const struct opal_key *key,
			   unsigned range, enum opal_lock_state st, bool save,
			   struct opal_range *back, int *back_rc);
	/* MBRControl: enable and done 0 or 1 to set, -1 to leave as they are. */
	int (*mbr_control)(struct opal_backend *b, unsigned who, const struct opal_key *key,
			   int enable, int done);
	int (*erase_range)(struct opal_backend *b, const struct opal_key *admin, unsigned range);
	/* Revert the TPer as SID, or with the PSID. */
	int (*revert_tper)(struct opal_backend *b, const struct opal_key *key, bool psid);
	/* RevertSP of the Locking SP as Admin1; keep_global: KeepGlobalRangeKey. */
	int (*revert_lsp)(struct opal_backend *b, const struct opal_key *admin, bool keep_global);
	int (*user_enable)(struct opal_backend *b, const struct opal_key *admin, unsigned user);
	int (*user_set_pin)(struct opal_backend *b, const struct opal_key *admin, unsigned user,
			    const struct opal_key *pin);
};

struct opal_backend {
	const struct opal_backend_ops *ops;
	/* protocol: its transport. kernel: the aid, or NULL. Not owned. */
	struct opal_dev *opal;
	int fd;			/* kernel: the block device (not owned); else -1 */
};

void opal_backend_protocol(struct opal_backend *b, struct opal_dev *dev);
/* aid: lib/opal's transport to the same disk, or NULL. */
void opal_backend_kernel(struct opal_backend *b, int fd, struct opal_dev *aid);
/*
 * Does the kernel have a sed-opal context for the disk behind fd? 0, or
 * OPAL_ERR_UNSUPPORTED (no context, or no sed-opal in the kernel at all), or
 * OPAL_ERR_TRANSPORT (errno in *err_no).
 */
int opal_backend_kernel_probe(int fd, int *err_no);

#endif
