/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the files of opalctl share: the parsed command line, the error and
 * key helpers, and the command table. Each command is a handler that uses
 * lib/opal (or the kernel backend) and fills its result into c->jout, the
 * one model of its output; the dispatcher prints that as JSON (--json) or
 * through the command's text renderer, which reads nothing but the model.
 */
#ifndef FDEKIT_OPALCTL_CMD_H
#define FDEKIT_OPALCTL_CMD_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <json-c/json.h>

#include "nbde.h"
#include "opal.h"
#include "opalctl.h"
#include "opalctl-dev.h"
#include "opal-slots.h"

#define OPALCTL_MAX_NAMES 16
#define OPALCTL_MAX_THPS 8

struct opalctl_cmd;

struct ctx {
	FILE *in, *out, *err;
	bool json;
	bool verbose;
	const char *cmd;
	const char *devpath;
	const char *transport;
	const char *keyfile, *new_keyfile, *psid_file, *mbr_file;
	bool sedutil;		/* --hash sedutil or sedutil-sha512 */
	bool sedutil512;	/* --hash sedutil-sha512 */
	bool insecure_keyfile;	/* accept key files group/other may read */
	bool warned_mlock;
	int range;		/* -1: not given */
	bool global;
	bool have_start, have_length;
	uint64_t start, length;
	bool read_only, save, yes, keep_mbr, keep_data, all, sum;
	bool force;		/* --force: lock or destroy what is in use */
	bool passphrase;	/* keygen --passphrase: a key to type */
	int user;		/* 0: Admin1 */
	int slot;		/* unbind: the user number; 0: not given */
	int mbr_enable, mbr_done;	/* -1: leave */
	const char *who;
	unsigned int timeout_ms;
	/* bind, unlock-all */
	const char *pin, *pin_config, *jwe, *table, *askpass;
	unsigned int deadline_s;	/* with have_deadline: 0 is none left */
	bool have_deadline;
	bool boot;		/* check-table --boot */
	const char *state_dir;	/* unlock-all: where each unlocked entry is recorded */
	unsigned int prompt_timeout_s;	/* 0: the default, 120 s */
	bool no_prompt;
	const char *names[OPALCTL_MAX_NAMES];
	unsigned int nnames;
	/* slots --report, regen */
	bool report, remove_old;
	const char *initramfs;
	const char *thps[OPALCTL_MAX_THPS];
	unsigned int nthps;
	struct opal_drive *dev;
	json_object *jout;	/* the command's result: the handler fills it, the dispatcher prints it */
	const struct opalctl_cmd *command;	/* the one running, for fail() (CMD_TEXT_ON_FAIL) */
	bool rendered;		/* the result has been printed */
	char serial[OPAL_SERIAL_MAX];
};

