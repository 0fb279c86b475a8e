// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network-bound unlock: key slots sealed with Clevis, and unlock-all, the
 * boot-time unlock of every drive in the unlock table.
 *
 * A key slot is a User authority of the Locking SP with a random 32-byte
 * PIN, allowed to lock and unlock a range; the PIN is sealed by
 * `clevis encrypt` (tang, tpm2, sss) into a JWE that is safe to keep in the
 * clear. Admin1's key is never replaced: it stays the recovery key.
 *
 * Secrets travel only through pipes: to clevis encrypt on its stdin, from
 * clevis decrypt on its stdout, into mlock'ed memory.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/rand.h>

#include "opal-drive-id.h"
#include "nbde-clevis.h"
#include "opalctl-cmd.h"
#include "opaltab.h"

#define SLOT_PIN_BYTES 32

/* ---------------------------------------------------------- key slots */

/*
 * What names the drive: its identity as udev reads it (opal-drive-id.h),
 * for file names (file_id: unique per drive, so that two drives of one
 * vendor never share a JWE) and for the table line bind prints (selector:
 * serial= for NVMe, wwn= for SCSI and ATA; empty: name the drive by path).
 * A device sysfs does not know (a sedsim directory) falls back to the Opal
 * transport's serial number, or the device's name.
 */
struct drive_name {
	char file_id[OPAL_DRIVE_FILE_ID_MAX];
	char selector[OPAL_DRIVE_SELECTOR_MAX];
	char serial[OPAL_DRIVE_SERIAL_MAX];
	char wwn[OPAL_DRIVE_WWN_MAX];
};

