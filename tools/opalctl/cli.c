// SPDX-License-Identifier: GPL-2.0-only
/*
 * opalctl's command line: the command table, each command's own options and
 * help, the parser that refuses an option a command does not take, and the
 * dispatcher that opens the drive, runs the handler and prints its result.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "opalctl-cmd.h"

struct opt_def {
	const char *name;
	int short_opt;		/* 0: long only */
	bool has_arg;
	const char *arg;	/* the argument's name in help */
	const char *help;	/* general help; a command may say it its own way */
};

static const struct opt_def opt_defs[OPT_COUNT] = {
	[OPT_KEYFILE] = { "keyfile", 'k', true, "F", "key file (\"-\": stdin); never on the command line" },
	[OPT_NEW_KEYFILE] = { "new-keyfile", 0, true, "F", "the new key" },
	[OPT_PSID_FILE] = { "psid-file", 0, true, "F", "the PSID printed on the drive's label" },
	[OPT_HASH] = { "hash", 0, true, "MODE",
		       "none (the key file's bytes are the PIN), sedutil or sedutil-sha512" },
	[OPT_INSECURE_KEYFILE] = { "insecure-keyfile", 0, false, NULL,
				   "accept key files group or others can read" },
	[OPT_RANGE] = { "range", 'r', true, "N", "locking range (0 = global)" },
	[OPT_ALL] = { "all", 0, false, NULL, "every range with locking enabled" },
	[OPT_GLOBAL] = { "global", 0, false, NULL,
			 "lock the global range: the whole disk, its ESP and /boot too" },
	[OPT_START] = { "start", 0, true, "LBA", "the range's first block" },
	[OPT_LENGTH] = { "length", 0, true, "N", "the range's number of blocks" },
	[OPT_SUM] = { "sum", 0, false, NULL,
		      "Single User Mode for the range: its owner User N+1 has the\n--new-keyfile key" },
	[OPT_READ_ONLY] = { "read-only", 0, false, NULL, "reading only" },
	[OPT_USER] = { "user", 0, true, "N", "User N (1-9)" },
	[OPT_SAVE] = { "save", 0, false, NULL, "let the kernel re-unlock on S3 resume" },
	[OPT_KEEP_MBR] = { "keep-mbr", 0, false, NULL, "leave the shadow MBR's Done flag alone" },
	[OPT_WHO] = { "who", 0, true, "W", "sid, admin1 or both (default)" },
	[OPT_ENABLE] = { "enable", 0, false, NULL, "enable shadowing" },
	[OPT_DISABLE] = { "disable", 0, false, NULL, "disable shadowing" },
	[OPT_DONE] = { "done", 0, false, NULL, "set the Done flag (the drive shows the real LBA 0)" },
	[OPT_NOT_DONE] = { "not-done", 0, false, NULL, "clear the Done flag" },
	[OPT_WRITE] = { "write", 0, true, "IMG", "write IMG into the shadow MBR table" },
	[OPT_YES] = { "yes-destroy-data", 0, false, NULL, "confirm that the data is destroyed" },
	[OPT_KEEP_DATA] = { "keep-data", 0, false, NULL,
			    "only the Locking SP, keeping the global range's data" },
	[OPT_PIN] = { "pin", 0, true, "P", "clevis pin: tang, tpm2 or sss" },
	[OPT_CONFIG] = { "config", 0, true, "JSON", "the pin's configuration, as for clevis encrypt" },
	[OPT_JWE] = { "jwe", 0, true, "F", "the sealed key file (default under /etc/fdekit/keys)" },
	[OPT_SLOT] = { "slot", 0, true, "N", "the key slot (user number) to remove" },
	[OPT_TABLE] = { "table", 0, true, "F", "the unlock table (default /etc/fdekit/opaltab)" },
	[OPT_NAME] = { "name", 0, true, "N", "only this entry (repeatable; includes noauto)" },
	[OPT_DEADLINE] = { "deadline", 0, true, "S",
			   "no automatic step runs past S seconds (0: none left:\nstraight to each entry's fallback)" },
	[OPT_PROMPT_TIMEOUT] = { "prompt-timeout", 0, true, "S",
				 "prompts wait at most S seconds in all, after the deadline (120)" },
	[OPT_NO_PROMPT] = { "no-prompt", 0, false, NULL, "never ask for a passphrase" },
	[OPT_ASKPASS] = { "askpass", 0, true, "P", "run P \"PROMPT\" to ask (its stdout is the key)" },
	[OPT_BOOT] = { "boot", 0, false, NULL, "print the entries the initramfs unlocks" },
	[OPT_STATE_DIR] = { "state-dir", 0, true, "D", "record each unlocked entry in D/NAME" },
	[OPT_PASSPHRASE] = { "passphrase", 0, false, NULL,
			     "a key to type: 25 characters in groups of 5 (125 bits)" },
	[OPT_REPORT] = { "report", 0, false, NULL,
			 "which sealed keys need regen or rebind (no drive, no key)" },
	[OPT_INITRAMFS] = { "initramfs", 0, true, "IMG",
			    "the initramfs image to compare (default\n/boot/initrd.img-$(uname -r))" },
	[OPT_THP] = { "thp", 0, true, "THP",
		      "trust the Tang signing key with this thumbprint (repeatable)" },
	[OPT_REMOVE_OLD] = { "remove-old", 0, false, NULL,
			     "keep no FILE.old copy of the JWE replaced (and remove one left)" },
	[OPT_FORCE] = { "force", 0, false, NULL,
			"go on although a partition there is mounted, held or open" },
	[OPT_TRANSPORT] = { "transport", 't', true, "T",
			    "auto, ioctl, nvme, scsi, or sedsim (DEV = directory; test builds)" },
	[OPT_TIMEOUT] = { "timeout", 0, true, "MS", "give up on the drive after MS milliseconds" },
	[OPT_JSON] = { "json", 'j', false, NULL, "JSON output" },
	[OPT_VERBOSE] = { "verbose", 'v', false, NULL, "trace each step (never keys)" },
	[OPT_VERSION] = { "version", 'V', false, NULL, "print the version" },
	[OPT_HELP] = { "help", 'h', false, NULL, "this help (with a command: its own)" },
};

