/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lib/opal: the TCG Storage protocol (Core Spec 2.01, Opal SSC 2.01).
 *
 * Layers, bottom to top:
 *   transport  (struct opal_transport_ops: IF-SEND / IF-RECV, or kernel ioctls)
 *   stream     (token encoder/decoder, ComPacket/Packet/SubPacket framing)
 *   session    (Properties, StartSession/SyncSession, method calls, end of session)
 *   operations (take ownership, activate, ranges, lock/unlock, MBR, revert, ...)
 *
 * This header is the public API: errors, UIDs of the objects a caller names,
 * Level 0 Discovery, transports, sessions, and the operations. The stream
 * layer (tokens, framing, method UIDs, table columns, raw calls) is in
 * opal-wire.h, shared with the device side (sedsim), the tests and the
 * fuzz targets. No process-global state: every call takes its context
 * explicitly.
 */
#ifndef FDEKIT_OPAL_H
#define FDEKIT_OPAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ---------------------------------------------------------------- errors */

/*
 * Every function returns 0 on success or a positive code: 0x01..0x3f are the
 * TCG method status codes as the device returned them, the rest are ours.
 */
enum opal_status {
	OPAL_ST_SUCCESS = 0x00,
	OPAL_ST_NOT_AUTHORIZED = 0x01,
	OPAL_ST_OBSOLETE = 0x02,
	OPAL_ST_SP_BUSY = 0x03,
	OPAL_ST_SP_FAILED = 0x04,
	OPAL_ST_SP_DISABLED = 0x05,
	OPAL_ST_SP_FROZEN = 0x06,
	OPAL_ST_NO_SESSIONS_AVAILABLE = 0x07,
	OPAL_ST_UNIQUENESS_CONFLICT = 0x08,
	OPAL_ST_INSUFFICIENT_SPACE = 0x09,
	OPAL_ST_INSUFFICIENT_ROWS = 0x0a,
	OPAL_ST_INVALID_PARAMETER = 0x0c,
	OPAL_ST_TPER_MALFUNCTION = 0x0f,
	OPAL_ST_TRANSACTION_FAILURE = 0x10,
	OPAL_ST_RESPONSE_OVERFLOW = 0x11,
	OPAL_ST_AUTHORITY_LOCKED_OUT = 0x12,
	OPAL_ST_FAIL = 0x3f,

	OPAL_ERR_PROTOCOL = 0x100,	/* malformed, truncated or oversized data */
	OPAL_ERR_TRANSPORT,		/* the transport failed (errno kept in dev) */
	OPAL_ERR_TIMEOUT,		/* the device did not answer in time */
	OPAL_ERR_UNSUPPORTED,		/* device or transport lacks the feature */
	OPAL_ERR_AUTH,			/* Authenticate returned False */
	OPAL_ERR_INVAL,			/* bad argument from the caller */
	OPAL_ERR_NOMEM,
	OPAL_ERR_NOT_OPAL,		/* no Opal SSC in Level 0 Discovery */
	OPAL_ERR_TOO_LARGE,		/* call larger than the TPer accepts: not sent */
	OPAL_ERR_SESSION_CLOSED,	/* the TPer ended the session (CloseSession) */
};

/* "authentication failed", "malformed response", ... never NULL. */
const char *opal_strerror(int err);

/* ------------------------------------------------------------------ UIDs */

typedef struct {
	uint8_t b[8];
} opal_uid;

#define OPAL_UID_INIT(a, b, c, d, e, f, g, h) {{ a, b, c, d, e, f, g, h }}

extern const opal_uid OPAL_UID_SMUID, OPAL_UID_THISSP, OPAL_UID_ADMINSP,
	OPAL_UID_LOCKINGSP, OPAL_UID_ANYBODY, OPAL_UID_ADMINS, OPAL_UID_SID, OPAL_UID_PSID,
	OPAL_UID_C_PIN_MSID, OPAL_UID_C_PIN_SID, OPAL_UID_C_PIN_PSID,
	OPAL_UID_LOCKING_INFO, OPAL_UID_MBRCONTROL, OPAL_UID_MBR,
	OPAL_UID_DATASTORE, OPAL_UID_TABLE_MBR, OPAL_UID_TABLE_DATASTORE,
	OPAL_UID_HALF_AUTHORITY_OBJ_REF, OPAL_UID_HALF_BOOLEAN_ACE;