static void drive_name(struct ctx *c, struct drive_name *dn)
{
	char serial[OPAL_SERIAL_MAX + 1] = "";
	const char *base = strrchr(c->devpath, '/');
	struct opal_drive_ident id;
	size_t n = 0, cap = sizeof(dn->file_id);

	memset(dn, 0, sizeof(*dn));
	if (!opal_drive_identify(c->devpath, &id) && id.stable) {
		snprintf(dn->file_id, sizeof(dn->file_id), "%s", id.file_id);
		snprintf(dn->selector, sizeof(dn->selector), "%s", id.selector);
		snprintf(dn->serial, sizeof(dn->serial), "%s", id.serial);
		snprintf(dn->wwn, sizeof(dn->wwn), "%s", id.wwn);
		return;
	}
	if (c->dev && c->dev->opal && !opal_dev_serial(c->dev->opal, serial))
		serial[OPAL_SERIAL_MAX] = 0;
	else
		serial[0] = 0;
	for (const char *p = serial; *p && n + 1 < cap; p++) {
		if (*p == ' ')
			continue;
		dn->file_id[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
	}
	dn->file_id[n] = 0;
	if (n) {
		/* No selector: no search finds a drive sysfs does not know. */
		snprintf(dn->serial, sizeof(dn->serial), "%s", dn->file_id);
		return;
	}
	base = base ? base + 1 : c->devpath;
	for (const char *p = base; *p && n + 1 < cap; p++)
		dn->file_id[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
	dn->file_id[n] = 0;
}

static void default_jwe(struct ctx *c, unsigned int user, char *out, size_t cap)
{
	struct drive_name dn;

	drive_name(c, &dn);
	snprintf(out, cap, "%s/%s-user%u.jwe", KEYS_DIR, dn.file_id, user);
}

static int mkdir_p(const char *path, mode_t mode)
{
	char tmp[PATH_MAX];

	snprintf(tmp, sizeof(tmp), "%s", path);
	for (char *p = tmp + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = 0;
		if (mkdir(tmp, mode) && errno != EEXIST)
			return -errno;
		*p = '/';
	}
	return mkdir(tmp, mode) && errno != EEXIST ? -errno : 0;
}

static int read_access(struct ctx *c, struct opal_session *s, struct opal_access *acc)
{
	int rc = opal_read_access(s, acc);

	return rc ? fail_opal(c, "reading users and ACEs", rc, NULL, NULL) : 0;
}

int cmd_bind(struct ctx *c)
{
	unsigned int range = c->range < 0 ? 0 : (unsigned int)c->range, user = 0;
	struct opal_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL, *pin = NULL;
	struct opal_session *s = NULL;
	struct drive_name dn;
	char jwe[PATH_MAX], tmp[PATH_MAX + 8];
	int rc, fd = -1;

	if (!acc)
		return fail(c, EXIT_DRIVE, "bind: out of memory");
	if (!c->pin || (strcmp(c->pin, "tang") && strcmp(c->pin, "tpm2") && strcmp(c->pin, "sss"))) {
		free(acc);
		return fail(c, EXIT_USAGE, "bind: needs --pin tang, tpm2 or sss");
	}
	if (!c->pin_config) {
		free(acc);
		return fail(c, EXIT_USAGE, "bind: needs --config JSON (the pin's configuration, as for `clevis encrypt %s`)",
			    c->pin);
	}
	/* 1. Pick a free slot: a user neither enabled nor named by any ACE. */
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (!rc && (range >= acc->nranges || !acc->range[range].configured))
		rc = fail(c, EXIT_USAGE, "bind: range %u is not configured on %s: set it up first (`opalctl setup --range %u ...`)",
			  range, c->devpath, range);
	if (!rc)
		user = opal_slot_find_free(acc);
	if (!rc && !user)
		rc = fail(c, EXIT_DRIVE, "bind: no free key slot: all %u users are enabled or named in an ACE (remove one with `opalctl unbind`)",
			  acc->nusers);
	if (s) {
		opal_end_session(s);
		s = NULL;
	}
	if (rc)
		goto out;
	/* 2. A random PIN, sealed before the drive is touched. */
	pin = secret_new();
	if (!pin || RAND_bytes(pin->data, SLOT_PIN_BYTES) != 1) {
		rc = fail(c, EXIT_KEYFILE, "bind: no locked memory or random bytes for the slot key");
		goto out;
	}
	pin->len = SLOT_PIN_BYTES;
	if (c->jwe)
		snprintf(jwe, sizeof(jwe), "%s", c->jwe);
	else
		default_jwe(c, user, jwe, sizeof(jwe));
	if (!access(jwe, F_OK)) {
		rc = fail(c, EXIT_REFUSED, "bind: %s exists: remove it or give --jwe FILE", jwe);
		goto out;
	}
	if (!c->jwe && mkdir_p(KEYS_DIR, 0700)) {
		rc = fail(c, EXIT_KEYFILE, "bind: cannot create %s: %s", KEYS_DIR, strerror(errno));
		goto out;
	}
	snprintf(tmp, sizeof(tmp), "%s.new", jwe);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = fail(c, EXIT_KEYFILE, "bind: cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	if (c->verbose)
		fprintf(c->err, "opalctl: bind: clevis encrypt %s '%s' for User%u\n", c->pin,
			c->pin_config, user);
	rc = clevis_encrypt(c->pin, c->pin_config, pin, fd, 120);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	fd = -1;
	if (rc) {
		unlink(tmp);
		rc = fail(c, EXIT_CLEVIS, "bind: clevis encrypt %s failed (%s): check --config and that the %s server/device answers",
			  c->pin, rc < 0 ? strerror(-rc) : rc == 127 ? "clevis not installed" : "see its message above",
			  c->pin);
		goto out;
	}
	/* 3. The slot: enable the user, give it the PIN, grant it the range. */
	{
		struct opal_key k = key_of(key), p = key_of(pin);

		rc = opal_admin1_session(c->dev->opal, &k, &s);
		if (!rc)
			rc = opal_slot_bind(s, user, range, &p);
		if (s) {
			int end = opal_end_session(s);

			rc = rc ? rc : end;
			s = NULL;
		}
	}
	if (rc) {
		unlink(tmp);
		rc = fail_opal(c, "bind: setting up the user", rc, NULL, NULL);
		goto out;
	}
	if (rename(tmp, jwe)) {
		rc = fail(c, EXIT_KEYFILE, "bind: User%u is set up but %s cannot be renamed to %s: %s: rename it by hand",
			  user, tmp, jwe, strerror(errno));
		goto out;
	}
	drive_name(c, &dn);
	{
		char line[PATH_MAX * 2 + 128];

		/* Named by what survives renumbering, or by path when nothing does. */
		snprintf(line, sizeof(line), "NAME %s %u clevis:%s user=%u",
			 dn.selector[0] ? dn.selector : c->devpath, range, jwe, user);
		json_object_object_add(c->jout, "slot", json_object_new_int((int)user));
		json_object_object_add(c->jout, "range", json_object_new_int((int)range));
		json_object_object_add(c->jout, "pin", json_object_new_string(c->pin));
		json_object_object_add(c->jout, "jwe", json_object_new_string(jwe));
		json_object_object_add(c->jout, "opaltab", json_object_new_string(line));
		json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	}
out:
	if (fd >= 0)
		close(fd);
	secret_free(pin);
	secret_free(key);
	free(acc);
	return rc;
}

void text_bind(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: key slot User%" PRId64 " bound to range %" PRId64 " with clevis %s; sealed key in %s\n",
		res_str(res, "device"), res_int(res, "slot"), res_int(res, "range"),
		res_str(res, "pin"), res_str(res, "jwe"));
	fprintf(c->out, "opaltab line (name it): %s\n", res_str(res, "opaltab"));
}

int cmd_unbind(struct ctx *c)
{
	struct opal_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL, *scrap = secret_new();
	struct opal_session *s = NULL;
	unsigned int user = (unsigned int)c->slot;
	char jwe[PATH_MAX];
	bool had_jwe;
	int rc;

	if (!acc || !scrap) {
		free(acc);
		secret_free(scrap);
		return fail(c, EXIT_DRIVE, "unbind: out of memory");
	}
	if (!user) {
		free(acc);
		secret_free(scrap);
		return fail(c, EXIT_USAGE, "unbind: needs --slot N (the user number `opalctl slots` shows)");
	}
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (!rc && user > acc->nusers)
		rc = fail(c, EXIT_USAGE, "unbind: the drive has %u users, no User%u", acc->nusers, user);
	if (!rc) {
		/*
		 * Revoke its ACE entries, give it a PIN nobody knows (a sealed
		 * copy of the old one must never work again), disable it.
		 */
		struct opal_key p = { scrap->data, SLOT_PIN_BYTES };
		int orc = 0;

		scrap->len = SLOT_PIN_BYTES;
		if (RAND_bytes(scrap->data, SLOT_PIN_BYTES) != 1)
			orc = OPAL_ERR_NOMEM;
		if (!orc)
			orc = opal_slot_unbind(s, acc, user, &p);
		if (orc)
			rc = fail_opal(c, "unbind: removing the user", orc, NULL, NULL);
	}
	if (s) {
		int end = opal_end_session(s);

		if (!rc && end)
			rc = fail_opal(c, "unbind: ending the session", end, NULL, NULL);
	}
	secret_free(key);
	secret_free(scrap);
	free(acc);
	if (rc)
		return rc;
	if (c->jwe)
		snprintf(jwe, sizeof(jwe), "%s", c->jwe);
	else
		default_jwe(c, user, jwe, sizeof(jwe));
	had_jwe = !access(jwe, F_OK);
	if (had_jwe && unlink(jwe))
		return fail(c, EXIT_KEYFILE, "unbind: User%u removed, but %s stays: %s", user, jwe,
			    strerror(errno));
	json_object_object_add(c->jout, "slot", json_object_new_int((int)user));
	json_object_object_add(c->jout, "jwe_removed", had_jwe ? json_object_new_string(jwe) : NULL);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_unbind(struct ctx *c, json_object *res)
{
	bool had_jwe = res_get(res, "jwe_removed");

	fprintf(c->out, "%s: key slot User%" PRId64 " removed%s%s\n", res_str(res, "device"),
		res_int(res, "slot"), had_jwe ? "; deleted " : "", res_str(res, "jwe_removed"));
}

/* The JWE an unlock table entry for this drive names for user, if any. */
static void table_jwe(struct ctx *c, const struct opaltab_entry *tab, size_t n, unsigned int user,
		      char *out, size_t cap)
{
	char dev[PATH_MAX], other[PATH_MAX], serial[OPAL_DRIVE_SERIAL_MAX];
	struct drive_name dn;

	drive_name(c, &dn);
	if (!realpath(c->devpath, dev))
		snprintf(dev, sizeof(dev), "%s", c->devpath);
	out[0] = 0;
	for (size_t i = 0; i < n; i++) {
		const struct opaltab_entry *e = &tab[i];

		if (e->bad || e->key_kind != OPALTAB_KEY_CLEVIS || e->user != user)
			continue;
		/* A serial compares as udev exports it, as unlock-all finds it. */
		opal_drive_udev_string(e->dev, strlen(e->dev), serial, sizeof(serial));
		if ((e->dev_kind == OPALTAB_DEV_PATH && realpath(e->dev, other) && !strcmp(other, dev)) ||
		    (e->dev_kind == OPALTAB_DEV_SERIAL && dn.serial[0] && !strcmp(serial, dn.serial)) ||
		    (e->dev_kind == OPALTAB_DEV_WWN && dn.wwn[0] && opal_drive_wwn_equal(e->dev, dn.wwn))) {
			snprintf(out, cap, "%s", e->key_path);
			return;
		}
	}
}

void slot_jwe(struct ctx *c, const struct opaltab_entry *tab, size_t n, unsigned int user,
	      char *out, size_t cap)
{
	table_jwe(c, tab, n, user, out, cap);
	if (!out[0])
		default_jwe(c, user, out, cap);
}

int cmd_slots(struct ctx *c)
{
	struct opal_access *acc = calloc(1, sizeof(*acc));
	struct secret *key = NULL;
	struct opal_session *s = NULL;
	struct opaltab_entry *tab = NULL;
	size_t ntab = 0;
	json_object *arr;
	int rc;
	FILE *tf;

	if (c->jwe || c->initramfs)
		return fail(c, EXIT_USAGE, "slots: --%s goes with --report", c->jwe ? "jwe" : "initramfs");
	tf = fopen(c->table ? c->table : OPALTAB_DEFAULT, "r");
	if (tf) {
		char err[320];

		if (opaltab_parse(tf, &tab, &ntab, err, sizeof(err)))
			warn(c, "%s: %s: sealed keys named there are not shown",
			     c->table ? c->table : OPALTAB_DEFAULT, err);
		fclose(tf);
	}

	if (!acc)
		return fail(c, EXIT_DRIVE, "slots: out of memory");
	rc = opalctl_admin_open(c, &key, &s);
	if (!rc)
		rc = read_access(c, s, acc);
	if (s)
		opal_end_session(s);
	secret_free(key);
	if (rc) {
		free(tab);
		free(acc);
		return rc;
	}
	arr = json_object_new_array();
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "slots", arr);
	for (unsigned int u = 0; u <= acc->nusers; u++) {
		opal_uid a = u ? opal_uid_user(u) : OPAL_UID_ADMINS;
		json_object *o, *rr = json_object_new_array(), *ro = json_object_new_array();
		char jwe[PATH_MAX], pin[32] = "", name[16];
		bool any = false;

		for (unsigned int n = 0; n < acc->nranges; n++) {
			const struct opal_range_access *x = &acc->range[n].ace;
			bool rd, wr;

			if (!acc->range[n].configured)
				continue;
			rd = opal_ace_has(&x->rdlocked, &a);
			wr = opal_ace_has(&x->wrlocked, &a);
			if (!rd && !wr)
				continue;
			any = true;
			json_object_array_add(rr, json_object_new_int((int)n));
			if (!wr)
				json_object_array_add(ro, json_object_new_int((int)n));
		}
		if (u && !acc->user_enabled[u] && !any) {
			json_object_put(rr);
			json_object_put(ro);
			continue;
		}
		jwe[0] = 0;
		if (u) {
			slot_jwe(c, tab, ntab, u, jwe, sizeof(jwe));
			if (access(jwe, R_OK))
				jwe[0] = 0;
			else
				clevis_jwe_pin(jwe, pin, sizeof(pin));
		}
		if (u)
			snprintf(name, sizeof(name), "User%u", u);
		else
			snprintf(name, sizeof(name), "Admins");
		o = json_object_new_object();
		json_object_object_add(o, "slot", json_object_new_int((int)u));
		json_object_object_add(o, "authority", json_object_new_string(name));
		json_object_object_add(o, "enabled", jbool(!u || acc->user_enabled[u]));
		json_object_object_add(o, "ranges", rr);
		json_object_object_add(o, "jwe", jwe[0] ? json_object_new_string(jwe) : NULL);
		json_object_object_add(o, "pin", pin[0] ? json_object_new_string(pin) : NULL);
		/* Ranges it may lock for reading only (no write lock control). */
		json_object_object_add(o, "read_only_ranges", ro);
		json_object_array_add(arr, o);
	}
	free(tab);
	free(acc);
	return 0;
}

/* One slot: "Admins" (slot 0) is Admin1's recovery key, the others users. */
static void slot_text(FILE *out, json_object *o)
{
	json_object *rr = res_get(o, "ranges"), *ro = res_get(o, "read_only_ranges");
	char ranges[64] = "-";
	size_t rl = 0;

	for (size_t i = 0; i < res_count(rr); i++) {
		int n = json_object_get_int(json_object_array_get_idx(rr, i));
		bool read_only = false;

		for (size_t j = 0; j < res_count(ro); j++)
			read_only |= json_object_get_int(json_object_array_get_idx(ro, j)) == n;
		rl += (size_t)snprintf(ranges + rl, sizeof(ranges) - rl, "%s%d%s", rl ? "," : "", n,
				       read_only ? "(ro)" : "");
		if (rl >= sizeof(ranges))
			rl = sizeof(ranges) - 1;
	}
	if (!res_int(o, "slot")) {
		fprintf(out, "Admins   ranges %-12s recovery key (Admin1)\n", ranges);
		return;
	}
	fprintf(out, "User%-4" PRId64 " ranges %-12s %s", res_int(o, "slot"), ranges,
		res_bool(o, "enabled") ? "enabled" : "disabled");
	if (res_get(o, "jwe"))
		fprintf(out, ", clevis %s in %s\n", res_str(o, "pin"), res_str(o, "jwe"));
	else
		fprintf(out, ", no sealed key here\n");
}

void text_slots(struct ctx *c, json_object *res)
{
	json_object *arr = res_get(res, "slots");

	for (size_t i = 0; i < res_count(arr); i++)
		slot_text(c->out, json_object_array_get_idx(arr, i));
}

/* ---------------------------------------------------------- unlock-all */

/* The longest pause between two attempts to get a key while a prompt waits. */
#define FETCH_BACKOFF_MAX_S 8

/*
 * The run's bounds: automatic steps (device waits, key attempts) end at
 * end; prompts, where a person answers, share one budget of their own
 * after it, so the whole run ends by end + --prompt-timeout.
 */
struct deadline {
	bool set;		/* --deadline given (0 included) */
	uint64_t end;		/* automatic steps, monotonic ms */
	uint64_t prompt_ms;	/* the prompt budget */
};

static uint64_t remaining_ms(const struct deadline *d, uint64_t want)
{
	uint64_t t = nbde_now_ms();

	if (!d->set)
		return want;
	if (t >= d->end)
		return 0;
	return d->end - t < want ? d->end - t : want;
}

/*
 * When a prompt must end: with a deadline, its shared budget after it;
 * without one, the budget from now.
 */
static uint64_t prompt_end(const struct deadline *d)
{
	return (d->set ? d->end : nbde_now_ms()) + d->prompt_ms;
}

/*
 * Wait (bounded) for the entry's device: 0 and its path, -ENOENT when it
 * did not appear in time, -ENOTUNIQ when its serial or WWN names two
 * drives (path: both; nothing may be unlocked then).
 */
static int wait_device(const struct opaltab_entry *e, const struct deadline *dl, char *path,
		       size_t cap)
{
	uint64_t end = nbde_now_ms() + remaining_ms(dl, (uint64_t)e->timeout_s * 1000);

	for (;;) {
		int rc = -ENOENT;

		if (e->dev_kind == OPALTAB_DEV_PATH) {
			if (!access(e->dev, F_OK)) {
				snprintf(path, cap, "%s", e->dev);
				rc = 0;
			}
		} else {
			rc = opal_drive_find(e->dev_kind == OPALTAB_DEV_SERIAL ? OPAL_DRIVE_BY_SERIAL :
					     OPAL_DRIVE_BY_WWN, e->dev, path, cap);
		}
		if (rc != -ENOENT || nbde_now_ms() >= end)
			return rc;
		usleep(200000);
	}
}

/* ------------------------------------------------ asking and Tang at once */

/*
 * A key sought in the background (clevis decrypt, retried with backoff)
 * while a person is asked: the first key that works wins, and the other
 * is cancelled.
 */
struct key_fetch {
	pid_t pid;	/* 0: none running */
	int fd;		/* the key arrives here (end of file: given up) */
};

static void fetch_stop(struct key_fetch *f)
{
	if (f->pid > 0)
		reap_child(f->pid, 0, true);
	if (f->fd >= 0)
		close(f->fd);
	f->pid = 0;
	f->fd = -1;
}

/*
 * Start trying the entry's JWE until end (monotonic ms): a process of its
 * own, whose clevis calls say nothing on the console while the prompt is
 * there. Without it (fork failed) the prompt is still asked.
 */
static void fetch_start(const struct opaltab_entry *e, uint64_t end, struct key_fetch *f)
{
	int p[2];
	pid_t pid;

	f->pid = 0;
	f->fd = -1;
	if (pipe2(p, O_CLOEXEC))
		return;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		struct secret *key = secret_new();
		unsigned int backoff = 1;
		char why[600];
		int null = open("/dev/null", O_WRONLY | O_CLOEXEC);

		setpgid(0, 0);
		close(p[0]);
		if (null >= 0)
			dup2(null, 2);
		while (key) {
			uint64_t t = nbde_now_ms(), left = t < end ? end - t : 0;
			uint64_t each = (uint64_t)e->timeout_s * 1000;

			if (left < 1000)
				break;
			if (!clevis_decrypt(e->key_path, (unsigned int)((left < each ? left : each) / 1000),
					    key, why, sizeof(why))) {
				bool sent = write(p[1], key->data, key->len) == (ssize_t)key->len;

				secret_free(key);
				_exit(sent ? 0 : 1);
			}
			t = nbde_now_ms();
			if (t + backoff * 1000u >= end)
				break;
			sleep(backoff);
			backoff = backoff * 2 > FETCH_BACKOFF_MAX_S ? FETCH_BACKOFF_MAX_S : backoff * 2;
		}
		secret_free(key);
		_exit(1);
	}
	setpgid(pid, pid);
	close(p[1]);
	f->pid = pid;
	f->fd = p[0];
}

/*
 * The fetcher's fd is readable: its key into out (0), or it gave up
 * (-ENOKEY). Either way it is over.
 */
static int fetch_collect(struct key_fetch *f, struct secret *out)
{
	int rc;

	out->len = 0;
	rc = capture_output(f->fd, out, nbde_now_ms() + 5000, -1);
	close(f->fd);
	f->fd = -1;
	if (reap_child(f->pid, nbde_now_ms() + 5000, false) || rc || !out->len || out->len > OPAL_PIN_MAX) {
		explicit_bzero(out->data, out->cap);
		out->len = 0;
		rc = -ENOKEY;
	}
	f->pid = 0;
	return rc;
}

/*
 * Ask for a passphrase until end: --askpass, else the terminal with echo
 * off. Gives up as soon as wake_fd (>= 0) is readable: returns 1 (the
 * askpass is terminated). 0: the passphrase in out; else -errno.
 */
static int ask_passphrase(struct ctx *c, const char *prompt, uint64_t end, struct secret *out,
			  int wake_fd)
{
	uint64_t t = nbde_now_ms();
	int rc;

	out->len = 0;
	if (t >= end)
		return -ETIMEDOUT;
	if (c->askpass) {
		char *const argv[] = { (char *)c->askpass, (char *)prompt, NULL };
		struct child_io io = { .in_fd = 0, .out_fd = -1, .capture = out };
		int fd = -1;
		pid_t pid = spawn_child(argv, &io, &fd);
		bool woken;

		if (pid < 0)
			return pid;
		rc = capture_output(fd, out, end, wake_fd);
		woken = rc == 1;
		close(fd);
		if (woken) {
			/* A polite end first: plymouth or the agent take the prompt down. */
			kill(-pid, SIGTERM);
			reap_child(pid, nbde_now_ms() + 1000, false);
			explicit_bzero(out->data, out->cap);
			out->len = 0;
			return 1;
		}
		{
			int st = reap_child(pid, rc ? 0 : end, rc != 0);

			rc = rc ? rc : st ? -EIO : 0;
		}
		if (rc) {
			explicit_bzero(out->data, out->cap);
			out->len = 0;
			return rc;
		}
	} else {
		int fd = open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);

		if (fd < 0)
			fd = dup(fileno(c->in));
		if (fd < 0)
			return -errno;
		rc = secret_read_line_or(out, fd, prompt, (unsigned int)(end - t), wake_fd);
		close(fd);
		if (rc)
			return rc;
	}
	/* A passphrase loses one trailing newline, as a text key file does. */
	if (out->len && out->data[out->len - 1] == '\n')
		out->len--;
	return out->len ? 0 : -ENODATA;
}