/* Options that only make sense together with another are checked by the handler. */
static const enum opalctl_opt conflicts[][2] = {
	{ OPT_ENABLE, OPT_DISABLE }, { OPT_DONE, OPT_NOT_DONE }, { OPT_ALL, OPT_RANGE },
	{ OPT_GLOBAL, OPT_RANGE }, { OPT_GLOBAL, OPT_START }, { OPT_GLOBAL, OPT_LENGTH },
	{ OPT_GLOBAL, OPT_SUM }, { OPT_NO_PROMPT, OPT_ASKPASS }, { OPT_NO_PROMPT, OPT_PROMPT_TIMEOUT },
	{ OPT_REPORT, OPT_KEYFILE }, { OPT_REPORT, OPT_TRANSPORT }, { OPT_REPORT, OPT_TIMEOUT },
	{ OPT_TABLE, OPT_JWE }, { OPT_ALL, OPT_NAME }, { OPT_ALL, OPT_JWE }, { OPT_NAME, OPT_JWE },
	{ OPT_ALL, OPT_SLOT }, { OPT_NAME, OPT_SLOT },
};

#define O(o) { OPT_##o, NULL }
#define OH(o, h) { OPT_##o, h }
#define END { OPT_NONE, NULL }

static const struct opalctl_opt_use scan_opts[] = { END };
static const struct opalctl_opt_use discover_opts[] = { END };
static const struct opalctl_opt_use status_opts[] = {
	OH(KEYFILE, "the Admin1 key (optional): then ranges and MBR too"), END };
static const struct opalctl_opt_use msid_opts[] = { END };
static const struct opalctl_opt_use setup_opts[] = {
	OH(KEYFILE, "the key SID and Admin1 get"),
	O(GLOBAL),
	OH(RANGE, "set up locking range N (1-8) instead of the global range"),
	OH(START, "with --range: the range's first block"),
	OH(LENGTH, "with --range: the range's number of blocks"),
	O(SUM),
	OH(NEW_KEYFILE, "with --sum: the key of the range's owner, User N+1"),
	OH(YES, "confirm that the data under a new or moved range is lost"),
	OH(FORCE, "set up a range although a partition in it is in use"),
	END };
static const struct opalctl_opt_use unlock_opts[] = {
	O(KEYFILE),
	OH(RANGE, "the range to unlock (default 0, the global range)"),
	OH(ALL, "every range with locking enabled that the authority may read"),
	OH(READ_ONLY, "unlock for reading only"),
	OH(USER, "authenticate as User N (1-9) instead of Admin1"),
	O(SAVE), O(KEEP_MBR), END };
static const struct opalctl_opt_use lock_opts[] = {
	O(KEYFILE),
	OH(RANGE, "the range to lock (default 0, the global range)"),
	OH(ALL, "every range with locking enabled that the authority may read"),
	OH(USER, "authenticate as User N (1-9) instead of Admin1"),
	OH(FORCE, "lock although a partition in the range is mounted, held or open"),
	END };
static const struct opalctl_opt_use unlock_all_opts[] = {
	O(TABLE), O(NAME), O(DEADLINE), O(PROMPT_TIMEOUT), O(NO_PROMPT), O(ASKPASS),
	O(STATE_DIR), END };
static const struct opalctl_opt_use lock_all_opts[] = {
	O(TABLE), OH(NAME, "only this entry (repeatable; includes noauto)"),
	OH(DEADLINE, "no step runs past S seconds (device waits, getting keys)"),
	OH(FORCE, "lock although a partition in a range is mounted, held or open"), END };