opal_uid opal_uid_admin(unsigned n);		/* Admin1..4 (n >= 1) */
opal_uid opal_uid_user(unsigned n);		/* User1..N (n >= 1) */
opal_uid opal_uid_c_pin_admin(unsigned n);
opal_uid opal_uid_c_pin_user(unsigned n);
opal_uid opal_uid_locking_range(unsigned n);	/* 0 = global range */
opal_uid opal_uid_k_aes_256(unsigned n);	/* 0 = global range */
/* Range ACEs, n = range (0 = global): Set_RdLocked, Set_WrLocked, Get_RangeStartToActiveKey. */
opal_uid opal_uid_ace_rdlocked(unsigned n);
opal_uid opal_uid_ace_wrlocked(unsigned n);
opal_uid opal_uid_ace_get_range(unsigned n);
bool opal_uid_eq(const opal_uid *a, const opal_uid *b);


#define OPAL_LIFECYCLE_MANUFACTURED_INACTIVE 0x08
#define OPAL_LIFECYCLE_MANUFACTURED 0x09


/* ------------------------------------------------- Level 0 Discovery */

enum opal_feature_code {
	OPAL_FC_TPER = 0x0001,
	OPAL_FC_LOCKING = 0x0002,
	OPAL_FC_GEOMETRY = 0x0003,
	OPAL_FC_ENTERPRISE = 0x0100,
	OPAL_FC_OPAL1 = 0x0200,
	OPAL_FC_SUM = 0x0201,
	OPAL_FC_DATASTORE = 0x0202,
	OPAL_FC_OPAL2 = 0x0203,
	OPAL_FC_OPALITE = 0x0301,
	OPAL_FC_PYRITE1 = 0x0302,
	OPAL_FC_PYRITE2 = 0x0303,
	OPAL_FC_RUBY = 0x0304,
	OPAL_FC_BLOCK_SID = 0x0402,
};

enum opal_locking_flags {
	OPAL_LF_SUPPORTED = 0x01,
	OPAL_LF_ENABLED = 0x02,
	OPAL_LF_LOCKED = 0x04,
	OPAL_LF_MEDIA_ENCRYPTION = 0x08,
	OPAL_LF_MBR_ENABLED = 0x10,
	OPAL_LF_MBR_DONE = 0x20,
};

struct opal_discovery {
	uint32_t revision;
	bool tper, locking, geometry, enterprise, opal1, opal2, sum, datastore;
	bool opalite, pyrite1, pyrite2, ruby, block_sid;
	bool sid_value_state;		/* Block SID: the SID PIN is not the MSID (owned) */
	bool sid_blocked;		/* Block SID: SID authentication blocked until reset */
	bool sid_block_hw_reset;	/* ... and a hardware reset clears the block */
	/*
	 * Locking feature (version 3, Opal SSC 2.02 on) byte 4 bit 7: the
	 * drive takes Hardware Reset in LockOnReset and DoneOnReset.
	 */
	bool lock_on_reset_hw;
	uint8_t tper_flags;
	uint8_t locking_flags;
	bool geo_align;
	uint32_t logical_block_size;
	uint64_t alignment_granularity;
	uint64_t lowest_aligned_lba;
	uint16_t base_comid;		/* of the SSC found (Opal 2 preferred) */
	uint16_t num_comids;
	uint8_t range_crossing;
	uint16_t admin_auths;
	uint16_t user_auths;
	uint8_t initial_pin;
	uint8_t revert_pin;
	uint32_t sum_locking_objects;
	uint16_t ds_max_tables;
	uint32_t ds_max_size;
	uint32_t ds_alignment;
};

int opal_discovery_parse(const uint8_t *buf, size_t len, struct opal_discovery *d);
/* "Opal 2", "Opal 1", "Pyrite 2", ..., or NULL when no known SSC. */
const char *opal_discovery_ssc(const struct opal_discovery *d);

/* ------------------------------------------------------------ transport */

#define OPAL_SERIAL_MAX 20

struct opal_transport_ops {
	const char *name;
	/* IF-SEND / IF-RECV (TRUSTED SEND/RECEIVE, SECURITY PROTOCOL OUT/IN). */
	int (*if_send)(void *ctx, uint8_t protocol, uint16_t sp_specific,
		       const void *buf, size_t len);
	int (*if_recv)(void *ctx, uint8_t protocol, uint16_t sp_specific,
		       void *buf, size_t len);
	/* Drive serial number as reported (space padded), for sedutil hashing. */
	int (*serial)(void *ctx, char serial[OPAL_SERIAL_MAX]);
	void (*close)(void *ctx);
};

