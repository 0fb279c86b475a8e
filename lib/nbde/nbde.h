/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * lib/nbde: the boot policy for Opal drives, above lib/opal. Given the
 * unlock table's entries, unlock what each names, with the key from its
 * source (a Clevis JWE, a key file, or a person asked through a callback),
 * within the run's bounds, spending as few of each authority's tries as
 * it can and never the last one.
 *
 * The caller supplies every effect as a callback (struct nbde_ops): the
 * clock, the log, the prompt, Clevis, key files and the drive. The real
 * ones are in nbde-system.h; tests give a fake drive and a fake clock.
 *
 * Tries. Each key an authority refuses uses one of its tries (TryLimit,
 * often 5); reaching the limit locks the authority out until a power
 * cycle, and only an admin can read how many are left. The library keeps
 * its own count per drive and authority (the ledger, nbde-ledger.h), over
 * every entry and every run of one boot, typed keys and unattended ones
 * alike: a person is asked at most prompt-tries times in one boot, and an
 * unattended key is not tried once only one of those is left, so a person
 * always keeps at least one try.
 */
#ifndef FDEKIT_NBDE_H
#define FDEKIT_NBDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "nbde-secret.h"
#include "opaltab.h"

#define NBDE_WHY_MAX 700
#define NBDE_PATH_MAX 300
#define NBDE_SERIAL_MAX 256
/* Empty answers in a row after which the prompt gives up (Enter held down). */
#define NBDE_EMPTY_ANSWERS_MAX 10

/* What the drive said to an unlock. */
enum nbde_drive_status {
	NBDE_DRIVE_OK,
	NBDE_DRIVE_REFUSED,	/* the key is wrong: one try used */
	NBDE_DRIVE_LOCKED_OUT,	/* the authority is locked out (its TryLimit reached) */
	NBDE_DRIVE_DENIED,	/* the key is right, the authority may not: no try used */
	NBDE_DRIVE_ERROR,	/* anything else (why says it) */
};

/* A drive as the policy needs to know it. */
struct nbde_drive_info {
	char serial[NBDE_SERIAL_MAX];	/* the ledger's and the prompt's name for it ("" unknown) */
	bool unlocked;		/* nothing on it is locked: no key needed */
};

/* An unlock of an entry's ranges, and what came of it. */
struct nbde_unlock_rq {
	const struct opaltab_entry *entry;
	const char *path;	/* the device */
	unsigned int user;	/* 0 Admin1, n UserN */
	bool save;		/* keep the key in the kernel for S3 resume */
	bool force;		/* lock: even when the range's span is in use */
};

struct nbde_unlock_out {
	enum nbde_drive_status status;
	int opal_rc;		/* NBDE_DRIVE_ERROR: lib/opal's status, or -errno */
	bool saved;		/* the kernel keeps it for S3 resume */
	bool can_save;		/* the backend could keep it (the kernel's) */
	char why[NBDE_WHY_MAX];	/* a failure, said as a person reads it */
};

/*
 * The effects. Every callback gets arg. Times are monotonic ms.
 * Returns follow each one's comment; NULL callbacks are allowed where said.
 */
struct nbde_ops {
	void *arg;
	uint64_t (*now_ms)(void *arg);
	void (*sleep_ms)(void *arg, uint64_t ms);
	/* A line for the person or the journal (no newline), about an entry ("" none). */
	void (*log)(void *arg, const char *entry, const char *msg);
	/* The entry's device: 0 and its path; -ENOENT (not yet), -ENOTUNIQ (path: both). */
	int (*find_device)(void *arg, const struct opaltab_entry *e, char *path, size_t cap);
	/* What the drive is: 0, or -errno (then: unknown serial, counted as locked). */
	int (*drive_info)(void *arg, const struct opaltab_entry *e, const char *path,
			  struct nbde_drive_info *out);
	/* Unlock (unlock) or lock the entry's ranges: 0 done, or -1 with out saying why. */
	int (*lock_ranges)(void *arg, const struct nbde_unlock_rq *rq, const struct secret *key,
			   bool unlock, struct nbde_unlock_out *out);
	/* clevis decrypt of a JWE file within timeout_s: 0 and the key, or why. */
	int (*clevis)(void *arg, const char *jwe, unsigned int timeout_s, struct secret *out,
		      char *why, size_t whylen);
	/* Does the JWE file exist (retrying it can help)? NULL: yes. */
	bool (*jwe_present)(void *arg, const char *jwe);
	/* A key file, checked (owner, mode, no symlink): 0 and the key, or why. */
	int (*key_file)(void *arg, const char *path, struct secret *out, char *why, size_t whylen);
	/*
	 * Ask a person until end: 0 and the answer (its trailing newline
	 * dropped), -ENODATA for an empty answer, -ETIMEDOUT, 1 when wake_fd
	 * (>= 0) became readable first (the prompt is taken down), or -errno
	 * when nobody can be asked. NULL: nobody can.
	 */
	int (*ask)(void *arg, const char *prompt, uint64_t end, struct secret *out, int wake_fd);
	/*
	 * The entry's JWE tried again in the background until end, while a
	 * person is asked: fetch_start returns a readable fd on which the key
	 * arrives (end of file: given up), or -1; fetch_collect takes the key
	 * (0) or says it failed; fetch_stop ends it. NULL: no background try.
	 */
	int (*fetch_start)(void *arg, const struct opaltab_entry *e, uint64_t end);
	int (*fetch_collect)(void *arg, int fd, struct secret *out);
	void (*fetch_stop)(void *arg, int fd);
};

