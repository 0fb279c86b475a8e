// SPDX-License-Identifier: GPL-2.0-only
/*
 * Network-bound unlock: key slots sealed with Clevis (bind's policy is
 * lib/nbde's, nbde-slots.h), and unlock-all, the boot-time unlock of every
 * drive in the unlock table.
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
#include "nbde-tang.h"
#include "opalctl-cmd.h"
#include "opaltab.h"
#include "nbde.h"
#include "nbde-state.h"
#include "nbde-slots.h"
#include "nbde-system.h"
#include "opalctl-dev.h"


/* ---------------------------------------------------------- key slots */

/* The drive's protocol transport, for its serial number (NULL: none open). */
static struct opal_dev *dev_opal(struct ctx *c)
{
	return c->dev ? c->dev->opal : NULL;
}

static int bind_exit(enum nbde_bind_status s)
{
	switch (s) {
	case NBDE_BIND_OK:
		return 0;
	case NBDE_BIND_BAD_CONFIG:
	case NBDE_BIND_NO_RANGE:
		return EXIT_USAGE;
	case NBDE_BIND_EXISTS:
		return EXIT_REFUSED;
	case NBDE_BIND_CLEVIS:
		return EXIT_CLEVIS;
	case NBDE_BIND_NO_MEMORY:
	case NBDE_BIND_FILE:
		return EXIT_KEYFILE;
	case NBDE_BIND_AUTH:
	case NBDE_BIND_READ_FAILED:
	case NBDE_BIND_NO_SLOT:
	case NBDE_BIND_SETUP_FAILED:
		break;
	}
	return EXIT_DRIVE;
}

static int read_access(struct ctx *c, struct opal_session *s, struct opal_access *acc)
{
	int rc = opal_read_access(s, acc);

	return rc ? fail_opal(c, "reading users and ACEs", rc, NULL, NULL) : 0;
}

