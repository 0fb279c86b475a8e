// SPDX-License-Identifier: GPL-2.0-only
/* opalctl operations on top of the kernel's sed-opal ioctls. */
#include <errno.h>
#include <string.h>

#include "opalctl-dev.h"
#include "opalctl-kernel.h"

/* kopal result -> lib/opal error space. */
static int kmap(int rc)
{
	if (rc >= 0)
		return rc;
	switch (-rc) {
	case 524:	/* ENOTSUPP: the disk has no sed-opal context in the kernel */
	case ENOTTY:
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

static enum kopal_state kstate(enum opal_lock_state st)
{
	return st == OPAL_LOCKED ? KOPAL_LOCKED : st == OPAL_UNLOCKED_RO ? KOPAL_RO : KOPAL_RW;
}

int opalctl_kernel_take_ownership(struct opalctl_dev *dev, const struct opal_key *key)
{
	return kmap(kopal_take_ownership(dev->kernel_fd, key->data, key->len));
}

int opalctl_kernel_activate_lsp(struct opalctl_dev *dev, const struct opal_key *key,
				const unsigned *sum_ranges, size_t n)
{
	return kmap(kopal_activate_lsp(dev->kernel_fd, key->data, key->len, sum_ranges, n));
}

int opalctl_kernel_lr_setup(struct opalctl_dev *dev, const struct opal_key *key,
			    const struct opal_range *r, bool sum)
{
	return kmap(kopal_lr_setup(dev->kernel_fd, key->data, key->len, r->n, r->start, r->length,
				   r->read_lock_enabled, r->write_lock_enabled, sum));
}

int opalctl_kernel_set_sum_owner_pin(struct opalctl_dev *dev, unsigned range,
				     const struct opal_key *old, const struct opal_key *pin)
{
	return kmap(kopal_set_sum_owner_pw(dev->kernel_fd, range, old->data, old->len, pin->data,
					   pin->len));
}

int opalctl_kernel_lock_unlock(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			       unsigned range, enum opal_lock_state st, bool save)
{
	return kmap(kopal_lock_unlock(dev->kernel_fd, who, key->data, key->len, range, kstate(st),
				      save));
}

int opalctl_kernel_revert(struct opalctl_dev *dev, const struct opal_key *key, bool psid)
{
	return kmap(kopal_revert(dev->kernel_fd, key->data, key->len, psid));
}

int opalctl_kernel_revert_lsp(struct opalctl_dev *dev, const struct opal_key *key, bool keep_global)
{
	return kmap(kopal_revert_lsp(dev->kernel_fd, key->data, key->len, keep_global));
}

int opalctl_kernel_erase_range(struct opalctl_dev *dev, const struct opal_key *key,
			       unsigned range)
{
	return kmap(kopal_secure_erase(dev->kernel_fd, key->data, key->len, range));
}

int opalctl_kernel_mbr(struct opalctl_dev *dev, const struct opal_key *key, int enable, int done)
{
	int rc = 0;

	if (enable >= 0)
		rc = kopal_mbr_enable(dev->kernel_fd, key->data, key->len, enable);
	if (!rc && done >= 0)
		rc = kopal_mbr_done(dev->kernel_fd, key->data, key->len, done);
	return kmap(rc);
}

int opalctl_kernel_activate_user(struct opalctl_dev *dev, const struct opal_key *admin,
				 unsigned user)
{
	return kmap(kopal_activate_user(dev->kernel_fd, admin->data, admin->len, user));
}

int opalctl_kernel_set_user_pin(struct opalctl_dev *dev, const struct opal_key *admin,
				unsigned user, const struct opal_key *pin)
{
	return kmap(kopal_set_user_pw(dev->kernel_fd, admin->data, admin->len, user, pin->data,
				      pin->len));
}

int opalctl_kernel_save(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			unsigned range, enum opal_lock_state st)
{
	return kmap(kopal_save(dev->kernel_fd, who, key->data, key->len, range, kstate(st)));
}

int opalctl_kernel_lr_status(struct opalctl_dev *dev, unsigned who, const struct opal_key *key,
			     unsigned range, struct opal_range *r)
{
	struct kopal_lr_status st;
	int rc = kopal_lr_status(dev->kernel_fd, who, key->data, key->len, range, &st);

	if (rc)
		return kmap(rc);
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

int opalctl_dev_discovery(struct opalctl_dev *dev, struct opal_discovery *d)
{
	uint8_t buf[OPAL_IO_BUFFER];
	int rc;

	if (dev->kernel_fd < 0)
		return OPAL_ERR_UNSUPPORTED;
	rc = kopal_discovery(dev->kernel_fd, buf, sizeof(buf));
	if (rc < 0)
		return kmap(rc);
	return opal_discovery_parse(buf, sizeof(buf), d);
}