struct opal_dev;

/* Takes ownership of ctx (ops->close is called by opal_dev_free). */
struct opal_dev *opal_dev_new(const struct opal_transport_ops *ops, void *ctx);
void opal_dev_free(struct opal_dev *dev);
int opal_dev_errno(const struct opal_dev *dev);
/* Milliseconds to wait for a response before OPAL_ERR_TIMEOUT (default 10 s). */
void opal_dev_set_timeout(struct opal_dev *dev, unsigned int ms);
int opal_dev_serial(struct opal_dev *dev, char serial[OPAL_SERIAL_MAX]);
const char *opal_dev_transport(const struct opal_dev *dev);

/* Transports. Each returns 0 and *out or an opal error (errno in *err_no). */
int opal_open_nvme(const char *path, struct opal_dev **out, int *err_no);
int opal_open_sg(const char *path, struct opal_dev **out, int *err_no);

/*
 * The NVMe transport's calls into libnvme, replaceable so tests can run the
 * whole transport against the simulator (QEMU's NVMe lacks Security Send).
 */
struct nvme_security_send_args;
struct nvme_security_receive_args;
struct nvme_id_ctrl;
struct opal_nvme_seam {
	int (*security_send)(struct nvme_security_send_args *args);
	int (*security_receive)(struct nvme_security_receive_args *args);
	int (*identify_ctrl)(int fd, struct nvme_id_ctrl *id);
};
/* fd is owned (closed by opal_dev_free) when >= 0; seam NULL = libnvme. */
int opal_nvme_from_fd(int fd, const struct opal_nvme_seam *seam, struct opal_dev **out);

/* ---------------------------------------------------------------- keys */

struct opal_key {
	const uint8_t *data;
	size_t len;
};

#define OPAL_PIN_MAX 32
#define OPAL_SEDUTIL_ITERATIONS 75000

/* sedutil-cli's PIN: PBKDF2-HMAC-SHA1(password, serial[20], 75000) -> 32 bytes. */
int opal_hash_sedutil(const uint8_t *pw, size_t pwlen, const char serial[OPAL_SERIAL_MAX],
		      uint8_t out[32]);
#define OPAL_SEDUTIL512_ITERATIONS 500000
/* The maintained sedutil fork's: PBKDF2-HMAC-SHA512(password, serial[20], 500000). */
int opal_hash_sedutil512(const uint8_t *pw, size_t pwlen, const char serial[OPAL_SERIAL_MAX],
			 uint8_t out[32]);

/* ---------------------------------------------------------- properties */

/*
 * Session Manager Properties (Core Spec 5.2.2.1): what the TPer can receive
 * and send, and which of the host's proposed limits it will use. The
 * session layer exchanges them once per device, before the first session,
 * and from then on sends no ComPacket, and no token, larger than the TPer
 * accepts; a TPer that refuses Properties gets the Opal SSC minimum sizes
 * (2048-byte ComPackets).
 */
enum opal_prop {
	OPAL_PROP_MAX_COMPACKET_SIZE,
	OPAL_PROP_MAX_RESPONSE_COMPACKET_SIZE,
	OPAL_PROP_MAX_PACKET_SIZE,
	OPAL_PROP_MAX_IND_TOKEN_SIZE,
	OPAL_PROP_MAX_AGG_TOKEN_SIZE,
	OPAL_PROP_MAX_PACKETS,
	OPAL_PROP_MAX_SUBPACKETS,
	OPAL_PROP_MAX_METHODS,
	OPAL_PROP_MAX_SESSIONS,
	OPAL_PROP_MAX_READ_SESSIONS,
	OPAL_PROP_MAX_AUTHENTICATIONS,
	OPAL_PROP_MAX_TRANSACTION_LIMIT,
	OPAL_PROP_DEF_SESSION_TIMEOUT,
	OPAL_PROP_MAX_SESSION_TIMEOUT,
	OPAL_PROP_MIN_SESSION_TIMEOUT,
	OPAL_PROP_DEF_TRANS_TIMEOUT,
	OPAL_PROP_MAX_TRANS_TIMEOUT,
	OPAL_PROP_MIN_TRANS_TIMEOUT,
	OPAL_PROP_MAX_COMID_TIME,
	OPAL_PROP_CONTINUED_TOKENS,
	OPAL_PROP_SEQUENCE_NUMBERS,
	OPAL_PROP_ACK_NAK,
	OPAL_PROP_ASYNCHRONOUS,
	OPAL_PROP_KNOWN,	/* how many names this library knows */
};

