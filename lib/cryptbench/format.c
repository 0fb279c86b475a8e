// SPDX-License-Identifier: GPL-2.0-only
/*
 * Output: cryptsetup's benchmark table (same rows, format and units), the
 * extended table, JSON (json-c) and CSV.
 */
#include <json-c/json.h>
#include <string.h>

#include "cryptbench.h"

static const char *const header_compat =
	"#     Algorithm |       Key |      Encryption |      Decryption\n";

static void write_pbkdf(FILE *out, const struct cb_pbkdf_result *p)
{
	if (!strcmp(p->type, "pbkdf2")) {
		if (!p->available)
			fprintf(out, "PBKDF2-%-9s     N/A\n", p->hash);
		else
			fprintf(out,
				"PBKDF2-%-9s %7u iterations per second for %u-bit key\n",
				p->hash, p->iterations, p->key_bits);
		return;
	}
	if (!p->available)
		fprintf(out, "%-10s N/A\n", p->type);
	else
		fprintf(out,
			"%-10s %4u iterations, %5u memory, %1u parallel threads (CPUs) for %u-bit key (requested %u ms time)\n",
			p->type, p->iterations, p->memory_kb, p->threads,
			p->key_bits, p->time_ms);
}

static void write_compat_row(FILE *out, const struct cb_result *r)
{
	if (r->available)
		fprintf(out, "%15s  %9ub  %10.1f MiB/s  %10.1f MiB/s\n",
			r->cipher, r->key_bits, r->enc.median, r->dec.median);
	else
		fprintf(out, "%15s  %9ub %17s %17s\n", r->cipher, r->key_bits,
			"N/A", "N/A");
}

static bool any_cryptsetup(const struct cb_report *rep)
{
	size_t i;

	for (i = 0; i < rep->n_results; i++)
		if (rep->results[i].has_cryptsetup)
			return true;
	return false;
}

static void write_ext_header(FILE *out, int width, bool spread, bool cs)
{
	fprintf(out,
		"#%*s Algorithm |       Key |      Encryption |      Decryption"
		" |  Request | Thr |  QD |   Access | CPU s/GiB e/d | Engine",
		width - 11, "");
	if (spread)
		fputs(" | Spread e/d", out);
	if (cs)
		fputs(" |  cryptsetup enc/dec |   Ratio e/d", out);
	fputs(" | Driver\n", out);
}

static void write_ext_row(FILE *out, int width, const struct cb_result *r,
			  bool spread, bool cs)
{
	char req[24], cpu[48], eng[16];

	cb_format_size(r->request_size, req, sizeof(req));
	if (!r->available) {
		fprintf(out, "%*s  %9ub %17s %17s  %9s  %4u  %4u  %9s  %14s  %7s",
			width, r->cipher, r->key_bits, "N/A", "N/A", req,
			r->threads, r->queue_depth,
			r->zero_copy ? "vmsplice" : "sendmsg", "-", "-");
		if (spread)
			fprintf(out, "  %11s", "-");
		if (cs)
			fprintf(out, "  %20s  %12s", "-", "-");
		fprintf(out, "  %s%s\n", r->is_default ? "*" : "", r->driver);
		return;
	}
	if (r->cpu_enc >= 0 && r->cpu_dec >= 0)
		snprintf(cpu, sizeof(cpu), "%.2f/%.2f", r->cpu_enc, r->cpu_dec);
	else
		snprintf(cpu, sizeof(cpu), "-");
	if (r->has_engine)
		snprintf(eng, sizeof(eng), "%5.1f%%", r->engine_share * 100.0);
	else
		snprintf(eng, sizeof(eng), "-");
	fprintf(out, "%*s  %9ub  %10.1f MiB/s  %10.1f MiB/s  %9s  %4u  %4u  %9s  %14s  %7s",
		width, r->cipher, r->key_bits, r->enc.median, r->dec.median,
		req, r->threads, r->queue_depth,
		r->zero_copy ? "vmsplice" : "sendmsg", cpu, eng);
	/* Compound columns carry no inner blanks: one field per column. */
	if (spread) {
		char sp[32];

		snprintf(sp, sizeof(sp), "%.1f/%.1f%%", cb_stat_spread_pct(&r->enc),
			 cb_stat_spread_pct(&r->dec));
		fprintf(out, "  %11s", sp);
	}
	if (cs) {
		char mibs[48] = "-", ratio[32] = "-";

		if (r->has_cryptsetup) {
			snprintf(mibs, sizeof(mibs), "%.1f/%.1f", r->cs_enc, r->cs_dec);
			snprintf(ratio, sizeof(ratio), "%.2f/%.2f",
				 cb_ratio(r->enc.median, r->cs_enc),
				 cb_ratio(r->dec.median, r->cs_dec));
		}
		fprintf(out, "  %20s  %12s", mibs, ratio);
	}
	fprintf(out, "  %s%s\n", r->is_default ? "*" : "", r->driver);
}

