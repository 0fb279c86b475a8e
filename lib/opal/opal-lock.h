/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Lock control: what locking or unlocking a range means beyond the one
 * Set call, written once for opalctl's lock and unlock and for the boot
 * agent's unlock-all, over the backend interface (kernel or protocol):
 *
 *   before a lock   refuse when a partition in the range's span is mounted,
 *                   held or open (opal_drive_in_use): its file system would
 *                   fail under it;
 *   the change      with the state saved for S3 resume where the kernel is
 *                   the backend (a lock replaces a saved unlock, or resume
 *                   would undo it; an unlock saves only when asked);
 *   after a lock    read the range back: a range with no LBAs, or whose
 *                   locking is not enabled, ignores the lock;
 *   after an unlock set MBR Done when the shadow MBR is shown, and have the
 *                   kernel re-read the partition tables the lock hid.
 *
 * Nothing here prints: the result says what happened at each step, and the
 * caller renders it.
 */
#ifndef FDEKIT_OPAL_LOCK_H
#define FDEKIT_OPAL_LOCK_H

#include <stdbool.h>
#include <stddef.h>

#include "opal.h"
#include "opal-backend.h"

#define OPAL_LOCK_WHY_MAX 320

/* Where a lock or unlock stopped (OPAL_LOCK_DONE: it did not). */
enum opal_lock_step {
	OPAL_LOCK_DONE,
	OPAL_LOCK_IN_USE,	/* lock: the span is in use (why in in_use) */
	OPAL_LOCK_SPAN,		/* lock: reading where the range is failed (rc) */
	OPAL_LOCK_NO_SAVE,	/* unlock: save asked of a backend that cannot */
	OPAL_LOCK_SET,		/* the drive refused the change (rc) */
	OPAL_LOCK_NOT_LOCKED,	/* lock: the read-back says it did not lock (check) */
};

/* A lock, as read back. */
enum opal_lock_check {
	OPAL_LOCK_CHECK_LOCKED,		/* read and write locked */
	OPAL_LOCK_CHECK_UNREAD,		/* not read back: check_rc says why (lock sent) */
	OPAL_LOCK_CHECK_NO_LBAS,	/* range n > 0 with no LBAs: nothing locks */
	OPAL_LOCK_CHECK_NOT_ENABLED,	/* read and write locking both off */
	OPAL_LOCK_CHECK_HALF,		/* one of them off: see range */
	OPAL_LOCK_CHECK_STILL_UNLOCKED,	/* enabled, and yet not locked */
};

struct opal_lock_request {
	unsigned who;			/* 0 Admin1, n UserN */
	unsigned range;			/* 0 the global range */
	enum opal_lock_state state;
	bool save;			/* unlock: keep it for S3 resume (kernel backend) */
	bool keep_mbr;			/* unlock: leave MBR Done as it is */
	bool force;			/* lock: even when the span is in use */
	const char *devpath;		/* the in-use check; NULL: none */
};

struct opal_lock_result {
	enum opal_lock_step step;
	int rc;				/* the failed step's status (backend, or -errno) */
	char in_use[OPAL_LOCK_WHY_MAX];	/* OPAL_LOCK_IN_USE: what uses the span */
	bool saved;			/* the kernel keeps this state for S3 resume */
	enum opal_lock_check check;	/* lock */
	int check_rc;			/* OPAL_LOCK_CHECK_UNREAD: why */
	struct opal_range range;	/* lock: as read back (unless UNREAD) */
	int mbr_rc;			/* unlock: setting MBR Done failed (0: set, or not needed) */
	bool mbr_done_set;
};

/*
 * Lock or unlock rq->range of the drive behind be with key, as described
 * above. 0 when done (res->step OPAL_LOCK_DONE; an unread lock and an MBR
 * Done that failed are reported in res, not as failures), or the failing
 * step's status: res->step says which.
 */
int opal_lock_control(struct opal_backend *be, const struct opal_key *key,
		      const struct opal_lock_request *rq, struct opal_lock_result *res);

/*
 * Is anything using range `range` of devpath (0: the whole drive)? Where
 * something on the drive is in use, the range's span is read as `who` with
 * key: one authentication, so a wrong key is reported here (its status)
 * before any other try. 1 and what in why, 0, or a backend status.
 */
int opal_range_in_use(struct opal_backend *be, unsigned who, const struct opal_key *key,
		      unsigned range, const char *devpath, char *why, size_t cap);

/*
 * The ranges with read or write locking enabled that authority `who` may
 * read, in one session: list (room for 9), n. Protocol code only (the
 * kernel has no ioctl that lists ranges): dev is the protocol transport of
 * the drive. 0 or a status.
 */
int opal_lockable_ranges(struct opal_dev *dev, unsigned who, const struct opal_key *key,
			 unsigned *list, unsigned *n);

/*
 * Ask the kernel to re-read the partition tables of the disk behind path
 * (an NVMe controller: every namespace of its subsystem). A busy disk (a
 * partition in use) gets a udev "change" event for it and its partitions,
 * so that udev probes them again: through sysfs, by the kernel's name of
 * the disk (path may be a symlink, /dev/disk/by-id/...). report, for each disk: rc 0 re-read,
 * -EBUSY (uevent: whether udev was told), else -errno.
 */
void opal_reread_partitions(const char *path,
			    void (*report)(void *arg, const char *disk, int rc, bool uevent),
			    void *arg);

#endif