/* The name on the wire ("MaxComPacketSize"), or NULL outside the enum. */
const char *opal_prop_name(enum opal_prop p);

/* Limits of a reply: more pairs in one list, or a longer name, is malformed. */
#define OPAL_PROPS_MAX 48
#define OPAL_PROP_NAME_MAX 32

struct opal_prop_pair {
	char name[OPAL_PROP_NAME_MAX + 1];	/* printable ASCII, NUL-terminated */
	uint64_t value;
};

/* One list of properties: every pair in the TPer's order, known names by index. */
struct opal_prop_list {
	size_t n;
	struct opal_prop_pair pair[OPAL_PROPS_MAX];
	uint64_t value[OPAL_PROP_KNOWN];
	uint32_t present;	/* bit p set: value[p] came in the list */
};

/* A known property from the list: false when the TPer did not report it. */
bool opal_prop_get(const struct opal_prop_list *l, enum opal_prop p, uint64_t *v);

struct opal_props {
	struct opal_prop_list tper;
	bool have_host;			/* the reply carried HostProperties */
	struct opal_prop_list host;	/* the host limits the TPer will use */
};

/* What the host proposes; 0 leaves a property out, all 0 sends no HostProperties. */
struct opal_host_props {
	uint32_t max_compacket_size;
	uint32_t max_response_compacket_size;
	uint32_t max_packet_size;
	uint32_t max_ind_token_size;
	uint32_t max_packets;
	uint32_t max_subpackets;
	uint32_t max_methods;
};

/* This library's receive limits: one OPAL_IO_BUFFER ComPacket, one method. */
extern const struct opal_host_props OPAL_HOST_PROPS_DEFAULT;

/*
 * SMUID.Properties[HostProperties = host] (host NULL: the default). On
 * success the session layer of dev adopts the limits of the reply. Returns
 * the method status when the TPer refuses, OPAL_ERR_PROTOCOL for a
 * malformed reply, OPAL_ERR_INVAL when host proposes more than this library
 * can receive.
 */
int opal_properties(struct opal_dev *dev, const struct opal_host_props *host,
		    struct opal_props *out);

/* ------------------------------------------------------------ sessions */

struct opal_session;

int opal_discovery0(struct opal_dev *dev, struct opal_discovery *d);
int opal_discovery0_raw(struct opal_dev *dev, uint8_t *buf, size_t cap, size_t *len);

/*
 * StartSession on sp, authenticating as auth with key (auth NULL: Anybody,
 * read-only). Returns 0 and a session or an error; the session must be ended
 * with opal_end_session. The TPer's NOT_AUTHORIZED to a StartSession that
 * authenticates is OPAL_ERR_AUTH, as Authenticate's False: the key (or the
 * authority: disabled) was refused, and a try counted. NOT_AUTHORIZED from
 * any later call means the authority signed in but lacks the right (its ACE
 * does not name it): no try is counted for that.
 */
int opal_start_session(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
		       const struct opal_key *key, bool write, struct opal_session **out);
int opal_end_session(struct opal_session *s);
/*
 * Stack Reset (ComID management, protocol 2): the TPer aborts every open
 * session and pending response on our ComID. 0, OPAL_ST_FAIL when the TPer
 * reports failure, or a transport/protocol error.
 */
int opal_stack_reset(struct opal_dev *dev);
/* Forget a session the TPer already ended (Revert, a Stack Reset): sends nothing. */
void opal_session_drop(struct opal_session *s);
/*
 * Write one line per method call in a session to f ("opal: call INVOKING.
 * METHOD -> status"): UIDs and results only, never arguments (PINs). NULL
 * stops it.
 */
void opal_dev_set_trace(struct opal_dev *dev, FILE *f);
/* Let opal_start_session reset the stack once when the TPer answers SP_BUSY. */
void opal_dev_set_reset_on_busy(struct opal_dev *dev, bool on);
int opal_authenticate(struct opal_session *s, const opal_uid *auth, const struct opal_key *key);

/* ---------------------------------------------------------- operations */

/*
 * Reset types (Core Spec reset_types; Opal SSC 3.3.5.2, Table 16) as bits
 * of a LockOnReset or DoneOnReset set: bit n is enumeration value n.
 */
#define OPAL_RESET_POWER_CYCLE (1u << 0)
#define OPAL_RESET_HARDWARE (1u << 1)
#define OPAL_RESET_HOTPLUG (1u << 2)
#define OPAL_RESET_PROGRAMMATIC (1u << 3)

