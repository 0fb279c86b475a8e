/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * sedsim: a virtual Opal 2 self-encrypting drive.
 *
 * Device side of the Admin SP and the Locking SP, with state and media in
 * files of one directory:
 *   state      tables (C_PIN, Authority, Locking, MBRControl, keys), binary
 *   media      user data, AES-256-XTS encrypted per locking range
 *   mbr        the shadow MBR table
 *   datastore  the DataStore table
 *   psid       the PSID, as printed on a real drive's label
 *   identity   the SCSI vendor identification and WWN (identity.c)
 * Tables are saved after every change, so a test can close and reopen the
 * drive; sedsim_power_cycle() applies LockOnReset as a real power cycle does.
 */
#ifndef FDEKIT_SEDSIM_H
#define FDEKIT_SEDSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "opal-wire.h"

#define SEDSIM_BLOCK 512
#define SEDSIM_RANGES 8		/* besides the global range */
#define SEDSIM_ADMINS 4
#define SEDSIM_USERS 9
/*
 * Byte tables as large as the Opal SSC asks of a real drive: a shadow MBR
 * of 128 MiB and a 10 MiB DataStore. Their files are sparse: created with
 * ftruncate, never written whole, cleared by truncation.
 */
#define SEDSIM_MBR_SIZE (128u << 20)
#define SEDSIM_DATASTORE_SIZE (10u << 20)
#define SEDSIM_BASE_COMID 0x1000
#define SEDSIM_DEFAULT_TRY_LIMIT 5

enum sedsim_io_status {
	SEDSIM_IO_OK = 0,
	SEDSIM_IO_LOCKED,	/* data protection error: range locked */
	SEDSIM_IO_RANGE,	/* LBA out of range */
	SEDSIM_IO_ERROR,	/* file or crypto error (errno set) */
};

struct sedsim_config {
	uint64_t blocks;		/* media size in 512-byte blocks */
	const char *serial;		/* up to 20 characters, space padded */
	uint32_t try_limit;		/* 0: SEDSIM_DEFAULT_TRY_LIMIT, unless no_try_limit */
	bool no_try_limit;		/* TryLimit 0: failed tries are never counted against a limit */
	/* The SCSI face's T10 vendor identification, 1-8 characters; NULL: FDEKIT. */
	const char *vendor;
	/*
	 * The logical unit's NAA designator (VPD page 0x83), 16 or 32 hex
	 * digits, "naa." or "0x" in front or not; NULL: NAA 5 from a hash of
	 * the serial.
	 */
	const char *wwn;
	/*
	 * Firmware that takes Power Cycle alone in LockOnReset and DoneOnReset:
	 * a set with Hardware Reset is refused (INVALID_PARAMETER), as the
	 * Opal SSC lets a drive do. Default: Hardware Reset supported.
	 */
	bool no_hw_reset;
};

/* Whether sedsim_create takes cfg->vendor: SPC-4's left-aligned ASCII. */
bool sedsim_valid_vendor(const char *vendor);
/*
 * An NAA designator as SPC-4 allows it (NAA 2, 3 or 5 in 8 bytes, 6 in
 * 16, not all zero) into naa; its length in len. 0 or -EINVAL.
 */
int sedsim_parse_wwn(const char *s, uint8_t naa[16], size_t *len);

struct sedsim;

/* Create a factory-new drive in dir (which must exist and be empty). */
int sedsim_create(const char *dir, const struct sedsim_config *cfg);
/* Open an existing drive; power_on applies the reset a power cycle does. */
int sedsim_open(const char *dir, bool power_on, struct sedsim **out);
void sedsim_close(struct sedsim *sim);
/* LockOnReset, MBRDoneOnReset, tries and sessions reset, as at power on. */
int sedsim_power_cycle(struct sedsim *sim);
/*
 * A TCG Hardware Reset (what the interface maps to one: on NVMe an NVM
 * Subsystem Reset; see sedsim(8)): ranges whose LockOnReset holds Hardware
 * Reset lock, MBR Done clears when DoneOnReset holds it, sessions end and
 * the HostProperties are forgotten. Tries are kept.
 */