int cb_write_table(FILE *out, const struct cb_report *rep)
{
	size_t i;

	fputs("# Tests are approximate using memory only (no storage IO).\n", out);
	for (i = 0; i < rep->n_pbkdf; i++)
		write_pbkdf(out, &rep->pbkdf[i]);
	if (rep->compat) {
		if (rep->n_results)
			fputs(header_compat, out);
		for (i = 0; i < rep->n_results; i++)
			write_compat_row(out, &rep->results[i]);
	} else if (rep->n_results) {
		bool spread = rep->repeat > 1, cs = any_cryptsetup(rep);
		int width = 11;

		/* cryptsetup's one-cipher layout: at least 11 wide. */
		for (i = 0; i < rep->n_results; i++) {
			int w = (int)strlen(rep->results[i].cipher);

			if (w > width)
				width = w;
		}
		if (!rep->single)
			width = 15;
		write_ext_header(out, width, spread, cs);
		for (i = 0; i < rep->n_results; i++)
			write_ext_row(out, width, &rep->results[i], spread, cs);
		fputs("# '*' marks the kernel's default implementation."
		      " CPU s/GiB: busy seconds of all CPUs per GiB processed.\n",
		      out);
	}
	fflush(out);
	return ferror(out) ? -1 : 0;
}

static json_object *jstat(const struct cb_stat *st, const double *samples,
			  unsigned int n)
{
	json_object *o = json_object_new_object();
	json_object *a = json_object_new_array();
	unsigned int i;

	json_object_object_add(o, "median", json_object_new_double(st->median));
	json_object_object_add(o, "min", json_object_new_double(st->min));
	json_object_object_add(o, "max", json_object_new_double(st->max));
	json_object_object_add(o, "spread_pct",
			       json_object_new_double(cb_stat_spread_pct(st)));
	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_double(samples[i]));
	json_object_object_add(o, "samples", a);
	return o;
}

static json_object *jdouble_or_null(bool have, double v)
{
	return have ? json_object_new_double(v) : NULL;
}

static json_object *jresult(const struct cb_result *r)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "cipher", json_object_new_string(r->cipher));
	json_object_object_add(o, "key_bits", json_object_new_int((int)r->key_bits));
	json_object_object_add(o, "driver", json_object_new_string(r->driver));
	json_object_object_add(o, "default", json_object_new_boolean(r->is_default));
	json_object_object_add(o, "priority", json_object_new_int(r->priority));
	json_object_object_add(o, "request_size",
			       json_object_new_int64((int64_t)r->request_size));
	json_object_object_add(o, "threads", json_object_new_int((int)r->threads));
	json_object_object_add(o, "queue_depth",
			       json_object_new_int((int)r->queue_depth));
	json_object_object_add(o, "access",
			       json_object_new_string(r->zero_copy ? "vmsplice" : "sendmsg"));
	json_object_object_add(o, "available", json_object_new_boolean(r->available));
	if (!r->available)
		return o;
	json_object_object_add(o, "encryption_mib_s",
			       jstat(&r->enc, r->enc_samples, r->n_samples));
	json_object_object_add(o, "decryption_mib_s",
			       jstat(&r->dec, r->dec_samples, r->n_samples));
	json_object_object_add(o, "cpu_s_per_gib_encryption",
			       jdouble_or_null(r->cpu_enc >= 0, r->cpu_enc));
	json_object_object_add(o, "cpu_s_per_gib_decryption",
			       jdouble_or_null(r->cpu_dec >= 0, r->cpu_dec));
	json_object_object_add(o, "engine_share",
			       jdouble_or_null(r->has_engine, r->engine_share));
	if (r->has_cryptsetup) {
		json_object *cs = json_object_new_object();

		json_object_object_add(cs, "driver", json_object_new_string(r->cs_driver));
		json_object_object_add(cs, "same_driver",
				       json_object_new_boolean(!strcmp(r->cs_driver, r->driver)));
		json_object_object_add(cs, "encryption_mib_s", json_object_new_double(r->cs_enc));
		json_object_object_add(cs, "decryption_mib_s", json_object_new_double(r->cs_dec));
		json_object_object_add(cs, "ratio_encryption",
				       json_object_new_double(cb_ratio(r->enc.median, r->cs_enc)));
		json_object_object_add(cs, "ratio_decryption",
				       json_object_new_double(cb_ratio(r->dec.median, r->cs_dec)));
		json_object_object_add(o, "cryptsetup", cs);
	} else {
		json_object_object_add(o, "cryptsetup", NULL);
	}
	return o;
}

static json_object *jpbkdf(const struct cb_pbkdf_result *p)
{
	json_object *o = json_object_new_object();

	json_object_object_add(o, "type", json_object_new_string(p->type));
	json_object_object_add(o, "hash", p->hash[0] ? json_object_new_string(p->hash) : NULL);
	json_object_object_add(o, "key_bits", json_object_new_int((int)p->key_bits));
	json_object_object_add(o, "available", json_object_new_boolean(p->available));
	if (!p->available)
		return o;
	if (!strcmp(p->type, "pbkdf2")) {
		json_object_object_add(o, "iterations_per_second",
				       json_object_new_int64(p->iterations));
	} else {
		json_object_object_add(o, "iterations", json_object_new_int64(p->iterations));
		json_object_object_add(o, "memory_kb", json_object_new_int64(p->memory_kb));
		json_object_object_add(o, "parallel_threads", json_object_new_int64(p->threads));
		json_object_object_add(o, "requested_time_ms", json_object_new_int64(p->time_ms));
	}
	return o;
}

