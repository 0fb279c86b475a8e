// SPDX-License-Identifier: GPL-2.0-only
/*
 * Locking ranges: configured, read, locked and unlocked (as Admin1 or a
 * user), and crypto-erased (GenKey).
 */
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opal-internal.h"

int opal_setup_range(struct opal_dev *dev, const struct opal_key *admin,
		     const struct opal_range *r)
{
	struct opal_session *s;
	int rc;

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_range_setup_session(s, r));
}

int opal_range_setup_session(struct opal_session *s, const struct opal_range *r)
{
	uint8_t mem[256];
	struct opal_buf b;
	opal_uid obj = opal_uid_locking_range(r->n);
	uint32_t types = r->lock_on_reset_types ? r->lock_on_reset_types :
			 r->lock_on_reset ? OPAL_RESET_POWER_CYCLE : 0;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, &obj);
	if (r->n) {
		opal_put_named_uint(&b, OPAL_COL_RANGE_START, r->start);
		opal_put_named_uint(&b, OPAL_COL_RANGE_LENGTH, r->length);
	}
	opal_put_named_uint(&b, OPAL_COL_READ_LOCK_ENABLED, r->read_lock_enabled);
	opal_put_named_uint(&b, OPAL_COL_WRITE_LOCK_ENABLED, r->write_lock_enabled);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, OPAL_COL_LOCK_ON_RESET);
	opal_put_control(&b, OPAL_TOK_STARTLIST);
	for (unsigned type = 0; type < 32; type++)
		if (types & (1u << type))
			opal_put_uint(&b, type);
	opal_put_control(&b, OPAL_TOK_ENDLIST);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_range_read(struct opal_session *s, unsigned n, struct opal_range *out)
{
	struct opal_resp *r;
	opal_uid obj = opal_uid_locking_range(n);
	uint64_t v[6];
	int rc;

	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, &obj, OPAL_COL_RANGE_START, OPAL_COL_LOCK_ON_RESET, r);
	for (unsigned c = 0; !rc && c < 6; c++)
		rc = opal_resp_column_uint(r, OPAL_COL_RANGE_START + c, &v[c]);
	if (!rc) {
		size_t i = opal_resp_column(r, OPAL_COL_LOCK_ON_RESET);
		const struct opal_tokens *t = &r->t;

		memset(out, 0, sizeof(*out));
		out->n = n;
		out->start = v[0];
		out->length = v[1];
		out->read_lock_enabled = v[2];
		out->write_lock_enabled = v[3];
		out->read_locked = v[4];
		out->write_locked = v[5];
		/* LockOnReset: a list of reset types; 0 is Power Cycle, 1 Hardware Reset. */
		if (!i || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTLIST))
			rc = OPAL_ERR_PROTOCOL;
		for (size_t j = i + 1; !rc && j < t->n && !opal_tok_is(&t->tok[j], OPAL_TOK_ENDLIST);
		     j++)
			if (t->tok[j].type == OPAL_ATOM_UINT && t->tok[j].uint < 32)
				out->lock_on_reset_types |= 1u << t->tok[j].uint;
		out->lock_on_reset = out->lock_on_reset_types & OPAL_RESET_POWER_CYCLE;
		out->lock_on_reset_known = !rc;
	}
	free(r);
	return rc;
}

int opal_get_range(struct opal_dev *dev, const struct opal_key *admin, unsigned n,
		   struct opal_range *out)
{
	struct opal_session *s;
	int rc;

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_range_read(s, n, out));
}

int opal_set_lock(struct opal_session *s, unsigned range, enum opal_lock_state st)
{
	uint8_t mem[256];
	struct opal_buf b;
	opal_uid obj = opal_uid_locking_range(range);

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, &obj);
	opal_put_named_uint(&b, OPAL_COL_READ_LOCKED, st == OPAL_LOCKED);
	opal_put_named_uint(&b, OPAL_COL_WRITE_LOCKED, st != OPAL_UNLOCKED_RW);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_range_lock_enable(struct opal_session *s, unsigned range, bool read_enabled,
			   bool write_enabled)
{
	uint8_t mem[256];
	struct opal_buf b;
	opal_uid obj = opal_uid_locking_range(range);

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, &obj);
	opal_put_named_uint(&b, OPAL_COL_READ_LOCK_ENABLED, read_enabled);
	opal_put_named_uint(&b, OPAL_COL_WRITE_LOCK_ENABLED, write_enabled);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_lock_session(struct opal_dev *dev, unsigned who, const struct opal_key *key,
		      struct opal_session **s)
{
	opal_uid auth = opal_authority_uid(who);

	return opal_start_session(dev, &OPAL_UID_LOCKINGSP, &auth, key, true, s);
}

int opal_lock_unlock(struct opal_dev *dev, unsigned who, const struct opal_key *key,
		     unsigned range, enum opal_lock_state st)
{
	struct opal_session *s;
	int rc;

	rc = opal_lock_session(dev, who, key, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_set_lock(s, range, st));
}

int opal_erase_range(struct opal_dev *dev, const struct opal_key *admin, unsigned range)
{
	uint8_t mem[128], key_uid[16];
	struct opal_buf b;
	struct opal_session *s;
	opal_uid obj = opal_uid_locking_range(range), k;
	size_t n;
	int rc;

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	/* GenKey goes to the range's ActiveKey object (K_AES_128/256). */
	rc = opal_get_column_bytes(s, &obj, OPAL_COL_ACTIVE_KEY, key_uid, sizeof(key_uid), &n);
	if (!rc && n != sizeof(k.b))
		rc = OPAL_ERR_PROTOCOL;
	if (!rc) {
		memcpy(k.b, key_uid, sizeof(k.b));
		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &k, &OPAL_M_GENKEY);
		opal_put_call_end(&b, 0);
		rc = opal_call_simple(s, &b);
	}
	return opal_finish(s, rc);
}
