// SPDX-License-Identifier: GPL-2.0-only
/*
 * Tang key rotation without the drive (nbde-rotate.h): the report says
 * which sealed keys use server keys that are rotated (hidden: they still
 * answer) or gone, and whether the initramfs holds the same JWE as the
 * file; regen seals a slot's PIN again for the servers' current keys.
 *
 * A slot's PIN never changes: regen opens the JWE with clevis decrypt
 * (a rotated key still answers), seals the same PIN with clevis encrypt
 * for the same servers, checks the new JWE opens to the same PIN, and
 * swaps the file in atomically, the old one kept as FILE.old. The drive
 * and the Admin1 key are not needed.
 *
 * An sss slot's tpm2 branches are sealed again too, as clevis luks regen
 * does: their configuration comes back from the branch's header (hash,
 * key, pcr_bank, pcr_ids), and the TPM of this machine seals them, to
 * the PCR values it holds now. Opening the slot first needs that TPM
 * already whenever the threshold does.
 *
 * Trust is carried over, not asked again: the JWE holds the server's
 * advertisement as it was at bind time, whose signing keys the binding
 * trusted (by thumbprint, or after being asked). Tang serves its current
 * advertisement signed by any signing key it still has, rotated ones too
 * (GET /adv/THP); one that verifies with a key the slot trusted vouches for
 * the new keys. When the server has none of them any more, the new key's
 * thumbprint must be given (thps).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>

#include "nbde-clevis.h"
#include "nbde-rotate.h"
#include "nbde-tang.h"
#include "opaltab.h"
/* Each request to a Tang server (an advertisement, a clevis call's exchange). */
#define TANG_TIMEOUT_S 15
/* Each tpm2 branch clevis opens or seals (a slow TPM's primary key). */
#define TPM_TIMEOUT_S 30
/* Unpacking an initramfs image. */
#define UNPACK_TIMEOUT_MS 120000
#define MAX_BRANCHES NBDE_BRANCHES_MAX

struct branch {
	json_object *hdr;	/* the branch's protected header (owned) */
	const char *url;	/* borrowed from hdr */
	const char *kid;	/* the exchange key it was sealed for */
	json_object *bound_keys;	/* clevis.tang.adv: the keys trusted at bind time */
	const char *jwe;	/* sss: the branch's compact JWE; NULL: the file itself */
	enum nbde_key_state state;
	char why[400];
	char new_thp[TANG_THP_MAX];	/* regen: the signing key the new seal trusts */
};

/* An sss branch of the tpm2 pin: what clevis encrypt tpm2 takes again. */
struct tpm2_branch {
	json_object *cfg;	/* hash, key, pcr_bank, pcr_ids (owned) */
	const char *jwe;	/* the branch's compact JWE, borrowed */
};

struct sealed {
	char *text;
	json_object *hdr;
	char pin[16];
	int threshold;			/* sss: t; else 1 */
	struct branch b[MAX_BRANCHES];
	size_t nb;
	struct tpm2_branch tpm[MAX_BRANCHES];
	size_t ntpm;
	char other[16];			/* a pin other than tang inside sss, or a tpm2 slot */
	char keep[80];			/* sss: a branch regen cannot seal again */
};


/* The signing keys to trust besides those a slot was bound with. */
struct trust {
	const char *const *thps;
	size_t nthps;
};

void nbde_say(const struct nbde_log *log, enum nbde_log_level level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	log->fn(log->arg, level, msg);
}

const char *nbde_key_state_name(enum nbde_key_state s)
{
	static const char *const names[] = {
		[NBDE_KEY_CURRENT] = "current", [NBDE_KEY_ROTATED] = "rotated",
		[NBDE_KEY_GONE] = "gone", [NBDE_KEY_UNREACHABLE] = "unreachable",
		[NBDE_KEY_INVALID] = "invalid", [NBDE_KEY_UNTRUSTED] = "untrusted",
	};

	return (size_t)s < sizeof(names) / sizeof(names[0]) ? names[s] : "?";
}
static const char *jstr(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) && json_object_is_type(v, json_type_string) ?
	       json_object_get_string(v) : NULL;
}

static json_object *jobj(json_object *o, const char *key)
{
	json_object *v;

	return o && json_object_object_get_ex(o, key, &v) ? v : NULL;
}

static void sealed_free(struct sealed *s)
{
	for (size_t i = 0; i < s->nb; i++)
		json_object_put(s->b[i].hdr);
	for (size_t i = 0; i < s->ntpm; i++)
		json_object_put(s->tpm[i].cfg);
	json_object_put(s->hdr);
	free(s->text);
	memset(s, 0, sizeof(*s));
}

/* A tang branch of path from its header (taken over); jwe: its text inside sss. */
static int branch_add(struct sealed *s, const char *path, json_object *hdr, const char *jwe,
		      char *why, size_t wl)
{
	json_object *tang = jobj(jobj(hdr, "clevis"), "tang");
	struct branch *b;
	char uwhy[300];

	if (s->nb == MAX_BRANCHES) {
		json_object_put(hdr);
		snprintf(why, wl, "more than %d tang branches", MAX_BRANCHES);
		return -EINVAL;
	}
	b = &s->b[s->nb++];
	memset(b, 0, sizeof(*b));
	b->hdr = hdr;
	b->jwe = jwe;
	b->url = jstr(tang, "url");
	b->kid = jstr(hdr, "kid");
	b->bound_keys = jobj(tang, "adv");
	if (!b->url || !b->kid || !b->bound_keys || !json_object_is_type(b->bound_keys, json_type_object)) {
		snprintf(why, wl, "a tang JWE without url, kid or the advertisement it was sealed with");
		return -EINVAL;
	}
	/* Before any curl or clevis (whose tang pin runs curl "$url/..."). */
	if (tang_url_check(b->url, uwhy, sizeof(uwhy))) {
		snprintf(why, wl, "%s: %s", path, uwhy);
		return -EINVAL;
	}
	return 0;
}

