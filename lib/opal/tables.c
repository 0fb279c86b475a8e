// SPDX-License-Identifier: GPL-2.0-only
/*
 * Byte tables: the shadow MBR (its control, geometry and contents) and the
 * DataStore, read and written in chunks the TPer's limits allow.
 */
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

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_mbr_read(s, m));
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
	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	return opal_finish(s, opal_mbr_set_session(s, enable, done));
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
		size_t n = table_chunk(len, room);

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
		rc = opal_resp_take_bytes(r, p, n);
		if (rc)
			break;
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

	rc = opal_admin1_session(dev, admin, &s);
	if (rc)
		return rc;
	rc = rd ? table_read(s, table, offset, rd, len) : table_write(s, table, offset, wr, len);
	return opal_finish(s, rc);
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
