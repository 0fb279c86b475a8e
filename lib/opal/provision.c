// SPDX-License-Identifier: GPL-2.0-only
/* Provisioning (opal-provision.h): setup planned, then applied. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "opal-drive-id.h"
#include "opal-provision.h"

static int plan_fail(struct opal_setup_plan *p, enum opal_setup_step step, int rc)
{
	p->step = step;
	p->rc = rc;
	return rc;
}

/* A span the change destroys, in use: 1 and what in plan->in_use. */
static bool span_in_use(const struct opal_setup_request *rq, uint64_t start, uint64_t length,
			struct opal_setup_plan *p)
{
	return rq->devpath && !rq->force &&
	       opal_drive_in_use(rq->devpath, start, length, p->in_use, sizeof(p->in_use)) == 1;
}

int opal_setup_plan(struct opal_backend *be, const struct opal_key *key,
		    const struct opal_setup_request *rq, struct opal_setup_plan *p)
{
	const struct opal_range *want = &rq->range;
	int rc;

	memset(p, 0, sizeof(*p));
	rc = be->ops->discovery(be, &p->d);
	if (rc)
		return plan_fail(p, OPAL_SETUP_DISCOVERY, rc);
	p->active = (p->d.locking_flags & OPAL_LF_ENABLED) != 0;
	/* The drive's Geometry feature: ranges it would refuse are not sent. */
	if (want->n && p->d.geometry && p->d.geo_align && p->d.alignment_granularity > 1) {
		uint64_t g = p->d.alignment_granularity, low = p->d.lowest_aligned_lba % g;

		if (want->start % g != low || want->length % g) {
			p->align.granularity = g;
			p->align.lowest = p->d.lowest_aligned_lba;
			p->align.start = want->start + (g + low - want->start % g) % g;
			p->align.length = want->length - want->length % g ? want->length - want->length % g : g;
			return plan_fail(p, OPAL_SETUP_MISALIGNED, OPAL_ERR_INVAL);
		}
	}
	/* Single User Mode is chosen at activation only. */
	if (p->active && rq->sum)
		return plan_fail(p, OPAL_SETUP_SUM_ACTIVE, OPAL_ERR_INVAL);
	if (!want->n) {
		p->change = OPAL_SETUP_GLOBAL;
		return 0;
	}
	/* A range exists only on an active Locking SP: on a new drive it is new. */
	if (p->active) {
		rc = be->ops->range_read(be, 0, key, want->n, &p->cur);
		if (rc)
			return plan_fail(p, OPAL_SETUP_READ_RANGE, rc);
	}
	if (p->cur.length && p->cur.start == want->start && p->cur.length == want->length) {
		p->change = OPAL_SETUP_SAME;
		return 0;
	}
	p->change = p->cur.length ? OPAL_SETUP_MOVED : OPAL_SETUP_NEW;
	p->destroys = true;
	if (span_in_use(rq, want->start, want->length, p) ||
	    (p->cur.length && span_in_use(rq, p->cur.start, p->cur.length, p)))
		return plan_fail(p, OPAL_SETUP_IN_USE, -EBUSY);
	return 0;
}

static int apply_fail(struct opal_setup_result *r, enum opal_setup_step step, int rc)
{
	r->step = step;
	r->rc = rc;
	return rc;
}

int opal_setup_apply(struct opal_backend *be, const struct opal_key *key,
		     const struct opal_setup_request *rq, const struct opal_setup_plan *p,
		     struct opal_setup_result *res)
{
	struct opal_key empty = { (const uint8_t *)"", 0 };
	int rc, back_rc = OPAL_ERR_UNSUPPORTED;

	memset(res, 0, sizeof(*res));
	if (p->step != OPAL_SETUP_OK)
		return apply_fail(res, p->step, p->rc ? p->rc : OPAL_ERR_INVAL);
	/*
	 * Lifecycle first: a drive whose Locking SP is active is owned and set
	 * up; ownership is never run again on it (each try of the MSID against
	 * an owned drive burns one of the SID's tries).
	 */
	if (!p->active) {
		if (p->d.block_sid && p->d.sid_blocked)
			return apply_fail(res, OPAL_SETUP_SID_BLOCKED, OPAL_ST_NOT_AUTHORIZED);
		/* Block SID's SID Value State: the SID is not the MSID any more. */
		if (!(p->d.block_sid && p->d.sid_value_state)) {
			rc = be->ops->take_ownership(be, key);
			if (rc == OPAL_ST_NOT_AUTHORIZED || rc == OPAL_ERR_AUTH)
				rc = 0;	/* owned already: the key must be the SID's */
			else if (!rc)
				res->took_ownership = true;
			if (rc)
				return apply_fail(res, OPAL_SETUP_OWNERSHIP, rc);
		} else {
			res->owned_by_block_sid = true;
		}
		unsigned sum = rq->range.n;

		rc = be->ops->activate(be, key, &sum, rq->sum ? 1 : 0);
		if (rc)
			return apply_fail(res, OPAL_SETUP_ACTIVATE, rc);
		res->activated = true;
	}
	if (rq->sum) {
		/* The range's owner, User n+1, starts with an empty PIN and sets its own. */
		rc = be->ops->sum_owner_setup(be, &empty, rq->owner_key, &rq->range);
		if (rc)
			return apply_fail(res, OPAL_SETUP_SUM_OWNER, rc);
	} else {
		rc = be->ops->range_setup(be, key, &rq->range, &res->back, &back_rc);
		if (rc)
			return apply_fail(res, OPAL_SETUP_RANGE, rc);
	}
	/* PBA-free: the shadow MBR stays disabled, the normal bootloader runs. */
	rc = be->ops->mbr_control(be, 0, key, 0, -1);
	if (rc)
		return apply_fail(res, OPAL_SETUP_MBR, rc);
	/*
	 * Report what the drive says, not what was asked: the kernel's
	 * IOC_OPAL_LR_SETUP never writes LockOnReset.
	 */
	res->have_back = !rq->sum && !back_rc && res->back.lock_on_reset_known;
	return 0;
}