/*
 * PCR numbers as an array (clevis writes "0,7", but takes [0,7] too) into
 * "0,7". False when it is not a list of PCR numbers.
 */
static bool pcr_list(json_object *ids, char *out, size_t cap)
{
	size_t len = 0;

	out[0] = 0;
	if (!json_object_is_type(ids, json_type_array))
		return false;
	for (size_t i = 0; i < json_object_array_length(ids); i++) {
		json_object *v = json_object_array_get_idx(ids, i);
		int r;

		if (!json_object_is_type(v, json_type_int) || json_object_get_int(v) < 0 ||
		    json_object_get_int(v) > 31)
			return false;
		r = snprintf(out + len, cap - len, "%s%d", i ? "," : "", json_object_get_int(v));
		if (r < 0 || (size_t)r >= cap - len)
			return false;
		len += (size_t)r;
	}
	return true;
}

/*
 * The configuration clevis encrypt tpm2 made a branch with, from what its
 * header keeps (clevis-encrypt-tpm2: hash and key always, pcr_bank and
 * pcr_ids with a PCR policy; jwk_pub and jwk_priv are the sealed object,
 * not configuration). No pcr_digest: the TPM's PCR values now are sealed
 * to, as clevis luks regen does. NULL when the header lacks what it needs.
 */
static json_object *tpm2_config(json_object *hdr)
{
	json_object *tpm = jobj(jobj(hdr, "clevis"), "tpm2"), *cfg, *ids;
	static const char *const keys[] = { "hash", "key", "pcr_bank" };
	char list[128] = "";

	if (!jstr(tpm, "hash") || !jstr(tpm, "key"))
		return NULL;
	ids = jobj(tpm, "pcr_ids");
	if (ids && !json_object_is_type(ids, json_type_string) && !pcr_list(ids, list, sizeof(list)))
		return NULL;
	cfg = json_object_new_object();
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (jstr(tpm, keys[i]))
			json_object_object_add(cfg, keys[i], json_object_new_string(jstr(tpm, keys[i])));
	if (jstr(tpm, "pcr_ids") && *jstr(tpm, "pcr_ids"))
		json_object_object_add(cfg, "pcr_ids", json_object_new_string(jstr(tpm, "pcr_ids")));
	else if (ids && list[0])
		json_object_object_add(cfg, "pcr_ids", json_object_new_string(list));
	return cfg;
}

/* Read and take apart a sealed key file. 0, or why it cannot be used. */
static int sealed_parse(const char *path, struct sealed *s, char *why, size_t wl)
{
	json_object *cl, *sss, *arr;
	const char *pin;

	memset(s, 0, sizeof(*s));
	s->threshold = 1;
	s->text = clevis_jwe_read(path);
	if (!s->text) {
		snprintf(why, wl, "cannot read %s: %s", path, strerror(errno));
		return -errno;
	}
	s->hdr = clevis_jwe_header(s->text);
	cl = jobj(s->hdr, "clevis");
	pin = jstr(cl, "pin");
	if (!pin) {
		snprintf(why, wl, "%s is not a Clevis JWE", path);
		return -EINVAL;
	}
	snprintf(s->pin, sizeof(s->pin), "%s", pin);
	if (!strcmp(pin, "tang"))
		return branch_add(s, path, json_object_get(s->hdr), NULL, why, wl);
	if (strcmp(pin, "sss")) {
		snprintf(s->other, sizeof(s->other), "%s", pin);
		return 0;
	}
	sss = jobj(cl, "sss");
	arr = jobj(sss, "jwe");
	if (!jobj(sss, "t") || !arr || !json_object_is_type(arr, json_type_array)) {
		snprintf(why, wl, "%s: an sss JWE without its threshold or branches", path);
		return -EINVAL;
	}
	s->threshold = json_object_get_int(jobj(sss, "t"));
	for (size_t i = 0; i < json_object_array_length(arr); i++) {
		json_object *e = json_object_array_get_idx(arr, i);
		const char *jwe = json_object_is_type(e, json_type_string) ? json_object_get_string(e) : "";
		json_object *h = clevis_jwe_header(jwe);
		const char *bp = jstr(jobj(h, "clevis"), "pin");

		if (!bp) {
			json_object_put(h);
			snprintf(why, wl, "%s: sss branch %zu is not a Clevis JWE", path, i + 1);
			return -EINVAL;
		}
		if (strcmp(bp, "tang")) {
			json_object *cfg = strcmp(bp, "tpm2") ? NULL : tpm2_config(h);

			/* Reported; regen seals a tpm2 branch again, refuses others. */
			snprintf(s->other, sizeof(s->other), "%s", bp);
			if (cfg && s->ntpm < MAX_BRANCHES) {
				s->tpm[s->ntpm].cfg = cfg;
				s->tpm[s->ntpm++].jwe = jwe;
			} else if (cfg) {
				json_object_put(cfg);
				snprintf(s->keep, sizeof(s->keep), "more than %d tpm2 branches", MAX_BRANCHES);
			} else if (!strcmp(bp, "tpm2")) {
				snprintf(s->keep, sizeof(s->keep), "a tpm2 branch whose header has no hash or key");
			} else {
				snprintf(s->keep, sizeof(s->keep), "a branch of the %.16s pin", bp);
			}
			json_object_put(h);
			continue;
		}
		if (branch_add(s, path, h, jwe, why, wl))
			return -EINVAL;
	}
	return 0;
}