int cmd_bind(struct ctx *c)
{
	opal_uid ca1 = opal_uid_c_pin_admin(1);
	struct nbde_bind_rq rq = {
		.path = c->devpath, .range = c->range < 0 ? 0 : (unsigned int)c->range,
		.pin = c->pin, .config = c->pin_config, .jwe = c->jwe, .log = { opalctl_log, c },
	};
	struct nbde_bind_result *res = calloc(1, sizeof(*res));
	struct secret *key = NULL;
	struct opal_key k;
	char why[600];
	int rc;

	if (!res)
		return fail(c, EXIT_DRIVE, "bind: out of memory");
	if (!c->pin || (strcmp(c->pin, "tang") && strcmp(c->pin, "tpm2") && strcmp(c->pin, "sss")))
		rc = fail(c, EXIT_USAGE, "bind: needs --pin tang, tpm2 or sss");
	else if (!c->pin_config)
		rc = fail(c, EXIT_USAGE, "bind: needs --config JSON (the pin's configuration, as for `clevis encrypt %s`)",
			  c->pin);
	/* Before the drive and the key file: nothing is sealed that clevis would ask about. */
	else if (nbde_bind_config_check(c->pin, c->pin_config, why, sizeof(why)))
		rc = fail(c, EXIT_USAGE, "bind: --config: %s", why);
	else
		rc = load_key(c, c->keyfile, &key);
	if (rc) {
		free(res);
		return rc;
	}
	k = key_of(key);
	rq.opal = c->dev->opal;
	rq.admin = &k;
	nbde_bind(&rq, res);
	secret_free(key);
	switch (res->status) {
	case NBDE_BIND_OK:
		json_object_object_add(c->jout, "slot", json_object_new_int((int)res->user));
		json_object_object_add(c->jout, "range", json_object_new_int((int)res->range));
		json_object_object_add(c->jout, "pin", json_object_new_string(c->pin));
		json_object_object_add(c->jout, "jwe", json_object_new_string(res->jwe));
		json_object_object_add(c->jout, "opaltab", json_object_new_string(res->opaltab));
		json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
		rc = 0;
		break;
	case NBDE_BIND_AUTH:
		rc = fail_opal(c, "authenticating as Admin1", res->opal_rc, &OPAL_UID_LOCKINGSP, &ca1);
		break;
	case NBDE_BIND_READ_FAILED:
		rc = fail_opal(c, "reading users and ACEs", res->opal_rc, NULL, NULL);
		break;
	case NBDE_BIND_SETUP_FAILED:
		rc = fail_opal(c, "bind: setting up the user", res->opal_rc, NULL, NULL);
		break;
	case NBDE_BIND_BAD_CONFIG:
		rc = fail(c, EXIT_USAGE, "bind: --config: %s", res->error);
		break;
	default:
		rc = fail(c, bind_exit(res->status), "bind: %s", res->error);
		break;
	}
	free(res);
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
		struct opal_key p = { scrap->data, NBDE_SLOT_PIN_BYTES };
		int orc = 0;

		scrap->len = NBDE_SLOT_PIN_BYTES;
		if (RAND_bytes(scrap->data, NBDE_SLOT_PIN_BYTES) != 1)
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
		nbde_default_jwe(c->devpath, dev_opal(c), user, jwe, sizeof(jwe));
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
	struct nbde_drive_name dn;

	nbde_drive_name(c->devpath, dev_opal(c), &dn);
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
		nbde_default_jwe(c->devpath, dev_opal(c), user, out, cap);
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

/*
 * unlock-all and lock-all are lib/nbde's: the table parsed here, one call,
 * and each entry rendered as it is done (at boot one can take minutes).
 */
struct render {
	struct ctx *c;
	json_object *entries;
	bool lock;
};

static json_object *entry_json(const struct nbde_entry_result *r, bool lock)
{
	const struct opaltab_entry *e = r->entry;
	json_object *o = json_object_new_object(), *jr = json_object_new_array();
	bool ok = nbde_entry_ok(r);
	char auth[16];

	json_object_object_add(o, "name", json_object_new_string(e->name));
	for (unsigned int i = 0; i < e->nranges && !e->bad; i++)
		json_object_array_add(jr, json_object_new_int((int)e->ranges[i]));
	json_object_object_add(o, "ranges", jr);
	json_object_object_add(o, lock ? "locked" : "unlocked", jbool(ok));
	if (r->device[0])
		json_object_object_add(o, "device", json_object_new_string(r->device));
	if (r->serial[0])
		json_object_object_add(o, "serial", json_object_new_string(r->serial));
	if (r->status == NBDE_ALREADY_UNLOCKED) {
		json_object_object_add(o, "already_unlocked", jbool(true));
		json_object_object_add(o, "key", json_object_new_string("none"));
		return o;
	}
	if (r->key != NBDE_KEY_NONE) {
		nbde_authority_name(r->user, auth, sizeof(auth));
		json_object_object_add(o, "key", json_object_new_string(nbde_key_name(r->key)));
		json_object_object_add(o, "authority", json_object_new_string(auth));
	}
	if (!lock && r->key != NBDE_KEY_NONE) {
		json_object_object_add(o, "refused_passphrases", json_object_new_int((int)r->refused));
		json_object_object_add(o, "tries_used", json_object_new_int((int)r->tries_used));
		json_object_object_add(o, "tries_allowed", json_object_new_int((int)r->tries_allowed));
	}
	if (!lock && ok) {
		json_object_object_add(o, "saved_for_resume", jbool(r->saved));
		json_object_object_add(o, "save_requested", jbool(r->save_requested));
		json_object_object_add(o, "save_withheld", jbool(r->save_withheld));
	}
	if (r->error[0] && !ok)
		json_object_object_add(o, "error", json_object_new_string(r->error));
	return o;
}

static void entry_line(FILE *o, const struct nbde_entry_result *r, bool lock)
{
	const struct opaltab_entry *e = r->entry;
	char ranges[40] = "", auth[16];

	for (unsigned int i = 0, l = 0; i < e->nranges && !e->bad && l < sizeof(ranges); i++)
		l += (unsigned int)snprintf(ranges + l, sizeof(ranges) - l, "%s%u", i ? "," : "",
					    e->ranges[i]);
	nbde_authority_name(r->user, auth, sizeof(auth));
	if (lock) {
		if (r->status == NBDE_LOCKED)
			fprintf(o, "%s: %s range %s locked (%s, %s)\n", e->name, r->device, ranges,
				nbde_key_name(r->key), auth);
		else if (r->error[0])
			fprintf(o, "%s: not locked: %s\n", e->name, r->error);
		else
			fprintf(o, "%s: not locked: %s range %s (the reason is above)\n", e->name,
				r->device, ranges);
		return;
	}
	if (r->status == NBDE_ALREADY_UNLOCKED)
		fprintf(o, "%s: %s range %s already unlocked (nothing on the drive is locked; no key used)\n",
			e->name, r->device, ranges);
	else if (r->status == NBDE_UNLOCKED)
		fprintf(o, "%s: %s range %s unlocked (%s, %s%s)\n", e->name, r->device, ranges,
			nbde_key_name(r->key), auth,
			r->saved ? ", saved for S3 resume" :
			r->save_withheld ? ", not saved for S3: Admin1's key is never left in the kernel" :
			r->save_requested && !r->can_save ? ", not saved for S3: no kernel sed-opal" : "");
	else if (r->error[0] && r->status != NBDE_REFUSED)
		fprintf(o, "%s: failed: %s\n", e->name, r->error);
	else if (r->refused && r->key == NBDE_KEY_PASSPHRASE)
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s: %u refused; %u of %s's %u tries used this boot)\n",
			e->name, r->device, ranges, nbde_key_name(r->key), auth, r->refused,
			r->tries_used, auth, r->tries_allowed);
	else if (r->refused)
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s; not retried; %u of %s's %u tries used this boot)\n",
			e->name, r->device, ranges, nbde_key_name(r->key), auth, r->tries_used, auth,
			r->tries_allowed);
	else
		fprintf(o, "%s: failed: %s range %s not unlocked (%s as %s; not retried)\n", e->name,
			r->device, ranges, nbde_key_name(r->key), auth);
}

