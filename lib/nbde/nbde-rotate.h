/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tang key rotation without the drive: the report (which sealed keys use
 * server keys that are rotated or gone, and whether the initramfs holds
 * the same JWE as the file) and regen (a slot's PIN sealed again for the
 * servers' current keys, its tpm2 branches with this machine's TPM, the
 * file replaced safely, the old one kept as FILE.old).
 *
 * Both take the unlock table's entries (or one JWE file) and fill a
 * result a caller renders; they print nothing (nbde.h's struct nbde_log
 * says what a person should see).
 */
#ifndef FDEKIT_NBDE_ROTATE_H
#define FDEKIT_NBDE_ROTATE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>

#include "nbde.h"
#include "nbde-tang.h"
#include "opaltab.h"

/* The Tang (and tpm2) branches of one JWE taken. */
#define NBDE_BRANCHES_MAX 16
#define NBDE_ROTATE_WHY_MAX 1024

/* Where a branch's server key stands. */
enum nbde_key_state {
	NBDE_KEY_CURRENT,	/* advertised by the server */
	NBDE_KEY_ROTATED,	/* not advertised, but the server still answers for it */
	NBDE_KEY_GONE,		/* the server no longer answers for it */
	NBDE_KEY_UNREACHABLE,	/* no advertisement from the server */
	NBDE_KEY_INVALID,	/* report: the advertisement for a trusted key does not verify */
	NBDE_KEY_UNTRUSTED,	/* regen: no signing key the slot trusts vouches for it */
};

/* "current", "rotated", ... as the output names them. */
const char *nbde_key_state_name(enum nbde_key_state s);

/* One Tang branch of a sealed key. */
struct nbde_server {
	char *url;			/* malloc'ed */
	char *kid;			/* the exchange key it was sealed for, malloc'ed */
	enum nbde_key_state state;
	char thp[TANG_THP_MAX];		/* regen: the signing key the new seal trusts ("" none) */
	char why[400];			/* report: what the state means ("" nothing to say) */
};

/* A sealed key file as read, common to the report and regen. */
struct nbde_sealed_info {
	const char *name;		/* the entry's name (borrowed); NULL for a file given alone */
	const char *jwe;		/* the file (borrowed) */
	bool parsed;			/* pin and threshold are known */
	char pin[16];			/* tang, sss, tpm2, ... */
	int threshold;			/* sss: t; else 1 */
	struct nbde_server servers[NBDE_BRANCHES_MAX];
	size_t nservers;		/* regen: those looked at before it stopped */
};

/* ------------------------------------------------------------ report */

enum nbde_report_action {
	NBDE_ACTION_NONE,	/* up to date */
	NBDE_ACTION_REGEN,	/* it still opens: seal it again */
	NBDE_ACTION_REBIND,	/* it no longer opens, or cannot be read */
	NBDE_ACTION_CHECK,	/* a server did not answer, or not as trusted: cannot tell */
};

/* The initramfs's copy of a JWE file. */
enum nbde_copy { NBDE_COPY_NOT_CHECKED, NBDE_COPY_SAME, NBDE_COPY_DIFFERS, NBDE_COPY_MISSING };

struct nbde_report_slot {
	struct nbde_sealed_info s;
	bool from_table;		/* an entry of the table (noauto is said) */
	bool noauto;
	char why[400];			/* not parsed: why it cannot be used */
	char other_pin[16];		/* a pin other than tang beside tang branches ("" none) */
	enum nbde_report_action action;
	enum nbde_copy initramfs;
	char old[PATH_MAX + 8];		/* FILE.old when it exists ("" none) */
	bool needs_attention;
};

struct nbde_report_rq {
	const struct opaltab_entry *entries;	/* the table's (its clevis entries are reported) */
	size_t nentries;
	const char *table;		/* its file, for messages */
	const char *jwe;		/* instead of the table: this file alone */
	const char *initramfs;		/* the image to compare; NULL: this kernel's default */
	struct nbde_log log;
};