/* ------------------------------------------------------------ report */

static int branch_trust(const struct trust *t, struct branch *b, char *why, size_t wl);

/*
 * Where the branch's key stands, told by an advertisement that a signing
 * key the slot trusts signed, as regen takes it (branch_trust): current
 * (advertised in it), rotated (not advertised: the server still answers
 * for it), gone (the server answers, the key does not), unreachable (no
 * advertisement), invalid (the one served for a trusted key does not
 * verify with it: not the server the slot was bound to, or not only).
 */
static void branch_probe(const struct trust *t, struct branch *b, const char *path)
{
	struct secret *out;
	char why[400];
	int trust = branch_trust(t, b, b->why, sizeof(b->why)), rc;

	if (trust == -EHOSTUNREACH) {
		b->state = NBDE_KEY_UNREACHABLE;
		return;
	}
	if (trust && trust != -ENOKEY) {
		b->state = NBDE_KEY_INVALID;
		return;
	}
	b->why[0] = 0;
	if (!trust && b->state == NBDE_KEY_CURRENT)
		return;
	/* Not in an advertisement it can trust: does the server still answer for it? */
	out = secret_new();
	if (!out) {
		b->state = NBDE_KEY_INVALID;
		snprintf(b->why, sizeof(b->why), "out of memory");
		return;
	}
	rc = b->jwe ? clevis_decrypt_text(b->jwe, strlen(b->jwe), TANG_TIMEOUT_S, out, why, sizeof(why)) :
	     clevis_decrypt(path, TANG_TIMEOUT_S, out, why, sizeof(why));
	secret_free(out);
	if (rc) {
		b->state = NBDE_KEY_GONE;
		snprintf(b->why, sizeof(b->why), "%s no longer has key %s: this branch cannot open any more",
			 b->url, b->kid);
	} else if (trust) {
		b->state = NBDE_KEY_ROTATED;
		snprintf(b->why, sizeof(b->why), "%s still answers for key %s, but none of the signing keys this slot trusted signs its advertisement any more: regen with its current signing key (--thp) before the key is deleted",
			 b->url, b->kid);
	} else {
		b->state = NBDE_KEY_ROTATED;
		snprintf(b->why, sizeof(b->why), "%s no longer advertises key %s but still answers for it: regen before it is deleted",
			 b->url, b->kid);
	}
}

static int remove_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)flag;
	(void)ftw;
	return remove(path);
}

/*
 * The initramfs image unpacked into a new directory (dir), with
 * unmkinitramfs (initramfs-tools) or lsinitrd (dracut). 0 or why not.
 */
static int initramfs_unpack(const char *img, char *dir, size_t cap, char *why, size_t wl)
{
	char *const unmk[] = { (char *)"unmkinitramfs", (char *)img, dir, NULL };
	char *const lsi[] = { (char *)"sh", (char *)"-c", (char *)"cd \"$1\" && exec lsinitrd --unpack \"$2\"",
			      (char *)"sh", dir, (char *)img, NULL };
	int null = open("/dev/null", O_WRONLY | O_CLOEXEC), rc;
	struct child_io io = { .in_fd = -1, .out_fd = null };

	snprintf(dir, cap, "%s/fdekit-initramfs.XXXXXX", access("/run", W_OK) ? "/tmp" : "/run");
	if (null < 0 || !mkdtemp(dir)) {
		snprintf(why, wl, "cannot make a directory to unpack it in: %s", strerror(errno));
		if (null >= 0)
			close(null);
		dir[0] = 0;
		return -errno;
	}
	rc = run_child(unmk, &io, UNPACK_TIMEOUT_MS);
	if (rc == 127)
		rc = run_child(lsi, &io, UNPACK_TIMEOUT_MS);
	close(null);
	if (rc) {
		snprintf(why, wl, rc == 127 ? "neither unmkinitramfs nor lsinitrd is installed" :
			 "could not unpack it (exit %d)", rc);
		nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
		dir[0] = 0;
		return -EIO;
	}
	return 0;
}

/* Whether two files hold the same bytes: 1, 0, or -errno when one cannot be read. */
static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "r"), *fb = fopen(b, "r");
	int rc = 1;

	if (!fa || !fb) {
		rc = -errno;
		goto out;
	}
	for (;;) {
		int x = getc(fa), y = getc(fb);

		if (x != y) {
			rc = 0;
			break;
		}
		if (x == EOF)
			break;
	}
out:
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return rc;
}

/* The copy of path in the unpacked image: same, differs or missing. */
static enum nbde_copy initramfs_copy(const char *dir, const char *path)
{
	static const char *const sub[] = { "", "/main" };

	for (size_t i = 0; i < sizeof(sub) / sizeof(sub[0]); i++) {
		char p[PATH_MAX * 2];
		int rc;

		snprintf(p, sizeof(p), "%s%s%s", dir, sub[i], path);
		rc = same_file(path, p);
		if (rc >= 0)
			return rc ? NBDE_COPY_SAME : NBDE_COPY_DIFFERS;
	}
	return NBDE_COPY_MISSING;
}

static void default_initramfs(char *out, size_t cap)
{
	struct utsname u;

	snprintf(out, cap, "/boot/initrd.img-%s", uname(&u) ? "" : u.release);
}

