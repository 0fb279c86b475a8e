// SPDX-License-Identifier: GPL-2.0-only
/*
 * Key slots sealed with Clevis (nbde-slots.h): bind picks a free user,
 * seals a random PIN for it, then sets it up on the drive.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/rand.h>

#include "nbde-clevis.h"
#include "nbde-slots.h"
#include "nbde-state.h"
#include "nbde-tang.h"
#include "opal-slots.h"

void nbde_drive_name(const char *path, struct opal_dev *opal, struct nbde_drive_name *dn)
{
	char serial[OPAL_SERIAL_MAX + 1] = "";
	const char *base = strrchr(path, '/');
	struct opal_drive_ident id;
	size_t n = 0, cap = sizeof(dn->file_id);

	memset(dn, 0, sizeof(*dn));
	if (!opal_drive_identify(path, &id) && id.stable) {
		snprintf(dn->file_id, sizeof(dn->file_id), "%s", id.file_id);
		snprintf(dn->selector, sizeof(dn->selector), "%s", id.selector);
		snprintf(dn->serial, sizeof(dn->serial), "%s", id.serial);
		snprintf(dn->wwn, sizeof(dn->wwn), "%s", id.wwn);
		return;
	}
	if (opal && !opal_dev_serial(opal, serial))
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
	base = base ? base + 1 : path;
	for (const char *p = base; *p && n + 1 < cap; p++)
		dn->file_id[n++] = isalnum((unsigned char)*p) || *p == '-' || *p == '.' ? *p : '_';
	dn->file_id[n] = 0;
}

void nbde_default_jwe(const char *path, struct opal_dev *opal, unsigned int user, char *out,
		      size_t cap)
{
	struct nbde_drive_name dn;

	nbde_drive_name(path, opal, &dn);
	snprintf(out, cap, "%s/%s-user%u.jwe", NBDE_KEYS_DIR, dn.file_id, user);
}

/*
 * A tang configuration clevis encrypt seals with, asking nothing: a URL
 * curl may be given, and the server's trust given in it ("thp", or a
 * trusted advertisement, "adv"); without them clevis asks on the
 * terminal whether to trust the keys, and a bind in a background process
 * group waits for ever (SIGTTIN). 0, or why not.
 */
static int bind_tang_config(json_object *t, char *why, size_t wl)
{
	json_object *url, *v;
	char shown[128];

	if (!json_object_is_type(t, json_type_object) || !json_object_object_get_ex(t, "url", &url) ||
	    !json_object_is_type(url, json_type_string)) {
		snprintf(why, wl, "a tang configuration without \"url\"");
		return -EINVAL;
	}
	if (tang_url_check(json_object_get_string(url), why, wl))
		return -EINVAL;
	if ((json_object_object_get_ex(t, "thp", &v) && json_object_is_type(v, json_type_string) &&
	     json_object_get_string_len(v)) ||
	    (json_object_object_get_ex(t, "adv", &v) &&
	     (json_object_is_type(v, json_type_object) ||
	      (json_object_is_type(v, json_type_string) && json_object_get_string_len(v)))))
		return 0;
	tang_url_show(json_object_get_string(url), shown, sizeof(shown));
	snprintf(why, wl, "the tang configuration of %s has neither \"thp\" nor \"adv\": clevis would ask on the terminal whether to trust the server's keys. Give the thumbprint of its signing key (\"thp\"; on the server: tang-show-keys, or jose jwk thp -i KEY.jwk) or a trusted advertisement (\"adv\": a file, or the JSON)",
		 shown);
	return -EINVAL;
}

/* Each tang configuration of a pin's, sss ones' too (nested, and in lists). */
static int bind_pin_config(const char *pin, json_object *cfg, unsigned int depth, char *why,
			   size_t wl)
{
	json_object *pins;

	if (!strcmp(pin, "tang"))
		return bind_tang_config(cfg, why, wl);
	if (strcmp(pin, "sss") || !json_object_object_get_ex(cfg, "pins", &pins) ||
	    !json_object_is_type(pins, json_type_object))
		return 0;	/* clevis says what is wrong with it */
	if (depth > 8) {
		snprintf(why, wl, "sss configurations nested more than 8 deep");
		return -EINVAL;
	}
	json_object_object_foreach(pins, name, val) {
		size_t n = json_object_is_type(val, json_type_array) ? json_object_array_length(val) : 1;

		if (strcmp(name, "tang") && strcmp(name, "sss"))
			continue;
		for (size_t i = 0; i < n; i++) {
			json_object *one = json_object_is_type(val, json_type_array) ?
					   json_object_array_get_idx(val, i) : val;

			if (bind_pin_config(name, one, depth + 1, why, wl))
				return -EINVAL;
		}
	}
	return 0;
}

int nbde_bind_config_check(const char *pin, const char *config, char *why, size_t whylen)
{
	json_object *cfg = json_tokener_parse(config);
	int rc;

	snprintf(why, whylen, "not a JSON object");
	rc = !cfg || !json_object_is_type(cfg, json_type_object) ? -EINVAL :
	     bind_pin_config(pin, cfg, 0, why, whylen);
	json_object_put(cfg);
	return rc;
}

