// SPDX-License-Identifier: GPL-2.0-only
/*
 * sedsim TPer: the device side of the session manager, Admin SP and Locking
 * SP. Requests arrive as ComPackets through IF-SEND; the reply waits for the
 * next IF-RECV on the same ComID.
 *
 * Access control follows the Opal SSC's preconfigured ACEs (see
 * cpin_readable, acl_of and sedsim(8) for what is modelled).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>

#include "sedsim-internal.h"

#define SP_ADMIN 0
#define SP_LOCKING 1

enum obj_kind {
	OBJ_NONE,
	OBJ_THISSP,
	OBJ_SP_ADMIN,
	OBJ_SP_LOCKING,
	OBJ_CPIN,
	OBJ_AUTHORITY,
	OBJ_LOCKING,
	OBJ_LOCKING_INFO,
	OBJ_MBRCTL,
	OBJ_MBR,
	OBJ_DATASTORE,
	OBJ_TABLE_MBR,
	OBJ_TABLE_DS,
	OBJ_ACE_RD,
	OBJ_ACE_WR,
	OBJ_ACE_GET,
	OBJ_KAES,
	OBJ_TABLE_LOCKING,	/* the Locking table itself (Next) */
	OBJ_ACCESS_CONTROL,	/* the AccessControl table (GetACL) */
};

/* Columns of the Table table (Core Spec 5.3.2.1). */
#define TABLE_COL_MANDATORY_WRITE_GRANULARITY 13
#define TABLE_COL_RECOMMENDED_ACCESS_GRANULARITY 14

struct obj {
	enum obj_kind kind;
	unsigned idx;		/* range number, or enum sim_auth for C_PIN/Authority */
};

/*
 * UIDs written out from the SSC's tables rather than taken from lib/opal,
 * so that host and simulator do not share a mistake: the MethodID table's
 * Next and GetACL, the Locking and AccessControl tables.
 */
static const uint8_t M_NEXT[8] = { 0, 0, 0, 0x06, 0, 0, 0, 0x08 };
static const uint8_t M_GETACL[8] = { 0, 0, 0, 0x06, 0, 0, 0, 0x0d };
static const uint8_t UID_LOCKING_TABLE[8] = { 0, 0, 0x08, 0x02, 0, 0, 0, 0 };
static const uint8_t UID_ACCESS_CONTROL_TABLE[8] = { 0, 0, 0, 0x07, 0, 0, 0, 0 };

struct call {
	const struct opal_tokens *t;
	opal_uid inv, meth;
	size_t p0, pend;	/* parameters: tokens [p0, pend) */
};

static bool uid_at(const struct opal_tokens *t, size_t i, opal_uid *u)
{
	if (i >= t->n || t->tok[i].type != OPAL_ATOM_BYTES || t->tok[i].len != 8)
		return false;
	memcpy(u->b, t->tok[i].bytes, 8);
	return true;
}

static bool is_uint(const struct opal_tokens *t, size_t i)
{
	return i < t->n && t->tok[i].type == OPAL_ATOM_UINT;
}

static bool prefix(const opal_uid *u, uint8_t b2, uint8_t b3, uint8_t b5, uint8_t b6)
{
	return !u->b[0] && !u->b[1] && u->b[2] == b2 && u->b[3] == b3 && !u->b[4] &&
	       u->b[5] == b5 && u->b[6] == b6;
}

/* Index 1..max in the last byte, 0 when out of range. */
static unsigned last_index(const opal_uid *u, unsigned max)
{
	return u->b[7] >= 1 && u->b[7] <= max ? u->b[7] : 0;
}

static struct obj classify(int sp, const opal_uid *u)
{
	struct obj o = { OBJ_NONE, 0 };
	unsigned n;

	if (opal_uid_eq(u, &OPAL_UID_THISSP)) {
		o.kind = OBJ_THISSP;
		return o;
	}
	if (!memcmp(u->b, UID_ACCESS_CONTROL_TABLE, 8)) {
		o.kind = OBJ_ACCESS_CONTROL;
		return o;
	}
	if (sp == SP_ADMIN) {
		if (opal_uid_eq(u, &OPAL_UID_ADMINSP))
			o.kind = OBJ_SP_ADMIN;
		else if (opal_uid_eq(u, &OPAL_UID_LOCKINGSP))
			o.kind = OBJ_SP_LOCKING;
		else if (opal_uid_eq(u, &OPAL_UID_C_PIN_MSID))
			o = (struct obj){ OBJ_CPIN, AUTH_ANYBODY };
		else if (opal_uid_eq(u, &OPAL_UID_C_PIN_SID))
			o = (struct obj){ OBJ_CPIN, AUTH_SID };
		else if (opal_uid_eq(u, &OPAL_UID_C_PIN_PSID))
			o = (struct obj){ OBJ_CPIN, AUTH_PSID };
		else if (opal_uid_eq(u, &OPAL_UID_SID))
			o = (struct obj){ OBJ_AUTHORITY, AUTH_SID };
		else if (opal_uid_eq(u, &OPAL_UID_PSID))
			o = (struct obj){ OBJ_AUTHORITY, AUTH_PSID };
		return o;
	}
	if (prefix(u, 0, 0x0b, 0x01, 0) && (n = last_index(u, SEDSIM_ADMINS)))
		o = (struct obj){ OBJ_CPIN, AUTH_ADMIN1 + n - 1 };
	else if (prefix(u, 0, 0x0b, 0x03, 0) && (n = last_index(u, SEDSIM_USERS)))
		o = (struct obj){ OBJ_CPIN, AUTH_USER1 + n - 1 };
	else if (prefix(u, 0, 0x09, 0x01, 0) && (n = last_index(u, SEDSIM_ADMINS)))
		o = (struct obj){ OBJ_AUTHORITY, AUTH_ADMIN1 + n - 1 };
	else if (prefix(u, 0, 0x09, 0x03, 0) && (n = last_index(u, SEDSIM_USERS)))
		o = (struct obj){ OBJ_AUTHORITY, AUTH_USER1 + n - 1 };
	else if (prefix(u, 0x08, 0x02, 0, 0) && u->b[7] == 1)
		o = (struct obj){ OBJ_LOCKING, 0 };
	else if (prefix(u, 0x08, 0x02, 0x03, 0) && (n = last_index(u, SEDSIM_RANGES)))
		o = (struct obj){ OBJ_LOCKING, n };
	else if ((prefix(u, 0x08, 0x06, 0, 0) || prefix(u, 0x08, 0x05, 0, 0)) && u->b[7] == 1)
		o = (struct obj){ OBJ_KAES, 0 };
	else if ((prefix(u, 0x08, 0x06, 0x03, 0) || prefix(u, 0x08, 0x05, 0x03, 0)) &&
		 (n = last_index(u, SEDSIM_RANGES)))
		o = (struct obj){ OBJ_KAES, n };
	/*
	 * Range ACEs (Opal SSC 4.3.1.6, Table 227): byte 7 is the range, 0
	 * for the global range: Set_RdLocked 00 00 00 08 00 03 E0 nn,
	 * Set_WrLocked ... E8 nn, Get_RangeStartToActiveKey ... D0 nn.
	 */
	else if (prefix(u, 0, 0x08, 0x03, 0xe0) && u->b[7] <= SEDSIM_RANGES)
		o = (struct obj){ OBJ_ACE_RD, u->b[7] };
	else if (prefix(u, 0, 0x08, 0x03, 0xe8) && u->b[7] <= SEDSIM_RANGES)
		o = (struct obj){ OBJ_ACE_WR, u->b[7] };
	else if (prefix(u, 0, 0x08, 0x03, 0xd0) && u->b[7] <= SEDSIM_RANGES)
		o = (struct obj){ OBJ_ACE_GET, u->b[7] };
	else if (opal_uid_eq(u, &OPAL_UID_LOCKING_INFO))
		o.kind = OBJ_LOCKING_INFO;
	else if (opal_uid_eq(u, &OPAL_UID_MBRCONTROL))
		o.kind = OBJ_MBRCTL;
	else if (opal_uid_eq(u, &OPAL_UID_MBR))
		o.kind = OBJ_MBR;
	else if (opal_uid_eq(u, &OPAL_UID_DATASTORE))
		o.kind = OBJ_DATASTORE;
	else if (opal_uid_eq(u, &OPAL_UID_TABLE_MBR))
		o.kind = OBJ_TABLE_MBR;
	else if (opal_uid_eq(u, &OPAL_UID_TABLE_DATASTORE))
		o.kind = OBJ_TABLE_DS;
	else if (!memcmp(u->b, UID_LOCKING_TABLE, 8))
		o.kind = OBJ_TABLE_LOCKING;
	return o;
}

static struct sim_pin *pin_of(struct sim_state *st, unsigned a)
{
	if (a == AUTH_SID)
		return &st->sid;
	if (a == AUTH_PSID)
		return &st->psid;
	if (a == AUTH_ANYBODY)
		return &st->msid;
	if (a >= AUTH_ADMIN1 && a < AUTH_USER1)
		return &st->admin[a - AUTH_ADMIN1];
	if (a >= AUTH_USER1 && a < AUTH_COUNT)
		return &st->user[a - AUTH_USER1];
	return NULL;
}

static bool auth_enabled(const struct sim_state *st, unsigned a)
{
	if (a >= AUTH_ADMIN1 && a < AUTH_USER1)
		return st->admin_enabled[a - AUTH_ADMIN1];
	if (a >= AUTH_USER1 && a < AUTH_COUNT)
		return st->user_enabled[a - AUTH_USER1];
	return true;
}

