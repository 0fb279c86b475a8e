// SPDX-License-Identifier: GPL-2.0-only
/*
 * Users and access: enable a User authority, set its key, let it lock and
 * unlock a range (the ACEs), list who may. These are the key slots that
 * bind/unbind build on. Admin1's key authorizes all of them.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "opalctl-cmd.h"

static int need_user(struct ctx *c)
{
	if (!c->user)
		return fail(c, EXIT_USAGE, "%s: needs --user N (1 to 9)", c->cmd);
	return 0;
}

static int need_range(struct ctx *c)
{
	if (c->range < 0)
		return fail(c, EXIT_USAGE, "%s: needs --range N (0 = global range)", c->cmd);
	return 0;
}

int opalctl_admin_open(struct ctx *c, struct secret **key, struct opal_session **s)
{
	struct opal_key k;
	opal_uid ca1 = opal_uid_c_pin_admin(1);
	int rc;

	*s = NULL;
	rc = load_key(c, c->keyfile, key);
	if (rc)
		return rc;
	k = key_of(*key);
	rc = opal_admin1_session(c->dev->opal, &k, s);
	if (rc) {
		secret_free(*key);
		*key = NULL;
		return fail_opal(c, "authenticating as Admin1", rc, &OPAL_UID_LOCKINGSP, &ca1);
	}
	return 0;
}

/* End the session and release the key; report rc as what failed, if any. */
static int admin_close(struct ctx *c, struct secret *key, struct opal_session *s, int rc,
		       const char *what)
{
	int end = opal_end_session(s);

	secret_free(key);
	if (!rc)
		rc = end;
	return rc ? fail_opal(c, what, rc, NULL, NULL) : 0;
}

static void user_result(struct ctx *c, const char *state)
{
	json_object_object_add(c->jout, "user", json_object_new_int(c->user));
	json_object_object_add(c->jout, "state", json_object_new_string(state));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
}

void text_user(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: User%" PRId64 " %s\n", res_str(res, "device"), res_int(res, "user"),
		res_str(res, "state"));
}

static int user_enabled(struct ctx *c, bool enable)
{
	struct secret *key;
	struct opal_session *s;
	int rc = need_user(c);

	if (rc)
		return rc;
	if (enable) {
		rc = load_key(c, c->keyfile, &key);
		if (rc)
			return rc;
		struct opal_key k = key_of(key);

		rc = c->dev->be.ops->user_enable(&c->dev->be, &k, (unsigned)c->user);
		secret_free(key);
		if (rc) {
			char what[96];

			opal_uid ca1 = opal_uid_c_pin_admin(1);

			snprintf(what, sizeof(what), "user-enable%s", c->dev->be.ops->via);
			return fail_opal(c, what, rc, &OPAL_UID_LOCKINGSP, &ca1);
		}
	} else {
		rc = opalctl_admin_open(c, &key, &s);
		if (rc)
			return rc;
		rc = opal_user_set_enabled(s, (unsigned)c->user, false);
		rc = admin_close(c, key, s, rc, "disabling the user");
		if (rc)
			return rc;
	}
	user_result(c, enable ? "enabled" : "disabled");
	return 0;
}

int cmd_user_enable(struct ctx *c)
{
	return user_enabled(c, true);
}

int cmd_user_disable(struct ctx *c)
{
	return user_enabled(c, false);
}

int cmd_user_key(struct ctx *c)
{
	struct secret *key, *nkey;
	struct opal_key nk;
	int rc = need_user(c);

	if (rc)
		return rc;
	if (!c->new_keyfile)
		return fail(c, EXIT_USAGE, "user-key: needs --new-keyfile FILE (the user's new key)");
	if (!strcmp(c->keyfile, "-") && !strcmp(c->new_keyfile, "-"))
		return fail(c, EXIT_USAGE, "user-key: only one of the keys can come from stdin");
	rc = load_key(c, c->new_keyfile, &nkey);
	if (rc)
		return rc;
	nk = key_of(nkey);
	rc = load_key(c, c->keyfile, &key);
	if (!rc) {
		struct opal_key k = key_of(key);
		opal_uid ca1 = opal_uid_c_pin_admin(1);
		char what[96];

		rc = c->dev->be.ops->user_set_pin(&c->dev->be, &k, (unsigned)c->user, &nk);
		secret_free(key);
		snprintf(what, sizeof(what), "user-key%s", c->dev->be.ops->via);
		if (rc)
			rc = fail_opal(c, what, rc, &OPAL_UID_LOCKINGSP, &ca1);
	}
	secret_free(nkey);
	if (rc)
		return rc;
	user_result(c, "key set");
	return 0;
}

