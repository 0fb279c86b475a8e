/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared between the files of lib/opal; not part of the public API. */
#ifndef FDEKIT_OPAL_INTERNAL_H
#define FDEKIT_OPAL_INTERNAL_H

#include "opal.h"

struct opal_dev {
	const struct opal_transport_ops *ops;
	void *ctx;
	int err_no;
	unsigned int timeout_ms;
	uint16_t comid;
	bool have_disc;
	struct opal_discovery disc;
	uint32_t next_hsn;
};

/* Parse r->raw into tokens, find the results list and the method status. */
int opal_resp_parse(struct opal_resp *r);
void opal_put_get_cols(struct opal_buf *b, const opal_uid *obj, unsigned first,
		       unsigned last);
int opal_get_columns(struct opal_session *s, const opal_uid *obj, unsigned first,
		     unsigned last, struct opal_resp *r);
void opal_put_set_begin(struct opal_buf *b, const opal_uid *obj);
void opal_put_set_end(struct opal_buf *b);
int opal_call_simple(struct opal_session *s, struct opal_buf *b);
/* Forget a session the TPer already closed (after Revert, RevertSP). */
void opal_session_drop(struct opal_session *s);

#endif
