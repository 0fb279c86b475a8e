// SPDX-License-Identifier: GPL-2.0-only
/*
 * opalctl: manage TCG Opal self-encrypting drives from the OS.
 * Thin: parse arguments, call lib/opal (or the kernel's sed-opal ioctls),
 * fill the command's result and print it as human text or JSON.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <json-c/json.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include "opal.h"
#include "opal-drive-id.h"
#include "opal-lock.h"
#include "opal-provision.h"
#include "opalctl-cmd.h"

#define KEYGEN_BYTES 32
/*
 * keygen --passphrase: 25 symbols of Crockford's base32 (digits and
 * lowercase letters without i, l, o, u: nothing to misread), 5 bits each,
 * 125 bits in all, in groups of 5 joined by '-': 29 bytes, within the 32
 * an Opal PIN may have, typed as written.
 */
#define PASSPHRASE_SYMBOLS 25
#define PASSPHRASE_GROUP 5
#define PASSPHRASE_LEN (PASSPHRASE_SYMBOLS + PASSPHRASE_SYMBOLS / PASSPHRASE_GROUP - 1)
static const char passphrase_alphabet[] = "0123456789abcdefghjkmnpqrstvwxyz";

/* The result of the command that ran: JSON with --json, else its text form. */
void emit_result(struct ctx *c)
{
	if (c->json)
		fprintf(c->out, "%s\n",
			json_object_to_json_string_ext(c->jout, JSON_C_TO_STRING_PRETTY |
						       JSON_C_TO_STRING_NOSLASHESCAPE));
	else if (c->command->text)
		c->command->text(c, c->jout);
	c->rendered = true;
}

/*
 * A command that failed: in text mode, what its result holds so far, for
 * the commands whose partial result is useful. Once, and before the error
 * message, so that a terminal shows them in the order they happened.
 */
void emit_partial(struct ctx *c)
{
	if (c->json || c->rendered || !c->command || !c->command->text ||
	    !(c->command->flags & CMD_TEXT_ON_FAIL))
		return;
	c->command->text(c, c->jout);
	c->rendered = true;
}

int fail(struct ctx *c, int code, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	emit_partial(c);
	fprintf(c->err, "opalctl: %s\n", msg);
	/* --json: the error object takes the result's place on stdout. */
	if (c->json) {
		json_object *j = json_object_new_object();

		json_object_object_add(j, "error", json_object_new_string(msg));
		json_object_object_add(j, "exit_code", json_object_new_int(code));
		json_object_object_add(j, "command", c->cmd ? json_object_new_string(c->cmd) : NULL);
		json_object_object_add(j, "device", c->devpath && c->command &&
				       (c->command->flags & CMD_NEEDS_DEV) ?
				       json_object_new_string(c->devpath) : NULL);
		fprintf(c->out, "%s\n", json_object_to_json_string_ext(j, JSON_C_TO_STRING_PRETTY |
									JSON_C_TO_STRING_NOSLASHESCAPE));
		json_object_put(j);
	}
	return code;
}

void warn(struct ctx *c, const char *fmt, ...)
{
	va_list ap;

	fputs("opalctl: warning: ", c->err);
	va_start(ap, fmt);
	vfprintf(c->err, fmt, ap);
	va_end(ap);
	fputc('\n', c->err);
}

int exit_for(int rc)
{
	switch (rc) {
	case 0: return EXIT_OK;
	case OPAL_ST_NOT_AUTHORIZED:
	case OPAL_ERR_AUTH: return EXIT_AUTH;
	case OPAL_ST_AUTHORITY_LOCKED_OUT: return EXIT_LOCKED_OUT;
	case OPAL_ERR_TRANSPORT: return EXIT_DEVICE;
	case OPAL_ERR_TIMEOUT: return EXIT_TIMEOUT;
	case OPAL_ERR_PROTOCOL: return EXIT_PROTOCOL;
	case OPAL_ERR_UNSUPPORTED:
	case OPAL_ERR_NOT_OPAL: return EXIT_UNSUPPORTED;
	case OPAL_ERR_INVAL: return EXIT_USAGE;
	default: return EXIT_DRIVE;
	}
}

static const char *hint_for(int rc)
{
	switch (rc) {
	case OPAL_ST_NOT_AUTHORIZED: return "check the key file (and --hash), and that this authority may do it (`opalctl access`); each wrong key uses up one of the authority's tries";
	case OPAL_ERR_AUTH: return "check the key file (and --hash) and that the authority is enabled; each wrong key uses up one of the authority's tries";
	case OPAL_ST_AUTHORITY_LOCKED_OUT: return "power-cycle the drive, then retry with the right key";
	case OPAL_ERR_TRANSPORT: return "check the device path and permissions (root?)";
	case OPAL_ERR_TIMEOUT: return "check the drive and its connection, then retry";
	case OPAL_ERR_PROTOCOL: return "the drive's firmware answered out of spec; try --transport";
	case OPAL_ERR_NOT_OPAL: return "this drive cannot be managed by opalctl";
	case OPAL_ERR_TOO_LARGE: return "the drive's buffers are smaller than the call: see its MaxComPacketSize in `opalctl discover`";
	case OPAL_ERR_UNSUPPORTED: return "the kernel has no sed-opal for this disk or the drive lacks the feature: try --transport nvme or scsi";
	case OPAL_ST_SP_DISABLED:
	case OPAL_ST_INVALID_PARAMETER: return "run `opalctl status` to check the drive's state";
	default: return "run `opalctl status` and check the drive";
	}
}

int fail_opal(struct ctx *c, const char *what, int rc, const opal_uid *sp,
		     const opal_uid *cpin)
{
	char tries[96] = "";

	/*
	 * Our protocol code tells a refused key (OPAL_ERR_AUTH) from a right
	 * the authority lacks (NOT_AUTHORIZED after it signed in); the kernel's
	 * ioctls give NOT_AUTHORIZED for both.
	 */
	if (rc == OPAL_ST_NOT_AUTHORIZED && c->dev && strcmp(c->dev->be.ops->name, "kernel"))
		return fail(c, EXIT_DENIED, "%s: not authorized: the key was accepted, but this authority may not do it (`opalctl access` shows who may lock and unlock each range; `opalctl grant` gives a user a range); no try was used",
			    what);

	if ((rc == OPAL_ST_NOT_AUTHORIZED || rc == OPAL_ERR_AUTH) && sp && cpin && c->dev->opal) {
		uint64_t left, limit;

		if (!opal_tries_left(c->dev->opal, sp, cpin, &left, &limit) && limit)
			snprintf(tries, sizeof(tries), " (%" PRIu64 " of %" PRIu64 " tries left)",
				 left < limit ? limit - left : 0, limit);

	}
	if (rc == OPAL_ERR_TRANSPORT && c->dev->opal && opal_dev_errno(c->dev->opal))
		return fail(c, exit_for(rc), "%s: %s: %s: %s", what, opal_strerror(rc),
			    strerror(opal_dev_errno(c->dev->opal)), hint_for(rc));
	return fail(c, exit_for(rc), "%s: %s%s: %s", what, opal_strerror(rc), tries, hint_for(rc));
}

/* ------------------------------------------------------------------ keys */

/*
 * A key file others can read is a key others have: refuse it unless the
 * user insists. Only regular files: pipes, terminals and stdin pass.
 */
int keyfile_mode_ok(struct ctx *c, const char *path)
{
	struct stat st;

	if (!strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode) ||
	    !(st.st_mode & (S_IRWXG | S_IRWXO)) || c->insecure_keyfile)
		return 0;
	return fail(c, EXIT_KEYFILE, "key file %s can be read or written by group or others (mode %04o): `chmod 600 %s`, or add --insecure-keyfile",
		    path, (unsigned)(st.st_mode & 07777), path);
}