/* Authority UID -> enum sim_auth in sp, or -1. */
static int auth_index(int sp, const opal_uid *u)
{
	unsigned n;

	if (opal_uid_eq(u, &OPAL_UID_ANYBODY))
		return AUTH_ANYBODY;
	if (sp == SP_ADMIN) {
		if (opal_uid_eq(u, &OPAL_UID_SID))
			return AUTH_SID;
		if (opal_uid_eq(u, &OPAL_UID_PSID))
			return AUTH_PSID;
		return -1;
	}
	if (prefix(u, 0, 0x09, 0x01, 0) && (n = last_index(u, SEDSIM_ADMINS)))
		return (int)(AUTH_ADMIN1 + n - 1);
	if (prefix(u, 0, 0x09, 0x03, 0) && (n = last_index(u, SEDSIM_USERS)))
		return (int)(AUTH_USER1 + n - 1);
	return -1;
}

/* Check a PIN with TryLimit accounting; returns a method status. */
static int check_pin(struct sedsim *sim, unsigned a, const uint8_t *pin, size_t len)
{
	struct sim_pin *p = pin_of(&sim->st, a);

	if (a == AUTH_ANYBODY)
		return 0;
	if (!p || !auth_enabled(&sim->st, a))
		return OPAL_ST_NOT_AUTHORIZED;
	if (p->try_limit && p->tries >= p->try_limit)
		return OPAL_ST_AUTHORITY_LOCKED_OUT;
	if (len != p->len || CRYPTO_memcmp(pin, p->pin, len)) {
		p->tries++;
		sim_save(sim);
		return OPAL_ST_NOT_AUTHORIZED;
	}
	if (p->tries) {
		p->tries = 0;
		sim_save(sim);
	}
	return 0;
}

static bool lsp_active(const struct sim_state *st)
{
	return st->lsp_lifecycle == OPAL_LIFECYCLE_MANUFACTURED;
}

/* ------------------------------------------------------------- replies */

static void reply_status(struct opal_buf *o, int status)
{
	opal_put_control(o, OPAL_TOK_ENDOFDATA);
	opal_put_control(o, OPAL_TOK_STARTLIST);
	opal_put_uint(o, (uint64_t)status);
	opal_put_uint(o, 0);
	opal_put_uint(o, 0);
	opal_put_control(o, OPAL_TOK_ENDLIST);
}

static void reply_empty(struct opal_buf *o, int status)
{
	opal_put_control(o, OPAL_TOK_STARTLIST);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	reply_status(o, status);
}

/* ------------------------------------------------------- parameter help */

/* Value index of the named parameter `name` among params [from, to), or 0. */
static size_t named(const struct opal_tokens *t, size_t from, size_t to, uint64_t name)
{
	for (size_t i = from; i < to && i;) {
		if (opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) && is_uint(t, i + 1) &&
		    t->tok[i + 1].uint == name)
			return i + 2;
		i = opal_tok_skip(t, i);
	}
	return 0;
}

/* ---------------------------------------------------------------- Get */

static bool is_admin(const struct sim_session *s)
{
	return s->auth & AUTH_ADMINS_MASK;
}

/* Does an ACE (a mask of authorities, OR'ed) admit the session's authorities? */
static bool ace_admits(uint32_t ace, const struct sim_session *s)
{
	return (ace & s->auth & ~ACE_ADMINS) || ((ace & ACE_ADMINS) && is_admin(s));
}

/* Range n is in Single User Mode. */
static bool in_sum(const struct sim_state *st, unsigned n)
{
	return st->sum_ranges & (1u << n);
}

/* The user of a C_PIN or Authority object owns a range in Single User Mode. */
static bool is_sum_owner(const struct sim_state *st, unsigned a)
{
	return a >= AUTH_USER1 && a < AUTH_COUNT && in_sum(st, a - AUTH_USER1);
}

static uint32_t *range_ace(struct sim_state *st, struct obj ob)
{
	struct sim_range *r = &st->range[ob.idx];

	return ob.kind == OBJ_ACE_RD ? &r->rd_ace : ob.kind == OBJ_ACE_WR ? &r->wr_ace :
	       &r->get_ace;
}

/*
 * Half-UIDs that tag the elements of an ACE's BooleanExpr (Core Spec
 * 5.1.3.3 ACE_expression, 5.1.3.5 Boolean_ACE): written out here, not
 * taken from lib/opal, so the two sides cannot share a mistake.
 */
static const uint8_t HALF_AUTHORITY_REF[4] = { 0x00, 0x00, 0x0c, 0x05 };
static const uint8_t HALF_BOOLEAN_ACE[4] = { 0x00, 0x00, 0x04, 0x0e };
/* The authority class Admins of the Locking SP. */
static const uint8_t UID_ADMINS[8] = { 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00, 0x02 };

static bool is_half(const struct opal_token *t, const uint8_t half[4])
{
	return t->type == OPAL_ATOM_BYTES && t->len == 4 && !memcmp(t->bytes, half, 4);
}

/*
 * BooleanExpr of an ACE: a postfix expression of authority references and
 * Boolean operators. Only OR is modelled (the mask admits any of the
 * authorities named); an AND, an unknown authority or anything that is not
 * a well-formed postfix expression is refused, as firmware refuses it.
 */
static int parse_ace(int sp, const struct opal_tokens *t, size_t v, uint32_t *mask)
{
	size_t end, operands = 0;

	if (!opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST))
		return OPAL_ST_INVALID_PARAMETER;
	end = opal_tok_skip(t, v);
	if (!end)
		return OPAL_ST_INVALID_PARAMETER;
	*mask = 0;
	for (size_t i = v + 1; i + 1 < end; i += 4) {
		const struct opal_token *val = &t->tok[i + 2];
		opal_uid u;
		int a;

		if (i + 4 > end - 1 || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) ||
		    !opal_tok_is(&t->tok[i + 3], OPAL_TOK_ENDNAME))
			return OPAL_ST_INVALID_PARAMETER;
		if (is_half(&t->tok[i + 1], HALF_BOOLEAN_ACE)) {
			if (!is_uint(t, i + 2) || val->uint != 1 || operands < 2)
				return OPAL_ST_INVALID_PARAMETER;
			operands--;
			continue;
		}
		if (!is_half(&t->tok[i + 1], HALF_AUTHORITY_REF) || !uid_at(t, i + 2, &u))
			return OPAL_ST_INVALID_PARAMETER;
		if (sp == SP_LOCKING && !memcmp(u.b, UID_ADMINS, 8)) {
			*mask |= ACE_ADMINS;
		} else {
			a = auth_index(sp, &u);
			if (a < 0)
				return OPAL_ST_INVALID_PARAMETER;
			*mask |= AUTH_BIT(a);
		}
		operands++;
	}
	return operands <= 1 ? 0 : OPAL_ST_INVALID_PARAMETER;
}

static void put_ace_ref(struct opal_buf *o, const uint8_t uid[8], bool *first)
{
	opal_put_control(o, OPAL_TOK_STARTNAME);
	opal_put_bytes(o, HALF_AUTHORITY_REF, 4);
	opal_put_bytes(o, uid, 8);
	opal_put_control(o, OPAL_TOK_ENDNAME);
	if (!*first) {
		opal_put_control(o, OPAL_TOK_STARTNAME);
		opal_put_bytes(o, HALF_BOOLEAN_ACE, 4);
		opal_put_uint(o, 1);	/* OR */
		opal_put_control(o, OPAL_TOK_ENDNAME);
	}
	*first = false;
}

/* A mask back into a postfix BooleanExpr: a1 a2 OR a3 OR ... */
static void put_ace_expr(struct opal_buf *o, uint32_t mask)
{
	bool first = true;

	opal_put_control(o, OPAL_TOK_STARTLIST);
	if (mask & ACE_ADMINS)
		put_ace_ref(o, UID_ADMINS, &first);
	for (unsigned a = AUTH_ADMIN1; a < AUTH_COUNT; a++) {
		uint8_t uid[8] = { 0, 0, 0, 0x09, 0, a < AUTH_USER1 ? 0x01 : 0x03, 0, 0 };

		if (!(mask & AUTH_BIT(a)))
			continue;
		uid[7] = (uint8_t)(a < AUTH_USER1 ? a - AUTH_ADMIN1 + 1 : a - AUTH_USER1 + 1);
		put_ace_ref(o, uid, &first);
	}
	opal_put_control(o, OPAL_TOK_ENDLIST);
}

static void put_col_uint(struct opal_buf *o, unsigned first, unsigned last, unsigned col,
			 uint64_t v)
{
	if (col >= first && col <= last)
		opal_put_named_uint(o, col, v);
}

static void put_col_bytes(struct opal_buf *o, unsigned first, unsigned last, unsigned col,
			  const void *p, size_t n)
{
	if (col < first || col > last)
		return;
	opal_put_control(o, OPAL_TOK_STARTNAME);
	opal_put_uint(o, col);
	opal_put_bytes(o, p, n);
	opal_put_control(o, OPAL_TOK_ENDNAME);
}

/* A reset list column: the reset types of set (OPAL_RESET_* bits), in order. */
static void put_col_reset_list(struct opal_buf *o, unsigned first, unsigned last, unsigned col,
			       uint8_t set)
{
	if (col < first || col > last)
		return;
	opal_put_control(o, OPAL_TOK_STARTNAME);
	opal_put_uint(o, col);
	opal_put_control(o, OPAL_TOK_STARTLIST);
	for (unsigned type = 0; type < 8; type++)
		if (set & (1u << type))
			opal_put_uint(o, type);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	opal_put_control(o, OPAL_TOK_ENDNAME);
}

/* The ComPacket size a reply may have now: ours, and the host's (Properties). */
static size_t reply_limit(const struct sedsim *sim)
{
	return sim->max_compacket < sim->host_max_compacket ? sim->max_compacket :
	       sim->host_max_compacket;
}

/*
 * The most bytes of a byte table one Get can return: the ComPacket,
 * Packet and SubPacket headers and the reply's own tokens (F0, a medium
 * atom header of 2 bytes, F1, then F9 F0 00 00 00 F1) taken from the
 * reply limit, the payload padded to 4 bytes. 1982 bytes with 2048-byte
 * ComPackets.
 */
