/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's sed-opal ioctls. Kept apart from opal.h: linux/sed-opal.h
 * defines names (struct opal_key, enum opal_lock_state) that lib/opal uses
 * too. Results: 0, a TCG method status (1..0x3f), or -errno.
 */
#ifndef FDEKIT_OPAL_IOCTL_H
#define FDEKIT_OPAL_IOCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum opal_ioctl_state { OPAL_IOCTL_RW, OPAL_IOCTL_RO, OPAL_IOCTL_LOCKED };

int opal_ioctl_take_ownership(int fd, const uint8_t *key, size_t len);
/* n > 0: Single User Mode for those ranges. */
int opal_ioctl_activate_lsp(int fd, const uint8_t *key, size_t len, const unsigned *sum_ranges,
		       size_t n);
/* sum: as the Single User Mode owner of the range (key is the owner's). */
int opal_ioctl_lr_setup(int fd, const uint8_t *key, size_t len, unsigned range, uint64_t start,
		   uint64_t length, bool rle, bool wle, bool sum);
/* The Single User Mode owner of range sets its own PIN (old: its current one). */
int opal_ioctl_set_sum_owner_pw(int fd, unsigned range, const uint8_t *old, size_t olen,
			   const uint8_t *pin, size_t plen);
int opal_ioctl_lock_unlock(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
		      enum opal_ioctl_state st, bool save);
int opal_ioctl_revert(int fd, const uint8_t *key, size_t len, bool psid);
/* IOC_OPAL_REVERT_LSP (6.6+; -ENOTTY before). */
int opal_ioctl_revert_lsp(int fd, const uint8_t *key, size_t len, bool keep_global);
int opal_ioctl_secure_erase(int fd, const uint8_t *key, size_t len, unsigned range);
int opal_ioctl_mbr_enable(int fd, const uint8_t *key, size_t len, bool enable);
int opal_ioctl_mbr_done(int fd, const uint8_t *key, size_t len, bool done);
int opal_ioctl_activate_user(int fd, const uint8_t *admin, size_t alen, unsigned user);
int opal_ioctl_set_user_pw(int fd, const uint8_t *admin, size_t alen, unsigned user,
		      const uint8_t *pin, size_t plen);
/* IOC_OPAL_SAVE alone: replaces the saved state of the range. */
int opal_ioctl_save(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
	       enum opal_ioctl_state st);
struct opal_ioctl_lr_status {
	uint64_t start, length;
	bool rle, wle, read_locked, write_locked;
};
/* IOC_OPAL_GET_LR_STATUS (6.6+); -ENOTTY where the kernel lacks it. */
int opal_ioctl_lr_status(int fd, unsigned who, const uint8_t *key, size_t len, unsigned range,
		    struct opal_ioctl_lr_status *out);
/* 0 when the kernel has a sed-opal context for the disk, else -errno. */
int opal_ioctl_probe(int fd);
/* Level 0 Discovery into buf (kernels >= 6.5); returns bytes or -errno. */
int opal_ioctl_discovery(int fd, void *buf, size_t len);

#endif