static const struct opalctl_opt_use check_table_opts[] = { O(TABLE), O(BOOT), END };
static const struct opalctl_opt_use change_key_opts[] = {
	OH(KEYFILE, "the current key"), OH(NEW_KEYFILE, "the new key"),
	OH(WHO, "which PIN to change: sid, admin1 or both (default)"), END };
static const struct opalctl_opt_use user_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(USER, "the user, 1-9"), END };
static const struct opalctl_opt_use user_key_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(USER, "the user, 1-9"),
	OH(NEW_KEYFILE, "the user's new key"), END };
static const struct opalctl_opt_use grant_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(USER, "the user, 1-9"),
	OH(RANGE, "the range (0: global)"), OH(READ_ONLY, "read lock control only"), END };
static const struct opalctl_opt_use revoke_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(USER, "the user, 1-9"),
	OH(RANGE, "the range (0: global)"), END };
static const struct opalctl_opt_use admin_opts[] = { OH(KEYFILE, "the Admin1 key"), END };
static const struct opalctl_opt_use bind_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(RANGE, "the range the slot unlocks (default 0)"),
	O(PIN), O(CONFIG), OH(JWE, "where to write the sealed key (default under /etc/fdekit/keys)"),
	END };
static const struct opalctl_opt_use unbind_opts[] = {
	OH(KEYFILE, "the Admin1 key"), O(SLOT),
	OH(JWE, "the sealed key file to delete (default under /etc/fdekit/keys)"), END };
static const struct opalctl_opt_use slots_opts[] = {
	OH(KEYFILE, "the Admin1 key (not with --report)"),
	OH(TABLE, "the unlock table naming the sealed keys (default /etc/fdekit/opaltab)"),
	OH(REPORT, "instead: for each clevis entry of the table, its Tang keys\n(current, rotated, gone) and its initramfs copy; no drive,\nno key; exit 15 when one needs regen, rebind or a new initramfs"),
	OH(JWE, "with --report: this sealed key file instead of the table's"),
	OH(INITRAMFS, "with --report: the image to compare (default\n/boot/initrd.img-$(uname -r))"),
	END };
static const struct opalctl_opt_use regen_opts[] = {
	OH(SLOT, "with DEV: the key slot (its JWE as the table or bind names it)"),
	OH(JWE, "this sealed key file"),
	OH(NAME, "the table entry (repeatable)"),
	OH(ALL, "every clevis entry of the table (noauto ones too)"),
	OH(TABLE, "the unlock table (default /etc/fdekit/opaltab)"),
	O(THP), O(REMOVE_OLD),
	OH(STATE_DIR, "with --remove-old: only the FILE.old of entries this boot\nunlocked with the JWE regen made, as unlock-all recorded in D;\nseal nothing (the boot's clean-up)"),
	END };
static const struct opalctl_opt_use mbr_opts[] = {
	OH(KEYFILE, "the Admin1 key"), O(ENABLE), O(DISABLE), O(DONE), O(NOT_DONE), O(WRITE), END };
static const struct opalctl_opt_use range_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(RANGE, "the range"), END };
static const struct opalctl_opt_use erase_opts[] = {
	OH(KEYFILE, "the Admin1 key"), OH(RANGE, "the range"),
	OH(YES, "confirm that everything in the range is lost"), OH(FORCE, "erase although it is in use"),
	END };
static const struct opalctl_opt_use revert_opts[] = {
	OH(KEYFILE, "the SID key (the Admin1 key with --keep-data)"),
	OH(KEEP_DATA, "revert only the Locking SP, keeping the global range's data"),
	OH(YES, "confirm that the data is erased"), OH(FORCE, "revert although the drive is in use"),
	END };
static const struct opalctl_opt_use psid_revert_opts[] = {
	O(PSID_FILE), OH(YES, "confirm that all data is erased"),
	OH(FORCE, "revert although the drive is in use"), END };
static const struct opalctl_opt_use keygen_opts[] = { O(PASSPHRASE), END };

#define K (CMD_NEEDS_DEV | CMD_NEEDS_KEY | CMD_DRIVE)

/* slots --report: the same name and options, no drive and no key. */
static const struct opalctl_cmd slots_report = {
	"slots", cmd_slots_report, text_slots_report, 0,
	"--report [--table F | --jwe F] [--initramfs IMG]",
	"which sealed keys need regen or rebind", slots_opts,
};