/* The command that rebuilds the initramfs on this system. */
static const char *initramfs_command(void)
{
	if (!access("/usr/sbin/update-initramfs", X_OK) || !access("/sbin/update-initramfs", X_OK))
		return "update-initramfs -u -k all";
	if (!access("/usr/bin/dracut", X_OK) || !access("/usr/sbin/dracut", X_OK))
		return "dracut --regenerate-all --force";
	return "rebuild the initramfs";
}

/* A server of the result, from a branch. 0 or -ENOMEM. */
static int server_said(struct nbde_sealed_info *info, const struct branch *b)
{
	struct nbde_server *sv = &info->servers[info->nservers];

	sv->url = strdup(b->url);
	sv->kid = strdup(b->kid);
	if (!sv->url || !sv->kid) {
		free(sv->url);
		free(sv->kid);
		sv->url = sv->kid = NULL;
		return -ENOMEM;
	}
	info->nservers++;
	sv->state = b->state;
	snprintf(sv->thp, sizeof(sv->thp), "%s", b->new_thp);
	snprintf(sv->why, sizeof(sv->why), "%s", b->why);
	return 0;
}

static void info_parsed(struct nbde_sealed_info *info, const struct sealed *s)
{
	info->parsed = true;
	snprintf(info->pin, sizeof(info->pin), "%s", s->pin);
	info->threshold = s->threshold;
}

static void info_free(struct nbde_sealed_info *info)
{
	for (size_t i = 0; i < info->nservers; i++) {
		free(info->servers[i].url);
		free(info->servers[i].kid);
	}
	info->nservers = 0;
}

/* One sealed key: its branches probed, what to do about it (o). Whether it needs attention. */
static bool report_one(const struct trust *t, const char *path, const struct opaltab_entry *e,
		       const char *imgdir, struct nbde_report_slot *o)
{
	struct sealed s;
	unsigned int current = 0, opens = 0, unknown = 0;
	enum nbde_report_action action;

	o->s.name = e ? e->name : NULL;
	o->s.jwe = path;
	if (sealed_parse(path, &s, o->why, sizeof(o->why))) {
		o->action = NBDE_ACTION_REBIND;
		o->needs_attention = true;
		sealed_free(&s);
		return true;
	}
	info_parsed(&o->s, &s);
	for (size_t i = 0; i < s.nb; i++) {
		struct branch *b = &s.b[i];

		branch_probe(t, b, path);
		current += b->state == NBDE_KEY_CURRENT;
		opens += b->state == NBDE_KEY_CURRENT || b->state == NBDE_KEY_ROTATED;
		unknown += b->state == NBDE_KEY_UNREACHABLE || b->state == NBDE_KEY_INVALID;
		if (server_said(&o->s, b)) {
			snprintf(b->why, sizeof(b->why), "out of memory");
			unknown++;
		}
	}
	/*
	 * A tpm2 branch is not probed (no server key; regen seals it again
	 * with this machine's TPM): it counts towards the threshold.
	 */
	opens += (unsigned int)s.ntpm;
	if (!s.nb) {
		/* tpm2 alone: sealed to this machine, no server key to rotate. */
		action = NBDE_ACTION_NONE;
	} else if (current == s.nb) {
		action = NBDE_ACTION_NONE;
	} else if (opens >= (unsigned int)s.threshold) {
		action = NBDE_ACTION_REGEN;
	} else if (unknown) {
		action = NBDE_ACTION_CHECK;	/* a server did not answer: cannot tell */
	} else {
		action = NBDE_ACTION_REBIND;
	}
	if (s.other[0] && s.nb)
		snprintf(o->other_pin, sizeof(o->other_pin), "%s", s.other);
	o->action = action;
	/* The initramfs carries the entries it unlocks (not noauto). */
	o->initramfs = imgdir && (!e || !e->noauto) ? initramfs_copy(imgdir, path) :
		       NBDE_COPY_NOT_CHECKED;
	snprintf(o->old, sizeof(o->old), "%s.old", path);
	if (access(o->old, F_OK))
		o->old[0] = 0;
	o->needs_attention = action != NBDE_ACTION_NONE ||
			     (o->initramfs != NBDE_COPY_NOT_CHECKED && o->initramfs != NBDE_COPY_SAME &&
			      (e || o->initramfs != NBDE_COPY_MISSING));
	sealed_free(&s);
	return o->needs_attention;
}

