// SPDX-License-Identifier: GPL-2.0-only
/* Operations of the Opal SSC, each one or a few sessions long. */
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opal-internal.h"

/*
 * Byte-table chunk per Set/Get: at most TABLE_CHUNK, less when the TPer's
 * limits (Properties) leave less room next to the rest of the call or reply.
 */
#define TABLE_CHUNK 1024
/* Set[Where = offset, Values = bytes] without the bytes atom, rounded up. */
#define TABLE_SET_OVERHEAD 48
/* [ bytes ] and the status list of a Get reply, without the atom, rounded up. */
#define TABLE_GET_REPLY_OVERHEAD 16

static size_t table_chunk(size_t len, size_t room)
{
	size_t n = len < TABLE_CHUNK ? len : TABLE_CHUNK;

	return n < room ? n : room;
}

static opal_uid authority(unsigned who)
{
	return who == 0 ? opal_uid_admin(1) : opal_uid_user(who);
}

/* End the session, keeping the first error. */
static int finish(struct opal_session *s, int rc)
{
	int end = opal_end_session(s);

	return rc ? rc : end;
}

int opal_get_msid(struct opal_dev *dev, uint8_t *pin, size_t cap, size_t *len)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s);
	if (rc)
		return rc;
	rc = opal_get_column_bytes(s, &OPAL_UID_C_PIN_MSID, OPAL_COL_PIN, pin, cap, len);
	return finish(s, rc);
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
	return finish(s, rc);
}

int opal_locking_sp_lifecycle(struct opal_dev *dev, uint64_t *lc)
{
	struct opal_session *s;
	int rc;

	rc = opal_start_session(dev, &OPAL_UID_ADMINSP, NULL, NULL, false, &s);
	if (rc)
		return rc;
	rc = opal_get_column_uint(s, &OPAL_UID_LOCKINGSP, OPAL_COL_SP_LIFECYCLE, lc);
	return finish(s, rc);
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
	return finish(s, rc);
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
	return finish(s, rc);
}

static int admin_session(struct opal_dev *dev, const struct opal_key *admin,
			 struct opal_session **s)
{
	return opal_admin1_session(dev, admin, s);
}

int opal_setup_range(struct opal_dev *dev, const struct opal_key *admin,
		     const struct opal_range *r)
{
	struct opal_session *s;
	int rc;

	rc = admin_session(dev, admin, &s);
	if (rc)
		return rc;
	return finish(s, opal_range_setup_session(s, r));
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

	rc = admin_session(dev, admin, &s);
	if (rc)
		return rc;
	return finish(s, opal_range_read(s, n, out));
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
	opal_uid auth = authority(who);

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
	return finish(s, opal_set_lock(s, range, st));
}

int opal_mbr_read(struct opal_session *s, struct opal_mbr_state *m)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	uint64_t en = 0, done = 0;
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, &OPAL_UID_MBRCONTROL, OPAL_COL_MBR_ENABLE, OPAL_COL_MBR_DONE, r);
	if (!rc)
		rc = opal_resp_column_uint(r, OPAL_COL_MBR_ENABLE, &en);
	if (!rc)
		rc = opal_resp_column_uint(r, OPAL_COL_MBR_DONE, &done);
	m->enable = en;
	m->done = done;
	free(r);
	return rc;
}

int opal_mbr_get(struct opal_dev *dev, const struct opal_key *admin, struct opal_mbr_state *m)
{
	struct opal_session *s;
	int rc;

	rc = admin_session(dev, admin, &s);
	if (rc)
		return rc;
	return finish(s, opal_mbr_read(s, m));
}

int opal_mbr_set_session(struct opal_session *s, int enable, int done)
{
	uint8_t mem[256];
	struct opal_buf b;

	if (enable < 0 && done < 0)
		return OPAL_ERR_INVAL;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, &OPAL_UID_MBRCONTROL);
	if (enable >= 0)
		opal_put_named_uint(&b, OPAL_COL_MBR_ENABLE, (uint64_t)enable);
	if (done >= 0)
		opal_put_named_uint(&b, OPAL_COL_MBR_DONE, (uint64_t)done);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_mbr_set(struct opal_dev *dev, const struct opal_key *admin, int enable, int done)
{
	struct opal_session *s;
	int rc;

	if (enable < 0 && done < 0)
		return OPAL_ERR_INVAL;
	rc = admin_session(dev, admin, &s);
	if (rc)
		return rc;
	return finish(s, opal_mbr_set_session(s, enable, done));
}

/*
 * Set on a byte table: Where = offset, Values = bytes, in pieces that fit
 * the TPer's limits and, when gran > 1, are whole multiples of the table's
 * MandatoryWriteGranularity (offset and len must be too).
 */
static int table_write_gran(struct opal_session *s, const opal_uid *table, uint64_t offset,
			    const uint8_t *p, size_t len, uint64_t gran)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	size_t room = opal_session_call_room(s, TABLE_SET_OVERHEAD);
	int rc = room ? 0 : OPAL_ERR_TOO_LARGE;

	if (gran > 1 && (offset % gran || len % gran))
		return OPAL_ERR_INVAL;
	if (gran > 1 && gran > room)
		return OPAL_ERR_TOO_LARGE;
	while (!rc && len) {
		size_t n = table_chunk(len, room);

		if (gran > 1)
			n -= n % gran;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, table, &OPAL_M_SET);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 0);	/* Where */
		opal_put_uint(&b, offset);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 1);	/* Values */
		opal_put_bytes(&b, p, n);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_call_end(&b, 0);
		rc = opal_call_simple(s, &b);
		offset += n;
		p += n;
		len -= n;
	}
	explicit_bzero(mem, sizeof(mem));
	return rc;
}

