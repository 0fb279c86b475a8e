// SPDX-License-Identifier: GPL-2.0-only
/*
 * Sessions: StartSession/SyncSession (authenticating with a HostChallenge),
 * method calls in a session (traced without arguments), Authenticate, and
 * the end of a session. The device handle is device.c's, ComPackets are
 * exchange.c's, results and table access method.c's.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "opal.h"
#include "opal-internal.h"


struct opal_session {
	struct opal_dev *dev;
	uint32_t hsn;
	uint32_t tsn;
	bool closed;		/* the TPer ended it: nothing more to send */
};

static int start_session_once(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
			      const struct opal_key *key, bool write, struct opal_session **out);

int opal_start_session(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
		       const struct opal_key *key, bool write, struct opal_session **out)
{
	int rc = start_session_once(dev, sp, auth, key, write, out);

	/*
	 * SP_BUSY: a session is open on the TPer (one a crashed host left
	 * behind, with MaxSessions 1). When allowed, reset the stack once and
	 * try again.
	 */
	if (rc == OPAL_ST_SP_BUSY && dev->reset_on_busy && !opal_stack_reset(dev))
		rc = start_session_once(dev, sp, auth, key, write, out);
	/* Authentication refused, told apart from a right the authority lacks. */
	if (rc == OPAL_ST_NOT_AUTHORIZED && auth && key)
		rc = OPAL_ERR_AUTH;
	return rc;
}

static int start_session_once(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
			      const struct opal_key *key, bool write, struct opal_session **out)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	struct opal_resp *r;
	struct opal_session *s;
	uint64_t got_hsn = 0, tsn = 0;
	uint32_t hsn;
	int rc;

	*out = NULL;
	rc = opal_ensure_comid(dev);
	if (!rc)
		rc = opal_ensure_props(dev);
	if (rc)
		return rc;
	r = calloc(1, sizeof(*r));
	if (!r)
		return OPAL_ERR_NOMEM;
	hsn = dev->next_hsn++;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_SMUID, &OPAL_M_STARTSESSION);
	opal_put_uint(&b, hsn);
	opal_put_uid(&b, sp);
	opal_put_uint(&b, write ? 1 : 0);
	if (auth && key) {
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 0);	/* HostChallenge */
		opal_put_bytes(&b, key->data, key->len);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
		opal_put_control(&b, OPAL_TOK_STARTNAME);
		opal_put_uint(&b, 3);	/* HostSigningAuthority */
		opal_put_uid(&b, auth);
		opal_put_control(&b, OPAL_TOK_ENDNAME);
	}
	opal_put_call_end(&b, 0);
	if (b.overflow) {
		rc = OPAL_ERR_INVAL;
		goto out;
	}
	rc = opal_exchange(dev, dev->send_max, 0, 0, b.data, b.len, r);
	if (rc)
		goto out;
	rc = opal_resp_parse(r);
	if (rc)
		goto out;
	if (r->status) {
		rc = r->status;
		goto out;
	}
	/* F8 SMUID SyncSession [ HostSessionID SPSessionID (optional names) ] */
	if (!r->call || !opal_uid_eq(&r->method, &OPAL_M_SYNCSESSION) || r->results != 3 ||
	    opal_resp_uint(r, 0, &got_hsn) || opal_resp_uint(r, 1, &tsn) || got_hsn != hsn ||
	    tsn == 0 || tsn > UINT32_MAX) {
		rc = OPAL_ERR_PROTOCOL;
		goto out;
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		rc = OPAL_ERR_NOMEM;
		goto out;
	}
	s->dev = dev;
	s->hsn = hsn;
	s->tsn = (uint32_t)tsn;
	*out = s;
out:
	explicit_bzero(mem, sizeof(mem));
	explicit_bzero(r, sizeof(*r));
	free(r);
	return rc;
}

int opal_end_session(struct opal_session *s)
{
	static const uint8_t eos = OPAL_TOK_ENDOFSESSION;
	struct opal_resp *r;
	int rc;

	if (!s)
		return 0;
	if (s->closed) {
		free(s);
		return 0;
	}
	r = calloc(1, sizeof(*r));
	rc = r ? opal_exchange(s->dev, s->dev->send_max, s->tsn, s->hsn, &eos, 1, r) :
		 OPAL_ERR_NOMEM;
	if (!rc && (r->raw_len < 1 || r->raw[0] != OPAL_TOK_ENDOFSESSION))
		rc = OPAL_ERR_PROTOCOL;
	free(r);
	free(s);
	return rc;
}