int nbde_report(const struct nbde_report_rq *rq, struct nbde_report *out)
{
	const struct trust t = { NULL, 0 };
	char dir[PATH_MAX] = "";
	bool want_image = !!rq->jwe;
	size_t cap = rq->jwe ? 1 : 0;

	memset(out, 0, sizeof(*out));
	out->initramfs_command = initramfs_command();
	for (size_t i = 0; !rq->jwe && i < rq->nentries; i++) {
		cap += !rq->entries[i].bad && rq->entries[i].key_kind == OPALTAB_KEY_CLEVIS;
		want_image |= !rq->entries[i].bad && rq->entries[i].key_kind == OPALTAB_KEY_CLEVIS &&
			      !rq->entries[i].noauto;
	}
	out->slots = calloc(cap ? cap : 1, sizeof(*out->slots));
	if (!out->slots)
		return -ENOMEM;
	if (rq->initramfs)
		snprintf(out->image, sizeof(out->image), "%s", rq->initramfs);
	else
		default_initramfs(out->image, sizeof(out->image));
	if (want_image) {
		if (access(out->image, R_OK))
			snprintf(out->why, sizeof(out->why), "cannot read %s: %s", out->image,
				 strerror(errno));
		else
			out->checked = !initramfs_unpack(out->image, dir, sizeof(dir), out->why,
							 sizeof(out->why));
	} else {
		snprintf(out->why, sizeof(out->why), "no entry the initramfs unlocks");
	}
	if (want_image && !out->checked && rq->initramfs) {
		/* Asked for explicitly: not checking it is a failure, not a note. */
		snprintf(out->error, sizeof(out->error), "--initramfs %s: %s", out->image, out->why);
		return -EINVAL;
	}
	if (rq->jwe)
		out->needs_attention += report_one(&t, rq->jwe, NULL, out->checked ? dir : NULL,
						   &out->slots[out->n++]);
	for (size_t i = 0; !rq->jwe && i < rq->nentries; i++) {
		const struct opaltab_entry *e = &rq->entries[i];
		struct nbde_report_slot *o;

		if (e->bad) {
			nbde_say(&rq->log, NBDE_LOG_WARNING, "%s: entry '%s' is bad: %s", rq->table,
				 e->name, e->error);
			continue;
		}
		if (e->key_kind != OPALTAB_KEY_CLEVIS)
			continue;
		o = &out->slots[out->n++];
		o->from_table = true;
		o->noauto = e->noauto;
		out->needs_attention += report_one(&t, e->key_path, e, out->checked ? dir : NULL, o);
	}
	if (dir[0])
		nftw(dir, remove_cb, 16, FTW_DEPTH | FTW_PHYS);
	return 0;
}

void nbde_report_free(struct nbde_report *r)
{
	for (size_t i = 0; r->slots && i < r->n; i++)
		info_free(&r->slots[i].s);
	free(r->slots);
	r->slots = NULL;
	r->n = 0;
}

/* ------------------------------------------------------------- regen */

/*
 * A signing key of the server that the slot trusts, and that vouches for
 * its current keys: the advertisement it signs verifies with it. Then
 * b->new_thp is a current signing key's thumbprint, for clevis encrypt.
 * 0; -EHOSTUNREACH (said in why) when the server does not answer;
 * -ENOKEY when it has none of the keys trusted.
 */
static int branch_trust(const struct trust *t, struct branch *b, char *why, size_t wl)
{
	json_object *bound = jobj(b->bound_keys, "keys");
	json_object *jws = NULL, *cur = NULL;
	char thp[TANG_THP_MAX], fwhy[300];
	int rc;

	/* A thumbprint given: a current signing key that signed its advertisement. */
	for (size_t i = 0; i < t->nthps; i++) {
		json_object *signer;

		rc = tang_fetch_adv(b->url, t->thps[i], TANG_TIMEOUT_S, &jws, fwhy, sizeof(fwhy));
		if (rc == -EHOSTUNREACH || rc == -EBADMSG) {
			snprintf(why, wl, "%s", fwhy);
			return -EHOSTUNREACH;
		}
		if (rc)
			continue;
		cur = tang_adv_keys(jws);
		signer = cur ? tang_keys_find(cur, "verify", t->thps[i]) : NULL;
		if (signer && !tang_jws_verify(jws, signer)) {
			snprintf(b->new_thp, sizeof(b->new_thp), "%s", t->thps[i]);
			goto found;
		}
		json_object_put(cur);
		json_object_put(jws);
		cur = jws = NULL;
	}
	/* The keys it was bound with, rotated or not. */
	for (size_t i = 0; bound && i < json_object_array_length(bound); i++) {
		json_object *k = json_object_array_get_idx(bound, i);
		json_object *keys;

		if (!tang_jwk_has_op(k, "verify") || tang_jwk_thumbprint(k, "S256", thp, sizeof(thp)))
			continue;
		rc = tang_fetch_adv(b->url, thp, TANG_TIMEOUT_S, &jws, fwhy, sizeof(fwhy));
		if (rc == -EHOSTUNREACH || rc == -EBADMSG) {
			snprintf(why, wl, "%s", fwhy);
			return -EHOSTUNREACH;
		}
		if (rc)
			continue;
		if (tang_jws_verify(jws, k)) {
			json_object_put(jws);
			snprintf(why, wl, "%s: the advertisement served for trusted key %s does not verify with it: refusing to trust it",
				 b->url, thp);
			return -EBADMSG;
		}
		keys = tang_adv_keys(jws);
		/* Any current signing key: clevis checks it signed what it fetches. */
		for (size_t j = 0; keys && j < json_object_array_length(jobj(keys, "keys")); j++) {
			json_object *nk = json_object_array_get_idx(jobj(keys, "keys"), j);

			if (tang_jwk_has_op(nk, "verify") &&
			    !tang_jwk_thumbprint(nk, "S256", b->new_thp, sizeof(b->new_thp))) {
				cur = keys;
				goto found;
			}
		}
		json_object_put(keys);
		json_object_put(jws);
		jws = NULL;
	}
	snprintf(why, wl, "%s has none of the signing keys this slot trusted any more%s: check its current signing key on the server (tang-show-keys, or jose jwk thp -i KEY.jwk) and give it with --thp",
		 b->url, t->nthps ? ", nor one given with --thp" : "");
	return -ENOKEY;
found:
	b->state = tang_keys_find(cur, "deriveKey", b->kid) ? NBDE_KEY_CURRENT : NBDE_KEY_ROTATED;
	json_object_put(cur);
	json_object_put(jws);
	return 0;
}

