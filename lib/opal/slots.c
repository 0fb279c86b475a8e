// SPDX-License-Identifier: GPL-2.0-only
/* Key slots (opal-slots.h): the drive's side of a slot. */
#include <string.h>

#include "opal-slots.h"

int opal_read_access(struct opal_session *s, struct opal_access *acc)
{
	struct opal_range r;
	int rc;

	memset(acc, 0, sizeof(*acc));
	for (unsigned n = 0; n <= OPAL_SLOT_RANGES; n++) {
		rc = opal_range_read(s, n, &r);
		if (rc == OPAL_ST_INVALID_PARAMETER && n > 0)
			break;	/* fewer ranges */
		if (rc)
			return rc;
		acc->nranges = n + 1;
		acc->range[n].configured = n == 0 || r.length;
		acc->range[n].start = r.start;
		acc->range[n].length = r.length;
		if (!acc->range[n].configured)
			continue;
		rc = opal_range_access(s, n, &acc->range[n].ace);
		if (rc)
			return rc;
	}
	for (unsigned u = 1; u <= OPAL_SLOT_USERS; u++) {
		rc = opal_user_get_enabled(s, u, &acc->user_enabled[u]);
		if (rc == OPAL_ST_INVALID_PARAMETER)
			break;	/* fewer users */
		if (rc)
			return rc;
		acc->nusers = u;
	}
	return 0;
}

bool opal_slot_is_free(const struct opal_access *acc, unsigned int user)
{
	opal_uid u = opal_uid_user(user);

	if (!user || user > acc->nusers || acc->user_enabled[user])
		return false;
	for (unsigned int n = 0; n < acc->nranges; n++) {
		const struct opal_range_access *a = &acc->range[n].ace;

		if (opal_ace_has(&a->rdlocked, &u) || opal_ace_has(&a->wrlocked, &u))
			return false;
	}
	return true;
}

unsigned int opal_slot_find_free(const struct opal_access *acc)
{
	for (unsigned int u = 1; u <= acc->nusers; u++)
		if (opal_slot_is_free(acc, u))
			return u;
	return 0;
}

int opal_slot_bind(struct opal_session *s, unsigned int user, unsigned int range,
		   const struct opal_key *pin)
{
	int rc = opal_user_set_pin(s, user, pin);

	if (!rc)
		rc = opal_user_set_enabled(s, user, true);
	if (!rc)
		rc = opal_grant_user(s, user, range, true);
	if (rc) {
		/* Leave no half-made slot behind. */
		opal_revoke_user(s, user, range);
		opal_user_set_enabled(s, user, false);
	}
	return rc;
}

int opal_slot_unbind(struct opal_session *s, const struct opal_access *acc, unsigned int user,
		     const struct opal_key *scrap)
{
	int rc = 0;

	for (unsigned int n = 0; !rc && n < acc->nranges; n++)
		if (acc->range[n].configured)
			rc = opal_revoke_user(s, user, n);
	if (!rc)
		rc = opal_user_set_pin(s, user, scrap);
	if (!rc)
		rc = opal_user_set_enabled(s, user, false);
	return rc;
}