static int grant_revoke(struct ctx *c, bool grant)
{
	struct secret *key;
	struct opal_session *s;
	int rc = need_user(c);

	if (!rc)
		rc = need_range(c);
	if (rc)
		return rc;
	rc = opalctl_admin_open(c, &key, &s);
	if (rc)
		return rc;
	rc = grant ? opal_grant_user(s, (unsigned)c->user, (unsigned)c->range, !c->read_only) :
		     opal_revoke_user(s, (unsigned)c->user, (unsigned)c->range);
	rc = admin_close(c, key, s, rc, grant ? "grant: writing the range's ACEs" :
			 "revoke: writing the range's ACEs");
	if (rc)
		return rc;
	json_object_object_add(c->jout, "user", json_object_new_int(c->user));
	json_object_object_add(c->jout, "range", json_object_new_int(c->range));
	json_object_object_add(c->jout, "read", jbool(grant));
	json_object_object_add(c->jout, "write", jbool(grant && !c->read_only));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

/* A grant gives read lock control at least; a revoke takes both. */
void text_grant_revoke(struct ctx *c, json_object *res)
{
	bool read = res_bool(res, "read");

	fprintf(c->out, "%s: User%" PRId64 " %s range %" PRId64 "%s\n", res_str(res, "device"),
		res_int(res, "user"), read ? "may lock and unlock" : "no longer controls",
		res_int(res, "range"), read && !res_bool(res, "write") ? " (reading only)" : "");
}

int cmd_grant(struct ctx *c)
{
	return grant_revoke(c, true);
}

int cmd_revoke(struct ctx *c)
{
	return grant_revoke(c, false);
}

/* "Admins", "Admin1", "User3", or the UID in hex. */
static void authority_name(const opal_uid *u, char *out, size_t cap)
{
	if (opal_uid_eq(u, &OPAL_UID_ADMINS)) {
		snprintf(out, cap, "Admins");
		return;
	}
	for (unsigned n = 1; n <= 32; n++) {
		opal_uid a = opal_uid_admin(n), us = opal_uid_user(n);

		if (opal_uid_eq(u, &a)) {
			snprintf(out, cap, "Admin%u", n);
			return;
		}
		if (opal_uid_eq(u, &us)) {
			snprintf(out, cap, "User%u", n);
			return;
		}
	}
	snprintf(out, cap, "%02x%02x%02x%02x%02x%02x%02x%02x", u->b[0], u->b[1], u->b[2],
		 u->b[3], u->b[4], u->b[5], u->b[6], u->b[7]);
}

static json_object *ace_json(const struct opal_ace *a)
{
	json_object *j = json_object_new_array();
	char name[24];

	for (size_t i = 0; i < a->n; i++) {
		authority_name(&a->auth[i], name, sizeof(name));
		json_object_array_add(j, json_object_new_string(name));
	}
	return j;
}

/* What ace_json made: the authorities' names. */
static void ace_text(FILE *o, json_object *names)
{
	size_t n = res_count(names);

	for (size_t i = 0; i < n; i++)
		fprintf(o, "%s%s", i ? " " : "",
			json_object_get_string(json_object_array_get_idx(names, i)));
	if (!n)
		fputs("(nobody)", o);
}

int cmd_access(struct ctx *c)
{
	struct opal_access *acc = calloc(1, sizeof(*acc));
	struct secret *key;
	struct opal_session *s;
	json_object *jr, *ju;
	int rc;

	if (!acc)
		return fail(c, EXIT_DRIVE, "access: out of memory");
	rc = opalctl_admin_open(c, &key, &s);
	if (rc) {
		free(acc);
		return rc;
	}
	rc = admin_close(c, key, s, opal_read_access(s, acc), "access: reading the ACEs");
	if (rc) {
		free(acc);
		return rc;
	}
	jr = json_object_new_array();
	for (unsigned n = 0; n < acc->nranges; n++) {
		const struct opal_range_acl *r = &acc->range[n];
		json_object *o;

		if (!r->configured)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "range", json_object_new_int((int)n));
		json_object_object_add(o, "read_lock", ace_json(&r->ace.rdlocked));
		json_object_object_add(o, "write_lock", ace_json(&r->ace.wrlocked));
		json_object_array_add(jr, o);
	}
	json_object_object_add(c->jout, "ranges", jr);
	ju = json_object_new_array();
	for (unsigned u = 1; u <= acc->nusers; u++)
		if (acc->user_enabled[u])
			json_object_array_add(ju, json_object_new_int((int)u));
	json_object_object_add(c->jout, "enabled_users", ju);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	free(acc);
	return 0;
}

void text_access(struct ctx *c, json_object *res)
{
	json_object *ranges = res_get(res, "ranges"), *users = res_get(res, "enabled_users");

	for (size_t i = 0; i < res_count(ranges); i++) {
		json_object *r = json_object_array_get_idx(ranges, i);
		int64_t n = res_int(r, "range");

		fprintf(c->out, "range %" PRId64 "%s:\n  read lock:  ", n, n ? "" : " (global)");
		ace_text(c->out, res_get(r, "read_lock"));
		fprintf(c->out, "\n  write lock: ");
		ace_text(c->out, res_get(r, "write_lock"));
		fputc('\n', c->out);
	}
	fprintf(c->out, "enabled users:");
	for (size_t i = 0; i < res_count(users); i++)
		fprintf(c->out, " User%d", json_object_get_int(json_object_array_get_idx(users, i)));
	fputc('\n', c->out);
}

int cmd_msid(struct ctx *c)
{
	uint8_t pin[OPAL_PIN_MAX];
	size_t n = 0;
	int rc = opal_get_msid(c->dev->opal, pin, sizeof(pin), &n);

	if (rc)
		return fail_opal(c, "msid: reading C_PIN_MSID", rc, NULL, NULL);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "msid", json_object_new_string_len((const char *)pin, (int)n));
	return 0;
}

/* The MSID's bytes as the drive gives them, as sedutil-cli prints them. */
void text_msid(struct ctx *c, json_object *res)
{
	json_object *msid = res_get(res, "msid");

	fwrite(json_object_get_string(msid), 1, (size_t)json_object_get_string_len(msid), c->out);
	fputc('\n', c->out);
}
