/* SPDX-License-Identifier: GPL-2.0-only */
/* The simulated drive's tables, shared by the files of tools/sedsim. */
#ifndef FDEKIT_SEDSIM_INTERNAL_H
#define FDEKIT_SEDSIM_INTERNAL_H

#include <stdio.h>

#include "sedsim.h"

/* Big-endian stores, as SCSI and TCG structures want them. */
static inline void be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void be32(uint8_t *p, uint32_t v)
{
	be16(p, (uint16_t)(v >> 16));
	be16(p + 2, (uint16_t)v);
}

static inline void be64(uint8_t *p, uint64_t v)
{
	be32(p, (uint32_t)(v >> 32));
	be32(p + 4, (uint32_t)v);
}

/*
 * TPer session numbers start here, as on real drives: hosts such as the
 * kernel's sed-opal (block/sed-opal.c, FIRST_TPER_SESSION_NUM) refuse a
 * session whose TSN is lower.
 */
#define SIM_FIRST_TSN 4096u

/*
 * Geometry (Level 0 feature 0x0003, AlignmentRequired set): ranges start
 * at LowestAlignedLBA plus a multiple of AlignmentGranularity blocks and
 * are a multiple of it long, 8 blocks of 512 bytes = 4 KiB, as drives with
 * 4 KiB physical sectors behind 512-byte logical blocks report.
 */
#define SIM_ALIGN_GRANULARITY 8u
#define SIM_LOWEST_ALIGNED_LBA 0u

/* What a TPer assumes the host takes until Properties: the Opal minimum. */
#define SIM_HOST_INITIAL_COMPACKET OPAL_IO_BUFFER

#define SEDSIM_MAGIC "FDKSSIM1"
#define SEDSIM_KEY_LEN 64	/* AES-256-XTS: two 256-bit keys */

struct sim_pin {
	uint8_t len;
	uint8_t pin[OPAL_PIN_MAX];
	uint32_t tries;
	uint32_t try_limit;
};

struct sim_range {
	uint64_t start;
	uint64_t length;
	uint8_t rle, wle, rl, wl;
	uint8_t lock_on_reset;		/* LockOnReset as OPAL_RESET_* bits */
	uint8_t key[SEDSIM_KEY_LEN];
	/* ACEs as masks of authorities (AUTH_BIT), ACE_ADMINS for the class. */
	uint32_t rd_ace;		/* Set_RdLocked: who may set ReadLocked */
	uint32_t wr_ace;		/* Set_WrLocked: ... WriteLocked */
	uint32_t get_ace;		/* Get_RangeStartToActiveKey: who may read the range */
};

/* Authorities, as bits of a mask. */
enum sim_auth {
	AUTH_ANYBODY = 0,
	AUTH_SID,
	AUTH_PSID,
	AUTH_ADMIN1,			/* Locking SP Admin1..4 */
	AUTH_USER1 = AUTH_ADMIN1 + SEDSIM_ADMINS,
	AUTH_COUNT = AUTH_USER1 + SEDSIM_USERS,
};

#define AUTH_BIT(a) (1u << (a))
#define AUTH_ADMINS_MASK (((1u << SEDSIM_ADMINS) - 1) << AUTH_ADMIN1)
/* In an ACE mask: the authority class Admins (any enabled AdminN). */
#define ACE_ADMINS (1u << 31)

/*
 * State file layout version (2: range ACEs with Get_RangeStartToActiveKey;
 * 3: Single User Mode ranges and policy).
 */
#define SEDSIM_STATE_VERSION 3

struct sim_state {
	char magic[8];
	uint32_t version;
	char serial[OPAL_SERIAL_MAX];
	uint64_t blocks;
	uint8_t lsp_lifecycle;
	struct sim_pin msid, sid, psid;
	struct sim_pin admin[SEDSIM_ADMINS];
	struct sim_pin user[SEDSIM_USERS];
	uint8_t admin_enabled[SEDSIM_ADMINS];
	uint8_t user_enabled[SEDSIM_USERS];
	struct sim_range range[1 + SEDSIM_RANGES];
	uint8_t mbr_enable, mbr_done;
	uint8_t mbr_done_on_reset;	/* DoneOnReset as OPAL_RESET_* bits */
	uint32_t try_limit;
	/* Single User Mode: bit n set when range n (0: global) is owned by User n+1. */
	uint16_t sum_ranges;
	uint8_t sum_policy;		/* RangeStartRangeLengthPolicy: 0 owner, 1 Admins */
};

/* The user that owns range n in Single User Mode. */
#define SUM_OWNER(n) (AUTH_USER1 + (n))

struct sim_session {
	bool open;
	bool write;
	int sp;				/* 0: Admin SP, 1: Locking SP */
	uint32_t hsn, tsn;
	uint32_t auth;			/* mask of authenticated authorities */
};

struct sedsim {
	char *dir;
	int dirfd;
	int media_fd, mbr_fd, ds_fd;
	struct sim_state st;
	struct sim_session sess;
	uint32_t next_tsn;
	size_t max_compacket;		/* our buffers: what we take and send */
	size_t host_max_compacket;	/* what the host takes (HostProperties) */
	uint8_t resp[OPAL_IO_BUFFER];
	size_t resp_len;
	uint16_t resp_comid;
	uint8_t comid_resp[46];		/* protocol 2: the answer to the last request */
	size_t comid_resp_len;
	uint16_t comid_resp_comid;
	struct opal_token tok[OPAL_MAX_TOKENS];
	FILE *trace;			/* method calls and replies, PINs masked */
	char vendor[8];			/* T10 vendor identification, space padded */
	uint8_t naa[16];		/* the logical unit's NAA designator */
	uint8_t naa_len;		/* 8 or 16 */
	/*
	 * Hardware Reset may be in LockOnReset and DoneOnReset (identity.c
	 * keeps it): optional in the Opal SSC (4.3.5.2.2), and reported by
	 * the Locking feature's "HW Reset for LOR/DOR Supported" bit.
	 */
	bool hw_reset;
};

/* dir/identity (identity.c): check a config, write it at create, read it at open. */
int sim_identity_check(const struct sedsim_config *cfg);
int sim_identity_create(int dirfd, const struct sedsim_config *cfg,
			const char serial[OPAL_SERIAL_MAX]);
int sim_identity_load(struct sedsim *sim);
/* The serial as the SCSI face gives it (VPD page 0x80): right-aligned, space padded. */
void sim_scsi_serial(const struct sedsim *sim, char out[OPAL_SERIAL_MAX]);

int sim_save(struct sedsim *sim);
/* Fill the tables of a factory-new (or reverted) drive. */
void sim_factory_locking_sp(struct sim_state *st);
int sim_random(void *buf, size_t len);
int sim_new_key(struct sim_range *r);
int sim_table_io(struct sedsim *sim, bool mbr, bool write, uint64_t off, void *buf, size_t len);
int sim_tables_clear(struct sedsim *sim);
void sim_handle_packet(struct sedsim *sim, const uint8_t *buf, size_t len);
size_t sim_discovery(const struct sedsim *sim, uint8_t *out, size_t cap);
/* Protocol 2 (ComID management): a request from IF-SEND, its answer for IF-RECV. */
int sim_comid_request(struct sedsim *sim, uint16_t comid, const uint8_t *buf, size_t len);
void sim_comid_response(struct sedsim *sim, uint16_t comid, uint8_t *out, size_t len);

#endif
