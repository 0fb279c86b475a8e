// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel backend: every operation through the kernel's sed-opal ioctls
 * (opal-ioctl.h). lib/opal's own protocol code on the same disk (the aid)
 * serves only what no ioctl offers; opal-backend.h lists those reads.
 */
#include <errno.h>
#include <string.h>

#include "opal-backend.h"
#include "opal-ioctl.h"

/* Result of opal_ioctl_* -> lib/opal's error space. */
static int kmap(int rc)
{
	if (rc >= 0)
		return rc;
	switch (-rc) {
	case 524:	/* ENOTSUPP: the disk has no sed-opal context in the kernel */
	case ENOTTY:	/* no sed-opal in the kernel, or an ioctl it does not have yet */
	case EOPNOTSUPP:
	case ENODEV:
		return OPAL_ERR_UNSUPPORTED;
	case ETIMEDOUT:
		return OPAL_ERR_TIMEOUT;
	case EINVAL:
		return OPAL_ERR_INVAL;
	default:
		return OPAL_ERR_TRANSPORT;
	}
}

static enum opal_ioctl_state kstate(enum opal_lock_state st)
{
	return st == OPAL_LOCKED ? OPAL_IOCTL_LOCKED :
	       st == OPAL_UNLOCKED_RO ? OPAL_IOCTL_RO : OPAL_IOCTL_RW;
}

/* End a session of the aid, keeping the first error. */
static int aid_end(struct opal_session *s, int rc)
{
	int end = opal_end_session(s);

	return rc ? rc : end ? OPAL_ERR_PROTOCOL : 0;
}

/* The range's columns through the aid, in a session as who. */
static int aid_range_read(struct opal_backend *b, unsigned who, const struct opal_key *key,
			  unsigned range, struct opal_range *r)
{
	struct opal_session *s;
	int rc;

	if (!b->opal)
		return OPAL_ERR_UNSUPPORTED;
	rc = opal_lock_session(b->opal, who, key, &s);
	if (rc)
		return rc;
	return aid_end(s, opal_range_read(s, range, r));
}

static int k_discovery(struct opal_backend *b, struct opal_discovery *d)
{
	uint8_t buf[2048];
	int n = opal_ioctl_discovery(b->fd, buf, sizeof(buf));

	if (n < 0 && kmap(n) == OPAL_ERR_UNSUPPORTED && b->opal)	/* IOC_OPAL_DISCOVERY: 6.5+ */
		return opal_discovery0(b->opal, d);
	if (n < 0)
		return kmap(n);
	return opal_discovery_parse(buf, sizeof(buf), d);
}

static int k_take_ownership(struct opal_backend *b, const struct opal_key *sid)
{
	return kmap(opal_ioctl_take_ownership(b->fd, sid->data, sid->len));
}

static int k_activate(struct opal_backend *b, const struct opal_key *sid,
		      const unsigned *sum_ranges, size_t n)
{
	return kmap(opal_ioctl_activate_lsp(b->fd, sid->data, sid->len, sum_ranges, n));
}

/* IOC_OPAL_GET_LR_STATUS (6.6+), else the aid. LockOnReset stays unknown. */
static int k_range_read(struct opal_backend *b, unsigned who, const struct opal_key *key,
			unsigned range, struct opal_range *r)
{
	struct opal_ioctl_lr_status st;
	int rc = kmap(opal_ioctl_lr_status(b->fd, who, key->data, key->len, range, &st));

	if (rc == OPAL_ERR_UNSUPPORTED)
		return aid_range_read(b, who, key, range, r);
	if (rc)
		return rc;
	memset(r, 0, sizeof(*r));
	r->n = range;
	r->start = st.start;
	r->length = st.length;
	r->read_lock_enabled = st.rle;
	r->write_lock_enabled = st.wle;
	r->read_locked = st.read_locked;
	r->write_locked = st.write_locked;
	return 0;
}

static int k_range_setup(struct opal_backend *b, const struct opal_key *admin,
			 const struct opal_range *r, struct opal_range *back, int *back_rc)
{
	int rc = kmap(opal_ioctl_lr_setup(b->fd, admin->data, admin->len, r->n, r->start,
					  r->length, r->read_lock_enabled,
					  r->write_lock_enabled, false));

	if (!rc && back) {
		/* IOC_OPAL_LR_SETUP never writes LockOnReset: only the aid can say what it is. */
		*back_rc = aid_range_read(b, 0, admin, r->n, back);
		if (*back_rc == OPAL_ERR_UNSUPPORTED)
			*back_rc = k_range_read(b, 0, admin, r->n, back);
	}
	return rc;
}

static int k_range_disable(struct opal_backend *b, const struct opal_key *admin,
			   const struct opal_range *r)
{
	int rc = kmap(opal_ioctl_lr_setup(b->fd, admin->data, admin->len, r->n, r->start,
					  r->length, false, false, false));

	/* LR_SETUP leaves ReadLocked/WriteLocked as they were: unlock too. */
	if (!rc)
		rc = kmap(opal_ioctl_lock_unlock(b->fd, 0, admin->data, admin->len, r->n,
						 OPAL_IOCTL_RW, false));
	return rc;
}

