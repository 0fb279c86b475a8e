// SPDX-License-Identifier: GPL-2.0-only
/*
 * The protocol backend: lib/opal's own sessions over a transport. Each
 * operation does its work in one session.
 */
#include "opal-backend.h"

static int end(struct opal_session *s, int rc)
{
	int e = opal_end_session(s);

	return rc ? rc : e ? OPAL_ERR_PROTOCOL : 0;
}

static int p_discovery(struct opal_backend *b, struct opal_discovery *d)
{
	return opal_discovery0(b->opal, d);
}

static int p_take_ownership(struct opal_backend *b, const struct opal_key *sid)
{
	return opal_take_ownership(b->opal, sid);
}

static int p_activate(struct opal_backend *b, const struct opal_key *sid,
		      const unsigned *sum_ranges, size_t n)
{
	return opal_activate_locking_sp_sum(b->opal, sid, sum_ranges, n);
}

/*
 * Configure r; a drive that refuses a LockOnReset set of Power Cycle and
 * Hardware Reset (INVALID_PARAMETER: the Opal SSC, 4.3.5.2.2, makes
 * { 0, 1 } optional, { 0 } mandatory) gets the set without Hardware
 * Reset. A refusal for another cause fails the second try the same way.
 * What the drive holds is for the caller to read back.
 */
static int setup_range(struct opal_session *s, const struct opal_range *r)
{
	const uint32_t both = OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE;
	struct opal_range fallback = *r;
	int rc = opal_range_setup_session(s, r);

	if (rc != OPAL_ST_INVALID_PARAMETER || (r->lock_on_reset_types & both) != both)
		return rc;
	fallback.lock_on_reset_types &= ~OPAL_RESET_HARDWARE;
	return opal_range_setup_session(s, &fallback);
}

static int p_range_setup(struct opal_backend *b, const struct opal_key *admin,
			 const struct opal_range *r, struct opal_range *back, int *back_rc)
{
	struct opal_session *s;
	int rc = opal_admin1_session(b->opal, admin, &s);

	if (rc)
		return rc;
	rc = setup_range(s, r);
	if (!rc && back)
		*back_rc = opal_range_read(s, r->n, back);
	return end(s, rc);
}

static int p_range_read(struct opal_backend *b, unsigned who, const struct opal_key *key,
			unsigned range, struct opal_range *r)
{
	struct opal_session *s;
	int rc = opal_lock_session(b->opal, who, key, &s);

	return rc ? rc : end(s, opal_range_read(s, range, r));
}

static int p_range_disable(struct opal_backend *b, const struct opal_key *admin,
			   const struct opal_range *r)
{
	struct opal_session *s;
	int rc = opal_admin1_session(b->opal, admin, &s);

	if (rc)
		return rc;
	rc = opal_range_lock_enable(s, r->n, false, false);
	if (!rc)
		rc = opal_set_lock(s, r->n, OPAL_UNLOCKED_RW);
	return end(s, rc);
}

static int p_sum_owner_setup(struct opal_backend *b, const struct opal_key *old,
			     const struct opal_key *pin, const struct opal_range *r)
{
	unsigned owner = r->n + 1;
	struct opal_session *s;
	int rc = opal_lock_session(b->opal, owner, old, &s);

	if (!rc)
		rc = end(s, opal_user_set_pin(s, owner, pin));
	if (!rc)
		rc = opal_lock_session(b->opal, owner, pin, &s);
	if (!rc)
		rc = end(s, setup_range(s, r));
	return rc;
}

static int p_lock_unlock(struct opal_backend *b, unsigned who, const struct opal_key *key,
			 unsigned range, enum opal_lock_state st, bool save,
			 struct opal_range *back, int *back_rc)
{
	struct opal_session *s;
	int rc;

	if (save)	/* only the kernel keeps a key for S3 resume */
		return OPAL_ERR_UNSUPPORTED;
	rc = opal_lock_session(b->opal, who, key, &s);
	if (rc)
		return rc;
	rc = opal_set_lock(s, range, st);
	if (!rc && back)
		*back_rc = opal_range_read(s, range, back);
	return end(s, rc);
}

static int p_mbr_control(struct opal_backend *b, unsigned who, const struct opal_key *key,
			 int enable, int done)
{
	struct opal_session *s;
	int rc = opal_lock_session(b->opal, who, key, &s);

	return rc ? rc : end(s, opal_mbr_set_session(s, enable, done));
}

static int p_erase_range(struct opal_backend *b, const struct opal_key *admin, unsigned range)
{
	return opal_erase_range(b->opal, admin, range);
}

static int p_revert_tper(struct opal_backend *b, const struct opal_key *key, bool psid)
{
	return psid ? opal_psid_revert(b->opal, key) : opal_revert_tper(b->opal, key);
}

static int p_revert_lsp(struct opal_backend *b, const struct opal_key *admin, bool keep_global)
{
	return opal_revert_locking_sp(b->opal, admin, keep_global);
}

static int p_user_enable(struct opal_backend *b, const struct opal_key *admin, unsigned user)
{
	struct opal_session *s;
	int rc = opal_admin1_session(b->opal, admin, &s);

	return rc ? rc : end(s, opal_user_set_enabled(s, user, true));
}

static int p_user_set_pin(struct opal_backend *b, const struct opal_key *admin, unsigned user,
			  const struct opal_key *pin)
{
	struct opal_session *s;
	int rc = opal_admin1_session(b->opal, admin, &s);

	return rc ? rc : end(s, opal_user_set_pin(s, user, pin));
}

static const struct opal_backend_ops protocol_ops = {
	.name = "protocol",
	.via = "",
	.can_save = false,
	.discovery = p_discovery,
	.take_ownership = p_take_ownership,
	.activate = p_activate,
	.range_setup = p_range_setup,
	.range_read = p_range_read,
	.range_disable = p_range_disable,
	.sum_owner_setup = p_sum_owner_setup,
	.lock_unlock = p_lock_unlock,
	.mbr_control = p_mbr_control,
	.erase_range = p_erase_range,
	.revert_tper = p_revert_tper,
	.revert_lsp = p_revert_lsp,
	.user_enable = p_user_enable,
	.user_set_pin = p_user_set_pin,
};

void opal_backend_protocol(struct opal_backend *b, struct opal_dev *dev)
{
	b->ops = &protocol_ops;
	b->opal = dev;
	b->fd = -1;
}
