// SPDX-License-Identifier: GPL-2.0-only
/*
 * slots --report and regen: the options, one call of lib/nbde's rotation
 * policy (nbde-rotate.h), and its result as the command's JSON model and
 * text. The exit codes are opalctl's, from the result's typed status.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "nbde-rotate.h"
#include "opalctl-cmd.h"
#include "opaltab.h"

void opalctl_log(void *arg, enum nbde_log_level level, const char *msg)
{
	struct ctx *c = arg;

	if (level == NBDE_LOG_WARNING)
		warn(c, "%s", msg);
	else if (c->verbose)
		fprintf(c->err, "opalctl: %s\n", msg);
}

static json_object *jstr_or_null(const char *s)
{
	return s && s[0] ? json_object_new_string(s) : NULL;
}

/* ------------------------------------------------------------ report */

/* A Tang branch: its server, the key it was sealed for, where that stands. */
static json_object *server_json(const struct nbde_server *sv)
{
	json_object *so = json_object_new_object();

	json_object_object_add(so, "url", json_object_new_string(sv->url));
	json_object_object_add(so, "kid", json_object_new_string(sv->kid));
	json_object_object_add(so, "state", json_object_new_string(nbde_key_state_name(sv->state)));
	return so;
}

/* One sealed key of the report, as the JSON model says it. */
static json_object *report_json(const struct nbde_report_slot *r)
{
	static const char *const actions[] = {
		[NBDE_ACTION_NONE] = "none", [NBDE_ACTION_REGEN] = "regen",
		[NBDE_ACTION_REBIND] = "rebind", [NBDE_ACTION_CHECK] = "check",
	};
	static const char *const copies[] = {
		[NBDE_COPY_NOT_CHECKED] = NULL, [NBDE_COPY_SAME] = "same",
		[NBDE_COPY_DIFFERS] = "differs", [NBDE_COPY_MISSING] = "missing",
	};
	json_object *o = json_object_new_object(), *servers = json_object_new_array();

	if (r->from_table)
		json_object_object_add(o, "noauto", jbool(r->noauto));
	json_object_object_add(o, "name", jstr_or_null(r->s.name));
	json_object_object_add(o, "jwe", json_object_new_string(r->s.jwe));
	json_object_object_add(o, "servers", servers);
	if (!r->s.parsed) {
		json_object_object_add(o, "pin", NULL);
		json_object_object_add(o, "action", json_object_new_string("rebind"));
		json_object_object_add(o, "why", json_object_new_string(r->why));
		return o;
	}
	json_object_object_add(o, "pin", json_object_new_string(r->s.pin));
	json_object_object_add(o, "threshold", json_object_new_int(r->s.threshold));
	for (size_t i = 0; i < r->s.nservers; i++) {
		json_object *so = server_json(&r->s.servers[i]);

		json_object_object_add(so, "why", jstr_or_null(r->s.servers[i].why));
		json_object_array_add(servers, so);
	}
	if (r->other_pin[0])
		json_object_object_add(o, "other_pin", json_object_new_string(r->other_pin));
	json_object_object_add(o, "action", json_object_new_string(actions[r->action]));
	json_object_object_add(o, "initramfs", jstr_or_null(copies[r->initramfs]));
	json_object_object_add(o, "old", jstr_or_null(r->old));
	json_object_object_add(o, "needs_attention", jbool(r->needs_attention));
	return o;
}

int cmd_slots_report(struct ctx *c)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	struct nbde_report_rq rq = {
		.table = table, .jwe = c->jwe, .initramfs = c->initramfs,
		.log = { opalctl_log, c },
	};
	struct opaltab_entry *v = NULL;
	struct nbde_report r;
	json_object *arr, *io;
	size_t n = 0;
	int rc;

	if (!c->jwe) {
		rc = load_table(c, table, &v, &n);
		if (rc)
			return rc;
	}
	rq.entries = v;
	rq.nentries = n;
	rc = nbde_report(&rq, &r);
	if (rc) {
		rc = rc == -EINVAL ? fail(c, EXIT_USAGE, "slots --report: %s", r.error) :
		     fail(c, EXIT_DRIVE, "slots --report: out of memory");
		nbde_report_free(&r);
		free(v);
		return rc;
	}
	arr = json_object_new_array();
	io = json_object_new_object();
	json_object_object_add(c->jout, "slots", arr);
	json_object_object_add(c->jout, "table", c->jwe ? NULL : json_object_new_string(table));
	json_object_object_add(io, "image", json_object_new_string(r.image));
	json_object_object_add(io, "checked", jbool(r.checked));
	json_object_object_add(io, "why", r.checked ? NULL : json_object_new_string(r.why));
	json_object_object_add(c->jout, "initramfs", io);
	for (size_t i = 0; i < r.n; i++)
		json_object_array_add(arr, report_json(&r.slots[i]));
	json_object_object_add(c->jout, "needs_attention", json_object_new_int((int)r.needs_attention));
	json_object_object_add(c->jout, "initramfs_command",
			       json_object_new_string(r.initramfs_command));
	rc = r.needs_attention ? EXIT_STALE : 0;
	nbde_report_free(&r);
	free(v);
	if (!rc)
		return 0;
	emit_result(c);
	return rc;
}

