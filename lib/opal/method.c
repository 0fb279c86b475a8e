// SPDX-License-Identifier: GPL-2.0-only
/*
 * Method calls' results: the values of a reply, a table's columns read
 * (Get) and written (Set).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal.h"
#include "opal-internal.h"

/*
 * The results list of a reply, value by value at its own level: result k
 * is an atom or a whole list. Counting stops at a malformed list.
 */
size_t opal_resp_result(const struct opal_resp *r, size_t k)
{
	const struct opal_tokens *t = &r->t;
	size_t end, i;

	if (r->results >= t->n || !opal_tok_is(&t->tok[r->results], OPAL_TOK_STARTLIST))
		return 0;
	end = opal_tok_skip(t, r->results);
	if (!end)
		return 0;
	for (i = r->results + 1; i + 1 < end; k--) {
		const struct opal_token *x = &t->tok[i];
		size_t next;

		if (x->type == OPAL_ATOM_CONTROL && !opal_tok_is(x, OPAL_TOK_STARTLIST) &&
		    !opal_tok_is(x, OPAL_TOK_STARTNAME))
			return 0;
		if (!k)
			return i;
		next = x->type == OPAL_ATOM_CONTROL ? opal_tok_skip(t, i) : i + 1;
		if (!next || next >= end)
			return 0;
		i = next;
	}
	return 0;
}

size_t opal_resp_count(const struct opal_resp *r)
{
	size_t n = 0;

	while (opal_resp_result(r, n))
		n++;
	return n;
}

int opal_resp_uint(const struct opal_resp *r, size_t k, uint64_t *v)
{
	size_t i = opal_resp_result(r, k);

	if (!i || r->t.tok[i].type != OPAL_ATOM_UINT)
		return OPAL_ERR_PROTOCOL;
	*v = r->t.tok[i].uint;
	return 0;
}

int opal_resp_bytes(const struct opal_resp *r, size_t k, const uint8_t **p, size_t *n)
{
	size_t i = opal_resp_result(r, k);

	if (!i || r->t.tok[i].type != OPAL_ATOM_BYTES)
		return OPAL_ERR_PROTOCOL;
	*p = r->t.tok[i].bytes;
	*n = r->t.tok[i].len;
	return 0;
}

/*
 * A Get result is one row: [ [ {col value} {col value} ... ] ]. Walk the
 * row's named values at their own level (a value may itself be a list: a
 * reset list, an ACE expression), so nothing nested is taken for a column;
 * a row that is not a list of names is malformed and yields no column.
 */
size_t opal_resp_column(const struct opal_resp *r, unsigned col)
{
	const struct opal_tokens *t = &r->t;
	size_t row = r->results + 1, end;

	if (row >= t->n || !opal_tok_is(&t->tok[r->results], OPAL_TOK_STARTLIST) ||
	    !opal_tok_is(&t->tok[row], OPAL_TOK_STARTLIST))
		return 0;
	end = opal_tok_skip(t, row);
	if (!end)
		return 0;
	for (size_t i = row + 1; i + 1 < end;) {
		size_t next = opal_tok_skip(t, i), vend;

		if (!opal_tok_is(&t->tok[i], OPAL_TOK_STARTNAME) || !next || next >= end ||
		    i + 3 >= next)
			return 0;
		if (t->tok[i + 1].type == OPAL_ATOM_UINT && t->tok[i + 1].uint == col) {
			vend = opal_tok_is(&t->tok[i + 2], OPAL_TOK_STARTLIST) ?
			       opal_tok_skip(t, i + 2) : i + 3;
			return vend + 1 == next ? i + 2 : 0;
		}
		i = next;
	}
	return 0;
}

int opal_resp_column_uint(const struct opal_resp *r, unsigned col, uint64_t *v)
{
	size_t i = opal_resp_column(r, col);

	if (!i || r->t.tok[i].type != OPAL_ATOM_UINT)
		return OPAL_ERR_PROTOCOL;
	*v = r->t.tok[i].uint;
	return 0;
}

int opal_resp_column_bytes(const struct opal_resp *r, unsigned col, const uint8_t **p,
			   size_t *n)
{
	size_t i = opal_resp_column(r, col);

	if (!i || r->t.tok[i].type != OPAL_ATOM_BYTES)
		return OPAL_ERR_PROTOCOL;
	*p = r->t.tok[i].bytes;
	*n = r->t.tok[i].len;
	return 0;
}

void opal_put_get_cols(struct opal_buf *b, const opal_uid *obj, unsigned first, unsigned last)
{
	opal_put_call_begin(b, obj, &OPAL_M_GET);
	opal_put_control(b, OPAL_TOK_STARTLIST);
	opal_put_named_uint(b, 3, first);	/* startColumn */
	opal_put_named_uint(b, 4, last);	/* endColumn */
	opal_put_control(b, OPAL_TOK_ENDLIST);
	opal_put_call_end(b, 0);
}

int opal_get_columns(struct opal_session *s, const opal_uid *obj, unsigned first,
		     unsigned last, struct opal_resp *r)
{
	uint8_t mem[256];
	struct opal_buf b;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_get_cols(&b, obj, first, last);
	return opal_session_call(s, &b, r);
}

int opal_get_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col,
			 uint64_t *v)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, obj, col, col, r);
	if (!rc)
		rc = opal_resp_column_uint(r, col, v);
	free(r);
	return rc;
}

int opal_get_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  uint8_t *out, size_t cap, size_t *len)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	const uint8_t *p;
	size_t n;
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_get_columns(s, obj, col, col, r);
	if (!rc)
		rc = opal_resp_column_bytes(r, col, &p, &n);
	if (!rc && n > cap)
		rc = OPAL_ERR_PROTOCOL;
	if (!rc) {
		memcpy(out, p, n);
		*len = n;
	}
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

void opal_put_set_begin(struct opal_buf *b, const opal_uid *obj)
{
	opal_put_call_begin(b, obj, &OPAL_M_SET);
	opal_put_control(b, OPAL_TOK_STARTNAME);
	opal_put_uint(b, 1);	/* Values */
	opal_put_control(b, OPAL_TOK_STARTLIST);
}

void opal_put_set_end(struct opal_buf *b)
{
	opal_put_control(b, OPAL_TOK_ENDLIST);
	opal_put_control(b, OPAL_TOK_ENDNAME);
	opal_put_call_end(b, 0);
}

int opal_call_simple(struct opal_session *s, struct opal_buf *b)
{
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	rc = opal_session_call(s, b, r);
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

int opal_set_column_uint(struct opal_session *s, const opal_uid *obj, unsigned col, uint64_t v)
{
	uint8_t mem[256];
	struct opal_buf b;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, obj);
	opal_put_named_uint(&b, col, v);
	opal_put_set_end(&b);
	return opal_call_simple(s, &b);
}

int opal_set_column_bytes(struct opal_session *s, const opal_uid *obj, unsigned col,
			  const void *p, size_t n)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	int rc;

	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_set_begin(&b, obj);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, col);
	opal_put_bytes(&b, p, n);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_set_end(&b);
	rc = opal_call_simple(s, &b);
	explicit_bzero(mem, sizeof(mem));
	return rc;
}

int opal_resp_take_bytes(const struct opal_resp *r, void *out, size_t n)
{
	const uint8_t *got;
	size_t len;

	if (opal_resp_count(r) != 1 || opal_resp_bytes(r, 0, &got, &len) || len != n)
		return OPAL_ERR_PROTOCOL;
	memcpy(out, got, n);
	return 0;
}