static const struct opalctl_cmd commands[] = {
	{ "scan", cmd_scan, text_scan, CMD_DRIVE, "", "list disks and their Opal support", scan_opts },
	{ "discover", cmd_discover, text_discover, CMD_NEEDS_DEV | CMD_DRIVE, "DEV",
	  "Level 0 Discovery features and properties", discover_opts },
	{ "status", cmd_status, text_status, CMD_NEEDS_DEV | CMD_DRIVE | CMD_TEXT_ON_FAIL,
	  "DEV [--keyfile F]", "locking state; ranges and MBR with the Admin1 key", status_opts },
	{ "msid", cmd_msid, text_msid, CMD_NEEDS_DEV | CMD_DRIVE | CMD_PROTOCOL, "DEV",
	  "print the MSID (the factory SID PIN; public)", msid_opts },
	{ "setup", cmd_setup, text_setup, K | CMD_KERNEL,
	  "DEV --keyfile F --global | --range N --start LBA --length N [--sum --new-keyfile F] [--yes-destroy-data] [--force]",
	  "take ownership, activate, enable locking", setup_opts },
	{ "unlock", cmd_unlock, text_lock_unlock, K | CMD_KERNEL | CMD_TEXT_ON_FAIL,
	  "DEV --keyfile F [--range N | --all] [--read-only] [--user N] [--save] [--keep-mbr]",
	  "unlock a range (sets MBR Done, re-reads partitions)", unlock_opts },
	{ "lock", cmd_lock, text_lock_unlock, K | CMD_KERNEL | CMD_TEXT_ON_FAIL,
	  "DEV --keyfile F [--range N | --all] [--user N] [--force]", "lock a range and check it locked",
	  lock_opts },
	{ "unlock-all", cmd_unlock_all, text_unlock_all, CMD_DRIVE,
	  "[--table F] [--name N]... [--deadline S] [--prompt-timeout S] [--no-prompt] [--askpass P] [--state-dir D]",
	  "unlock every entry of the unlock table (boot)", unlock_all_opts },
	{ "lock-all", cmd_lock_all, text_lock_all, CMD_DRIVE,
	  "[--table F] [--name N]... [--deadline S] [--force]",
	  "lock the entries of the unlock table again, with their own keys (shutdown)",
	  lock_all_opts },
	{ "check-table", cmd_check_table, text_check_table, 0, "[--table F] [--boot]",
	  "check every entry of the unlock table (with --boot print the initramfs table)",
	  check_table_opts },
	{ "change-key", cmd_change_key, text_change_key, K | CMD_PROTOCOL,
	  "DEV --keyfile F --new-keyfile F [--who sid|admin1|both]", "change the SID/Admin1 key",
	  change_key_opts },
	{ "user-enable", cmd_user_enable, text_user, K | CMD_KERNEL, "DEV --keyfile F --user N",
	  "enable authority UserN (Admin1 key)", user_opts },
	{ "user-disable", cmd_user_disable, text_user, K | CMD_PROTOCOL, "DEV --keyfile F --user N",
	  "disable authority UserN", user_opts },
	{ "user-key", cmd_user_key, text_user, K | CMD_KERNEL,
	  "DEV --keyfile F --user N --new-keyfile F", "set UserN's key as Admin1", user_key_opts },
	{ "grant", cmd_grant, text_grant_revoke, K | CMD_PROTOCOL,
	  "DEV --keyfile F --user N --range N [--read-only]",
	  "let UserN lock and unlock a range (keeps the others)", grant_opts },
	{ "revoke", cmd_revoke, text_grant_revoke, K | CMD_PROTOCOL,
	  "DEV --keyfile F --user N --range N", "take a range's lock control from UserN",
	  revoke_opts },
	{ "access", cmd_access, text_access, K | CMD_PROTOCOL, "DEV --keyfile F",
	  "who may lock and unlock each range", admin_opts },
	{ "bind", cmd_bind, text_bind, K | CMD_PROTOCOL,
	  "DEV --keyfile F [--range N] --pin tang|tpm2|sss --config JSON [--jwe F]",
	  "new key slot: a user with a random key sealed by clevis", bind_opts },
	{ "unbind", cmd_unbind, text_unbind, K | CMD_PROTOCOL, "DEV --keyfile F --slot N [--jwe F]",
	  "remove a key slot", unbind_opts },
	{ "slots", cmd_slots, text_slots, K | CMD_PROTOCOL,
	  "DEV --keyfile F [--table F] | --report [--table F | --jwe F] [--initramfs IMG]",
	  "key slots: users, their ranges and sealed keys; or which sealed keys need regen",
	  slots_opts },
	{ "regen", cmd_regen, text_regen, CMD_DEV_OPTIONAL,
	  "DEV --slot N | --jwe F | --name N... | --all [--table F] [--thp THP]... [--remove-old [--state-dir D]]",
	  "seal a slot's key again for the Tang servers' current keys (no drive, no key)",
	  regen_opts },
	{ "mbr", cmd_mbr, text_mbr, K | CMD_KERNEL,
	  "DEV --keyfile F [--enable | --disable] [--done | --not-done] [--write IMG]",
	  "shadow MBR control", mbr_opts },
	{ "range-disable", cmd_range_disable, text_range_disable, K | CMD_KERNEL,
	  "DEV --keyfile F --range N", "turn a range's locking off (unlocks it for good)",
	  range_opts },
	{ "erase-range", cmd_erase_range, text_erase_range, K | CMD_KERNEL,
	  "DEV --keyfile F --range N --yes-destroy-data [--force]", "crypto-erase a range", erase_opts },
	{ "revert", cmd_revert_sid, text_revert, K | CMD_KERNEL,
	  "DEV --keyfile F [--keep-data] --yes-destroy-data [--force]",
	  "back to factory state as SID (erases all), or only the Locking SP", revert_opts },
	{ "psid-revert", cmd_revert_psid, text_revert, CMD_NEEDS_DEV | CMD_DRIVE | CMD_KERNEL,
	  "DEV --psid-file F --yes-destroy-data [--force]", "back to factory state with the PSID",
	  psid_revert_opts },
	{ "keygen", cmd_keygen, text_keygen, CMD_NEEDS_DEV | CMD_NO_OPEN, "FILE [--passphrase]",
	  "write a random 32-byte key, or a key to type", keygen_opts },
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

const struct opalctl_cmd *opalctl_commands(size_t *n)
{
	*n = NCOMMANDS;
	return commands;
}

const char *opalctl_opt_name(enum opalctl_opt o)
{
	return o > OPT_NONE && o < OPT_COUNT ? opt_defs[o].name : NULL;
}

bool opalctl_opt_has_arg(enum opalctl_opt o)
{
	return o > OPT_NONE && o < OPT_COUNT && opt_defs[o].has_arg;
}

bool opalctl_cmd_own(const struct opalctl_cmd *cmd, enum opalctl_opt o)
{
	for (const struct opalctl_opt_use *u = cmd->opts; u->opt != OPT_NONE; u++)
		if (u->opt == o)
			return true;
	return false;
}

/* A command reads a key when it takes one of the key file options. */
static bool reads_key(const struct opalctl_cmd *cmd)
{
	return opalctl_cmd_own(cmd, OPT_KEYFILE) || opalctl_cmd_own(cmd, OPT_PSID_FILE);
}

bool opalctl_cmd_takes(const struct opalctl_cmd *cmd, enum opalctl_opt o)
{
	switch (o) {
	case OPT_JSON: case OPT_VERBOSE: case OPT_VERSION: case OPT_HELP:
		return true;
	case OPT_TRANSPORT: case OPT_TIMEOUT:
		return (cmd->flags & CMD_DRIVE) != 0;
	case OPT_HASH:
		return opalctl_cmd_own(cmd, OPT_KEYFILE);
	case OPT_INSECURE_KEYFILE:
		return reads_key(cmd);
	default:
		return opalctl_cmd_own(cmd, o);
	}
}

/* "  -k, --keyfile F      help", continuation lines indented under the help. */
static void print_opt(FILE *o, enum opalctl_opt id, const char *help)
{
	const struct opt_def *d = &opt_defs[id];
	char left[48];
	int n;

	if (d->short_opt)
		n = snprintf(left, sizeof(left), "-%c, --%s%s%s", d->short_opt, d->name,
			     d->arg ? " " : "", d->arg ? d->arg : "");
	else
		n = snprintf(left, sizeof(left), "    --%s%s%s", d->name, d->arg ? " " : "",
			     d->arg ? d->arg : "");
	fprintf(o, "  %s", left);
	if (n > 20)
		fprintf(o, "\n  %22s", "");
	else
		fprintf(o, "%*s", 22 - n, "");
	for (const char *p = help ? help : d->help; *p; p++) {
		fputc(*p, o);
		if (*p == '\n')
			fprintf(o, "  %22s", "");
	}
	fputc('\n', o);
}

static const char exit_codes[] =
	"Exit codes: 0 ok, 1 usage, 2 device, 3 unsupported, 4 authentication failed,\n"
	"5 locked out, 6 drive refused, 7 key file, 8 timeout, 9 protocol, 10 refused,\n"
	"11 some entries failed, 12 unlock table, 13 clevis could not seal, 14 not authorized,\n"
	"15 a sealed key needs regen or rebind, 16 a sealed key no longer opens\n";

static void usage(FILE *o)
{
	fputs("Usage: opalctl [OPTIONS] COMMAND [DEV|FILE] [OPTIONS]\n"
	      "Manage TCG Opal self-encrypting drives (PBA-free, OS-driven unlock).\n\n"
	      "Commands:\n", o);
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(o, "  %s %s\n      %s\n", commands[i].name, commands[i].synopsis,
			commands[i].summary);
	fputs("\nEach command takes only its own options: `opalctl COMMAND --help` lists them.\n"
	      "Options of every command that reads a key:\n", o);
	print_opt(o, OPT_HASH, NULL);
	print_opt(o, OPT_INSECURE_KEYFILE, NULL);
	fputs("Options of every command that reaches a drive:\n", o);
	print_opt(o, OPT_TRANSPORT, NULL);
	print_opt(o, OPT_TIMEOUT, NULL);
	fputs("Options of every command:\n", o);
	for (enum opalctl_opt id = OPT_JSON; id <= OPT_HELP; id++)
		print_opt(o, id, NULL);
	fputc('\n', o);
	fputs(exit_codes, o);
}

static void usage_cmd(FILE *o, const struct opalctl_cmd *cmd)
{
	fprintf(o, "Usage: opalctl %s%s%s\n%c%s.\n", cmd->name, *cmd->synopsis ? " " : "",
		cmd->synopsis, cmd->summary[0] >= 'a' && cmd->summary[0] <= 'z' ?
		cmd->summary[0] - 'a' + 'A' : cmd->summary[0], cmd->summary + 1);
	if (cmd->opts[0].opt != OPT_NONE) {
		fputs("\nOptions:\n", o);
		for (const struct opalctl_opt_use *u = cmd->opts; u->opt != OPT_NONE; u++)
			print_opt(o, u->opt, u->help);
	}
	fputs("\nCommon options:\n", o);
	for (enum opalctl_opt id = OPT_HASH; id < OPT_COUNT; id++)
		if (opalctl_cmd_takes(cmd, id) && !opalctl_cmd_own(cmd, id) && id != OPT_VERSION)
			print_opt(o, id, id == OPT_HELP ? "this help" : NULL);
	fputc('\n', o);
	fputs(exit_codes, o);
}

static bool parse_u64(const char *s, uint64_t *v)
{
	return opal_parse_u64(s, 0, UINT64_MAX, v);
}

/* One option's value into the context; 0 or the failure reported. */
static int set_option(struct ctx *c, enum opalctl_opt id, const char *arg)
{
	uint64_t v;

	switch (id) {
	case OPT_KEYFILE: c->keyfile = arg; break;
	case OPT_NEW_KEYFILE: c->new_keyfile = arg; break;
	case OPT_PSID_FILE: c->psid_file = arg; break;
	case OPT_INSECURE_KEYFILE: c->insecure_keyfile = true; break;
	case OPT_HASH:
		c->sedutil = !strcmp(arg, "sedutil") || !strcmp(arg, "sedutil-sha512");
		c->sedutil512 = !strcmp(arg, "sedutil-sha512");
		if (!c->sedutil && strcmp(arg, "none"))
			return fail(c, EXIT_USAGE, "--hash %s: use none, sedutil or sedutil-sha512", arg);
		break;
	case OPT_RANGE:
		if (!parse_u64(arg, &v) || v > 8)
			return fail(c, EXIT_USAGE, "--range %s: use 0 (global) to 8", arg);
		c->range = (int)v;
		break;
	case OPT_GLOBAL: c->global = true; break;
	case OPT_START:
		if (!parse_u64(arg, &c->start))
			return fail(c, EXIT_USAGE, "--start %s: not a block number", arg);
		c->have_start = true;
		break;
	case OPT_LENGTH:
		if (!parse_u64(arg, &c->length) || !c->length)
			return fail(c, EXIT_USAGE, "--length %s: not a positive block count", arg);
		c->have_length = true;
		break;
	case OPT_READ_ONLY: c->read_only = true; break;
	case OPT_USER:
	case OPT_SLOT:
		if (!parse_u64(arg, &v) || v < 1 || v > 9)
			return fail(c, EXIT_USAGE, "--%s %s: use 1 to 9", opt_defs[id].name, arg);
		if (id == OPT_USER)
			c->user = (int)v;
		else
			c->slot = (int)v;
		break;
	case OPT_SAVE: c->save = true; break;
	case OPT_KEEP_MBR: c->keep_mbr = true; break;
	case OPT_WHO: c->who = arg; break;
	case OPT_ENABLE: c->mbr_enable = 1; break;
	case OPT_DISABLE: c->mbr_enable = 0; break;
	case OPT_DONE: c->mbr_done = 1; break;
	case OPT_NOT_DONE: c->mbr_done = 0; break;
	case OPT_WRITE: c->mbr_file = arg; break;
	case OPT_YES: c->yes = true; break;
	case OPT_KEEP_DATA: c->keep_data = true; break;
	case OPT_ALL: c->all = true; break;
	case OPT_SUM: c->sum = true; break;
	case OPT_PIN: c->pin = arg; break;
	case OPT_CONFIG: c->pin_config = arg; break;
	case OPT_JWE: c->jwe = arg; break;
	case OPT_TABLE: c->table = arg; break;
	case OPT_NAME:
		if (c->nnames >= OPALCTL_MAX_NAMES)
			return fail(c, EXIT_USAGE, "--name: at most %d names", OPALCTL_MAX_NAMES);
		c->names[c->nnames++] = arg;
		break;
	case OPT_DEADLINE:
		if (!parse_u64(arg, &v) || v > 86400)
			return fail(c, EXIT_USAGE, "--deadline %s: use 0 to 86400 seconds", arg);
		c->deadline_s = (unsigned int)v;
		c->have_deadline = true;
		break;
	case OPT_PROMPT_TIMEOUT:
		if (!parse_u64(arg, &v) || !v || v > 86400)
			return fail(c, EXIT_USAGE, "--prompt-timeout %s: use 1 to 86400 seconds", arg);
		c->prompt_timeout_s = (unsigned int)v;
		break;
	case OPT_NO_PROMPT: c->no_prompt = true; break;
	case OPT_ASKPASS: c->askpass = arg; break;
	case OPT_BOOT: c->boot = true; break;
	case OPT_STATE_DIR: c->state_dir = arg; break;
	case OPT_FORCE: c->force = true; break;
	case OPT_PASSPHRASE: c->passphrase = true; break;
	case OPT_REPORT: c->report = true; break;
	case OPT_INITRAMFS: c->initramfs = arg; break;
	case OPT_REMOVE_OLD: c->remove_old = true; break;
	case OPT_THP:
		if (c->nthps >= OPALCTL_MAX_THPS)
			return fail(c, EXIT_USAGE, "--thp: at most %d thumbprints", OPALCTL_MAX_THPS);
		if (!*arg || strspn(arg, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") != strlen(arg))
			return fail(c, EXIT_USAGE, "--thp %s: not a thumbprint (base64url)", arg);
		c->thps[c->nthps++] = arg;
		break;
	case OPT_TRANSPORT:
		if (strcmp(arg, "auto") && strcmp(arg, "ioctl") && strcmp(arg, "nvme") &&
		    strcmp(arg, "scsi") && strcmp(arg, "sedsim"))
			return fail(c, EXIT_USAGE, "--transport %s: use auto, ioctl, nvme, scsi (or sedsim, test builds)",
				    arg);
		c->transport = arg;
		break;
	case OPT_TIMEOUT:
		if (!parse_u64(arg, &v) || !v || v > 600000)
			return fail(c, EXIT_USAGE, "--timeout %s: use 1 to 600000 ms", arg);
		c->timeout_ms = (unsigned int)v;
		break;
	case OPT_JSON: c->json = true; break;
	case OPT_VERBOSE: c->verbose = true; break;
	default: break;
	}
	return 0;
}

static const struct opalctl_cmd *find_command(const char *name)
{
	for (size_t i = 0; i < NCOMMANDS; i++)
		if (!strcmp(commands[i].name, name))
			return &commands[i];
	return NULL;
}

/*
 * Parse the command line into c. The command's table entry decides which
 * options it takes: any other is an error, as is an option with a value
 * given twice and a pair that excludes each other. Returns 0, -1 when
 * help or the version was printed, or the failure reported.
 */
static int parse_args(struct ctx *c, int argc, char **argv)
{
	struct option lopts[OPT_COUNT];
	char sopts[32] = "-";
	const char *pos[3] = { 0 };
	uint64_t seen = 0;
	int npos = 0, opt, nl = 0;
	const struct opalctl_cmd *cmd;

	for (int id = OPT_NONE + 1; id < OPT_COUNT; id++) {
		const struct opt_def *d = &opt_defs[id];

		lopts[nl++] = (struct option){ d->name, d->has_arg ? required_argument : no_argument,
					       NULL, 256 + id };
		if (d->short_opt) {
			size_t l = strlen(sopts);

			sopts[l] = (char)d->short_opt;
			sopts[l + 1] = 0;
			if (d->has_arg)
				strcat(sopts, ":");
		}
	}
	lopts[nl] = (struct option){ 0 };
	optind = 0;	/* full reinitialisation, so tests can run us repeatedly */
	opterr = 0;
	while ((opt = getopt_long(argc, argv, sopts, lopts, NULL)) != -1) {
		enum opalctl_opt id = OPT_NONE;
		int rc;

		if (opt == 1) {
			if (npos >= 2)
				return fail(c, EXIT_USAGE, "unexpected argument '%s': see --help", optarg);
			pos[npos++] = optarg;
			continue;
		}
		if (opt >= 256 && opt < 256 + OPT_COUNT)
			id = (enum opalctl_opt)(opt - 256);
		else
			for (int i = OPT_NONE + 1; i < OPT_COUNT; i++)
				if (opt_defs[i].short_opt && opt_defs[i].short_opt == opt)
					id = (enum opalctl_opt)i;
		if (id == OPT_NONE)
			return fail(c, EXIT_USAGE, "unknown or incomplete option '%s': see --help",
				    argv[optind - 1]);
		if ((seen & (1ull << id)) && opt_defs[id].has_arg && id != OPT_NAME && id != OPT_THP)
			return fail(c, EXIT_USAGE, "--%s given twice: give it once", opt_defs[id].name);
		seen |= 1ull << id;
		rc = set_option(c, id, optarg);
		if (rc)
			return rc;
	}
	if (seen & (1ull << OPT_HELP)) {
		if (!pos[0]) {
			usage(c->out);
			return -1;
		}
		cmd = find_command(pos[0]);
		if (!cmd)
			return fail(c, EXIT_USAGE, "unknown command '%s': see --help", pos[0]);
		usage_cmd(c->out, cmd);
		return -1;
	}
	if (seen & (1ull << OPT_VERSION)) {
		fprintf(c->out, "opalctl %s\n", FDEKIT_VERSION);
		return -1;
	}
	if (!pos[0])
		return fail(c, EXIT_USAGE, "no command given: see --help");
	c->cmd = pos[0];
	c->devpath = pos[1];
	cmd = find_command(c->cmd);
	if (!cmd)
		return fail(c, EXIT_USAGE, "unknown command '%s': see --help", c->cmd);
	for (int id = OPT_NONE + 1; id < OPT_COUNT; id++)
		if ((seen & (1ull << id)) && !opalctl_cmd_takes(cmd, (enum opalctl_opt)id))
			return fail(c, EXIT_USAGE, "%s does not take --%s: see opalctl %s --help",
				    cmd->name, opt_defs[id].name, cmd->name);
	for (size_t i = 0; i < sizeof(conflicts) / sizeof(conflicts[0]); i++)
		if ((seen & (1ull << conflicts[i][0])) && (seen & (1ull << conflicts[i][1])))
			return fail(c, EXIT_USAGE, "%s: --%s and --%s exclude each other: pick one",
				    cmd->name, opt_defs[conflicts[i][0]].name,
				    opt_defs[conflicts[i][1]].name);
	if (c->report && cmd->run == cmd_slots)
		cmd = &slots_report;
	c->command = cmd;
	return 0;
}

int opalctl_run(int argc, char **argv, FILE *in, FILE *out, FILE *err)
{
	struct ctx c = {
		.in = in, .out = out, .err = err, .range = -1, .mbr_enable = -1,
		.mbr_done = -1, .transport = "auto", .timeout_ms = 10000,
	};
	const struct opalctl_cmd *cmd;
	char why[160];
	int rc;

	/*
	 * A child that dies before reading what it is given (clevis, an
	 * askpass) makes that write fail with EPIPE, not end opalctl in the
	 * middle of a bind or a regen. Children get SIG_DFL back (spawn_child).
	 */
	signal(SIGPIPE, SIG_IGN);
	rc = parse_args(&c, argc, argv);
	if (rc)
		return rc < 0 ? EXIT_OK : rc;
	cmd = c.command;
	c.command = NULL;	/* fail() prints no partial result before the command runs */
	if ((cmd->flags & CMD_NEEDS_DEV) && !c.devpath)
		return fail(&c, EXIT_USAGE, "%s: needs a %s: see opalctl %s --help", c.cmd,
			    !strcmp(c.cmd, "keygen") ? "file name" : "device", c.cmd);
	if (!(cmd->flags & (CMD_NEEDS_DEV | CMD_DEV_OPTIONAL)) && c.devpath)
		return fail(&c, EXIT_USAGE, "%s: unexpected argument '%s': see opalctl %s --help",
			    c.cmd, c.devpath, c.cmd);
	if ((cmd->flags & CMD_NEEDS_KEY) && !c.keyfile)
		return fail(&c, EXIT_USAGE, "%s: needs --keyfile FILE (or - for stdin)", c.cmd);
	if ((cmd->flags & CMD_PROTOCOL) && !strcmp(c.transport, "ioctl"))
		return fail(&c, EXIT_UNSUPPORTED, "%s: the kernel's sed-opal has no such operation: use --transport auto, nvme or scsi",
			    c.cmd);
	c.jout = json_object_new_object();
	c.command = cmd;
	if (!(cmd->flags & CMD_NEEDS_DEV) || (cmd->flags & CMD_NO_OPEN)) {
		rc = cmd->run(&c);
	} else {
		rc = opalctl_dev_open(c.devpath, c.transport, c.timeout_ms,
				      (cmd->flags & CMD_KERNEL) != 0, &c.dev, why, sizeof(why));
		if (rc == OPAL_ERR_INVAL) {
			rc = fail(&c, EXIT_USAGE, "%s: %s", c.devpath, why);
		} else if (rc) {
			rc = fail(&c, EXIT_DEVICE,
				  "cannot open %s (transport %s): %s: check the path, permissions and --transport",
				  c.devpath, c.transport, why);
		} else {
			sigset_t term, old;

			if (c.verbose)
				fprintf(c.err, "opalctl: %s: %s through %s\n", c.cmd, c.devpath,
					c.dev->transport);
			if (c.verbose && c.dev->opal)
				opal_dev_set_trace(c.dev->opal, c.err);
			/*
			 * SIGINT/SIGTERM wait until our sessions are ended: a
			 * session left open would keep the drive busy (every
			 * wait on the drive is bounded by --timeout).
			 */
			sigemptyset(&term);
			sigaddset(&term, SIGINT);
			sigaddset(&term, SIGTERM);
			sigaddset(&term, SIGHUP);
			sigprocmask(SIG_BLOCK, &term, &old);
			rc = cmd->run(&c);
			opalctl_dev_close(c.dev);
			sigprocmask(SIG_SETMASK, &old, NULL);
		}
	}
	if (!rc)
		emit_result(&c);
	else
		emit_partial(&c);	/* when no fail() did */
	json_object_put(c.jout);
	return rc;
}