static size_t max_table_read(const struct sedsim *sim)
{
	return ((reply_limit(sim) - OPAL_FRAME_HDRS) & ~(size_t)3) - 10;
}

static int get_table_bytes(struct sedsim *sim, const struct call *c, bool mbr,
			   struct opal_buf *o)
{
	const struct opal_tokens *t = c->t;
	size_t cb = c->p0, end, i;
	uint64_t first = 0, last;
	uint8_t *tmp;
	int rc;

	last = (mbr ? SEDSIM_MBR_SIZE : SEDSIM_DATASTORE_SIZE) - 1;
	if (cb >= c->pend || !opal_tok_is(&t->tok[cb], OPAL_TOK_STARTLIST))
		return OPAL_ST_INVALID_PARAMETER;
	end = opal_tok_skip(t, cb);
	if ((i = named(t, cb + 1, end - 1, 1)) && is_uint(t, i))
		first = t->tok[i].uint;
	if ((i = named(t, cb + 1, end - 1, 2)) && is_uint(t, i))
		last = t->tok[i].uint;
	if (last < first)
		return OPAL_ST_INVALID_PARAMETER;
	if (last - first >= max_table_read(sim))
		return OPAL_ST_RESPONSE_OVERFLOW;
	tmp = malloc(last - first + 1);
	if (!tmp)
		return OPAL_ST_TPER_MALFUNCTION;
	rc = sim_table_io(sim, mbr, false, first, tmp, last - first + 1);
	if (!rc) {
		opal_put_control(o, OPAL_TOK_STARTLIST);
		opal_put_bytes(o, tmp, last - first + 1);
		opal_put_control(o, OPAL_TOK_ENDLIST);
		reply_status(o, 0);
	}
	free(tmp);
	return rc ? OPAL_ST_INVALID_PARAMETER : 0;
}

static bool wants_col(unsigned first, unsigned last, unsigned col)
{
	return col >= first && col <= last;
}

/*
 * Who may Get which columns of a C_PIN object, as the Opal SSC's ACEs say
 * (Admin SP: ACE_C_PIN_MSID_Get_PIN is Anybody for UID and PIN,
 * ACE_C_PIN_SID_Get_NOPIN is Admins OR SID for UID, CharSet, TryLimit,
 * Tries and Persistence; Locking SP: ACE_C_PIN_Admins_Get_All_NOPIN is
 * Admins for the same columns). No other PIN is ever readable, and a
 * Get that asks for a column its invoker may not read is refused whole.
 * So the tries left after a failed authentication are not readable by
 * Anybody: a host learns them in a session of an authority that may.
 */
static bool cpin_readable(const struct sim_session *s, unsigned who, unsigned first,
			  unsigned last)
{
	if (who == AUTH_ANYBODY)
		return true;
	if (wants_col(first, last, OPAL_COL_PIN))
		return false;
	if (s->sp == SP_ADMIN)
		return s->auth & AUTH_BIT(AUTH_SID);
	return is_admin(s);
}

static int do_get(struct sedsim *sim, const struct call *c, struct obj ob, struct opal_buf *o)
{
	const struct opal_tokens *t = c->t;
	struct sim_state *st = &sim->st;
	struct sim_session *s = &sim->sess;
	size_t cb = c->p0, end, i;
	unsigned first = 0, last = 0xffff;

	if (ob.kind == OBJ_MBR || ob.kind == OBJ_DATASTORE) {
		/* MBR Get: ACE_Anybody; DataStore Get: ACE_DataStore_Get_All (Admins). */
		if (ob.kind == OBJ_DATASTORE && !is_admin(s))
			return OPAL_ST_NOT_AUTHORIZED;
		return get_table_bytes(sim, c, ob.kind == OBJ_MBR, o);
	}
	if (cb >= c->pend || !opal_tok_is(&t->tok[cb], OPAL_TOK_STARTLIST))
		return OPAL_ST_INVALID_PARAMETER;
	end = opal_tok_skip(t, cb);
	if ((i = named(t, cb + 1, end - 1, 3)) && is_uint(t, i))
		first = (unsigned)(t->tok[i].uint > 0xffff ? 0xffff : t->tok[i].uint);
	if ((i = named(t, cb + 1, end - 1, 4)) && is_uint(t, i))
		last = (unsigned)(t->tok[i].uint > 0xffff ? 0xffff : t->tok[i].uint);
	if (last < first)
		return OPAL_ST_INVALID_PARAMETER;

	/* Authorization first: nothing is emitted on failure. */
	switch (ob.kind) {
	case OBJ_CPIN:
		if (!cpin_readable(s, ob.idx, first, last))
			return OPAL_ST_NOT_AUTHORIZED;
		break;
	case OBJ_LOCKING:
		/* Who may read a range is its Get_RangeStartToActiveKey ACE. */
		if (!ace_admits(st->range[ob.idx].get_ace, s))
			return OPAL_ST_NOT_AUTHORIZED;
		break;
	case OBJ_ACE_RD:
	case OBJ_ACE_WR:
	case OBJ_ACE_GET:
		if (!is_admin(s))	/* ACE_ACE_Get_All */
			return OPAL_ST_NOT_AUTHORIZED;
		break;
	case OBJ_AUTHORITY:
		if (s->sp == SP_LOCKING ? !is_admin(s) : !(s->auth & AUTH_BIT(AUTH_SID)))
			return OPAL_ST_NOT_AUTHORIZED;
		break;
	case OBJ_SP_ADMIN:
	case OBJ_SP_LOCKING:
	case OBJ_LOCKING_INFO:
	case OBJ_TABLE_MBR:
	case OBJ_TABLE_DS:
	case OBJ_MBRCTL:	/* MBRControl Get: ACE_Anybody */
		break;
	default:
		return OPAL_ST_INVALID_PARAMETER;
	}

	opal_put_control(o, OPAL_TOK_STARTLIST);
	opal_put_control(o, OPAL_TOK_STARTLIST);
	switch (ob.kind) {
	case OBJ_CPIN: {
		const struct sim_pin *p = pin_of(st, ob.idx);

		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		if (ob.idx == AUTH_ANYBODY) {	/* C_PIN_MSID: UID and PIN */
			put_col_bytes(o, first, last, OPAL_COL_PIN, p->pin, p->len);
			break;
		}
		put_col_uint(o, first, last, OPAL_COL_TRY_LIMIT, p->try_limit);
		put_col_uint(o, first, last, OPAL_COL_TRIES, p->tries);
		put_col_uint(o, first, last, 7, 0);	/* Persistence */
		break;
	}
	case OBJ_LOCKING: {
		const struct sim_range *r = &st->range[ob.idx];
		opal_uid key = opal_uid_k_aes_256(ob.idx);

		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		/* The global range reports RangeStart 0 and RangeLength 0, as drives do. */
		put_col_uint(o, first, last, OPAL_COL_RANGE_START, ob.idx ? r->start : 0);
		put_col_uint(o, first, last, OPAL_COL_RANGE_LENGTH, ob.idx ? r->length : 0);
		put_col_uint(o, first, last, OPAL_COL_READ_LOCK_ENABLED, r->rle);
		put_col_uint(o, first, last, OPAL_COL_WRITE_LOCK_ENABLED, r->wle);
		put_col_uint(o, first, last, OPAL_COL_READ_LOCKED, r->rl);
		put_col_uint(o, first, last, OPAL_COL_WRITE_LOCKED, r->wl);
		put_col_reset_list(o, first, last, OPAL_COL_LOCK_ON_RESET, r->lock_on_reset);
		put_col_bytes(o, first, last, OPAL_COL_ACTIVE_KEY, key.b, 8);
		break;
	}
	case OBJ_MBRCTL:
		put_col_uint(o, first, last, OPAL_COL_MBR_ENABLE, st->mbr_enable);
		put_col_uint(o, first, last, OPAL_COL_MBR_DONE, st->mbr_done);
		put_col_reset_list(o, first, last, OPAL_COL_MBR_DONE_ON_RESET,
				   st->mbr_done_on_reset);
		break;
	case OBJ_AUTHORITY:
		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		put_col_uint(o, first, last, OPAL_COL_AUTHORITY_ENABLED,
			     auth_enabled(st, ob.idx));
		break;
	case OBJ_ACE_RD:
	case OBJ_ACE_WR:
	case OBJ_ACE_GET:
		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		if (first <= OPAL_COL_ACE_BOOLEAN_EXPR && last >= OPAL_COL_ACE_BOOLEAN_EXPR) {
			opal_put_control(o, OPAL_TOK_STARTNAME);
			opal_put_uint(o, OPAL_COL_ACE_BOOLEAN_EXPR);
			put_ace_expr(o, *range_ace(st, ob));
			opal_put_control(o, OPAL_TOK_ENDNAME);
		}
		break;
	case OBJ_SP_ADMIN:
	case OBJ_SP_LOCKING:
		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		put_col_uint(o, first, last, OPAL_COL_SP_LIFECYCLE,
			     ob.kind == OBJ_SP_ADMIN ? OPAL_LIFECYCLE_MANUFACTURED :
			     st->lsp_lifecycle);
		break;
	case OBJ_LOCKING_INFO:
		put_col_uint(o, first, last, 4, SEDSIM_RANGES);	/* MaxRanges */
		put_col_uint(o, first, last, 5, 1);	/* MaxReEncryptions */
		/* Opal SSC LockingInfo columns 7-10: the Geometry feature's values. */
		put_col_uint(o, first, last, 7, 1);	/* AlignmentRequired */
		put_col_uint(o, first, last, 8, SEDSIM_BLOCK);	/* LogicalBlockSize */
		put_col_uint(o, first, last, 9, SIM_ALIGN_GRANULARITY);
		put_col_uint(o, first, last, 10, SIM_LOWEST_ALIGNED_LBA);
		break;
	case OBJ_TABLE_MBR:
	case OBJ_TABLE_DS:
		/*
		 * The Table table's row of a byte table (Core Spec 5.3.2.1):
		 * Rows is its size in bytes; MandatoryWriteGranularity (13)
		 * and RecommendedAccessGranularity (14), which sedutil reads
		 * before loading a PBA image. Any Where and length may be
		 * written (granularity 1); whole blocks are the efficient unit.
		 */
		put_col_bytes(o, first, last, 0, c->inv.b, 8);
		put_col_uint(o, first, last, OPAL_COL_TABLE_ROWS,
			     ob.kind == OBJ_TABLE_MBR ? SEDSIM_MBR_SIZE : SEDSIM_DATASTORE_SIZE);
		put_col_uint(o, first, last, TABLE_COL_MANDATORY_WRITE_GRANULARITY, 1);
		put_col_uint(o, first, last, TABLE_COL_RECOMMENDED_ACCESS_GRANULARITY,
			     SEDSIM_BLOCK);
		break;
	default:
		break;
	}
	opal_put_control(o, OPAL_TOK_ENDLIST);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	reply_status(o, 0);
	return 0;
}