int sedsim_hw_reset(struct sedsim *sim);
/* Whether the drive takes Hardware Reset in LockOnReset (see no_hw_reset). */
bool sedsim_hw_reset_supported(const struct sedsim *sim);

/* Security protocol interface: IF-SEND and IF-RECV. 0 or -errno. */
int sedsim_if_send(struct sedsim *sim, uint8_t protocol, uint16_t sp_specific,
		   const void *buf, size_t len);
int sedsim_if_recv(struct sedsim *sim, uint8_t protocol, uint16_t sp_specific,
		   void *buf, size_t len);

/* User data. */
uint64_t sedsim_blocks(const struct sedsim *sim);
const char *sedsim_serial(const struct sedsim *sim);	/* 20 bytes, not NUL-terminated */
enum sedsim_io_status sedsim_read(struct sedsim *sim, uint64_t lba, uint32_t count, void *buf);
enum sedsim_io_status sedsim_write(struct sedsim *sim, uint64_t lba, uint32_t count,
				   const void *buf);

/* One SCSI command (SBC/SPC subset plus SECURITY PROTOCOL IN/OUT). */
struct sedsim_scsi_cmd {
	const uint8_t *cdb;
	size_t cdb_len;
	uint8_t *buf;		/* data-out to the drive, or room for data-in */
	size_t len;
	size_t data_len;	/* out: data-in bytes produced */
	uint8_t status;		/* out: SAM status (0 GOOD, 2 CHECK CONDITION) */
	uint8_t sense[18];	/* out: fixed-format sense with CHECK CONDITION */
};

int sedsim_scsi_exec(struct sedsim *sim, struct sedsim_scsi_cmd *c);

/*
 * Serve the drive in dir as the TCMU user backstore called name (configfs
 * core/user_N/name), until SIGTERM. Waits up to wait_s for the uio device.
 * Returns a process exit code.
 */
int sedsim_serve_tcmu(const char *dir, const char *name, unsigned int wait_s);

/*
 * Serve the drive in dir as namespace 1 of the NVMe/TCP subsystem nqn on
 * 127.0.0.1:port, until SIGTERM. Returns a process exit code.
 */
#define SEDSIM_NVME_PORT 4420
#define SEDSIM_NVME_NQN "nqn.2026-11.org.fdekit:sedsim"
int sedsim_serve_nvme_tcp(const char *dir, uint16_t port, const char *nqn, const char *trace);

/*
 * Append every ComPacket payload the TPer receives and sends to f, one
 * line each ("> TSN HSN HEX", "< HEX"), with the bytes of PINs (the
 * HostChallenge of StartSession and Authenticate, the PIN column of a Set
 * on C_PIN) replaced by 'x' (0x78) so a trace never holds a secret. NULL
 * stops tracing; the caller keeps f.
 */
void sedsim_set_trace(struct sedsim *sim, FILE *f);

/* The PSID, as on the label: read from dir/psid by tests and operators. */
int sedsim_read_psid(const char *dir, char *out, size_t cap);

/*
 * Give the TPer smaller communication buffers than its OPAL_IO_BUFFER, as
 * some drives have, to test hosts against them: IF-SEND transfers and
 * responses above bytes are refused, and Properties reports the sizes.
 * bytes: SEDSIM_MIN_COMPACKET (the Core Spec's initial assumption) to
 * OPAL_IO_BUFFER. Not saved: a reopened drive has the full size.
 * 0 or -EINVAL.
 */
#define SEDSIM_MIN_COMPACKET 1024
int sedsim_set_max_compacket(struct sedsim *sim, size_t bytes);

/* An opal_dev talking to the simulator in-process (takes ownership of sim). */
struct opal_dev *sedsim_opal_dev(struct sedsim *sim);

#endif
