/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Provisioning: the setup lifecycle of a drive, over the backend interface,
 * in two phases so that a tool can ask a person before anything changes:
 *
 *   opal_setup_plan   reads (Level 0 Discovery, the range's current
 *                     geometry) and changes nothing: whether the range
 *                     fits the drive's alignment, whether it is new, moved
 *                     or already there, whether that makes data
 *                     unreadable, and whether a partition in the spans
 *                     concerned is in use;
 *   opal_setup_apply  ownership (never run again on an owned drive: each
 *                     MSID try against one burns a SID try), activation
 *                     (Single User Mode for the range when asked), the
 *                     range (read and write locking, LockOnReset as
 *                     asked; the backend may fall back), the shadow MBR
 *                     off, and what the drive holds afterwards.
 *
 * Nothing prints; results are typed, the tool renders them.
 */
#ifndef FDEKIT_OPAL_PROVISION_H
#define FDEKIT_OPAL_PROVISION_H

#include <stdbool.h>
#include <stdint.h>

#include "opal.h"
#include "opal-backend.h"

#define OPAL_SETUP_WHY_MAX 320

struct opal_setup_request {
	struct opal_range range;	/* n 0: the global range; else start, length */
	bool sum;			/* Single User Mode for range.n: owner_key is User n+1's */
	const struct opal_key *owner_key;
	const char *devpath;		/* the in-use check; NULL: none */
	bool force;			/* go on although a span is in use */
};

/* Where setup stopped (OPAL_SETUP_OK: it did not). */
enum opal_setup_step {
	OPAL_SETUP_OK,
	OPAL_SETUP_DISCOVERY,	/* Level 0 Discovery failed (rc) */
	OPAL_SETUP_MISALIGNED,	/* the drive's Geometry refuses the range: see plan->align */
	OPAL_SETUP_SUM_ACTIVE,	/* Single User Mode asked of an active Locking SP */
	OPAL_SETUP_READ_RANGE,	/* reading the range's current geometry failed (rc) */
	OPAL_SETUP_IN_USE,	/* a span the change destroys is in use: plan->in_use */
	OPAL_SETUP_SID_BLOCKED,	/* the firmware blocks SID authentication (Block SID) */
	OPAL_SETUP_OWNERSHIP,	/* taking ownership failed (rc) */
	OPAL_SETUP_ACTIVATE,	/* activating the Locking SP failed (rc) */
	OPAL_SETUP_SUM_OWNER,	/* the range's owner setting its key and range failed (rc) */
	OPAL_SETUP_RANGE,	/* configuring the range failed (rc) */
	OPAL_SETUP_MBR,		/* turning the shadow MBR off failed (rc) */
};

/* What the range's setup does to the data under it. */
enum opal_setup_change {
	OPAL_SETUP_GLOBAL,	/* the global range: no data lost (it locks at power-off) */
	OPAL_SETUP_SAME,	/* the range is there with this geometry: nothing lost */
	OPAL_SETUP_NEW,		/* a new media key for its span */
	OPAL_SETUP_MOVED,	/* its old span and its new one become unreadable */
};

struct opal_setup_plan {
	enum opal_setup_step step;	/* OPAL_SETUP_OK: apply may run */
	int rc;
	struct opal_discovery d;
	bool active;			/* the Locking SP is active already */
	enum opal_setup_change change;
	bool destroys;			/* NEW or MOVED: confirm before apply */
	struct opal_range cur;		/* MOVED: where the range is now */
	char in_use[OPAL_SETUP_WHY_MAX];/* OPAL_SETUP_IN_USE: what uses which span */
	struct {			/* OPAL_SETUP_MISALIGNED */
		uint64_t granularity, lowest, start, length;	/* start, length: a fitting example */
	} align;
};

struct opal_setup_result {
	enum opal_setup_step step;
	int rc;
	bool took_ownership;		/* the SID went from the MSID to the key */
	bool owned_by_block_sid;	/* Block SID said the SID is not the MSID: skipped */
	bool activated;			/* the Locking SP was activated now */
	bool have_back;			/* back holds what the drive reports (LockOnReset) */
	struct opal_range back;
};

/* Phase 1: 0 (plan->step OPAL_SETUP_OK), or the status of the step that refused. */
int opal_setup_plan(struct opal_backend *be, const struct opal_key *key,
		    const struct opal_setup_request *rq, struct opal_setup_plan *plan);

/* Phase 2, after a plan that said OPAL_SETUP_OK (and, if it destroys, a confirmation). */
int opal_setup_apply(struct opal_backend *be, const struct opal_key *key,
		     const struct opal_setup_request *rq, const struct opal_setup_plan *plan,
		     struct opal_setup_result *res);

#endif
