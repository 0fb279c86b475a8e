// SPDX-License-Identifier: GPL-2.0-only
/*
 * cryptbench: kernel cipher benchmark on libkcapi, a superset of
 * `cryptsetup benchmark`. Parses options, runs lib/cryptbench, prints.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cryptbench.h"

#ifndef FDEKIT_VERSION
#define FDEKIT_VERSION "unknown"
#endif

static void show_progress(void *ctx, const char *what, unsigned int done,
			  unsigned int total)
{
	(void)ctx;
	fprintf(stderr, "\r\033[K[%u/%u] %s", done, total, what);
	fflush(stderr);
}

static void clear_progress(void)
{
	fputs("\r\033[K", stderr);
	fflush(stderr);
}

int main(int argc, char *argv[])
{
	struct cb_options opts;
	struct cb_report rep;
	struct cb_error err = { .code = CB_EXIT_OK };
	struct cb_run_hooks hooks = { .progress = show_progress };
	bool interactive;
	enum cb_exit rc;
	size_t i;
	int wr;

	if (cb_options_parse(argc, argv, &opts, &err)) {
		fprintf(stderr, "cryptbench: %s\n", err.msg);
		/* Asked for JSON: the error in JSON too (the options may be half parsed). */
		for (int a = 1; a < argc; a++)
			if (!strcmp(argv[a], "--json")) {
				cb_write_json_error(stdout, &err);
				break;
			}
		return err.code;
	}
	if (opts.help) {
		cb_usage(stdout, "cryptbench");
		return CB_EXIT_OK;
	}
	if (opts.version) {
		printf("cryptbench (fdekit) %s\n", FDEKIT_VERSION);
		return CB_EXIT_OK;
	}
	/* Progress only for a person watching: never into pipes or JSON. */
	interactive = opts.format != CB_FMT_JSON && isatty(STDOUT_FILENO) &&
		      isatty(STDERR_FILENO);

	rc = cb_run(&opts, &rep, interactive ? &hooks : NULL, &err);
	if (interactive)
		clear_progress();
	/* Not errors: what is missing and what cryptbench does instead. */
	for (i = 0; i < CB_MAX_NOTICES; i++)
		if (rep.notice[i][0])
			fprintf(stderr, "cryptbench: %s\n", rep.notice[i]);
	/* cryptsetup's table still shows what it measured before the error. */
	if (rc != CB_EXIT_OK && opts.format == CB_FMT_JSON) {
		cb_write_json_error(stdout, &err);
	} else if (rc == CB_EXIT_OK || rep.compat) {
		if (opts.format == CB_FMT_JSON)
			wr = cb_write_json(stdout, &rep);
		else if (opts.format == CB_FMT_CSV)
			wr = cb_write_csv(stdout, &rep);
		else
			wr = cb_write_table(stdout, &rep);
		if (wr && rc == CB_EXIT_OK) {
			cb_error_set(&err, CB_EXIT_RUNTIME,
				     "writing the results failed: check stdout");
			rc = CB_EXIT_RUNTIME;
		}
	}
	cb_report_free(&rep);
	if (rc != CB_EXIT_OK)
		fprintf(stderr, "cryptbench: %s\n", err.msg);
	return rc;
}