int cb_write_json_error(FILE *out, const struct cb_error *err)
{
	json_object *root = json_object_new_object();
	int rc;

	json_object_object_add(root, "tool", json_object_new_string("cryptbench"));
	json_object_object_add(root, "error", json_object_new_string(err->msg));
	json_object_object_add(root, "exit_code", json_object_new_int((int)err->code));
	rc = fprintf(out, "%s\n", json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
								 JSON_C_TO_STRING_NOSLASHESCAPE)) < 0 ||
	     fflush(out) ? -1 : 0;
	json_object_put(root);
	return rc;
}

int cb_write_json(FILE *out, const struct cb_report *rep)
{
	json_object *root = json_object_new_object();
	json_object *units = json_object_new_object();
	json_object *pb = json_object_new_array();
	json_object *res = json_object_new_array();
	size_t i;
	int rc;

	json_object_object_add(root, "tool", json_object_new_string("cryptbench"));
	json_object_object_add(units, "throughput", json_object_new_string("MiB/s (2^20 bytes per second)"));
	json_object_object_add(units, "cpu", json_object_new_string("busy CPU seconds of all CPUs per GiB processed"));
	json_object_object_add(units, "engine_share", json_object_new_string("fraction of bytes done by the offload engine"));
	json_object_object_add(root, "units", units);
	json_object_object_add(root, "seconds_per_sample", json_object_new_double(rep->seconds));
	json_object_object_add(root, "repeat", json_object_new_int((int)rep->repeat));
	/* null: not looked for (AF_ALG was not there). */
	json_object_object_add(root, "crypto_user",
			       rep->crypto_user_checked ?
			       json_object_new_boolean(rep->crypto_user) : NULL);
	for (i = 0; i < rep->n_pbkdf; i++)
		json_object_array_add(pb, jpbkdf(&rep->pbkdf[i]));
	json_object_object_add(root, "pbkdf", pb);
	for (i = 0; i < rep->n_results; i++)
		json_object_array_add(res, jresult(&rep->results[i]));
	json_object_object_add(root, "ciphers", res);

	rc = fprintf(out, "%s\n",
		     json_object_to_json_string_ext(root, JSON_C_TO_STRING_PRETTY |
						    JSON_C_TO_STRING_NOSLASHESCAPE));
	json_object_put(root);
	fflush(out);
	return rc < 0 || ferror(out) ? -1 : 0;
}

static void csv_double(FILE *out, bool have, double v)
{
	if (have)
		fprintf(out, ",%.6g", v);
	else
		fputs(",", out);
}

int cb_write_csv(FILE *out, const struct cb_report *rep)
{
	size_t i;

	fputs("cipher,key_bits,driver,default,priority,request_size,threads,"
	      "queue_depth,access,available,samples,"
	      "enc_mib_s,enc_min,enc_max,dec_mib_s,dec_min,dec_max,"
	      "cpu_s_per_gib_enc,cpu_s_per_gib_dec,engine_share,"
	      "cryptsetup_driver,cryptsetup_enc_mib_s,cryptsetup_dec_mib_s,"
	      "ratio_enc,ratio_dec\n", out);
	for (i = 0; i < rep->n_results; i++) {
		const struct cb_result *r = &rep->results[i];
		bool a = r->available;

		fprintf(out, "%s,%u,%s,%d,%d,%zu,%u,%u,%s,%d,%u", r->cipher,
			r->key_bits, r->driver, r->is_default ? 1 : 0,
			r->priority, r->request_size, r->threads,
			r->queue_depth, r->zero_copy ? "vmsplice" : "sendmsg",
			a ? 1 : 0, a ? r->n_samples : 0);
		csv_double(out, a, r->enc.median);
		csv_double(out, a, r->enc.min);
		csv_double(out, a, r->enc.max);
		csv_double(out, a, r->dec.median);
		csv_double(out, a, r->dec.min);
		csv_double(out, a, r->dec.max);
		csv_double(out, a && r->cpu_enc >= 0, r->cpu_enc);
		csv_double(out, a && r->cpu_dec >= 0, r->cpu_dec);
		csv_double(out, a && r->has_engine, r->engine_share);
		fprintf(out, ",%s", a && r->has_cryptsetup ? r->cs_driver : "");
		csv_double(out, a && r->has_cryptsetup, r->cs_enc);
		csv_double(out, a && r->has_cryptsetup, r->cs_dec);
		csv_double(out, a && r->has_cryptsetup, cb_ratio(r->enc.median, r->cs_enc));
		csv_double(out, a && r->has_cryptsetup, cb_ratio(r->dec.median, r->cs_dec));
		fputc('\n', out);
	}
	fflush(out);
	return ferror(out) ? -1 : 0;
}