/* Read a key file into an mlock'ed PIN, hashing it like sedutil if asked. */
static int load_key_text(struct ctx *c, const char *path, bool text, struct secret **out)
{
	struct secret *raw = secret_new(), *pin;
	int rc;

	*out = NULL;
	if (!raw)
		return fail(c, EXIT_KEYFILE, "cannot allocate locked memory for the key: raise RLIMIT_MEMLOCK");
	if (!raw->locked && !c->warned_mlock) {
		warn(c, "the key's memory is not locked (mlock: raise RLIMIT_MEMLOCK): it could be swapped out");
		c->warned_mlock = true;
	}
	rc = keyfile_mode_ok(c, path);
	if (rc) {
		secret_free(raw);
		return rc;
	}
	if (!strcmp(path, "-") && isatty(fileno(c->in))) {
		/* Typed at a terminal: no echo, and a typed key is text. */
		rc = secret_read_line(raw, fileno(c->in), "Key", 300000);
		text = true;
	} else {
		rc = secret_read(raw, path, c->in);
	}
	if (rc) {
		secret_free(raw);
		if (rc == -ENODATA)
			return fail(c, EXIT_KEYFILE, "key file %s is empty: write the key into it (see `opalctl keygen`)", path);
		if (rc == -EFBIG)
			return fail(c, EXIT_KEYFILE, "key file %s is too large: a PIN is at most %d bytes", path, OPAL_PIN_MAX);
		return fail(c, EXIT_KEYFILE, "cannot read key file %s: %s: check the path and permissions",
			    path, strerror(-rc));
	}
	/* Text keys (sedutil passwords, PSIDs) lose one trailing newline. */
	if (text || c->sedutil) {
		if (raw->len && raw->data[raw->len - 1] == '\n')
			raw->len--;
		if (raw->len && raw->data[raw->len - 1] == '\r')
			raw->len--;
	}
	if (!c->sedutil) {
		if (raw->len > OPAL_PIN_MAX) {
			secret_free(raw);
			return fail(c, EXIT_KEYFILE, "key file %s holds more than %d bytes, and an Opal PIN is at most %d bytes (the C_PIN column's size): use a shorter key, or --hash sedutil for a password",
				    path, OPAL_PIN_MAX, OPAL_PIN_MAX);
		}
		*out = raw;
		return 0;
	}
	/* sedutil sends an empty password as an empty PIN, unhashed. */
	if (!raw->len) {
		*out = raw;
		return 0;
	}
	pin = secret_new();
	if (!pin) {
		secret_free(raw);
		return fail(c, EXIT_KEYFILE, "cannot allocate locked memory for the key: raise RLIMIT_MEMLOCK");
	}
	rc = c->dev->opal ? opal_dev_serial(c->dev->opal, c->serial) : OPAL_ERR_UNSUPPORTED;
	if (!rc)
		rc = c->sedutil512 ? opal_hash_sedutil512(raw->data, raw->len, c->serial, pin->data) :
		     opal_hash_sedutil(raw->data, raw->len, c->serial, pin->data);
	secret_free(raw);
	if (rc) {
		secret_free(pin);
		return fail(c, EXIT_UNSUPPORTED, "--hash sedutil needs the drive's serial number: %s: use the transport of the drive (nvme/scsi)",
			    opal_strerror(rc));
	}
	pin->len = 32;
	*out = pin;
	return 0;
}

int load_key(struct ctx *c, const char *path, struct secret **out)
{
	return load_key_text(c, path, false, out);
}

struct opal_key key_of(const struct secret *s)
{
	return (struct opal_key){ s->data, s->len };
}

/* ------------------------------------------------------------ commands */

json_object *jbool(bool v)
{
	return json_object_new_boolean(v);
}

json_object *res_get(json_object *res, const char *key)
{
	json_object *v = NULL;

	return res && json_object_object_get_ex(res, key, &v) ? v : NULL;
}

const char *res_str(json_object *res, const char *key)
{
	json_object *v = res_get(res, key);

	return v ? json_object_get_string(v) : "";
}

int64_t res_int(json_object *res, const char *key)
{
	return json_object_get_int64(res_get(res, key));
}

bool res_bool(json_object *res, const char *key)
{
	return json_object_get_boolean(res_get(res, key));
}

size_t res_count(json_object *arr)
{
	return json_object_is_type(arr, json_type_array) ? json_object_array_length(arr) : 0;
}

static const char *yes_no(bool v)
{
	return v ? "yes" : "no";
}

static void discovery_json(json_object *j, const struct opal_discovery *d)
{
	const char *ssc = opal_discovery_ssc(d);
	json_object *feat = json_object_new_array();

	json_object_object_add(j, "ssc", ssc ? json_object_new_string(ssc) : NULL);
#define FEAT(flag, name) if (d->flag) json_object_array_add(feat, json_object_new_string(name))
	FEAT(tper, "TPer");
	FEAT(locking, "Locking");
	FEAT(geometry, "Geometry");
	FEAT(enterprise, "Enterprise");
	FEAT(opal1, "Opal 1");
	FEAT(opal2, "Opal 2");
	FEAT(sum, "Single User Mode");
	FEAT(datastore, "DataStore");
	FEAT(opalite, "Opalite");
	FEAT(pyrite1, "Pyrite 1");
	FEAT(pyrite2, "Pyrite 2");
	FEAT(ruby, "Ruby");
	FEAT(block_sid, "Block SID");
#undef FEAT
	json_object_object_add(j, "features", feat);
	json_object_object_add(j, "locking_supported", jbool(d->locking_flags & OPAL_LF_SUPPORTED));
	json_object_object_add(j, "locking_enabled", jbool(d->locking_flags & OPAL_LF_ENABLED));
	json_object_object_add(j, "locked", jbool(d->locking_flags & OPAL_LF_LOCKED));
	json_object_object_add(j, "media_encryption", jbool(d->locking_flags & OPAL_LF_MEDIA_ENCRYPTION));
	json_object_object_add(j, "mbr_enabled", jbool(d->locking_flags & OPAL_LF_MBR_ENABLED));
	json_object_object_add(j, "mbr_done", jbool(d->locking_flags & OPAL_LF_MBR_DONE));
	/* Locking feature version 3: ranges may also lock at a hardware reset. */
	json_object_object_add(j, "lock_on_reset_hardware", jbool(d->lock_on_reset_hw));
	json_object_object_add(j, "base_comid", json_object_new_int(d->base_comid));
	json_object_object_add(j, "num_comids", json_object_new_int(d->num_comids));
	json_object_object_add(j, "admin_authorities", json_object_new_int(d->admin_auths));
	json_object_object_add(j, "user_authorities", json_object_new_int(d->user_auths));
	json_object_object_add(j, "logical_block_size", json_object_new_int64(d->logical_block_size));
	json_object_object_add(j, "alignment_granularity", json_object_new_int64((int64_t)d->alignment_granularity));
	json_object_object_add(j, "lowest_aligned_lba", json_object_new_int64((int64_t)d->lowest_aligned_lba));
	if (d->datastore) {
		json_object_object_add(j, "datastore_max_tables", json_object_new_int(d->ds_max_tables));
		json_object_object_add(j, "datastore_max_size", json_object_new_int64(d->ds_max_size));
	}
}

/* The feature named in res's "features" (as discovery_json names them). */
static bool has_feature(json_object *res, const char *name)
{
	json_object *feat = res_get(res, "features");

	for (size_t i = 0; i < res_count(feat); i++)
		if (!strcmp(json_object_get_string(json_object_array_get_idx(feat, i)), name))
			return true;
	return false;
}

/* What discovery_json put into res, as text: "Opal 2" is shown as Opal2. */
static void discovery_text(FILE *o, json_object *res)
{
	json_object *feat = res_get(res, "features");
	const char *ssc = res_get(res, "ssc") ? res_str(res, "ssc") : "none";

	fprintf(o, "SSC:              %s\n", ssc);
	fprintf(o, "features:        ");
	for (size_t i = 0; i < res_count(feat); i++) {
		fputc(' ', o);
		for (const char *p = json_object_get_string(json_object_array_get_idx(feat, i)); *p; p++)
			if (*p != ' ')
				fputc(*p, o);
	}
	fprintf(o, "\n");
	fprintf(o, "locking:          supported=%s enabled=%s locked=%s media-encryption=%s\n",
		yes_no(res_bool(res, "locking_supported")), yes_no(res_bool(res, "locking_enabled")),
		yes_no(res_bool(res, "locked")), yes_no(res_bool(res, "media_encryption")));
	fprintf(o, "shadow MBR:       enabled=%s done=%s\n", yes_no(res_bool(res, "mbr_enabled")),
		yes_no(res_bool(res, "mbr_done")));
	fprintf(o, "lock on reset:    power cycle%s\n", res_bool(res, "lock_on_reset_hardware") ?
		", hardware reset (the drive says it supports it)" : " (no hardware reset advertised)");
	fprintf(o, "ComID:            0x%04x (%u)\n", (unsigned)res_int(res, "base_comid"),
		(unsigned)res_int(res, "num_comids"));
	fprintf(o, "authorities:      %u admins, %u users\n", (unsigned)res_int(res, "admin_authorities"),
		(unsigned)res_int(res, "user_authorities"));
	if (has_feature(res, "Geometry"))
		fprintf(o, "geometry:         block %u bytes, alignment %" PRIu64 " blocks from LBA %" PRIu64 "\n",
			(unsigned)res_int(res, "logical_block_size"),
			(uint64_t)res_int(res, "alignment_granularity"),
			(uint64_t)res_int(res, "lowest_aligned_lba"));
	if (res_get(res, "datastore_max_tables"))
		fprintf(o, "DataStore:        %u table(s), %u bytes\n",
			(unsigned)res_int(res, "datastore_max_tables"),
			(unsigned)res_int(res, "datastore_max_size"));
}

