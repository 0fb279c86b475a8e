// SPDX-License-Identifier: GPL-2.0-only
/*
 * The kernel's sed-opal ioctls (linux/sed-opal.h). The kernel runs the
 * protocol itself; it is the only path that can keep a key for unlocking on
 * resume from S3 (IOC_OPAL_SAVE).
 */
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>

#include <linux/sed-opal.h>

#include "opal-ioctl.h"

#ifndef IOC_OPAL_GET_STATUS
#define IOC_OPAL_GET_STATUS _IOR('p', 236, struct opal_status)
struct opal_status {
	__u32 flags;
	__u32 reserved;
};
#endif

#ifndef IOC_OPAL_DISCOVERY
#define IOC_OPAL_DISCOVERY _IOW('p', 239, struct opal_discovery)
struct opal_discovery {
	__u64 data;
	__u64 size;
};
#endif

static int kret(int ret)
{
	if (ret < 0)
		return -errno;
	return ret;
}

static int set_key(struct opal_key *k, const uint8_t *key, size_t len, unsigned lr)
{
	if (len > OPAL_KEY_MAX || lr >= OPAL_MAX_LRS)
		return -EINVAL;
	memset(k, 0, sizeof(*k));
	k->lr = (__u8)lr;
	k->key_len = (__u8)len;
#if HAVE_OPAL_KEY_TYPE
	k->key_type = OPAL_INCLUDED;
#endif
	/* Older uapi (before 6.6): that byte is padding, and zero means OPAL_INCLUDED. */
	memcpy(k->key, key, len);
	return 0;
}

/*
 * The usual call: set the key k (which lies inside arg) for range lr, issue
 * req with arg, and wipe arg, key included, whatever happened.
 */
static int keyed_ioctl(int fd, unsigned long req, void *arg, size_t size, struct opal_key *k,
		       const uint8_t *key, size_t len, unsigned lr)
{
	int rc = set_key(k, key, len, lr);

	if (!rc)
		rc = kret(ioctl(fd, req, arg));
	explicit_bzero(arg, size);
	return rc;
}

int opal_ioctl_take_ownership(int fd, const uint8_t *key, size_t len)
{
	struct opal_key k;

	return keyed_ioctl(fd, IOC_OPAL_TAKE_OWNERSHIP, &k, sizeof(k), &k, key, len, 0);
}

int opal_ioctl_activate_lsp(int fd, const uint8_t *key, size_t len, const unsigned *sum_ranges,
		       size_t n)
{
	struct opal_lr_act a;

	memset(&a, 0, sizeof(a));
	if (n > OPAL_MAX_LRS)
		return -EINVAL;
	/*
	 * sed-opal refuses num_lrs == 0 with EINVAL (opal_activate_lsp), though
	 * it reads the list only in Single User Mode (sum): name the global range.
	 */
	a.sum = n > 0;
	a.num_lrs = n ? (__u8)n : 1;
	for (size_t i = 0; i < n; i++)
		a.lr[i] = (__u8)sum_ranges[i];
	return keyed_ioctl(fd, IOC_OPAL_ACTIVATE_LSP, &a, sizeof(a), &a.key, key, len, 0);
}

int opal_ioctl_lr_setup(int fd, const uint8_t *key, size_t len, unsigned range, uint64_t start,
		   uint64_t length, bool rle, bool wle, bool sum)
{
	struct opal_user_lr_setup s;

	memset(&s, 0, sizeof(s));
	s.range_start = start;
	s.range_length = length;
	s.RLE = rle;
	s.WLE = wle;
	/* In Single User Mode the kernel signs in as the range's owner, User(range+1). */
	s.session.who = OPAL_ADMIN1;
	s.session.sum = sum;
	return keyed_ioctl(fd, IOC_OPAL_LR_SETUP, &s, sizeof(s), &s.session.opal_key, key, len,
			   range);
}

int opal_ioctl_set_sum_owner_pw(int fd, unsigned range, const uint8_t *old, size_t olen,
			   const uint8_t *pin, size_t plen)
{
	struct opal_new_pw pw;
	int rc;

	memset(&pw, 0, sizeof(pw));
	/*
	 * The owner is User(range+1). sed-opal's set_new_pw aims at
	 * C_PIN_Admin1 unless who names a user: then, with sum, at the C_PIN
	 * of User(lr+1). The session signs in as that user whatever who says.
	 */
	pw.session.sum = 1;
	pw.session.who = range + 1;
	pw.new_user_pw.sum = 1;
	pw.new_user_pw.who = range + 1;
	rc = set_key(&pw.new_user_pw.opal_key, pin, plen, range);
	if (!rc)
		rc = keyed_ioctl(fd, IOC_OPAL_SET_PW, &pw, sizeof(pw), &pw.session.opal_key, old,
				 olen, range);
	explicit_bzero(&pw, sizeof(pw));
	return rc;
}

int opal_ioctl_lock_unlock(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
		      enum opal_ioctl_state st, bool save)
{
	struct opal_lock_unlock lk;
	int rc;

	memset(&lk, 0, sizeof(lk));
	lk.session.who = who;
	lk.l_state = st == OPAL_IOCTL_LOCKED ? OPAL_LK : st == OPAL_IOCTL_RO ? OPAL_RO : OPAL_RW;
	rc = set_key(&lk.session.opal_key, key, len, range);
	if (!rc)
		rc = kret(ioctl(fd, IOC_OPAL_LOCK_UNLOCK, &lk));
	/* The kernel replays the saved unlock on resume from S3. */
	if (!rc && save)
		rc = kret(ioctl(fd, IOC_OPAL_SAVE, &lk));
	explicit_bzero(&lk, sizeof(lk));
	return rc;
}