static void report_text(FILE *out, json_object *o)
{
	json_object *servers = res_get(o, "servers");
	const char *action = res_str(o, "action"), *copy = res_str(o, "initramfs");

	fprintf(out, "%s: %s, clevis %s", res_get(o, "name") ? res_str(o, "name") : "-",
		res_str(o, "jwe"), res_get(o, "pin") ? res_str(o, "pin") : "?");
	if (res_int(o, "threshold") > 1 || !strcmp(res_str(o, "pin"), "sss"))
		fprintf(out, " (any %" PRId64 " of %zu)", res_int(o, "threshold"), res_count(servers));
	if (!strcmp(action, "none"))
		fprintf(out, ": up to date\n");
	else if (!strcmp(action, "regen"))
		fprintf(out, ": needs regen (opalctl regen%s%s)\n", res_get(o, "name") ? " --name " : " --jwe ",
			res_get(o, "name") ? res_str(o, "name") : res_str(o, "jwe"));
	else if (!strcmp(action, "rebind"))
		fprintf(out, ": cannot open any more: bind a new slot with the Admin1 key, then unbind this one\n");
	else
		fprintf(out, ": cannot tell: a server did not answer, or not with an advertisement a trusted key signed\n");
	if (res_get(o, "why"))
		fprintf(out, "  %s\n", res_str(o, "why"));
	for (size_t i = 0; i < res_count(servers); i++) {
		json_object *s = json_object_array_get_idx(servers, i);

		fprintf(out, "  %-40s %-11s key %s\n", res_str(s, "url"), res_str(s, "state"),
			res_str(s, "kid"));
		if (res_get(s, "why") && strcmp(res_str(s, "state"), "current"))
			fprintf(out, "    %s\n", res_str(s, "why"));
	}
	if (res_get(o, "other_pin"))
		fprintf(out, "  and a %s branch (not a server key: nothing to rotate)\n",
			res_str(o, "other_pin"));
	if (res_get(o, "initramfs") && strcmp(copy, "same"))
		fprintf(out, "  initramfs: its copy %s\n",
			!strcmp(copy, "differs") ? "is an older JWE: rebuild the initramfs" :
			"is missing: rebuild the initramfs");
	if (res_get(o, "old"))
		fprintf(out, "  %s: the JWE before the last regen\n", res_str(o, "old"));
}

void text_slots_report(struct ctx *c, json_object *res)
{
	json_object *arr = res_get(res, "slots"), *io = res_get(res, "initramfs");

	for (size_t i = 0; i < res_count(arr); i++)
		report_text(c->out, json_object_array_get_idx(arr, i));
	if (!res_count(arr))
		fprintf(c->out, "no clevis slots in %s\n", res_str(res, "table"));
	if (io && !res_bool(io, "checked"))
		fprintf(c->out, "initramfs %s not checked: %s\n", res_str(io, "image"), res_str(io, "why"));
	if (res_int(res, "needs_attention"))
		fprintf(c->out, "%" PRId64 " sealed key(s) need attention\n", res_int(res, "needs_attention"));
}


/* ------------------------------------------------------------- regen */

static int regen_exit(enum nbde_regen_status s)
{
	switch (s) {
	case NBDE_REGEN_OK:
		return 0;
	case NBDE_REGEN_UNSUPPORTED:
		return EXIT_USAGE;
	case NBDE_REGEN_LOST:
		return EXIT_UNSEAL;
	case NBDE_REGEN_CLEVIS:
		return EXIT_CLEVIS;
	case NBDE_REGEN_BAD_JWE:
	case NBDE_REGEN_FILE:
		break;
	}
	return EXIT_KEYFILE;
}