static int table_write(struct opal_session *s, const opal_uid *table, uint64_t offset,
		       const uint8_t *p, size_t len)
{
	return table_write_gran(s, table, offset, p, len, 1);
}

int opal_mbr_geometry(struct opal_session *s, uint64_t *rows, uint64_t *granularity)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, &OPAL_UID_TABLE_MBR, OPAL_COL_TABLE_ROWS,
			      OPAL_COL_TABLE_MANDATORY_WRITE_GRANULARITY, r);
	if (!rc)
		rc = opal_resp_column_uint(r, OPAL_COL_TABLE_ROWS, rows);
	/* A drive that does not report a granularity takes any write. */
	if (!rc && opal_resp_column_uint(r, OPAL_COL_TABLE_MANDATORY_WRITE_GRANULARITY, granularity))
		*granularity = 1;
	if (!rc && !*granularity)
		*granularity = 1;
	free(r);
	return rc;
}

int opal_mbr_write_session(struct opal_session *s, uint64_t offset, const void *buf, size_t len,
			   uint64_t granularity)
{
	return table_write_gran(s, &OPAL_UID_MBR, offset, buf, len, granularity);
}

static int table_read(struct opal_session *s, const opal_uid *table, uint64_t offset,
		      uint8_t *p, size_t len)
{
	uint8_t mem[256];
	struct opal_buf b;
	struct opal_resp *r = calloc(1, sizeof(*r));
	size_t room = opal_session_reply_room(s, TABLE_GET_REPLY_OVERHEAD);
	int rc = room ? 0 : OPAL_ERR_TOO_LARGE;

	if (!r)
		return OPAL_ERR_NOMEM;
	while (!rc && len) {
		size_t n = table_chunk(len, room), got_len;
		const uint8_t *got;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, table, &OPAL_M_GET);
		opal_put_control(&b, OPAL_TOK_STARTLIST);
		opal_put_named_uint(&b, 1, offset);		/* startRow */
		opal_put_named_uint(&b, 2, offset + n - 1);	/* endRow */
		opal_put_control(&b, OPAL_TOK_ENDLIST);
		opal_put_call_end(&b, 0);
		rc = opal_session_call(s, &b, r);
		if (rc)
			break;
		/* One result: the bytes of the rows asked for. */
		if (opal_resp_count(r) != 1 || opal_resp_bytes(r, 0, &got, &got_len) ||
		    got_len != n) {
			rc = OPAL_ERR_PROTOCOL;
			break;
		}
		memcpy(p, got, n);
		offset += n;
		p += n;
		len -= n;
	}
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

/* Write (rd NULL) or read a byte table as Admin1, in one session. */
static int admin_table_io(struct opal_dev *dev, const struct opal_key *admin,
			  const opal_uid *table, uint64_t offset, const void *wr, void *rd,
			  size_t len)
{
	struct opal_session *s;
	int rc;

	rc = admin_session(dev, admin, &s);
	if (rc)
		return rc;
	rc = rd ? table_read(s, table, offset, rd, len) : table_write(s, table, offset, wr, len);
	return finish(s, rc);
}

int opal_mbr_write(struct opal_dev *dev, const struct opal_key *admin, uint64_t offset,
		   const void *buf, size_t len)
{
	return admin_table_io(dev, admin, &OPAL_UID_MBR, offset, buf, NULL, len);
}

int opal_datastore_write(struct opal_dev *dev, const struct opal_key *admin, uint64_t offset,
			 const void *buf, size_t len)
{
	return admin_table_io(dev, admin, &OPAL_UID_DATASTORE, offset, buf, NULL, len);
}

int opal_datastore_read(struct opal_dev *dev, const struct opal_key *admin, uint64_t offset,
			void *buf, size_t len)
{
	return admin_table_io(dev, admin, &OPAL_UID_DATASTORE, offset, NULL, buf, len);
}

int opal_erase_range(struct opal_dev *dev, const struct opal_key *admin, unsigned range)
{
	uint8_t mem[128], key_uid[16];
	struct opal_buf b;
	struct opal_session *s;
	opal_uid obj = opal_uid_locking_range(range), k;
	size_t n;
	int rc;

	rc = admin_session(dev, admin, &s);
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
	return finish(s, rc);
}

/*
 * Revert or RevertSP, without parameters, in session s. On success the TPer
 * has ended the session itself: it is only dropped here.
 */
/* RevertSP's optional parameter KeepGlobalRangeKey (Opal SSC 5.2.2.1). */
#define REVERTSP_KEEP_GLOBAL_RANGE_KEY 0x060000

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
		return finish(s, rc);
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

	rc = admin_session(dev, admin, &s);
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
		size_t n = len < 32 ? len : 32, got_len;
		const uint8_t *got;

		opal_buf_init(&b, mem, sizeof(mem));
		opal_put_call_begin(&b, &OPAL_UID_THISSP, &OPAL_M_RANDOM);
		opal_put_uint(&b, n);
		opal_put_call_end(&b, 0);
		rc = opal_session_call(s, &b, r);
		if (rc)
			break;
		if (opal_resp_count(r) != 1 || opal_resp_bytes(r, 0, &got, &got_len) ||
		    got_len != n) {
			rc = OPAL_ERR_PROTOCOL;
			break;
		}
		memcpy(p, got, n);
		p += n;
		len -= n;
	}
	explicit_bzero(r, sizeof(*r));
	free(r);
	return finish(s, rc);
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
	return finish(s, opal_tries_in_session(s, cpin, tries, limit));
}