/* Nobody answers (no terminal, the askpass failed): wait for the fetcher alone. */
static int wait_fetch(struct key_fetch *f, uint64_t end)
{
	int rc = wait_readable(f->fd, -1, end);

	return rc ? rc : 1;
}

/* ------------------------------------------------------------- entries */

static bool named(const struct ctx *c, const char *name)
{
	for (unsigned int i = 0; i < c->nnames; i++)
		if (!strcmp(c->names[i], name))
			return true;
	return false;
}

static const char *entry_transport(const struct ctx *c, const struct opaltab_entry *e)
{
	return e->transport[0] ? e->transport : c->transport;
}

/*
 * Unlock the entry's ranges on path with key as user. Returns the exit
 * code of the first range that failed (0: all unlocked); *saved says
 * whether the kernel keeps the key for S3.
 */
static int lock_ranges(struct ctx *c, const struct opaltab_entry *e, const char *path,
		       unsigned int user, const struct opal_key *k, bool unlock, bool *saved)
{
	int rc = 0;

	*saved = false;
	for (unsigned int i = 0; !rc && i < e->nranges; i++) {
		struct ctx sub = *c;
		char why[160];

		/* The entry's line is its result: a range's own goes nowhere. */
		sub.jout = json_object_new_object();
		sub.command = NULL;
		sub.json = false;	/* its failure goes into the entry's result */
		sub.devpath = path;
		sub.transport = entry_transport(c, e);
		sub.range = (int)e->ranges[i];
		sub.user = (int)user;
		sub.read_only = e->readonly;
		sub.keep_mbr = e->keep_mbr;
		sub.save = false;
		rc = opalctl_dev_open(path, sub.transport, c->timeout_ms, true, &sub.dev, why,
				      sizeof(why));
		if (rc) {
			rc = fail(&sub, EXIT_DEVICE, "%s: cannot open %s: %s", e->name, path, why);
			json_object_put(sub.jout);
			break;
		}
		/* S3: only the kernel can keep the key; elsewhere say it is not kept. */
		sub.save = unlock && e->save && sub.dev->be.ops->can_save;
		rc = opalctl_lock_unlock(&sub, k, unlock, sub.jout);
		*saved = sub.save;
		opalctl_dev_close(sub.dev);
		json_object_put(sub.jout);
	}
	return rc;
}