/* One line "opalctl: what failed: what to do" (and JSON); returns code. */
int fail(struct ctx *c, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* Report a lib/opal error; adds the tries left for cpin on authentication failures. */
int fail_opal(struct ctx *c, const char *what, int rc, const opal_uid *sp, const opal_uid *cpin);
int exit_for(int rc);
/* Read a key file ("-": stdin) into locked memory, hashed with --hash. */
int load_key(struct ctx *c, const char *path, struct secret **out);
struct opal_key key_of(const struct secret *s);
/* 0, or the failure reported: a regular key file group or others may access. */
int keyfile_mode_ok(struct ctx *c, const char *path);
json_object *jbool(bool v);
/*
 * Reading a result back, for the text renderers: the member key of res
 * (NULL when absent or null), as a string ("" when absent), an integer
 * (0 when absent), a boolean (false when absent). A renderer also prints
 * the partial result of a failed command: any member may be absent.
 */
json_object *res_get(json_object *res, const char *key);
const char *res_str(json_object *res, const char *key);
int64_t res_int(json_object *res, const char *key);
bool res_bool(json_object *res, const char *key);
/* The elements of an array; 0 when arr is absent (a result cut short). */
size_t res_count(json_object *arr);
/*
 * Load c->keyfile and open an Admin1 session with it; the key stays in
 * *key for the caller to free. Failures are reported (with the tries left
 * when the drive says).
 */
int opalctl_admin_open(struct ctx *c, struct secret **key, struct opal_session **s);
/*
 * Print the result of the command that ran (JSON with --json, else its
 * text form); emit_partial: what a failed command's result holds so far,
 * for the commands flagged CMD_TEXT_ON_FAIL, before the error line.
 */
void emit_result(struct ctx *c);
void emit_partial(struct ctx *c);
/* Warn on stderr (never in the JSON result): "opalctl: warning: ...". */
void warn(struct ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * lib/nbde's messages (struct nbde_log, arg the ctx): a warning as warn()
 * says it, a detail only with --verbose.
 */
void opalctl_log(void *arg, enum nbde_log_level level, const char *msg);

/* Command flags. */
enum {
	CMD_NEEDS_DEV = 1u << 0,	/* a device argument */
	CMD_NEEDS_KEY = 1u << 1,	/* --keyfile */
	CMD_KERNEL = 1u << 2,		/* the kernel's sed-opal can run it (auto picks it) */
	CMD_PROTOCOL = 1u << 3,		/* only our protocol code can: --transport ioctl refused */
	CMD_NO_OPEN = 1u << 4,		/* the handler opens what it needs itself */
	/*
	 * Text mode: on failure, print what the result holds so far above the
	 * error (status: the discovery before a wrong key is refused; lock
	 * --all: the ranges done). JSON failures print the error object alone.
	 */
	CMD_TEXT_ON_FAIL = 1u << 5,
	CMD_DRIVE = 1u << 7,		/* reaches drives: takes --transport and --timeout */
	CMD_DEV_OPTIONAL = 1u << 8,	/* a device argument may be given; never opened */
};

/*
 * Every option opalctl knows (cli.c holds their names and general help).
 * A command takes only those its table entry lists, plus the common ones:
 * -j -v -V -h everywhere, --transport and --timeout on commands that reach
 * a drive, --hash and --insecure-keyfile on commands that read a key.
 */
enum opalctl_opt {
	OPT_NONE,
	OPT_KEYFILE, OPT_NEW_KEYFILE, OPT_PSID_FILE, OPT_HASH, OPT_INSECURE_KEYFILE,
	OPT_RANGE, OPT_ALL, OPT_GLOBAL, OPT_START, OPT_LENGTH, OPT_SUM, OPT_READ_ONLY,
	OPT_USER, OPT_SAVE, OPT_KEEP_MBR, OPT_WHO, OPT_ENABLE, OPT_DISABLE, OPT_DONE,
	OPT_NOT_DONE, OPT_WRITE, OPT_YES, OPT_KEEP_DATA, OPT_PIN, OPT_CONFIG, OPT_JWE,
	OPT_SLOT, OPT_TABLE, OPT_NAME, OPT_DEADLINE, OPT_PROMPT_TIMEOUT, OPT_NO_PROMPT,
	OPT_ASKPASS, OPT_BOOT, OPT_STATE_DIR, OPT_FORCE, OPT_PASSPHRASE, OPT_REPORT,
	OPT_INITRAMFS, OPT_THP, OPT_REMOVE_OLD,
	OPT_TRANSPORT, OPT_TIMEOUT, OPT_JSON, OPT_VERBOSE, OPT_VERSION, OPT_HELP,
	OPT_COUNT
};

/* An option a command takes; help NULL: the option's general help. */
struct opalctl_opt_use {
	enum opalctl_opt opt;
	const char *help;
};

struct opalctl_cmd {
	const char *name;
	int (*run)(struct ctx *c);
	/* The text form of the result, printed from the model res alone. */
	void (*text)(struct ctx *c, json_object *res);
	unsigned int flags;
	const char *synopsis;	/* arguments, for --help */
	const char *summary;
	/* The command's own options, OPT_NONE-terminated; common ones are added. */
	const struct opalctl_opt_use *opts;
};

/* The command table and its options, for help and for the tests. */
const struct opalctl_cmd *opalctl_commands(size_t *n);
/* The option's long name (no dashes), and whether it takes an argument. */
const char *opalctl_opt_name(enum opalctl_opt o);
bool opalctl_opt_has_arg(enum opalctl_opt o);
/* Whether cmd takes option o (its own or a common one). */
bool opalctl_cmd_takes(const struct opalctl_cmd *cmd, enum opalctl_opt o);
/* Whether cmd takes o as one of its own (not a common option). */
bool opalctl_cmd_own(const struct opalctl_cmd *cmd, enum opalctl_opt o);

/* The handlers and their text renderers (opalctl.c, users.c, nbde.c). */
int cmd_scan(struct ctx *c);
void text_scan(struct ctx *c, json_object *res);
int cmd_discover(struct ctx *c);
void text_discover(struct ctx *c, json_object *res);
int cmd_status(struct ctx *c);
void text_status(struct ctx *c, json_object *res);
int cmd_setup(struct ctx *c);
void text_setup(struct ctx *c, json_object *res);
int cmd_unlock(struct ctx *c);
int cmd_lock(struct ctx *c);
void text_lock_unlock(struct ctx *c, json_object *res);
int cmd_change_key(struct ctx *c);
void text_change_key(struct ctx *c, json_object *res);
int cmd_mbr(struct ctx *c);
void text_mbr(struct ctx *c, json_object *res);
int cmd_range_disable(struct ctx *c);
void text_range_disable(struct ctx *c, json_object *res);
int cmd_erase_range(struct ctx *c);
void text_erase_range(struct ctx *c, json_object *res);
int cmd_revert_sid(struct ctx *c);
int cmd_revert_psid(struct ctx *c);
void text_revert(struct ctx *c, json_object *res);
int cmd_keygen(struct ctx *c);
void text_keygen(struct ctx *c, json_object *res);
int cmd_user_enable(struct ctx *c);
int cmd_user_disable(struct ctx *c);
int cmd_user_key(struct ctx *c);
void text_user(struct ctx *c, json_object *res);
int cmd_grant(struct ctx *c);
int cmd_revoke(struct ctx *c);
void text_grant_revoke(struct ctx *c, json_object *res);
int cmd_access(struct ctx *c);
void text_access(struct ctx *c, json_object *res);
int cmd_msid(struct ctx *c);
void text_msid(struct ctx *c, json_object *res);
int cmd_bind(struct ctx *c);
void text_bind(struct ctx *c, json_object *res);
int cmd_unbind(struct ctx *c);
void text_unbind(struct ctx *c, json_object *res);
int cmd_slots(struct ctx *c);
void text_slots(struct ctx *c, json_object *res);
int cmd_slots_report(struct ctx *c);
void text_slots_report(struct ctx *c, json_object *res);
int cmd_regen(struct ctx *c);
void text_regen(struct ctx *c, json_object *res);
int cmd_unlock_all(struct ctx *c);
void text_unlock_all(struct ctx *c, json_object *res);
int cmd_lock_all(struct ctx *c);
void text_lock_all(struct ctx *c, json_object *res);
int cmd_check_table(struct ctx *c);
void text_check_table(struct ctx *c, json_object *res);


/*
 * Lock or unlock range c->range (0 when not given) as c->user with key:
 * the policy of the lock and unlock commands, written once (save on lock,
 * verify after lock, MBR Done and partition re-read after unlock). The
 * range's result goes into res. Returns an exit code; failures are reported.
 */
int opalctl_lock_unlock(struct ctx *c, const struct opal_key *key, bool unlock, json_object *res);

/*
 * A step that makes data unreadable, what it loses in what: confirmed by
 * --yes-destroy-data, or by YES typed on the terminal opalctl runs on (as
 * cryptsetup asks); refused otherwise (exit 10). 0 or the failure reported.
 */
int confirm_destroy(struct ctx *c, const char *what);
/*
 * Refuse (exit 10, unless --force) when logical blocks [first, first +
 * count) of the drive (count 0: all) are in use: mounted, held or open
 * exclusively; what: what the command would do to them.
 */
int refuse_in_use(struct ctx *c, uint64_t first, uint64_t count, const char *what);
/*
 * The same for locking range `range` (0: the global range: the whole
 * drive): when anything on the drive is in use, the range's span is read as
 * authority `who` (0: Admin1; an authentication failure is reported).
 */
int refuse_in_use_range(struct ctx *c, unsigned who, const struct opal_key *k, unsigned range,
			const char *what);

/* Ask the kernel to re-read the partition tables of the disk(s) behind path. */
void reread_partitions(struct ctx *c, const char *path);

struct opaltab_entry;
/* The unlock table into *v, *n; failures reported (exit 12). */
int load_table(struct ctx *c, const char *table, struct opaltab_entry **v, size_t *n);
/* The JWE of key slot user on c->devpath: the table's entry for it, else bind's default. */
void slot_jwe(struct ctx *c, const struct opaltab_entry *tab, size_t n, unsigned int user,
	      char *out, size_t cap);

#endif