struct opal_range {
	unsigned n;			/* 0 = global */
	uint64_t start;
	uint64_t length;
	bool read_lock_enabled;
	bool write_lock_enabled;
	bool read_locked;
	bool write_locked;
	bool lock_on_reset;		/* Power Cycle is in LockOnReset */
	bool lock_on_reset_known;	/* read from the drive (no kernel ioctl reads it) */
	/*
	 * LockOnReset as OPAL_RESET_* bits. Read: what the drive holds (types
	 * above 31 are not kept). Written: this set when not 0, else
	 * { Power Cycle } when lock_on_reset, else { }.
	 */
	uint32_t lock_on_reset_types;
};

enum opal_lock_state {
	OPAL_UNLOCKED_RW,
	OPAL_UNLOCKED_RO,	/* read allowed, write locked */
	OPAL_LOCKED,
};

struct opal_mbr_state {
	bool enable;
	bool done;
};

int opal_get_msid(struct opal_dev *dev, uint8_t *pin, size_t cap, size_t *len);
/* SID PIN := newkey, authenticated with the MSID. */
int opal_take_ownership(struct opal_dev *dev, const struct opal_key *newkey);
/* Activate the Locking SP (Admin1 PIN becomes the SID PIN). */
int opal_activate_locking_sp(struct opal_dev *dev, const struct opal_key *sid);
/*
 * The same in Single User Mode for the n ranges given: range r then belongs
 * to User r+1, who starts with an empty PIN and alone may lock, unlock and
 * configure it (Admin1 cannot). OPAL_ERR_INVAL when the Locking SP is
 * already active (the mode is chosen at activation only).
 */
int opal_activate_locking_sp_sum(struct opal_dev *dev, const struct opal_key *sid,
				 const unsigned *sum_ranges, size_t n);
int opal_locking_sp_lifecycle(struct opal_dev *dev, uint64_t *lc);
/* Set a C_PIN in sp as auth, e.g. Admin1 changing its own key. */
int opal_set_pin(struct opal_dev *dev, const opal_uid *sp, const opal_uid *auth,
		 const struct opal_key *key, const opal_uid *cpin,
		 const struct opal_key *newkey);
int opal_setup_range(struct opal_dev *dev, const struct opal_key *admin,
		     const struct opal_range *r);
/* The same Set in an open session (Admin1, or a Single User Mode owner). */
int opal_range_setup_session(struct opal_session *s, const struct opal_range *r);
int opal_get_range(struct opal_dev *dev, const struct opal_key *admin, unsigned n,
		   struct opal_range *r);
/* The range's columns, read in an open session (Admin1, or a user its ACE names). */
int opal_range_read(struct opal_session *s, unsigned n, struct opal_range *r);
/* ReadLockEnabled and WriteLockEnabled of a range, in an open Admin1 session. */
int opal_range_lock_enable(struct opal_session *s, unsigned range, bool read_enabled,
			   bool write_enabled);
/* Locking SP session as who (0 = Admin1, n = UserN), for opal_set_lock. */
int opal_lock_session(struct opal_dev *dev, unsigned who, const struct opal_key *key,
		      struct opal_session **s);
int opal_set_lock(struct opal_session *s, unsigned range, enum opal_lock_state st);
/* who: 0 = Admin1, n = Usern. One session: opal_lock_session + opal_set_lock. */
int opal_lock_unlock(struct opal_dev *dev, unsigned who, const struct opal_key *key,
		     unsigned range, enum opal_lock_state st);
int opal_mbr_get(struct opal_dev *dev, const struct opal_key *admin,
		 struct opal_mbr_state *m);
/* MBRControl's Enable and Done in an open session. */
int opal_mbr_read(struct opal_session *s, struct opal_mbr_state *m);
/* enable/done: 0 or 1 to set, -1 to leave alone. */
int opal_mbr_set_session(struct opal_session *s, int enable, int done);
int opal_mbr_set(struct opal_dev *dev, const struct opal_key *admin, int enable, int done);
int opal_mbr_write(struct opal_dev *dev, const struct opal_key *admin, uint64_t offset,
		   const void *buf, size_t len);
/*
 * The MBR table's size (its Table row's Rows, in bytes) and
 * MandatoryWriteGranularity (1 when the drive does not report one).
 */