static int k_sum_owner_setup(struct opal_backend *b, const struct opal_key *old,
			     const struct opal_key *pin, const struct opal_range *r)
{
	int rc = kmap(opal_ioctl_set_sum_owner_pw(b->fd, r->n, old->data, old->len, pin->data,
						  pin->len));

	if (!rc)
		rc = kmap(opal_ioctl_lr_setup(b->fd, pin->data, pin->len, r->n, r->start,
					      r->length, r->read_lock_enabled,
					      r->write_lock_enabled, true));
	return rc;
}

static int k_lock_unlock(struct opal_backend *b, unsigned who, const struct opal_key *key,
			 unsigned range, enum opal_lock_state st, bool save,
			 struct opal_range *back, int *back_rc)
{
	int rc = kmap(opal_ioctl_lock_unlock(b->fd, who, key->data, key->len, range, kstate(st),
					     save));

	if (!rc && back)
		*back_rc = k_range_read(b, who, key, range, back);
	return rc;
}

static int k_mbr_control(struct opal_backend *b, unsigned who, const struct opal_key *key,
			 int enable, int done)
{
	struct opal_discovery d;
	int rc = 0;

	if (who) {
		struct opal_session *s;

		/* The ioctls sign in as Admin1 only: a user's Done through the aid. */
		if (enable >= 0)
			return OPAL_ERR_INVAL;
		if (!b->opal)
			return OPAL_ERR_UNSUPPORTED;
		rc = opal_lock_session(b->opal, who, key, &s);
		return rc ? rc : aid_end(s, opal_mbr_set_session(s, -1, done));
	}
	/*
	 * IOC_OPAL_ENABLE_DISABLE_MBR sets Done to the same value as Enable:
	 * put Done back as it was unless it was asked for, so that enabling
	 * does the same through either backend.
	 */
	if (enable >= 0 && done < 0) {
		rc = k_discovery(b, &d);
		if (rc)
			return rc;
		done = (d.locking_flags & OPAL_LF_MBR_DONE) != 0;
	}
	if (enable >= 0)
		rc = kmap(opal_ioctl_mbr_enable(b->fd, key->data, key->len, enable));
	if (!rc && done >= 0)
		rc = kmap(opal_ioctl_mbr_done(b->fd, key->data, key->len, done));
	return rc;
}

static int k_erase_range(struct opal_backend *b, const struct opal_key *admin, unsigned range)
{
	return kmap(opal_ioctl_secure_erase(b->fd, admin->data, admin->len, range));
}

static int k_revert_tper(struct opal_backend *b, const struct opal_key *key, bool psid)
{
	return kmap(opal_ioctl_revert(b->fd, key->data, key->len, psid));
}

static int k_revert_lsp(struct opal_backend *b, const struct opal_key *admin, bool keep_global)
{
	return kmap(opal_ioctl_revert_lsp(b->fd, admin->data, admin->len, keep_global));
}

static int k_user_enable(struct opal_backend *b, const struct opal_key *admin, unsigned user)
{
	return kmap(opal_ioctl_activate_user(b->fd, admin->data, admin->len, user));
}

static int k_user_set_pin(struct opal_backend *b, const struct opal_key *admin, unsigned user,
			  const struct opal_key *pin)
{
	return kmap(opal_ioctl_set_user_pw(b->fd, admin->data, admin->len, user, pin->data,
					   pin->len));
}

static const struct opal_backend_ops kernel_ops = {
	.name = "kernel",
	.via = " through the kernel's sed-opal",
	.can_save = true,
	.discovery = k_discovery,
	.take_ownership = k_take_ownership,
	.activate = k_activate,
	.range_setup = k_range_setup,
	.range_read = k_range_read,
	.range_disable = k_range_disable,
	.sum_owner_setup = k_sum_owner_setup,
	.lock_unlock = k_lock_unlock,
	.mbr_control = k_mbr_control,
	.erase_range = k_erase_range,
	.revert_tper = k_revert_tper,
	.revert_lsp = k_revert_lsp,
	.user_enable = k_user_enable,
	.user_set_pin = k_user_set_pin,
};

void opal_backend_kernel(struct opal_backend *b, int fd, struct opal_dev *aid)
{
	b->ops = &kernel_ops;
	b->opal = aid;
	b->fd = fd;
}

int opal_backend_kernel_probe(int fd, int *err_no)
{
	int rc = opal_ioctl_probe(fd);

	*err_no = rc < 0 ? -rc : 0;
	if (rc == -524 || rc == -EOPNOTSUPP || rc == -ENOTTY)
		return OPAL_ERR_UNSUPPORTED;
	return rc < 0 ? OPAL_ERR_TRANSPORT : 0;
}