/* "device:" as discover and status show it. */
static void device_text(FILE *o, json_object *res)
{
	fprintf(o, "device:           %s (%s)\n", res_str(res, "device"), res_str(res, "transport"));
}

static int need_discovery(struct ctx *c, struct opal_discovery *d)
{
	int rc = c->dev->be.ops->discovery(&c->dev->be, d);

	if (rc == OPAL_ERR_UNSUPPORTED)
		return fail(c, EXIT_UNSUPPORTED, "discovery on %s: not available through %s (Linux 6.5 or later has it): use --transport nvme or scsi",
			    c->devpath, c->dev->transport);
	if (rc)
		return fail_opal(c, "Level 0 Discovery", rc, NULL, NULL);
	return 0;
}

/* { "Name": value, ... } in the TPer's order. */
static json_object *props_json(const struct opal_prop_list *l)
{
	json_object *j = json_object_new_object();

	for (size_t i = 0; i < l->n; i++)
		json_object_object_add(j, l->pair[i].name, json_object_new_uint64(l->pair[i].value));
	return j;
}

static void props_text(FILE *o, const char *title, json_object *props)
{
	fprintf(o, "%s\n", title);
	json_object_object_foreach(props, name, value)
		fprintf(o, "  %-26s %" PRIu64 "\n", name, json_object_get_uint64(value));
}

/*
 * The Session Manager Properties after the Level 0 features. A drive that
 * does not answer them is still discovered: they are reported unavailable.
 */
static void discover_properties(struct ctx *c)
{
	struct opal_props *p = calloc(1, sizeof(*p));
	int rc = OPAL_ERR_UNSUPPORTED;

	if (!p)
		rc = OPAL_ERR_NOMEM;
	else if (c->dev->opal)
		rc = opal_properties(c->dev->opal, NULL, p);
	json_object_object_add(c->jout, "properties", rc ? NULL : props_json(&p->tper));
	json_object_object_add(c->jout, "host_properties",
			       rc || !p->have_host ? NULL : props_json(&p->host));
	if (rc)
		json_object_object_add(c->jout, "properties_error", json_object_new_string(
			c->dev->opal ? opal_strerror(rc) : "not through the kernel's ioctls"));
	free(p);
}

int cmd_discover(struct ctx *c)
{
	struct opal_discovery d;
	int rc = need_discovery(c, &d);

	if (rc)
		return rc;
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "transport", json_object_new_string(c->dev->transport));
	discovery_json(c->jout, &d);
	discover_properties(c);
	return 0;
}

void text_discover(struct ctx *c, json_object *res)
{
	json_object *host = res_get(res, "host_properties");

	device_text(c->out, res);
	discovery_text(c->out, res);
	if (!res_get(res, "properties")) {
		fprintf(c->out, "TPer properties:  unavailable (%s)\n", res_str(res, "properties_error"));
		return;
	}
	props_text(c->out, "TPer properties:", res_get(res, "properties"));
	if (host)
		props_text(c->out, "host properties (as the TPer uses them):", host);
}

/* A LockOnReset set (OPAL_RESET_* bits) by the reset types' names, in order. */
static const char *const reset_type_names[] = { "power-cycle", "hardware-reset", "hotplug",
						 "programmatic" };

static json_object *reset_types_json(uint32_t types)
{
	json_object *a = json_object_new_array();

	for (unsigned t = 0; t < 4; t++)
		if (types & (1u << t))
			json_object_array_add(a, json_object_new_string(reset_type_names[t]));
	return a;
}

/* "power-cycle,hardware-reset", or "none": the names of a JSON list. */
static void reset_types_text(json_object *list, char *out, size_t cap)
{
	size_t l = 0;

	out[0] = 0;
	for (size_t i = 0; i < res_count(list) && l < cap; i++)
		l += (size_t)snprintf(out + l, cap - l, "%s%s", i ? "," : "",
				      json_object_get_string(json_object_array_get_idx(list, i)));
	if (!out[0])
		snprintf(out, cap, "none");
}

/* Every configured range, read in the Admin1 session s, into "ranges". */
static int status_ranges(struct ctx *c, struct opal_session *s)
{
	json_object *jr = json_object_new_array();
	int rc = 0;

	/* In the result before the first read: a failure shows the ranges read. */
	json_object_object_add(c->jout, "ranges", jr);
	for (unsigned n = 0; n <= OPAL_SLOT_RANGES; n++) {
		struct opal_range r;
		json_object *o;

		rc = opal_range_read(s, n, &r);
		if (rc == OPAL_ST_INVALID_PARAMETER && n > 0) {
			rc = 0;
			break;	/* fewer ranges than 8 */
		}
		if (rc)
			return fail_opal(c, "status: reading the locking ranges", rc, NULL, NULL);
		if (n > 0 && !r.length)
			continue;
		o = json_object_new_object();
		json_object_object_add(o, "range", json_object_new_int((int)n));
		json_object_object_add(o, "start", json_object_new_int64((int64_t)r.start));
		json_object_object_add(o, "length", json_object_new_int64((int64_t)r.length));
		json_object_object_add(o, "read_lock_enabled", jbool(r.read_lock_enabled));
		json_object_object_add(o, "write_lock_enabled", jbool(r.write_lock_enabled));
		json_object_object_add(o, "read_locked", jbool(r.read_locked));
		json_object_object_add(o, "write_locked", jbool(r.write_locked));
		json_object_object_add(o, "lock_on_reset", jbool(r.lock_on_reset));
		json_object_object_add(o, "lock_on_reset_on", reset_types_json(r.lock_on_reset_types));
		json_object_array_add(jr, o);
	}
	return 0;
}

static void status_tries(struct ctx *c, bool have, uint64_t tries, uint64_t limit, bool admin1)
{
	if (!have || !limit)
		return;
	json_object_object_add(c->jout, "tries_left", json_object_new_int64((int64_t)(limit - tries)));
	json_object_object_add(c->jout, "tries_limit", json_object_new_int64((int64_t)limit));
	json_object_object_add(c->jout, "tries_authority",
			       json_object_new_string(admin1 ? "Admin1" : "SID"));
}

int cmd_status(struct ctx *c)
{
	struct opal_discovery d;
	struct secret *key = NULL;
	opal_uid a1 = opal_uid_c_pin_admin(1);
	uint64_t lc = 0, tries, limit;
	bool have_lc, have_tries;
	int rc = need_discovery(c, &d);

	if (rc)
		return rc;
	if (!c->dev->opal)
		return fail(c, EXIT_UNSUPPORTED, "status: needs the protocol transport: use --transport nvme or scsi");
	have_lc = !opal_locking_sp_lifecycle(c->dev->opal, &lc);
	have_tries = !opal_tries_left(c->dev->opal,
				      lc == OPAL_LIFECYCLE_MANUFACTURED ? &OPAL_UID_LOCKINGSP : &OPAL_UID_ADMINSP,
				      lc == OPAL_LIFECYCLE_MANUFACTURED ? &a1 : &OPAL_UID_C_PIN_SID,
				      &tries, &limit);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "transport", json_object_new_string(c->dev->transport));
	discovery_json(c->jout, &d);
	if (have_lc)
		json_object_object_add(c->jout, "locking_sp",
				       json_object_new_string(lc == OPAL_LIFECYCLE_MANUFACTURED ? "active" : "inactive"));
	if (!c->keyfile || lc != OPAL_LIFECYCLE_MANUFACTURED) {
		status_tries(c, have_tries, tries, limit, lc == OPAL_LIFECYCLE_MANUFACTURED);
		return 0;
	}
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	/*
	 * Everything Admin1 reads in one session: the tries left (drives that
	 * follow the Opal SSC let only admins read them), every range, MBRControl.
	 */
	{
		struct opal_key k = key_of(key);
		struct opal_session *s;

		rc = opal_admin1_session(c->dev->opal, &k, &s);
		secret_free(key);
		if (rc)
			return fail_opal(c, "status: authenticating as Admin1", rc, &OPAL_UID_LOCKINGSP,
					 &a1);
		if (!have_tries)
			have_tries = !opal_tries_in_session(s, &a1, &tries, &limit);
		status_tries(c, have_tries, tries, limit, true);
		rc = status_ranges(c, s);
		if (!rc) {
			struct opal_mbr_state m;

			rc = opal_mbr_read(s, &m);
			if (!rc) {
				/* The table itself, read with the key: it replaces Level 0's copy. */
				json_object_object_add(c->jout, "mbr_enabled", jbool(m.enable));
				json_object_object_add(c->jout, "mbr_done", jbool(m.done));
			} else {
				rc = fail_opal(c, "status: reading MBRControl", rc, NULL, NULL);
			}
		}
		opal_end_session(s);
	}
	return rc;
}