/*
 * Nothing on the drive is locked (Level 0 Discovery's Locking feature:
 * locking enabled, Locked clear), as after a warm reboot of a drive that
 * locks only on power loss: the entry needs no key. Unknown counts as
 * locked.
 */
static bool drive_unlocked(struct ctx *c, const struct opaltab_entry *e, const char *path)
{
	struct opal_drive *dev;
	struct opal_discovery d;
	char why[160];
	int rc;

	if (opalctl_dev_open(path, entry_transport(c, e), c->timeout_ms, true, &dev, why,
			     sizeof(why)))
		return false;
	rc = dev->be.ops->discovery ? dev->be.ops->discovery(&dev->be, &d) : OPAL_ERR_UNSUPPORTED;
	opalctl_dev_close(dev);
	return !rc && d.locking && (d.locking_flags & OPAL_LF_ENABLED) &&
	       !(d.locking_flags & OPAL_LF_LOCKED);
}

static const char *key_kind_name(enum opaltab_key k)
{
	return k == OPALTAB_KEY_CLEVIS ? "clevis" : k == OPALTAB_KEY_FILE ? "key file" : "passphrase";
}

/* An entry that failed before the unlock: why, in res. */
static int entry_failed(json_object *res, int code, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int entry_failed(json_object *res, int code, const char *fmt, ...)
{
	char why[700];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	json_object_object_add(res, "error", json_object_new_string(why));
	return code;
}

/* The first clevis attempts, in the foreground: 0 and the key, or why not. */
static int clevis_attempts(struct ctx *c, const struct opaltab_entry *e, const struct deadline *dl,
			   unsigned int attempts, struct secret *key, char *why, size_t whylen)
{
	/*
	 * Retry only getting the key (server down, TPM busy), with backoff.
	 * A key the drive refuses is never retried: every try counts against
	 * the authority's TryLimit.
	 */
	for (unsigned int attempt = 0; attempt < attempts; attempt++) {
		uint64_t left = remaining_ms(dl, (uint64_t)e->timeout_s * 1000);
		unsigned int backoff = 1u << (attempt < 4 ? attempt : 4);

		if (!left) {
			snprintf(why, whylen, "no time left for getting the key (--deadline)");
			fprintf(c->err, "opalctl: %s: %s\n", e->name, why);
			break;
		}
		if (!clevis_decrypt(e->key_path, (unsigned int)((left + 999) / 1000), key, why, whylen))
			return 0;
		fprintf(c->err, "opalctl: %s: attempt %u of %u: %s\n", e->name, attempt + 1, attempts,
			why);
		if (access(e->key_path, R_OK))
			break;	/* no JWE to read: waiting will not bring it */
		if (attempt + 1 < attempts && remaining_ms(dl, backoff * 1000u) >= backoff * 1000u)
			sleep(backoff);
	}
	return -ENOKEY;
}

/*
 * One entry: device, key, unlock; what happened goes into res ("name",
 * "ranges", "unlocked", and "device", "key", "authority", the S3 state
 * once known; "error" when it failed before the drive was asked).
 * Returns 0 or an exit code.
 *
 * The key: the entry's source first (a clevis JWE, a key file, or a
 * prompt). When that cannot give a key, or the drive refuses it, and the
 * entry may fall back to a prompt, a person is asked for the recovery key
 * (Admin1), again after a refusal; while the prompt
 * waits, the JWE is tried again in the background, and whichever key comes
 * first is used.
 *
 * Each refused passphrase uses one of the authority's tries (its TryLimit,
 * often 5, 0 for none; reaching it locks the authority out until a power
 * cycle), and no Opal drive lets anyone but an admin read how many are
 * left: an entry stops asking after prompt-tries= refusals (default 3,
 * which leaves a try on any drive whose TryLimit is 4 or more).
 */
static int unlock_entry(struct ctx *c, const struct opaltab_entry *e, const struct deadline *dl,
			json_object *res)
{
	char path[300], why[600] = "", prompt[400], ranges[40] = "", auth[16];
	json_object *jr = json_object_new_array();
	struct key_fetch fetch = { 0, -1 };
	struct secret *key;
	enum opaltab_key used = e->key_kind;
	unsigned int user = e->user;
	bool have_key = false, saved = false;
	bool can_prompt = !c->no_prompt && (e->key_kind == OPALTAB_KEY_PROMPT || e->fallback_prompt);
	uint64_t start = nbde_now_ms();
	unsigned int refused = 0;
	int rc = 0;

	json_object_object_add(res, "name", json_object_new_string(e->name));
	json_object_object_add(res, "ranges", jr);
	json_object_object_add(res, "unlocked", jbool(false));
	if (e->bad)
		return entry_failed(res, EXIT_TABLE, "bad entry: %s: fix the table (see opaltab(5))",
				    e->error);
	for (unsigned int i = 0, l = 0; i < e->nranges; i++) {
		json_object_array_add(jr, json_object_new_int((int)e->ranges[i]));
		if (l < sizeof(ranges))
			l += (unsigned int)snprintf(ranges + l, sizeof(ranges) - l, "%s%u",
						    i ? "," : "", e->ranges[i]);
	}
	key = secret_new();
	if (!key)
		return entry_failed(res, EXIT_KEYFILE, "no locked memory for the key");
	rc = wait_device(e, dl, path, sizeof(path));
	if (rc) {
		const char *kind = e->dev_kind == OPALTAB_DEV_SERIAL ? "serial=" :
				   e->dev_kind == OPALTAB_DEV_WWN ? "wwn=" : "";

		secret_free(key);
		if (rc == -ENOTUNIQ)
			return entry_failed(res, EXIT_DEVICE, "%s%s names two drives (%s): name the drive by wwn= or a /dev/disk/by-id path; nothing unlocked",
					    kind, e->dev, path);
		return entry_failed(res, EXIT_DEVICE, "device %s%s %s within %u s", kind, e->dev,
				    rc == -ENOENT ? "not found" : strerror(-rc),
				    (unsigned int)((nbde_now_ms() - start + 500) / 1000));
	}
	json_object_object_add(res, "device", json_object_new_string(path));
	if (drive_unlocked(c, e, path)) {
		secret_free(key);
		json_object_object_add(res, "unlocked", jbool(true));
		json_object_object_add(res, "already_unlocked", jbool(true));
		json_object_object_add(res, "key", json_object_new_string("none"));
		return 0;
	}
	if (e->key_kind == OPALTAB_KEY_CLEVIS) {
		/* With a prompt to fall back on, one attempt before it. */
		have_key = !clevis_attempts(c, e, dl, can_prompt ? 1 : e->retry + 1, key, why,
					    sizeof(why));
		if (!have_key && can_prompt && !access(e->key_path, R_OK)) {
			fetch_start(e, prompt_end(dl), &fetch);
			if (fetch.pid > 0)
				fprintf(c->err, "opalctl: %s: asking for the recovery key; %s is tried again meanwhile\n",
					e->name, e->key_path);
		}
	} else if (e->key_kind == OPALTAB_KEY_FILE) {
		int r = keyfile_mode_ok(c, e->key_path) ? -EPERM : secret_read(key, e->key_path, c->in);

		if (r || key->len > OPAL_PIN_MAX)
			snprintf(why, sizeof(why), "key file %s: %s", e->key_path,
				 r ? strerror(-r) : "longer than a PIN");
		else
			have_key = true;
	}
	snprintf(prompt, sizeof(prompt), "Passphrase for %s (%s, range %s)", e->name, path, ranges);
	for (;;) {
		bool was_prompt;

		if (have_key) {
			struct opal_key k = key_of(key);

			snprintf(auth, sizeof(auth), "%s%u", user ? "User" : "Admin", user ? user : 1);
			rc = lock_ranges(c, e, path, user, &k, true, &saved);
			if (!rc)
				break;
			was_prompt = used == OPALTAB_KEY_PROMPT;
			if (rc == EXIT_AUTH && was_prompt)
				refused++;
			/* A key refused, or a user the range is not granted to: ask for the recovery key. */
			if ((rc != EXIT_AUTH && rc != EXIT_LOCKED_OUT && rc != EXIT_DENIED) ||
			    !can_prompt || (was_prompt && (rc == EXIT_LOCKED_OUT || rc == EXIT_DENIED ||
							   refused >= e->prompt_tries))) {
				if (was_prompt && rc == EXIT_AUTH)
					fprintf(c->err, "opalctl: %s: %u passphrase%s refused, %u of %s's tries used: not asking again (prompt-tries=%u)\n",
						e->name, refused, refused == 1 ? "" : "s", refused, auth,
						e->prompt_tries);
				break;	/* the drive's reason is on stderr */
			}
			if (was_prompt) {
				fprintf(c->err, "opalctl: %s: passphrase refused (%u of %u; each uses one of %s's tries)\n",
					e->name, refused, e->prompt_tries, auth);
			} else {
				if (rc == EXIT_DENIED)
					fprintf(c->err, "opalctl: %s: %s may not unlock range %s (the key was right: `opalctl grant` gives it the range): asking for the recovery key\n",
						e->name, auth, ranges);
				else
					fprintf(c->err, "opalctl: %s: the drive refused the %s key for %s%s: asking for the recovery key\n",
						e->name, key_kind_name(used), auth,
						used == OPALTAB_KEY_CLEVIS ?
						" (a stale JWE? the slot was unbound or rebound after this initramfs was made)" : "");
				fetch_stop(&fetch);	/* its key is the one refused */
			}
			have_key = false;
			explicit_bzero(key->data, key->cap);
			key->len = 0;
		}
		if (!can_prompt) {
			rc = 0;
			break;
		}
		rc = ask_passphrase(c, prompt, prompt_end(dl), key, fetch.fd);
		if (rc < 0 && rc != -ETIMEDOUT && fetch.pid > 0) {
			fprintf(c->err, "opalctl: %s: nobody can be asked (%s); still trying %s\n",
				e->name, strerror(-rc), e->key_path);
			rc = wait_fetch(&fetch, prompt_end(dl));
		}
		if (rc == 1) {
			if (!fetch_collect(&fetch, key)) {
				fprintf(c->err, "opalctl: %s: the key came from %s while the prompt waited\n",
					e->name, e->key_path);
				have_key = true;
				used = OPALTAB_KEY_CLEVIS;
				user = e->user;
			}
			continue;	/* unlock with it, or ask alone */
		}
		if (rc) {
			snprintf(why, sizeof(why), "%s",
				 rc == -ETIMEDOUT ? "no passphrase given in time" : "no passphrase given");
			rc = 0;
			break;
		}
		have_key = true;
		used = OPALTAB_KEY_PROMPT;
		/* The passphrase is the recovery key unless the entry is a user's prompt. */
		user = e->key_kind == OPALTAB_KEY_PROMPT ? e->user : 0;
	}
	fetch_stop(&fetch);
	secret_free(key);
	if (rc) {
		/* The drive refused (why is on stderr): with what, for the entry's line. */
		json_object_object_add(res, "key", json_object_new_string(key_kind_name(used)));
		json_object_object_add(res, "authority", json_object_new_string(auth));
		json_object_object_add(res, "refused_passphrases", json_object_new_int((int)refused));
		return rc;
	}
	if (!have_key) {
		json_object_object_add(res, "error", json_object_new_string(
			why[0] ? why : "no key source left (prompting is off)"));
		return EXIT_KEYFILE;
	}
	json_object_object_add(res, "key", json_object_new_string(key_kind_name(used)));
	json_object_object_add(res, "authority", json_object_new_string(auth));
	json_object_object_add(res, "unlocked", jbool(true));
	json_object_object_add(res, "saved_for_resume", jbool(saved));
	json_object_object_add(res, "save_requested", jbool(e->save));
	return 0;
}

/*
 * Will the kernel unlock the drive again on resume from S3 with the key
 * it was given? It replays saved keys only for libata disks and PCIe NVMe
 * (an NVMe over fabrics controller takes the save and never uses it).
 */
static bool resume_unlocks(const char *path)
{
	char dev[PATH_MAX], sys[PATH_MAX + 32], real[PATH_MAX];
	const char *name;

	if (!realpath(path, dev))
		return false;
	name = strrchr(dev, '/');
	name = name ? name + 1 : dev;
	snprintf(sys, sizeof(sys), "/sys/class/%s/%s", strncmp(name, "nvme", 4) ||
		 strchr(name + 4, 'n') ? "block" : "nvme", name);
	if (!realpath(sys, real))
		return false;
	if (!strncmp(name, "nvme", 4))
		return strstr(real, "/nvme/") && !strstr(real, "/nvme-fabrics/") &&
		       !strstr(real, "/nvme-subsystem/");
	return !strncmp(name, "sd", 2) && strstr(real, "/ata");
}

/*
 * What the running system needs to know of an unlocked entry, in
 * DIR/NAME: the sleep guard holds off suspend while a range that the
 * kernel will not unlock on resume is unlocked (resume would bring it
 * back locked under a mounted file system).
 */
static void write_state(struct ctx *c, const struct opaltab_entry *e, json_object *res)
{
	char path[PATH_MAX], tmp[PATH_MAX + 8];
	json_object *jr = res_get(res, "ranges");
	const char *name = res_str(res, "name"), *dev = res_str(res, "device");
	bool saved = res_bool(res, "saved_for_resume");
	FILE *f;

	if (!c->state_dir || !res_bool(res, "unlocked") || strchr(name, '/') || name[0] == '.')
		return;
	if (mkdir_p(c->state_dir, 0755)) {
		warn(c, "cannot create %s: %s", c->state_dir, strerror(errno));
		return;
	}
	snprintf(path, sizeof(path), "%s/%s", c->state_dir, name);
	snprintf(tmp, sizeof(tmp), "%s.new", path);
	f = fopen(tmp, "w");
	if (!f) {
		warn(c, "cannot write %s: %s", tmp, strerror(errno));
		return;
	}
	fprintf(f, "device=%s\nranges=", dev);
	for (size_t i = 0; i < res_count(jr); i++)
		fprintf(f, "%s%d", i ? "," : "", json_object_get_int(json_object_array_get_idx(jr, i)));
	fprintf(f, "\nalready_unlocked=%s\nsaved_for_resume=%s\nresume_unlocks=%s\n",
		res_bool(res, "already_unlocked") ? "yes" : "no", saved ? "yes" : "no",
		saved && resume_unlocks(dev) ? "yes" : "no");
	/*
	 * The JWE that opened it, by content: once a boot has unlocked with
	 * the JWE regen made, the copy regen kept of the one before can go
	 * (regen --remove-old --state-dir).
	 */
	fprintf(f, "key=%s\n", res_str(res, "key"));
	if (!strcmp(res_str(res, "key"), "clevis")) {
		char hex[2 * 32 + 1];

		if (!file_sha256_hex(e->key_path, hex))
			fprintf(f, "jwe=%s\njwe_sha256=%s\n", e->key_path, hex);
	}
	if (fclose(f) || rename(tmp, path)) {
		warn(c, "cannot write %s: %s", path, strerror(errno));
		unlink(tmp);
	}
}

/* One entry's line, from what unlock_entry put into res. */
static void unlock_entry_text(FILE *o, json_object *res)
{
	json_object *jr = res_get(res, "ranges");
	const char *name = res_str(res, "name");
	char ranges[40] = "";

	for (size_t i = 0, l = 0; i < res_count(jr) && l < sizeof(ranges); i++)
		l += (size_t)snprintf(ranges + l, sizeof(ranges) - l, "%s%d", i ? "," : "",
				      json_object_get_int(json_object_array_get_idx(jr, i)));
	if (res_bool(res, "already_unlocked"))
		fprintf(o, "%s: %s range %s already unlocked (nothing on the drive is locked; no key used)\n",
			name, res_str(res, "device"), ranges);
	else if (res_bool(res, "unlocked"))
		fprintf(o, "%s: %s range %s unlocked (%s, %s%s)\n", name, res_str(res, "device"), ranges,
			res_str(res, "key"), res_str(res, "authority"),
			res_bool(res, "saved_for_resume") ? ", saved for S3 resume" :
			res_bool(res, "save_requested") ? ", not saved for S3: no kernel sed-opal" : "");
	else if (res_get(res, "error"))
		fprintf(o, "%s: failed: %s\n", name, res_str(res, "error"));
	else if (res_int(res, "refused_passphrases"))
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s: %" PRId64 " refused)\n",
			name, res_str(res, "device"), ranges, res_str(res, "key"),
			res_str(res, "authority"), res_int(res, "refused_passphrases"));
	else
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s; not retried)\n", name,
			res_str(res, "device"), ranges, res_str(res, "key"), res_str(res, "authority"));
}

