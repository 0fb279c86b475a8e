// SPDX-License-Identifier: GPL-2.0-only
/*
 * Guest helper: check that cryptbench's --json output parses (json-c) and
 * carries every figure its table shows for the same command line.
 * Usage: test_cryptbench_jsoncheck TABLE_FILE JSON_FILE; exit 0 when it does.
 */
#include <json-c/json.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cryptbench.h"

static int failures;

#define FAIL(...) do { fprintf(stderr, "jsoncheck: " __VA_ARGS__); \
		       fputc('\n', stderr); failures++; } while (0)

static json_object *member(json_object *o, const char *key)
{
	json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

static bool is_number(json_object *v)
{
	return v && (json_object_is_type(v, json_type_double) ||
		     json_object_is_type(v, json_type_int));
}

static void check_pair(const char *tok, json_object *a, json_object *b,
		       size_t row, const char *what)
{
	if (!strcmp(tok, "-")) {
		if (a || b)
			FAIL("row %zu: table shows no %s, JSON has one", row, what);
		return;
	}
	if (!strchr(tok, '/') || !is_number(a) || !is_number(b))
		FAIL("row %zu: %s '%s' has no numbers in JSON", row, what, tok);
}

static void check_row(char *line, json_object *r, size_t row, bool spread,
		      bool cs)
{
	char *tok[24], *save = NULL, *t, req[24], key[24];
	json_object *st;
	size_t n = 0;

	for (t = strtok_r(line, " \t\n", &save); t && n < 24;
	     t = strtok_r(NULL, " \t\n", &save))
		tok[n++] = t;
	if (n != (size_t)(13 + (spread ? 1 : 0) + (cs ? 2 : 0))) {
		FAIL("row %zu: %zu columns", row, n);
		return;
	}
	if (strcmp(tok[0], json_object_get_string(member(r, "cipher"))))
		FAIL("row %zu: cipher %s", row, tok[0]);
	snprintf(key, sizeof(key), "%db", json_object_get_int(member(r, "key_bits")));
	if (strcmp(tok[1], key))
		FAIL("row %zu: key %s vs %s", row, tok[1], key);
	st = member(member(r, "encryption_mib_s"), "median");
	if (!is_number(st) || json_object_get_double(st) <= 0 || atof(tok[2]) <= 0)
		FAIL("row %zu: encryption %s not in JSON", row, tok[2]);
	st = member(member(r, "decryption_mib_s"), "median");
	if (!is_number(st) || json_object_get_double(st) <= 0 || atof(tok[4]) <= 0)
		FAIL("row %zu: decryption %s not in JSON", row, tok[4]);
	cb_format_size((size_t)json_object_get_int64(member(r, "request_size")),
		       req, sizeof(req));
	if (strcmp(tok[6], req))
		FAIL("row %zu: request size %s vs %s", row, tok[6], req);
	if (atoi(tok[7]) != json_object_get_int(member(r, "threads")))
		FAIL("row %zu: threads %s", row, tok[7]);
	if (atoi(tok[8]) != json_object_get_int(member(r, "queue_depth")))
		FAIL("row %zu: queue depth %s", row, tok[8]);
	if (strcmp(tok[9], json_object_get_string(member(r, "access"))))
		FAIL("row %zu: access %s", row, tok[9]);
	check_pair(tok[10], member(r, "cpu_s_per_gib_encryption"),
		   member(r, "cpu_s_per_gib_decryption"), row, "CPU cost");
	if (!strcmp(tok[11], "-")) {
		if (member(r, "engine_share"))
			FAIL("row %zu: engine share in JSON only", row);
	} else if (!is_number(member(r, "engine_share"))) {
		FAIL("row %zu: engine share %s not in JSON", row, tok[11]);
	}
	n = 12;
	if (spread) {
		json_object *e = member(member(r, "encryption_mib_s"), "spread_pct");

		if (!is_number(e))
			FAIL("row %zu: spread %s not in JSON", row, tok[n]);
		n++;
	}
	if (cs) {
		json_object *c = member(r, "cryptsetup");

		if (!c || !is_number(member(c, "encryption_mib_s")) ||
		    !is_number(member(c, "ratio_encryption")) ||
		    !is_number(member(c, "ratio_decryption")))
			FAIL("row %zu: cryptsetup %s %s not in JSON", row, tok[n], tok[n + 1]);
		n += 2;
	}
	if ((tok[n][0] == '*') != json_object_get_boolean(member(r, "default")))
		FAIL("row %zu: default mark of %s", row, tok[n]);
	if (strcmp(tok[n] + (tok[n][0] == '*'), json_object_get_string(member(r, "driver"))))
		FAIL("row %zu: driver %s", row, tok[n]);
}

int main(int argc, char *argv[])
{
	enum json_tokener_error jerr;
	json_object *root, *rows;
	char line[1024];
	bool spread = false, cs = false;
	size_t row = 0;
	FILE *table;
	char *text;
	FILE *jf;
	long len;

	if (argc != 3) {
		fprintf(stderr, "usage: %s TABLE_FILE JSON_FILE\n", argv[0]);
		return 2;
	}
	jf = fopen(argv[2], "r");
	table = fopen(argv[1], "r");
	if (!jf || !table) {
		fprintf(stderr, "jsoncheck: cannot open the input files\n");
		return 2;
	}
	fseek(jf, 0, SEEK_END);
	len = ftell(jf);
	rewind(jf);
	text = calloc(1, (size_t)len + 1);
	if (!text || fread(text, 1, (size_t)len, jf) != (size_t)len)
		return 2;
	fclose(jf);
	root = json_tokener_parse_verbose(text, &jerr);
	if (!root) {
		fprintf(stderr, "jsoncheck: JSON does not parse: %s\n",
			json_tokener_error_desc(jerr));
		return 1;
	}
	rows = member(root, "ciphers");
	if (!rows || !json_object_is_type(rows, json_type_array)) {
		fprintf(stderr, "jsoncheck: no \"ciphers\" array\n");
		return 1;
	}
	while (fgets(line, sizeof(line), table)) {
		if (line[0] == '#') {
			if (strstr(line, "Spread e/d"))
				spread = true;
			if (strstr(line, "cryptsetup enc/dec"))
				cs = true;
			continue;
		}
		if (row >= json_object_array_length(rows)) {
			FAIL("table has more rows than JSON");
			break;
		}
		check_row(line, json_object_array_get_idx(rows, row), row, spread, cs);
		row++;
	}
	fclose(table);
	if (row == 0)
		FAIL("table has no rows");
	if (row != json_object_array_length(rows))
		FAIL("table has %zu rows, JSON %zu", row, json_object_array_length(rows));
	json_object_put(root);
	free(text);
	if (!failures)
		fprintf(stderr, "jsoncheck: %zu rows, every figure present in JSON\n", row);
	return failures ? 1 : 0;
}
