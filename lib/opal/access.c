// SPDX-License-Identifier: GPL-2.0-only
/*
 * Users and access control of the Locking SP: enabling a User authority,
 * setting its PIN, and the ACEs that say who may lock, unlock or read a
 * locking range. Each call works inside a session the caller opened, so a
 * command can batch its work in one session.
 */
#include <stdlib.h>
#include <string.h>

#include "opal.h"
#include "opal-internal.h"

/* A Boolean ACE operator: half-UID 00 00 04 0E, value 1 = OR (0 = AND). */
#define ACE_OP_OR 1

opal_uid opal_uid_ace(enum opal_ace_kind kind, unsigned range)
{
	switch (kind) {
	case OPAL_ACE_RDLOCKED:
		return opal_uid_ace_rdlocked(range);
	case OPAL_ACE_WRLOCKED:
		return opal_uid_ace_wrlocked(range);
	default:
		return opal_uid_ace_get_range(range);
	}
}

int opal_admin1_session(struct opal_dev *dev, const struct opal_key *admin,
			struct opal_session **s)
{
	opal_uid a1 = opal_uid_admin(1);

	return opal_start_session(dev, &OPAL_UID_LOCKINGSP, &a1, admin, true, s);
}

int opal_user_set_enabled(struct opal_session *s, unsigned user, bool enabled)
{
	opal_uid u = opal_uid_user(user);

	if (!user)
		return OPAL_ERR_INVAL;
	return opal_set_column_uint(s, &u, OPAL_COL_AUTHORITY_ENABLED, enabled);
}

int opal_user_get_enabled(struct opal_session *s, unsigned user, bool *enabled)
{
	opal_uid u = opal_uid_user(user);
	uint64_t v;
	int rc;

	if (!user)
		return OPAL_ERR_INVAL;
	rc = opal_get_column_uint(s, &u, OPAL_COL_AUTHORITY_ENABLED, &v);
	if (!rc)
		*enabled = v != 0;
	return rc;
}

int opal_user_set_pin(struct opal_session *s, unsigned user, const struct opal_key *pin)
{
	opal_uid c = opal_uid_c_pin_user(user);

	if (!user || pin->len > OPAL_PIN_MAX)
		return OPAL_ERR_INVAL;
	return opal_set_column_bytes(s, &c, OPAL_COL_PIN, pin->data, pin->len);
}

bool opal_ace_has(const struct opal_ace *a, const opal_uid *auth)
{
	for (size_t i = 0; i < a->n; i++)
		if (opal_uid_eq(&a->auth[i], auth))
			return true;
	return false;
}

int opal_ace_add(struct opal_ace *a, const opal_uid *auth)
{
	if (opal_ace_has(a, auth))
		return 0;
	if (a->n >= OPAL_ACE_MAX)
		return OPAL_ERR_TOO_LARGE;
	a->auth[a->n++] = *auth;
	return 0;
}

bool opal_ace_remove(struct opal_ace *a, const opal_uid *auth)
{
	for (size_t i = 0; i < a->n; i++) {
		if (opal_uid_eq(&a->auth[i], auth)) {
			memmove(&a->auth[i], &a->auth[i + 1], (a->n - i - 1) * sizeof(a->auth[0]));
			a->n--;
			return true;
		}
	}
	return false;
}

static void put_half_ref(struct opal_buf *b, const opal_uid *half)
{
	opal_put_bytes(b, half->b, 4);
}

/*
 * Set[Values = [BooleanExpr = a1 a2 OR a3 OR ...]]: the postfix form the
 * Core Spec (5.1.3.3, ACE_expression) defines, as the kernel's sed-opal
 * writes it for two authorities.
 */
void opal_put_ace_set(struct opal_buf *b, const opal_uid *ace, const struct opal_ace *a)
{
	opal_put_set_begin(b, ace);
	opal_put_control(b, OPAL_TOK_STARTNAME);
	opal_put_uint(b, OPAL_COL_ACE_BOOLEAN_EXPR);
	opal_put_control(b, OPAL_TOK_STARTLIST);
	for (size_t i = 0; i < a->n; i++) {
		opal_put_control(b, OPAL_TOK_STARTNAME);
		put_half_ref(b, &OPAL_UID_HALF_AUTHORITY_OBJ_REF);
		opal_put_uid(b, &a->auth[i]);
		opal_put_control(b, OPAL_TOK_ENDNAME);
		if (i > 0) {
			opal_put_control(b, OPAL_TOK_STARTNAME);
			put_half_ref(b, &OPAL_UID_HALF_BOOLEAN_ACE);
			opal_put_uint(b, ACE_OP_OR);
			opal_put_control(b, OPAL_TOK_ENDNAME);
		}
	}
	opal_put_control(b, OPAL_TOK_ENDLIST);
	opal_put_control(b, OPAL_TOK_ENDNAME);
	opal_put_set_end(b);
}

int opal_ace_set(struct opal_session *s, const opal_uid *ace, const struct opal_ace *a)
{
	uint8_t mem[512];
	struct opal_buf b;

	if (!a->n)
		return OPAL_ERR_INVAL;	/* an empty expression would lock everyone out */
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_ace_set(&b, ace, a);
	return opal_call_simple(s, &b);
}