/* The table, parsed entry by entry; a file that cannot be read is reported. */
int load_table(struct ctx *c, const char *table, struct opaltab_entry **v, size_t *n)
{
	char err[320];
	FILE *f = fopen(table, "r");

	if (!f)
		return fail(c, EXIT_TABLE, "%s: cannot open %s: %s: write the table (see opaltab(5)) or give --table FILE",
			    c->cmd, table, strerror(errno));
	if (opaltab_parse(f, v, n, err, sizeof(err))) {
		fclose(f);
		return fail(c, EXIT_TABLE, "%s: %s: %s", c->cmd, table, err);
	}
	fclose(f);
	return 0;
}

/* What a run over the table's entries does with each (unlock-all, lock-all). */
struct entry_run {
	int (*one)(struct ctx *c, const struct opaltab_entry *e, const struct deadline *dl,
		   json_object *res);
	void (*line)(FILE *o, json_object *res);
	const char *done;	/* the count's name: "unlocked", "locked" */
	bool record;		/* write each entry's state to --state-dir */
};

/*
 * The table loaded, every --name known to it, the deadline started; then
 * each entry named (or, without names, each one not noauto), its line
 * printed as soon as it is done (at boot an entry can take minutes; --json:
 * the whole result at the end, also when some failed). 0, 11 when an entry
 * failed, or the failure reported.
 */