/* How a run ended for one entry. */
enum nbde_status {
	NBDE_UNLOCKED,
	NBDE_ALREADY_UNLOCKED,	/* nothing on the drive was locked: no key used */
	NBDE_BAD_ENTRY,		/* the table refused its line */
	NBDE_NO_DEVICE,		/* not found within the bound */
	NBDE_AMBIGUOUS,		/* serial= or wwn= names two drives */
	NBDE_NO_KEY,		/* no key source gave a key (error says why) */
	NBDE_REFUSED,		/* the drive refused the last key tried */
	NBDE_LOCKED_OUT,
	NBDE_DENIED,
	NBDE_DRIVE_FAILED,	/* the drive failed otherwise (opal_rc) */
	NBDE_TRIES_SPENT,	/* the ledger allows no more tries this boot */
	/* lock-all */
	NBDE_LOCKED,
};

enum nbde_key_used { NBDE_KEY_NONE, NBDE_KEY_CLEVIS, NBDE_KEY_FILE, NBDE_KEY_PASSPHRASE,
		     NBDE_KEY_REUSED };

struct nbde_entry_result {
	const struct opaltab_entry *entry;
	enum nbde_status status;
	char device[NBDE_PATH_MAX];	/* "" before it was found */
	char serial[NBDE_SERIAL_MAX];
	enum nbde_key_used key;		/* the key the drive took, or the last one it refused */
	unsigned int user;		/* the authority of that key: 0 Admin1 */
	unsigned int refused;		/* keys the drive refused in this entry */
	unsigned int tries_used;	/* the ledger's count for that authority, after the entry */
	unsigned int tries_allowed;	/* prompt-tries: what the ledger lets the agent spend */
	bool saved;			/* saved for S3 resume */
	bool save_requested;		/* the entry asks for it */
	bool save_withheld;		/* asked, but Admin1's key is never saved */
	bool can_save;
	int opal_rc;			/* NBDE_DRIVE_FAILED */
	char error[NBDE_WHY_MAX];
};

struct nbde_request {
	const struct opaltab_entry *entries;
	size_t nentries;
	const char *const *names;	/* only these (NULL: all but noauto) */
	size_t nnames;
	bool have_deadline;		/* automatic steps end deadline_s from the start */
	unsigned int deadline_s;
	unsigned int prompt_timeout_s;	/* the prompts' own budget after it (0: 120) */
	bool no_prompt;
	bool force;			/* lock-all: lock even what is in use */
	const char *ledger_dir;		/* the try ledger (NULL: counted in this run only) */
	/* Each entry as soon as it is done (at boot one can take minutes). NULL: none. */
	void (*entry_done)(void *arg, const struct nbde_entry_result *r);
	void *done_arg;
};

struct nbde_result {
	struct nbde_entry_result *entries;	/* malloc'ed: nbde_result_free */
	size_t n;
	unsigned int ok;
	unsigned int failed;
};

/*
 * Unlock the request's entries (nbde_run) or lock them again with each
 * entry's own key source and no prompt (nbde_lock_all). 0 when every
 * entry is done, 1 when some failed (each result says why), -errno when
 * nothing could be tried.
 */
int nbde_run(const struct nbde_request *rq, const struct nbde_ops *ops, struct nbde_result *res);
int nbde_lock_all(const struct nbde_request *rq, const struct nbde_ops *ops,
		  struct nbde_result *res);
void nbde_result_free(struct nbde_result *res);

/* "Admin1", "User3". */
void nbde_authority_name(unsigned int user, char *out, size_t cap);
const char *nbde_key_name(enum nbde_key_used k);
bool nbde_entry_ok(const struct nbde_entry_result *r);

/*
 * The recovery key as keygen --passphrase writes it (25 symbols of
 * Crockford's base32 in groups of five joined by '-'), from what a person
 * typed: when in has that shape read Crockford's way (case-blind, any or
 * no '-' and blanks between groups, i and l read as 1, o as 0), out gets
 * the canonical form and 1 is returned; 0 (out untouched) when it is some
 * other passphrase, to be tried exactly as typed.
 */
int nbde_recovery_canonical(const struct secret *in, struct secret *out);

/*
 * Messages for a person from the key slot and rotation calls
 * (nbde-slots.h, nbde-rotate.h), one line each without a newline: a
 * warning is always said, a detail only when the caller wants it (a
 * verbose run). NULL fn: nothing is said.
 */
enum nbde_log_level { NBDE_LOG_WARNING, NBDE_LOG_DETAIL };

struct nbde_log {
	void (*fn)(void *arg, enum nbde_log_level level, const char *msg);
	void *arg;
};

void nbde_say(const struct nbde_log *log, enum nbde_log_level level, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

#endif