static void entry_done(void *arg, const struct nbde_entry_result *r)
{
	struct render *rd = arg;
	struct ctx *c = rd->c;
	char why[400];

	json_object_array_add(rd->entries, entry_json(r, rd->lock));
	if (!rd->lock && c->state_dir && nbde_state_write(c->state_dir, r, why, sizeof(why)))
		warn(c, "%s", why);
	if (!c->json) {
		entry_line(c->out, r, rd->lock);
		fflush(c->out);
	}
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

/*
 * The table loaded, every --name known to it; then lib/nbde's run over the
 * entries named (or, without names, each one not noauto). 0, 11 when an
 * entry failed, or the failure reported.
 */
static int run_table(struct ctx *c, bool lock)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	struct opaltab_entry *v = NULL;
	struct nbde_system sys = {
		.err = c->err, .prog = "opalctl", .in = c->in, .askpass = c->askpass,
		.transport = c->transport, .timeout_ms = c->timeout_ms, .extra = opalctl_dev_extra(),
		.insecure_keyfile = c->insecure_keyfile, .verbose = c->verbose,
	};
	struct render rd = { .c = c, .lock = lock };
	struct nbde_request rq = { 0 };
	struct nbde_result res;
	struct nbde_ops ops;
	char ledger[PATH_MAX];
	size_t n = 0;
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
	nbde_system_ops(&sys, &ops);
	rq.entries = v;
	rq.nentries = n;
	rq.names = c->names;
	rq.nnames = c->nnames;
	rq.have_deadline = c->have_deadline;
	rq.deadline_s = c->deadline_s;
	rq.prompt_timeout_s = c->prompt_timeout_s;
	rq.no_prompt = c->no_prompt || lock;
	rq.force = c->force;
	/* The tries of one boot are counted beside its state records. */
	if (c->state_dir) {
		snprintf(ledger, sizeof(ledger), "%s/tries", c->state_dir);
		rq.ledger_dir = ledger;
	}
	rq.entry_done = entry_done;
	rq.done_arg = &rd;
	json_object_object_add(c->jout, "table", json_object_new_string(table));
	rd.entries = json_object_new_array();
	json_object_object_add(c->jout, "entries", rd.entries);
	rc = lock ? nbde_lock_all(&rq, &ops, &res) : nbde_run(&rq, &ops, &res);
	if (rc < 0) {
		free(v);
		return fail(c, EXIT_DEVICE, "%s: %s", c->cmd, strerror(-rc));
	}
	json_object_object_add(c->jout, lock ? "locked" : "unlocked", json_object_new_int((int)res.ok));
	json_object_object_add(c->jout, "failed", json_object_new_int((int)res.failed));
	nbde_result_free(&res);
	free(v);
	if (rc && c->json)
		emit_result(c);	/* the entries that failed are the point of it */
	return rc ? EXIT_INCOMPLETE : 0;
}

int cmd_unlock_all(struct ctx *c)
{
	return run_table(c, false);
}

/*
 * lock-all: lock the ranges of the table's entries again (those named, or
 * all but noauto), with each entry's own key source and no prompt: the
 * shutdown step of a data drive's unit, after its file systems are
 * unmounted. A range still in use is refused, and an entry whose key
 * cannot be had stays unlocked, said on its line: it locks at power-off.
 */
int cmd_lock_all(struct ctx *c)
{
	return run_table(c, true);
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