static bool half_is(const struct opal_token *t, const opal_uid *half)
{
	return t->type == OPAL_ATOM_BYTES && t->len == 4 && !memcmp(t->bytes, half->b, 4);
}

int opal_ace_parse(const struct opal_tokens *t, size_t v, struct opal_ace *out)
{
	size_t end, operands = 0;

	memset(out, 0, sizeof(*out));
	if (v >= t->n || !opal_tok_is(&t->tok[v], OPAL_TOK_STARTLIST))
		return OPAL_ERR_PROTOCOL;
	end = opal_tok_skip(t, v);
	if (!end)
		return OPAL_ERR_PROTOCOL;
	/* Elements: STARTNAME half-UID value ENDNAME, then the list's ENDLIST. */
	for (size_t i = v + 1; i + 1 < end; i += 4) {
		const struct opal_token *val = &t->tok[i + 2];

		if (i + 4 > end - 1 || !opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) ||
		    !opal_tok_is(&t->tok[i + 3], OPAL_TOK_ENDNAME))
			return OPAL_ERR_PROTOCOL;
		if (half_is(&t->tok[i + 1], &OPAL_UID_HALF_AUTHORITY_OBJ_REF)) {
			if (val->type != OPAL_ATOM_BYTES || val->len != 8)
				return OPAL_ERR_PROTOCOL;
			if (out->n >= OPAL_ACE_MAX)
				return OPAL_ERR_TOO_LARGE;
			memcpy(out->auth[out->n++].b, val->bytes, 8);
			operands++;
		} else if (half_is(&t->tok[i + 1], &OPAL_UID_HALF_BOOLEAN_ACE)) {
			/* Only OR is modelled: an AND would not be "any of these". */
			if (val->type != OPAL_ATOM_UINT || val->uint != ACE_OP_OR)
				return OPAL_ERR_UNSUPPORTED;
			if (operands < 2)
				return OPAL_ERR_PROTOCOL;
			operands--;
		} else {
			return OPAL_ERR_PROTOCOL;
		}
	}
	/* A well-formed postfix expression reduces to one value (none: nobody). */
	return operands <= 1 ? 0 : OPAL_ERR_PROTOCOL;
}

int opal_ace_get(struct opal_session *s, const opal_uid *ace, struct opal_ace *out)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	size_t v;
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, ace, OPAL_COL_ACE_BOOLEAN_EXPR, OPAL_COL_ACE_BOOLEAN_EXPR, r);
	if (!rc) {
		v = opal_resp_column(r, OPAL_COL_ACE_BOOLEAN_EXPR);
		rc = v ? opal_ace_parse(&r->t, v, out) : OPAL_ERR_PROTOCOL;
	}
	free(r);
	return rc;
}

int opal_range_access(struct opal_session *s, unsigned range, struct opal_range_access *out)
{
	opal_uid rd = opal_uid_ace_rdlocked(range), wr = opal_uid_ace_wrlocked(range);
	int rc;

	rc = opal_ace_get(s, &rd, &out->rdlocked);
	if (!rc)
		rc = opal_ace_get(s, &wr, &out->wrlocked);
	return rc;
}

/* The three ACEs of a range that a user's lock control consists of. */
static const enum opal_ace_kind RANGE_ACES[] = {
	OPAL_ACE_RDLOCKED, OPAL_ACE_WRLOCKED, OPAL_ACE_GET_RANGE,
};

/*
 * Add user to, or remove it from, each ACE of the range it should (not)
 * be in, writing only the ACEs that change. Emptied ACEs go back to the
 * Admins: an ACE naming nobody would lock everyone out of that column.
 */
static int change_user(struct opal_session *s, unsigned user, unsigned range, bool add,
		       bool write)
{
	opal_uid u = opal_uid_user(user);
	int rc = 0;

	if (!user)
		return OPAL_ERR_INVAL;
	for (size_t k = 0; !rc && k < sizeof(RANGE_ACES) / sizeof(RANGE_ACES[0]); k++) {
		opal_uid ace = opal_uid_ace(RANGE_ACES[k], range);
		struct opal_ace a;
		bool changed;

		if (add && RANGE_ACES[k] == OPAL_ACE_WRLOCKED && !write)
			continue;
		rc = opal_ace_get(s, &ace, &a);
		if (rc)
			break;
		if (add) {
			changed = !opal_ace_has(&a, &u);
			if (changed)
				rc = opal_ace_add(&a, &u);
		} else {
			changed = opal_ace_remove(&a, &u);
			if (changed && !a.n)
				a.auth[a.n++] = OPAL_UID_ADMINS;
		}
		if (!rc && changed)
			rc = opal_ace_set(s, &ace, &a);
	}
	return rc;
}

int opal_grant_user(struct opal_session *s, unsigned user, unsigned range, bool write)
{
	return change_user(s, user, range, true, write);
}

int opal_revoke_user(struct opal_session *s, unsigned user, unsigned range)
{
	return change_user(s, user, range, false, false);
}