/* The configuration that seals for the same servers, as clevis encrypt takes it. */
static json_object *regen_config(const struct sealed *s)
{
	json_object *tangs = json_object_new_array();

	for (size_t i = 0; i < s->nb; i++) {
		json_object *t = json_object_new_object();

		json_object_object_add(t, "url", json_object_new_string(s->b[i].url));
		json_object_object_add(t, "thp", json_object_new_string(s->b[i].new_thp));
		json_object_array_add(tangs, t);
	}
	if (!strcmp(s->pin, "tang")) {
		json_object *one = json_object_get(json_object_array_get_idx(tangs, 0));

		json_object_put(tangs);
		return one;
	}
	{
		json_object *cfg = json_object_new_object(), *pins = json_object_new_object();

		json_object_object_add(cfg, "t", json_object_new_int(s->threshold));
		json_object_object_add(pins, "tang", tangs);
		/* The order of the branches does not matter to clevis. */
		if (s->ntpm == 1) {
			json_object_object_add(pins, "tpm2", json_object_get(s->tpm[0].cfg));
		} else if (s->ntpm) {
			json_object *tpms = json_object_new_array();

			for (size_t i = 0; i < s->ntpm; i++)
				json_object_array_add(tpms, json_object_get(s->tpm[i].cfg));
			json_object_object_add(pins, "tpm2", tpms);
		}
		json_object_object_add(cfg, "pins", pins);
		return cfg;
	}
}

static int fsync_dir(const char *path)
{
	char dir[PATH_MAX];
	char *slash;
	int fd, rc;

	snprintf(dir, sizeof(dir), "%s", path);
	slash = strrchr(dir, '/');
	if (slash == dir)
		slash[1] = 0;
	else if (slash)
		*slash = 0;
	else
		snprintf(dir, sizeof(dir), ".");
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	rc = fsync(fd) ? -errno : 0;
	close(fd);
	return rc;
}