struct nbde_report {
	struct nbde_report_slot *slots;	/* malloc'ed: nbde_report_free */
	size_t n;
	char image[PATH_MAX];		/* the initramfs image */
	bool checked;			/* unpacked and compared */
	char why[PATH_MAX + 320];	/* not checked: why */
	unsigned int needs_attention;	/* slots that need something done */
	const char *initramfs_command;	/* what rebuilds the initramfs here (static) */
	char error[PATH_MAX * 2 + 400];	/* -EINVAL: the image asked for was not checked */
};

/*
 * Report each clevis entry of the table (or rq->jwe). 0 (out->needs_attention
 * says whether something needs doing); -EINVAL when rq->initramfs was given
 * but could not be checked (out->error); -ENOMEM.
 */
int nbde_report(const struct nbde_report_rq *rq, struct nbde_report *out);
void nbde_report_free(struct nbde_report *r);

/* ------------------------------------------------------------- regen */

enum nbde_regen_status {
	NBDE_REGEN_OK,		/* sealed again, or nothing to do (skipped says why) */
	NBDE_REGEN_BAD_JWE,	/* not a sealed key it can read */
	NBDE_REGEN_UNSUPPORTED,	/* a branch it cannot seal again: rebind instead */
	NBDE_REGEN_LOST,	/* it no longer opens: its server keys are gone */
	NBDE_REGEN_CLEVIS,	/* a server, the TPM or clevis failed: nothing replaced */
	NBDE_REGEN_FILE,	/* a file could not be written or renamed */
};

/* A tpm2 branch sealed again. */
struct nbde_regen_tpm2 {
	bool sealed_to_current_pcrs;	/* with a PCR policy: the PCR values now */
	char pcr_bank[32];		/* with a PCR policy */
	char pcr_ids[128];
};

struct nbde_regen_entry {
	struct nbde_sealed_info s;
	enum nbde_regen_status status;
	char error[NBDE_ROTATE_WHY_MAX];	/* status not OK: what went wrong */
	bool regenerated;
	const char *skipped;		/* not sealed again, nor failed: why (static), or NULL */
	char *config;			/* regenerated: the clevis configuration (JSON), malloc'ed */
	struct nbde_regen_tpm2 tpm2[NBDE_BRANCHES_MAX];
	size_t ntpm2;
	char old_removed[PATH_MAX + 8];	/* FILE.old removed ("" none) */
	bool old_said;			/* old is known (done or skipped, not failed) */
	char old[PATH_MAX + 8];		/* FILE.old kept ("" none) */
};

struct nbde_regen_rq {
	const struct opaltab_entry *entries;	/* the table's */
	size_t nentries;
	const char *table;		/* its file, for messages */
	const char *const *names;	/* only these entries (nnames 0: every clevis entry) */
	size_t nnames;
	const char *jwe;		/* instead of the table: this file alone */
	const char *const *thps;	/* signing keys' thumbprints to trust besides the bound ones */
	size_t nthps;
	bool remove_old;		/* remove FILE.old rather than keep it */
	/*
	 * With remove_old, seal nothing: remove the FILE.old of the entries
	 * this boot unlocked with the JWE that is FILE now, as unlock-all
	 * recorded in state_dir/NAME (nbde-state.h).
	 */
	const char *state_dir;
	struct nbde_log log;
	/* Each entry as soon as it is done (each can take a while). NULL: none. */
	void (*entry_done)(void *arg, const struct nbde_regen_entry *e);
	void *done_arg;
};

struct nbde_regen_result {
	struct nbde_regen_entry *entries;	/* malloc'ed: nbde_regen_free */
	size_t n;
	unsigned int regenerated;
	unsigned int failed;
	/* A JWE the initramfs holds was replaced: what rebuilds it (static), or NULL. */
	const char *initramfs_command;
};

/* Regen what rq names. 0 when none failed, 1 when some did, -ENOMEM. */
int nbde_regen(const struct nbde_regen_rq *rq, struct nbde_regen_result *out);
void nbde_regen_free(struct nbde_regen_result *r);

#endif