static int run_entries(struct ctx *c, const struct entry_run *how)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	struct opaltab_entry *v = NULL;
	struct deadline dl = { 0 };
	size_t n = 0;
	unsigned int failed = 0;
	json_object *entries;
	int rc = load_table(c, table, &v, &n);

	if (rc)
		return rc;
	for (unsigned int i = 0; i < c->nnames; i++) {
		bool known = false;

		for (size_t j = 0; j < n; j++)
			known |= !strcmp(v[j].name, c->names[i]);
		if (!known) {
			free(v);
			return fail(c, EXIT_USAGE, "%s: no entry named '%s' in %s", c->cmd, c->names[i],
				    table);
		}
	}
	if (c->have_deadline) {
		dl.set = true;
		dl.end = nbde_now_ms() + (uint64_t)c->deadline_s * 1000;
	}
	dl.prompt_ms = (uint64_t)(c->prompt_timeout_s ? c->prompt_timeout_s : 120) * 1000;
	json_object_object_add(c->jout, "table", json_object_new_string(table));
	entries = json_object_new_array();
	json_object_object_add(c->jout, "entries", entries);
	for (size_t i = 0; i < n; i++) {
		json_object *o;

		if (c->nnames ? !named(c, v[i].name) : v[i].noauto) {
			/* Said even when skipped: the boot must not hide a broken table. */
			if (v[i].bad)
				warn(c, "%s: entry '%s' (noauto) is bad: %s", table, v[i].name, v[i].error);
			continue;
		}
		o = json_object_new_object();
		json_object_array_add(entries, o);
		if (how->one(c, &v[i], &dl, o))
			failed++;
		if (how->record)
			write_state(c, &v[i], o);
		if (!c->json) {
			how->line(c->out, o);
			fflush(c->out);
		}
	}
	free(v);
	json_object_object_add(c->jout, how->done,
			       json_object_new_int((int)(json_object_array_length(entries) - failed)));
	json_object_object_add(c->jout, "failed", json_object_new_int((int)failed));
	if (failed && c->json)
		emit_result(c);	/* the entries that failed are the point of it */
	return failed ? EXIT_INCOMPLETE : 0;
}

