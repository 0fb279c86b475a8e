// SPDX-License-Identifier: GPL-2.0-only
/*
 * The boot policy (nbde.h): for each entry, its device, its key, the
 * unlock; a person asked when the key source fails, within the bounds and
 * the tries this boot may spend.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "nbde.h"
#include "nbde-ledger.h"

/* The longest pause between two attempts of clevis in the foreground. */
#define CLEVIS_BACKOFF_MAX_S 16

/* Keys a drive accepted in this run, offered to its other entries first. */
#define ACCEPTED_MAX 8

struct accepted {
	char drive[NBDE_PATH_MAX];
	unsigned int user;
	struct secret *key;
};

struct run {
	const struct nbde_request *rq;
	const struct nbde_ops *ops;
	struct nbde_ledger ledger;
	uint64_t end;		/* automatic steps (when rq->have_deadline) */
	uint64_t prompt_ms;	/* the prompts' budget */
	struct accepted acc[ACCEPTED_MAX];
	size_t nacc;
};

void nbde_authority_name(unsigned int user, char *out, size_t cap)
{
	snprintf(out, cap, "%s%u", user ? "User" : "Admin", user ? user : 1);
}

const char *nbde_key_name(enum nbde_key_used k)
{
	switch (k) {
	case NBDE_KEY_CLEVIS: return "clevis";
	case NBDE_KEY_FILE: return "key file";
	case NBDE_KEY_PASSPHRASE: return "passphrase";
	case NBDE_KEY_REUSED: return "accepted key";
	default: return "none";
	}
}

bool nbde_entry_ok(const struct nbde_entry_result *r)
{
	return r->status == NBDE_UNLOCKED || r->status == NBDE_ALREADY_UNLOCKED ||
	       r->status == NBDE_LOCKED;
}

static uint64_t now(const struct run *r)
{
	return r->ops->now_ms(r->ops->arg);
}