/* An entry's failure, said in o (error); returns status (not OK). */
static int regen_failed(struct nbde_regen_entry *o, enum nbde_regen_status status,
			const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int regen_failed(struct nbde_regen_entry *o, enum nbde_regen_status status,
			const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(o->error, sizeof(o->error), fmt, ap);
	va_end(ap);
	o->status = status;
	o->regenerated = false;
	return (int)status;
}

#define GONE_FMT "%s: clevis decrypt cannot open it: the server keys it was sealed with are gone (deleted after a rotation). Its PIN is lost: bind a new slot with the Admin1 key (opalctl bind DEV --keyfile ADMIN1 --range N --pin %s --config ...), put the new JWE in the table, then opalctl unbind the old slot"

/* How long clevis may take on a sealed key: each server, each TPM branch. */
static unsigned int clevis_timeout(const struct sealed *s)
{
	return TANG_TIMEOUT_S * (unsigned int)s->nb + TPM_TIMEOUT_S * (unsigned int)s->ntpm;
}

/* Whether the JWE file still opens (its PIN is not kept). */
static bool opens(const char *path, const struct sealed *s)
{
	struct secret *pin = secret_new();
	char why[400];
	bool ok = pin && !clevis_decrypt(path, clevis_timeout(s), pin, why, sizeof(why));

	secret_free(pin);
	return ok;
}

/*
 * Whether a tpm2 branch does not open on this machine (no TPM, another
 * one, or PCRs changed), said in why: then the slot did not open for
 * that, not because its server keys are gone. A share opened is not kept.
 */
static bool tpm2_closed(const struct sealed *s, char *why, size_t wl)
{
	for (size_t i = 0; i < s->ntpm; i++) {
		struct secret *share = secret_new();
		int rc = !share ? -ENOMEM :
			 clevis_decrypt_text(s->tpm[i].jwe, strlen(s->tpm[i].jwe), TPM_TIMEOUT_S, share,
					     why, wl);

		secret_free(share);
		if (rc)
			return true;
	}
	return false;
}

/* What to add to a clevis failure when the slot has tpm2 branches. */
static const char *tpm2_hint(const struct sealed *s)
{
	return s->ntpm ? ": the tpm2 branch needs this machine's TPM" : "";
}

/* How many tang branches of an sss JWE open one by one (shares not kept). */
static size_t tang_open(const struct sealed *s)
{
	size_t n = 0;

	for (size_t i = 0; i < s->nb; i++) {
		struct secret *share = secret_new();
		char why[400];

		n += share && s->b[i].jwe &&
		     !clevis_decrypt_text(s->b[i].jwe, strlen(s->b[i].jwe), TANG_TIMEOUT_S, share, why,
					  sizeof(why));
		secret_free(share);
	}
	return n;
}

/*
 * The JWE did not open: its PIN is lost (the server keys are gone), or,
 * with a tpm2 branch that does not open here, not lost but needing the
 * machine whose TPM sealed it. When every tpm2 branch and enough tang
 * branches open one by one, it was a passing failure (a busy TPM): not
 * lost either. Returns the status (said in o).
 */
static int regen_unopened(struct nbde_regen_entry *o, const struct sealed *s, const char *path,
			  const char *dwhy)
{
	char why[400];

	if (!s->ntpm)
		return regen_failed(o, NBDE_REGEN_LOST, GONE_FMT, path, s->pin);
	if (tpm2_closed(s, why, sizeof(why)))
		return regen_failed(o, NBDE_REGEN_CLEVIS, "%s: cannot open it: its tpm2 branch does not open here (%s), so the threshold (%d of %zu) is not met%s (the one it was sealed with, its PCRs as they were then); nothing replaced",
				    path, why, s->threshold, s->nb + s->ntpm, tpm2_hint(s));
	if (tang_open(s) + s->ntpm >= (size_t)s->threshold)
		return regen_failed(o, NBDE_REGEN_CLEVIS, "%s: clevis decrypt failed (%s), though enough of its branches open one by one: try again; nothing replaced",
				    path, dwhy);
	return regen_failed(o, NBDE_REGEN_LOST, GONE_FMT, path, s->pin);
}

/*
 * The tpm2 branches sealed again, for the result: with pcr_ids, the new
 * seal holds the values those PCRs have now, not the ones of bind time
 * (as clevis luks regen): a boot that measures differently no longer
 * opens that branch.
 */
static void regen_tpm2_said(const struct sealed *s, struct nbde_regen_entry *o)
{
	for (size_t i = 0; i < s->ntpm; i++) {
		struct nbde_regen_tpm2 *t = &o->tpm2[o->ntpm2++];
		json_object *ids = jobj(s->tpm[i].cfg, "pcr_ids");
		const char *bank = jstr(s->tpm[i].cfg, "pcr_bank");

		t->sealed_to_current_pcrs = ids != NULL;
		if (!ids)
			continue;
		snprintf(t->pcr_bank, sizeof(t->pcr_bank), "%s", bank ? bank : "sha1");
		snprintf(t->pcr_ids, sizeof(t->pcr_ids), "%s", json_object_get_string(ids));
	}
}

/* Seal again the PIN of one JWE file; 0 or the status (said in o). */
static int regen_one(const struct nbde_regen_rq *rq, const struct trust *t, const char *path,
		     const char *name, struct nbde_regen_entry *o)
{
	struct secret *pin = NULL, *check = NULL;
	json_object *cfg = NULL;
	char why[600], tmp[PATH_MAX + 8], old[PATH_MAX + 8];
	const char *cfg_text;
	struct sealed s;
	bool all_current = true;
	int rc = 0, fd;

	snprintf(tmp, sizeof(tmp), "%s.new", path);
	snprintf(old, sizeof(old), "%s.old", path);
	o->s.name = name;
	o->s.jwe = path;
	if (sealed_parse(path, &s, why, sizeof(why))) {
		rc = regen_failed(o, NBDE_REGEN_BAD_JWE, "%s", why);
		goto out;
	}
	info_parsed(&o->s, &s);
	if (s.other[0] && !s.nb) {
		o->skipped = "no server keys: nothing to rotate";
		goto out;
	}
	if (s.keep[0]) {
		rc = regen_failed(o, NBDE_REGEN_UNSUPPORTED, "%s: regen seals tang and tpm2 branches again, and this sss slot also has %s, which it would have to drop or re-create: bind a new slot with the Admin1 key instead",
				  path, s.keep);
		goto out;
	}
	/* Every server first: one that does not answer stops it, nothing replaced. */
	for (size_t i = 0; i < s.nb; i++) {
		struct branch *b = &s.b[i];

		rc = branch_trust(t, b, why, sizeof(why));
		if (rc == -ENOKEY && !opens(path, &s))
			b->state = NBDE_KEY_GONE;
		else if (rc)
			b->state = rc == -EHOSTUNREACH ? NBDE_KEY_UNREACHABLE : NBDE_KEY_UNTRUSTED;
		b->why[0] = 0;
		if (server_said(&o->s, b)) {
			rc = regen_failed(o, NBDE_REGEN_FILE, "out of memory");
			goto out;
		}
		if (rc == -ENOKEY && b->state == NBDE_KEY_GONE) {
			rc = regen_unopened(o, &s, path, "see its message above");
			goto out;
		}
		if (rc) {
			rc = regen_failed(o, NBDE_REGEN_CLEVIS, "%s: %s; nothing replaced%s", path, why,
					  rc == -EHOSTUNREACH && s.nb > 1 ?
					  " (every server of the slot must answer: a branch is never dropped)" : "");
			goto out;
		}
		all_current &= b->state == NBDE_KEY_CURRENT;
	}
	if (all_current) {
		o->skipped = "every key it uses is current";
		goto old;
	}
	cfg = regen_config(&s);
	cfg_text = json_object_to_json_string_ext(cfg, JSON_C_TO_STRING_PLAIN |
						       JSON_C_TO_STRING_NOSLASHESCAPE);
	pin = secret_new();
	check = secret_new();
	if (!pin || !check) {
		rc = regen_failed(o, NBDE_REGEN_FILE, "no locked memory for the key");
		goto out;
	}
	if (clevis_decrypt(path, clevis_timeout(&s), pin, why, sizeof(why))) {
		rc = regen_unopened(o, &s, path, why);
		goto out;
	}
	unlink(tmp);	/* a run that was killed */
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		rc = regen_failed(o, NBDE_REGEN_FILE, "cannot create %s: %s", tmp, strerror(errno));
		goto out;
	}
	nbde_say(&rq->log, NBDE_LOG_DETAIL, "regen: clevis encrypt %s '%s'", s.pin, cfg_text);
	rc = clevis_encrypt(s.pin, cfg_text, pin, fd, clevis_timeout(&s));
	if (!rc && fsync(fd))
		rc = -errno;
	close(fd);
	if (rc) {
		unlink(tmp);
		rc = regen_failed(o, NBDE_REGEN_CLEVIS, "%s: clevis encrypt %s failed (%s)%s; nothing replaced",
				  path, s.pin, rc < 0 ? strerror(-rc) : "see its message above",
				  tpm2_hint(&s));
		goto out;
	}
	/* The new JWE must open, to the same PIN, before it replaces anything. */
	why[0] = 0;
	if (clevis_decrypt(tmp, clevis_timeout(&s), check, why, sizeof(why)) ||
	    check->len != pin->len || CRYPTO_memcmp(check->data, pin->data, pin->len)) {
		unlink(tmp);
		rc = regen_failed(o, NBDE_REGEN_CLEVIS, "%s: the new JWE does not open to the same key (%s)%s; nothing replaced",
				  path, why[0] ? why : "a different key", tpm2_hint(&s));
		goto out;
	}
	unlink(old);
	if (!rq->remove_old && link(path, old)) {
		unlink(tmp);
		rc = regen_failed(o, NBDE_REGEN_FILE, "cannot keep the old JWE as %s: %s; nothing replaced",
				  old, strerror(errno));
		goto out;
	}
	if (rename(tmp, path)) {
		rc = regen_failed(o, NBDE_REGEN_FILE, "cannot rename %s to %s: %s; the old JWE is unchanged",
				  tmp, path, strerror(errno));
		unlink(tmp);
		goto out;
	}
	if (fsync_dir(path))
		nbde_say(&rq->log, NBDE_LOG_WARNING, "regen: %s: syncing its directory failed: %s", path,
			 strerror(errno));
	o->regenerated = true;
	o->config = strdup(cfg_text);
	regen_tpm2_said(&s, o);
old:
	o->old_said = true;
	if (rq->remove_old && !unlink(old))
		snprintf(o->old_removed, sizeof(o->old_removed), "%s", old);
	if (!rq->remove_old && !access(old, F_OK))
		snprintf(o->old, sizeof(o->old), "%s", old);
out:
	json_object_put(cfg);
	secret_free(pin);
	secret_free(check);
	sealed_free(&s);
	return rc;
}