int cmd_unlock_all(struct ctx *c)
{
	static const struct entry_run how = {
		.one = unlock_entry, .line = unlock_entry_text, .done = "unlocked", .record = true,
	};

	return run_entries(c, &how);
}


/*
 * lock-all: lock the ranges of the table's entries again (those named, or
 * all but noauto), with each entry's own key source and no prompt: the
 * shutdown step of a data drive's unit, after its file systems are
 * unmounted. A range still in use is refused (lock's own check), and an
 * entry whose key cannot be had stays unlocked, said on its line: it
 * locks at the next power-off anyway. Returns 0, or 11 when any failed.
 */
static int lock_entry(struct ctx *c, const struct opaltab_entry *e, const struct deadline *dl,
		      json_object *res)
{
	char path[300], why[600] = "", auth[16];
	json_object *jr = json_object_new_array();
	struct secret *key;
	struct opal_key k;
	bool saved;
	int rc;

	json_object_object_add(res, "name", json_object_new_string(e->name));
	json_object_object_add(res, "ranges", jr);
	json_object_object_add(res, "locked", jbool(false));
	if (e->bad)
		return entry_failed(res, EXIT_TABLE, "bad entry: %s: fix the table (see opaltab(5))",
				    e->error);
	for (unsigned int i = 0; i < e->nranges; i++)
		json_object_array_add(jr, json_object_new_int((int)e->ranges[i]));
	if (e->key_kind == OPALTAB_KEY_PROMPT)
		return entry_failed(res, EXIT_KEYFILE, "its key is a passphrase: nobody to ask; it locks at power-off");
	rc = wait_device(e, dl, path, sizeof(path));
	if (rc)
		return entry_failed(res, EXIT_DEVICE, "device %s: %s", e->dev,
				    rc == -ENOENT ? "not found" : strerror(-rc));
	json_object_object_add(res, "device", json_object_new_string(path));
	key = secret_new();
	if (!key)
		return entry_failed(res, EXIT_KEYFILE, "no locked memory for the key");
	if (e->key_kind == OPALTAB_KEY_CLEVIS) {
		rc = clevis_attempts(c, e, dl, e->retry + 1, key, why, sizeof(why));
	} else {
		rc = keyfile_mode_ok(c, e->key_path) ? -EPERM : secret_read(key, e->key_path, c->in);
		if (rc || key->len > OPAL_PIN_MAX)
			snprintf(why, sizeof(why), "key file %s: %s", e->key_path,
				 rc ? strerror(-rc) : "longer than a PIN");
		rc = rc || key->len > OPAL_PIN_MAX;
	}
	if (rc) {
		secret_free(key);
		return entry_failed(res, EXIT_KEYFILE, "%s: left unlocked (it locks at power-off)", why);
	}
	k = key_of(key);
	rc = lock_ranges(c, e, path, e->user, &k, false, &saved);
	secret_free(key);
	json_object_object_add(res, "key", json_object_new_string(key_kind_name(e->key_kind)));
	snprintf(auth, sizeof(auth), "%s%u", e->user ? "User" : "Admin", e->user ? e->user : 1);
	json_object_object_add(res, "authority", json_object_new_string(auth));
	if (!rc)
		json_object_object_add(res, "locked", jbool(true));
	return rc;
}