/* ---------------------------------------------------------------- Set */

/*
 * The Geometry feature says AlignmentRequired: a range's start and length
 * must fall on the alignment grid (Opal SSC, Geometry Reporting feature),
 * or the Set fails with INVALID_PARAMETER.
 */
static bool range_aligned(const struct sim_range *r)
{
	uint64_t lowest = SIM_LOWEST_ALIGNED_LBA;

	return r->start >= lowest && (r->start - lowest) % SIM_ALIGN_GRANULARITY == 0 &&
	       r->length % SIM_ALIGN_GRANULARITY == 0;
}

static bool ranges_valid(const struct sim_state *st)
{
	for (unsigned i = 1; i <= SEDSIM_RANGES; i++) {
		const struct sim_range *a = &st->range[i];

		if (!range_aligned(a))
			return false;
		if (!a->length)
			continue;
		if (a->start > st->blocks || a->length > st->blocks - a->start)
			return false;
		for (unsigned j = i + 1; j <= SEDSIM_RANGES; j++) {
			const struct sim_range *b = &st->range[j];

			if (b->length && a->start < b->start + b->length &&
			    b->start < a->start + a->length)
				return false;
		}
	}
	return true;
}

/*
 * A reset list (LockOnReset, DoneOnReset) at token v: a set of reset types
 * (Opal SSC 3.3.5.2: 0 Power Cycle, 1 Hardware Reset, 2 HotPlug, 3
 * Programmatic). Opal SSC 4.3.5.2.2 and 4.3.5.3.1: { 0 } and { 0, 3 } are
 * mandatory, { 0, 1 } and { 0, 1, 3 } optional. This TPer has no
 * TPER_RESET, so no Programmatic reset; it takes { }, { 0 } and, unless
 * created without (sedsim_config.no_hw_reset), { 0, 1 } in either order.
 * Anything else (another type or set, a type twice, a token that is not a
 * uinteger) is INVALID_PARAMETER.
 */
static int reset_list(const struct sedsim *sim, const struct opal_tokens *t, size_t v,
		      uint8_t *on)
{
	uint32_t set = 0;
	size_t end;

	if (!opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST))
		return OPAL_ST_INVALID_PARAMETER;
	end = opal_tok_skip(t, v);
	if (!end)
		return OPAL_ST_INVALID_PARAMETER;
	for (size_t i = v + 1; i + 1 < end; i++) {
		if (!is_uint(t, i) || t->tok[i].uint > 31 || (set & (1u << t->tok[i].uint)))
			return OPAL_ST_INVALID_PARAMETER;
		set |= 1u << t->tok[i].uint;
	}
	if (set && set != OPAL_RESET_POWER_CYCLE &&
	    !(sim->hw_reset && set == (OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE)))
		return OPAL_ST_INVALID_PARAMETER;
	*on = (uint8_t)set;
	return 0;
}

static int set_column(struct sedsim *sim, struct sim_state *st, struct obj ob,
		      const struct opal_tokens *t, unsigned col, size_t v)
{
	const struct sim_session *s = &sim->sess;
	bool admin = is_admin(s);
	uint64_t u = is_uint(t, v) ? t->tok[v].uint : 0;

	switch (ob.kind) {
	case OBJ_CPIN: {
		struct sim_pin *p = pin_of(st, ob.idx);
		bool may;

		if (s->sp == SP_ADMIN)
			may = ob.idx == AUTH_SID && (s->auth & AUTH_BIT(AUTH_SID));
		else if (is_sum_owner(st, ob.idx))	/* SUM: the owner alone */
			may = s->auth & AUTH_BIT(ob.idx);
		else
			may = admin || (s->auth & AUTH_BIT(ob.idx));
		if (!may)
			return OPAL_ST_NOT_AUTHORIZED;
		if (col == OPAL_COL_PIN) {
			if (t->tok[v].type != OPAL_ATOM_BYTES || t->tok[v].len > OPAL_PIN_MAX)
				return OPAL_ST_INVALID_PARAMETER;
			memcpy(p->pin, t->tok[v].bytes, t->tok[v].len);
			p->len = (uint8_t)t->tok[v].len;
			p->tries = 0;
			return 0;
		}
		/*
		 * The C_PIN Set ACEs cover the PIN column only: TryLimit (and
		 * Tries, CharSet, Persistence) are not the host's to change.
		 */
		if (col == OPAL_COL_TRY_LIMIT || col == OPAL_COL_TRIES || col == 4 || col == 7)
			return OPAL_ST_NOT_AUTHORIZED;
		return OPAL_ST_INVALID_PARAMETER;
	}
	case OBJ_LOCKING: {
		struct sim_range *r = &st->range[ob.idx];

		if (col == OPAL_COL_READ_LOCKED || col == OPAL_COL_WRITE_LOCKED) {
			uint32_t ace = col == OPAL_COL_READ_LOCKED ? r->rd_ace : r->wr_ace;

			/* The ACE alone decides: an admin it does not name may not. */
			if (!ace_admits(ace, s))
				return OPAL_ST_NOT_AUTHORIZED;
			if (!is_uint(t, v) || u > 1)
				return OPAL_ST_INVALID_PARAMETER;
			if (col == OPAL_COL_READ_LOCKED)
				r->rl = (uint8_t)u;
			else
				r->wl = (uint8_t)u;
			return 0;
		}
		/*
		 * The other columns are the Admins' (ACE_Locking_*_Admins_*),
		 * in Single User Mode the owner's; RangeStart and RangeLength
		 * there follow RangeStartRangeLengthPolicy.
		 */
		if (in_sum(st, ob.idx)) {
			bool owner = s->auth & AUTH_BIT(SUM_OWNER(ob.idx));
			bool range_col = col == OPAL_COL_RANGE_START || col == OPAL_COL_RANGE_LENGTH;

			if ((range_col && st->sum_policy) ? !admin : !owner)
				return OPAL_ST_NOT_AUTHORIZED;
		} else if (!admin) {
			return OPAL_ST_NOT_AUTHORIZED;
		}
		switch (col) {
		case OPAL_COL_RANGE_START:
		case OPAL_COL_RANGE_LENGTH:
			if (ob.idx == 0 || !is_uint(t, v))
				return OPAL_ST_INVALID_PARAMETER;
			if (col == OPAL_COL_RANGE_START)
				r->start = u;
			else
				r->length = u;
			return 0;
		case OPAL_COL_READ_LOCK_ENABLED:
		case OPAL_COL_WRITE_LOCK_ENABLED:
			if (!is_uint(t, v) || u > 1)
				return OPAL_ST_INVALID_PARAMETER;
			if (col == OPAL_COL_READ_LOCK_ENABLED)
				r->rle = (uint8_t)u;
			else
				r->wle = (uint8_t)u;
			return 0;
		case OPAL_COL_LOCK_ON_RESET:
			return reset_list(sim, t, v, &r->lock_on_reset);
		default:
			return OPAL_ST_INVALID_PARAMETER;
		}
	}
	case OBJ_MBRCTL:
		if (!admin)
			return OPAL_ST_NOT_AUTHORIZED;
		if (col == OPAL_COL_MBR_DONE_ON_RESET)
			return reset_list(sim, t, v, &st->mbr_done_on_reset);
		if (!is_uint(t, v) || u > 1)
			return OPAL_ST_INVALID_PARAMETER;
		if (col == OPAL_COL_MBR_ENABLE)
			st->mbr_enable = (uint8_t)u;
		else if (col == OPAL_COL_MBR_DONE)
			st->mbr_done = (uint8_t)u;
		else
			return OPAL_ST_INVALID_PARAMETER;
		return 0;
	case OBJ_AUTHORITY:
		if (s->sp != SP_LOCKING || !admin || is_sum_owner(st, ob.idx))
			return OPAL_ST_NOT_AUTHORIZED;
		if (col != OPAL_COL_AUTHORITY_ENABLED || !is_uint(t, v) || u > 1)
			return OPAL_ST_INVALID_PARAMETER;
		if (ob.idx >= AUTH_USER1)
			st->user_enabled[ob.idx - AUTH_USER1] = (uint8_t)u;
		else if (ob.idx >= AUTH_ADMIN1)
			st->admin_enabled[ob.idx - AUTH_ADMIN1] = (uint8_t)u;
		return 0;
	case OBJ_ACE_RD:
	case OBJ_ACE_WR:
	case OBJ_ACE_GET: {
		uint32_t mask;
		int rc;

		/* A range in Single User Mode has fixed ACEs: its owner's. */
		if (!admin || in_sum(st, ob.idx))
			return OPAL_ST_NOT_AUTHORIZED;
		if (col != OPAL_COL_ACE_BOOLEAN_EXPR)
			return OPAL_ST_INVALID_PARAMETER;
		rc = parse_ace(s->sp, t, v, &mask);
		if (rc)
			return rc;
		*range_ace(st, ob) = mask;
		return 0;
	}
	default:
		return OPAL_ST_INVALID_PARAMETER;
	}
}