int opal_mbr_geometry(struct opal_session *s, uint64_t *rows, uint64_t *granularity);
/* Write MBR bytes in an open Admin1 session; offset and len multiples of granularity. */
int opal_mbr_write_session(struct opal_session *s, uint64_t offset, const void *buf, size_t len,
			   uint64_t granularity);
int opal_erase_range(struct opal_dev *dev, const struct opal_key *admin, unsigned range);
int opal_revert_tper(struct opal_dev *dev, const struct opal_key *sid);
int opal_psid_revert(struct opal_dev *dev, const struct opal_key *psid);
/*
 * RevertSP of the Locking SP as Admin1: back to Manufactured-Inactive, users
 * and ranges reset. keep_global: KeepGlobalRangeKey, the global range's
 * media key (and so its data) survives.
 */
int opal_revert_locking_sp(struct opal_dev *dev, const struct opal_key *admin, bool keep_global);
int opal_random(struct opal_dev *dev, void *buf, size_t len);
int opal_datastore_read(struct opal_dev *dev, const struct opal_key *admin,
			uint64_t offset, void *buf, size_t len);
int opal_datastore_write(struct opal_dev *dev, const struct opal_key *admin,
			 uint64_t offset, const void *buf, size_t len);
/* ------------------------------------------------ users and access (ACEs) */

/*
 * Admin1 session on the Locking SP, for the calls below that batch their
 * work in one session; end it with opal_end_session.
 */
int opal_admin1_session(struct opal_dev *dev, const struct opal_key *admin,
			struct opal_session **s);

/* Authority UserN's Enabled column; its C_PIN (PIN) as an admin. */
int opal_user_set_enabled(struct opal_session *s, unsigned user, bool enabled);
int opal_user_get_enabled(struct opal_session *s, unsigned user, bool *enabled);
int opal_user_set_pin(struct opal_session *s, unsigned user, const struct opal_key *pin);

enum opal_ace_kind {
	OPAL_ACE_RDLOCKED,	/* may set ReadLocked: lock/unlock for reading */
	OPAL_ACE_WRLOCKED,	/* may set WriteLocked */
	OPAL_ACE_GET_RANGE,	/* may read RangeStart..ActiveKey (state, verify) */
};

opal_uid opal_uid_ace(enum opal_ace_kind kind, unsigned range);

#define OPAL_ACE_MAX 16

/* An ACE's BooleanExpr: any of these authorities (OR); Admins = the class. */
struct opal_ace {
	size_t n;
	opal_uid auth[OPAL_ACE_MAX];
};

struct opal_range_access {
	struct opal_ace rdlocked, wrlocked;
};

bool opal_ace_has(const struct opal_ace *a, const opal_uid *auth);
int opal_ace_add(struct opal_ace *a, const opal_uid *auth);
bool opal_ace_remove(struct opal_ace *a, const opal_uid *auth);
int opal_ace_get(struct opal_session *s, const opal_uid *ace, struct opal_ace *out);
int opal_ace_set(struct opal_session *s, const opal_uid *ace, const struct opal_ace *a);
int opal_range_access(struct opal_session *s, unsigned range, struct opal_range_access *out);
/*
 * Add UserN to the range's RdLocked ACE (and WrLocked when write) and to
 * its Get_RangeStartToActiveKey ACE, keeping whoever is there already (the
 * kernel's IOC_OPAL_ADD_USR_TO_LR replaces the RdLocked/WrLocked ACE with
 * the user alone). Revoke removes UserN from all three; an ACE left empty
 * goes back to the Admins.
 */
int opal_grant_user(struct opal_session *s, unsigned user, unsigned range, bool write);
int opal_revoke_user(struct opal_session *s, unsigned user, unsigned range);

/*
 * C_PIN tries left for an authority's PIN object, when the device lets
 * Anybody read it (the Opal SSC does not: only admins, and SID for its own
 * PIN); OPAL_ST_NOT_AUTHORIZED otherwise.
 */
int opal_tries_left(struct opal_dev *dev, const opal_uid *sp, const opal_uid *cpin,
		    uint64_t *tries, uint64_t *limit);
/* The same in an open session (the Opal SSC lets admins read them). */
int opal_tries_in_session(struct opal_session *s, const opal_uid *cpin, uint64_t *tries,
			  uint64_t *limit);

/*
 * A number as opalctl, sedsim and the unlock table take it: digits only (no
 * blank, sign or empty string), in base (0: C's 0x and 0 prefixes), at most
 * max. False otherwise, *v unchanged.
 */
bool opal_parse_u64(const char *s, int base, uint64_t max, uint64_t *v);

#endif