/* Also what status found before it failed: nothing when discovery did. */
void text_status(struct ctx *c, json_object *res)
{
	json_object *ranges = res_get(res, "ranges");

	if (!res_get(res, "device"))
		return;
	device_text(c->out, res);
	discovery_text(c->out, res);
	if (res_get(res, "locking_sp"))
		fprintf(c->out, "Locking SP:       %s\n", !strcmp(res_str(res, "locking_sp"), "active") ?
			"active" : "inactive (not set up)");
	if (res_get(res, "tries_left"))
		fprintf(c->out, "tries left:       %" PRId64 " of %" PRId64 " (%s)\n",
			res_int(res, "tries_left"), res_int(res, "tries_limit"),
			res_str(res, "tries_authority"));
	if (ranges)
		fprintf(c->out, "ranges:\n");
	for (size_t i = 0; i < res_count(ranges); i++) {
		json_object *r = json_object_array_get_idx(ranges, i);
		int64_t n = res_int(r, "range");
		char lor[64];

		reset_types_text(res_get(r, "lock_on_reset_on"), lor, sizeof(lor));
		if (n == 0)
			fprintf(c->out, "  global           ");
		else
			fprintf(c->out, "  range %" PRId64 ": LBA %" PRIu64 "+%" PRIu64 " ", n,
				(uint64_t)res_int(r, "start"), (uint64_t)res_int(r, "length"));
		fprintf(c->out, "RLE=%d WLE=%d read-locked=%d write-locked=%d lock-on-reset=%s\n",
			res_bool(r, "read_lock_enabled"), res_bool(r, "write_lock_enabled"),
			res_bool(r, "read_locked"), res_bool(r, "write_locked"), lor);
	}
	if (ranges)	/* read with the Admin1 key, MBRControl too */
		fprintf(c->out, "MBRControl:       enable=%s done=%s\n",
			yes_no(res_bool(res, "mbr_enabled")), yes_no(res_bool(res, "mbr_done")));
}

int confirm_destroy(struct ctx *c, const char *what)
{
	char line[16];

	if (c->yes)
		return 0;
	if (!isatty(fileno(c->in)) || !isatty(fileno(c->err)))
		return fail(c, EXIT_REFUSED, "%s: %s: add --yes-destroy-data (or run it on a terminal to be asked)",
			    c->cmd, what);
	fprintf(c->err, "WARNING: %s.\nAre you sure? (Type 'YES' in capital letters): ", what);
	fflush(c->err);
	if (!fgets(line, sizeof(line), c->in) || strcmp(line, "YES\n"))
		return fail(c, EXIT_REFUSED, "%s: not confirmed: nothing was changed", c->cmd);
	return 0;
}

int refuse_in_use(struct ctx *c, uint64_t first, uint64_t count, const char *what)
{
	char why[PATH_MAX + 64];
	int rc;

	if (c->force)
		return 0;
	rc = opal_drive_in_use(c->devpath, first, count, why, sizeof(why));
	if (rc == 1)
		return fail(c, EXIT_REFUSED, "%s: %s, and %s would pull the data from under it: unmount it or close what holds it first (or add --force)",
			    c->cmd, why, what);
	if (rc < 0 && rc != -ENODEV && c->verbose)
		fprintf(c->err, "opalctl: %s: whether %s is in use is unknown: %s\n", c->cmd,
			c->devpath, strerror(-rc));
	return 0;
}

int refuse_in_use_range(struct ctx *c, unsigned who, const struct opal_key *k, unsigned range,
			const char *what)
{
	opal_uid cpin = who ? opal_uid_c_pin_user(who) : opal_uid_c_pin_admin(1);
	char why[OPAL_LOCK_WHY_MAX];
	int rc;

	if (c->force)
		return 0;
	rc = opal_range_in_use(&c->dev->be, who, k, range, c->devpath, why, sizeof(why));
	if (rc == 1)
		return fail(c, EXIT_REFUSED, "%s: %s, and %s would pull the data from under it: unmount it or close what holds it first (or add --force)",
			    c->cmd, why, what);
	return rc ? fail_opal(c, what, rc, &OPAL_UID_LOCKINGSP, &cpin) : 0;
}

/* What the plan says setting the range up loses, for the confirmation. */
static void destroys_text(struct ctx *c, const struct opal_setup_request *rq,
			  const struct opal_setup_plan *p, char *what, size_t cap)
{
	const struct opal_range *want = &rq->range, *cur = &p->cur;

	if (p->change == OPAL_SETUP_MOVED)
		snprintf(what, cap, "range %u covers LBA %" PRIu64 "-%" PRIu64 " now; moving it to LBA %" PRIu64 "-%" PRIu64 " makes the data in both spans unreadable (LBAs it leaves fall back to the global range's key, LBAs it takes were written under another key)",
			 want->n, cur->start, cur->start + cur->length - 1, want->start,
			 want->start + want->length - 1);
	else
		snprintf(what, cap, "range %u is new: it gets a media key of its own, so the data now in LBA %" PRIu64 "-%" PRIu64 " of %s becomes unreadable",
			 want->n, want->start, want->start + want->length - 1, c->devpath);
}

/* A plan or an apply that stopped, said as the step that stopped it. */
static int setup_failed(struct ctx *c, enum opal_setup_step step, int rc,
			const struct opal_setup_plan *p)
{
	const char *via = c->dev->be.ops->via;
	opal_uid a1 = opal_uid_c_pin_admin(1);
	char what[96];

	switch (step) {
	case OPAL_SETUP_DISCOVERY:
		return fail_opal(c, "Level 0 Discovery", rc, NULL, NULL);
	case OPAL_SETUP_MISALIGNED:
		return fail(c, EXIT_USAGE, "setup: the drive aligns ranges to %" PRIu64 " blocks from LBA %" PRIu64 ": the start must be %" PRIu64 " modulo %" PRIu64 " and the length a multiple of %" PRIu64 " (e.g. --start %" PRIu64 " --length %" PRIu64 ")",
			    p->align.granularity, p->align.lowest,
			    p->align.lowest % p->align.granularity, p->align.granularity,
			    p->align.granularity, p->align.start, p->align.length);
	case OPAL_SETUP_SUM_ACTIVE:
		return fail(c, EXIT_USAGE, "setup --sum: %s is already set up (its Locking SP is active) and Single User Mode is chosen only when it is activated: nothing was changed (`opalctl status` shows the drive's state)",
			    c->devpath);
	case OPAL_SETUP_READ_RANGE:
		return fail_opal(c, "setup: reading the range's current geometry", rc,
				 &OPAL_UID_LOCKINGSP, &a1);
	case OPAL_SETUP_IN_USE:
		return fail(c, EXIT_REFUSED, "%s: %s, and %s would pull the data from under it: unmount it or close what holds it first (or add --force)",
			    c->cmd, p->in_use, p->change == OPAL_SETUP_MOVED ?
			    "moving the range" : "a new key for its blocks");
	case OPAL_SETUP_SID_BLOCKED:
		return fail(c, EXIT_DRIVE, "setup: the drive's firmware blocks SID authentication (Block SID, set by the BIOS/UEFI at boot): power-cycle the drive%s and run setup before the firmware sets it again",
			    p->d.sid_block_hw_reset ? " (a hardware reset also clears it)" : "");
	case OPAL_SETUP_OWNERSHIP:
		snprintf(what, sizeof(what), "setup: taking ownership (SID from MSID)%s", via);
		return fail_opal(c, what, rc, NULL, NULL);
	case OPAL_SETUP_ACTIVATE:
		snprintf(what, sizeof(what), "setup: activating the Locking SP as SID%s", via);
		return fail_opal(c, what, rc, &OPAL_UID_ADMINSP, &OPAL_UID_C_PIN_SID);
	case OPAL_SETUP_SUM_OWNER:
		return fail_opal(c, "setup --sum: the range's owner setting its key and range", rc,
				 NULL, NULL);
	case OPAL_SETUP_RANGE:
		snprintf(what, sizeof(what), "setup: configuring the locking range as Admin1%s", via);
		return fail_opal(c, what, rc, &OPAL_UID_LOCKINGSP, &a1);
	case OPAL_SETUP_MBR:
		return fail_opal(c, "setup: disabling the shadow MBR", rc, NULL, NULL);
	default:
		return fail_opal(c, "setup", rc, NULL, NULL);
	}
}