static int set_table_bytes(struct sedsim *sim, const struct call *c, bool mbr)
{
	const struct opal_tokens *t = c->t;
	size_t w = named(t, c->p0, c->pend, 0), v = named(t, c->p0, c->pend, 1);
	uint64_t off = 0;

	if (!is_admin(&sim->sess))
		return OPAL_ST_NOT_AUTHORIZED;
	if (w) {
		if (!is_uint(t, w))
			return OPAL_ST_INVALID_PARAMETER;
		off = t->tok[w].uint;
	}
	if (!v || t->tok[v].type != OPAL_ATOM_BYTES)
		return OPAL_ST_INVALID_PARAMETER;
	if (sim_table_io(sim, mbr, true, off, (void *)t->tok[v].bytes, t->tok[v].len))
		return OPAL_ST_INVALID_PARAMETER;
	return 0;
}

static int do_set(struct sedsim *sim, const struct call *c, struct obj ob)
{
	const struct opal_tokens *t = c->t;
	struct sim_state *tmp;
	size_t v, end;
	int rc = 0;

	if (ob.kind == OBJ_MBR || ob.kind == OBJ_DATASTORE)
		return set_table_bytes(sim, c, ob.kind == OBJ_MBR);
	v = named(t, c->p0, c->pend, 1);
	if (!v || !opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST))
		return OPAL_ST_INVALID_PARAMETER;
	end = opal_tok_skip(t, v);
	/* Apply to a copy, validate, then commit: a Set is all or nothing. */
	tmp = malloc(sizeof(*tmp));
	if (!tmp)
		return OPAL_ST_TPER_MALFUNCTION;
	*tmp = sim->st;
	for (size_t i = v + 1; !rc && i + 1 < end;) {
		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || !is_uint(t, i + 1) ||
		    t->tok[i + 1].uint > 0xffff) {
			rc = OPAL_ST_INVALID_PARAMETER;
			break;
		}
		rc = set_column(sim, tmp, ob, t, (unsigned)t->tok[i + 1].uint, i + 2);
		i = opal_tok_skip(t, i);
		if (!i)
			rc = OPAL_ST_INVALID_PARAMETER;
	}
	if (!rc && !ranges_valid(tmp))
		rc = OPAL_ST_INVALID_PARAMETER;
	if (!rc) {
		sim->st = *tmp;
		if (sim_save(sim))
			rc = OPAL_ST_TPER_MALFUNCTION;
	}
	explicit_bzero(tmp, sizeof(*tmp));
	free(tmp);
	return rc;
}

/* ------------------------------------------------------- Next, GetACL */

static void locking_row_uid(unsigned n, uint8_t uid[8])
{
	static const uint8_t global[8] = { 0, 0, 0x08, 0x02, 0, 0, 0, 0x01 };

	memcpy(uid, global, 8);
	if (n) {
		uid[5] = 0x03;
		uid[7] = (uint8_t)n;
	}
}

/*
 * Next on the Locking table (Core Spec 5.3.3.9; AccessControl: Anybody):
 * the UIDs of the rows after Where (from the first row without it), at
 * most Count of them, as a list. Where must name a row of the table.
 */
static int do_next(const struct call *c, struct opal_buf *o)
{
	const struct opal_tokens *t = c->t;
	unsigned from = 0;
	uint64_t count = UINT64_MAX;
	bool have_where = false, have_count = false;

	for (size_t i = c->p0; i < c->pend; i += 4) {
		opal_uid u;
		struct obj row;

		if (i + 4 > c->pend || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) ||
		    !is_uint(t, i + 1) || !opal_tok_is(&t->tok[i + 3], OPAL_TOK_ENDNAME))
			return OPAL_ST_INVALID_PARAMETER;
		if (t->tok[i + 1].uint == 0 && !have_where) {
			row = uid_at(t, i + 2, &u) ? classify(SP_LOCKING, &u) : (struct obj){ 0 };
			if (row.kind != OBJ_LOCKING)
				return OPAL_ST_INVALID_PARAMETER;
			from = row.idx + 1;
			have_where = true;
		} else if (t->tok[i + 1].uint == 1 && !have_count && is_uint(t, i + 2)) {
			count = t->tok[i + 2].uint;
			have_count = true;
		} else {
			return OPAL_ST_INVALID_PARAMETER;
		}
	}
	opal_put_control(o, OPAL_TOK_STARTLIST);
	opal_put_control(o, OPAL_TOK_STARTLIST);
	for (unsigned n = from; n <= SEDSIM_RANGES && count; n++, count--) {
		uint8_t uid[8];

		locking_row_uid(n, uid);
		opal_put_bytes(o, uid, 8);
	}
	opal_put_control(o, OPAL_TOK_ENDLIST);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	reply_status(o, 0);
	return 0;
}

#define ACL_MAX 4

struct acl {
	size_t n;
	uint8_t ace[ACL_MAX][8];
};

/* ACE UIDs: 00 00 00 08 b4 b5 b6 b7. */
static void acl_add(struct acl *a, uint8_t b5, uint8_t b6, uint8_t b7)
{
	uint8_t *u = a->ace[a->n++];

	memset(u, 0, 8);
	u[3] = 0x08;
	u[5] = b5;
	u[6] = b6;
	u[7] = b7;
}

/*
 * The ACL of an (object, method) pair, from the SSC's AccessControl
 * table preconfiguration (Opal SSC 4.2.1.5 and 4.3.1.5 and their ACE
 * tables). Only the pairs of objects and methods this TPer serves; any
 * other pair has no ACL here (INVALID_PARAMETER).
 */
static bool acl_of(int sp, const opal_uid *inv, const opal_uid *m, struct acl *a)
{
	struct obj ob = classify(sp, inv);
	bool get = opal_uid_eq(m, &OPAL_M_GET), set = opal_uid_eq(m, &OPAL_M_SET);
	unsigned n = ob.idx;

	a->n = 0;
	if (ob.kind == OBJ_THISSP && (opal_uid_eq(m, &OPAL_M_AUTHENTICATE) ||
				      opal_uid_eq(m, &OPAL_M_RANDOM)))
		acl_add(a, 0, 0, 0x01);				/* ACE_Anybody */
	else if (sp == SP_ADMIN) {
		if ((ob.kind == OBJ_SP_ADMIN || ob.kind == OBJ_SP_LOCKING) && get)
			acl_add(a, 0, 0, 0x01);
		else if ((ob.kind == OBJ_SP_ADMIN || ob.kind == OBJ_SP_LOCKING) &&
			 (opal_uid_eq(m, &OPAL_M_REVERT) || opal_uid_eq(m, &OPAL_M_ACTIVATE)))
			acl_add(a, 0x03, 0x00, 0x02);		/* ACE_SP_SID */
		else if (ob.kind == OBJ_CPIN && n == AUTH_ANYBODY && get)
			acl_add(a, 0x00, 0x8c, 0x04);		/* ACE_C_PIN_MSID_Get_PIN */
		else if (ob.kind == OBJ_CPIN && n == AUTH_SID && get)
			acl_add(a, 0x00, 0x8c, 0x02);		/* ACE_C_PIN_SID_Get_NOPIN */
		else if (ob.kind == OBJ_CPIN && n == AUTH_SID && set)
			acl_add(a, 0x00, 0x8c, 0x03);		/* ACE_C_PIN_SID_Set_PIN */
		else if (ob.kind == OBJ_AUTHORITY && get)
			acl_add(a, 0, 0, 0x01);
	} else if (ob.kind == OBJ_LOCKING && get) {
		acl_add(a, 0x03, 0xd0, (uint8_t)n);		/* ..._Get_RangeStartToActiveKey */
	} else if (ob.kind == OBJ_LOCKING && set) {
		acl_add(a, 0x03, 0xf0, n ? 0x01 : 0x00);	/* GlblRng_Admins_Set / Admins_RangeStartToLOR */
		acl_add(a, 0x03, 0xe0, (uint8_t)n);		/* ..._Set_RdLocked */
		acl_add(a, 0x03, 0xe8, (uint8_t)n);		/* ..._Set_WrLocked */
	} else if (ob.kind == OBJ_TABLE_LOCKING && !memcmp(m->b, M_NEXT, 8)) {
		acl_add(a, 0, 0, 0x01);
	} else if ((ob.kind == OBJ_LOCKING_INFO || ob.kind == OBJ_MBRCTL || ob.kind == OBJ_MBR ||
		    ob.kind == OBJ_TABLE_MBR || ob.kind == OBJ_TABLE_DS) && get) {
		acl_add(a, 0, 0, 0x01);
	} else if (ob.kind == OBJ_MBRCTL && set) {
		acl_add(a, 0x03, 0xf8, 0x00);			/* ACE_MBRControl_Admins_Set */
		acl_add(a, 0x03, 0xf8, 0x01);			/* ACE_MBRControl_Set_DoneToDOR */
	} else if (ob.kind == OBJ_MBR && set) {
		acl_add(a, 0, 0, 0x02);				/* ACE_Admin */
	} else if (ob.kind == OBJ_DATASTORE && (get || set)) {
		acl_add(a, 0x03, 0xfc, get ? 0x00 : 0x01);	/* ACE_DataStore_Get_All/Set_All */
	} else if (ob.kind == OBJ_CPIN && get) {
		acl_add(a, 0x03, 0xa0, 0x00);			/* ACE_C_PIN_Admins_Get_All_NOPIN */
	} else if (ob.kind == OBJ_CPIN && set) {
		if (n >= AUTH_USER1)
			acl_add(a, 0x03, 0xa8, (uint8_t)(n - AUTH_USER1 + 1));	/* C_PIN_UserN_Set_PIN */
		else
			acl_add(a, 0x03, 0xa0, 0x01);		/* ACE_C_PIN_Admins_Set_PIN */
	} else if (ob.kind == OBJ_AUTHORITY && (get || set)) {
		acl_add(a, 0x03, 0x90, get ? 0x00 : 0x01);	/* ACE_Authority_Get_All/Set_Enabled */
	} else if ((ob.kind == OBJ_ACE_RD || ob.kind == OBJ_ACE_WR || ob.kind == OBJ_ACE_GET) &&
		   (get || set)) {
		acl_add(a, 0x03, 0x80, get ? 0x00 : 0x01);	/* ACE_ACE_Get_All/Set_BooleanExpression */
	} else if (ob.kind == OBJ_KAES && opal_uid_eq(m, &OPAL_M_GENKEY)) {
		acl_add(a, 0x03, 0xb8, (uint8_t)n);		/* ACE_K_AES_256_RangeN_GenKey */
	} else if (ob.kind == OBJ_THISSP && opal_uid_eq(m, &OPAL_M_REVERTSP)) {
		acl_add(a, 0, 0, 0x02);				/* ACE_Admin */
	}
	return a->n > 0;
}