/* One entry of regen, as the JSON model says it. */
static json_object *regen_json(const struct nbde_regen_entry *e)
{
	json_object *o = json_object_new_object(), *servers = json_object_new_array();

	json_object_object_add(o, "name", jstr_or_null(e->s.name));
	json_object_object_add(o, "jwe", json_object_new_string(e->s.jwe));
	json_object_object_add(o, "servers", servers);
	for (size_t i = 0; i < e->s.nservers; i++) {
		const struct nbde_server *sv = &e->s.servers[i];
		json_object *so = server_json(sv);

		if (sv->state == NBDE_KEY_CURRENT || sv->state == NBDE_KEY_ROTATED)
			json_object_object_add(so, "thp", json_object_new_string(sv->thp));
		json_object_array_add(servers, so);
	}
	if (e->s.parsed) {
		json_object_object_add(o, "pin", json_object_new_string(e->s.pin));
		json_object_object_add(o, "threshold", json_object_new_int(e->s.threshold));
	}
	if (e->status != NBDE_REGEN_OK) {
		json_object_object_add(o, "error", json_object_new_string(e->error));
		json_object_object_add(o, "exit_code", json_object_new_int(regen_exit(e->status)));
	}
	json_object_object_add(o, "regenerated", jbool(e->regenerated));
	if (e->skipped)
		json_object_object_add(o, "skipped", json_object_new_string(e->skipped));
	if (e->regenerated)
		json_object_object_add(o, "config", json_tokener_parse(e->config ? e->config : "null"));
	if (e->ntpm2) {
		json_object *arr = json_object_new_array();

		for (size_t i = 0; i < e->ntpm2; i++) {
			const struct nbde_regen_tpm2 *t = &e->tpm2[i];
			json_object *to = json_object_new_object();

			json_object_object_add(to, "pcr_bank", t->sealed_to_current_pcrs ?
					       json_object_new_string(t->pcr_bank) : NULL);
			json_object_object_add(to, "pcr_ids", t->sealed_to_current_pcrs ?
					       json_object_new_string(t->pcr_ids) : NULL);
			json_object_object_add(to, "sealed_to_current_pcrs", jbool(t->sealed_to_current_pcrs));
			json_object_array_add(arr, to);
		}
		json_object_object_add(o, "tpm2", arr);
	}
	if (e->old_removed[0])
		json_object_object_add(o, "old_removed", json_object_new_string(e->old_removed));
	if (e->old_said)
		json_object_object_add(o, "old", jstr_or_null(e->old));
	return o;
}

/* One entry's line, from its model o. */
static void text_regen_entry(FILE *out, json_object *o)
{
	json_object *servers = res_get(o, "servers");
	const char *who = res_get(o, "name") ? res_str(o, "name") : res_str(o, "jwe");

	if (res_get(o, "error")) {
		fprintf(out, "%s: not sealed again (exit %" PRId64 ")\n", who, res_int(o, "exit_code"));
		return;
	}
	if (!res_bool(o, "regenerated")) {
		fprintf(out, "%s: unchanged: %s%s%s\n", who, res_str(o, "skipped"),
			res_get(o, "old_removed") ? "; removed " : "", res_str(o, "old_removed"));
		return;
	}
	fprintf(out, "%s: sealed again for", who);
	for (size_t i = 0; i < res_count(servers); i++) {
		json_object *sv = json_object_array_get_idx(servers, i);

		fprintf(out, "%s %s (key was %s)", i ? "," : "", res_str(sv, "url"), res_str(sv, "state"));
	}
	if (res_get(o, "old"))
		fprintf(out, "; the old JWE kept as %s", res_str(o, "old"));
	fputc('\n', out);
	for (size_t i = 0; i < res_count(res_get(o, "tpm2")); i++) {
		json_object *t = json_object_array_get_idx(res_get(o, "tpm2"), i);
		const char *which = res_count(res_get(o, "tpm2")) > 1 ? "a" : "its";

		if (res_bool(t, "sealed_to_current_pcrs"))
			fprintf(out, "  and %s tpm2 branch, with this machine's TPM, to the values PCRs %s:%s hold now: it opens only while they stay so\n",
				which, res_str(t, "pcr_bank"), res_str(t, "pcr_ids"));
		else
			fprintf(out, "  and %s tpm2 branch, with this machine's TPM (no PCR policy)\n", which);
	}
}

