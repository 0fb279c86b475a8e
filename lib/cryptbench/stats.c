// SPDX-License-Identifier: GPL-2.0-only
/*
 * Statistics over repeated samples, and the units of every figure.
 */
#include <stdlib.h>
#include <string.h>

#include "cryptbench.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

void cb_stat_compute(const double *samples, unsigned int n, struct cb_stat *st)
{
	double sorted[CB_MAX_REPEAT];

	memset(st, 0, sizeof(*st));
	if (n == 0)
		return;
	if (n > CB_MAX_REPEAT)
		n = CB_MAX_REPEAT;
	memcpy(sorted, samples, n * sizeof(*samples));
	qsort(sorted, n, sizeof(*sorted), cmp_double);
	st->n = n;
	st->min = sorted[0];
	st->max = sorted[n - 1];
	if (n % 2)
		st->median = sorted[n / 2];
	else
		st->median = (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
}

double cb_stat_spread_pct(const struct cb_stat *st)
{
	if (st->n < 2 || st->median <= 0.0)
		return 0.0;
	return (st->max - st->min) / st->median * 100.0;
}

double cb_mib_per_s(uint64_t bytes, double seconds)
{
	if (seconds <= 0.0)
		return 0.0;
	return (double)bytes / (1024.0 * 1024.0) / seconds;
}

double cb_cpu_s_per_gib(double cpu_seconds, uint64_t bytes)
{
	if (bytes == 0 || cpu_seconds < 0.0)
		return -1.0;
	return cpu_seconds / ((double)bytes / (1024.0 * 1024.0 * 1024.0));
}

double cb_ratio(double ours, double reference)
{
	if (reference <= 0.0)
		return 0.0;
	return ours / reference;
}

void cb_result_add_sample(struct cb_result *res, const struct cb_sample *enc,
			  const struct cb_sample *dec)
{
	unsigned int i = res->n_samples;

	if (i >= CB_MAX_REPEAT)
		return;
	res->enc_samples[i] = cb_mib_per_s(enc->bytes, enc->seconds);
	res->dec_samples[i] = cb_mib_per_s(dec->bytes, dec->seconds);
	/* CPU cost and engine share are kept per sample through the median. */
	res->cpu_enc_samples[i] = cb_cpu_s_per_gib(enc->cpu_seconds, enc->bytes);
	res->cpu_dec_samples[i] = cb_cpu_s_per_gib(dec->cpu_seconds, dec->bytes);
	res->has_engine = enc->has_engine && dec->has_engine;
	if (res->has_engine) {
		uint64_t total = enc->bytes + dec->bytes;
		uint64_t done = enc->engine_bytes + dec->engine_bytes;

		res->engine_samples[i] = total ? (double)done / (double)total : 0.0;
	}
	res->n_samples = i + 1;
}

void cb_result_finish(struct cb_result *res)
{
	struct cb_stat st;

	cb_stat_compute(res->enc_samples, res->n_samples, &res->enc);
	cb_stat_compute(res->dec_samples, res->n_samples, &res->dec);
	cb_stat_compute(res->cpu_enc_samples, res->n_samples, &st);
	res->cpu_enc = res->n_samples ? st.median : -1.0;
	cb_stat_compute(res->cpu_dec_samples, res->n_samples, &st);
	res->cpu_dec = res->n_samples ? st.median : -1.0;
	if (res->has_engine) {
		cb_stat_compute(res->engine_samples, res->n_samples, &st);
		res->engine_share = st.median;
	}
}