static int opal_session_call_untraced(struct opal_session *s, struct opal_buf *b,
				      struct opal_resp *r);

void opal_dev_set_trace(struct opal_dev *dev, FILE *f)
{
	dev->trace = f;
}

/* "call 0000000800000001.0000000600000017 -> 0x00": the UIDs of a call, never its arguments. */
static void trace_call(const struct opal_dev *dev, const struct opal_buf *b, int rc)
{
	if (!dev->trace || b->len < 19 || b->data[0] != OPAL_TOK_CALL || b->data[1] != 0xa8 ||
	    b->data[10] != 0xa8)
		return;
	fputs("opal: call ", dev->trace);
	for (int i = 2; i < 10; i++)
		fprintf(dev->trace, "%02x", b->data[i]);
	fputc('.', dev->trace);
	for (int i = 11; i < 19; i++)
		fprintf(dev->trace, "%02x", b->data[i]);
	fprintf(dev->trace, " -> %s\n", opal_strerror(rc));
}

int opal_session_call(struct opal_session *s, struct opal_buf *b, struct opal_resp *r)
{
	int rc = opal_session_call_untraced(s, b, r);

	trace_call(s->dev, b, rc);
	return rc;
}

static int opal_session_call_untraced(struct opal_session *s, struct opal_buf *b,
				      struct opal_resp *r)
{
	int rc;

	if (b->overflow)
		return OPAL_ERR_INVAL;
	rc = opal_exchange(s->dev, s->dev->send_max, s->tsn, s->hsn, b->data, b->len, r);
	if (rc)
		return rc;
	rc = opal_resp_parse(r);
	if (rc)
		return rc;
	/*
	 * Inside a session a method's reply is a plain result list; a call
	 * form is the session manager's CloseSession (the TPer aborted the
	 * session, e.g. on a timeout), never a success.
	 */
	if (r->call && opal_uid_eq(&r->method, &OPAL_M_CLOSESESSION)) {
		s->closed = true;
		return OPAL_ERR_SESSION_CLOSED;
	}
	if (r->call)
		return OPAL_ERR_PROTOCOL;
	return r->status;
}

int opal_authenticate(struct opal_session *s, const opal_uid *auth, const struct opal_key *key)
{
	uint8_t mem[OPAL_IO_BUFFER];
	struct opal_buf b;
	struct opal_resp *r = calloc(1, sizeof(*r));
	int rc;

	if (!r)
		return OPAL_ERR_NOMEM;
	opal_buf_init(&b, mem, sizeof(mem));
	opal_put_call_begin(&b, &OPAL_UID_THISSP, &OPAL_M_AUTHENTICATE);
	opal_put_uid(&b, auth);
	opal_put_control(&b, OPAL_TOK_STARTNAME);
	opal_put_uint(&b, 0);	/* Challenge */
	opal_put_bytes(&b, key->data, key->len);
	opal_put_control(&b, OPAL_TOK_ENDNAME);
	opal_put_call_end(&b, 0);
	rc = opal_session_call(s, &b, r);
	if (!rc) {
		uint64_t ok;

		/* One result, a boolean (Core Spec 5.3.4.1.1). */
		if (opal_resp_count(r) != 1 || opal_resp_uint(r, 0, &ok) || ok > 1)
			rc = OPAL_ERR_PROTOCOL;
		else if (!ok)
			rc = OPAL_ERR_AUTH;
	}
	explicit_bzero(mem, sizeof(mem));
	free(r);
	return rc;
}

void opal_session_drop(struct opal_session *s)
{
	free(s);
}

/* Room in a ComPacket of max bytes for a byte atom next to overhead bytes. */
static size_t atom_room(size_t max, size_t overhead)
{
	/* Frame headers, payload padding, other tokens, the atom's header. */
	size_t fixed = OPAL_FRAME_HDRS + 3 + overhead + 4;

	return max > fixed ? max - fixed : 0;
}

size_t opal_session_call_room(const struct opal_session *s, size_t overhead)
{
	size_t room = atom_room(s->dev->send_max, overhead);
	size_t token = s->dev->token_max > 4 ? s->dev->token_max - 4 : 0;

	return room < token ? room : token;
}

size_t opal_session_reply_room(const struct opal_session *s, size_t overhead)
{
	return atom_room(s->dev->reply_max, overhead);
}

opal_uid opal_authority_uid(unsigned who)
{
	return who == 0 ? opal_uid_admin(1) : opal_uid_user(who);
}

int opal_finish(struct opal_session *s, int rc)
{
	int end = opal_end_session(s);

	return rc ? rc : end;
}
