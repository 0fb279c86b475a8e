// SPDX-License-Identifier: GPL-2.0-only
/*
 * The Admin SP and the authorities' PINs: the MSID, ownership, the Locking
 * SP's life cycle and activation (Single User Mode), PINs, the reverts,
 * random bytes from the TPer, and the tries left before lockout.
 */
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opal-internal.h"

int opal_get_msid(struct opal_dev *dev, uint8_t *pin, size_t cap, size_t *len)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s);
	if (rc)
		return rc;
	rc = opal_get_column_bytes(s, &OPAL_UID_C_PIN_MSID, OPAL_COL_PIN, pin, cap, len);
	return opal_finish(s, rc);
}

int opal_take_ownership(struct opal_dev *dev, const struct opal_key *newkey)
{
	uint8_t msid[OPAL_PIN_MAX];
	struct opal_key k = { msid, 0 };
	struct opal_session *s;
	int rc;

	rc = opal_get_msid(dev, msid, sizeof(msid), &k.len);
	if (rc)
		return rc;
	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &k, true, &s);
	explicit_bzero(msid, sizeof(msid));
	if (rc)
		return rc;
	rc = opal_set_column_bytes(s, &OPAL_UID_C_PIN_SID, OPAL_COL_PIN, newkey->data,
				   newkey->len);
	return opal_finish(s, rc);
}

int opal_locking_sp_lifecycle(struct opal_dev *dev, uint64_t *lc)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s);
	if (rc)
		return rc;
	rc = opal_get_column_uint(s, &OPAL_UID_LOCKINGSP, OPAL_COL_SP_LIFECYCLE, lc);
	return opal_finish(s, rc);
}

/* Activate's SingleUserModeSelectionList (Opal SSC Single User Mode 3.1.2.1). */
#define ACTIVATE_SUM_SELECTION_LIST 0x060000

int opal_activate_locking_sp_sum(struct opal_dev *dev, const struct opal_key *sid,
				 const unsigned *sum_ranges, size_t n)
{
	uint8_t mem[256];
	struct opal_buf b;
	struct opal_session *s;
	uint64_t lc;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, &OPAL_UID_SID, sid, true, &s);
	if (rc)
		return rc;
	rc = opal_get_column_uint(s, &OPAL_UID_LOCKINGSP, OPAL_COL_SP_LIFECYCLE, &lc);
	if (!rc && lc == OPAL_LIFECYCLE_MANUFACTURED_INACTIVE) {
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_LOCKINGSP, &OPAL_M_ACTIVATE);
		if (n) {
			/* [ Locking object UIDs ], as the kernel's activate_lsp sends it */
			opal_put_control(&b, OPAL_TOK_STARTNAME);
			opal_put_uint(&b, ACTIVATE_SUM_SELECTION_LIST);
			opal_put_control(&b, OPAL_TOK_STARTLIST);
			for (size_t i = 0; i < n; i++) {
				opal_uid r = opal_uid_locking_range(sum_ranges[i]);

				opal_put_uid(&b, &r);
			}
			opal_put_control(&b, OPAL_TOK_ENDLIST);
			opal_put_control(&b, OPAL_TOK_ENDNAME);
		}
		opal_put_call_end(&b, 0);
		rc = opal_call_simple(s, &b);
	} else if (!rc && n) {
		rc = OPAL_ERR_INVAL;	/* Single User Mode is chosen at activation only */
	}
	return opal_finish(s, rc);
}

int opal_activate_locking_sp(struct opal_dev *dev, const struct opal_key *sid)
{
	return opal_activate_locking_sp_sum(dev, sid, NULL, 0);
}

int opal_set_pin(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
		 const struct opal_key *key, const opal_uid *cpin,
		 const struct opal_key *newkey)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, sp, auth, key, true, &s);
	if (rc)
		return rc;
	rc = opal_set_column_bytes(s, cpin, OPAL_COL_PIN, newkey->data, newkey->len);
	return opal_finish(s, rc);
}

/* RevertSP's optional parameter KeepGlobalRangeKey (Opal SSC 5.2.2.1). */
#define REVERTSP_KEEP_GLOBAL_RANGE_KEY 0x060000

/*
 * Revert or RevertSP (with KeepGlobalRangeKey when keep_global) in session
 * s. On success the TPer has ended the session itself: it is only dropped
 * here.
 */
static int revert_call(struct opal_session *s, const opal_uid *invoking, const opal_uid *method,
		       bool keep_global)
{
	uint8_t mem[128];
	struct opal_buf b;
	int rc;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, invoking, method);
	if (keep_global)
		opal_put_named_uint(&b, REVERTSP_KEEP_GLOBAL_RANGE_KEY, 1);
	opal_put_call_end(&b, 0);
	rc = opal_call_simple(s, &b);
	if (rc)
		return opal_finish(s, rc);
	opal_session_drop(s);
	return 0;
}

static int revert_as(struct opal_dev *dev, const opal_uid *auth, const struct opal_key *key)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, auth, key, true, &s);
	if (rc)
		return rc;
	return revert_call(s, &OPAL_UID_ADMINSP, &OPAL_M_REVERT, false);
}

int opal_revert_tper(struct opal_dev *dev, const struct opal_key *sid)
{
	return revert_as(dev, &OPAL_UID_SID, sid);
}

int opal_psid_revert(struct opal_dev *dev, const struct opal_key *psid)
{
	return revert_as(dev, &OPAL_UID_PSID, psid);
}

int opal_revert_locking_sp(struct opal_dev *dev, const struct opal_key *admin, bool keep_global)
{
	struct opal_session *s;
	int rc;

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	return revert_call(s, &OPAL_UID_THISSP, &OPAL_M_REVERTSP, keep_global);
}

int opal_random(struct opal_dev *dev, void *buf, size_t len)
{
	uint8_t mem[64];
	struct opal_buf b;
	struct opal_session *s;
	struct opal_resp *r;
	uint8_t *p = buf;
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s);
	if (rc) {
		free(r);
		return rc;
	}
	while (!rc && len) {
		size_t n = len < 32 ? len : 32;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_THISSP, &OPAL_M_RANDOM);
		opal_put_uint(&b, n);
		opal_put_call_end(&b, 0);
		rc = opal_session_call(s, &b, r);
		if (rc)
			break;
		rc = opal_resp_take_bytes(r, p, n);
		if (rc)
			break;
		p += n;
		len -= n;
	}
	explicit_bzero(r, sizeof(*r));
	free(r);
	return opal_finish(s, rc);
}

int opal_tries_in_session(struct opal_session *s, const opal_uid *cpin, uint64_t *tries,
			  uint64_t *limit)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, cpin, OPAL_COL_TRY_LIMIT, OPAL_COL_TRIES, r);
	if (!rc)
		rc = opal_resp_column_uint(r, OPAL_COL_TRY_LIMIT, limit);
	if (!rc)
		rc = opal_resp_column_uint(r, OPAL_COL_TRIES, tries);
	free(r);
	return rc;
}

int opal_tries_left(struct opal_dev *dev, const opal_uid *sp, const opal_uid *cpin,
		    uint64_t *tries, uint64_t *limit)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, sp, NULL, NULL, false, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_tries_in_session(s, cpin, tries, limit));
}