/*
 * After a boot: FILE.old of an entry goes when this boot unlocked the
 * entry with the JWE that is FILE now (unlock-all's record in
 * DIR/NAME: key=clevis and the JWE's SHA-256). Seals nothing.
 */
static void regen_cleanup(const char *state_dir, const struct opaltab_entry *e,
			  struct nbde_regen_entry *o)
{
	char old[PATH_MAX + 8], rec[PATH_MAX + 80], line[512], now[65], used[65] = "";
	bool clevis = false;
	FILE *f;

	o->s.name = e->name;
	o->s.jwe = e->key_path;
	o->old_said = true;
	snprintf(old, sizeof(old), "%s.old", e->key_path);
	if (access(old, F_OK)) {
		o->skipped = "no FILE.old";
		return;
	}
	snprintf(rec, sizeof(rec), "%s/%s", state_dir, e->name);
	f = strchr(e->name, '/') ? NULL : fopen(rec, "r");
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (!strcmp(line, "key=clevis"))
			clevis = true;
		else if (!strncmp(line, "jwe_sha256=", 11))
			snprintf(used, sizeof(used), "%.64s", line + 11);
	}
	if (f)
		fclose(f);
	if (clevis && used[0] && !file_sha256_hex(e->key_path, now) && !strcmp(now, used) &&
	    !unlink(old)) {
		snprintf(o->old_removed, sizeof(o->old_removed), "%s", old);
		return;
	}
	o->skipped = "this boot did not unlock it with the JWE regen made: FILE.old kept";
	snprintf(o->old, sizeof(o->old), "%s", old);
}

/* Whether rq asks for entry e. */
static bool regen_named(const struct nbde_regen_rq *rq, const struct opaltab_entry *e)
{
	for (size_t k = 0; k < rq->nnames; k++)
		if (!strcmp(rq->names[k], e->name))
			return true;
	return !rq->nnames;
}

int nbde_regen(const struct nbde_regen_rq *rq, struct nbde_regen_result *out)
{
	const struct trust t = { rq->thps, rq->nthps };
	bool in_image = false;
	size_t cap = rq->jwe ? 1 : rq->nentries;

	memset(out, 0, sizeof(*out));
	out->entries = calloc(cap ? cap : 1, sizeof(*out->entries));
	if (!out->entries)
		return -ENOMEM;
	if (rq->jwe) {
		struct nbde_regen_entry *o = &out->entries[out->n++];

		out->failed += regen_one(rq, &t, rq->jwe, NULL, o) != 0;
		out->regenerated += o->regenerated;
		in_image |= o->regenerated;
		if (rq->entry_done)
			rq->entry_done(rq->done_arg, o);
	}
	for (size_t i = 0; !rq->jwe && i < rq->nentries; i++) {
		const struct opaltab_entry *e = &rq->entries[i];
		struct nbde_regen_entry *o;

		if (e->bad) {
			nbde_say(&rq->log, NBDE_LOG_WARNING, "%s: entry '%s' is bad: %s", rq->table,
				 e->name, e->error);
			continue;
		}
		if (e->key_kind != OPALTAB_KEY_CLEVIS || !regen_named(rq, e))
			continue;
		o = &out->entries[out->n++];
		if (rq->state_dir) {
			regen_cleanup(rq->state_dir, e, o);
		} else {
			out->failed += regen_one(rq, &t, e->key_path, e->name, o) != 0;
			out->regenerated += o->regenerated;
			in_image |= o->regenerated && !e->noauto;
		}
		if (rq->entry_done)
			rq->entry_done(rq->done_arg, o);
	}
	/* The initramfs holds a copy of each JWE it unlocks with. */
	out->initramfs_command = in_image ? initramfs_command() : NULL;
	return out->failed ? 1 : 0;
}

void nbde_regen_free(struct nbde_regen_result *r)
{
	for (size_t i = 0; r->entries && i < r->n; i++) {
		info_free(&r->entries[i].s);
		free(r->entries[i].config);
	}
	free(r->entries);
	r->entries = NULL;
	r->n = 0;
}