int opal_ioctl_save(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
	       enum opal_ioctl_state st)
{
	struct opal_lock_unlock lk;

	memset(&lk, 0, sizeof(lk));
	lk.session.who = who;
	lk.l_state = st == OPAL_IOCTL_LOCKED ? OPAL_LK : st == OPAL_IOCTL_RO ? OPAL_RO : OPAL_RW;
	return keyed_ioctl(fd, IOC_OPAL_SAVE, &lk, sizeof(lk), &lk.session.opal_key, key, len,
			   range);
}

int opal_ioctl_activate_user(int fd, const uint8_t *admin, size_t alen, unsigned user)
{
	struct opal_session_info s;

	memset(&s, 0, sizeof(s));
	s.who = user;	/* OPAL_USER1.. = 1..; the key is Admin1's */
	return keyed_ioctl(fd, IOC_OPAL_ACTIVATE_USR, &s, sizeof(s), &s.opal_key, admin, alen, 0);
}

int opal_ioctl_set_user_pw(int fd, const uint8_t *admin, size_t alen, unsigned user,
		      const uint8_t *pin, size_t plen)
{
	struct opal_new_pw pw;
	int rc;

	memset(&pw, 0, sizeof(pw));
	pw.session.who = OPAL_ADMIN1;
	pw.new_user_pw.who = user;
	rc = set_key(&pw.new_user_pw.opal_key, pin, plen, 0);
	if (!rc)
		rc = keyed_ioctl(fd, IOC_OPAL_SET_PW, &pw, sizeof(pw), &pw.session.opal_key, admin,
				 alen, 0);
	explicit_bzero(&pw, sizeof(pw));
	return rc;
}

int opal_ioctl_lr_status(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
		    struct opal_ioctl_lr_status *out)
{
#ifdef IOC_OPAL_GET_LR_STATUS
	struct opal_lr_status st;
	int rc;

	memset(&st, 0, sizeof(st));
	st.session.who = who;
	rc = set_key(&st.session.opal_key, key, len, range);
	if (!rc)
		rc = kret(ioctl(fd, IOC_OPAL_GET_LR_STATUS, &st));
	if (!rc) {
		out->start = st.range_start;
		out->length = st.range_length;
		out->rle = st.RLE;
		out->wle = st.WLE;
		out->read_locked = st.l_state == OPAL_LK;
		out->write_locked = st.l_state != OPAL_RW;
	}
	explicit_bzero(&st, sizeof(st));
	return rc;
#else
	(void)fd; (void)who; (void)key; (void)len; (void)range; (void)out;
	return -ENOTTY;
#endif
}

int opal_ioctl_revert_lsp(int fd, const uint8_t *key, size_t len, bool keep_global)
{
#ifdef IOC_OPAL_REVERT_LSP
	struct opal_revert_lsp r;

	memset(&r, 0, sizeof(r));
	r.options = keep_global ? OPAL_PRESERVE : 0;
	return keyed_ioctl(fd, IOC_OPAL_REVERT_LSP, &r, sizeof(r), &r.key, key, len, 0);
#else
	(void)fd; (void)key; (void)len; (void)keep_global;
	return -ENOTTY;
#endif
}

int opal_ioctl_revert(int fd, const uint8_t *key, size_t len, bool psid)
{
	struct opal_key k;

	return keyed_ioctl(fd, psid ? IOC_OPAL_PSID_REVERT_TPR : IOC_OPAL_REVERT_TPR, &k,
			   sizeof(k), &k, key, len, 0);
}

int opal_ioctl_secure_erase(int fd, const uint8_t *key, size_t len, unsigned range)
{
	struct opal_session_info s;

	memset(&s, 0, sizeof(s));
	s.who = OPAL_ADMIN1;
	return keyed_ioctl(fd, IOC_OPAL_SECURE_ERASE_LR, &s, sizeof(s), &s.opal_key, key, len,
			   range);
}

int opal_ioctl_mbr_enable(int fd, const uint8_t *key, size_t len, bool enable)
{
	struct opal_mbr_data m;

	memset(&m, 0, sizeof(m));
	m.enable_disable = enable ? OPAL_MBR_ENABLE : OPAL_MBR_DISABLE;
	return keyed_ioctl(fd, IOC_OPAL_ENABLE_DISABLE_MBR, &m, sizeof(m), &m.key, key, len, 0);
}

int opal_ioctl_mbr_done(int fd, const uint8_t *key, size_t len, bool done)
{
	struct opal_mbr_done m;

	memset(&m, 0, sizeof(m));
	m.done_flag = done ? OPAL_MBR_DONE : OPAL_MBR_NOT_DONE;
	return keyed_ioctl(fd, IOC_OPAL_MBR_DONE, &m, sizeof(m), &m.key, key, len, 0);
}

int opal_ioctl_discovery(int fd, void *buf, size_t len)
{
	struct opal_discovery d = { .data = (__u64)(unsigned long)buf, .size = len };

	return kret(ioctl(fd, IOC_OPAL_DISCOVERY, &d));
}

int opal_ioctl_probe(int fd)
{
	struct opal_status st;

	memset(&st, 0, sizeof(st));
	return kret(ioctl(fd, IOC_OPAL_GET_STATUS, &st));
}