int cmd_setup(struct ctx *c)
{
	struct secret *key, *owner = NULL;
	struct opal_key k, ok;
	struct opal_setup_request rq = { .devpath = c->devpath, .force = c->force, .sum = c->sum };
	struct opal_setup_plan plan;
	struct opal_setup_result res;
	char what[384];
	int rc;

	if (c->range > 0 && (!c->have_start || !c->have_length))
		return fail(c, EXIT_USAGE, "setup --range %d: needs --start LBA and --length N", c->range);
	/* Without --range they would set up the global range: the whole disk. */
	if (c->range <= 0 && (c->have_start || c->have_length))
		return fail(c, EXIT_USAGE, "setup: --start and --length place a locking range: give --range N (1 to 8); the global range covers the whole disk and takes neither");
	if (c->sum && (c->range < 0 || !c->new_keyfile))
		return fail(c, EXIT_USAGE, "setup --sum: needs --range N and --new-keyfile F (the key of the range's owner, User N+1)");
	if (c->range > 0 && c->global)
		return fail(c, EXIT_USAGE, "setup: --range and --global exclude each other: pick one");
	/* The whole disk, with its ESP and /boot, only when asked for by name. */
	if (c->range < 0 && !c->global && !c->sum)
		return fail(c, EXIT_USAGE, "setup: say which range to lock: --global (the whole disk: every partition, its ESP and /boot too, so that nothing boots from it without a pre-boot image) or --range N --start LBA --length N");
	rq.range.n = c->range > 0 ? (unsigned)c->range : 0;
	rq.range.start = c->start;
	rq.range.length = c->length;
	rq.range.read_lock_enabled = true;
	rq.range.write_lock_enabled = true;
	rq.range.lock_on_reset = true;
	/*
	 * Lock at a hardware reset too (a platform reset of the drive, not
	 * only power loss): optional in the Opal SSC, so the protocol backend
	 * falls back to power cycle alone where the drive refuses it; the
	 * kernel's IOC_OPAL_LR_SETUP writes no LockOnReset at all.
	 */
	rq.range.lock_on_reset_types = OPAL_RESET_POWER_CYCLE | OPAL_RESET_HARDWARE;
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	k = key_of(key);
	/* What it would do, and what that loses, is known and confirmed before any change. */
	rc = opal_setup_plan(&c->dev->be, &k, &rq, &plan);
	if (rc) {
		secret_free(key);
		return setup_failed(c, plan.step, rc, &plan);
	}
	if (plan.destroys) {
		destroys_text(c, &rq, &plan, what, sizeof(what));
		rc = confirm_destroy(c, what);
		if (rc) {
			secret_free(key);
			return rc;
		}
	}
	if (c->sum) {
		rc = load_key(c, c->new_keyfile, &owner);
		if (rc) {
			secret_free(key);
			return rc;
		}
		ok = key_of(owner);
		rq.owner_key = &ok;
	}
	if (c->verbose)
		fprintf(c->err, "opalctl: setup: %s\n", plan.active ?
			"Locking SP already active: ownership left alone" :
			plan.d.block_sid && plan.d.sid_value_state ?
			"the drive is owned (Block SID: SID is not the MSID): activating with the key as SID" :
			"taking ownership, activating the Locking SP");
	rc = opal_setup_apply(&c->dev->be, &k, &rq, &plan, &res);
	secret_free(key);
	secret_free(owner);
	if (rc)
		return setup_failed(c, res.step, rc, &plan);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "range", json_object_new_int((int)rq.range.n));
	json_object_object_add(c->jout, "locking_sp", json_object_new_string("active"));
	json_object_object_add(c->jout, "lock_on_reset",
			       res.have_back ? jbool(res.back.lock_on_reset) : NULL);
	json_object_object_add(c->jout, "lock_on_reset_on",
			       res.have_back ? reset_types_json(res.back.lock_on_reset_types) : NULL);
	json_object_object_add(c->jout, "mbr_enabled", jbool(false));
	if (c->sum)
		json_object_object_add(c->jout, "single_user_mode_owner",
				       json_object_new_int((int)rq.range.n + 1));
	if (rq.range.n) {
		json_object_object_add(c->jout, "start", json_object_new_int64((int64_t)rq.range.start));
		json_object_object_add(c->jout, "length", json_object_new_int64((int64_t)rq.range.length));
	}
	return 0;
}

void text_setup(struct ctx *c, json_object *res)
{
	const char *dev = res_str(res, "device");
	int64_t n = res_int(res, "range");
	char on[64];
	const char *lor;

	reset_types_text(res_get(res, "lock_on_reset_on"), on, sizeof(on));
	lor = !res_get(res, "lock_on_reset") ? "lock-on-reset not read back" :
	      !strcmp(on, "power-cycle,hardware-reset") ? "locks at power-off and at hardware reset" :
	      !strcmp(on, "power-cycle") ? "locks at power-off" :
	      res_bool(res, "lock_on_reset") ? "locks at power-off" : "does NOT lock at power-off";

	if (res_get(res, "single_user_mode_owner"))
		fprintf(c->out, "%s: Single User Mode: range %" PRId64 " belongs to User%" PRId64 " (the --new-keyfile key); Admin1 cannot lock or unlock it\n",
			dev, n, res_int(res, "single_user_mode_owner"));
	if (n)
		fprintf(c->out, "%s: Locking SP active; range %" PRId64 " (LBA %" PRIu64 "+%" PRIu64 ") read/write locking enabled, %s; shadow MBR disabled\n",
			dev, n, (uint64_t)res_int(res, "start"), (uint64_t)res_int(res, "length"), lor);
	else
		fprintf(c->out, "%s: Locking SP active; global range read/write locking enabled, %s; shadow MBR disabled\n",
			dev, lor);
}

/* The disks behind a controller: namespaces whose subsystem is the controller's. */
/* One disk's re-read, as opal_reread_partitions reports it. */
static void reread_report(void *arg, const char *disk, int rc, bool uevent)
{
	struct ctx *c = arg;

	if (!rc) {
		if (c->verbose)
			fprintf(c->err, "opalctl: %s: partition table re-read\n", disk);
	} else if (rc == -EBUSY && uevent) {
		warn(c, "%s: partition table not re-read (busy: a partition is in use); udev told to look at the disk and its partitions again",
		     disk);
	} else {
		warn(c, "%s: partition table not re-read: %s (in use? run `partprobe %s`)", disk,
		     strerror(-rc), disk);
	}
}

void reread_partitions(struct ctx *c, const char *path)
{
	opal_reread_partitions(path, reread_report, c);
}