static void say(const struct run *r, const struct opaltab_entry *e, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void say(const struct run *r, const struct opaltab_entry *e, const char *fmt, ...)
{
	char msg[NBDE_WHY_MAX + 200];
	va_list ap;

	if (!r->ops->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	r->ops->log(r->ops->arg, e ? e->name : "", msg);
}

static enum nbde_status failed(struct nbde_entry_result *res, enum nbde_status st,
			       const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static enum nbde_status failed(struct nbde_entry_result *res, enum nbde_status st,
			       const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(res->error, sizeof(res->error), fmt, ap);
	va_end(ap);
	return res->status = st;
}

/* ms left of the automatic steps' bound, at most want. */
static uint64_t remaining_ms(const struct run *r, uint64_t want)
{
	uint64_t t = now(r);

	if (!r->rq->have_deadline)
		return want;
	if (t >= r->end)
		return 0;
	return r->end - t < want ? r->end - t : want;
}

/* When a prompt must end: the prompts' budget after the bound (or from now). */
static uint64_t prompt_end(const struct run *r)
{
	return (r->rq->have_deadline ? r->end : now(r)) + r->prompt_ms;
}

static int wait_device(struct run *r, const struct opaltab_entry *e, char *path, size_t cap)
{
	uint64_t end = now(r) + remaining_ms(r, (uint64_t)e->timeout_s * 1000);

	for (;;) {
		int rc = r->ops->find_device(r->ops->arg, e, path, cap);

		if (rc != -ENOENT || now(r) >= end)
			return rc;
		r->ops->sleep_ms(r->ops->arg, 200);
	}
}

/* The drive's name in the ledger and the accepted keys: its serial, else its path. */
static const char *drive_id(const struct nbde_entry_result *res)
{
	return res->serial[0] ? res->serial : res->device;
}

/* The ledger's count of the authority's refusals, and what is left of the budget. */
static unsigned int tries_left(struct run *r, const struct opaltab_entry *e,
			       struct nbde_entry_result *res, unsigned int user)
{
	unsigned int used = nbde_ledger_get(&r->ledger, drive_id(res), user);

	res->tries_used = used;
	return used < e->prompt_tries ? e->prompt_tries - used : 0;
}

/*
 * Offer key as user: what the drive said. A refusal goes into the ledger
 * before anything else happens; an accepted key clears the authority's
 * count (the drive clears its own) and is kept for the drive's other
 * entries.
 */
static enum nbde_drive_status try_key(struct run *r, const struct opaltab_entry *e,
				      struct nbde_entry_result *res, unsigned int user,
				      const struct secret *key, enum nbde_key_used kind)
{
	struct nbde_unlock_rq rq = { .entry = e, .path = res->device, .user = user };
	struct nbde_unlock_out out = { 0 };
	char auth[16];

	/* Admin1's key opens every range and can revert the drive: never left in the kernel. */
	rq.save = e->save && user != 0;
	res->key = kind;
	res->user = user;
	nbde_authority_name(user, auth, sizeof(auth));
	r->ops->lock_ranges(r->ops->arg, &rq, key, true, &out);
	res->can_save = out.can_save;
	switch (out.status) {
	case NBDE_DRIVE_OK:
		nbde_ledger_reset(&r->ledger, drive_id(res), user);
		res->tries_used = 0;
		res->saved = out.saved;
		res->save_withheld = e->save && user == 0 && out.can_save;
		if (r->nacc < ACCEPTED_MAX && kind != NBDE_KEY_REUSED) {
			struct accepted *a = &r->acc[r->nacc];

			a->key = secret_new();
			if (a->key && key->len <= a->key->cap) {
				memcpy(a->key->data, key->data, key->len);
				a->key->len = key->len;
				snprintf(a->drive, sizeof(a->drive), "%s", drive_id(res));
				a->user = user;
				r->nacc++;
			} else {
				secret_free(a->key);
				a->key = NULL;
			}
		}
		break;
	case NBDE_DRIVE_REFUSED:
		res->refused++;
		if (nbde_ledger_add(&r->ledger, drive_id(res), user))
			say(r, e, "cannot record the refused key in the try ledger (%s): counted in this run only",
			    r->ledger.dir);
		res->tries_used = nbde_ledger_get(&r->ledger, drive_id(res), user);
		break;
	case NBDE_DRIVE_LOCKED_OUT:
		failed(res, NBDE_LOCKED_OUT, "%s is locked out on %s (its tries are used up): power the machine off and on, then use the recovery key",
		       auth, res->device);
		break;
	case NBDE_DRIVE_DENIED:
		break;
	case NBDE_DRIVE_ERROR:
		res->opal_rc = out.opal_rc;
		failed(res, NBDE_DRIVE_FAILED, "%s", out.why);
		break;
	}
	if (out.status != NBDE_DRIVE_OK && out.status != NBDE_DRIVE_ERROR && out.why[0])
		say(r, e, "%s", out.why);
	return out.status;
}

/*
 * May an unattended key (clevis, key file, an accepted one) be offered to
 * user? Only while it leaves a person at least one try of the budget.
 */
static bool unattended_allowed(struct run *r, const struct opaltab_entry *e,
			       struct nbde_entry_result *res, unsigned int user, const char *what)
{
	unsigned int left = tries_left(r, e, res, user);
	char auth[16];

	if (left > 1)
		return true;
	nbde_authority_name(user, auth, sizeof(auth));
	say(r, e, "not offering the %s to %s: %u of its %u tries this boot are used, and what is left is kept for the person at the console",
	    what, auth, res->tries_used, e->prompt_tries);
	return false;
}

/* The first clevis attempts, in the foreground: 0 and the key, or why not. */
static int clevis_attempts(struct run *r, const struct opaltab_entry *e, unsigned int attempts,
			   struct secret *key, char *why, size_t whylen)
{
	/*
	 * Retry only getting the key (server down, TPM busy), with backoff.
	 * A key the drive refuses is never retried.
	 */
	for (unsigned int attempt = 0; attempt < attempts; attempt++) {
		uint64_t left = remaining_ms(r, (uint64_t)e->timeout_s * 1000);
		unsigned int backoff = 1u << (attempt < 4 ? attempt : 4);

		if (backoff > CLEVIS_BACKOFF_MAX_S)
			backoff = CLEVIS_BACKOFF_MAX_S;
		if (!left) {
			snprintf(why, whylen, "no time left for getting the key (--deadline)");
			say(r, e, "%s", why);
			break;
		}
		if (!r->ops->clevis(r->ops->arg, e->key_path, (unsigned int)((left + 999) / 1000), key,
				    why, whylen))
			return 0;
		say(r, e, "attempt %u of %u: %s", attempt + 1, attempts, why);
		if (r->ops->jwe_present && !r->ops->jwe_present(r->ops->arg, e->key_path))
			break;	/* no JWE to read: waiting will not bring it */
		if (attempt + 1 < attempts && remaining_ms(r, backoff * 1000u) >= backoff * 1000u)
			r->ops->sleep_ms(r->ops->arg, backoff * 1000u);
	}
	return -ENOKEY;
}

static struct secret *accepted_key(struct run *r, const char *drive, unsigned int user)
{
	for (size_t i = 0; i < r->nacc; i++)
		if (r->acc[i].user == user && !strcmp(r->acc[i].drive, drive))
			return r->acc[i].key;
	return NULL;
}

static void drop_key(struct secret *key)
{
	explicit_bzero(key->data, key->cap);
	key->len = 0;
}

/* "1,2": the entry's ranges. */
static void ranges_text(const struct opaltab_entry *e, char *out, size_t cap)
{
	out[0] = 0;
	for (unsigned int i = 0, l = 0; i < e->nranges && l < cap; i++)
		l += (unsigned int)snprintf(out + l, cap - l, "%s%u", i ? "," : "", e->ranges[i]);
}

/* What the prompt says: what it wants, for which drive and range, and the tries left. */
static void prompt_text(const struct opaltab_entry *e, const struct nbde_entry_result *res,
			unsigned int user, unsigned int left, char *out, size_t cap)
{
	char ranges[40], auth[16];

	ranges_text(e, ranges, sizeof(ranges));
	nbde_authority_name(user, auth, sizeof(auth));
	snprintf(out, cap, "%s (%s) for drive %s, range%s %s (%s; %u %s left this boot)",
		 user ? "Passphrase" : "Recovery key", auth, res->serial[0] ? res->serial : res->device,
		 e->nranges > 1 ? "s" : "", ranges, e->name, left, left == 1 ? "try" : "tries");
}

struct fetch {
	int fd;		/* -1: none */
};

static void fetch_stop(struct run *r, struct fetch *f)
{
	if (f->fd >= 0 && r->ops->fetch_stop)
		r->ops->fetch_stop(r->ops->arg, f->fd);
	f->fd = -1;
}

/*
 * Ask a person until the key is taken, the budget is spent, or time is
 * up; a key the background fetch brings meanwhile is offered too.
 */
static void ask_loop(struct run *r, const struct opaltab_entry *e, struct nbde_entry_result *res,
		     struct secret *key, struct fetch *fetch)
{
	unsigned int user = e->key_kind == OPALTAB_KEY_PROMPT ? e->user : 0, empty = 0;
	struct secret *canon = secret_new();
	char prompt[512], auth[16];

	nbde_authority_name(user, auth, sizeof(auth));
	if (!canon) {
		failed(res, NBDE_NO_KEY, "no locked memory for the key");
		return;
	}
	for (;;) {
		unsigned int left = tries_left(r, e, res, user);
		int rc;

		if (!left) {
			say(r, e, "%u of %s's tries used this boot (prompt-tries=%u): not asking again; power the machine off and on before trying the recovery key again",
			    res->tries_used, auth, e->prompt_tries);
			if (res->status != NBDE_REFUSED)
				failed(res, NBDE_TRIES_SPENT, "%u of %s's tries used this boot: not asking again (prompt-tries=%u)",
				       res->tries_used, auth, e->prompt_tries);
			break;
		}
		prompt_text(e, res, user, left, prompt, sizeof(prompt));
		rc = r->ops->ask ? r->ops->ask(r->ops->arg, prompt, prompt_end(r), key, fetch->fd) :
				   -ENOTTY;
		if (rc < 0 && rc != -ETIMEDOUT && rc != -ENODATA && fetch->fd >= 0) {
			say(r, e, "nobody can be asked (%s); still trying %s", strerror(-rc), e->key_path);
			rc = wait_readable(fetch->fd, -1, prompt_end(r));
			rc = rc ? rc : 1;
		}
		if (rc == -ENODATA) {
			/* Enter alone: no key offered, no try used. */
			if (++empty >= NBDE_EMPTY_ANSWERS_MAX) {
				failed(res, NBDE_NO_KEY, "%u empty answers in a row: not asking again", empty);
				break;
			}
			say(r, e, "empty answer: nothing was tried; type the %s", user ? "passphrase" : "recovery key");
			continue;
		}
		empty = 0;
		if (rc == 1) {
			int got = r->ops->fetch_collect ? r->ops->fetch_collect(r->ops->arg, fetch->fd, key) : -1;

			fetch->fd = -1;
			if (got) {
				drop_key(key);
				continue;	/* it gave up: ask alone */
			}
			say(r, e, "the key came from %s while the prompt waited", e->key_path);
			if (unattended_allowed(r, e, res, e->user, "key from clevis") &&
			    try_key(r, e, res, e->user, key, NBDE_KEY_CLEVIS) == NBDE_DRIVE_OK) {
				res->status = NBDE_UNLOCKED;
				break;
			}
			drop_key(key);
			if (res->status == NBDE_LOCKED_OUT || res->status == NBDE_DRIVE_FAILED)
				break;
			continue;
		}
		if (rc) {
			if (res->status != NBDE_REFUSED)
				failed(res, NBDE_NO_KEY, "%s", rc == -ETIMEDOUT ? "no passphrase given in time" :
				       "no passphrase given (nobody can be asked)");
			else
				snprintf(res->error, sizeof(res->error), "%s",
					 rc == -ETIMEDOUT ? "no passphrase given in time" :
					 "no passphrase given (nobody can be asked)");
			break;
		}
		/* The recovery key in keygen's shape, as Crockford's base32 is read. */
		if (!user && nbde_recovery_canonical(key, canon)) {
			memcpy(key->data, canon->data, canon->len);
			key->len = canon->len;
			drop_key(canon);
		}
		switch (try_key(r, e, res, user, key, NBDE_KEY_PASSPHRASE)) {
		case NBDE_DRIVE_OK:
			res->status = NBDE_UNLOCKED;
			break;
		case NBDE_DRIVE_REFUSED:
			left = tries_left(r, e, res, user);
			res->status = NBDE_REFUSED;
			say(r, e, "passphrase refused (%u of %u; each uses one of %s's tries): %u left this boot",
			    res->tries_used, e->prompt_tries, auth, left);
			drop_key(key);
			continue;
		case NBDE_DRIVE_DENIED:
			failed(res, NBDE_DENIED, "the passphrase is right, but %s may not unlock these ranges (`opalctl grant` gives a user a range)",
			       auth);
			break;
		default:
			break;
		}
		break;
	}
	drop_key(key);
	secret_free(canon);
}

/* One entry: see nbde.h. */
static void unlock_entry(struct run *r, const struct opaltab_entry *e, struct nbde_entry_result *res)
{
	bool can_prompt = !r->rq->no_prompt && r->ops->ask &&
			  (e->key_kind == OPALTAB_KEY_PROMPT || e->fallback_prompt);
	struct fetch fetch = { -1 };
	struct nbde_drive_info info = { 0 };
	struct secret *key, *known;
	char why[NBDE_WHY_MAX] = "", auth[16];
	uint64_t start = now(r);
	enum nbde_key_used kind = NBDE_KEY_NONE;
	bool have_key = false;
	int rc;

	res->tries_allowed = e->prompt_tries;
	res->save_requested = e->save;
	res->user = e->user;
	if (e->bad) {
		failed(res, NBDE_BAD_ENTRY, "bad entry: %s: fix the table (see opaltab(5))", e->error);
		return;
	}
	rc = wait_device(r, e, res->device, sizeof(res->device));
	if (rc) {
		const char *k = e->dev_kind == OPALTAB_DEV_SERIAL ? "serial=" :
				e->dev_kind == OPALTAB_DEV_WWN ? "wwn=" : "";

		if (rc == -ENOTUNIQ) {
			failed(res, NBDE_AMBIGUOUS, "%s%s names two drives (%s): name the drive by wwn= or a /dev/disk/by-id path; nothing unlocked",
			       k, e->dev, res->device);
		} else {
			failed(res, NBDE_NO_DEVICE, "device %s%s %s within %u s", k, e->dev,
			       rc == -ENOENT ? "not found" : strerror(-rc),
			       (unsigned int)((now(r) - start + 500) / 1000));
		}
		res->device[0] = 0;
		return;
	}
	if (!r->ops->drive_info(r->ops->arg, e, res->device, &info)) {
		snprintf(res->serial, sizeof(res->serial), "%s", info.serial);
		if (info.unlocked) {
			res->status = NBDE_ALREADY_UNLOCKED;
			return;
		}
	}
	key = secret_new();
	if (!key) {
		failed(res, NBDE_NO_KEY, "no locked memory for the key");
		return;
	}
	res->status = NBDE_NO_KEY;
	/* 1. The entry's own source. */
	if (e->key_kind == OPALTAB_KEY_CLEVIS) {
		/* With a prompt to fall back on, one attempt before it. */
		have_key = !clevis_attempts(r, e, can_prompt ? 1 : e->retry + 1, key, why, sizeof(why));
		kind = NBDE_KEY_CLEVIS;
	} else if (e->key_kind == OPALTAB_KEY_FILE) {
		have_key = !r->ops->key_file(r->ops->arg, e->key_path, key, why, sizeof(why));
		kind = NBDE_KEY_FILE;
	}
	if (have_key && unattended_allowed(r, e, res, e->user, nbde_key_name(kind))) {
		enum nbde_drive_status st = try_key(r, e, res, e->user, key, kind);

		nbde_authority_name(e->user, auth, sizeof(auth));
		if (st == NBDE_DRIVE_OK) {
			res->status = NBDE_UNLOCKED;
			goto out;
		}
		if (st == NBDE_DRIVE_LOCKED_OUT || st == NBDE_DRIVE_ERROR)
			goto out;
		res->status = st == NBDE_DRIVE_REFUSED ? NBDE_REFUSED : NBDE_DENIED;
		if (st == NBDE_DRIVE_DENIED) {
			char ranges[40];

			ranges_text(e, ranges, sizeof(ranges));
			snprintf(why, sizeof(why), "%s may not unlock range %s (the key was right: `opalctl grant` gives it the range)",
				 auth, ranges);
		}
		else
			snprintf(why, sizeof(why), "the drive refused the %s key for %s%s", nbde_key_name(kind),
				 auth, kind == NBDE_KEY_CLEVIS ?
				 " (a stale JWE? the slot was unbound or rebound after this initramfs was made)" : "");
		if (can_prompt)
			say(r, e, "%s: asking for the recovery key", why);
		snprintf(res->error, sizeof(res->error), "%s", why);
	} else if (have_key) {
		snprintf(why, sizeof(why), "the %s was not offered: the tries left are kept for a person",
			 nbde_key_name(kind));
	}
	drop_key(key);
	if (res->status == NBDE_NO_KEY && why[0])
		snprintf(res->error, sizeof(res->error), "%s", why);
	/* 2. A key this drive already took for the recovery authority. */
	{
		unsigned int puser = e->key_kind == OPALTAB_KEY_PROMPT ? e->user : 0;

		known = can_prompt ? accepted_key(r, drive_id(res), puser) : NULL;
		if (known && unattended_allowed(r, e, res, puser, "accepted key")) {
			if (try_key(r, e, res, puser, known, NBDE_KEY_REUSED) == NBDE_DRIVE_OK) {
				say(r, e, "unlocked with the key this drive took for another entry");
				res->status = NBDE_UNLOCKED;
				goto out;
			}
			if (res->status == NBDE_LOCKED_OUT || res->status == NBDE_DRIVE_FAILED)
				goto out;
		}
	}
	if (!can_prompt) {
		if (res->status == NBDE_NO_KEY && !res->error[0])
			snprintf(res->error, sizeof(res->error), "no key source left (prompting is off)");
		goto out;
	}
	/* 3. A person, with the JWE tried again meanwhile. */
	if (e->key_kind == OPALTAB_KEY_CLEVIS && r->ops->fetch_start &&
	    (!r->ops->jwe_present || r->ops->jwe_present(r->ops->arg, e->key_path))) {
		fetch.fd = r->ops->fetch_start(r->ops->arg, e, prompt_end(r));
		if (fetch.fd >= 0)
			say(r, e, "asking for the recovery key; %s is tried again meanwhile", e->key_path);
	}
	ask_loop(r, e, res, key, &fetch);
out:
	fetch_stop(r, &fetch);
	secret_free(key);
}

static bool wanted(const struct nbde_request *rq, const struct opaltab_entry *e)
{
	if (!rq->nnames)
		return !e->noauto;
	for (size_t i = 0; i < rq->nnames; i++)
		if (!strcmp(rq->names[i], e->name))
			return true;
	return false;
}

typedef void (*entry_fn)(struct run *r, const struct opaltab_entry *e,
			 struct nbde_entry_result *res);

static int run_entries(const struct nbde_request *rq, const struct nbde_ops *ops,
		       struct nbde_result *res, entry_fn one)
{
	struct run *r = calloc(1, sizeof(*r));

	memset(res, 0, sizeof(*res));
	if (!r)
		return -ENOMEM;
	res->entries = calloc(rq->nentries ? rq->nentries : 1, sizeof(*res->entries));
	if (!res->entries) {
		free(r);
		return -ENOMEM;
	}
	r->rq = rq;
	r->ops = ops;
	r->ledger.dir = rq->ledger_dir;
	r->end = now(r) + (uint64_t)rq->deadline_s * 1000;
	r->prompt_ms = (uint64_t)(rq->prompt_timeout_s ? rq->prompt_timeout_s : 120) * 1000;
	for (size_t i = 0; i < rq->nentries; i++) {
		const struct opaltab_entry *e = &rq->entries[i];
		struct nbde_entry_result *er;

		if (!wanted(rq, e)) {
			if (e->bad)
				say(r, NULL, "entry '%s' (noauto) is bad: %s", e->name, e->error);
			continue;
		}
		er = &res->entries[res->n++];
		er->entry = e;
		one(r, e, er);
		if (nbde_entry_ok(er))
			res->ok++;
		else
			res->failed++;
		if (rq->entry_done)
			rq->entry_done(rq->done_arg, er);
	}
	for (size_t i = 0; i < r->nacc; i++)
		secret_free(r->acc[i].key);
	free(r);
	return res->failed ? 1 : 0;
}

int nbde_run(const struct nbde_request *rq, const struct nbde_ops *ops, struct nbde_result *res)
{
	return run_entries(rq, ops, res, unlock_entry);
}

/*
 * lock-all: the entry's ranges locked again with its own key source (no
 * prompt). Its unattended key counts in the ledger as any other.
 */
static void lock_entry(struct run *r, const struct opaltab_entry *e, struct nbde_entry_result *res)
{
	struct nbde_unlock_rq rq = { .entry = e, .user = e->user, .force = r->rq->force };
	struct nbde_unlock_out out = { 0 };
	struct nbde_drive_info info = { 0 };
	char why[NBDE_WHY_MAX] = "";
	struct secret *key;
	int rc;

	res->user = e->user;
	res->tries_allowed = e->prompt_tries;
	if (e->bad) {
		failed(res, NBDE_BAD_ENTRY, "bad entry: %s: fix the table (see opaltab(5))", e->error);
		return;
	}
	if (e->key_kind == OPALTAB_KEY_PROMPT) {
		failed(res, NBDE_NO_KEY, "its key is a passphrase: nobody to ask; it locks at power-off");
		return;
	}
	rc = wait_device(r, e, res->device, sizeof(res->device));
	if (rc) {
		failed(res, rc == -ENOTUNIQ ? NBDE_AMBIGUOUS : NBDE_NO_DEVICE, "device %s: %s", e->dev,
		       rc == -ENOENT ? "not found" : rc == -ENOTUNIQ ? "names two drives" : strerror(-rc));
		res->device[0] = 0;
		return;
	}
	if (!r->ops->drive_info(r->ops->arg, e, res->device, &info))
		snprintf(res->serial, sizeof(res->serial), "%s", info.serial);
	key = secret_new();
	if (!key) {
		failed(res, NBDE_NO_KEY, "no locked memory for the key");
		return;
	}
	rc = e->key_kind == OPALTAB_KEY_CLEVIS ?
		clevis_attempts(r, e, e->retry + 1, key, why, sizeof(why)) :
		r->ops->key_file(r->ops->arg, e->key_path, key, why, sizeof(why));
	if (rc) {
		failed(res, NBDE_NO_KEY, "%s: left unlocked (it locks at power-off)", why);
		secret_free(key);
		return;
	}
	res->key = e->key_kind == OPALTAB_KEY_CLEVIS ? NBDE_KEY_CLEVIS : NBDE_KEY_FILE;
	if (!unattended_allowed(r, e, res, e->user, nbde_key_name(res->key))) {
		failed(res, NBDE_TRIES_SPENT, "the tries left this boot are kept for a person: left unlocked (it locks at power-off)");
		secret_free(key);
		return;
	}
	rq.path = res->device;
	r->ops->lock_ranges(r->ops->arg, &rq, key, false, &out);
	secret_free(key);
	switch (out.status) {
	case NBDE_DRIVE_OK:
		nbde_ledger_reset(&r->ledger, drive_id(res), e->user);
		res->status = NBDE_LOCKED;
		return;
	case NBDE_DRIVE_REFUSED:
		res->refused++;
		nbde_ledger_add(&r->ledger, drive_id(res), e->user);
		res->status = NBDE_REFUSED;
		break;
	case NBDE_DRIVE_LOCKED_OUT:
		res->status = NBDE_LOCKED_OUT;
		break;
	case NBDE_DRIVE_DENIED:
		res->status = NBDE_DENIED;
		break;
	default:
		res->opal_rc = out.opal_rc;
		res->status = NBDE_DRIVE_FAILED;
	}
	/* The drive's reason goes to the log; the line says it is above. */
	say(r, e, "%s", out.why);
}

int nbde_lock_all(const struct nbde_request *rq, const struct nbde_ops *ops,
		  struct nbde_result *res)
{
	return run_entries(rq, ops, res, lock_entry);
}

void nbde_result_free(struct nbde_result *res)
{
	free(res->entries);
	res->entries = NULL;
	res->n = 0;
}