static void lock_entry_text(FILE *o, json_object *res)
{
	json_object *jr = res_get(res, "ranges");
	char ranges[40] = "";

	for (size_t i = 0, l = 0; i < res_count(jr) && l < sizeof(ranges); i++)
		l += (size_t)snprintf(ranges + l, sizeof(ranges) - l, "%s%d", i ? "," : "",
				      json_object_get_int(json_object_array_get_idx(jr, i)));
	if (res_bool(res, "locked"))
		fprintf(o, "%s: %s range %s locked (%s, %s)\n", res_str(res, "name"),
			res_str(res, "device"), ranges, res_str(res, "key"), res_str(res, "authority"));
	else if (res_get(res, "error"))
		fprintf(o, "%s: not locked: %s\n", res_str(res, "name"), res_str(res, "error"));
	else
		fprintf(o, "%s: not locked: %s range %s (the reason is above)\n", res_str(res, "name"),
			res_str(res, "device"), ranges);
}

int cmd_lock_all(struct ctx *c)
{
	static const struct entry_run how = {
		.one = lock_entry, .line = lock_entry_text, .done = "locked",
	};

	return run_entries(c, &how);
}

void text_lock_all(struct ctx *c, json_object *res)
{
	if (!res_count(res_get(res, "entries")))
		fprintf(c->out, "%s: no entry to lock\n", res_str(res, "table"));
}

/* The entries' lines are printed as each is done; what is left to say. */
void text_unlock_all(struct ctx *c, json_object *res)
{
	if (!res_count(res_get(res, "entries")))
		fprintf(c->out, "%s: no entry to unlock\n", res_str(res, "table"));
}

/*
 * check-table: every entry through the parser the boot uses, each bad one
 * named; with --boot, the lines of the entries the initramfs unlocks (not
 * noauto), for a hook to put into the image.
 */
int cmd_check_table(struct ctx *c)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	struct opaltab_entry *v = NULL;
	size_t n = 0, bad_entries;
	int rc = load_table(c, table, &v, &n);

	if (rc)
		return rc;
	bad_entries = opaltab_bad_count(v, n);
	for (size_t i = 0; i < n; i++)
		if (v[i].bad)
			fprintf(c->err, "opalctl: %s: entry '%s'%s: %s\n", table, v[i].name,
				v[i].noauto ? " (noauto)" : "", v[i].error);
	if (bad_entries) {
		free(v);
		return fail(c, EXIT_TABLE, "check-table: %s: %zu of %zu entr%s bad: fix %s (see opaltab(5))",
			    table, bad_entries, n, n == 1 ? "y is" : "ies are",
			    bad_entries == 1 ? "it" : "them");
	}
	json_object_object_add(c->jout, "table", json_object_new_string(table));
	json_object_object_add(c->jout, "entries", json_object_new_int((int)n));
	if (c->boot) {
		json_object *lines = json_object_new_array();

		for (size_t i = 0; i < n; i++)
			if (!v[i].noauto)
				json_object_array_add(lines, json_object_new_string(v[i].text));
		json_object_object_add(c->jout, "boot", lines);
	}
	free(v);
	return 0;
}

void text_check_table(struct ctx *c, json_object *res)
{
	json_object *lines = res_get(res, "boot");

	if (!lines) {
		fprintf(c->out, "%s: %" PRId64 " entr%s, all good\n", res_str(res, "table"),
			res_int(res, "entries"), res_int(res, "entries") == 1 ? "y" : "ies");
		return;
	}
	/* The boot table: only the lines, for the image. */
	fprintf(c->out, "# the entries of %s the initramfs unlocks (opalctl check-table --boot)\n",
		res_str(res, "table"));
	for (size_t i = 0; i < res_count(lines); i++)
		fprintf(c->out, "%s\n", json_object_get_string(json_object_array_get_idx(lines, i)));
}