int opalctl_lock_unlock(struct ctx *c, const struct opal_key *key, bool unlock, json_object *res)
{
	unsigned range = c->range < 0 ? 0 : (unsigned)c->range;
	struct opal_lock_request rq = {
		.who = (unsigned)c->user, .range = range, .save = c->save,
		.keep_mbr = c->keep_mbr, .force = c->force, .devpath = c->devpath,
		.state = !unlock ? OPAL_LOCKED : c->read_only ? OPAL_UNLOCKED_RO : OPAL_UNLOCKED_RW,
	};
	opal_uid cpin = c->user ? opal_uid_c_pin_user((unsigned)c->user) : opal_uid_c_pin_admin(1);
	const struct opal_range *r;
	struct opal_lock_result lr;
	char what[96];
	int rc;

	snprintf(what, sizeof(what), "%s range %u", unlock ? "unlock" : "lock", range);
	rc = opal_lock_control(&c->dev->be, key, &rq, &lr);
	r = &lr.range;
	switch (rc ? lr.step : OPAL_LOCK_DONE) {
	case OPAL_LOCK_DONE:
		break;
	case OPAL_LOCK_IN_USE:
		return fail(c, EXIT_REFUSED, "%s: %s, and locking the range would pull the data from under it: unmount it or close what holds it first (or add --force)",
			    c->cmd, lr.in_use);
	case OPAL_LOCK_NO_SAVE:
		return fail(c, EXIT_UNSUPPORTED, "unlock --save: only the kernel can keep the key for S3 resume: use --transport ioctl on the block device");
	case OPAL_LOCK_SPAN:
	case OPAL_LOCK_SET:
		return fail_opal(c, what, rc, &OPAL_UID_LOCKINGSP, &cpin);
	case OPAL_LOCK_NOT_LOCKED:
		switch (lr.check) {
		case OPAL_LOCK_CHECK_NO_LBAS:
			return fail(c, EXIT_DRIVE, "lock: range %u is not configured (no LBAs): nothing was locked: set it up with `opalctl setup --range %u`",
				    r->n, r->n);
		case OPAL_LOCK_CHECK_NOT_ENABLED:
			return fail(c, EXIT_DRIVE, "lock: range %u does not lock: read and write locking are not enabled on it: run `opalctl setup`",
				    r->n);
		case OPAL_LOCK_CHECK_HALF:
			return fail(c, EXIT_DRIVE, "lock: range %u stays %s: %s locking is not enabled on it: run `opalctl setup`",
				    r->n, r->read_lock_enabled ? "writable" : "readable",
				    r->read_lock_enabled ? "write" : "read");
		default:
			return fail(c, EXIT_DRIVE, "lock: range %u reads back unlocked after the lock: check the drive",
				    r->n);
		}
	}
	if (!unlock && lr.check == OPAL_LOCK_CHECK_UNREAD)
		warn(c, "range %u: lock sent but not verified: %s may not read the range (%s)", range,
		     c->user ? "this user" : "Admin1", opal_strerror(lr.check_rc));
	if (lr.mbr_rc)
		warn(c, "the shadow MBR is enabled and still shown (MBR Done not set: %s): run `opalctl mbr --done` with the Admin1 key",
		     opal_strerror(lr.mbr_rc));
	else if (lr.mbr_done_set && c->verbose)
		fprintf(c->err, "opalctl: shadow MBR Done set\n");
	if (unlock)
		reread_partitions(c, c->devpath);
	json_object_object_add(res, "range", json_object_new_int((int)range));
	json_object_object_add(res, "state", json_object_new_string(
		rq.state == OPAL_LOCKED ? "locked" : rq.state == OPAL_UNLOCKED_RO ? "read-only" :
		"read-write"));
	if (!unlock)
		json_object_object_add(res, "verified", jbool(lr.check == OPAL_LOCK_CHECK_LOCKED));
	if (c->dev->be.ops->can_save)
		json_object_object_add(res, "saved_for_resume", jbool(lr.saved));
	return 0;
}

/* One range's line, from what opalctl_lock_unlock put into res. */
static void lock_unlock_line(FILE *o, const char *dev, json_object *res)
{
	const char *st = res_str(res, "state");

	fprintf(o, "%s: range %" PRId64 " %s%s\n", dev, res_int(res, "range"),
		!strcmp(st, "locked") ? "locked" : !strcmp(st, "read-only") ? "unlocked read-only" :
		"unlocked", res_bool(res, "verified") ? " (verified)" : "");
}

/* One range, or with --all the ranges done ("ranges"), a line each. */
void text_lock_unlock(struct ctx *c, json_object *res)
{
	json_object *ranges = res_get(res, "ranges");

	for (size_t i = 0; i < res_count(ranges); i++)
		lock_unlock_line(c->out, res_str(res, "device"), json_object_array_get_idx(ranges, i));
}