/*
 * GetACL on the AccessControl table (Core Spec 5.3.3.13; GetACLACL:
 * Anybody): two required parameters, InvokingID and MethodID, and the
 * ACL as a list of ACE UIDs.
 */
static int do_getacl(struct sedsim *sim, const struct call *c, struct opal_buf *o)
{
	opal_uid inv, m;
	struct acl a;

	if (c->pend != c->p0 + 2 || !uid_at(c->t, c->p0, &inv) || !uid_at(c->t, c->p0 + 1, &m) ||
	    !acl_of(sim->sess.sp, &inv, &m, &a))
		return OPAL_ST_INVALID_PARAMETER;
	opal_put_control(o, OPAL_TOK_STARTLIST);
	opal_put_control(o, OPAL_TOK_STARTLIST);
	for (size_t i = 0; i < a.n; i++)
		opal_put_bytes(o, a.ace[i], 8);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	opal_put_control(o, OPAL_TOK_ENDLIST);
	reply_status(o, 0);
	return 0;
}

/* ------------------------------------------------------------ methods */

/*
 * Activate's parameters (Opal SSC, Single User Mode feature set):
 * SingleUserModeSelectionList (0x060000), either the Locking table's UID
 * (every range) or a list of Locking objects, each once; and
 * RangeStartRangeLengthPolicy (0x060001), 0 (the user owns RangeStart and
 * RangeLength) or 1 (Admins do). Anything else, DataStoreTableSizes
 * included (this TPer has one DataStore table), is INVALID_PARAMETER.
 */
#define ACTIVATE_SUM_LIST 0x060000
#define ACTIVATE_SUM_POLICY 0x060001

static int activate_params(const struct call *c, uint16_t *sum, uint8_t *policy)
{
	const struct opal_tokens *t = c->t;
	bool have_list = false, have_policy = false;

	*sum = 0;
	*policy = 0;
	for (size_t i = c->p0; i < c->pend;) {
		size_t v = i + 2, next;

		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || !is_uint(t, i + 1) ||
		    !(next = opal_tok_skip(t, i)) || next > c->pend)
			return OPAL_ST_INVALID_PARAMETER;
		if (t->tok[i + 1].uint == ACTIVATE_SUM_LIST && !have_list) {
			opal_uid u;

			if (uid_at(t, v, &u)) {
				if (memcmp(u.b, UID_LOCKING_TABLE, 8) || v + 1 != next - 1)
					return OPAL_ST_INVALID_PARAMETER;
				*sum = (uint16_t)((1u << (1 + SEDSIM_RANGES)) - 1);
			} else {
				size_t end = opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST) ?
					     opal_tok_skip(t, v) : 0;

				if (!end || end != next - 1 || end == v + 2)
					return OPAL_ST_INVALID_PARAMETER;
				for (size_t k = v + 1; k + 1 < end; k++) {
					struct obj row = uid_at(t, k, &u) ? classify(SP_LOCKING, &u) :
							 (struct obj){ 0 };

					if (row.kind != OBJ_LOCKING || (*sum & (1u << row.idx)))
						return OPAL_ST_INVALID_PARAMETER;
					*sum |= (uint16_t)(1u << row.idx);
				}
			}
			have_list = true;
		} else if (t->tok[i + 1].uint == ACTIVATE_SUM_POLICY && !have_policy &&
			   is_uint(t, v) && t->tok[v].uint <= 1 && v + 1 == next - 1) {
			*policy = (uint8_t)t->tok[v].uint;
			have_policy = true;
		} else {
			return OPAL_ST_INVALID_PARAMETER;
		}
		i = next;
	}
	if (have_policy && !have_list)
		return OPAL_ST_INVALID_PARAMETER;	/* a policy for no range */
	return 0;
}

/*
 * Put the selected ranges in Single User Mode: range n belongs to User
 * n+1, enabled with an empty PIN; its ACEs (RdLocked, WrLocked,
 * RangeStartToActiveKey) name that user alone and are fixed.
 */
static void enter_sum(struct sim_state *st, uint16_t sum, uint8_t policy)
{
	st->sum_ranges = sum;
	st->sum_policy = policy;
	for (unsigned n = 0; n <= SEDSIM_RANGES; n++) {
		struct sim_range *r = &st->range[n];
		unsigned u = SUM_OWNER(n) - AUTH_USER1;

		if (!in_sum(st, n))
			continue;
		r->rd_ace = r->wr_ace = r->get_ace = AUTH_BIT(SUM_OWNER(n));
		st->user_enabled[u] = 1;
		explicit_bzero(st->user[u].pin, sizeof(st->user[u].pin));
		st->user[u].len = 0;
		st->user[u].tries = 0;
	}
}

/* Who may GenKey or Erase range n: Admins, or its owner in Single User Mode. */
static bool range_manager(const struct sim_state *st, const struct sim_session *s, unsigned n)
{
	return in_sum(st, n) ? (s->auth & AUTH_BIT(SUM_OWNER(n))) != 0 : is_admin(s);
}

static void revert_admin_sp(struct sedsim *sim)
{
	struct sim_state *st = &sim->st;

	/*
	 * Back to factory: SID = MSID. An active Locking SP is reverted with
	 * it, all range keys regenerated. A Locking SP already
	 * Manufactured-Inactive is not affected and no user data is removed
	 * (Opal SSC 5.1.2.2): that is how RevertSP with
	 * KeepGlobalRangeKey followed by Revert returns a drive to factory
	 * state without erasing the global range (the kernel's
	 * IOC_OPAL_REVERT_LSP with OPAL_PRESERVE, then IOC_OPAL_REVERT_TPR,
	 * as nvme-cli's sed revert does).
	 */
	st->sid.len = st->msid.len;
	memcpy(st->sid.pin, st->msid.pin, st->msid.len);
	st->sid.tries = 0;
	st->psid.tries = 0;
	if (lsp_active(st))
		sim_factory_locking_sp(st);
}

/* Named parameter of RevertSP (Opal SSC 5.1.3): KeepGlobalRangeKey, a boolean. */
#define REVERTSP_KEEP_GLOBAL_RANGE_KEY 0x060000

/* RevertSP's parameters: none, or KeepGlobalRangeKey = 0 or 1; anything else is refused. */
static int revertsp_params(const struct call *c, bool *keep)
{
	const struct opal_tokens *t = c->t;

	*keep = false;
	for (size_t i = c->p0; i < c->pend; i += 4) {
		if (i + 4 > c->pend || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) ||
		    !is_uint(t, i + 1) || t->tok[i + 1].uint != REVERTSP_KEEP_GLOBAL_RANGE_KEY ||
		    !is_uint(t, i + 2) || t->tok[i + 2].uint > 1 ||
		    !opal_tok_is(&t->tok[i + 3], OPAL_TOK_ENDNAME))
			return OPAL_ST_INVALID_PARAMETER;
		*keep = t->tok[i + 2].uint == 1;
	}
	return 0;
}

/* Read-locked and write-locked both: no way into the range's data. */
static bool range_fully_locked(const struct sim_range *r)
{
	return r->rle && r->rl && r->wle && r->wl;
}

/*
 * RevertSP on the Locking SP (Opal SSC 5.1.3): back to
 * Manufactured-Inactive, every range reset and rekeyed, except that with
 * KeepGlobalRangeKey the global range's media key (and so its data)
 * survives when the global range is read-unlocked or write-unlocked. If
 * it is both read-locked and write-locked, RevertSP with
 * KeepGlobalRangeKey fails with FAIL and changes nothing.
 */
static int revert_locking_sp(struct sedsim *sim, const struct call *c)
{
	struct sim_state *st = &sim->st;
	uint8_t key[SEDSIM_KEY_LEN];
	bool keep;
	int rc = revertsp_params(c, &keep);

	if (rc)
		return rc;
	if (keep && range_fully_locked(&st->range[0]))
		return OPAL_ST_FAIL;
	memcpy(key, st->range[0].key, sizeof(key));
	sim_factory_locking_sp(st);
	if (keep)
		memcpy(st->range[0].key, key, sizeof(key));
	explicit_bzero(key, sizeof(key));
	return 0;
}

/*
 * Erase on a Locking object (Opal SSC, Single User Mode feature set):
 * a cryptographic erase of the range and a reset of its locking. The
 * media key is regenerated and ReadLockEnabled, WriteLockEnabled,
 * ReadLocked and WriteLocked become False, so the erased range is
 * readable (as zeroes of a new key would be) and does not lock at the
 * next power cycle. RangeStart and RangeLength are not among the columns
 * Erase resets: the range keeps its place (sedutil's setup_SUM re-reads
 * them after Erase only to correct a range activation left elsewhere).
 */
