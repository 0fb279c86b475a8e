// SPDX-License-Identifier: GPL-2.0-only
/* UIDs of the Opal SSC tables, objects and methods (Core Spec, Opal SSC 2.01). */
#include <string.h>

#include "opal-wire.h"

const opal_uid OPAL_UID_SMUID = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0, 0xff);
const opal_uid OPAL_UID_THISSP = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_ADMINSP = OPAL_UID_INIT(0, 0, 0x02, 0x05, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_LOCKINGSP = OPAL_UID_INIT(0, 0, 0x02, 0x05, 0, 0, 0, 0x02);
const opal_uid OPAL_UID_ANYBODY = OPAL_UID_INIT(0, 0, 0, 0x09, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_ADMINS = OPAL_UID_INIT(0, 0, 0, 0x09, 0, 0, 0, 0x02);
const opal_uid OPAL_UID_SID = OPAL_UID_INIT(0, 0, 0, 0x09, 0, 0, 0, 0x06);
const opal_uid OPAL_UID_PSID = OPAL_UID_INIT(0, 0, 0, 0x09, 0, 0x01, 0xff, 0x01);
const opal_uid OPAL_UID_C_PIN_MSID = OPAL_UID_INIT(0, 0, 0, 0x0b, 0, 0, 0x84, 0x02);
const opal_uid OPAL_UID_C_PIN_SID = OPAL_UID_INIT(0, 0, 0, 0x0b, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_C_PIN_PSID = OPAL_UID_INIT(0, 0, 0, 0x0b, 0, 0x01, 0xff, 0x01);
const opal_uid OPAL_UID_LOCKING_INFO = OPAL_UID_INIT(0, 0, 0x08, 0x01, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_MBRCONTROL = OPAL_UID_INIT(0, 0, 0x08, 0x03, 0, 0, 0, 0x01);
const opal_uid OPAL_UID_MBR = OPAL_UID_INIT(0, 0, 0x08, 0x04, 0, 0, 0, 0);
const opal_uid OPAL_UID_DATASTORE = OPAL_UID_INIT(0, 0, 0x10, 0x01, 0, 0, 0, 0);
const opal_uid OPAL_UID_TABLE_MBR = OPAL_UID_INIT(0, 0, 0, 0x01, 0, 0, 0x08, 0x04);
const opal_uid OPAL_UID_TABLE_DATASTORE = OPAL_UID_INIT(0, 0, 0, 0x01, 0, 0, 0x10, 0x01);
const opal_uid OPAL_UID_HALF_AUTHORITY_OBJ_REF = OPAL_UID_INIT(0, 0, 0x0c, 0x05, 0, 0, 0, 0);
const opal_uid OPAL_UID_HALF_BOOLEAN_ACE = OPAL_UID_INIT(0, 0, 0x04, 0x0e, 0, 0, 0, 0);

const opal_uid OPAL_M_PROPERTIES = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0xff, 0x01);
const opal_uid OPAL_M_STARTSESSION = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0xff, 0x02);
const opal_uid OPAL_M_SYNCSESSION = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0xff, 0x03);
const opal_uid OPAL_M_CLOSESESSION = OPAL_UID_INIT(0, 0, 0, 0, 0, 0, 0xff, 0x06);
const opal_uid OPAL_M_NEXT = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x08);
const opal_uid OPAL_M_GETACL = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x0d);
const opal_uid OPAL_M_GENKEY = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x10);
const opal_uid OPAL_M_REVERTSP = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x11);
const opal_uid OPAL_M_GET = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x16);
const opal_uid OPAL_M_SET = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x17);
const opal_uid OPAL_M_AUTHENTICATE = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0, 0x1c);
const opal_uid OPAL_M_RANDOM = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0x06, 0x01);
const opal_uid OPAL_M_REVERT = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0x02, 0x02);
const opal_uid OPAL_M_ACTIVATE = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0x02, 0x03);
const opal_uid OPAL_M_ERASE = OPAL_UID_INIT(0, 0, 0, 0x06, 0, 0, 0x08, 0x03);

static opal_uid uid_with_index(uint8_t b2, uint8_t b3, uint8_t b5, uint8_t b6, unsigned n)
{
	opal_uid u = OPAL_UID_INIT(0, 0, b2, b3, 0, b5, b6, 0);

	/* Index into the table's row block (n fits in 16 bits in practice). */
	u.b[6] = (uint8_t)(b6 + (n >> 8));
	u.b[7] = (uint8_t)n;
	return u;
}

opal_uid opal_uid_admin(unsigned n)
{
	return uid_with_index(0, 0x09, 0x01, 0, n);
}

opal_uid opal_uid_user(unsigned n)
{
	return uid_with_index(0, 0x09, 0x03, 0, n);
}

opal_uid opal_uid_c_pin_admin(unsigned n)
{
	return uid_with_index(0, 0x0b, 0x01, 0, n);
}

opal_uid opal_uid_c_pin_user(unsigned n)
{
	return uid_with_index(0, 0x0b, 0x03, 0, n);
}

opal_uid opal_uid_locking_range(unsigned n)
{
	if (n == 0)
		return (opal_uid)OPAL_UID_INIT(0, 0, 0x08, 0x02, 0, 0, 0, 0x01);
	return uid_with_index(0x08, 0x02, 0x03, 0, n);
}

opal_uid opal_uid_k_aes_256(unsigned n)
{
	if (n == 0)
		return (opal_uid)OPAL_UID_INIT(0, 0, 0x08, 0x06, 0, 0, 0, 0x01);
	return uid_with_index(0x08, 0x06, 0x03, 0, n);
}

/*
 * The ACEs of a locking range: byte 7 is the range number, 0 for the global
 * range (Opal SSC 2.01, 4.3.1.6: ACE_Locking_GlobalRange_Set_RdLocked is
 * 00 00 00 08 00 03 E0 00, ACE_Locking_Range1_Set_RdLocked ... E0 01; the
 * kernel's add_user_to_lr writes the range into byte 7 the same way).
 */
opal_uid opal_uid_ace_rdlocked(unsigned n)
{
	return uid_with_index(0, 0x08, 0x03, 0xe0, n);
}

opal_uid opal_uid_ace_wrlocked(unsigned n)
{
	return uid_with_index(0, 0x08, 0x03, 0xe8, n);
}

/* ACE_Locking_RangeN_Get_RangeStartToActiveKey: who may read the range. */
opal_uid opal_uid_ace_get_range(unsigned n)
{
	return uid_with_index(0, 0x08, 0x03, 0xd0, n);
}

bool opal_uid_eq(const opal_uid *a, const opal_uid *b)
{
	return memcmp(a->b, b->b, sizeof(a->b)) == 0;
}