int cmd_change_key(struct ctx *c)
{
	struct secret *key, *nkey;
	struct opal_key k, nk;
	const char *who = c->who ? c->who : "both";
	bool sid = !strcmp(who, "sid") || !strcmp(who, "both");
	bool admin = !strcmp(who, "admin1") || !strcmp(who, "both");
	opal_uid a1 = opal_uid_admin(1), ca1 = opal_uid_c_pin_admin(1);
	int rc = 0;

	if (!sid && !admin)
		return fail(c, EXIT_USAGE, "change-key --who %s: use sid, admin1 or both", who);
	if (!c->new_keyfile)
		return fail(c, EXIT_USAGE, "change-key: needs --new-keyfile FILE");
	if (!strcmp(c->keyfile, "-") && !strcmp(c->new_keyfile, "-"))
		return fail(c, EXIT_USAGE, "change-key: only one of the keys can come from stdin");
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	rc = load_key(c, c->new_keyfile, &nkey);
	if (rc) {
		secret_free(key);
		return rc;
	}
	k = key_of(key);
	nk = key_of(nkey);
	if (sid) {
		rc = opal_set_pin(c->dev->opal, &OPAL_UID_ADMINSP, &OPAL_UID_SID, &k,
				  &OPAL_UID_C_PIN_SID, &nk);
		if (rc)
			rc = fail_opal(c, "change-key: setting the SID PIN", rc, &OPAL_UID_ADMINSP,
				       &OPAL_UID_C_PIN_SID);
	}
	if (!rc && admin) {
		rc = opal_set_pin(c->dev->opal, &OPAL_UID_LOCKINGSP, &a1, &k, &ca1, &nk);
		if (rc)
			rc = fail_opal(c, sid ? "change-key: SID changed, but setting the Admin1 PIN" :
				       "change-key: setting the Admin1 PIN", rc, &OPAL_UID_LOCKINGSP, &ca1);
	}
	secret_free(key);
	secret_free(nkey);
	if (rc)
		return rc;
	json_object_object_add(c->jout, "changed", json_object_new_string(who));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_change_key(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: key changed (%s)\n", res_str(res, "device"), res_str(res, "changed"));
}

/*
 * Stream an image of any size into the shadow MBR table in one Admin1
 * session: checked against the table's size and write granularity first
 * (the last piece is padded with zeros up to the granularity), read in
 * chunks, and a short read is an error, never a silently shorter image.
 */
#define MBR_READ_CHUNK (1u << 20)

static int mbr_write_image(struct ctx *c, const struct opal_key *k)
{
	struct opal_session *s = NULL;
	uint64_t rows = 0, gran = 1, size, done = 0;
	uint8_t *buf = NULL;
	struct stat st;
	int fd, rc;

	if (!c->dev->opal)
		return fail(c, EXIT_UNSUPPORTED, "mbr --write: the kernel has no operation for it: use --transport nvme or scsi");
	fd = open(c->mbr_file, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		rc = fail(c, EXIT_USAGE, "mbr --write %s: %s", c->mbr_file,
			  fd < 0 ? strerror(errno) : "not a regular file");
		if (fd >= 0)
			close(fd);
		return rc;
	}
	size = (uint64_t)st.st_size;
	rc = opal_admin1_session(c->dev->opal, k, &s);
	if (!rc)
		rc = opal_mbr_geometry(s, &rows, &gran);
	if (rc) {
		opal_uid ca1 = opal_uid_c_pin_admin(1);

		opal_end_session(s);
		close(fd);
		return fail_opal(c, "mbr --write: reading the MBR table's size", rc, &OPAL_UID_LOCKINGSP,
				 &ca1);
	}
	if (!size || size > rows || gran > MBR_READ_CHUNK) {
		opal_end_session(s);
		close(fd);
		return fail(c, EXIT_USAGE, "mbr --write %s: the image is %" PRIu64 " bytes; the drive's shadow MBR holds 1 to %" PRIu64,
			    c->mbr_file, size, rows);
	}
	buf = malloc(MBR_READ_CHUNK);
	rc = buf ? 0 : OPAL_ERR_NOMEM;
	while (!rc && done < size) {
		size_t want = size - done < MBR_READ_CHUNK ? (size_t)(size - done) : MBR_READ_CHUNK;
		size_t got = 0, len;

		while (got < want) {
			ssize_t n = read(fd, buf + got, want - got);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			got += (size_t)n;
		}
		if (got != want) {
			opal_end_session(s);
			close(fd);
			free(buf);
			return fail(c, EXIT_USAGE, "mbr --write %s: short read at byte %" PRIu64 " (%s): nothing more written; the shadow MBR now holds a partial image",
				    c->mbr_file, done + got, got < want && errno ? strerror(errno) : "file shrank");
		}
		len = got;
		if (len % gran) {	/* only the last piece: pad up to the granularity */
			size_t pad = (size_t)(gran - len % gran);

			if (done + len + pad > rows)
				pad = 0;
			memset(buf + len, 0, pad);
			len += pad;
		}
		rc = opal_mbr_write_session(s, done, buf, len, gran);
		done += got;
	}
	free(buf);
	close(fd);
	if (s) {
		int end = opal_end_session(s);

		rc = rc ? rc : end;
	}
	if (rc)
		return fail_opal(c, "mbr: writing the shadow MBR", rc, NULL, NULL);
	if (c->verbose)
		fprintf(c->err, "opalctl: mbr: %" PRIu64 " bytes written (table %" PRIu64 " bytes, granularity %" PRIu64 ")\n",
			size, rows, gran);
	return 0;
}

int cmd_mbr(struct ctx *c)
{
	struct secret *key;
	struct opal_key k;
	int rc;

	if (c->mbr_enable < 0 && c->mbr_done < 0 && !c->mbr_file)
		return fail(c, EXIT_USAGE, "mbr: give --enable, --disable, --done, --not-done or --write FILE");
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	k = key_of(key);
	if (c->mbr_file) {
		rc = mbr_write_image(c, &k);
		if (rc) {
			secret_free(key);
			return rc;
		}
	}
	if (c->mbr_enable >= 0 || c->mbr_done >= 0)
		rc = c->dev->be.ops->mbr_control(&c->dev->be, 0, &k, c->mbr_enable, c->mbr_done);
	secret_free(key);
	if (rc) {
		opal_uid ca1 = opal_uid_c_pin_admin(1);

		return fail_opal(c, "mbr: setting MBRControl", rc, &OPAL_UID_LOCKINGSP, &ca1);
	}
	if (c->mbr_enable >= 0)
		json_object_object_add(c->jout, "mbr_enabled", jbool(c->mbr_enable));
	if (c->mbr_done >= 0)
		json_object_object_add(c->jout, "mbr_done", jbool(c->mbr_done));
	json_object_object_add(c->jout, "written", jbool(c->mbr_file != NULL));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_mbr(struct ctx *c, json_object *res)
{
	json_object *enable = res_get(res, "mbr_enabled"), *done = res_get(res, "mbr_done");

	fprintf(c->out, "%s: shadow MBR%s%s%s\n", res_str(res, "device"),
		res_bool(res, "written") ? " written" : "",
		!enable ? "" : json_object_get_boolean(enable) ? " enabled" : " disabled",
		!done ? "" : json_object_get_boolean(done) ? " done" : " not done");
}

/*
 * Read and write locking off, the range unlocked, its LBAs and key kept
 * (data stays readable): the opposite of setup. Through the kernel as
 * IOC_OPAL_LR_SETUP with the range's own geometry and RLE = WLE = 0.
 */
int cmd_range_disable(struct ctx *c)
{
	struct secret *key;
	struct opal_key k;
	struct opal_range r;
	opal_uid ca1 = opal_uid_c_pin_admin(1);
	int rc;

	if (c->range < 0)
		return fail(c, EXIT_USAGE, "range-disable: needs --range N (0 = global range)");
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	k = key_of(key);
	rc = c->dev->be.ops->range_read(&c->dev->be, 0, &k, (unsigned)c->range, &r);
	if (!rc)
		rc = c->dev->be.ops->range_disable(&c->dev->be, &k, &r);
	secret_free(key);
	if (rc)
		return fail_opal(c, "range-disable", rc, &OPAL_UID_LOCKINGSP, &ca1);
	json_object_object_add(c->jout, "range", json_object_new_int(c->range));
	json_object_object_add(c->jout, "locking", jbool(false));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_range_disable(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: range %" PRId64 ": locking off, unlocked (LBAs and data kept)\n",
		res_str(res, "device"), res_int(res, "range"));
}

int cmd_erase_range(struct ctx *c)
{
	struct secret *key;
	struct opal_key k;
	char what[160];
	int rc;

	if (c->range < 0)
		return fail(c, EXIT_USAGE, "erase-range: needs --range N (0 = global range)");
	rc = load_key(c, c->keyfile, &key);
	if (rc)
		return rc;
	k = key_of(key);
	snprintf(what, sizeof(what), "this destroys all data in locking range %d of %s (its key is regenerated)",
		 c->range, c->devpath);
	rc = refuse_in_use_range(c, 0, &k, (unsigned)c->range, "erasing the range");
	if (!rc)
		rc = confirm_destroy(c, what);
	if (rc) {
		secret_free(key);
		return rc;
	}
	rc = c->dev->be.ops->erase_range(&c->dev->be, &k, (unsigned)c->range);
	secret_free(key);
	if (rc) {
		opal_uid ca1 = opal_uid_c_pin_admin(1);

		return fail_opal(c, "erase-range: GenKey", rc, &OPAL_UID_LOCKINGSP, &ca1);
	}
	json_object_object_add(c->jout, "range", json_object_new_int(c->range));
	json_object_object_add(c->jout, "erased", jbool(true));
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

void text_erase_range(struct ctx *c, json_object *res)
{
	fprintf(c->out, "%s: range %" PRId64 " crypto-erased (new media key)\n",
		res_str(res, "device"), res_int(res, "erased_range"));
}

static int cmd_revert(struct ctx *c, bool psid)
{
	struct secret *key;
	struct opal_key k;
	uint64_t lc = 0;
	int rc;

	char what[256];

	if (c->keep_data)
		snprintf(what, sizeof(what), "this resets the Locking SP of %s (locking off, users and ranges 1-8 gone, their data erased; the global range's data is kept)",
			 c->devpath);
	else
		snprintf(what, sizeof(what), "this erases ALL data on %s and returns it to factory state (SID = MSID, locking off)",
			 c->devpath);
	rc = refuse_in_use(c, 0, 0, c->keep_data ? "erasing ranges 1-8" : "erasing the drive");
	if (!rc)
		rc = confirm_destroy(c, what);
	if (rc)
		return rc;
	if (c->keep_data) {
		rc = load_key(c, c->keyfile, &key);
		if (rc)
			return rc;
		k = key_of(key);
		/*
		 * Drives refuse to keep the global range's key while that range
		 * is locked (its data would stay unreadable): unlock it first.
		 */
		rc = c->dev->be.ops->lock_unlock(&c->dev->be, 0, &k, 0, OPAL_UNLOCKED_RW, false, NULL,
						 NULL);
		if (!rc)
			rc = c->dev->be.ops->revert_lsp(&c->dev->be, &k, true);
		secret_free(key);
		if (rc) {
			opal_uid ca1 = opal_uid_c_pin_admin(1);

			return fail_opal(c, "revert --keep-data: RevertSP as Admin1", rc,
					 &OPAL_UID_LOCKINGSP, &ca1);
		}
		json_object_object_add(c->jout, "reverted", jbool(true));
		json_object_object_add(c->jout, "scope", json_object_new_string("locking-sp"));
		json_object_object_add(c->jout, "global_range_kept", jbool(true));
		json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
		return 0;
	}
	if (psid && !c->psid_file)
		return fail(c, EXIT_USAGE, "psid-revert: needs --psid-file FILE holding the PSID from the drive label");
	if (psid) {
		bool saved = c->sedutil;

		c->sedutil = false;	/* the PSID is used as printed */
		rc = load_key_text(c, c->psid_file, true, &key);
		c->sedutil = saved;
	} else {
		rc = load_key(c, c->keyfile, &key);
	}
	if (rc)
		return rc;
	k = key_of(key);
	/* Revert erases the data only when the Locking SP was active (Opal SSC). */
	if (!c->dev->opal || opal_locking_sp_lifecycle(c->dev->opal, &lc))
		lc = 0;
	rc = c->dev->be.ops->revert_tper(&c->dev->be, &k, psid);
	secret_free(key);
	if (rc)
		return fail_opal(c, psid ? "psid-revert" : "revert as SID", rc, &OPAL_UID_ADMINSP,
				 psid ? &OPAL_UID_C_PIN_PSID : &OPAL_UID_C_PIN_SID);
	json_object_object_add(c->jout, "reverted", jbool(true));
	json_object_object_add(c->jout, "scope", json_object_new_string("drive"));
	json_object_object_add(c->jout, "data_erased",
			       lc ? jbool(lc == OPAL_LIFECYCLE_MANUFACTURED) : NULL);
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	return 0;
}

/* "reverted": "locking-sp" (--keep-data) or true (all); "data_erased": null when unknown. */
void text_revert(struct ctx *c, json_object *res)
{
	json_object *erased = res_get(res, "data_erased");
	const char *dev = res_str(res, "device");

	if (json_object_is_type(res_get(res, "reverted"), json_type_string))
		fprintf(c->out, "%s: Locking SP reverted (locking off); the global range's data kept\n",
			dev);
	else
		fprintf(c->out, "%s: reverted to factory state; %s\n", dev,
			!erased ? "all data erased if the Locking SP was active" :
			json_object_get_boolean(erased) ? "all data erased" :
			"the Locking SP was not active, so the data was left as it was");
}

int cmd_keygen(struct ctx *c)
{
	struct secret *s = secret_new();
	int fd, rc = 0;

	if (!s)
		return fail(c, EXIT_KEYFILE, "keygen: cannot allocate locked memory: raise RLIMIT_MEMLOCK");
	if (RAND_bytes(s->data, c->passphrase ? PASSPHRASE_SYMBOLS : KEYGEN_BYTES) != 1) {
		secret_free(s);
		return fail(c, EXIT_KEYFILE, "keygen: no random bytes from OpenSSL: check the system's entropy source");
	}
	if (c->passphrase) {
		uint8_t sym[PASSPHRASE_SYMBOLS];
		size_t o = 0;

		/* 256 is a multiple of 32: the low 5 bits of a random byte are uniform. */
		memcpy(sym, s->data, sizeof(sym));
		for (size_t i = 0; i < PASSPHRASE_SYMBOLS; i++) {
			if (i && i % PASSPHRASE_GROUP == 0)
				s->data[o++] = '-';
			s->data[o++] = (uint8_t)passphrase_alphabet[sym[i] & 31];
		}
		OPENSSL_cleanse(sym, sizeof(sym));
		s->len = o;
	} else {
		s->len = KEYGEN_BYTES;
	}
	fd = open(c->devpath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0400);
	if (fd < 0)
		rc = fail(c, EXIT_KEYFILE, "keygen: cannot create %s: %s: pick a new file name",
			  c->devpath, strerror(errno));
	else if (write(fd, s->data, s->len) != (ssize_t)s->len || fsync(fd))
		rc = fail(c, EXIT_KEYFILE, "keygen: cannot write %s: %s", c->devpath, strerror(errno));
	if (fd >= 0)
		close(fd);
	secret_free(s);
	if (rc)
		return rc;
	json_object_object_add(c->jout, "keyfile", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "bytes", json_object_new_int(c->passphrase ? PASSPHRASE_LEN : KEYGEN_BYTES));
	json_object_object_add(c->jout, "passphrase", jbool(c->passphrase));
	json_object_object_add(c->jout, "bits", json_object_new_int(c->passphrase ? PASSPHRASE_SYMBOLS * 5 : KEYGEN_BYTES * 8));
	return 0;
}

void text_keygen(struct ctx *c, json_object *res)
{
	if (res_bool(res, "passphrase"))
		fprintf(c->out, "%s: a key to type (%" PRId64 " characters, %" PRId64 " random bits) written: keep a copy off the machine (`cat` shows it: type it as written, dashes included)\n",
			res_str(res, "keyfile"), res_int(res, "bytes"), res_int(res, "bits"));
	else
		fprintf(c->out, "%s: %" PRId64 " random bytes written\n", res_str(res, "keyfile"),
			res_int(res, "bytes"));
}

int cmd_scan(struct ctx *c)
{
	char **paths;
	size_t n;
	json_object *arr;
	int rc = opal_drive_list(NULL, &paths, &n);

	if (rc)
		return fail(c, EXIT_DEVICE, "scan: cannot list the disks in /sys/class/block: %s",
			    strerror(-rc));
	arr = json_object_new_array();
	json_object_object_add(c->jout, "devices", arr);
	for (size_t i = 0; i < n; i++) {
		struct opal_drive *dev;
		struct opal_discovery disc;
		const char *ssc = NULL;
		char why[160];
		json_object *o;

		rc = opalctl_dev_open(paths[i], c->transport, c->timeout_ms, false, &dev, why,
				      sizeof(why));
		if (rc)
			dev = NULL;
		else
			rc = dev->be.ops->discovery(&dev->be, &disc);
		if (!rc)
			ssc = opal_discovery_ssc(&disc);
		o = json_object_new_object();
		json_object_object_add(o, "device", json_object_new_string(paths[i]));
		json_object_object_add(o, "opal", jbool(!rc && ssc));
		if (!rc)
			discovery_json(o, &disc);
		else
			json_object_object_add(o, "error", json_object_new_string(opal_strerror(rc)));
		json_object_array_add(arr, o);
		if (dev)
			opalctl_dev_close(dev);
	}
	opal_drive_list_free(paths, n);
	return 0;
}

void text_scan(struct ctx *c, json_object *res)
{
	json_object *arr = res_get(res, "devices");
	size_t n = res_count(arr);

	for (size_t i = 0; i < n; i++) {
		json_object *o = json_object_array_get_idx(arr, i);

		fprintf(c->out, "%-16s %s", res_str(o, "device"),
			res_get(o, "error") ? res_str(o, "error") :
			res_get(o, "ssc") ? res_str(o, "ssc") : "no Opal SSC");
		if (res_bool(o, "opal"))
			fprintf(c->out, ", locking %s%s", res_bool(o, "locking_enabled") ? "enabled" : "disabled",
				res_bool(o, "locked") ? ", locked" : "");
		fprintf(c->out, "\n");
	}
	if (!n)
		fprintf(c->out, "no SCSI/ATA or NVMe disks found\n");
}

/*
 * --all: the ranges the authority may read that lock (configured, read or
 * write locking enabled), in one session. Ranges it may not read are not
 * its to lock or unlock.
 */
static int lockable_ranges(struct ctx *c, const struct opal_key *k, unsigned *list, unsigned *n)
{
	opal_uid cpin = c->user ? opal_uid_c_pin_user((unsigned)c->user) : opal_uid_c_pin_admin(1);
	int rc;

	if (!c->dev->opal)
		return fail(c, EXIT_UNSUPPORTED, "%s --all: listing the ranges needs the protocol transport of the drive (nvme or scsi): give --range instead",
			    c->cmd);
	rc = opal_lockable_ranges(c->dev->opal, (unsigned)c->user, k, list, n);
	if (rc)
		return fail_opal(c, c->cmd, rc, &OPAL_UID_LOCKINGSP, &cpin);
	if (!*n)
		return fail(c, EXIT_DRIVE, "%s --all: no range with locking enabled that %s may read",
			    c->cmd, c->user ? "this user" : "Admin1");
	return 0;
}

static int cmd_lock_unlock(struct ctx *c, bool unlock)
{
	struct secret *key;
	struct opal_key k;
	unsigned list[OPAL_SLOT_RANGES + 1], n = 0;
	json_object *arr = json_object_new_array();
	int rc;

	rc = load_key(c, c->keyfile, &key);
	if (rc) {
		json_object_put(arr);
		return rc;
	}
	k = key_of(key);
	/* One range or --all: a list either way; a range that fails leaves those done before. */
	json_object_object_add(c->jout, "device", json_object_new_string(c->devpath));
	json_object_object_add(c->jout, "ranges", arr);
	if (!c->all) {
		json_object *o = json_object_new_object();

		rc = opalctl_lock_unlock(c, &k, unlock, o);
		if (rc)
			json_object_put(o);
		else
			json_object_array_add(arr, o);
	} else {
		rc = lockable_ranges(c, &k, list, &n);
		for (unsigned i = 0; !rc && i < n; i++) {
			json_object *o = json_object_new_object();

			c->range = (int)list[i];
			rc = opalctl_lock_unlock(c, &k, unlock, o);
			if (rc)
				json_object_put(o);
			else
				json_object_array_add(arr, o);
		}
		c->range = -1;
	}
	secret_free(key);
	return rc;
}

int cmd_unlock(struct ctx *c)
{
	return cmd_lock_unlock(c, true);
}

int cmd_lock(struct ctx *c)
{
	return cmd_lock_unlock(c, false);
}

int cmd_revert_sid(struct ctx *c)
{
	return cmd_revert(c, false);
}

int cmd_revert_psid(struct ctx *c)
{
	return cmd_revert(c, true);
}