static int erase_range(struct sim_range *r)
{
	if (sim_new_key(r))
		return OPAL_ST_TPER_MALFUNCTION;
	r->rle = r->wle = r->rl = r->wl = 0;
	return 0;
}

/* After Revert or RevertSP: byte tables cleared, state saved, session ended. */
static int reverted(struct sedsim *sim, struct opal_buf *o, bool *close_after)
{
	if (sim_tables_clear(sim) || sim_save(sim))
		return OPAL_ST_TPER_MALFUNCTION;
	reply_empty(o, 0);
	*close_after = true;
	return 0;
}

static int dispatch(struct sedsim *sim, const struct call *c, struct opal_buf *o,
		    bool *close_after)
{
	struct sim_session *s = &sim->sess;
	struct sim_state *st = &sim->st;
	const struct opal_tokens *t = c->t;
	struct obj ob = classify(s->sp, &c->inv);
	bool mutating = opal_uid_eq(&c->meth, &OPAL_M_SET) ||
			opal_uid_eq(&c->meth, &OPAL_M_GENKEY) ||
			opal_uid_eq(&c->meth, &OPAL_M_ACTIVATE) ||
			opal_uid_eq(&c->meth, &OPAL_M_REVERT) ||
			opal_uid_eq(&c->meth, &OPAL_M_REVERTSP) ||
			opal_uid_eq(&c->meth, &OPAL_M_ERASE);
	int rc;

	if (mutating && !s->write)
		return OPAL_ST_NOT_AUTHORIZED;

	if (opal_uid_eq(&c->meth, &OPAL_M_GET))
		return do_get(sim, c, ob, o);
	if (!memcmp(c->meth.b, M_NEXT, 8) && ob.kind == OBJ_TABLE_LOCKING)
		return do_next(c, o);
	if (!memcmp(c->meth.b, M_GETACL, 8) && ob.kind == OBJ_ACCESS_CONTROL)
		return do_getacl(sim, c, o);
	if (opal_uid_eq(&c->meth, &OPAL_M_SET)) {
		rc = do_set(sim, c, ob);
		if (!rc)
			reply_empty(o, 0);
		return rc;
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_AUTHENTICATE) && ob.kind == OBJ_THISSP) {
		opal_uid u;
		size_t ch = named(t, c->p0 + 1, c->pend, 0);
		int a;

		if (!uid_at(t, c->p0, &u) || (a = auth_index(s->sp, &u)) < 0)
			return OPAL_ST_INVALID_PARAMETER;
		if (ch && t->tok[ch].type != OPAL_ATOM_BYTES)
			return OPAL_ST_INVALID_PARAMETER;
		rc = check_pin(sim, (unsigned)a, ch ? t->tok[ch].bytes : NULL,
			       ch ? t->tok[ch].len : 0);
		if (rc == OPAL_ST_AUTHORITY_LOCKED_OUT)
			return rc;
		if (!rc)
			s->auth |= AUTH_BIT(a);
		opal_put_control(o, OPAL_TOK_STARTLIST);
		opal_put_uint(o, rc ? 0 : 1);
		opal_put_control(o, OPAL_TOK_ENDLIST);
		reply_status(o, 0);
		return 0;
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_RANDOM) && ob.kind == OBJ_THISSP) {
		uint8_t r[32];

		if (!is_uint(t, c->p0) || t->tok[c->p0].uint > sizeof(r) || sim_random(r, sizeof(r)))
			return OPAL_ST_INVALID_PARAMETER;
		opal_put_control(o, OPAL_TOK_STARTLIST);
		opal_put_bytes(o, r, (size_t)t->tok[c->p0].uint);
		opal_put_control(o, OPAL_TOK_ENDLIST);
		reply_status(o, 0);
		return 0;
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_ACTIVATE) && ob.kind == OBJ_SP_LOCKING) {
		uint16_t sum = 0;
		uint8_t policy = 0;

		if (!(s->auth & AUTH_BIT(AUTH_SID)))
			return OPAL_ST_NOT_AUTHORIZED;
		rc = activate_params(c, &sum, &policy);
		if (rc)
			return rc;
		/* On an active Locking SP, Activate succeeds and does nothing (Opal SSC 5.1.1). */
		if (!lsp_active(st)) {
			/* Admin1 of the Locking SP takes the SID's PIN. */
			st->lsp_lifecycle = OPAL_LIFECYCLE_MANUFACTURED;
			st->admin[0].len = st->sid.len;
			memcpy(st->admin[0].pin, st->sid.pin, st->sid.len);
			st->admin_enabled[0] = 1;
			enter_sum(st, sum, policy);
			if (sim_save(sim))
				return OPAL_ST_TPER_MALFUNCTION;
		}
		reply_empty(o, 0);
		return 0;
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_REVERT) && ob.kind == OBJ_SP_ADMIN) {
		if (!(s->auth & (AUTH_BIT(AUTH_SID) | AUTH_BIT(AUTH_PSID))))
			return OPAL_ST_NOT_AUTHORIZED;
		revert_admin_sp(sim);
		return reverted(sim, o, close_after);
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_REVERTSP) && ob.kind == OBJ_THISSP &&
	    s->sp == SP_LOCKING) {
		if (!is_admin(s))
			return OPAL_ST_NOT_AUTHORIZED;
		rc = revert_locking_sp(sim, c);
		if (rc)
			return rc;
		return reverted(sim, o, close_after);
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_GENKEY) && ob.kind == OBJ_KAES) {
		if (!range_manager(st, s, ob.idx))
			return OPAL_ST_NOT_AUTHORIZED;
		if (c->p0 != c->pend)
			return OPAL_ST_INVALID_PARAMETER;
		if (sim_new_key(&st->range[ob.idx]) || sim_save(sim))
			return OPAL_ST_TPER_MALFUNCTION;
		reply_empty(o, 0);
		return 0;
	}
	if (opal_uid_eq(&c->meth, &OPAL_M_ERASE) && ob.kind == OBJ_LOCKING) {
		if (!range_manager(st, s, ob.idx))
			return OPAL_ST_NOT_AUTHORIZED;
		if (c->p0 != c->pend)
			return OPAL_ST_INVALID_PARAMETER;
		rc = erase_range(&st->range[ob.idx]);
		/* In Single User Mode Erase also gives the owner its initial, empty PIN. */
		if (!rc && in_sum(st, ob.idx)) {
			struct sim_pin *p = &st->user[SUM_OWNER(ob.idx) - AUTH_USER1];

			explicit_bzero(p->pin, sizeof(p->pin));
			p->len = 0;
			p->tries = 0;
		}
		if (!rc && sim_save(sim))
			rc = OPAL_ST_TPER_MALFUNCTION;
		if (rc)
			return rc;
		reply_empty(o, 0);
		return 0;
	}
	return OPAL_ST_INVALID_PARAMETER;
}

static bool parse_call(const struct opal_tokens *t, struct call *c)
{
	size_t end;

	if (t->n < 11 || !opal_tok_is(&t->tok[0], OPAL_TOK_CALL) || !uid_at(t, 1, &c->inv) ||
	    !uid_at(t, 2, &c->meth) || !opal_tok_is(&t->tok[3], OPAL_TOK_STARTLIST))
		return false;
	end = opal_tok_skip(t, 3);
	if (!end || end + 6 > t->n || !opal_tok_is(&t->tok[end], OPAL_TOK_ENDOFDATA))
		return false;
	c->t = t;
	c->p0 = 4;
	c->pend = end - 1;
	return true;
}

static void start_session(struct sedsim *sim, const struct call *c, struct opal_buf *o)
{
	const struct opal_tokens *t = c->t;
	size_t ch = named(t, c->p0 + 3, c->pend, 0), au = named(t, c->p0 + 3, c->pend, 3);
	struct sim_session ns = { 0 };
	opal_uid sp, auth;
	int a = AUTH_ANYBODY, rc;

	/*
	 * MaxSessions is 1 and means it: while a session is open a second
	 * StartSession gets SP_BUSY (Core Spec 5.2.3.1), before any PIN is
	 * tried. The open session lasts until EndOfSession, a STACK_RESET of
	 * the ComID or a power cycle; replacing it silently would leave its
	 * host waiting for answers that never come.
	 */
	if (sim->sess.open) {
		reply_empty(o, OPAL_ST_SP_BUSY);
		return;
	}
	if (!is_uint(t, c->p0) || !uid_at(t, c->p0 + 1, &sp) || !is_uint(t, c->p0 + 2) ||
	    t->tok[c->p0].uint > UINT32_MAX) {
		reply_empty(o, OPAL_ST_INVALID_PARAMETER);
		return;
	}
	if (opal_uid_eq(&sp, &OPAL_UID_ADMINSP)) {
		ns.sp = SP_ADMIN;
	} else if (opal_uid_eq(&sp, &OPAL_UID_LOCKINGSP)) {
		ns.sp = SP_LOCKING;
		if (!lsp_active(&sim->st)) {
			reply_empty(o, OPAL_ST_INVALID_PARAMETER);
			return;
		}
	} else {
		reply_empty(o, OPAL_ST_INVALID_PARAMETER);
		return;
	}
	if (au) {
		if (!uid_at(t, au, &auth) || (a = auth_index(ns.sp, &auth)) < 0 ||
		    (ch && t->tok[ch].type != OPAL_ATOM_BYTES)) {
			reply_empty(o, OPAL_ST_INVALID_PARAMETER);
			return;
		}
		rc = check_pin(sim, (unsigned)a, ch ? t->tok[ch].bytes : NULL,
			       ch ? t->tok[ch].len : 0);
		if (rc) {
			reply_empty(o, rc);
			return;
		}
	}
	ns.open = true;
	ns.write = t->tok[c->p0 + 2].uint != 0;
	ns.hsn = (uint32_t)t->tok[c->p0].uint;
	if (sim->next_tsn < SIM_FIRST_TSN)
		sim->next_tsn = SIM_FIRST_TSN;
	ns.tsn = sim->next_tsn++;
	ns.auth = AUTH_BIT(AUTH_ANYBODY) | AUTH_BIT(a);
	sim->sess = ns;
	opal_put_call_begin(o, &OPAL_UID_SMUID, &OPAL_M_SYNCSESSION);
	opal_put_uint(o, ns.hsn);
	opal_put_uint(o, ns.tsn);
	opal_put_call_end(o, 0);
}