void text_regen(struct ctx *c, json_object *res)
{
	if (!res_count(res_get(res, "entries")))
		fprintf(c->out, "%s: no clevis entry\n", res_str(res, "table"));
	if (res_get(res, "initramfs_command"))
		fprintf(c->out, "The initramfs holds the old JWEs: rebuild it: %s\n",
			res_str(res, "initramfs_command"));
}

/* Each entry as soon as it is done: into the model, its failure and text said. */
static void regen_entry_done(void *arg, const struct nbde_regen_entry *e)
{
	struct ctx *c = arg;
	json_object *o = regen_json(e);

	json_object_array_add(res_get(c->jout, "entries"), o);
	if (e->status != NBDE_REGEN_OK)
		fprintf(c->err, "opalctl: regen: %s\n", e->error);
	if (!c->json) {
		text_regen_entry(c->out, o);
		fflush(c->out);
	}
}

int cmd_regen(struct ctx *c)
{
	const char *table = c->table ? c->table : OPALTAB_DEFAULT;
	unsigned int modes = !!c->all + !!c->nnames + !!c->jwe + !!c->devpath;
	struct nbde_regen_rq rq = {
		.table = table, .names = c->names, .nnames = c->nnames, .jwe = c->jwe,
		.thps = c->thps, .nthps = c->nthps, .remove_old = c->remove_old,
		.state_dir = c->state_dir, .log = { opalctl_log, c },
		.entry_done = regen_entry_done, .done_arg = c,
	};
	struct nbde_regen_result r;
	struct opaltab_entry *v = NULL;
	char jwe[PATH_MAX];
	size_t n = 0;
	int rc = 0;

	if (modes != 1)
		return fail(c, EXIT_USAGE, "regen: name what to seal again: DEV --slot N, --jwe FILE, --name NAME or --all (one of them)");
	if (!!c->devpath != !!c->slot)
		return fail(c, EXIT_USAGE, "regen: --slot N goes with a device (DEV --slot N)");
	if (c->state_dir && (!c->remove_old || c->jwe || c->devpath || c->nthps))
		return fail(c, EXIT_USAGE, "regen: --state-dir goes with --remove-old and --all or --name (the boot's clean-up: it seals nothing)");
	if (!c->jwe) {
		FILE *f = fopen(table, "r");

		/* DEV --slot without a table: bind's default file name. */
		if (c->devpath && !f && !c->table) {
			v = NULL;
		} else {
			if (f)
				fclose(f);
			rc = load_table(c, table, &v, &n);
			if (rc)
				return rc;
		}
	}
	for (unsigned int i = 0; i < c->nnames; i++) {
		bool known = false;

		for (size_t j = 0; j < n; j++)
			known |= !strcmp(v[j].name, c->names[i]) && v[j].key_kind == OPALTAB_KEY_CLEVIS;
		if (!known) {
			free(v);
			return fail(c, EXIT_USAGE, "regen: no clevis entry named '%s' in %s", c->names[i], table);
		}
	}
	if (c->devpath) {
		slot_jwe(c, v, n, (unsigned int)c->slot, jwe, sizeof(jwe));
		rq.jwe = jwe;
	}
	rq.entries = v;
	rq.nentries = n;
	json_object_object_add(c->jout, "table", c->jwe ? NULL : json_object_new_string(table));
	json_object_object_add(c->jout, "entries", json_object_new_array());
	rc = nbde_regen(&rq, &r);
	free(v);
	if (rc < 0)
		return fail(c, EXIT_KEYFILE, "regen: out of memory");
	json_object_object_add(c->jout, "regenerated", json_object_new_int((int)r.regenerated));
	json_object_object_add(c->jout, "failed", json_object_new_int((int)r.failed));
	json_object_object_add(c->jout, "initramfs_command", r.initramfs_command ?
			       json_object_new_string(r.initramfs_command) : NULL);
	rc = !r.failed ? 0 : r.n == 1 ? regen_exit(r.entries[0].status) : EXIT_INCOMPLETE;
	nbde_regen_free(&r);
	if (!rc)
		return 0;
	emit_result(c);
	return rc;
}