/* A failure of the bind: said in res; returns -1. */
static int bind_failed(struct nbde_bind_result *res, enum nbde_bind_status status, int opal_rc,
		       const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int bind_failed(struct nbde_bind_result *res, enum nbde_bind_status status, int opal_rc,
		       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	res->status = status;
	res->opal_rc = opal_rc;
	return -1;
}

/* 1. A free slot: a user neither enabled nor named by any ACE. 0 or -1 (said in res). */
static int bind_pick(const struct nbde_bind_rq *rq, struct nbde_bind_result *res)
{
	struct opal_access *acc = calloc(1, sizeof(*acc));
	struct opal_session *s = NULL;
	int rc;

	if (!acc)
		return bind_failed(res, NBDE_BIND_NO_MEMORY, 0, "out of memory");
	rc = opal_admin1_session(rq->opal, rq->admin, &s);
	if (rc) {
		free(acc);
		return bind_failed(res, NBDE_BIND_AUTH, rc, "authenticating as Admin1");
	}
	rc = opal_read_access(s, acc);
	if (rc)
		bind_failed(res, NBDE_BIND_READ_FAILED, rc, "reading users and ACEs");
	else if (rq->range >= acc->nranges || !acc->range[rq->range].configured)
		rc = bind_failed(res, NBDE_BIND_NO_RANGE, 0, "range %u is not configured on %s: set it up first (`opalctl setup --range %u ...`)",
				 rq->range, rq->path, rq->range);
	else if (!(res->user = opal_slot_find_free(acc)))
		rc = bind_failed(res, NBDE_BIND_NO_SLOT, 0, "no free key slot: all %u users are enabled or named in an ACE (remove one with `opalctl unbind`)",
				 acc->nusers);
	opal_end_session(s);
	free(acc);
	return rc ? -1 : 0;
}

/* 2. The PIN sealed into tmp, before the drive is touched. 0 or -1 (said in res). */
static int bind_seal(const struct nbde_bind_rq *rq, const struct secret *pin, const char *tmp,
		     struct nbde_bind_result *res)
{
	int rc, fd;

	if (!access(res->jwe, F_OK))
		return bind_failed(res, NBDE_BIND_EXISTS, 0, "%s exists: remove it or give --jwe FILE",
				   res->jwe);
	if (!rq->jwe && nbde_mkdir_p(NBDE_KEYS_DIR, 0700, 0700))
		return bind_failed(res, NBDE_BIND_FILE, 0, "cannot create %s: %s", NBDE_KEYS_DIR,
				   strerror(errno));
	/* The JWE is there only after the drive took the PIN: this one is stale. */
	if (!unlink(tmp))
		nbde_say(&rq->log, NBDE_LOG_WARNING, "bind: removed %s, left by an interrupted bind (a slot that bind enabled has no JWE: `opalctl slots` shows it, unbind it)",
			 tmp);
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0)
		return bind_failed(res, NBDE_BIND_FILE, 0, "cannot create %s: %s", tmp, strerror(errno));
	nbde_say(&rq->log, NBDE_LOG_DETAIL, "bind: clevis encrypt %s '%s' for User%u", rq->pin,
		 rq->config, res->user);
	rc = clevis_encrypt(rq->pin, rq->config, pin, fd, 120);
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (!rc)
		return 0;
	unlink(tmp);
	return bind_failed(res, NBDE_BIND_CLEVIS, 0, "clevis encrypt %s failed (%s): check --config and that the %s server/device answers",
			   rq->pin, rc < 0 ? strerror(-rc) : rc == 127 ? "clevis not installed" :
			   "see its message above", rq->pin);
}

int nbde_bind(const struct nbde_bind_rq *rq, struct nbde_bind_result *res)
{
	struct opal_session *s = NULL;
	struct secret *pin = NULL;
	struct nbde_drive_name dn;
	struct opal_key p;
	char tmp[PATH_MAX + 8], why[600];
	int rc = -1;

	memset(res, 0, sizeof(*res));
	res->range = rq->range;
	/* Before the drive: nothing is sealed that clevis would ask about. */
	if (nbde_bind_config_check(rq->pin, rq->config, why, sizeof(why)))
		return bind_failed(res, NBDE_BIND_BAD_CONFIG, 0, "%s", why);
	if (bind_pick(rq, res))
		return -1;
	pin = secret_new();
	if (!pin || RAND_bytes(pin->data, NBDE_SLOT_PIN_BYTES) != 1) {
		bind_failed(res, NBDE_BIND_NO_MEMORY, 0, "no locked memory or random bytes for the slot key");
		goto out;
	}
	pin->len = NBDE_SLOT_PIN_BYTES;
	if (rq->jwe)
		snprintf(res->jwe, sizeof(res->jwe), "%s", rq->jwe);
	else
		nbde_default_jwe(rq->path, rq->opal, res->user, res->jwe, sizeof(res->jwe));
	snprintf(tmp, sizeof(tmp), "%s.new", res->jwe);
	if (bind_seal(rq, pin, tmp, res))
		goto out;
	/* 3. The slot: enable the user, give it the PIN, grant it the range. */
	p = (struct opal_key){ pin->data, pin->len };
	rc = opal_admin1_session(rq->opal, rq->admin, &s);
	if (!rc)
		rc = opal_slot_bind(s, res->user, rq->range, &p);
	if (s) {
		int end = opal_end_session(s);

		rc = rc ? rc : end;
	}
	if (rc) {
		unlink(tmp);
		rc = bind_failed(res, NBDE_BIND_SETUP_FAILED, rc, "setting up the user");
		goto out;
	}
	if (rename(tmp, res->jwe)) {
		rc = bind_failed(res, NBDE_BIND_FILE, 0, "User%u is set up but %s cannot be renamed to %s: %s: rename it by hand",
				 res->user, tmp, res->jwe, strerror(errno));
		goto out;
	}
	nbde_drive_name(rq->path, rq->opal, &dn);
	/* Named by what survives renumbering, or by path when nothing does. */
	snprintf(res->opaltab, sizeof(res->opaltab), "NAME %s %u clevis:%s user=%u",
		 dn.selector[0] ? dn.selector : rq->path, rq->range, res->jwe, res->user);
out:
	secret_free(pin);
	return rc ? -1 : 0;
}