/*
 * Lower the host limits in host[] to what the HostProperties list at v
 * proposes (a TPer uses the smaller of the two). False when malformed.
 */
static bool take_host_props(const struct opal_tokens *t, size_t v, struct opal_prop_out *host,
			    size_t n)
{
	size_t end;

	if (!opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST))
		return false;
	end = opal_tok_skip(t, v);
	if (!end)
		return false;
	for (size_t i = v + 1; i < end - 1; i += 4) {
		const struct opal_token *name = &t->tok[i + 1];

		if (i + 4 > end - 1 || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) ||
		    name->type != OPAL_ATOM_BYTES || !is_uint(t, i + 2) ||
		    !opal_tok_is(&t->tok[i + 3], OPAL_TOK_ENDNAME))
			return false;
		for (size_t k = 0; k < n; k++) {
			uint64_t want = t->tok[i + 2].uint;

			if (name->len == strlen(host[k].name) &&
			    !memcmp(name->bytes, host[k].name, name->len) && want && want < host[k].v)
				host[k].v = want;
		}
	}
	return true;
}

/* SMUID.Properties: our limits, and the host's as we will use them. */
static void properties(struct sedsim *sim, const struct call *c, struct opal_buf *o)
{
	size_t max = sim->max_compacket;
	/* What this TPer really does: one ComPacket buffer, one session. */
	const struct opal_prop_out tper[] = {
		{ "MaxComPacketSize", max },
		{ "MaxResponseComPacketSize", max },
		{ "MaxPacketSize", max - OPAL_COMPACKET_HDR },
		{ "MaxIndTokenSize", max - OPAL_FRAME_HDRS },
		{ "MaxPackets", 1 },
		{ "MaxSubpackets", 1 },
		{ "MaxMethods", 1 },
		{ "MaxSessions", 1 },
		{ "MaxAuthentications", 2 },
		{ "MaxTransactionLimit", 0 },
	};
	struct opal_prop_out host[] = {
		{ "MaxComPacketSize", max },
		{ "MaxResponseComPacketSize", max },
		{ "MaxPacketSize", max - OPAL_COMPACKET_HDR },
		{ "MaxIndTokenSize", max - OPAL_FRAME_HDRS },
		{ "MaxPackets", 1 },
		{ "MaxSubpackets", 1 },
		{ "MaxMethods", 1 },
	};
	size_t hp = named(c->t, c->p0, c->pend, 0);	/* HostProperties */

	if (hp && !take_host_props(c->t, hp, host, sizeof(host) / sizeof(host[0]))) {
		reply_empty(o, OPAL_ST_INVALID_PARAMETER);
		return;
	}
	opal_put_call_begin(o, &OPAL_UID_SMUID, &OPAL_M_PROPERTIES);
	opal_put_prop_list(o, tper, sizeof(tper) / sizeof(tper[0]));
	if (hp) {
		opal_put_control(o, OPAL_TOK_STARTNAME);
		opal_put_uint(o, 0);
		opal_put_prop_list(o, host, sizeof(host) / sizeof(host[0]));
		opal_put_control(o, OPAL_TOK_ENDNAME);
		/* Responses from now on fit what the host takes. */
		sim->host_max_compacket = host[0].v < host[1].v ? host[0].v : host[1].v;
	}
	opal_put_call_end(o, 0);
}

/* ------------------------------------------------------------- trace */

void sedsim_set_trace(struct sedsim *sim, FILE *f)
{
	sim->trace = f;
}

static bool is_cpin_uid(const struct opal_token *t)
{
	return t->type == OPAL_ATOM_BYTES && t->len == 8 && t->bytes[2] == 0 &&
	       t->bytes[3] == 0x0b;
}

/*
 * One traced payload. In a request, the byte atoms that carry a PIN are
 * masked: the HostChallenge (name 0) of StartSession and Authenticate, and
 * the PIN column (3) of a Set on a C_PIN object.
 */
static void trace_payload(struct sedsim *sim, const char *dir, const struct opal_frame *f,
			  const uint8_t *p, size_t len, const struct opal_tokens *t)
{
	uint8_t *copy = malloc(len ? len : 1);
	bool call = t && t->n > 3 && opal_tok_is(&t->tok[0], OPAL_TOK_CALL);
	bool challenge = call && t->tok[2].type == OPAL_ATOM_BYTES && t->tok[2].len == 8 &&
			 (!memcmp(t->tok[2].bytes, OPAL_M_STARTSESSION.b, 8) ||
			  !memcmp(t->tok[2].bytes, OPAL_M_AUTHENTICATE.b, 8));
	bool cpin = call && is_cpin_uid(&t->tok[1]);

	if (!copy)
		return;
	memcpy(copy, p, len);
	for (size_t i = 0; t && i + 2 < t->n; i++) {
		const struct opal_token *v = &t->tok[i + 2];

		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || !is_uint(t, i + 1) ||
		    v->type != OPAL_ATOM_BYTES)
			continue;
		if ((challenge && t->tok[i + 1].uint == 0) ||
		    (cpin && t->tok[i + 1].uint == OPAL_COL_PIN))
			memset(copy + (v->bytes - p), 'x', v->len);
	}
	if (*dir == '>')
		fprintf(sim->trace, "> %u %u ", f->tsn, f->hsn);
	else
		fprintf(sim->trace, "< ");
	for (size_t i = 0; i < len; i++)
		fprintf(sim->trace, "%02x", copy[i]);
	fputc('\n', sim->trace);
	explicit_bzero(copy, len);
	free(copy);
}

void sim_handle_packet(struct sedsim *sim, const uint8_t *buf, size_t len)
{
	struct opal_tokens t = { sim->tok, 0, OPAL_MAX_TOKENS };
	uint8_t out[OPAL_IO_BUFFER - OPAL_FRAME_HDRS];
	struct opal_buf o;
	struct opal_frame f, rf = { 0 };
	struct call c;
	bool close_after = false, eos;
	int parse_rc;
	/* Limits in force for this exchange, before Properties changes them. */
	size_t limit = sim->max_compacket < sim->host_max_compacket ? sim->max_compacket :
		       sim->host_max_compacket;

	sim->resp_len = 0;
	if (opal_frame_parse(buf, len, &f) || !f.payload_len)
		return;
	opal_buf_init(&o, out, sizeof(out));
	if (f.comid != SEDSIM_BASE_COMID)
		return;
	eos = (f.tsn || f.hsn) && f.payload[0] == OPAL_TOK_ENDOFSESSION;
	parse_rc = eos ? 0 : opal_tokens_parse(f.payload, f.payload_len, &t);
	if (sim->trace)
		trace_payload(sim, ">", &f, f.payload, f.payload_len, eos || parse_rc ? NULL : &t);
	if (eos) {
		/*
		 * EndOfSession is the whole message: what follows it is not
		 * parsed (the kernel's sed-opal appends an unbalanced
		 * end-of-data list to it, and drives accept that).
		 */
		if (!sim->sess.open || f.tsn != sim->sess.tsn || f.hsn != sim->sess.hsn)
			return;
		opal_put_control(&o, OPAL_TOK_ENDOFSESSION);
		close_after = true;
	} else if (parse_rc || t.n == 0) {
		reply_empty(&o, OPAL_ST_INVALID_PARAMETER);
	} else if (f.tsn == 0 && f.hsn == 0) {
		/* Session manager. */
		if (!parse_call(&t, &c) || !opal_uid_eq(&c.inv, &OPAL_UID_SMUID))
			reply_empty(&o, OPAL_ST_INVALID_PARAMETER);
		else if (opal_uid_eq(&c.meth, &OPAL_M_STARTSESSION))
			start_session(sim, &c, &o);
		else if (opal_uid_eq(&c.meth, &OPAL_M_PROPERTIES))
			properties(sim, &c, &o);
		else
			reply_empty(&o, OPAL_ST_INVALID_PARAMETER);
	} else if (!sim->sess.open || f.tsn != sim->sess.tsn || f.hsn != sim->sess.hsn) {
		return;	/* no such session: the host times out, as with a real TPer */
	} else if (!parse_call(&t, &c)) {
		reply_empty(&o, OPAL_ST_INVALID_PARAMETER);
	} else {
		size_t mark = o.len;
		int rc = dispatch(sim, &c, &o, &close_after);

		if (rc) {
			o.len = mark;
			reply_empty(&o, rc);
		}
	}
	if (o.overflow || OPAL_FRAME_HDRS + ((o.len + 3) & ~(size_t)3) > limit) {
		opal_buf_init(&o, out, sizeof(out));
		reply_empty(&o, OPAL_ST_RESPONSE_OVERFLOW);
	}
	if (sim->trace)
		trace_payload(sim, "<", &f, o.data, o.len, NULL);
	rf.comid = f.comid;
	rf.tsn = f.tsn;
	rf.hsn = f.hsn;
	sim->resp_len = opal_frame_build(sim->resp, sizeof(sim->resp), &rf, o.data, o.len);
	sim->resp_comid = f.comid;
	if (close_after)
		memset(&sim->sess, 0, sizeof(sim->sess));
	explicit_bzero(out, sizeof(out));
}
